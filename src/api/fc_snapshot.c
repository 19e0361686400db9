// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's snapshot bodies (fc_snapshot.h) with the rules of its
 * vmm_config/snapshot.rs (fields, defaults, the removed "version") and
 * api_server/request/snapshot.rs (mem_backend or the deprecated
 * mem_file_path, exactly one; enable_diff_snapshots OR'd into
 * track_dirty_pages). The body is checked whole before anything is copied.
 */
#include "api/fc_snapshot.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config.h"
#include "api/fc_json.h"

/* Firecracker's words for the two memory fields (request/snapshot.rs). */
#define MSG_MEM_MISSING \
	"missing field: either `mem_backend` or `mem_file_path` is required"
#define MSG_MEM_BOTH "too many fields: either `mem_backend` or " \
	"`mem_file_path` exclusively is required"

/* The body's strings as views into the JSON, copied once all is valid. */
struct load_views {
	const char *snapshot_path, *mem_file_path, *backend_path, *uds_path;
	bool has_backend;
	unsigned int backend_type; /* index in backend_names */
	bool dirty, diff_alias, resume, clock_realtime;
	const char *ifaces[CONFIG_MAX_NETS], *taps[CONFIG_MAX_NETS];
	unsigned int nr_overrides;
	struct {
		const char *id, *path;
		bool snapshot;
	} drives[CONFIG_MAX_DISKS];
	unsigned int nr_drives;
};

static const char *const snapshot_type_names[] = { "Full", "Diff", NULL };
static const enum fc_snapshot_type snapshot_type_values[] = {
	FC_SNAP_FULL, FC_SNAP_DIFF,
};
#define BACKEND_UFFD 1u
static const char *const backend_names[] = { "File", "Uffd", NULL };
/* SnapshotLoadHugePageConfig: only the first two leave memory as ours. */
static const char *const huge_page_names[] = { "Snapshot", "None",
					       "Transparent", "2M", NULL };

void fc_snapshot_create_free(struct fc_snapshot_create *p)
{
	free(p->snapshot_path);
	free(p->mem_file_path);
	memset(p, 0, sizeof(*p));
}

int fc_parse_snapshot_create(const char *json, size_t len,
			     struct fc_snapshot_create *out, char *err,
			     size_t errlen)
{
	const char *snap = NULL, *mem = NULL;
	unsigned int type = 0;
	struct json_object *o;
	struct fc_ctx c;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	fc_ctx_init(&c, err, errlen, "snapshot/create");
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	json_object_object_foreach(o, key, v) {
		if (ret)
			break;
		if (!strcmp(key, "snapshot_path"))
			ret = fc_get_str(&c, key, v, &snap);
		else if (!strcmp(key, "mem_file_path"))
			ret = fc_get_str(&c, key, v, &mem);
		else if (!strcmp(key, "snapshot_type"))
			ret = v ? fc_get_enum(&c, key, v, snapshot_type_names,
					      false, &type) : 0;
		else
			ret = fc_unknown(&c, key);
	}
	if (!ret && !snap)
		ret = fc_fail(&c, "snapshot_path is required");
	if (!ret && !mem)
		ret = fc_fail(&c, "mem_file_path is required");
	if (!ret) {
		out->type = snapshot_type_values[type];
		if (fc_dup_opt(&out->snapshot_path, snap) ||
		    fc_dup_opt(&out->mem_file_path, mem)) {
			fc_snapshot_create_free(out);
			ret = fc_oom(&c);
		}
	}
	json_object_put(o);
	return ret;
}

/* mem_backend: backend_type and backend_path, both required. */
static int load_mem_backend(struct fc_ctx *c, struct json_object *o,
			    struct load_views *w)
{
	bool has_type = false;
	char key[64];
	int ret = 0;

