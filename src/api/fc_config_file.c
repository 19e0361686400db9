// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's --config-file (the API's objects in one JSON document),
 * the same shape back out for GET /vm/config and GET /machine-config, and
 * the last step before booting: the root drive first and root= on the
 * kernel command line, as Firecracker's builder does.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config_priv.h"
#include "util/readfile.h"

/* Keys of devices microvm does not have: only absent, null or empty. */
static const char *const unsupported_keys[] = {
	"balloon", "cpu-config", "entropy", "pmem",
	"memory-hotplug", NULL,
};

static const char *const known_keys[] = {
	"boot-source", "machine-config", "drives", "logger", "metrics",
	"vsock", "network-interfaces", "mmds-config", NULL,
};

static bool in_list(const char *const *list, const char *key)
{
	for (; *list; list++)
		if (!strcmp(*list, key))
			return true;
	return false;
}

static bool json_empty(struct json_object *v)
{
	return !v ||
	       (json_object_is_type(v, json_type_array) &&
		!json_object_array_length(v)) ||
	       (json_object_is_type(v, json_type_object) &&
		!json_object_object_length(v));
}

/* The whole file, FIFOs included, bounded by FC_CONFIG_FILE_MAX. */
static int read_file(const char *path, char **out, size_t *len,
		     struct fc_ctx *c)
{
	const char *step;
	int ret = read_bounded(path, FC_CONFIG_FILE_MAX, out, len, &step);

	if (ret == -E2BIG)
		return fc_fail(c, "larger than %u bytes", FC_CONFIG_FILE_MAX);
	if (ret)
		return fc_fail(c, "cannot %s: %s", step, strerror(-ret));
	return 0;
}

/* Every top-level key is known, or one of ours-to-refuse and empty. */
static int check_keys(struct json_object *root, const char *path,
		      char *err, size_t errlen)
{
	struct fc_ctx c;

	fc_ctx_init(&c, err, errlen, "--config-file %s", path);
	json_object_object_foreach(root, key, v) {
		if (in_list(known_keys, key))
			continue;
		if (!in_list(unsupported_keys, key))
			return fc_unknown(&c, key);
		if (!json_empty(v))
			return fc_fail(&c, "\"%s\": microvm has no such device (only absent, null or empty is accepted)",
				       key);
	}
	return 0;
}

/* One element of an array of objects. */
typedef int apply_elem_fn(struct vm_config *cfg, const char *path_id,
			  struct json_object *o, struct fc_ctx *c);

/*
 * The array @key ("drives", "network-interfaces"), each element applied
 * by @fn; messages name the element by index and by its @id_key.
 */
static int apply_array(struct vm_config *cfg, struct json_object *arr,
		       const char *key, const char *id_key, apply_elem_fn *fn,
		       const char *path, char *err, size_t errlen)
{
	struct json_object *d, *id;
	struct fc_ctx c;
	size_t i, n;
	int ret;

	fc_ctx_init(&c, err, errlen, "--config-file %s: %s", path, key);
	if (!arr)
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return fc_fail(&c, "must be an array");
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		d = json_object_array_get_idx(arr, i);
		id = NULL;
		if (json_object_is_type(d, json_type_object))
			json_object_object_get_ex(d, id_key, &id);
		fc_ctx_init(&c, err, errlen, "--config-file %s: %s[%zu]%s%.64s%s",
			    path, key,
			    i, json_object_is_type(id, json_type_string) ?
			    " \"" : "",
			    json_object_is_type(id, json_type_string) ?
			    json_object_get_string(id) : "",
			    json_object_is_type(id, json_type_string) ?
			    "\"" : "");
		ret = fn(cfg, NULL, d, &c);
		if (ret)
			return ret;
	}
	return 0;
}

/* The objects in Firecracker's order: logger and metrics first. */
static int apply_all(struct vm_config *cfg, struct json_object *root,
		     const char *path, char *err, size_t errlen)
{
	struct json_object *v;
	struct fc_ctx c;
	int ret = 0;

	if (json_object_object_get_ex(root, "logger", &v) && v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: logger",
			    path);
		ret = fc_get_object(&c, "logger", v) ?:
		      fc_apply_logger(cfg, v, &c);
	}
	if (!ret && json_object_object_get_ex(root, "metrics", &v) && v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: metrics",
			    path);
		ret = fc_get_object(&c, "metrics", v) ?:
		      fc_apply_metrics(cfg, v, &c);
	}
	if (!ret && json_object_object_get_ex(root, "machine-config", &v) &&
	    v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: machine-config",
			    path);
		ret = fc_get_object(&c, "machine-config", v) ?:
		      fc_apply_machine_config(cfg, v, true, &c);
	}
	if (!ret && json_object_object_get_ex(root, "boot-source", &v) && v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: boot-source",
			    path);
		ret = fc_get_object(&c, "boot-source", v) ?:
		      fc_apply_boot_source(cfg, v, &c);
	}
	if (!ret && json_object_object_get_ex(root, "drives", &v))
		ret = apply_array(cfg, v, "drives", "drive_id", fc_apply_drive,
				  path, err, errlen);
	if (!ret && json_object_object_get_ex(root, "network-interfaces", &v))
		ret = apply_array(cfg, v, "network-interfaces", "iface_id",
				  fc_apply_net, path, err, errlen);
	if (!ret && json_object_object_get_ex(root, "vsock", &v) && v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: vsock", path);
		ret = fc_get_object(&c, "vsock", v) ?:
		      fc_apply_vsock(cfg, v, &c);
	}
	if (!ret && json_object_object_get_ex(root, "mmds-config", &v) && v) {
		fc_ctx_init(&c, err, errlen, "--config-file %s: mmds-config",
			    path);
		ret = fc_get_object(&c, "mmds-config", v) ?:
		      fc_apply_mmds_config(cfg, v, &c);
	}
	return ret;
}

/* Apply the document @root (named @path in messages) to @cfg, all or
 * nothing. */
static int load_root(struct vm_config *cfg, struct json_object *root,
		     const char *path, struct fc_ctx *c, char *err,
		     size_t errlen)
{
	struct vm_config tmp;
	int ret;

	ret = check_keys(root, path, err, errlen);
	if (!ret && config_copy(&tmp, cfg))
		ret = fc_fail(c, "out of memory");
	if (!ret) {
		ret = apply_all(&tmp, root, path, err, errlen);
		if (ret) {
			config_free(&tmp);
		} else {
			config_free(cfg);
			*cfg = tmp;
		}
	}
	return ret;
}

int fc_load_config_file(struct vm_config *cfg, const char *path, char *err,
			size_t errlen)
{
	struct json_object *root;
	struct fc_ctx c;
	size_t len = 0;
	char *buf = NULL;
	int ret;

	fc_ctx_init(&c, err, errlen, "--config-file %s", path);
	ret = read_file(path, &buf, &len, &c);
	if (ret)
		return ret;
	root = fc_parse_object(&c, buf, len);
	free(buf);
	if (!root)
		return -EINVAL;
	ret = load_root(cfg, root, path, &c, err, errlen);
	json_object_put(root);
	return ret;
}

int fc_load_config_json(struct vm_config *cfg, const char *json, size_t len,
			const char *origin, char *err, size_t errlen)
{
	struct json_object *root;
	struct fc_ctx c;
	int ret;

	fc_ctx_init(&c, err, errlen, "%s", origin);
	root = fc_parse_object(&c, json, len);
	if (!root)
		return -EINVAL;
	ret = load_root(cfg, root, origin, &c, err, errlen);
	json_object_put(root);
	return ret;
}
