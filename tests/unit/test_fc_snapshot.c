// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's snapshot bodies (src/api/fc_snapshot.c) and routes
 * (src/api/handlers.c): every field parsed with its default, one row per
 * refused body with its message, and PUT /snapshot/create and
 * /snapshot/load through api_handle() on a machine in each state, with
 * fake actions that record what they were given.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_snapshot.h"
#include "api/handlers.h"
#include "mmds/mmds.h"
#include "vmm/machine.h"
#include "test.h"

/* ---- the parsers ---- */

static int parse_create(const char *json, struct fc_snapshot_create *p,
			char *err, size_t errlen)
{
	return fc_parse_snapshot_create(json, json ? strlen(json) : 0, p, err,
					errlen);
}

static int parse_load(const char *json, struct fc_snapshot_load *p,
		      char *err, size_t errlen)
{
	return fc_parse_snapshot_load(json, json ? strlen(json) : 0, p, err,
				      errlen);
}

static void test_create(void)
{
	struct fc_snapshot_create p;
	char err[256] = "";

	CHECK_EQ(parse_create("{\"snapshot_type\":\"Diff\","
			      "\"snapshot_path\":\"/s/vm.state\","
			      "\"mem_file_path\":\"/s/vm.mem\"}", &p, err,
			      sizeof(err)), 0);
	CHECK_EQ(p.type, FC_SNAP_DIFF);
	CHECK(p.snapshot_path && !strcmp(p.snapshot_path, "/s/vm.state"));
	CHECK(p.mem_file_path && !strcmp(p.mem_file_path, "/s/vm.mem"));
	fc_snapshot_create_free(&p);
	CHECK(!p.snapshot_path && !p.mem_file_path);

	/* snapshot_type: Full when absent (SnapshotType's default) or null. */
	CHECK_EQ(parse_create("{\"snapshot_path\":\"a\",\"mem_file_path\":"
			      "\"b\"}", &p, err, sizeof(err)), 0);
	CHECK_EQ(p.type, FC_SNAP_FULL);
	fc_snapshot_create_free(&p);
	CHECK_EQ(parse_create("{\"snapshot_path\":\"a\",\"mem_file_path\":"
			      "\"b\",\"snapshot_type\":null}", &p, err,
			      sizeof(err)), 0);
	CHECK_EQ(p.type, FC_SNAP_FULL);
	fc_snapshot_create_free(&p);
	CHECK_EQ(parse_create("{\"snapshot_path\":\"a\",\"mem_file_path\":"
			      "\"b\",\"snapshot_type\":\"Full\"}", &p, err,
			      sizeof(err)), 0);
	CHECK_EQ(p.type, FC_SNAP_FULL);
	fc_snapshot_create_free(&p);
}

#define MEM "\"mem_backend\":{\"backend_type\":\"File\",\"backend_path\":\"/m\"}"

