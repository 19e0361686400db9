// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the API's routes (src/api/handlers.c) over
 * Firecracker's objects (src/api/fc_config*.c): what a client's request
 * does once the HTTP parser took it. Input layout: byte 0 the machine's
 * state (0-3), byte 1 which actions fail, byte 2 the method, then the
 * path up to a newline, then the body. Each input runs a short session:
 * the request against a configuration that a valid boot-source, machine
 * config, drive and network interface made, then the same request again.
 *
 * Promises checked (abort() when broken):
 * - the status is 200 (with a JSON object body), 204 (no body) or 400
 *   (a body {"fault_message": string} and nothing else);
 * - a 400 changes nothing: the configuration as GET /vm/config shows it
 *   is the same before and after, and so is the state;
 * - requests that change the configuration answer 204 only in the
 *   states their route allows (before boot), and never change the state
 *   except InstanceStart and PATCH /vm, which follow the state machine.
 * Machine actions are fakes: nothing boots, pauses or opens a file.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "mmds/mmds.h"
#include "vmm/config.h"
#include "vmm/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const methods[] = { "GET", "PUT", "PATCH", "POST",
				       "DELETE", "HEAD" };

static struct machine fm;
static struct vm_config fcfg;
static struct mmds *fmmds;
static unsigned int fail_mask;

/* The lifecycle, as machine_lifecycle.c checks it, without a VM. */
int machine_pause(struct machine *m, char *err, size_t errlen)
{
	if (atomic_load(&m->state) != MACHINE_RUNNING) {
		snprintf(err, errlen, "not running");
		return -EINVAL;
	}
	atomic_store(&m->state, MACHINE_PAUSED);
	return 0;
}

int machine_resume(struct machine *m, char *err, size_t errlen)
{
	if (atomic_load(&m->state) != MACHINE_PAUSED) {
		snprintf(err, errlen, "not paused");
		return -EINVAL;
	}
	atomic_store(&m->state, MACHINE_RUNNING);
	return 0;
}

const char *machine_state_name(enum machine_state s)
{
	static const char *const n[] = { "Not started", "Running", "Paused",
					 "Stopped" };

	return (unsigned int)s < 4 ? n[s] : "?";
}

static int fake(unsigned int bit, char *err, size_t errlen)
{
	if (fail_mask & bit) {
		snprintf(err, errlen, "fake failure %u", bit);
		return -EIO;
	}
	return 0;
}

static int act_start(void *o, char *err, size_t errlen)
{
	(void)o;
	if (fake(1, err, errlen))
		return -EIO;
	atomic_store(&fm.state, MACHINE_RUNNING);
	return 0;
}

static int act_flush(void *o, char *err, size_t errlen)
{
	(void)o;
	return fake(2, err, errlen);
}

static int act_cad(void *o, char *err, size_t errlen)
{
	(void)o;
	return fake(4, err, errlen);
}

static int act_patch(void *o, unsigned int i, const struct fc_drive_patch *p,
		     char *err, size_t errlen)
{
	(void)o;
	/* A patch of only drive_id is Firecracker's no-op; one of no
	 * drive must not get here. */
	(void)p;
	if (i >= fcfg.nr_disks)
		abort();
	return fake(8, err, errlen);
}

static int act_patch_net(void *o, unsigned int i,
			 const struct fc_net_patch *p, char *err,
			 size_t errlen)
{
	(void)o;
	(void)p;
	if (i >= fcfg.nr_nets)
		abort(); /* one of no interface must not get here */
	return fake(64, err, errlen);
}

static int act_metrics(void *o, char *err, size_t errlen)
{
	(void)o;
	return fake(16, err, errlen);
}

static int act_logger(void *o, char *err, size_t errlen)
{
	(void)o;
	return fake(32, err, errlen);
}

static const struct api_actions acts = {
	.start = act_start, .flush_metrics = act_flush,
	.ctrl_alt_del = act_cad, .patch_drive = act_patch,
	.patch_net = act_patch_net,
	.open_metrics = act_metrics, .set_logger = act_logger,
};