	if (fc_get_object(c, "mem_backend", o))
		return -EINVAL;
	json_object_object_foreach(o, k, v) {
		if (ret)
			break;
		snprintf(key, sizeof(key), "mem_backend.%.32s", k);
		if (!strcmp(k, "backend_type")) {
			ret = fc_get_enum(c, key, v, backend_names, false,
					  &w->backend_type);
			has_type = true;
		} else if (!strcmp(k, "backend_path")) {
			ret = fc_get_str(c, key, v, &w->backend_path);
		} else {
			ret = fc_fail(c, "unknown field \"%s\"", key);
		}
	}
	if (!ret && !has_type)
		ret = fc_fail(c, "mem_backend.backend_type is required");
	if (!ret && !w->backend_path)
		ret = fc_fail(c, "mem_backend.backend_path is required");
	w->has_backend = true;
	return ret;
}

/* One of network_overrides: iface_id and host_dev_name, both required. */
static int load_override(struct fc_ctx *c, unsigned int i,
			 struct json_object *o, struct load_views *w)
{
	const char *id = NULL, *tap = NULL;
	char name[48], key[96];
	unsigned int k;
	int ret = 0;

	snprintf(name, sizeof(name), "network_overrides[%u]", i);
	if (fc_get_object(c, name, o))
		return -EINVAL;
	json_object_object_foreach(o, f, v) {
		if (ret)
			break;
		snprintf(key, sizeof(key), "%s.%.32s", name, f);
		if (!strcmp(f, "iface_id"))
			ret = fc_get_str(c, key, v, &id);
		else if (!strcmp(f, "host_dev_name"))
			ret = fc_get_str(c, key, v, &tap);
		else
			ret = fc_fail(c, "unknown field \"%s\"", key);
	}
	if (ret)
		return ret;
	if (!id || !tap)
		return fc_fail(c, "%s.%s is required", name,
			       id ? "host_dev_name" : "iface_id");
	if (!fc_valid_id(id))
		return fc_fail(c, "%s.iface_id \"%.64s\" must be 1-%d letters, digits or '_'",
			       name, id, FC_ID_MAX);
	if (!config_valid_tap_name(tap))
		return fc_fail(c, "%s.host_dev_name \"%.64s\" must be an interface name: 1 to %u bytes, no '/', ':' or spaces",
			       name, tap, CONFIG_NET_MAX_TAP_NAME);
	for (k = 0; k < i; k++) {
		if (!strcmp(w->ifaces[k], id))
			return fc_fail(c, "network_overrides names interface %s twice",
				       id);
		if (!strcmp(w->taps[k], tap))
			return fc_fail(c, "network_overrides gives tap %s to two interfaces",
				       tap);
	}
	w->ifaces[i] = id;
	w->taps[i] = tap;
	return 0;
}

/* One element of an override array, @i its index. */
typedef int load_elem_fn(struct fc_ctx *c, unsigned int i,
			 struct json_object *o, struct load_views *w);

/* The array @key of at most @max elements (@what: "interfaces"), each
 * through @fn; the count into *@nr. */
static int load_list(struct fc_ctx *c, struct json_object *v,
		     const char *key, size_t max, const char *what,
		     load_elem_fn *fn, struct load_views *w, unsigned int *nr)
{
	size_t i, n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return fc_fail(c, "%s must be an array, not %s", key,
			       json_type_to_name(json_object_get_type(v)));
	n = json_object_array_length(v);
	if (n > max)
		return fc_fail(c, "%s names %zu %s; there are at most %zu",
			       key, n, what, max);
	for (i = 0; i < n; i++) {
		ret = fn(c, (unsigned int)i, json_object_array_get_idx(v, i),
			 w);
		if (ret)
			return ret;
	}
	*nr = (unsigned int)n;
	return 0;
}

/*
 * Ours: drive_overrides[]: drive_id (required), path_on_host (another
 * image of the same size), snapshot (writes to a throwaway overlay over
 * the image); one of the last two at least. What lets clones of one
 * snapshot run at once, each with its own disk.
 */
static int load_drive(struct fc_ctx *c, unsigned int i, struct json_object *o,
		      struct load_views *w)
{
	const char *id = NULL, *path = NULL;
	bool snap = false, has_snap = false;
	char name[48], key[96];
	unsigned int k;
	int ret = 0;