static void test_load(void)
{
	struct fc_snapshot_load p;
	char err[256] = "";

	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s/vm.state\","
			    "\"mem_backend\":{\"backend_path\":\"/run/uffd.sock\","
			    "\"backend_type\":\"Uffd\"},"
			    "\"track_dirty_pages\":true,\"resume_vm\":true,"
			    "\"network_overrides\":[{\"iface_id\":\"eth0\","
			    "\"host_dev_name\":\"tap7\"},{\"iface_id\":\"eth1\","
			    "\"host_dev_name\":\"tap8\"}],"
			    "\"vsock_override\":{\"uds_path\":\"/v.sock\"},"
			    "\"clock_realtime\":true,\"huge_pages\":\"None\"}",
			    &p, err, sizeof(err)), 0);
	CHECK(p.snapshot_path && !strcmp(p.snapshot_path, "/s/vm.state"));
	CHECK(p.mem_path && !strcmp(p.mem_path, "/run/uffd.sock"));
	CHECK(p.mem_uffd);
	CHECK(p.track_dirty_pages);
	CHECK(p.resume_vm);
	CHECK(p.clock_realtime);
	CHECK_EQ(p.nr_net_overrides, 2);
	CHECK(!strcmp(p.net_overrides[0].iface_id, "eth0"));
	CHECK(!strcmp(p.net_overrides[0].host_dev_name, "tap7"));
	CHECK(!strcmp(p.net_overrides[1].iface_id, "eth1"));
	CHECK(!strcmp(p.net_overrides[1].host_dev_name, "tap8"));
	CHECK(p.vsock_uds_path && !strcmp(p.vsock_uds_path, "/v.sock"));
	fc_snapshot_load_free(&p);
	CHECK(!p.snapshot_path && !p.mem_path && !p.nr_net_overrides);

	/* The defaults: a File backend, every flag false, no overrides. */
	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\"," MEM "}", &p, err,
			    sizeof(err)), 0);
	CHECK(!strcmp(p.mem_path, "/m"));
	CHECK(!p.mem_uffd && !p.track_dirty_pages && !p.resume_vm &&
	      !p.clock_realtime);
	CHECK_EQ(p.nr_net_overrides, 0);
	CHECK(p.vsock_uds_path == NULL);
	fc_snapshot_load_free(&p);

	/* The deprecated mem_file_path is a File backend (the go SDK's). */
	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\",\"mem_file_path\":"
			    "\"/f\",\"resume_vm\":true}", &p, err,
			    sizeof(err)), 0);
	CHECK(!strcmp(p.mem_path, "/f") && !p.mem_uffd && p.resume_vm);
	fc_snapshot_load_free(&p);

	/* enable_diff_snapshots: the deprecated alias, OR'd in. */
	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\"," MEM ","
			    "\"enable_diff_snapshots\":true}", &p, err,
			    sizeof(err)), 0);
	CHECK(p.track_dirty_pages);
	fc_snapshot_load_free(&p);
	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\"," MEM ","
			    "\"enable_diff_snapshots\":true,"
			    "\"track_dirty_pages\":false}", &p, err,
			    sizeof(err)), 0);
	CHECK(p.track_dirty_pages);
	fc_snapshot_load_free(&p);

	/* null: as absent; the other memory field null leaves one given. */
	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\",\"mem_file_path\":"
			    "\"/f\",\"mem_backend\":null,\"resume_vm\":null,"
			    "\"network_overrides\":null,\"vsock_override\":"
			    "null,\"huge_pages\":null}", &p, err,
			    sizeof(err)), 0);
	CHECK(!strcmp(p.mem_path, "/f") && !p.resume_vm);
	fc_snapshot_load_free(&p);

	CHECK_EQ(parse_load("{\"snapshot_path\":\"/s\"," MEM ","
			    "\"huge_pages\":\"Snapshot\","
			    "\"network_overrides\":[]}", &p, err,
			    sizeof(err)), 0);
	CHECK_EQ(p.nr_net_overrides, 0);
	fc_snapshot_load_free(&p);
}

/* Eight overrides fit, a ninth does not (CONFIG_MAX_NETS). */
static void test_load_overrides_max(void)
{
	struct fc_snapshot_load p;
	char json[1024], err[256] = "";
	size_t n;
	int i;

	for (int count = CONFIG_MAX_NETS; count <= CONFIG_MAX_NETS + 1;
	     count++) {
		n = (size_t)snprintf(json, sizeof(json),
				     "{\"snapshot_path\":\"/s\"," MEM
				     ",\"network_overrides\":[");
		for (i = 0; i < count; i++)
			n += (size_t)snprintf(json + n, sizeof(json) - n,
					      "%s{\"iface_id\":\"eth%d\","
					      "\"host_dev_name\":\"tap%d\"}",
					      i ? "," : "", i, i);
		snprintf(json + n, sizeof(json) - n, "]}");
		err[0] = '\0';
		if (count == CONFIG_MAX_NETS) {
			CHECK_EQ(parse_load(json, &p, err, sizeof(err)), 0);
			CHECK_EQ(p.nr_net_overrides, CONFIG_MAX_NETS);
			CHECK(!strcmp(p.net_overrides[7].host_dev_name,
				      "tap7"));
			fc_snapshot_load_free(&p);
		} else {
			CHECK_EQ(parse_load(json, &p, err, sizeof(err)),
				 -EINVAL);
			CHECK(strstr(err, "names 9 interfaces; there are at most 8") != NULL);
		}
	}
}

struct bad_row {
	bool load;          /* PUT /snapshot/load, else create */
	const char *json;
	const char *needle; /* in the fault message */
};

#define CR(extra) "{\"snapshot_path\":\"/s\",\"mem_file_path\":\"/m\"" \
	extra "}"
#define LD(extra) "{\"snapshot_path\":\"/s\"," MEM extra "}"
#define OV(obj) LD(",\"network_overrides\":[" obj "]")

