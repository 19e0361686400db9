// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's drives into struct disk_config: PUT /drives/{id} (and a
 * config file's "drives"), and PATCH /drives/{id} after boot. Firecracker's
 * fields map onto our disks (cache_type Unsafe/Writeback, both io_engines
 * on io_uring); our own knobs (transport, queues, engine, ...) are extra
 * optional keys. A drive is built and checked whole, then inserted.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config_priv.h"

/* The strings of a drive as views into the JSON, copied once it is valid. */
struct drive_views {
	const char *drive_id, *path, *partuuid, *serial;
	bool has_root;
};

static const char *const cache_names[] = { "Unsafe", "Writeback", "None",
					   NULL };
static const enum config_cache cache_values[] = {
	CONFIG_CACHE_UNSAFE, CONFIG_CACHE_WRITEBACK, CONFIG_CACHE_NONE,
};
static const char *const io_engine_names[] = { "Sync", "Async", NULL };
const char *const fc_transport_names[] = { "mmio", "pci", NULL };
static const char *const engine_names[] = { "io_uring", "vhost", NULL };

/* partuuid goes onto the kernel command line: hex digits and '-' only. */
static int check_partuuid(struct fc_ctx *c, const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!(s[i] == '-' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')) || i >= FC_ID_MAX)
			return fc_fail(c, "partuuid \"%.64s\" must be 1-%d hex digits and '-'",
				       s, FC_ID_MAX);
	return 0;
}

/* Firecracker's own fields; 1: not one of them. */
static int drive_key_fc(struct disk_config *d, struct drive_views *w,
			const char *key, struct json_object *v,
			struct fc_ctx *c)
{
	unsigned int idx = 0;
	int ret;

	if (!strcmp(key, "drive_id"))
		return fc_get_str(c, key, v, &w->drive_id);
	if (!strcmp(key, "path_on_host"))
		return fc_get_str(c, key, v, &w->path);
	if (!strcmp(key, "is_root_device")) {
		w->has_root = true;
		return fc_get_bool(c, key, v, &d->is_root);
	}
	if (!v && (!strcmp(key, "is_read_only") || !strcmp(key, "partuuid") ||
		   !strcmp(key, "cache_type") || !strcmp(key, "io_engine") ||
		   !strcmp(key, "rate_limiter") || !strcmp(key, "socket")))
		return 0; /* null: the default */
	if (!strcmp(key, "is_read_only"))
		return fc_get_bool(c, key, v, &d->readonly);
	if (!strcmp(key, "partuuid")) {
		ret = fc_get_str(c, key, v, &w->partuuid);
		return ret ? ret : check_partuuid(c, w->partuuid);
	}
	if (!strcmp(key, "cache_type")) {
		ret = fc_get_enum(c, key, v, cache_names, false, &idx);
		if (!ret)
			d->cache = cache_values[idx];
		return ret;
	}
	if (!strcmp(key, "io_engine")) {
		ret = fc_get_enum(c, key, v, io_engine_names, false, &idx);
		d->io_async = idx == 1;
		return ret;
	}
	if (!strcmp(key, "rate_limiter"))
		return fc_apply_rate_limiter(&d->rl, "rate_limiter", v, c);
	if (!strcmp(key, "socket"))
		return fc_fail(c, "socket: vhost-user-block drives are not supported (give path_on_host)");
	return 1;
}

/* Our own extra fields; 1: not one of them either. */
static int drive_key_ours(struct disk_config *d, struct drive_views *w,
			  const char *key, struct json_object *v,
			  struct fc_ctx *c)
{
	unsigned int idx = 0;
	uint64_t n = 0;
	int ret;

	if (!strcmp(key, "transport")) {
		ret = fc_get_enum(c, key, v, fc_transport_names, false, &idx);
		d->transport = idx ? DISK_TRANSPORT_PCI : DISK_TRANSPORT_MMIO;
	} else if (!strcmp(key, "queues")) {
		ret = fc_get_u64(c, key, v, 1, CONFIG_MAX_QUEUES, &n);
		d->queues = (unsigned int)n;
	} else if (!strcmp(key, "queue_size")) {
		ret = fc_get_u64(c, key, v, 2, CONFIG_MAX_QUEUE_SIZE, &n);
		if (!ret && (n & (n - 1)))
			ret = fc_fail(c, "queue_size %llu is not a power of 2",
				      (unsigned long long)n);
		d->queue_size = (unsigned int)n;
	} else if (!strcmp(key, "engine")) {
		ret = fc_get_enum(c, key, v, engine_names, false, &idx);
		d->engine = idx ? CONFIG_ENGINE_VHOST : CONFIG_ENGINE_URING;
	} else if (!strcmp(key, "poll_us")) {
		ret = fc_get_u64(c, key, v, 0, CONFIG_MAX_POLL_US, &n);
		d->poll_us = (unsigned int)n;
		d->poll_set = true;
	} else if (!strcmp(key, "snapshot")) {
		ret = fc_get_bool(c, key, v, &d->snapshot);
	} else if (!strcmp(key, "serial")) {
		ret = fc_get_str(c, key, v, &w->serial);
		if (!ret && strlen(w->serial) > 20)
			ret = fc_fail(c, "serial \"%.64s\" is longer than 20 bytes",
				      w->serial);
	} else {
		return 1;
	}
	return ret;
}

/* The combinations a drive cannot have, once all its keys are read. */
static int drive_check(const struct disk_config *d,
		       const struct drive_views *w, const char *path_id,
		       struct fc_ctx *c)
{
	if (!w->drive_id)
		return fc_fail(c, "drive_id is required");
	if (!fc_valid_id(w->drive_id))
		return fc_fail(c, "drive_id \"%.64s\" must be 1-%d letters, digits or '_'",
			       w->drive_id, FC_ID_MAX);
	if (path_id && strcmp(path_id, w->drive_id))
		return fc_fail(c, "drive_id \"%.64s\" differs from the path's \"%.64s\"",
			       w->drive_id, path_id);
	if (!w->has_root)
		return fc_fail(c, "is_root_device is required");
	if (!w->path)
		return fc_fail(c, "path_on_host is required");
	if (d->engine == CONFIG_ENGINE_VHOST && rl_config_active(&d->rl))
		return fc_fail(c, "rate_limiter needs engine io_uring (the vhost-blk module serves the queues itself)");
	if (d->engine == CONFIG_ENGINE_VHOST && d->snapshot)
		return fc_fail(c, "snapshot needs engine io_uring (the throwaway overlay lives in microvm)");
	if (d->snapshot && d->readonly)
		return fc_fail(c, "snapshot and is_read_only exclude each other");
	if (d->snapshot && d->cache == CONFIG_CACHE_NONE)
		return fc_fail(c, "snapshot does not combine with cache_type \"None\" (the overlay is page-cached)");
	return 0;
}

static int drive_parse(struct disk_config *d, struct drive_views *w,
		       const struct vm_config *cfg, const char *path_id,
		       struct json_object *o, struct fc_ctx *c)
{
	int ret;

	memset(d, 0, sizeof(*d));
	memset(w, 0, sizeof(*w));
	d->cache = CONFIG_CACHE_UNSAFE; /* Firecracker's default */
	d->cache_set = true;
	d->transport = cfg->enable_pci ? DISK_TRANSPORT_PCI :
					 DISK_TRANSPORT_MMIO;
	if (fc_get_object(c, "drive", o))
		return -EINVAL;
	json_object_object_foreach(o, key, v) {
		ret = drive_key_fc(d, w, key, v, c);
		if (ret == 1)
			ret = drive_key_ours(d, w, key, v, c);
		if (ret == 1)
			ret = fc_unknown(c, key);
		if (ret)
			return ret;
	}
	return drive_check(d, w, path_id, c);
}

/* The root device other than the drive at @self, or -1. */
static int other_root(const struct vm_config *cfg, int self)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_disks; i++)
		if ((int)i != self && cfg->disks[i].is_root)
			return (int)i;
	return -1;
}