	snprintf(name, sizeof(name), "drive_overrides[%u]", i);
	if (fc_get_object(c, name, o))
		return -EINVAL;
	json_object_object_foreach(o, f, v) {
		if (ret)
			break;
		snprintf(key, sizeof(key), "%s.%.32s", name, f);
		if (!strcmp(f, "drive_id")) {
			ret = fc_get_str(c, key, v, &id);
		} else if (!strcmp(f, "path_on_host")) {
			ret = v ? fc_get_str(c, key, v, &path) : 0;
		} else if (!strcmp(f, "snapshot")) {
			ret = v ? fc_get_bool(c, key, v, &snap) : 0;
			has_snap = v != NULL;
		} else {
			ret = fc_fail(c, "unknown field \"%s\"", key);
		}
	}
	if (ret)
		return ret;
	if (!id)
		return fc_fail(c, "%s.drive_id is required", name);
	if (!fc_valid_id(id))
		return fc_fail(c, "%s.drive_id \"%.64s\" must be 1-%d letters, digits or '_'",
			       name, id, FC_ID_MAX);
	if (!path && !has_snap)
		return fc_fail(c, "%s: give path_on_host, snapshot or both",
			       name);
	if (path && (!*path || strlen(path) > FC_STRING_MAX))
		return fc_fail(c, "%s.path_on_host must be 1 to %d bytes",
			       name, FC_STRING_MAX);
	for (k = 0; k < i; k++)
		if (!strcmp(w->drives[k].id, id))
			return fc_fail(c, "drive_overrides names drive %s twice",
				       id);
	w->drives[i].id = id;
	w->drives[i].path = path;
	w->drives[i].snapshot = snap;
	return 0;
}

int fc_parse_drive_override_arg(const char *arg,
				struct fc_drive_override *out, char *err,
				size_t errlen)
{
	const char *comma = strchr(arg, ',');
	const char *eq = strchr(arg, '=');
	size_t idlen;

	memset(out, 0, sizeof(*out));
	if (eq && comma && eq > comma)
		eq = NULL;
	idlen = eq ? (size_t)(eq - arg) :
		     comma ? (size_t)(comma - arg) : strlen(arg);
	if (comma && strcmp(comma + 1, "snapshot=on"))
		goto bad;
	if (!eq && !comma)
		goto bad;
	out->drive_id = strndup(arg, idlen);
	if (eq)
		out->path_on_host = comma ? strndup(eq + 1, comma - eq - 1) :
					    strdup(eq + 1);
	out->snapshot = comma != NULL;
	if (!out->drive_id || (eq && !out->path_on_host)) {
		fc_drive_override_free(out);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!fc_valid_id(out->drive_id) ||
	    (eq && !*out->path_on_host)) {
		fc_drive_override_free(out);
		goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "--restore-drive %s: expected ID=PATH, "
		 "ID=PATH,snapshot=on or ID,snapshot=on", arg);
	return -EINVAL;
}

void fc_drive_override_free(struct fc_drive_override *o)
{
	free(o->drive_id);
	free(o->path_on_host);
	memset(o, 0, sizeof(*o));
}

/* vsock_override: uds_path, required, fit for <uds_path>_<port>. */
static int load_vsock_override(struct fc_ctx *c, struct json_object *o,
			       struct load_views *w)
{
	char key[64];
	int ret = 0;

	if (fc_get_object(c, "vsock_override", o))
		return -EINVAL;
	json_object_object_foreach(o, k, v) {
		if (ret)
			break;
		snprintf(key, sizeof(key), "vsock_override.%.32s", k);
		if (!strcmp(k, "uds_path"))
			ret = fc_get_str(c, key, v, &w->uds_path);
		else
			ret = fc_fail(c, "unknown field \"%s\"", key);
	}
	if (ret)
		return ret;
	if (!w->uds_path)
		return fc_fail(c, "vsock_override.uds_path is required");
	if (strlen(w->uds_path) > CONFIG_VSOCK_MAX_UDS_PATH)
		return fc_fail(c, "vsock_override.uds_path must be 1 to %u bytes (<uds_path>_<port> must fit a Unix socket path)",
			       CONFIG_VSOCK_MAX_UDS_PATH);
	return 0;
}