#define DOV(obj) LD(",\"drive_overrides\":[" obj "]")

static const struct bad_row bad_rows[] = {
	{ .json = "", .needle = "snapshot/create: no JSON body" },
	/* Ours: drive_overrides. */
	{ .load = true, .json = DOV("{\"path_on_host\":\"/x\"}"),
	  .needle = "drive_overrides[0].drive_id is required" },
	{ .load = true, .json = DOV("{\"drive_id\":\"a b\",\"snapshot\":true}"),
	  .needle = "drive_overrides[0].drive_id \"a b\" must be" },
	{ .load = true, .json = DOV("{\"drive_id\":\"d\"}"),
	  .needle = "drive_overrides[0]: give path_on_host, snapshot or both" },
	{ .load = true, .json = DOV("{\"drive_id\":\"d\",\"snapshot\":true},"
				  "{\"drive_id\":\"d\",\"path_on_host\":\"/y\"}"),
	  .needle = "drive_overrides names drive d twice" },
	{ .load = true, .json = DOV("{\"drive_id\":\"d\",\"size\":1}"),
	  .needle = "unknown field \"drive_overrides[0].size\"" },
	{ .load = true, .json = LD(",\"drive_overrides\":{}"),
	  .needle = "drive_overrides must be an array, not object" },
	{ .json = "[]", .needle = "must be a JSON object" },
	{ .json = "{\"snapshot_path\":\"/s\"",
	  .needle = "not valid JSON" },
	{ .json = "{\"mem_file_path\":\"/m\"}",
	  .needle = "snapshot/create: snapshot_path is required" },
	{ .json = "{\"snapshot_path\":\"/s\"}",
	  .needle = "mem_file_path is required" },
	{ .json = CR(",\"snapshot_type\":\"full\""),
	  .needle = "snapshot_type \"full\" is not one of \"Full\", \"Diff\"" },
	{ .json = CR(",\"snapshot_type\":1"),
	  .needle = "snapshot_type must be a string, not int" },
	/* Firecracker dropped "version" (v1.6): now an unknown field. */
	{ .json = CR(",\"version\":\"1.0.0\""),
	  .needle = "snapshot/create: unknown field \"version\"" },
	{ .json = CR(",\"mem_backend\":{}"),
	  .needle = "unknown field \"mem_backend\"" },
	{ .json = "{\"snapshot_path\":\"\",\"mem_file_path\":\"/m\"}",
	  .needle = "snapshot_path must not be empty" },
	{ .json = "{\"snapshot_path\":null,\"mem_file_path\":\"/m\"}",
	  .needle = "snapshot_path must be a string, not null" },
	{ .json = "{\"snapshot_path\":\"/s\",\"mem_file_path\":\"a\\u0000\"}",
	  .needle = "mem_file_path contains a NUL" },
	{ .load = true, .json = "",
	  .needle = "snapshot/load: no JSON body" },
	{ .load = true, .json = "{" MEM "}",
	  .needle = "snapshot/load: snapshot_path is required" },
	{ .load = true, .json = "{\"snapshot_path\":\"/s\"}",
	  .needle = "missing field: either `mem_backend` or `mem_file_path` is required" },
	{ .load = true, .json = LD(",\"mem_file_path\":\"/f\""),
	  .needle = "too many fields: either `mem_backend` or `mem_file_path` exclusively is required" },
	{ .load = true, .json = LD(",\"frob\":1"),
	  .needle = "snapshot/load: unknown field \"frob\"" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":{"
		  "\"backend_type\":\"Shm\",\"backend_path\":\"/m\"}}",
	  .needle = "mem_backend.backend_type \"Shm\" is not one of \"File\", \"Uffd\"" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":{"
		  "\"backend_type\":\"uffd\",\"backend_path\":\"/m\"}}",
	  .needle = "mem_backend.backend_type \"uffd\" is not one of" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":{"
		  "\"backend_path\":\"/m\"}}",
	  .needle = "mem_backend.backend_type is required" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":{"
		  "\"backend_type\":\"File\"}}",
	  .needle = "mem_backend.backend_path is required" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":{"
		  "\"backend_type\":\"File\",\"backend_path\":\"/m\","
		  "\"size\":1}}",
	  .needle = "unknown field \"mem_backend.size\"" },
	{ .load = true,
	  .json = "{\"snapshot_path\":\"/s\",\"mem_backend\":\"/m\"}",
	  .needle = "mem_backend must be an object, not string" },
	{ .load = true, .json = LD(",\"resume_vm\":\"yes\""),
	  .needle = "resume_vm must be true or false, not string" },
	{ .load = true, .json = LD(",\"track_dirty_pages\":1"),
	  .needle = "track_dirty_pages must be true or false" },
	{ .load = true, .json = LD(",\"enable_diff_snapshots\":\"true\""),
	  .needle = "enable_diff_snapshots must be true or false" },
	{ .load = true, .json = LD(",\"clock_realtime\":0"),
	  .needle = "clock_realtime must be true or false" },
	{ .load = true, .json = LD(",\"huge_pages\":\"2M\""),
	  .needle = "huge_pages \"2M\" is not supported: microvm takes only \"Snapshot\" or \"None\"" },
	{ .load = true, .json = LD(",\"huge_pages\":\"Transparent\""),
	  .needle = "huge_pages \"Transparent\" is not supported" },
	{ .load = true, .json = LD(",\"huge_pages\":\"1G\""),
	  .needle = "huge_pages \"1G\" is not one of" },
	{ .load = true, .json = LD(",\"network_overrides\":{}"),
	  .needle = "network_overrides must be an array, not object" },
	{ .load = true, .json = OV("\"eth0\""),
	  .needle = "network_overrides[0] must be an object, not string" },
	{ .load = true, .json = OV("{\"iface_id\":\"eth0\"}"),
	  .needle = "network_overrides[0].host_dev_name is required" },
	{ .load = true, .json = OV("{\"host_dev_name\":\"tap0\"}"),
	  .needle = "network_overrides[0].iface_id is required" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth-0\",\"host_dev_name\":\"tap0\"}"),
	  .needle = "network_overrides[0].iface_id \"eth-0\" must be 1-64 letters, digits or '_'" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap/0\"}"),
	  .needle = "network_overrides[0].host_dev_name \"tap/0\" must be an interface name" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":"
		     "\"tap-name-too-long\"}"),
	  .needle = "host_dev_name \"tap-name-too-long\" must be an interface name: 1 to 15 bytes" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0\","
		     "\"guest_mac\":\"06:00:00:00:00:01\"}"),
	  .needle = "unknown field \"network_overrides[0].guest_mac\"" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0\"},"
		     "{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap1\"}"),
	  .needle = "network_overrides names interface eth0 twice" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0\"},"
		     "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap0\"}"),
	  .needle = "network_overrides gives tap tap0 to two interfaces" },
	{ .load = true,
	  .json = OV("{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0\"},"
		     "{\"iface_id\":\"eth1\",\"host_dev_name\":7}"),
	  .needle = "network_overrides[1].host_dev_name must be a string, not int" },
	{ .load = true, .json = LD(",\"vsock_override\":{}"),
	  .needle = "vsock_override.uds_path is required" },
	{ .load = true, .json = LD(",\"vsock_override\":\"/v\""),
	  .needle = "vsock_override must be an object, not string" },
	{ .load = true,
	  .json = LD(",\"vsock_override\":{\"uds_path\":\"/v\",\"cid\":3}"),
	  .needle = "unknown field \"vsock_override.cid\"" },
	{ .load = true, .json = LD(",\"vsock_override\":{\"uds_path\":\"\"}"),
	  .needle = "vsock_override.uds_path must not be empty" },
	{ .load = true,
	  .json = LD(",\"vsock_override\":{\"uds_path\":\"/0123456789012345"
		     "6789012345678901234567890123456789012345678901234567890"
		     "12345678901234567890123456789\"}"),
	  .needle = "vsock_override.uds_path must be 1 to 96 bytes" },
};