int fc_apply_drive(struct vm_config *cfg, const char *path_id,
		   struct json_object *o, struct fc_ctx *c)
{
	struct drive_views w;
	struct disk_config d;
	int idx, root, ret;

	ret = drive_parse(&d, &w, cfg, path_id, o, c);
	if (ret)
		return ret;
	idx = fc_disk_index(cfg, w.drive_id);
	root = other_root(cfg, idx);
	if (d.is_root && root >= 0)
		return fc_fail(c, "is_root_device: drive \"%s\" is the root device already",
			       cfg->disks[root].drive_id ?
			       cfg->disks[root].drive_id : "?");
	if (idx < 0 && cfg->nr_disks >= CONFIG_MAX_DISKS)
		return fc_fail(c, "at most %d drives", CONFIG_MAX_DISKS);
	if (!(d.spec = strdup(w.drive_id)) ||
	    !(d.drive_id = strdup(w.drive_id)) ||
	    !(d.path = strdup(w.path)) ||
	    (w.partuuid && !(d.partuuid = strdup(w.partuuid))) ||
	    (w.serial && !(d.serial = strdup(w.serial)))) {
		config_disk_free(&d);
		fc_fail(c, "out of memory");
		return -ENOMEM;
	}
	if (idx < 0)
		idx = (int)cfg->nr_disks++;
	else
		config_disk_free(&cfg->disks[idx]);
	cfg->disks[idx] = d;
	return 0;
}

