// SPDX-License-Identifier: Apache-2.0
/*
 * The routes of Firecracker's API (handlers.h). Every route names the
 * states it runs in: a request outside them is refused before its body
 * is looked at, with Firecracker's wording, and changes nothing.
 */
#include "api/handlers.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmds/mmds.h"
#include "vmm/config.h"
#include "vmm/machine.h"

#define ERR_LEN 512

#define PRE_BOOT (1u << MACHINE_NOT_STARTED)
#define POST_BOOT ((1u << MACHINE_RUNNING) | (1u << MACHINE_PAUSED))
#define ANY_TIME (PRE_BOOT | POST_BOOT | (1u << MACHINE_STOPPED))

#define MSG_AFTER_START \
	"The requested operation is not supported after starting the microVM."
#define MSG_BEFORE_START \
	"The requested operation is not supported before starting the microVM."
/* Firecracker's, as its API answers them: VmmActionError's prefix, then
 * persist.rs's and vstate/vcpu.rs's words (create on a running VM), or
 * rpc_interface.rs's LoadSnapshotNotAllowed. */
#define MSG_SNAP_RUNNING "Create snapshot error: Cannot save the microVM " \
	"state: Operation not allowed: save/restore unavailable while running"
#define MSG_SNAP_CONFIGURED "Load snapshot error: Loading a microVM " \
	"snapshot not allowed after configuring boot-specific resources."
#define MSG_SNAP_NONE "snapshots are not supported by this build"

struct route {
	const char *method;
	const char *path;   /* exact, or a prefix ending in '/' with an id */
	unsigned int states;
	void (*fn)(struct api_ctx *c, const char *id,
		   const struct api_request *req, struct api_response *r);
};

static enum machine_state state_of(struct api_ctx *c)
{
	return (enum machine_state)atomic_load(&c->m->state);
}

/* Firecracker's resources microvm does not have (yet): one clear line. */
static const char *const unsupported[] = {
	"/balloon",
	"/entropy", "/cpu-config", "/pmem", "/hotplug", "/serial",
};

/* Parse @req's body as a JSON object; NULL with a fault otherwise. */
static struct json_object *body_object(const struct api_request *req,
				       struct api_response *r)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (!req->body || !req->body_len) {
		api_response_fault(r, 400, "the request has no body");
		return NULL;
	}
	tok = json_tokener_new_ex(32);
	if (!tok) {
		api_response_fault(r, 500, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, req->body, (int)req->body_len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != req->body_len ||
	    !json_object_is_type(o, json_type_object)) {
		api_response_fault(r, 400, "the body is not one JSON object");
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* The one string field @key of @o, no other field allowed. */
static const char *only_string(struct json_object *o, const char *key,
			       struct api_response *r)
{
	struct json_object *v;

	json_object_object_foreach(o, k, val) {
		(void)val;
		if (strcmp(k, key)) {
			api_response_fault(r, 400, "unknown field: %s", k);
			return NULL;
		}
	}
	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string)) {
		api_response_fault(r, 400, "missing or non-string field: %s",
				   key);
		return NULL;
	}
	return json_object_get_string(v);
}

static void reply_json(struct api_response *r, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o,
						       JSON_C_TO_STRING_PLAIN);
	char *copy = s ? strdup(s) : NULL;

	json_object_put(o);
	if (!copy) {
		api_response_fault(r, 500, "out of memory");
		return;
	}
	api_response_json(r, 200, copy);
}

static void reply_owned(struct api_response *r, char *json)
{
	if (!json)
		api_response_fault(r, 500, "out of memory");
	else
		api_response_json(r, 200, json);
}

/* 204, or 400 with @err, from a setter's return. */
static void reply_set(struct api_response *r, int ret, const char *err)
{
	if (ret)
		api_response_fault(r, 400, "%s", err);
	else
		r->status = 204;
}

/* ---- routes ---- */

static void get_instance(struct api_ctx *c, const char *id,
			 const struct api_request *req, struct api_response *r)
{
	struct json_object *o = json_object_new_object();

	(void)id;
	(void)req;
	json_object_object_add(o, "id", json_object_new_string(
		c->cfg->id ? c->cfg->id : "anonymous-instance"));
	json_object_object_add(o, "state", json_object_new_string(
		machine_state_name(state_of(c))));
	json_object_object_add(o, "vmm_version",
			       json_object_new_string(MICROVM_VERSION));
	json_object_object_add(o, "app_name",
			       json_object_new_string("microvm"));
	reply_json(r, o);
}