static void setup(enum machine_state st)
{
	static const char boot[] = "{\"kernel_image_path\": \"/k\", "
				   "\"boot_args\": \"console=ttyS0\"}";
	static const char mc[] = "{\"vcpu_count\": 2, \"mem_size_mib\": 256}";
	static const char drv[] = "{\"drive_id\": \"rootfs\", "
				  "\"path_on_host\": \"/r\", "
				  "\"is_root_device\": true, "
				  "\"is_read_only\": false}";
	static const char net[] = "{\"iface_id\": \"eth0\", "
				  "\"host_dev_name\": \"tap0\"}";
	char err[256];

	config_free(&fcfg);
	memset(&fcfg, 0, sizeof(fcfg));
	memset(&fm, 0, sizeof(fm));
	fm.cfg = &fcfg;
	if (fc_put_boot_source(&fcfg, boot, sizeof(boot) - 1, err,
			       sizeof(err)) ||
	    fc_put_machine_config(&fcfg, mc, sizeof(mc) - 1, err,
				  sizeof(err)) ||
	    fc_put_drive(&fcfg, "rootfs", drv, sizeof(drv) - 1, err,
			 sizeof(err)) ||
	    fc_put_net(&fcfg, "eth0", net, sizeof(net) - 1, err, sizeof(err)))
		abort();
	atomic_store(&fm.state, st);
}

static void check_answer(const struct api_response *r)
{
	struct json_object *o = NULL, *f;

	if (r->status == 204) {
		if (r->body)
			abort();
		return;
	}
	if (r->status != 200 && r->status != 400)
		abort();
	if (!r->body)
		abort();
	o = json_tokener_parse(r->body);
	if (!o || !json_object_is_type(o, json_type_object))
		abort();
	if (r->status == 400 &&
	    (json_object_object_length(o) != 1 ||
	     !json_object_object_get_ex(o, "fault_message", &f) ||
	     !json_object_is_type(f, json_type_string)))
		abort();
	json_object_put(o);
}

static void one(struct api_ctx *c, const struct api_request *req)
{
	struct api_response r = { 0 };
	int before = atomic_load(&fm.state);
	char *cfg_before = fc_vm_config_json(&fcfg), *cfg_after;
	char *mmds_before = mmds_get_json(fmmds), *mmds_after;
	bool is_change = strcmp(req->method, "GET") != 0;

	api_handle(c, req, &r);
	check_answer(&r);
	cfg_after = fc_vm_config_json(&fcfg);
	mmds_after = mmds_get_json(fmmds);
	if (!cfg_before || !cfg_after || !mmds_before || !mmds_after)
		abort();
	/* A 400 or a read leaves the metadata store as it was. */
	if ((r.status == 400 || !is_change) &&
	    strcmp(mmds_before, mmds_after))
		abort();
	free(mmds_before);
	free(mmds_after);
	if (r.status == 400 &&
	    (strcmp(cfg_before, cfg_after) || atomic_load(&fm.state) != before))
		abort();
	if (!is_change && strcmp(cfg_before, cfg_after))
		abort(); /* a read changed the configuration */
	/* After boot the configuration is frozen but for PATCH /drives and
	 * /network-interfaces (whose fakes apply nothing). */
	if (before != MACHINE_NOT_STARTED && strcmp(cfg_before, cfg_after))
		abort();
	free(cfg_before);
	free(cfg_after);
	free(r.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_ctx c = { .m = &fm, .cfg = &fcfg, .act = &acts };
	struct mmds_config mc = { .limit = 512 };
	struct api_request req;
	const uint8_t *nl;
	char *path, *body;
	size_t plen;

	if (size < 3)
		return 0;
	setup((enum machine_state)(data[0] % 4));
	mmds_destroy(fmmds);
	if (mmds_create(&fmmds, &mc) ||
	    mmds_put(fmmds, "{\"latest\":{\"a\":\"b\"}}", 20, NULL, 0))
		abort();
	c.mmds = fmmds;
	fail_mask = data[1];
	req.method = methods[data[2] % (sizeof(methods) / sizeof(methods[0]))];
	data += 3;
	size -= 3;
	nl = memchr(data, '\n', size);
	plen = nl ? (size_t)(nl - data) : size;
	path = strndup((const char *)data, plen);
	if (!path || strlen(path) != plen) { /* a NUL in the path */
		free(path);
		return 0;
	}
	data += nl ? plen + 1 : plen;
	size -= nl ? plen + 1 : plen;
	body = malloc(size + 1);
	if (!body) {
		free(path);
		return 0;
	}
	memcpy(body, data, size);
	body[size] = '\0';
	req.path = path;
	req.body = size ? body : NULL;
	req.body_len = size;
	one(&c, &req);
	one(&c, &req);
	free(path);
	free(body);
	return 0;
}