/* huge_pages: "Snapshot" and "None" both mean none here. */
static int load_huge_pages(struct fc_ctx *c, const char *key,
			   struct json_object *v)
{
	unsigned int idx;
	int ret;

	ret = fc_get_enum(c, key, v, huge_page_names, false, &idx);
	if (!ret && idx > 1)
		ret = fc_fail(c, "%s \"%s\" is not supported: microvm takes only \"Snapshot\" or \"None\"",
			      key, huge_page_names[idx]);
	return ret;
}

/* One top-level field; null is the same as absent for optional ones. */
static int load_key(struct fc_ctx *c, const char *key, struct json_object *v,
		    struct load_views *w)
{
	if (!strcmp(key, "snapshot_path"))
		return fc_get_str(c, key, v, &w->snapshot_path);
	if (!strcmp(key, "mem_file_path"))
		return v ? fc_get_str(c, key, v, &w->mem_file_path) : 0;
	if (!strcmp(key, "mem_backend"))
		return v ? load_mem_backend(c, v, w) : 0;
	if (!strcmp(key, "enable_diff_snapshots"))
		return v ? fc_get_bool(c, key, v, &w->diff_alias) : 0;
	if (!strcmp(key, "track_dirty_pages"))
		return v ? fc_get_bool(c, key, v, &w->dirty) : 0;
	if (!strcmp(key, "resume_vm"))
		return v ? fc_get_bool(c, key, v, &w->resume) : 0;
	if (!strcmp(key, "network_overrides"))
		return v ? load_list(c, v, key, CONFIG_MAX_NETS, "interfaces",
				     load_override, w, &w->nr_overrides) : 0;
	if (!strcmp(key, "vsock_override"))
		return v ? load_vsock_override(c, v, w) : 0;
	if (!strcmp(key, "drive_overrides"))
		return v ? load_list(c, v, key, CONFIG_MAX_DISKS, "drives",
				     load_drive, w, &w->nr_drives) : 0;
	if (!strcmp(key, "clock_realtime"))
		return v ? fc_get_bool(c, key, v, &w->clock_realtime) : 0;
	if (!strcmp(key, "huge_pages"))
		return v ? load_huge_pages(c, key, v) : 0;
	return fc_unknown(c, key);
}

void fc_snapshot_load_free(struct fc_snapshot_load *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_net_overrides; i++) {
		free(p->net_overrides[i].iface_id);
		free(p->net_overrides[i].host_dev_name);
	}
	for (i = 0; i < p->nr_drive_overrides; i++)
		fc_drive_override_free(&p->drive_overrides[i]);
	free(p->snapshot_path);
	free(p->mem_path);
	free(p->vsock_uds_path);
	memset(p, 0, sizeof(*p));
}

/* The checked views into @out, every string copied. */
static int load_copy(const struct load_views *w, struct fc_snapshot_load *out)
{
	unsigned int i;

	out->mem_uffd = w->has_backend && w->backend_type == BACKEND_UFFD;
	out->track_dirty_pages = w->dirty || w->diff_alias;
	out->resume_vm = w->resume;
	out->clock_realtime = w->clock_realtime;
	if (fc_dup_opt(&out->snapshot_path, w->snapshot_path) ||
	    fc_dup_opt(&out->mem_path, w->has_backend ? w->backend_path :
						     w->mem_file_path) ||
	    fc_dup_opt(&out->vsock_uds_path, w->uds_path))
		return -ENOMEM;
	for (i = 0; i < w->nr_overrides; i++) {
		struct fc_net_override *n = &out->net_overrides[i];

		out->nr_net_overrides = i + 1; /* what the free must see */
		if (fc_dup_opt(&n->iface_id, w->ifaces[i]) ||
		    fc_dup_opt(&n->host_dev_name, w->taps[i]))
			return -ENOMEM;
	}
	for (i = 0; i < w->nr_drives; i++) {
		struct fc_drive_override *d = &out->drive_overrides[i];

		out->nr_drive_overrides = i + 1;
		d->snapshot = w->drives[i].snapshot;
		if (fc_dup_opt(&d->drive_id, w->drives[i].id) ||
		    fc_dup_opt(&d->path_on_host, w->drives[i].path))
			return -ENOMEM;
	}
	return 0;
}