static void get_version(struct api_ctx *c, const char *id,
			const struct api_request *req, struct api_response *r)
{
	struct json_object *o = json_object_new_object();

	(void)c;
	(void)id;
	(void)req;
	json_object_object_add(o, "firecracker_version",
			       json_object_new_string(MICROVM_VERSION));
	reply_json(r, o);
}

static void get_vm_config(struct api_ctx *c, const char *id,
			  const struct api_request *req, struct api_response *r)
{
	(void)id;
	(void)req;
	reply_owned(r, fc_vm_config_json(c->cfg));
}

static void get_machine_config(struct api_ctx *c, const char *id,
			       const struct api_request *req,
			       struct api_response *r)
{
	(void)id;
	(void)req;
	reply_owned(r, fc_machine_config_json(c->cfg));
}

static void put_machine_config(struct api_ctx *c, const char *id,
			       const struct api_request *req,
			       struct api_response *r)
{
	char err[ERR_LEN] = "";

	(void)id;
	reply_set(r, fc_put_machine_config(c->cfg, req->body, req->body_len,
					   err, sizeof(err)), err);
}

static void patch_machine_config(struct api_ctx *c, const char *id,
				 const struct api_request *req,
				 struct api_response *r)
{
	char err[ERR_LEN] = "";

	(void)id;
	reply_set(r, fc_patch_machine_config(c->cfg, req->body, req->body_len,
					     err, sizeof(err)), err);
}

/* Can @path be opened as asked? Firecracker refuses a missing file at
 * PUT time; so do we (before boot main may still look). */
static int check_file(const char *what, const char *path, int mode,
		      char *err, size_t errlen)
{
	if (!path || !access(path, mode))
		return 0;
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	return -errno;
}

/*
 * Apply @put to a copy of the configuration, check the files it names,
 * and keep the copy only if both went well: a refusal changes nothing.
 */
