// SPDX-License-Identifier: Apache-2.0
/*
 * The configuration back out as Firecracker's JSON (GET /vm/config in the
 * config file's shape, GET /machine-config), and fc_finalize_config(): the
 * root drive first and root= on the command line, as Firecracker's
 * builder does before it boots.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config_priv.h"

static struct json_object *machine_object(const struct vm_config *cfg)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	fc_add_u64(o, "vcpu_count", cfg->cpus);
	fc_add_u64(o, "mem_size_mib", cfg->memory >> 20);
	fc_add_bool(o, "smt", cfg->smt);
	fc_add_bool(o, "track_dirty_pages", cfg->track_dirty_pages);
	fc_add_str(o, "huge_pages", "None");
	return o;
}

char *fc_machine_config_json(const struct vm_config *cfg)
{
	return fc_json_finish(machine_object(cfg));
}

static struct json_object *bucket_object(const struct rl_bucket_config *b)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	fc_add_u64(o, "size", b->size);
	fc_add_u64(o, "refill_time", b->refill_time_ms);
	if (b->one_time_burst)
		fc_add_u64(o, "one_time_burst", b->one_time_burst);
	return o;
}

static bool bucket_given(const struct rl_bucket_config *b)
{
	return b->size || b->refill_time_ms || b->one_time_burst;
}

static void add_rate_limiter(struct json_object *o, const char *key,
			     const struct rl_config *rl)
{
	struct json_object *r;

	if (!bucket_given(&rl->bandwidth) && !bucket_given(&rl->ops))
		return;
	r = json_object_new_object();
	if (!r)
		return;
	if (bucket_given(&rl->bandwidth))
		json_object_object_add(r, "bandwidth",
				       bucket_object(&rl->bandwidth));
	if (bucket_given(&rl->ops))
		json_object_object_add(r, "ops", bucket_object(&rl->ops));
	json_object_object_add(o, key, r);
}

static const char *cache_name(enum config_cache cache)
{
	switch (cache) {
	case CONFIG_CACHE_UNSAFE:
		return "Unsafe";
	case CONFIG_CACHE_WRITEBACK:
		return "Writeback";
	default:
		return "None";
	}
}

static struct json_object *drive_object(const struct disk_config *d,
					unsigned int i)
{
	struct json_object *o = json_object_new_object();
	char id[16];

	if (!o)
		return NULL;
	snprintf(id, sizeof(id), "disk%u", i);
	fc_add_str(o, "drive_id", d->drive_id ? d->drive_id : id);
	fc_add_str(o, "path_on_host", d->path);
	fc_add_bool(o, "is_root_device", d->is_root);
	fc_add_bool(o, "is_read_only", d->readonly);
	fc_add_str(o, "partuuid", d->partuuid);
	fc_add_str(o, "cache_type", cache_name(d->cache));
	fc_add_str(o, "io_engine", d->io_async ? "Async" : "Sync");
	add_rate_limiter(o, "rate_limiter", &d->rl);
	fc_add_str(o, "transport",
		   d->transport == DISK_TRANSPORT_PCI ? "pci" : "mmio");
	if (d->queues)
		fc_add_u64(o, "queues", d->queues);
	if (d->queue_size)
		fc_add_u64(o, "queue_size", d->queue_size);
	fc_add_str(o, "engine",
		   d->engine == CONFIG_ENGINE_VHOST ? "vhost" : "io_uring");
	if (d->poll_set)
		fc_add_u64(o, "poll_us", d->poll_us);
	if (d->snapshot)
		fc_add_bool(o, "snapshot", true);
	fc_add_str(o, "serial", d->serial);
	return o;
}

/* A network interface: Firecracker's fields (guest_mac only when given,
 * as Firecracker's), then ours. */
static struct json_object *net_object(const struct config_net *n)
{
	struct json_object *o = json_object_new_object();
	char mac[18];

	if (!o)
		return NULL;
	fc_add_str(o, "iface_id", n->iface_id);
	fc_add_str(o, "host_dev_name", n->host_dev_name);
	if (n->mac_set) {
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 n->mac[0], n->mac[1], n->mac[2], n->mac[3],
			 n->mac[4], n->mac[5]);
		fc_add_str(o, "guest_mac", mac);
	}
	add_rate_limiter(o, "rx_rate_limiter", &n->rx_rl);
	add_rate_limiter(o, "tx_rate_limiter", &n->tx_rl);
	if (n->queue_pairs)
		fc_add_u64(o, "queues", n->queue_pairs);
	fc_add_str(o, "transport",
		   n->transport == DISK_TRANSPORT_PCI ? "pci" : "mmio");
	if (n->vhost)
		fc_add_str(o, "engine", "vhost");
	return o;
}