/* Every refused body: -EINVAL, its message, and nothing left to free. */
static void test_bad(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		struct fc_snapshot_create cp;
		struct fc_snapshot_load lp;
		char err[512] = "";
		int ret;

		if (r->load) {
			ret = parse_load(r->json, &lp, err, sizeof(err));
			CHECK(!lp.snapshot_path && !lp.mem_path &&
			      !lp.nr_net_overrides && !lp.vsock_uds_path);
		} else {
			ret = parse_create(r->json, &cp, err, sizeof(err));
			CHECK(!cp.snapshot_path && !cp.mem_file_path);
		}
		CHECK_EQ(ret, -EINVAL);
		if (ret != -EINVAL || !strstr(err, r->needle))
			fprintf(stderr, "row %zu (%s): %d '%s'\n", i, r->json,
				ret, err);
		CHECK(strstr(err, r->needle) != NULL);
	}
}

/* A path of FC_STRING_MAX bytes is taken, one more is not. */
static void test_long_path(void)
{
	struct fc_snapshot_create p;
	char *json = malloc(FC_STRING_MAX + 64), err[256] = "";
	size_t n;

	if (!json) {
		CHECK(json != NULL);
		return;
	}
	for (n = FC_STRING_MAX; n <= FC_STRING_MAX + 1; n++) {
		int len = snprintf(json, FC_STRING_MAX + 64,
				   "{\"mem_file_path\":\"/m\",\"snapshot_path\":\"");

		memset(json + len, 'a', n);
		strcpy(json + len + n, "\"}");
		if (n == FC_STRING_MAX) {
			CHECK_EQ(parse_create(json, &p, err, sizeof(err)), 0);
			CHECK_EQ(strlen(p.snapshot_path), FC_STRING_MAX);
			fc_snapshot_create_free(&p);
		} else {
			CHECK_EQ(parse_create(json, &p, err, sizeof(err)),
				 -EINVAL);
			CHECK(strstr(err, "snapshot_path is 4097 bytes long, more than 4096") != NULL);
		}
	}
	free(json);
}