static int put_checked(struct api_ctx *c, const char *id,
		       const struct api_request *req, bool drive,
		       char *err, size_t errlen)
{
	struct vm_config next;
	int i, ret;

	if (config_copy(&next, c->cfg)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = drive ? fc_put_drive(&next, id, req->body, req->body_len, err,
				   errlen) :
		      fc_put_boot_source(&next, req->body, req->body_len, err,
					 errlen);
	if (!ret && drive) {
		i = fc_disk_index(&next, id);
		if (i >= 0)
			ret = check_file("drive", next.disks[i].path,
					 next.disks[i].readonly ? R_OK :
								  R_OK | W_OK,
					 err, errlen);
	} else if (!ret) {
		ret = check_file("kernel", next.kernel, R_OK, err, errlen);
		if (!ret)
			ret = check_file("initrd", next.initrd, R_OK, err,
					 errlen);
	}
	if (ret) {
		config_free(&next);
		return ret;
	}
	config_free(c->cfg);
	*c->cfg = next;
	return 0;
}

static void put_boot_source(struct api_ctx *c, const char *id,
			    const struct api_request *req,
			    struct api_response *r)
{
	char err[ERR_LEN] = "";

	reply_set(r, put_checked(c, id, req, false, err, sizeof(err)), err);
}

static void put_drive(struct api_ctx *c, const char *id,
		      const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";

	reply_set(r, put_checked(c, id, req, true, err, sizeof(err)), err);
}

static void put_vsock(struct api_ctx *c, const char *id,
		      const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";

	(void)id;
	reply_set(r, fc_put_vsock(c->cfg, req->body, req->body_len, err,
				  sizeof(err)), err);
}

static void put_net(struct api_ctx *c, const char *id,
		    const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";

	reply_set(r, fc_put_net(c->cfg, id, req->body, req->body_len, err,
				sizeof(err)), err);
}

static void put_mmds_config(struct api_ctx *c, const char *id,
			    const struct api_request *req,
			    struct api_response *r)
{
	char err[ERR_LEN] = "";

	(void)id;
	reply_set(r, fc_put_mmds_config(c->cfg, req->body, req->body_len, err,
					sizeof(err)), err);
}

/* PUT and PATCH /mmds: the data store, any time. */
static void set_mmds(struct api_ctx *c, const struct api_request *req,
		     struct api_response *r, bool patch)
{
	char err[ERR_LEN] = "";

	if (!req->body || !req->body_len) {
		api_response_fault(r, 400, "the request has no body");
		return;
	}
	reply_set(r, patch ? mmds_patch(c->mmds, req->body, req->body_len,
					err, sizeof(err)) :
			     mmds_put(c->mmds, req->body, req->body_len, err,
				      sizeof(err)), err);
}

static void put_mmds(struct api_ctx *c, const char *id,
		     const struct api_request *req, struct api_response *r)
{
	(void)id;
	set_mmds(c, req, r, false);
}

static void patch_mmds(struct api_ctx *c, const char *id,
		       const struct api_request *req, struct api_response *r)
{
	(void)id;
	set_mmds(c, req, r, true);
}

static void get_mmds(struct api_ctx *c, const char *id,
		     const struct api_request *req, struct api_response *r)
{
	(void)id;
	(void)req;
	reply_owned(r, mmds_get_json(c->mmds));
}

static void patch_net(struct api_ctx *c, const char *id,
		      const struct api_request *req, struct api_response *r)
{
	struct fc_net_patch p;
	char err[ERR_LEN] = "";
	int ret;

	ret = fc_parse_net_patch(c->cfg, id, req->body, req->body_len, &p,
				 err, sizeof(err));
	if (!ret)
		ret = c->act->patch_net(c->act->opaque,
					(unsigned int)config_net_index(c->cfg,
								       id),
					&p, err, sizeof(err));
	reply_set(r, ret, err);
}

static void patch_drive(struct api_ctx *c, const char *id,
			const struct api_request *req, struct api_response *r)
{
	struct fc_drive_patch p = { 0 };
	char err[ERR_LEN] = "";
	int idx, ret;

	ret = fc_parse_drive_patch(c->cfg, id, req->body, req->body_len, &p,
				   err, sizeof(err));
	if (!ret) {
		idx = fc_disk_index(c->cfg, id);
		ret = idx < 0 ? -ENOENT :
		      c->act->patch_drive(c->act->opaque, (unsigned int)idx,
					  &p, err, sizeof(err));
		if (idx < 0)
			snprintf(err, sizeof(err), "no drive %s", id);
	}
	fc_drive_patch_free(&p);
	reply_set(r, ret, err);
}

/* The logger's part of the configuration, to undo a PUT whose file
 * cannot be opened (a 400 changes nothing). */
struct logger_saved {
	char *path, *module;
	enum config_log_level level;
	bool show_level, show_origin;
};

static int logger_save(const struct vm_config *cfg, struct logger_saved *s)
{
	s->path = cfg->log_path ? strdup(cfg->log_path) : NULL;
	s->module = cfg->log_module ? strdup(cfg->log_module) : NULL;
	s->level = cfg->log_level;
	s->show_level = cfg->log_show_level;
	s->show_origin = cfg->log_show_origin;
	if ((cfg->log_path && !s->path) || (cfg->log_module && !s->module)) {
		free(s->path);
		free(s->module);
		return -ENOMEM;
	}
	return 0;
}

static void logger_restore(struct vm_config *cfg, struct logger_saved *s)
{
	free(cfg->log_path);
	free(cfg->log_module);
	cfg->log_path = s->path;
	cfg->log_module = s->module;
	cfg->log_level = s->level;
	cfg->log_show_level = s->show_level;
	cfg->log_show_origin = s->show_origin;
}

static void put_logger(struct api_ctx *c, const char *id,
		       const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";
	struct logger_saved saved;
	int ret;

	(void)id;
	if (logger_save(c->cfg, &saved)) {
		reply_set(r, -ENOMEM, "out of memory");
		return;
	}
	ret = fc_put_logger(c->cfg, req->body, req->body_len, err,
			    sizeof(err));
	if (!ret)
		ret = c->act->set_logger(c->act->opaque, err, sizeof(err));
	if (ret) {
		logger_restore(c->cfg, &saved);
	} else {
		free(saved.path);
		free(saved.module);
	}
	reply_set(r, ret, err);
}

static void put_metrics(struct api_ctx *c, const char *id,
			const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";
	char *old = c->cfg->metrics_path;
	int ret;

	(void)id;
	if (old) {
		api_response_fault(r, 400, "Reinitialization of metrics not "
				   "allowed.");
		return;
	}
	ret = fc_put_metrics(c->cfg, req->body, req->body_len, err,
			     sizeof(err));
	if (!ret) {
		ret = c->act->open_metrics(c->act->opaque, err, sizeof(err));
		if (ret) {
			free(c->cfg->metrics_path);
			c->cfg->metrics_path = NULL;
		}
	}
	reply_set(r, ret, err);
}

/*
 * The body as one object with the one string field @key: its value
 * (valid while *@o lives; the caller puts *@o), or NULL with the fault
 * set and nothing to put.
 */
static const char *body_field(const struct api_request *req,
			      struct api_response *r, const char *key,
			      struct json_object **o)
{
	const char *v;

	*o = body_object(req, r);
	if (!*o)
		return NULL;
	v = only_string(*o, key, r);
	if (!v) {
		json_object_put(*o);
		*o = NULL;
	}
	return v;
}

static void put_actions(struct api_ctx *c, const char *id,
			const struct api_request *req, struct api_response *r)
{
	enum machine_state st = state_of(c);
	char err[ERR_LEN] = "";
	struct json_object *o;
	const char *action;
	int ret;

	(void)id;
	action = body_field(req, r, "action_type", &o);
	if (!action)
		return;
	if (!strcmp(action, "InstanceStart")) {
		if (st != MACHINE_NOT_STARTED)
			ret = -EINVAL, snprintf(err, sizeof(err), "%s",
						MSG_AFTER_START);
		else
			ret = c->act->start(c->act->opaque, err, sizeof(err));
	} else if (!strcmp(action, "FlushMetrics")) {
		ret = c->act->flush_metrics(c->act->opaque, err, sizeof(err));
	} else if (!strcmp(action, "SendCtrlAltDel")) {
		if (st == MACHINE_NOT_STARTED)
			ret = -EINVAL, snprintf(err, sizeof(err), "%s",
						MSG_BEFORE_START);
		else
			ret = c->act->ctrl_alt_del(c->act->opaque, err,
						   sizeof(err));
	} else {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "unknown action_type: %.64s "
			 "(InstanceStart, FlushMetrics or SendCtrlAltDel)",
			 action);
	}
	json_object_put(o);
	reply_set(r, ret, err);
}

