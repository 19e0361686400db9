// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's configuration objects into struct vm_config: boot-source,
 * machine-config, drives (with rate limiters and our own extra keys),
 * logger and metrics. Every field is read strictly (fc_json.c); an object
 * is checked whole before anything in the config changes.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config_priv.h"

const char *const fc_log_level_names[] = {
	"Off", "Error", "Warning", "Info", "Debug", "Trace", NULL,
};
/* What "level" takes: the names above in any case, and "Warn" (as
 * Firecracker's logger), which is Warning. */
static const char *const log_level_in[] = {
	"Off", "Error", "Warning", "Info", "Debug", "Trace", "Warn", NULL,
};
#define LOG_LEVEL_WARN_ALIAS 6u

bool fc_valid_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char ch = s[i];

		if (i >= FC_ID_MAX)
			return false;
		if (!(ch == '_' || (ch >= '0' && ch <= '9') ||
		      (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
			return false;
	}
	return i > 0;
}

int fc_disk_index(const struct vm_config *cfg, const char *drive_id)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_disks; i++)
		if (cfg->disks[i].drive_id &&
		    !strcmp(cfg->disks[i].drive_id, drive_id))
			return (int)i;
	return -1;
}

int fc_apply_boot_source(struct vm_config *cfg, struct json_object *o,
			 struct fc_ctx *c)
{
	const char *kernel = NULL, *initrd = NULL, *args = NULL;
	char *k = NULL, *i = NULL, *a = NULL;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "kernel_image_path"))
			ret = fc_get_str(c, key, v, &kernel);
		else if (!strcmp(key, "initrd_path"))
			ret = v ? fc_get_str(c, key, v, &initrd) : 0;
		else if (!strcmp(key, "boot_args"))
			ret = v ? fc_get_str(c, key, v, &args) : 0;
		else
			ret = fc_unknown(c, key);
		if (ret)
			return ret;
	}
	if (!kernel)
		return fc_fail(c, "kernel_image_path is required");
	if (fc_dup_opt(&k, kernel) || fc_dup_opt(&i, initrd) || fc_dup_opt(&a, args)) {
		free(k);
		free(i);
		return fc_oom(c);
	}
	free(cfg->kernel);
	free(cfg->initrd);
	free(cfg->cmdline);
	cfg->kernel = k;
	cfg->initrd = i;
	cfg->cmdline = a;
	return 0;
}

static const char *const none_only[] = { "None", NULL };

/* cpu_template and huge_pages: Firecracker's other values are refused. */
static int machine_none_only(struct fc_ctx *c, const char *key,
			     struct json_object *v)
{
	unsigned int idx;
	const char *s;

	if (!v)
		return 0;
	if (fc_get_str(c, key, v, &s))
		return -EINVAL;
	if (fc_get_enum(c, key, v, none_only, false, &idx))
		return fc_fail(c, "%s \"%.64s\" is not supported: microvm takes only \"None\"",
			       key, s);
	return 0;
}