/* ---- the routes, through api_handle() ---- */

/* What the fake actions were given (copies: the handler frees its own). */
struct record {
	int creates, loads, other;
	int fail;             /* the actions' return */
	const char *fail_msg; /* and their message */
	enum fc_snapshot_type type;
	char snapshot_path[64], mem_path[64], iface[16], tap[16], uds[64];
	bool uffd, dirty, resume, clock_realtime;
	unsigned int nr_overrides;
};

static struct record rec;

static int fake_create(void *opaque, const struct fc_snapshot_create *p,
		       char *err, size_t errlen)
{
	struct record *r = opaque;

	r->creates++;
	r->type = p->type;
	snprintf(r->snapshot_path, sizeof(r->snapshot_path), "%s",
		 p->snapshot_path);
	snprintf(r->mem_path, sizeof(r->mem_path), "%s", p->mem_file_path);
	if (r->fail && r->fail_msg)
		snprintf(err, errlen, "%s", r->fail_msg);
	return r->fail;
}

static int fake_load(void *opaque, const struct fc_snapshot_load *p,
		     char *err, size_t errlen)
{
	struct record *r = opaque;

	r->loads++;
	snprintf(r->snapshot_path, sizeof(r->snapshot_path), "%s",
		 p->snapshot_path);
	snprintf(r->mem_path, sizeof(r->mem_path), "%s", p->mem_path);
	r->uffd = p->mem_uffd;
	r->dirty = p->track_dirty_pages;
	r->resume = p->resume_vm;
	r->clock_realtime = p->clock_realtime;
	r->nr_overrides = p->nr_net_overrides;
	if (p->nr_net_overrides) {
		snprintf(r->iface, sizeof(r->iface), "%s",
			 p->net_overrides[0].iface_id);
		snprintf(r->tap, sizeof(r->tap), "%s",
			 p->net_overrides[0].host_dev_name);
	}
	snprintf(r->uds, sizeof(r->uds), "%s",
		 p->vsock_uds_path ? p->vsock_uds_path : "");
	if (r->fail && r->fail_msg)
		snprintf(err, errlen, "%s", r->fail_msg);
	return r->fail;
}

/* The other routes' actions: only counted (PUT /logger, /metrics). */
static int fake_other(void *opaque, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct record *)opaque)->other++;
	return 0;
}

static const struct api_actions fake_actions = {
	.start = fake_other,
	.flush_metrics = fake_other,
	.ctrl_alt_del = fake_other,
	.open_metrics = fake_other,
	.set_logger = fake_other,
	.snapshot_create = fake_create,
	.snapshot_load = fake_load,
	.opaque = &rec,
};

/* An older main's table: no snapshot actions. */
static const struct api_actions bare_actions = {
	.start = fake_other,
	.opaque = &rec,
};

static struct machine machine;

struct answer {
	int status;
	char fault[512]; /* fault_message, or "" */
};