static void patch_vm(struct api_ctx *c, const char *id,
		     const struct api_request *req, struct api_response *r)
{
	char err[ERR_LEN] = "";
	struct json_object *o;
	const char *state;
	int ret;

	(void)id;
	state = body_field(req, r, "state", &o);
	if (!state)
		return;
	if (!strcmp(state, "Paused")) {
		ret = machine_pause(c->m, err, sizeof(err));
	} else if (!strcmp(state, "Resumed")) {
		ret = machine_resume(c->m, err, sizeof(err));
	} else {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "unknown state: %.64s (Paused or "
			 "Resumed)", state);
	}
	json_object_put(o);
	reply_set(r, ret, err);
}

/* An action's failure with no message of its own still names one. */
static void snapshot_err(int ret, const char *what, char *err, size_t len)
{
	if (ret && !err[0])
		snprintf(err, len, "%s snapshot error: %s", what,
			 strerror(ret < 0 ? -ret : ret));
}

/* PUT /snapshot/create: Firecracker takes it on a paused machine only. */
static void put_snapshot_create(struct api_ctx *c, const char *id,
				const struct api_request *req,
				struct api_response *r)
{
	struct fc_snapshot_create p;
	char err[ERR_LEN] = "";
	int ret;

	(void)id;
	if (!c->act->snapshot_create) {
		api_response_fault(r, 400, "%s", MSG_SNAP_NONE);
		return;
	}
	ret = fc_parse_snapshot_create(req->body, req->body_len, &p, err,
				       sizeof(err));
	if (!ret && state_of(c) != MACHINE_PAUSED) {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "%s", MSG_SNAP_RUNNING);
	} else if (!ret) {
		ret = c->act->snapshot_create(c->act->opaque, &p, err,
					      sizeof(err));
		snapshot_err(ret, "Create", err, sizeof(err));
	}
	fc_snapshot_create_free(&p);
	reply_set(r, ret, err);
}

/*
 * Has a boot-specific resource been configured? Firecracker's boot_path:
 * boot-source, machine-config, drives, network-interfaces, vsock and
 * mmds-config set it; logger, metrics and the MMDS data do not. Read
 * from the configuration, so the command line's --kernel, --disk,
 * --memory, ... count as well as the API's PUTs.
 */
static bool boot_configured(const struct vm_config *cfg)
{
	return cfg->kernel || cfg->nr_disks || cfg->nr_nets ||
	       cfg->vsock.set || cfg->mmds.set || cfg->memory_set;
}