int fc_apply_machine_config(struct vm_config *cfg, struct json_object *o,
			    bool put, struct fc_ctx *c)
{
	uint64_t cpus = cfg->cpus, mib = cfg->memory >> 20;
	bool smt = put ? false : cfg->smt;
	bool dirty = put ? false : cfg->track_dirty_pages;
	bool has_cpus = false, has_mem = false;
	char arg[32], *memory_arg;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "vcpu_count")) {
			ret = fc_get_u64(c, key, v, 1, CONFIG_MAX_CPUS, &cpus);
			has_cpus = true;
		} else if (!strcmp(key, "mem_size_mib")) {
			ret = fc_get_u64(c, key, v, CONFIG_MIN_MEMORY >> 20,
					 FC_MAX_MEM_MIB, &mib);
			has_mem = true;
		} else if (!strcmp(key, "smt")) {
			ret = v ? fc_get_bool(c, key, v, &smt) : 0;
		} else if (!strcmp(key, "track_dirty_pages")) {
			ret = v ? fc_get_bool(c, key, v, &dirty) : 0;
		} else if (!strcmp(key, "cpu_template") ||
			   !strcmp(key, "huge_pages")) {
			ret = machine_none_only(c, key, v);
		} else {
			ret = fc_unknown(c, key);
		}
		if (ret)
			return ret;
	}
	if (put && (!has_cpus || !has_mem))
		return fc_fail(c, "%s is required",
			       has_cpus ? "mem_size_mib" : "vcpu_count");
	ret = config_check_smt((unsigned int)cpus, smt);
	if (ret == -EOPNOTSUPP) /* Firecracker's words after ours */
		return fc_fail(c, "smt true: Enabling simultaneous multithreading is not supported on aarch64.");
	if (ret)
		return fc_fail(c, "vcpu_count %llu with smt true: The number of vCPUs must be greater than 0, less than %d and must be 1 or an even number if SMT is enabled.",
			       (unsigned long long)cpus, CONFIG_MAX_CPUS + 1);
	snprintf(arg, sizeof(arg), "%lluM", (unsigned long long)mib);
	if (!(memory_arg = strdup(arg)))
		return fc_oom(c);
	free(cfg->memory_arg);
	cfg->memory_arg = memory_arg;
	cfg->cpus = (unsigned int)cpus;
	cfg->memory = mib << 20;
	cfg->memory_set = true;
	cfg->smt = smt;
	cfg->track_dirty_pages = dirty;
	return 0;
}

/* One token bucket: size and refill_time required, one_time_burst not. */
static int apply_bucket(struct rl_bucket_config *b, const char *name,
			struct json_object *o, struct fc_ctx *c)
{
	struct rl_bucket_config nb = { 0 };
	bool has_size = false, has_refill = false;
	char key[64];
	int ret = 0;

	if (fc_get_object(c, name, o))
		return -EINVAL;
	json_object_object_foreach(o, k, v) {
		snprintf(key, sizeof(key), "%s.%.32s", name, k);
		if (!strcmp(k, "size")) {
			ret = fc_get_u64(c, key, v, 0, INT64_MAX - 1, &nb.size);
			has_size = true;
		} else if (!strcmp(k, "refill_time")) {
			ret = fc_get_u64(c, key, v, 0, INT64_MAX - 1,
					 &nb.refill_time_ms);
			has_refill = true;
		} else if (!strcmp(k, "one_time_burst")) {
			ret = v ? fc_get_u64(c, key, v, 0, INT64_MAX - 1,
					     &nb.one_time_burst) : 0;
		} else {
			ret = fc_unknown(c, key);
		}
		if (ret)
			return ret;
	}
	if (!has_size || !has_refill)
		return fc_fail(c, "%s.%s is required", name,
			       has_size ? "refill_time" : "size");
	*b = nb;
	return 0;
}

int fc_apply_rate_limiter(struct rl_config *rl, const char *name,
			  struct json_object *o, struct fc_ctx *c)
{
	struct rl_config n = *rl;
	char bucket[64];
	int ret = 0;

	if (fc_get_object(c, name, o))
		return -EINVAL;
	json_object_object_foreach(o, key, v) {
		if (!v)
			continue; /* null: this bucket as it was */
		snprintf(bucket, sizeof(bucket), "%s.%.32s", name, key);
		if (!strcmp(key, "bandwidth"))
			ret = apply_bucket(&n.bandwidth, bucket, v, c);
		else if (!strcmp(key, "ops"))
			ret = apply_bucket(&n.ops, bucket, v, c);
		else
			ret = fc_fail(c, "unknown field \"%s\"", bucket);
		if (ret)
			return ret;
	}
	*rl = n;
	return 0;
}