static void add_logger(struct json_object *root, const struct vm_config *cfg)
{
	struct json_object *o;

	if (!cfg->log_path && !cfg->log_module &&
	    cfg->log_level == CONFIG_LOG_UNSET && !cfg->log_show_level &&
	    !cfg->log_show_origin)
		return;
	o = json_object_new_object();
	if (!o)
		return;
	fc_add_str(o, "log_path", cfg->log_path);
	if (cfg->log_level != CONFIG_LOG_UNSET)
		fc_add_str(o, "level", fc_log_level_names[cfg->log_level - 1]);
	fc_add_bool(o, "show_level", cfg->log_show_level);
	fc_add_bool(o, "show_log_origin", cfg->log_show_origin);
	fc_add_str(o, "module", cfg->log_module);
	json_object_object_add(root, "logger", o);
}

/* @machine: the machine's devices only (a snapshot's), no boot source,
 * logger or metrics. */
static char *config_json(const struct vm_config *cfg, bool machine)
{
	struct json_object *root = json_object_new_object(), *o, *arr;
	unsigned int i;

	if (!root)
		return NULL;
	if (!machine && cfg->kernel && (o = json_object_new_object())) {
		fc_add_str(o, "kernel_image_path", cfg->kernel);
		fc_add_str(o, "initrd_path", cfg->initrd);
		fc_add_str(o, "boot_args", cfg->cmdline);
		json_object_object_add(root, "boot-source", o);
	}
	json_object_object_add(root, "machine-config", machine_object(cfg));
	arr = json_object_new_array();
	for (i = 0; arr && i < cfg->nr_disks; i++)
		json_object_array_add(arr, drive_object(&cfg->disks[i], i));
	json_object_object_add(root, "drives", arr);
	arr = json_object_new_array();
	for (i = 0; arr && i < cfg->nr_nets; i++)
		json_object_array_add(arr, net_object(&cfg->nets[i]));
	json_object_object_add(root, "network-interfaces", arr);
	if (!machine)
		add_logger(root, cfg);
	if (cfg->vsock.set && (o = json_object_new_object())) {
		if (cfg->vsock.vsock_id)
			fc_add_str(o, "vsock_id", cfg->vsock.vsock_id);
		json_object_object_add(o, "guest_cid",
				       json_object_new_int64(
					       (int64_t)cfg->vsock.guest_cid));
		fc_add_str(o, "uds_path", cfg->vsock.uds_path);
		fc_add_str(o, "transport",
			   cfg->vsock.transport == DISK_TRANSPORT_PCI ?
			   "pci" : "mmio");
		if (cfg->vsock.engine == CONFIG_VSOCK_VHOST)
			fc_add_str(o, "engine", "vhost");
		json_object_object_add(root, "vsock", o);
	}
	if (!machine && cfg->metrics_path &&
	    (o = json_object_new_object())) {
		fc_add_str(o, "metrics_path", cfg->metrics_path);
		if (cfg->metrics_emit_id)
			fc_add_bool(o, "emit_id", true);
		json_object_object_add(root, "metrics", o);
	}
	o = fc_mmds_config_object(cfg);
	if (o)
		json_object_object_add(root, "mmds-config", o);
	return fc_json_finish(root);
}

char *fc_vm_config_json(const struct vm_config *cfg)
{
	return config_json(cfg, false);
}

char *fc_snapshot_config_json(const struct vm_config *cfg)
{
	return config_json(cfg, true);
}

/* The root drive to slot 0, the others keeping their order. */
static int root_first(struct vm_config *cfg)
{
	struct disk_config root;
	unsigned int i;

	for (i = 0; i < cfg->nr_disks && !cfg->disks[i].is_root; i++)
		;
	if (i == cfg->nr_disks)
		return -1;
	root = cfg->disks[i];
	memmove(&cfg->disks[1], &cfg->disks[0], i * sizeof(cfg->disks[0]));
	cfg->disks[0] = root;
	return 0;
}

int fc_finalize_config(struct vm_config *cfg, char *err, size_t errlen)
{
	const char *base = cfg->cmdline ? cfg->cmdline : FC_DEFAULT_BOOT_ARGS;
	const struct disk_config *root;
	char *line;
	int n;

	if (!cfg->kernel) {
		snprintf(err, errlen,
			 "no boot source: set kernel_image_path (PUT /boot-source, or the config file's \"boot-source\") or give --kernel");
		return -EINVAL;
	}
	if (root_first(cfg)) {
		if (cfg->cmdline)
			return 0;
		line = strdup(base);
	} else {
		root = &cfg->disks[0];
		n = asprintf(&line, "%s root=%s%s %s", base,
			     root->partuuid ? "PARTUUID=" : "/dev/vda",
			     root->partuuid ? root->partuuid : "",
			     root->readonly ? "ro" : "rw");
		if (n < 0)
			line = NULL;
	}
	if (!line) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	free(cfg->cmdline);
	cfg->cmdline = line;
	return 0;
}