/* PUT /snapshot/load: a fresh process's alternative to InstanceStart. */
static void put_snapshot_load(struct api_ctx *c, const char *id,
			      const struct api_request *req,
			      struct api_response *r)
{
	struct fc_snapshot_load p;
	char err[ERR_LEN] = "";
	int ret;

	(void)id;
	if (!c->act->snapshot_load) {
		api_response_fault(r, 400, "%s", MSG_SNAP_NONE);
		return;
	}
	ret = fc_parse_snapshot_load(req->body, req->body_len, &p, err,
				     sizeof(err));
	if (!ret && boot_configured(c->cfg)) {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "%s", MSG_SNAP_CONFIGURED);
	} else if (!ret) {
		ret = c->act->snapshot_load(c->act->opaque, &p, err,
					    sizeof(err));
		snapshot_err(ret, "Load", err, sizeof(err));
	}
	fc_snapshot_load_free(&p);
	reply_set(r, ret, err);
}

static const struct route routes[] = {
	{ "GET", "/", ANY_TIME, get_instance },
	{ "GET", "/version", ANY_TIME, get_version },
	{ "GET", "/vm/config", ANY_TIME, get_vm_config },
	{ "GET", "/machine-config", ANY_TIME, get_machine_config },
	{ "PUT", "/machine-config", PRE_BOOT, put_machine_config },
	{ "PATCH", "/machine-config", PRE_BOOT, patch_machine_config },
	{ "PUT", "/boot-source", PRE_BOOT, put_boot_source },
	{ "PUT", "/drives/", PRE_BOOT, put_drive },
	{ "PATCH", "/drives/", POST_BOOT, patch_drive },
	{ "PUT", "/logger", PRE_BOOT, put_logger },
	{ "PUT", "/metrics", PRE_BOOT, put_metrics },
	{ "PUT", "/vsock", PRE_BOOT, put_vsock },
	{ "PUT", "/network-interfaces/", PRE_BOOT, put_net },
	{ "PATCH", "/network-interfaces/", POST_BOOT, patch_net },
	{ "PUT", "/mmds/config", PRE_BOOT, put_mmds_config },
	{ "PUT", "/mmds", ANY_TIME, put_mmds },
	{ "PATCH", "/mmds", ANY_TIME, patch_mmds },
	{ "GET", "/mmds", ANY_TIME, get_mmds },
	{ "PUT", "/actions", ANY_TIME, put_actions },
	{ "PATCH", "/vm", POST_BOOT, patch_vm },
	{ "PUT", "/snapshot/create", POST_BOOT, put_snapshot_create },
	{ "PUT", "/snapshot/load", PRE_BOOT, put_snapshot_load },
};

/*
 * Does @path match @pattern? A pattern ending in '/' takes one non-empty
 * path segment after it, returned in @id.
 */
static bool path_match(const char *pattern, const char *path,
		       const char **id)
{
	size_t n = strlen(pattern);

	*id = NULL;
	if (n > 1 && pattern[n - 1] == '/') {
		if (strncmp(pattern, path, n) || !path[n] ||
		    strchr(path + n, '/'))
			return false;
		*id = path + n;
		return true;
	}
	return !strcmp(pattern, path);
}

static bool unsupported_path(const char *path)
{
	size_t i, n;

	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		n = strlen(unsupported[i]);
		if (!strncmp(path, unsupported[i], n) &&
		    (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

void api_handle(struct api_ctx *c, const struct api_request *req,
		struct api_response *r)
{
	enum machine_state st = state_of(c);
	bool path_known = false;
	const char *id;
	size_t i;

	r->status = 500;
	r->body = NULL;
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *rt = &routes[i];

		if (!path_match(rt->path, req->path, &id))
			continue;
		path_known = true;
		if (strcmp(rt->method, req->method))
			continue;
		if (!(rt->states & (1u << st))) {
			api_response_fault(r, 400, "%s", rt->states == PRE_BOOT ?
					   MSG_AFTER_START : MSG_BEFORE_START);
			return;
		}
		rt->fn(c, id, req, r);
		return;
	}
	if (unsupported_path(req->path))
		api_response_fault(r, 400, "%s %.128s: microvm does not "
				   "support this resource", req->method,
				   req->path);
	else
		api_response_fault(r, 400, "Invalid request method and/or "
				   "path: %s %.128s%s", req->method, req->path,
				   path_known ? " (method not allowed)" : "");
}