static struct answer call(struct api_ctx *ctx, const char *method,
			  const char *path, const char *body)
{
	struct api_request req = {
		.method = method, .path = path, .body = body,
		.body_len = body ? strlen(body) : 0,
	};
	struct api_response resp = { 0 };
	struct answer a = { 0 };
	struct json_object *o, *m;

	api_handle(ctx, &req, &resp);
	a.status = resp.status;
	if (resp.body) {
		o = json_tokener_parse(resp.body);
		if (o && json_object_object_get_ex(o, "fault_message", &m))
			snprintf(a.fault, sizeof(a.fault), "%s",
				 json_object_get_string(m));
		json_object_put(o);
	}
	free(resp.body);
	return a;
}

static void set_state(enum machine_state st)
{
	atomic_store(&machine.state, st);
}

#define CREATE_DIFF "{\"snapshot_type\":\"Diff\",\"snapshot_path\":" \
	"\"/s/state\",\"mem_file_path\":\"/s/mem\"}"
#define LOAD_ALL "{\"snapshot_path\":\"/s/state\",\"mem_backend\":{" \
	"\"backend_type\":\"Uffd\",\"backend_path\":\"/uffd.sock\"}," \
	"\"enable_diff_snapshots\":true,\"resume_vm\":true," \
	"\"clock_realtime\":true,\"network_overrides\":[{\"iface_id\":" \
	"\"eth0\",\"host_dev_name\":\"tap9\"}],\"vsock_override\":{" \
	"\"uds_path\":\"/v2.sock\"}}"

static void ctx_init(struct api_ctx *ctx, struct vm_config *cfg,
		     const struct api_actions *act)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpus = 1;
	cfg->memory = CONFIG_FC_DEFAULT_MEMORY;
	cfg->memory_arg = strdup(CONFIG_FC_DEFAULT_MEMORY_ARG);
	memset(ctx, 0, sizeof(*ctx));
	ctx->m = &machine;
	ctx->cfg = cfg;
	ctx->act = act;
	memset(&rec, 0, sizeof(rec));
}

/* PUT /snapshot/create: post-boot, on a paused machine only. */
static void test_route_create(void)
{
	struct vm_config cfg;
	struct api_ctx ctx;
	struct answer a;

	ctx_init(&ctx, &cfg, &fake_actions);
	set_state(MACHINE_NOT_STARTED);
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "The requested operation is not supported before starting the microVM."));

	set_state(MACHINE_RUNNING);
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "Create snapshot error: Cannot save the microVM state: Operation not allowed: save/restore unavailable while running"));
	/* The body is parsed first, as Firecracker's API thread does. */
	a = call(&ctx, "PUT", "/snapshot/create", CR(",\"version\":\"1\""));
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "unknown field \"version\"") != NULL);
	CHECK_EQ(rec.creates, 0);

	set_state(MACHINE_PAUSED);
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 204);
	CHECK_EQ(rec.creates, 1);
	CHECK_EQ(rec.type, FC_SNAP_DIFF);
	CHECK(!strcmp(rec.snapshot_path, "/s/state"));
	CHECK(!strcmp(rec.mem_path, "/s/mem"));
	a = call(&ctx, "PUT", "/snapshot/create", "{\"snapshot_path\":\"/s\"}");
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "mem_file_path is required") != NULL);
	CHECK_EQ(rec.creates, 1);

	/* The action's failure: 400 with its own message, or a named one. */
	rec.fail = -EIO;
	rec.fail_msg = "Create snapshot error: Cannot write memory file: disk full";
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, rec.fail_msg));
	rec.fail_msg = NULL;
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "Create snapshot error: ") != NULL);
	CHECK_EQ(rec.creates, 3);

	a = call(&ctx, "GET", "/snapshot/create", NULL);
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "(method not allowed)") != NULL);
	a = call(&ctx, "PUT", "/snapshot", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "Invalid request method and/or path") != NULL);
	CHECK_EQ(rec.creates, 3);
	config_free(&cfg);
}