int fc_put_drive(struct vm_config *cfg, const char *drive_id,
		 const char *json, size_t len, char *err, size_t errlen)
{
	struct json_object *o;
	struct fc_ctx c;
	int ret;

	fc_ctx_init(&c, err, errlen, "drive \"%.64s\"",
		    drive_id ? drive_id : "");
	if (!drive_id || !fc_valid_id(drive_id))
		return fc_fail(&c, "the path's drive id must be 1-%d letters, digits or '_'",
			       FC_ID_MAX);
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	ret = fc_apply_drive(cfg, drive_id, o, &c);
	json_object_put(o);
	return ret;
}

static int patch_fields(const struct disk_config *d, const char *drive_id,
			struct json_object *o, struct fc_drive_patch *out,
			struct fc_ctx *c)
{
	const char *id = NULL, *path = NULL;
	int ret = 0;

	out->rl = d->rl;
	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "drive_id")) {
			ret = fc_get_str(c, key, v, &id);
		} else if (!strcmp(key, "path_on_host")) {
			ret = v ? fc_get_str(c, key, v, &path) : 0;
		} else if (!strcmp(key, "rate_limiter")) {
			if (!v)
				continue;
			ret = fc_apply_rate_limiter(&out->rl, "rate_limiter",
						    v, c);
			out->has_rl = true;
		} else {
			ret = fc_unknown(c, key);
		}
		if (ret)
			return ret;
	}
	if (!id)
		return fc_fail(c, "drive_id is required");
	if (strcmp(id, drive_id))
		return fc_fail(c, "drive_id \"%.64s\" differs from the path's \"%.64s\"",
			       id, drive_id);
	if (out->has_rl && d->engine == CONFIG_ENGINE_VHOST)
		return fc_fail(c, "rate_limiter needs engine io_uring (the vhost-blk module serves the queues itself)");
	if (path && !(out->path_on_host = strdup(path))) {
		fc_fail(c, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int fc_parse_drive_patch(const struct vm_config *cfg, const char *drive_id,
			 const char *json, size_t len,
			 struct fc_drive_patch *out, char *err, size_t errlen)
{
	struct json_object *o;
	struct fc_ctx c;
	int idx, ret;

	memset(out, 0, sizeof(*out));
	fc_ctx_init(&c, err, errlen, "drive \"%.64s\"",
		    drive_id ? drive_id : "");
	if (!drive_id || !fc_valid_id(drive_id))
		return fc_fail(&c, "the path's drive id must be 1-%d letters, digits or '_'",
			       FC_ID_MAX);
	idx = fc_disk_index(cfg, drive_id);
	if (idx < 0)
		return fc_fail(&c, "no such drive");
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	ret = patch_fields(&cfg->disks[idx], drive_id, o, out, &c);
	json_object_put(o);
	if (ret)
		fc_drive_patch_free(out);
	return ret;
}

void fc_drive_patch_free(struct fc_drive_patch *p)
{
	free(p->path_on_host);
	memset(p, 0, sizeof(*p));
}