int fc_apply_logger(struct vm_config *cfg, struct json_object *o,
		    struct fc_ctx *c)
{
	const char *path = NULL, *module = NULL;
	unsigned int level = 0;
	bool show_level = cfg->log_show_level;
	bool show_origin = cfg->log_show_origin;
	bool has_level = false;
	char *p = NULL, *m = NULL;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (!v)
			continue; /* null: as it was */
		if (!strcmp(key, "log_path")) {
			ret = fc_get_str(c, key, v, &path);
		} else if (!strcmp(key, "level")) {
			ret = fc_get_enum(c, key, v, log_level_in, true,
					  &level);
			if (level == LOG_LEVEL_WARN_ALIAS)
				level = CONFIG_LOG_WARNING - 1;
			has_level = true;
		} else if (!strcmp(key, "show_level")) {
			ret = fc_get_bool(c, key, v, &show_level);
		} else if (!strcmp(key, "show_log_origin")) {
			ret = fc_get_bool(c, key, v, &show_origin);
		} else if (!strcmp(key, "module")) {
			ret = fc_get_str(c, key, v, &module);
		} else {
			ret = fc_unknown(c, key);
		}
		if (ret)
			return ret;
	}
	if (fc_dup_opt(&p, path) || fc_dup_opt(&m, module)) {
		free(p);
		return fc_oom(c);
	}
	if (p) {
		free(cfg->log_path);
		cfg->log_path = p;
	}
	if (m) {
		free(cfg->log_module);
		cfg->log_module = m;
	}
	if (has_level)
		cfg->log_level = (enum config_log_level)(level + 1);
	cfg->log_show_level = show_level;
	cfg->log_show_origin = show_origin;
	return 0;
}

int fc_apply_metrics(struct vm_config *cfg, struct json_object *o,
		     struct fc_ctx *c)
{
	const char *path = NULL;
	bool emit_id = false;
	char *p;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "metrics_path"))
			ret = fc_get_str(c, key, v, &path);
		else if (!strcmp(key, "emit_id"))
			ret = v ? fc_get_bool(c, key, v, &emit_id) : 0;
		else
			ret = fc_unknown(c, key);
		if (ret)
			return ret;
	}
	if (!path)
		return fc_fail(c, "metrics_path is required");
	if (!(p = strdup(path)))
		return fc_oom(c);
	free(cfg->metrics_path);
	cfg->metrics_path = p;
	cfg->metrics_emit_id = emit_id;
	return 0;
}

/* Parse @json as an object, then apply it with @fn. */
typedef int fc_apply_fn(struct vm_config *cfg, struct json_object *o,
			struct fc_ctx *c);

static int put_object(struct vm_config *cfg, const char *obj,
		      fc_apply_fn *fn, const char *json, size_t len,
		      char *err, size_t errlen)
{
	struct json_object *o;
	struct fc_ctx c;
	int ret;

	fc_ctx_init(&c, err, errlen, "%s", obj);
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	ret = fn(cfg, o, &c);
	json_object_put(o);
	return ret;
}

/* uds_path: required by the hybrid engine, refused by vhost. */
static int vsock_check_path(struct fc_ctx *c, const char *path,
			    unsigned int engine)
{
	if (engine == CONFIG_VSOCK_VHOST && path)
		return fc_fail(c, "uds_path and engine \"vhost\" exclude each other: the host reaches the guest with AF_VSOCK at guest_cid");
	if (engine == CONFIG_VSOCK_VHOST)
		return 0;
	if (!path)
		return fc_fail(c, "missing field: uds_path");
	if (!*path || strlen(path) > CONFIG_VSOCK_MAX_UDS_PATH)
		return fc_fail(c, "uds_path must be 1 to %u bytes (<uds_path>_<port> must fit a Unix socket path)",
			       CONFIG_VSOCK_MAX_UDS_PATH);
	return 0;
}

/*
 * PUT /vsock and the config file's "vsock": guest_cid and uds_path
 * (required), vsock_id (Firecracker's, deprecated: kept, unused) and our
 * transport and engine ("hybrid", the default, or "vhost": the kernel's
 * vhost_vsock, and then no uds_path). A second PUT replaces the device,
 * as Firecracker's does.
 */