/* PUT /snapshot/load: before boot, on a fresh configuration only. */
static void test_route_load(void)
{
	struct mmds_config mc = { .limit = 0 };
	struct vm_config cfg;
	struct api_ctx ctx;
	struct answer a;

	ctx_init(&ctx, &cfg, &fake_actions);
	CHECK_EQ(mmds_create(&ctx.mmds, &mc), 0);
	set_state(MACHINE_RUNNING);
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "The requested operation is not supported after starting the microVM."));
	set_state(MACHINE_PAUSED);
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 400);
	CHECK_EQ(rec.loads, 0);

	/* Logger, metrics and MMDS data are not boot-specific. */
	set_state(MACHINE_NOT_STARTED);
	CHECK_EQ(call(&ctx, "PUT", "/logger", "{\"level\":\"Info\"}").status,
		 204);
	CHECK_EQ(call(&ctx, "PUT", "/metrics",
		      "{\"metrics_path\":\"/m.fifo\"}").status, 204);
	CHECK_EQ(call(&ctx, "PUT", "/mmds", "{\"latest\":{}}").status, 204);
	CHECK_EQ(rec.other, 2);
	a = call(&ctx, "PUT", "/snapshot/load", "{\"snapshot_path\":\"/s\"}");
	CHECK_EQ(a.status, 400);
	CHECK(strstr(a.fault, "missing field: either `mem_backend`") != NULL);
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 204);
	CHECK_EQ(rec.loads, 1);
	CHECK(!strcmp(rec.snapshot_path, "/s/state"));
	CHECK(!strcmp(rec.mem_path, "/uffd.sock"));
	CHECK(rec.uffd && rec.dirty && rec.resume && rec.clock_realtime);
	CHECK_EQ(rec.nr_overrides, 1);
	CHECK(!strcmp(rec.iface, "eth0") && !strcmp(rec.tap, "tap9"));
	CHECK(!strcmp(rec.uds, "/v2.sock"));

	rec.fail = -EINVAL;
	rec.fail_msg = "Load snapshot error: Failed to restore from snapshot: bad magic";
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, rec.fail_msg));
	CHECK_EQ(rec.loads, 2);
	rec.fail = 0;

	/* A boot-specific resource configured: load refused, unloaded. */
	CHECK_EQ(call(&ctx, "PUT", "/machine-config",
		      "{\"vcpu_count\":1,\"mem_size_mib\":128}").status, 204);
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "Load snapshot error: Loading a microVM snapshot not allowed after configuring boot-specific resources."));
	CHECK_EQ(rec.loads, 2);
	mmds_destroy(ctx.mmds);
	config_free(&cfg);
}

/* Each boot-specific part of the configuration refuses a load. */
static void test_route_load_configured(void)
{
	static const char *const which[] = {
		"kernel", "drive", "net", "vsock", "mmds-config", "memory",
	};
	size_t i;

	set_state(MACHINE_NOT_STARTED);
	for (i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		struct vm_config cfg;
		struct api_ctx ctx;
		struct answer a;

		ctx_init(&ctx, &cfg, &fake_actions);
		switch (i) {
		case 0:
			cfg.kernel = strdup("/k");
			break;
		case 1:
			cfg.nr_disks = 1;
			cfg.disks[0].path = strdup("/d");
			break;
		case 2:
			cfg.nr_nets = 1;
			cfg.nets[0].iface_id = strdup("eth0");
			cfg.nets[0].host_dev_name = strdup("tap0");
			break;
		case 3:
			cfg.vsock.set = true;
			break;
		case 4:
			cfg.mmds.set = true;
			break;
		default:
			cfg.memory_set = true;
			break;
		}
		a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
		CHECK_EQ(a.status, 400);
		if (!strstr(a.fault, "after configuring boot-specific"))
			fprintf(stderr, "%s: %d %s\n", which[i], a.status,
				a.fault);
		CHECK(strstr(a.fault, "after configuring boot-specific") != NULL);
		CHECK_EQ(rec.loads, 0);
		config_free(&cfg);
	}
}

/* A table without the snapshot actions: a 400, never a NULL call. */
static void test_route_no_actions(void)
{
	struct vm_config cfg;
	struct api_ctx ctx;
	struct answer a;

	ctx_init(&ctx, &cfg, &bare_actions);
	set_state(MACHINE_PAUSED);
	a = call(&ctx, "PUT", "/snapshot/create", CREATE_DIFF);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "snapshots are not supported by this build"));
	set_state(MACHINE_NOT_STARTED);
	a = call(&ctx, "PUT", "/snapshot/load", LOAD_ALL);
	CHECK_EQ(a.status, 400);
	CHECK(!strcmp(a.fault, "snapshots are not supported by this build"));
	config_free(&cfg);
}

/*
 * drive_overrides parsed, --restore-drive's arguments, and every override
 * put into a snapshot's configuration (or refused for what it lacks).
 */