int fc_parse_snapshot_load(const char *json, size_t len,
			   struct fc_snapshot_load *out, char *err,
			   size_t errlen)
{
	struct load_views w = { 0 };
	struct json_object *o;
	struct fc_ctx c;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	fc_ctx_init(&c, err, errlen, "snapshot/load");
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	json_object_object_foreach(o, key, v) {
		ret = load_key(&c, key, v, &w);
		if (ret)
			break;
	}
	if (!ret && !w.snapshot_path)
		ret = fc_fail(&c, "snapshot_path is required");
	if (!ret && w.has_backend && w.mem_file_path)
		ret = fc_fail(&c, MSG_MEM_BOTH);
	if (!ret && !w.has_backend && !w.mem_file_path)
		ret = fc_fail(&c, MSG_MEM_MISSING);
	if (!ret && load_copy(&w, out)) {
		fc_snapshot_load_free(out);
		ret = fc_oom(&c);
	}
	json_object_put(o);
	return ret;
}

/* The element of array @key in @root whose @id_key is @id, or NULL. */
static struct json_object *find_elem(struct json_object *root,
				     const char *key, const char *id_key,
				     const char *id)
{
	struct json_object *arr, *e, *v;
	size_t i, n;

	if (!json_object_object_get_ex(root, key, &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return NULL;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(arr, i);
		if (json_object_is_type(e, json_type_object) &&
		    json_object_object_get_ex(e, id_key, &v) &&
		    json_object_is_type(v, json_type_string) &&
		    !strcmp(json_object_get_string(v), id))
			return e;
	}
	return NULL;
}

char *fc_snapshot_config_override(const char *json, size_t len,
				  const struct fc_snapshot_load *p, char *err,
				  size_t errlen)
{
	struct json_object *root, *e;
	struct fc_ctx c;
	unsigned int i;

	fc_ctx_init(&c, err, errlen, "the snapshot's configuration");
	root = fc_parse_object(&c, json, len);
	if (!root)
		return NULL;
	for (i = 0; i < p->nr_drive_overrides; i++) {
		const struct fc_drive_override *d = &p->drive_overrides[i];

		e = find_elem(root, "drives", "drive_id", d->drive_id);
		if (!e) {
			snprintf(err, errlen, "drive_overrides: the snapshot "
				 "has no drive \"%s\"", d->drive_id);
			goto fail;
		}
		if (d->path_on_host)
			fc_add_str(e, "path_on_host", d->path_on_host);
		if (d->snapshot) {
			struct json_object *cache;

			fc_add_bool(e, "snapshot", true);
			/* A throwaway overlay lives in the page cache:
			 * a drive saved with O_DIRECT (the command
			 * line's default) gets its writes cached. */
			if (json_object_object_get_ex(e, "cache_type",
						      &cache) &&
			    json_object_is_type(cache, json_type_string) &&
			    !strcmp(json_object_get_string(cache), "None"))
				fc_add_str(e, "cache_type", "Writeback");
		}
	}
	for (i = 0; i < p->nr_net_overrides; i++) {
		const struct fc_net_override *n = &p->net_overrides[i];

		e = find_elem(root, "network-interfaces", "iface_id",
			      n->iface_id);
		if (!e) {
			snprintf(err, errlen, "network_overrides: the snapshot "
				 "has no interface \"%s\"", n->iface_id);
			goto fail;
		}
		fc_add_str(e, "host_dev_name", n->host_dev_name);
	}
	if (p->vsock_uds_path) {
		if (!json_object_object_get_ex(root, "vsock", &e) ||
		    !json_object_is_type(e, json_type_object)) {
			snprintf(err, errlen, "vsock_override: the snapshot "
				 "has no vsock device");
			goto fail;
		}
		fc_add_str(e, "uds_path", p->vsock_uds_path);
	}
	return fc_json_finish(root);
fail:
	json_object_put(root);
	return NULL;
}