int fc_apply_vsock(struct vm_config *cfg, struct json_object *o,
		   struct fc_ctx *c)
{
	static const char *const engines[] = { "hybrid", "vhost", NULL };
	const char *path = NULL, *id = NULL;
	uint64_t cid = 0;
	unsigned int t = cfg->enable_pci, e = CONFIG_VSOCK_HYBRID;
	char *p = NULL, *i = NULL;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (ret)
			break;
		if (!strcmp(key, "guest_cid"))
			ret = fc_get_u64(c, key, v, CONFIG_VSOCK_MIN_CID,
					 CONFIG_VSOCK_MAX_CID, &cid);
		else if (!strcmp(key, "uds_path"))
			ret = fc_get_str(c, key, v, &path);
		else if (!strcmp(key, "vsock_id"))
			ret = v ? fc_get_str(c, key, v, &id) : 0;
		else if (!strcmp(key, "transport"))
			ret = fc_get_enum(c, key, v, fc_transport_names, false,
					  &t);
		else if (!strcmp(key, "engine"))
			ret = fc_get_enum(c, key, v, engines, false, &e);
		else
			ret = fc_unknown(c, key);
	}
	if (ret)
		return ret;
	if (!cid)
		return fc_fail(c, "missing field: guest_cid");
	ret = vsock_check_path(c, path, e);
	if (ret)
		return ret;
	if (path)
		p = strdup(path);
	if (id)
		i = strdup(id);
	if ((path && !p) || (id && !i)) {
		free(p);
		free(i);
		return fc_fail(c, "out of memory");
	}
	free(cfg->vsock.uds_path);
	free(cfg->vsock.vsock_id);
	cfg->vsock.uds_path = p;
	cfg->vsock.vsock_id = i;
	cfg->vsock.guest_cid = cid;
	cfg->vsock.transport = t ? DISK_TRANSPORT_PCI : DISK_TRANSPORT_MMIO;
	cfg->vsock.engine = e == CONFIG_VSOCK_VHOST ? CONFIG_VSOCK_VHOST :
						      CONFIG_VSOCK_HYBRID;
	cfg->vsock.set = true;
	return 0;
}

int fc_put_vsock(struct vm_config *cfg, const char *json, size_t len,
		 char *err, size_t errlen)
{
	return put_object(cfg, "vsock", fc_apply_vsock, json, len, err,
			  errlen);
}

int fc_put_mmds_config(struct vm_config *cfg, const char *json, size_t len,
		       char *err, size_t errlen)
{
	return put_object(cfg, "mmds-config", fc_apply_mmds_config, json, len,
			  err, errlen);
}

int fc_put_boot_source(struct vm_config *cfg, const char *json, size_t len,
		       char *err, size_t errlen)
{
	return put_object(cfg, "boot-source", fc_apply_boot_source, json, len,
			  err, errlen);
}

static int apply_machine_put(struct vm_config *cfg, struct json_object *o,
			     struct fc_ctx *c)
{
	return fc_apply_machine_config(cfg, o, true, c);
}

static int apply_machine_patch(struct vm_config *cfg, struct json_object *o,
			       struct fc_ctx *c)
{
	return fc_apply_machine_config(cfg, o, false, c);
}

int fc_put_machine_config(struct vm_config *cfg, const char *json,
			  size_t len, char *err, size_t errlen)
{
	return put_object(cfg, "machine-config", apply_machine_put, json, len,
			  err, errlen);
}

int fc_patch_machine_config(struct vm_config *cfg, const char *json,
			    size_t len, char *err, size_t errlen)
{
	return put_object(cfg, "machine-config", apply_machine_patch, json,
			  len, err, errlen);
}

int fc_put_logger(struct vm_config *cfg, const char *json, size_t len,
		  char *err, size_t errlen)
{
	return put_object(cfg, "logger", fc_apply_logger, json, len, err,
			  errlen);
}

int fc_put_metrics(struct vm_config *cfg, const char *json, size_t len,
		   char *err, size_t errlen)
{
	return put_object(cfg, "metrics", fc_apply_metrics, json, len, err,
			  errlen);
}