static void test_drive_overrides(void)
{
	static const char *const cfg_json =
		"{\"drives\":[{\"drive_id\":\"root\",\"path_on_host\":\"/r\","
		"\"cache_type\":\"None\"},"
		"{\"drive_id\":\"data\",\"path_on_host\":\"/d\","
		"\"cache_type\":\"None\"}],"
		"\"network-interfaces\":[{\"iface_id\":\"eth0\","
		"\"host_dev_name\":\"tap0\"}],\"vsock\":{\"guest_cid\":3,"
		"\"uds_path\":\"/v\"}}";
	struct fc_drive_override o;
	struct fc_snapshot_load p;
	char err[512] = "", *out;

	CHECK_EQ(parse_load(DOV("{\"drive_id\":\"data\",\"path_on_host\":"
				"\"/c\"},{\"drive_id\":\"root\","
				"\"snapshot\":true}")
			    , &p, err, sizeof(err)), 0);
	CHECK_EQ(p.nr_drive_overrides, 2);
	CHECK(!strcmp(p.drive_overrides[0].drive_id, "data"));
	CHECK(!strcmp(p.drive_overrides[0].path_on_host, "/c"));
	CHECK(!p.drive_overrides[0].snapshot);
	CHECK(!p.drive_overrides[1].path_on_host);
	CHECK(p.drive_overrides[1].snapshot);
	p.net_overrides[0].iface_id = strdup("eth0");
	p.net_overrides[0].host_dev_name = strdup("tap9");
	p.nr_net_overrides = 1;
	p.vsock_uds_path = strdup("/v2");
	out = fc_snapshot_config_override(cfg_json, strlen(cfg_json), &p, err,
					  sizeof(err));
	CHECK(out != NULL);
	if (out) {
		CHECK(strstr(out, "\"path_on_host\":\"/c\",\"cache_type\":\"None\""));
		/* A throwaway overlay is page-cached: O_DIRECT is lifted. */
		CHECK(strstr(out, "\"path_on_host\":\"/r\",\"cache_type\":\"Writeback\",\"snapshot\":true"));
		CHECK(strstr(out, "\"host_dev_name\":\"tap9\""));
		CHECK(strstr(out, "\"uds_path\":\"/v2\""));
		free(out);
	}
	free(p.drive_overrides[0].drive_id);
	p.drive_overrides[0].drive_id = strdup("nope");
	CHECK(!fc_snapshot_config_override(cfg_json, strlen(cfg_json), &p,
					   err, sizeof(err)));
	CHECK(strstr(err, "drive_overrides: the snapshot has no drive \"nope\""));
	fc_snapshot_load_free(&p);

	CHECK_EQ(fc_parse_drive_override_arg("data=/x/y.img", &o, err,
					     sizeof(err)), 0);
	CHECK(!strcmp(o.drive_id, "data") && !strcmp(o.path_on_host, "/x/y.img"));
	CHECK(!o.snapshot);
	fc_drive_override_free(&o);
	CHECK_EQ(fc_parse_drive_override_arg("data=/x,snapshot=on", &o, err,
					     sizeof(err)), 0);
	CHECK(!strcmp(o.path_on_host, "/x") && o.snapshot);
	fc_drive_override_free(&o);
	CHECK_EQ(fc_parse_drive_override_arg("root,snapshot=on", &o, err,
					     sizeof(err)), 0);
	CHECK(!strcmp(o.drive_id, "root") && !o.path_on_host && o.snapshot);
	fc_drive_override_free(&o);
	CHECK_EQ(fc_parse_drive_override_arg("root", &o, err, sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, "--restore-drive root: expected ID=PATH"));
	CHECK_EQ(fc_parse_drive_override_arg("root,snapshot=off", &o, err,
					     sizeof(err)), -EINVAL);
	CHECK_EQ(fc_parse_drive_override_arg("a-b=/x", &o, err, sizeof(err)),
		 -EINVAL);
	CHECK_EQ(fc_parse_drive_override_arg("root=", &o, err, sizeof(err)),
		 -EINVAL);
}

int main(void)
{
	test_create();
	test_load();
	test_load_overrides_max();
	test_bad();
	test_long_path();
	test_drive_overrides();
	test_route_create();
	test_route_load();
	test_route_load_configured();
	test_route_no_actions();
	return test_done();
}
