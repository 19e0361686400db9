// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's configuration objects (src/api/fc_config*.c): each object
 * accepted and mapped, one row per rejected body (unknown field, wrong
 * type, negative, too big, id mismatch, duplicate root, ...) with the
 * config left unchanged, the config file, GET /vm/config's round trip and
 * fc_finalize_config()'s root and command-line rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/fc_config.h"
#include "test.h"

static void cfg_init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpus = 1;
	cfg->memory = CONFIG_FC_DEFAULT_MEMORY;
	cfg->memory_arg = strdup(CONFIG_FC_DEFAULT_MEMORY_ARG);
}

enum op { BOOT, MACHINE, MACHINE_PATCH, DRIVE, LOGGER, METRICS, VSOCK,
	  NET };

static int apply(struct vm_config *cfg, enum op op, const char *id,
		 const char *json, char *err, size_t errlen)
{
	size_t len = json ? strlen(json) : 0;

	switch (op) {
	case BOOT:
		return fc_put_boot_source(cfg, json, len, err, errlen);
	case MACHINE:
		return fc_put_machine_config(cfg, json, len, err, errlen);
	case MACHINE_PATCH:
		return fc_patch_machine_config(cfg, json, len, err, errlen);
	case DRIVE:
		return fc_put_drive(cfg, id, json, len, err, errlen);
	case LOGGER:
		return fc_put_logger(cfg, json, len, err, errlen);
	case METRICS:
		return fc_put_metrics(cfg, json, len, err, errlen);
	case VSOCK:
		return fc_put_vsock(cfg, json, len, err, errlen);
	case NET:
		return fc_put_net(cfg, id, json, len, err, errlen);
	}
	return -1;
}

#define ROOT_OK "{\"drive_id\":\"rootfs\",\"path_on_host\":\"/r.ext4\"," \
	"\"is_root_device\":true,\"is_read_only\":false}"

static void test_boot_source(void)
{
	struct vm_config cfg;
	char err[256] = "";

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, BOOT, NULL,
		       "{\"kernel_image_path\":\"/k\",\"boot_args\":\"console=ttyS0 pci=off\","
		       "\"initrd_path\":\"/i\"}", err, sizeof(err)), 0);
	CHECK(cfg.kernel && !strcmp(cfg.kernel, "/k"));
	CHECK(cfg.initrd && !strcmp(cfg.initrd, "/i"));
	CHECK(cfg.cmdline && !strcmp(cfg.cmdline, "console=ttyS0 pci=off"));
	/* A PUT replaces the whole boot source: no boot_args, no initrd. */
	CHECK_EQ(apply(&cfg, BOOT, NULL, "{\"kernel_image_path\":\"/k2\"}",
		       err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.kernel, "/k2"));
	CHECK(!cfg.initrd && !cfg.cmdline);
	config_free(&cfg);
}

static void test_machine(void)
{
	struct vm_config cfg;
	char err[256] = "", *json;

	cfg_init(&cfg);
	json = fc_machine_config_json(&cfg);
	CHECK(json && !strcmp(json, "{\"vcpu_count\":1,\"mem_size_mib\":128,"
			      "\"smt\":false,\"track_dirty_pages\":false,"
			      "\"huge_pages\":\"None\"}"));
	free(json);
	CHECK_EQ(apply(&cfg, MACHINE, NULL,
		       "{\"vcpu_count\":4,\"mem_size_mib\":1024,\"smt\":false,"
		       "\"track_dirty_pages\":true,\"cpu_template\":\"None\","
		       "\"huge_pages\":\"None\"}", err, sizeof(err)), 0);
	CHECK_EQ(cfg.cpus, 4);
	CHECK(cfg.memory == 1024ULL << 20);
	CHECK(cfg.track_dirty_pages && cfg.memory_set);
	CHECK(!strcmp(cfg.memory_arg, "1024M"));
	/* PATCH changes only what it names. */
	CHECK_EQ(apply(&cfg, MACHINE_PATCH, NULL, "{\"vcpu_count\":2}", err,
		       sizeof(err)), 0);
	CHECK_EQ(cfg.cpus, 2);
	CHECK(cfg.memory == 1024ULL << 20 && cfg.track_dirty_pages);
	/* PUT resets what it does not name. */
	CHECK_EQ(apply(&cfg, MACHINE, NULL,
		       "{\"vcpu_count\":1,\"mem_size_mib\":128}", err,
		       sizeof(err)), 0);
	CHECK(!cfg.track_dirty_pages);
	json = fc_machine_config_json(&cfg);
	CHECK(json && strstr(json, "\"mem_size_mib\":128"));
	free(json);
	config_free(&cfg);
}

#if !defined(__aarch64__)
/* smt as Firecracker's MachineConfig::update(): 1 or an even vcpu_count,
 * checked against what a PATCH keeps too; PUT without it turns it off. */
static void test_machine_smt(void)
{
	struct vm_config cfg;
	char err[256] = "", *json;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, MACHINE, NULL,
		       "{\"vcpu_count\":2,\"mem_size_mib\":128,\"smt\":true}",
		       err, sizeof(err)), 0);
	CHECK(cfg.smt && cfg.cpus == 2);
	json = fc_machine_config_json(&cfg);
	CHECK(json && strstr(json, "\"smt\":true"));
	free(json);
	json = fc_vm_config_json(&cfg);
	CHECK(json && strstr(json, "\"smt\":true"));
	free(json);
	/* A PATCH keeps smt: an odd count is refused, nothing changes. */
	CHECK_EQ(apply(&cfg, MACHINE_PATCH, NULL, "{\"vcpu_count\":5}", err,
		       sizeof(err)), -EINVAL);
	CHECK(strstr(err, "vcpu_count 5 with smt true") != NULL);
	CHECK(cfg.smt && cfg.cpus == 2);
	CHECK_EQ(apply(&cfg, MACHINE_PATCH, NULL, "{\"vcpu_count\":8}", err,
		       sizeof(err)), 0);
	CHECK(cfg.smt && cfg.cpus == 8);
	CHECK_EQ(apply(&cfg, MACHINE_PATCH, NULL,
		       "{\"vcpu_count\":5,\"smt\":false}", err, sizeof(err)),
		 0);
	CHECK(!cfg.smt && cfg.cpus == 5);
	/* PATCH turning smt on checks the count it keeps. */
	CHECK_EQ(apply(&cfg, MACHINE_PATCH, NULL, "{\"smt\":true}", err,
		       sizeof(err)), -EINVAL);
	CHECK(!cfg.smt);
	/* One vCPU with smt: Firecracker takes it. */
	CHECK_EQ(apply(&cfg, MACHINE, NULL,
		       "{\"vcpu_count\":1,\"mem_size_mib\":128,\"smt\":true}",
		       err, sizeof(err)), 0);
	CHECK(cfg.smt && cfg.cpus == 1);
	CHECK_EQ(apply(&cfg, MACHINE, NULL,
		       "{\"vcpu_count\":2,\"mem_size_mib\":128}", err,
		       sizeof(err)), 0);
	CHECK(!cfg.smt);
	config_free(&cfg);
}
#endif

static void test_drive(void)
{
	struct vm_config cfg;
	struct disk_config *d;
	char err[256] = "";

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, DRIVE, "rootfs", ROOT_OK, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nr_disks, 1);
	d = &cfg.disks[0];
	CHECK(d->is_root && !d->readonly && !strcmp(d->path, "/r.ext4"));
	CHECK(!strcmp(d->drive_id, "rootfs"));
	/* Firecracker's defaults: Unsafe (no flush), virtio-mmio, Sync. */
	CHECK_EQ(d->cache, CONFIG_CACHE_UNSAFE);
	CHECK_EQ(d->transport, DISK_TRANSPORT_MMIO);
	CHECK_EQ(d->engine, CONFIG_ENGINE_URING);
	CHECK(!d->io_async && !rl_config_active(&d->rl));
	CHECK_EQ(apply(&cfg, DRIVE, "data_1",
		       "{\"drive_id\":\"data_1\",\"path_on_host\":\"/d\","
		       "\"is_root_device\":false,\"is_read_only\":true,"
		       "\"cache_type\":\"Writeback\",\"io_engine\":\"Async\","
		       "\"rate_limiter\":{\"bandwidth\":{\"size\":1048576,"
		       "\"refill_time\":100,\"one_time_burst\":4096},"
		       "\"ops\":{\"size\":500,\"refill_time\":1000}},"
		       "\"transport\":\"pci\",\"queues\":2,\"queue_size\":256,"
		       "\"poll_us\":0,\"serial\":\"S1\"}", err, sizeof(err)), 0);
	CHECK_EQ(cfg.nr_disks, 2);
	d = &cfg.disks[1];
	CHECK(d->readonly && d->io_async && !d->is_root);
	CHECK_EQ(d->cache, CONFIG_CACHE_WRITEBACK);
	CHECK_EQ(d->transport, DISK_TRANSPORT_PCI);
	CHECK(d->queues == 2 && d->queue_size == 256);
	CHECK(d->poll_set && d->poll_us == 0);
	CHECK(d->rl.bandwidth.size == 1048576 &&
	      d->rl.bandwidth.refill_time_ms == 100 &&
	      d->rl.bandwidth.one_time_burst == 4096);
	CHECK(d->rl.ops.size == 500 && d->rl.ops.refill_time_ms == 1000);
	CHECK(!strcmp(d->serial, "S1"));
	/* The same drive_id again replaces it, in place. */
	CHECK_EQ(apply(&cfg, DRIVE, "data_1",
		       "{\"drive_id\":\"data_1\",\"path_on_host\":\"/e\","
		       "\"is_root_device\":false}", err, sizeof(err)), 0);
	CHECK_EQ(cfg.nr_disks, 2);
	CHECK(!strcmp(cfg.disks[1].path, "/e") && !cfg.disks[1].readonly);
	CHECK(!rl_config_active(&cfg.disks[1].rl) && !cfg.disks[1].serial);
	/* The root drive may be replaced by itself, root again. */
	CHECK_EQ(apply(&cfg, DRIVE, "rootfs", ROOT_OK, err, sizeof(err)), 0);
	CHECK_EQ(fc_disk_index(&cfg, "rootfs"), 0);
	CHECK_EQ(fc_disk_index(&cfg, "data_1"), 1);
	CHECK_EQ(fc_disk_index(&cfg, "nope"), -1);
	config_free(&cfg);
	/* --enable-pci: the default transport is pci. */
	cfg_init(&cfg);
	cfg.enable_pci = true;
	CHECK_EQ(apply(&cfg, DRIVE, "rootfs", ROOT_OK, err, sizeof(err)), 0);
	CHECK_EQ(cfg.disks[0].transport, DISK_TRANSPORT_PCI);
	config_free(&cfg);
}

static void test_drive_limits(void)
{
	struct vm_config cfg;
	char err[256] = "", id[16], json[256];
	unsigned int i;

	cfg_init(&cfg);
	for (i = 0; i < CONFIG_MAX_DISKS; i++) {
		snprintf(id, sizeof(id), "d%u", i);
		snprintf(json, sizeof(json),
			 "{\"drive_id\":\"%s\",\"path_on_host\":\"/x\","
			 "\"is_root_device\":%s}", id, i == 3 ? "true" : "false");
		CHECK_EQ(apply(&cfg, DRIVE, id, json, err, sizeof(err)), 0);
	}
	CHECK_EQ(apply(&cfg, DRIVE, "one_more",
		       "{\"drive_id\":\"one_more\",\"path_on_host\":\"/x\","
		       "\"is_root_device\":false}", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "at most 16 drives") != NULL);
	/* A second root, on a new id or an existing one, is refused. */
	CHECK_EQ(apply(&cfg, DRIVE, "d5",
		       "{\"drive_id\":\"d5\",\"path_on_host\":\"/x\","
		       "\"is_root_device\":true}", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "drive \"d3\" is the root device already") != NULL);
	CHECK_EQ(cfg.nr_disks, CONFIG_MAX_DISKS);
	config_free(&cfg);
}

struct bad_row {
	enum op op;
	const char *id;
	const char *json;
	const char *needle;
};

#define DRV(extra) "{\"drive_id\":\"d\",\"path_on_host\":\"/x\"," \
	"\"is_root_device\":false" extra "}"

static const struct bad_row bad_rows[] = {
	{ BOOT, NULL, "", "no JSON body" },
	{ BOOT, NULL, "{\"kernel_image_path\":\"/k\"", "unexpected end of data" },
	{ BOOT, NULL, "{\"kernel_image_path\":\"/k\"} x", "not valid JSON" },
	{ BOOT, NULL, "[1]", "must be a JSON object" },
	{ BOOT, NULL, "null", "null, not an object" },
	{ BOOT, NULL, "{}", "kernel_image_path is required" },
	{ BOOT, NULL, "{\"kernel_image_path\":7}",
	  "boot-source: kernel_image_path must be a string, not int" },
	{ BOOT, NULL, "{\"kernel_image_path\":\"\"}", "must not be empty" },
	{ BOOT, NULL, "{\"kernel_image_path\":\"a\\u0000b\"}", "NUL" },
	{ BOOT, NULL, "{\"kernel_image_path\":\"/k\",\"bootargs\":\"x\"}",
	  "unknown field \"bootargs\"" },
	{ MACHINE, NULL, "{\"vcpu_count\":1}", "mem_size_mib is required" },
	{ MACHINE, NULL, "{\"mem_size_mib\":128}", "vcpu_count is required" },
	{ MACHINE, NULL, "{\"vcpu_count\":0,\"mem_size_mib\":128}",
	  "vcpu_count is 0, must be 1 to 254" },
	{ MACHINE, NULL, "{\"vcpu_count\":-1,\"mem_size_mib\":128}",
	  "vcpu_count is -1" },
	{ MACHINE, NULL, "{\"vcpu_count\":255,\"mem_size_mib\":128}",
	  "vcpu_count is 255" },
	{ MACHINE, NULL, "{\"vcpu_count\":1.5,\"mem_size_mib\":128}",
	  "vcpu_count must be an integer, not double" },
	{ MACHINE, NULL, "{\"vcpu_count\":\"2\",\"mem_size_mib\":128}",
	  "vcpu_count must be an integer, not string" },
	{ MACHINE, NULL, "{\"vcpu_count\":1,\"mem_size_mib\":8}",
	  "mem_size_mib is 8, must be 16 to" },
	{ MACHINE, NULL,
	  "{\"vcpu_count\":1,\"mem_size_mib\":20000000000002000000000000}",
	  "mem_size_mib is about" },
#if defined(__aarch64__)
	{ MACHINE, NULL, "{\"vcpu_count\":2,\"mem_size_mib\":128,\"smt\":true}",
	  "smt true: Enabling simultaneous multithreading is not supported on aarch64." },
#else
	{ MACHINE, NULL, "{\"vcpu_count\":3,\"mem_size_mib\":128,\"smt\":true}",
	  "vcpu_count 3 with smt true: The number of vCPUs must be greater than 0, less than 255 and must be 1 or an even number if SMT is enabled." },
	{ MACHINE, NULL, "{\"vcpu_count\":253,\"mem_size_mib\":128,\"smt\":true}",
	  "vcpu_count 253 with smt true" },
#endif
	{ MACHINE, NULL, "{\"vcpu_count\":1,\"mem_size_mib\":128,\"smt\":1}",
	  "smt must be true or false, not int" },
	{ MACHINE, NULL,
	  "{\"vcpu_count\":1,\"mem_size_mib\":128,\"cpu_template\":\"T2\"}",
	  "cpu_template \"T2\" is not supported" },
	{ MACHINE, NULL,
	  "{\"vcpu_count\":1,\"mem_size_mib\":128,\"huge_pages\":\"2M\"}",
	  "huge_pages \"2M\" is not supported" },
	{ MACHINE, NULL, "{\"vcpu_count\":1,\"mem_size_mib\":128,\"x\":1}",
	  "unknown field \"x\"" },
	{ MACHINE_PATCH, NULL, "{\"vcpu_count\":300}", "vcpu_count is 300" },
	{ DRIVE, "d", DRV(",\"cache_type\":\"none\""),
	  "cache_type \"none\" is not one of" },
	{ DRIVE, "d", "{\"drive_id\":\"e\",\"path_on_host\":\"/x\","
	  "\"is_root_device\":false}", "differs from the path's \"d\"" },
	{ DRIVE, "d", "{\"path_on_host\":\"/x\",\"is_root_device\":false}",
	  "drive_id is required" },
	{ DRIVE, "d", "{\"drive_id\":\"d\",\"path_on_host\":\"/x\"}",
	  "is_root_device is required" },
	{ DRIVE, "d", "{\"drive_id\":\"d\",\"is_root_device\":false}",
	  "path_on_host is required" },
	{ DRIVE, "d-1", "{\"drive_id\":\"d-1\",\"path_on_host\":\"/x\","
	  "\"is_root_device\":false}", "drive id must be 1-64 letters" },
	{ DRIVE, "d", DRV(",\"is_read_only\":\"yes\""),
	  "is_read_only must be true or false" },
	{ DRIVE, "d", DRV(",\"io_engine\":\"Fast\""), "io_engine \"Fast\"" },
	{ DRIVE, "d", DRV(",\"partuuid\":\"0eaa91a0-01 init=/bin/sh\""),
	  "partuuid \"0eaa91a0-01 init=/bin/sh\" must be" },
	{ DRIVE, "d", DRV(",\"socket\":\"/s\""), "vhost-user-block" },
	{ DRIVE, "d", DRV(",\"queues\":0"), "queues is 0, must be 1 to 64" },
	{ DRIVE, "d", DRV(",\"queues\":65"), "queues is 65" },
	{ DRIVE, "d", DRV(",\"queue_size\":100"), "not a power of 2" },
	{ DRIVE, "d", DRV(",\"queue_size\":2048"), "queue_size is 2048" },
	{ DRIVE, "d", DRV(",\"poll_us\":1001"), "poll_us is 1001" },
	{ DRIVE, "d", DRV(",\"transport\":\"usb\""), "transport \"usb\"" },
	{ DRIVE, "d", DRV(",\"engine\":\"spdk\""), "engine \"spdk\"" },
	{ DRIVE, "d", DRV(",\"serial\":\"123456789012345678901\""),
	  "longer than 20" },
	{ DRIVE, "d", DRV(",\"snapshot\":true,\"is_read_only\":true"),
	  "snapshot and is_read_only" },
	{ DRIVE, "d", DRV(",\"engine\":\"vhost\",\"snapshot\":true"),
	  "snapshot needs engine io_uring" },
	{ DRIVE, "d", DRV(",\"engine\":\"vhost\",\"rate_limiter\":{\"ops\":"
			  "{\"size\":10,\"refill_time\":10}}"),
	  "rate_limiter needs engine io_uring" },
	{ DRIVE, "d", DRV(",\"rate_limiter\":{\"ops\":{\"size\":10}}"),
	  "rate_limiter.ops.refill_time is required" },
	{ DRIVE, "d", DRV(",\"rate_limiter\":{\"ops\":{\"size\":-1,"
			  "\"refill_time\":10}}"),
	  "rate_limiter.ops.size is -1" },
	{ DRIVE, "d", DRV(",\"rate_limiter\":{\"iops\":{}}"),
	  "unknown field \"rate_limiter.iops\"" },
	{ DRIVE, "d", DRV(",\"rate_limiter\":{\"ops\":{\"size\":1,"
			  "\"refill_time\":1,\"burst\":1}}"),
	  "unknown field \"rate_limiter.ops.burst\"" },
	{ DRIVE, "d", DRV(",\"rate_limiter\":7"),
	  "rate_limiter must be an object" },
	{ DRIVE, "d", DRV(",\"frob\":1"), "drive \"d\": unknown field \"frob\"" },
	{ LOGGER, NULL, "{\"level\":\"Loud\"}", "level \"Loud\" is not one of" },
	{ LOGGER, NULL, "{\"show_level\":\"true\"}",
	  "show_level must be true or false" },
	{ LOGGER, NULL, "{\"log_path\":\"/l\",\"color\":true}",
	  "unknown field \"color\"" },
	{ METRICS, NULL, "{}", "metrics_path is required" },
	{ METRICS, NULL, "{\"metrics_path\":\"/m\",\"properties\":{}}",
	  "unknown field \"properties\"" },
};

/* Every rejected body leaves the whole configuration as it was. */
static void test_bad(void)
{
	struct vm_config cfg;
	char *before, *after;
	size_t i;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, DRIVE, "rootfs", ROOT_OK, NULL, 0), 0);
	CHECK_EQ(apply(&cfg, BOOT, NULL, "{\"kernel_image_path\":\"/k\"}",
		       NULL, 0), 0);
	before = fc_vm_config_json(&cfg);
	for (i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		char err[256] = "";
		int ret = apply(&cfg, r->op, r->id, r->json, err, sizeof(err));

		CHECK_EQ(ret, -EINVAL);
		if (ret != -EINVAL || !strstr(err, r->needle))
			fprintf(stderr, "row %zu (%s): %d '%s'\n", i, r->json,
				ret, err);
		CHECK(strstr(err, r->needle) != NULL);
		after = fc_vm_config_json(&cfg);
		CHECK(before && after && !strcmp(before, after));
		free(after);
	}
	free(before);
	config_free(&cfg);
}

static void test_logger_metrics(void)
{
	struct vm_config cfg;
	char err[256] = "";

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, LOGGER, NULL,
		       "{\"log_path\":\"/tmp/fc.log\",\"level\":\"debug\","
		       "\"show_level\":true,\"show_log_origin\":true,"
		       "\"module\":\"api_server\"}", err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.log_path, "/tmp/fc.log"));
	CHECK_EQ(cfg.log_level, CONFIG_LOG_DEBUG);
	CHECK(cfg.log_show_level && cfg.log_show_origin);
	CHECK(!strcmp(cfg.log_module, "api_server"));
	/* Only the fields given change. */
	CHECK_EQ(apply(&cfg, LOGGER, NULL, "{\"level\":\"Off\"}", err,
		       sizeof(err)), 0);
	CHECK_EQ(cfg.log_level, CONFIG_LOG_OFF);
	CHECK(!strcmp(cfg.log_path, "/tmp/fc.log") && cfg.log_show_level);
	CHECK_EQ(apply(&cfg, LOGGER, NULL, "{\"level\":\"WARN\"}", err,
		       sizeof(err)), 0);
	CHECK_EQ(cfg.log_level, CONFIG_LOG_WARNING);
	CHECK_EQ(apply(&cfg, METRICS, NULL,
		       "{\"metrics_path\":\"/tmp/m.fifo\",\"emit_id\":true}",
		       err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.metrics_path, "/tmp/m.fifo") &&
	      cfg.metrics_emit_id);
	config_free(&cfg);
}

/* PUT /vsock (Firecracker's Vsock object): each refusal changes nothing. */
static void test_vsock(void)
{
	static const struct { const char *json, *needle; } bad[] = {
		{ "{\"uds_path\":\"/v\"}", "missing field: guest_cid" },
		{ "{\"guest_cid\":3}", "missing field: uds_path" },
		{ "{\"guest_cid\":2,\"uds_path\":\"/v\"}",
		  "guest_cid is 2, must be 3 to 4294967294" },
		{ "{\"guest_cid\":4294967295,\"uds_path\":\"/v\"}",
		  "must be 3 to 4294967294" },
		{ "{\"guest_cid\":\"3\",\"uds_path\":\"/v\"}",
		  "guest_cid must be an integer" },
		{ "{\"guest_cid\":3,\"uds_path\":\"\"}",
		  "uds_path must not be empty" },
		{ "{\"guest_cid\":3,\"uds_path\":\"/v\",\"cid\":3}",
		  "unknown field \"cid\"" },
		{ "{\"guest_cid\":3,\"uds_path\":\"/v\",\"transport\":\"usb\"}",
		  "transport" },
		/* Our engine key: uds_path with "hybrid" (the default)
		 * only. */
		{ "{\"guest_cid\":3,\"uds_path\":\"/v\",\"engine\":\"vhost\"}",
		  "uds_path and engine \"vhost\" exclude each other" },
		{ "{\"engine\":\"vhost\",\"uds_path\":\"/v\",\"guest_cid\":3}",
		  "uds_path and engine \"vhost\" exclude each other" },
		{ "{\"guest_cid\":3,\"engine\":\"hybrid\"}",
		  "missing field: uds_path" },
		{ "{\"engine\":\"vhost\"}", "missing field: guest_cid" },
		{ "{\"guest_cid\":3,\"engine\":\"kernel\"}", "engine" },
		{ "{\"guest_cid\":3,\"engine\":1}", "engine" },
	};
	char err[256] = "", *before, *after, longp[128];
	struct vm_config cfg;
	size_t i;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, VSOCK, NULL, "{\"vsock_id\":\"vsock0\","
		       "\"guest_cid\":3,\"uds_path\":\"/run/v.sock\"}", err,
		       sizeof(err)), 0);
	CHECK(cfg.vsock.set && cfg.vsock.guest_cid == 3);
	CHECK(!strcmp(cfg.vsock.uds_path, "/run/v.sock"));
	CHECK(cfg.vsock.vsock_id && !strcmp(cfg.vsock.vsock_id, "vsock0"));
	/* Firecracker's drives are virtio-mmio by default; so is vsock. */
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_MMIO);
	before = fc_vm_config_json(&cfg);
	CHECK(before && strstr(before, "\"vsock\":{\"vsock_id\":\"vsock0\","
			       "\"guest_cid\":3,\"uds_path\":\"/run/v.sock\""));
	memset(longp, 'a', sizeof(longp));
	longp[0] = '/';
	longp[97] = '\0';
	for (i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		char body[256];
		const char *json = body, *needle = "uds_path must be";

		if (i < sizeof(bad) / sizeof(bad[0])) {
			json = bad[i].json;
			needle = bad[i].needle;
		} else {
			/* 97 bytes: <uds_path>_<port> would not fit. */
			snprintf(body, sizeof(body),
				 "{\"guest_cid\":3,\"uds_path\":\"%s\"}", longp);
		}
		err[0] = '\0';
		CHECK_EQ(apply(&cfg, VSOCK, NULL, json, err, sizeof(err)),
			 -EINVAL);
		CHECK(strstr(err, needle) != NULL);
		if (!strstr(err, needle))
			fprintf(stderr, "%s: %s\n", json, err);
		after = fc_vm_config_json(&cfg);
		CHECK(after && !strcmp(before, after));
		free(after);
	}
	/* A second PUT replaces the first; our transport key. */
	CHECK_EQ(apply(&cfg, VSOCK, NULL, "{\"guest_cid\":7,\"uds_path\":"
		       "\"/w\",\"transport\":\"pci\"}", err, sizeof(err)), 0);
	CHECK(cfg.vsock.guest_cid == 7 && !strcmp(cfg.vsock.uds_path, "/w"));
	CHECK(!cfg.vsock.vsock_id);
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_PCI);
	free(before);
	config_free(&cfg);
	/* --enable-pci: pci by default. */
	cfg_init(&cfg);
	cfg.enable_pci = true;
	CHECK_EQ(apply(&cfg, VSOCK, NULL, "{\"guest_cid\":3,\"uds_path\":"
		       "\"/v\"}", err, sizeof(err)), 0);
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_PCI);
	config_free(&cfg);
}

static int patch(struct vm_config *cfg, const char *id, const char *json,
		 struct fc_drive_patch *p, char *err, size_t errlen)
{
	return fc_parse_drive_patch(cfg, id, json, strlen(json), p, err,
				    errlen);
}

static void test_patch(void)
{
	struct fc_drive_patch p;
	struct vm_config cfg;
	char err[256] = "";

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, DRIVE, "d",
		       DRV(",\"rate_limiter\":{\"bandwidth\":{\"size\":100,"
			   "\"refill_time\":10},\"ops\":{\"size\":5,"
			   "\"refill_time\":1000}}"), err, sizeof(err)), 0);
	CHECK_EQ(apply(&cfg, DRIVE, "v", "{\"drive_id\":\"v\","
		       "\"path_on_host\":\"/v\",\"is_root_device\":false,"
		       "\"engine\":\"vhost\"}", err, sizeof(err)), 0);
	CHECK_EQ(patch(&cfg, "d", "{\"drive_id\":\"d\","
		       "\"path_on_host\":\"/new\"}", &p, err, sizeof(err)), 0);
	CHECK(p.path_on_host && !strcmp(p.path_on_host, "/new"));
	CHECK(!p.has_rl);
	fc_drive_patch_free(&p);
	/* A bucket not named keeps its setting; one named is replaced. */
	CHECK_EQ(fc_parse_drive_patch(&cfg, "d", "{\"drive_id\":\"d\","
		"\"rate_limiter\":{\"ops\":{\"size\":0,\"refill_time\":0}}}",
		strlen("{\"drive_id\":\"d\",\"rate_limiter\":{\"ops\":"
		       "{\"size\":0,\"refill_time\":0}}}"), &p, err,
		sizeof(err)), 0);
	CHECK(p.has_rl && !p.path_on_host);
	CHECK(p.rl.bandwidth.size == 100 && p.rl.bandwidth.refill_time_ms == 10);
	CHECK(!rl_bucket_active(&p.rl.ops));
	fc_drive_patch_free(&p);
	CHECK_EQ(fc_parse_drive_patch(&cfg, "x", "{\"drive_id\":\"x\"}", 16,
				      &p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "drive \"x\": no such drive") != NULL);
	CHECK_EQ(fc_parse_drive_patch(&cfg, "d", "{\"drive_id\":\"v\"}", 16,
				      &p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "differs") != NULL);
	CHECK_EQ(patch(&cfg, "d", "{\"drive_id\":\"d\","
		       "\"is_read_only\":true}", &p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown field \"is_read_only\"") != NULL);
	CHECK_EQ(fc_parse_drive_patch(&cfg, "v", "{\"drive_id\":\"v\","
		"\"rate_limiter\":{\"ops\":{\"size\":1,\"refill_time\":1}}}",
		strlen("{\"drive_id\":\"v\",\"rate_limiter\":{\"ops\":"
		       "{\"size\":1,\"refill_time\":1}}}"), &p, err,
		sizeof(err)), -EINVAL);
	CHECK(strstr(err, "needs engine io_uring") != NULL);
	CHECK(!p.path_on_host && !p.has_rl);
	config_free(&cfg);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/test_fc_config.XXXXXX");
	int fd = path ? mkstemp(path) : -1;
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("mkstemp/write");
		exit(1);
	}
	close(fd);
	return path;
}

static int load_text(struct vm_config *cfg, const char *text, char *err,
		     size_t errlen)
{
	char *path = write_tmp(text);
	int ret = fc_load_config_file(cfg, path, err, errlen);

	unlink(path);
	free(path);
	return ret;
}

/* Firecracker's getting-started config, as its guide writes it. */
static const char guide_config[] =
	"{\n"
	"  \"boot-source\": {\n"
	"    \"kernel_image_path\": \"vmlinux.bin\",\n"
	"    \"boot_args\": \"console=ttyS0 reboot=k panic=1 pci=off\",\n"
	"    \"initrd_path\": null\n"
	"  },\n"
	"  \"drives\": [\n"
	"    {\n"
	"      \"drive_id\": \"rootfs\",\n"
	"      \"partuuid\": null,\n"
	"      \"is_root_device\": true,\n"
	"      \"cache_type\": \"Unsafe\",\n"
	"      \"is_read_only\": false,\n"
	"      \"path_on_host\": \"ubuntu.ext4\",\n"
	"      \"io_engine\": \"Sync\",\n"
	"      \"rate_limiter\": null,\n"
	"      \"socket\": null\n"
	"    }\n"
	"  ],\n"
	"  \"machine-config\": {\n"
	"    \"vcpu_count\": 2,\n"
	"    \"mem_size_mib\": 1024,\n"
	"    \"smt\": false,\n"
	"    \"track_dirty_pages\": false,\n"
	"    \"huge_pages\": \"None\"\n"
	"  },\n"
	"  \"cpu-config\": null,\n"
	"  \"balloon\": null,\n"
	"  \"network-interfaces\": [],\n"
	"  \"vsock\": null,\n"
	"  \"logger\": null,\n"
	"  \"metrics\": null,\n"
	"  \"mmds-config\": null,\n"
	"  \"entropy\": null\n"
	"}\n";

static void test_config_file(void)
{
	struct vm_config cfg;
	char err[512] = "";

	cfg_init(&cfg);
	CHECK_EQ(load_text(&cfg, guide_config, err, sizeof(err)), 0);
	if (*err)
		fprintf(stderr, "guide config: %s\n", err);
	CHECK(cfg.kernel && !strcmp(cfg.kernel, "vmlinux.bin"));
	CHECK(!cfg.initrd);
	CHECK_EQ(cfg.cpus, 2);
	CHECK(cfg.memory == 1024ULL << 20);
	CHECK_EQ(cfg.nr_disks, 1);
	CHECK(cfg.disks[0].is_root && !cfg.disks[0].partuuid);
	CHECK_EQ(cfg.disks[0].transport, DISK_TRANSPORT_MMIO);
	config_free(&cfg);
}

struct file_row {
	const char *text;
	const char *needle;
};

static const struct file_row file_rows[] = {
	{ "", "no JSON body" },
	{ "{\"boot-source\":", "unexpected end of data" },
	{ "{\"boot_source\":{}}", "unknown field \"boot_source\"" },
	{ "{\"network-interfaces\":[{\"iface_id\":\"eth0\"}]}",
	  "network-interfaces[0] \"eth0\": host_dev_name is required" },
	{ "{\"vsock\":{\"guest_cid\":2,\"uds_path\":\"/v\"}}",
	  "vsock: guest_cid is 2, must be 3 to 4294967294" },
	{ "{\"vsock\":[]}", "vsock must be an object" },
	{ "{\"balloon\":{\"amount_mib\":1}}", "\"balloon\"" },
	{ "{\"mmds-config\":{\"network_interfaces\":[\"eth0\"]}}",
	  "mmds-config: network interface eth0: no such iface_id" },
	{ "{\"cpu-config\":{\"kvm_capabilities\":[]}}", "\"cpu-config\"" },
	{ "{\"drives\":{}}", "drives: must be an array" },
	{ "{\"drives\":[{\"drive_id\":\"a\",\"path_on_host\":\"/a\","
	  "\"is_root_device\":true},{\"drive_id\":\"b\",\"path_on_host\":"
	  "\"/b\",\"is_root_device\":true}]}",
	  "drives[1] \"b\": is_root_device: drive \"a\" is the root" },
	{ "{\"drives\":[7]}", "drives[0]: drive must be an object" },
	{ "{\"machine-config\":{\"vcpu_count\":2}}",
	  "machine-config: mem_size_mib is required" },
	{ "{\"machine-config\":[]}", "machine-config must be an object" },
	{ "{\"logger\":{\"level\":3}}", "logger: level must be a string" },
	{ "{\"metrics\":{}}", "metrics: metrics_path is required" },
};

static void test_config_file_bad(void)
{
	struct vm_config cfg;
	char *before, *after, *big;
	size_t i;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, BOOT, NULL, "{\"kernel_image_path\":\"/k\"}",
		       NULL, 0), 0);
	before = fc_vm_config_json(&cfg);
	for (i = 0; i < sizeof(file_rows) / sizeof(file_rows[0]); i++) {
		char err[512] = "";
		int ret = load_text(&cfg, file_rows[i].text, err, sizeof(err));

		CHECK_EQ(ret, -EINVAL);
		if (!strstr(err, file_rows[i].needle))
			fprintf(stderr, "file row %zu: '%s'\n", i, err);
		CHECK(strstr(err, file_rows[i].needle) != NULL);
		CHECK(strstr(err, "/tmp/test_fc_config.") != NULL);
		after = fc_vm_config_json(&cfg);
		CHECK(after && !strcmp(before, after));
		free(after);
	}
	/* Over 1 MiB: refused before parsing. */
	big = malloc(FC_CONFIG_FILE_MAX + 2);
	memset(big, ' ', FC_CONFIG_FILE_MAX + 1);
	big[0] = '{';
	big[FC_CONFIG_FILE_MAX - 1] = '}';
	big[FC_CONFIG_FILE_MAX + 1] = '\0';
	{
		char err[512] = "";

		CHECK_EQ(load_text(&cfg, big, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "larger than 1048576 bytes") != NULL);
		CHECK_EQ(fc_load_config_file(&cfg, "/nonexistent/fc.json",
					     err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "--config-file /nonexistent/fc.json: cannot open") != NULL);
	}
	free(big);
	free(before);
	config_free(&cfg);
}

/* GET /vm/config, loaded as a config file, gives the same config back. */
static void test_round_trip(void)
{
	struct vm_config a, b;
	char err[512] = "", *ja, *jb, *path;

	cfg_init(&a);
	CHECK_EQ(load_text(&a, guide_config, err, sizeof(err)), 0);
	CHECK_EQ(apply(&a, DRIVE, "d", DRV(",\"is_read_only\":true,"
		"\"cache_type\":\"Writeback\",\"io_engine\":\"Async\","
		"\"rate_limiter\":{\"ops\":{\"size\":7,\"refill_time\":9,"
		"\"one_time_burst\":3}},\"transport\":\"pci\",\"queues\":4,"
		"\"queue_size\":64,\"engine\":\"io_uring\",\"poll_us\":5,"
		"\"serial\":\"SER\",\"partuuid\":\"0eaa91a0-01\""), err,
		sizeof(err)), 0);
	CHECK_EQ(apply(&a, DRIVE, "s", "{\"drive_id\":\"s\",\"path_on_host\":"
		       "\"/s\",\"is_root_device\":false,\"snapshot\":true,"
		       "\"cache_type\":\"None\"}", err, sizeof(err)), -EINVAL);
	CHECK_EQ(apply(&a, DRIVE, "s", "{\"drive_id\":\"s\",\"path_on_host\":"
		       "\"/s\",\"is_root_device\":false,\"snapshot\":true}",
		       err, sizeof(err)), 0);
	CHECK_EQ(apply(&a, LOGGER, NULL, "{\"log_path\":\"/l\",\"level\":"
		       "\"Warning\"}", err, sizeof(err)), 0);
	CHECK_EQ(apply(&a, METRICS, NULL, "{\"metrics_path\":\"/m\"}", err,
		       sizeof(err)), 0);
	CHECK_EQ(apply(&a, VSOCK, NULL, "{\"guest_cid\":42,\"uds_path\":"
		       "\"/v.sock\",\"transport\":\"pci\"}", err,
		       sizeof(err)), 0);
	ja = fc_vm_config_json(&a);
	CHECK(ja != NULL);
	path = write_tmp(ja);
	cfg_init(&b);
	CHECK_EQ(fc_load_config_file(&b, path, err, sizeof(err)), 0);
	jb = fc_vm_config_json(&b);
	CHECK(jb && !strcmp(ja, jb));
	if (jb && strcmp(ja, jb))
		fprintf(stderr, "%s\n%s\n", ja, jb);
	CHECK_EQ(b.nr_disks, 3);
	CHECK(b.disks[1].rl.ops.one_time_burst == 3 && b.disks[1].io_async);
	CHECK(b.disks[2].snapshot && b.log_level == CONFIG_LOG_WARNING);
	CHECK(b.vsock.set && b.vsock.guest_cid == 42 &&
	      b.vsock.transport == DISK_TRANSPORT_PCI);
	unlink(path);
	free(path);
	free(ja);
	free(jb);
	config_free(&a);
	config_free(&b);
}

/* PUT /vsock with "engine": "vhost": no uds_path, kept through GET
 * /vm/config and the config file; a later hybrid PUT replaces it. */
static void test_vsock_engine(void)
{
	struct vm_config cfg, b;
	char err[256] = "", *ja, *jb, *path;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, VSOCK, NULL, "{\"guest_cid\":5,\"engine\":"
		       "\"vhost\"}", err, sizeof(err)), 0);
	CHECK(cfg.vsock.set && cfg.vsock.guest_cid == 5);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_VHOST);
	CHECK(cfg.vsock.uds_path == NULL);
	ja = fc_vm_config_json(&cfg);
	CHECK(ja && strstr(ja, "\"vsock\":{\"guest_cid\":5,\"transport\":"
			   "\"mmio\",\"engine\":\"vhost\"}"));
	path = write_tmp(ja);
	cfg_init(&b);
	CHECK_EQ(fc_load_config_file(&b, path, err, sizeof(err)), 0);
	jb = fc_vm_config_json(&b);
	CHECK(jb && ja && !strcmp(ja, jb));
	CHECK_EQ(b.vsock.engine, CONFIG_VSOCK_VHOST);
	unlink(path);
	free(path);
	free(ja);
	free(jb);
	config_free(&b);
	CHECK_EQ(apply(&cfg, VSOCK, NULL, "{\"guest_cid\":6,\"uds_path\":"
		       "\"/v\",\"engine\":\"hybrid\"}", err, sizeof(err)), 0);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_HYBRID);
	CHECK(cfg.vsock.uds_path && !strcmp(cfg.vsock.uds_path, "/v"));
	ja = fc_vm_config_json(&cfg);
	CHECK(ja && !strstr(ja, "engine"));
	free(ja);
	config_free(&cfg);
}

#define NET0 "{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0\"}"
#define RL1 "{\"bandwidth\":{\"size\":1000,\"refill_time\":100}}"

/* PUT /network-interfaces/{id}: every refusal names the field and
 * changes nothing. */
static const struct bad_row net_rows[] = {
	{ NET, "eth1", "{\"host_dev_name\":\"tap1\"}", "iface_id is required" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\"}",
	  "host_dev_name is required" },
	{ NET, "eth1", "{\"iface_id\":\"eth2\",\"host_dev_name\":\"tap1\"}",
	  "iface_id \"eth2\" differs from the path's \"eth1\"" },
	{ NET, "eth-1", "{\"iface_id\":\"eth-1\",\"host_dev_name\":\"t\"}",
	  "the path's iface_id must be 1-64 letters" },
	{ NET, "eth1", "{\"iface_id\":7,\"host_dev_name\":\"tap1\"}",
	  "iface_id must be a string" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"\"}",
	  "host_dev_name must not be empty" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":"
	  "\"tap0123456789abc\"}",
	  "host_dev_name \"tap0123456789abc\" must be an interface name: 1 to 15 bytes" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"a/b\"}",
	  "host_dev_name \"a/b\" must be an interface name" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"a b\"}",
	  "host_dev_name \"a b\" must be an interface name" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"guest_mac\":\"06:00:00:00:00\"}",
	  "guest_mac \"06:00:00:00:00\" is not of the form AA:BB:CC:DD:EE:FF" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"guest_mac\":\"06:00:00:00:00:zz\"}", "is not of the form" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"guest_mac\":\"ff:ff:ff:ff:ff:ff\"}",
	  "guest_mac \"ff:ff:ff:ff:ff:ff\" is a multicast or all-zero address" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"guest_mac\":6}", "guest_mac must be a string" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"rx_rate_limiter\":{\"bandwidth\":{\"size\":1}}}",
	  "rx_rate_limiter.bandwidth.refill_time is required" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"tx_rate_limiter\":{\"ops\":{\"size\":1,\"refill_time\":1,"
	  "\"burst\":1}}}", "unknown field \"tx_rate_limiter.ops.burst\"" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"tx_rate_limiter\":{\"iops\":{}}}",
	  "unknown field \"tx_rate_limiter.iops\"" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"rx_rate_limiter\":[]}", "rx_rate_limiter must be an object" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"rx_rate_limiter\":{\"ops\":{\"size\":1,\"refill_time\":"
	  "2000000000000}}}", "rx_rate_limiter: " },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"queues\":0}", "queues is 0, must be 1 to 31" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"queues\":32}", "queues is 32, must be 1 to 31" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"transport\":\"usb\"}", "transport" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"engine\":\"io_uring\"}", "engine" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"engine\":\"vhost\",\"tx_rate_limiter\":" RL1 "}",
	  "engine \"vhost\" takes no rx_rate_limiter or tx_rate_limiter" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"allow_mmds_requests\":true}",
	  "unknown field \"allow_mmds_requests\"" },
	/* Another interface has the tap, or the MAC. */
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap0\"}",
	  "host_dev_name \"tap0\" is network interface \"eth0\"'s already" },
	{ NET, "eth1", "{\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
	  "\"guest_mac\":\"06:00:AC:10:00:02\"}",
	  "guest_mac: network interface \"eth0\" has this MAC already" },
	{ NET, "eth1", "[]", "must be a JSON object" },
	{ NET, "eth1", "", "no JSON body" },
};

static void test_net(void)
{
	struct vm_config cfg;
	char err[256] = "", *before, *after;
	uint8_t mac[6];
	size_t i;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, NET, "eth0", "{\"iface_id\":\"eth0\","
		       "\"host_dev_name\":\"tap0\",\"guest_mac\":"
		       "\"06:00:AC:10:00:02\",\"rx_rate_limiter\":" RL1 ","
		       "\"tx_rate_limiter\":{\"ops\":{\"size\":10,"
		       "\"refill_time\":1000,\"one_time_burst\":5}}}", err,
		       sizeof(err)), 0);
	CHECK_EQ(cfg.nr_nets, 1);
	CHECK(!strcmp(cfg.nets[0].iface_id, "eth0") &&
	      !strcmp(cfg.nets[0].host_dev_name, "tap0"));
	config_net_mac(&cfg.nets[0], mac);
	CHECK(cfg.nets[0].mac_set && mac[0] == 0x06 && mac[2] == 0xac &&
	      mac[5] == 0x02);
	CHECK(cfg.nets[0].rx_rl.bandwidth.size == 1000 &&
	      cfg.nets[0].rx_rl.bandwidth.refill_time_ms == 100);
	CHECK(cfg.nets[0].tx_rl.ops.size == 10 &&
	      cfg.nets[0].tx_rl.ops.one_time_burst == 5);
	CHECK(!cfg.nets[0].tx_rl.bandwidth.size &&
	      !cfg.nets[0].rx_rl.ops.size);
	/* Firecracker's virtio-mmio; queue pairs left to the machine (one
	 * per vCPU, one on a tap without multi_queue); our user engine. */
	CHECK_EQ(cfg.nets[0].transport, DISK_TRANSPORT_MMIO);
	CHECK_EQ(cfg.nets[0].queue_pairs, 0);
	CHECK(!cfg.nets[0].vhost);
	before = fc_vm_config_json(&cfg);
	CHECK(before && strstr(before, "\"network-interfaces\":[{\"iface_id\":"
			       "\"eth0\",\"host_dev_name\":\"tap0\","
			       "\"guest_mac\":\"06:00:ac:10:00:02\","
			       "\"rx_rate_limiter\":{\"bandwidth\":{\"size\":1000,"
			       "\"refill_time\":100}},\"tx_rate_limiter\":"
			       "{\"ops\":{\"size\":10,\"refill_time\":1000,"
			       "\"one_time_burst\":5}},"
			       "\"transport\":\"mmio\"}]"));
	for (i = 0; i < sizeof(net_rows) / sizeof(net_rows[0]); i++) {
		const struct bad_row *r = &net_rows[i];

		err[0] = '\0';
		CHECK_EQ(apply(&cfg, r->op, r->id, r->json, err, sizeof(err)),
			 -EINVAL);
		if (!strstr(err, r->needle))
			fprintf(stderr, "net row %zu (%s): '%s'\n", i, r->json,
				err);
		CHECK(strstr(err, r->needle) != NULL);
		after = fc_vm_config_json(&cfg);
		CHECK(after && !strcmp(before, after));
		free(after);
	}
	free(before);
	/* A second PUT of the same id replaces it: no guest_mac now, so the
	 * MAC derived from the id; our keys. */
	CHECK_EQ(apply(&cfg, NET, "eth0", "{\"iface_id\":\"eth0\","
		       "\"host_dev_name\":\"tap9\",\"guest_mac\":null,"
		       "\"rx_rate_limiter\":null,\"queues\":4,"
		       "\"transport\":\"pci\",\"engine\":\"vhost\"}", err,
		       sizeof(err)), 0);
	CHECK_EQ(cfg.nr_nets, 1);
	CHECK(!strcmp(cfg.nets[0].host_dev_name, "tap9") &&
	      !cfg.nets[0].mac_set);
	CHECK(!rl_config_active(&cfg.nets[0].rx_rl) &&
	      !rl_config_active(&cfg.nets[0].tx_rl));
	CHECK(cfg.nets[0].queue_pairs == 4 &&
	      cfg.nets[0].transport == DISK_TRANSPORT_PCI);
	CHECK(cfg.nets[0].vhost);
	after = fc_vm_config_json(&cfg);
	CHECK(after && !strstr(after, "guest_mac"));
	CHECK(strstr(after, "\"queues\":4,\"transport\":\"pci\","
			    "\"engine\":\"vhost\"}") != NULL);
	free(after);
	/* Up to CONFIG_MAX_NETS, then a 400 naming the count; an id there
	 * already is still replaced. */
	for (i = 1; i < CONFIG_MAX_NETS; i++) {
		char id[16], body[128];

		snprintf(id, sizeof(id), "eth%zu", i);
		snprintf(body, sizeof(body), "{\"iface_id\":\"%s\","
			 "\"host_dev_name\":\"tap%zu\"}", id, i);
		CHECK_EQ(apply(&cfg, NET, id, body, err, sizeof(err)), 0);
	}
	CHECK_EQ(cfg.nr_nets, CONFIG_MAX_NETS);
	CHECK_EQ(apply(&cfg, NET, "eth8", "{\"iface_id\":\"eth8\","
		       "\"host_dev_name\":\"tap8\"}", err, sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, "at most 8 network interfaces") != NULL);
	CHECK_EQ(apply(&cfg, NET, "eth7", "{\"iface_id\":\"eth7\","
		       "\"host_dev_name\":\"tap77\"}", err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.nets[7].host_dev_name, "tap77"));
	config_free(&cfg);
	/* --enable-pci: pci by default. */
	cfg_init(&cfg);
	cfg.enable_pci = true;
	CHECK_EQ(apply(&cfg, NET, "eth0", NET0, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nets[0].transport, DISK_TRANSPORT_PCI);
	config_free(&cfg);
}

static int net_patch(struct vm_config *cfg, const char *id, const char *json,
		     struct fc_net_patch *p, char *err, size_t errlen)
{
	return fc_parse_net_patch(cfg, id, json, strlen(json), p, err,
				  errlen);
}

/* PATCH /network-interfaces/{id}: a bucket not named keeps its setting. */
static void test_net_patch(void)
{
	static const struct { const char *id, *json, *needle; } bad[] = {
		{ "eth9", "{\"iface_id\":\"eth9\"}",
		  "no such network interface" },
		{ "eth0", "{}", "iface_id is required" },
		{ "eth0", "{\"iface_id\":\"eth1\"}",
		  "iface_id \"eth1\" differs from the path's \"eth0\"" },
		{ "eth0", "{\"iface_id\":\"eth0\",\"host_dev_name\":\"t\"}",
		  "unknown field \"host_dev_name\"" },
		{ "eth0", "{\"iface_id\":\"eth0\",\"rx_rate_limiter\":"
		  "{\"ops\":{\"size\":1}}}",
		  "rx_rate_limiter.ops.refill_time is required" },
		{ "eth0", "{\"iface_id\":\"eth0\",\"tx_rate_limiter\":"
		  "{\"ops\":{\"size\":1,\"refill_time\":2000000000000}}}",
		  "refill" },
		{ "bad-id", "{\"iface_id\":\"bad-id\"}", "the path's iface_id" },
	};
	struct fc_net_patch p;
	struct vm_config cfg;
	char err[256] = "";
	size_t i;

	cfg_init(&cfg);
	CHECK_EQ(apply(&cfg, NET, "eth0", "{\"iface_id\":\"eth0\","
		       "\"host_dev_name\":\"tap0\",\"rx_rate_limiter\":"
		       "{\"bandwidth\":{\"size\":1000,\"refill_time\":100},"
		       "\"ops\":{\"size\":5,\"refill_time\":10}}}", err,
		       sizeof(err)), 0);
	CHECK_EQ(net_patch(&cfg, "eth0", "{\"iface_id\":\"eth0\","
			   "\"rx_rate_limiter\":{\"ops\":{\"size\":0,"
			   "\"refill_time\":0}},\"tx_rate_limiter\":" RL1 "}",
			   &p, err, sizeof(err)), 0);
	CHECK(p.has_rx && p.has_tx);
	CHECK(p.rx.bandwidth.size == 1000 && !p.rx.ops.size);
	CHECK(p.tx.bandwidth.size == 1000 && p.tx.bandwidth.refill_time_ms ==
	      100);
	CHECK_EQ(net_patch(&cfg, "eth0", "{\"iface_id\":\"eth0\","
			   "\"tx_rate_limiter\":null}", &p, err, sizeof(err)),
		 0);
	CHECK(!p.has_rx && !p.has_tx);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_EQ(net_patch(&cfg, bad[i].id, bad[i].json, &p, err,
				   sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].needle))
			fprintf(stderr, "net patch %zu: '%s'\n", i, err);
		CHECK(strstr(err, bad[i].needle) != NULL);
		CHECK(!p.has_rx && !p.has_tx);
	}
	config_free(&cfg);
}

/* The config file's "network-interfaces", through GET /vm/config and
 * back; its refusals name the element. */
static void test_net_config_file(void)
{
	static const struct file_row rows[] = {
		{ "{\"network-interfaces\":{}}",
		  "network-interfaces: must be an array" },
		{ "{\"network-interfaces\":[7]}",
		  "network-interfaces[0]: network interface must be an object" },
		{ "{\"network-interfaces\":[" NET0 ",{\"iface_id\":\"eth1\","
		  "\"host_dev_name\":\"tap1\",\"guest_mac\":\"1:2:3:4:5:6\"}]}",
		  "network-interfaces[1] \"eth1\": guest_mac \"1:2:3:4:5:6\" is not of the form" },
		{ "{\"network-interfaces\":[" NET0 "," NET0 "]}", "" },
	};
	struct vm_config a, b;
	char err[512] = "", *ja, *jb, *path;
	size_t i;

	cfg_init(&a);
	CHECK_EQ(load_text(&a, "{\"network-interfaces\":[" NET0 ",{"
			   "\"iface_id\":\"eth1\",\"host_dev_name\":\"tap1\","
			   "\"guest_mac\":\"02:00:00:00:00:01\","
			   "\"tx_rate_limiter\":" RL1 ",\"queues\":2,"
			   "\"transport\":\"pci\"}]}", err, sizeof(err)), 0);
	if (*err)
		fprintf(stderr, "net config file: %s\n", err);
	CHECK(a.nr_nets == 2 && a.nets[1].mac_set &&
	      a.nets[1].queue_pairs == 2);
	CHECK(a.nets[1].tx_rl.bandwidth.size == 1000);
	ja = fc_vm_config_json(&a);
	path = write_tmp(ja);
	cfg_init(&b);
	CHECK_EQ(fc_load_config_file(&b, path, err, sizeof(err)), 0);
	jb = fc_vm_config_json(&b);
	CHECK(ja && jb && !strcmp(ja, jb));
	unlink(path);
	free(path);
	free(jb);
	config_free(&b);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		CHECK_EQ(load_text(&a, rows[i].text, err, sizeof(err)),
			 i == 3 ? 0 : -EINVAL);
		if (!strstr(err, rows[i].needle))
			fprintf(stderr, "net file row %zu: '%s'\n", i, err);
		CHECK(strstr(err, rows[i].needle) != NULL);
		jb = fc_vm_config_json(&a);
		CHECK(jb && !strcmp(ja, jb));
		free(jb);
	}
	free(ja);
	config_free(&a);
}

/* mmds-config: PUT and the config file, every refusal changing nothing,
 * the round trip through GET /vm/config. */
static void test_mmds_config(void)
{
	static const struct file_row rows[] = {
		{ "{}", "missing field: network_interfaces" },
		{ "{\"network_interfaces\":[]}", "is empty" },
		{ "{\"network_interfaces\":\"eth0\"}", "must be an array" },
		{ "{\"network_interfaces\":[\"eth9\"]}", "eth9: no such iface_id" },
		{ "{\"network_interfaces\":[\"eth0\",\"eth0\"]}", "twice" },
		{ "{\"network_interfaces\":[\"vh\"]}", "engine vhost cannot serve MMDS" },
		{ "{\"network_interfaces\":[\"eth0\"],\"version\":\"V3\"}", "version" },
		{ "{\"network_interfaces\":[\"eth0\"],\"ipv4_address\":\"10.0.0.1\"}",
		  "not a link-local unicast address" },
		{ "{\"network_interfaces\":[\"eth0\"],\"ipv4_address\":\"169.254.1\"}",
		  "not an IPv4 address" },
		{ "{\"network_interfaces\":[\"eth0\"],\"ipv4_address\":\"169.254.255.255\"}",
		  "not a link-local" },
		{ "{\"network_interfaces\":[\"eth0\"],\"x\":1}", "unknown field \"x\"" },
	};
	struct vm_config a, b;
	char err[512] = "", *ja, *jb, *path;
	size_t i;

	cfg_init(&a);
	CHECK_EQ(fc_put_net(&a, "eth0", NET0, strlen(NET0), err, sizeof(err)),
		 0);
	CHECK_EQ(fc_put_net(&a, "vh", "{\"iface_id\":\"vh\",\"host_dev_name\":"
			    "\"tap9\",\"engine\":\"vhost\"}",
			    strlen("{\"iface_id\":\"vh\",\"host_dev_name\":"
				   "\"tap9\",\"engine\":\"vhost\"}"),
			    err, sizeof(err)), 0);
	ja = fc_vm_config_json(&a);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		CHECK_EQ(fc_put_mmds_config(&a, rows[i].text,
					    strlen(rows[i].text), err,
					    sizeof(err)), -EINVAL);
		if (!strstr(err, rows[i].needle))
			fprintf(stderr, "mmds row %zu: '%s'\n", i, err);
		CHECK(strstr(err, rows[i].needle) != NULL);
		jb = fc_vm_config_json(&a);
		CHECK(jb && !strcmp(ja, jb));
		free(jb);
	}
	free(ja);
	CHECK(!a.mmds.set && !config_mmds_on_net(&a, "eth0"));
	CHECK_EQ(fc_put_mmds_config(&a, "{\"network_interfaces\":[\"eth0\"],"
				    "\"version\":\"V2\",\"ipv4_address\":"
				    "\"169.254.170.2\"}", 77, err, sizeof(err)),
		 0);
	CHECK(a.mmds.set && a.mmds.version == 2 &&
	      a.mmds.ipv4 == 0xa9feaa02u && config_mmds_on_net(&a, "eth0") &&
	      !config_mmds_on_net(&a, "vh"));
	ja = fc_vm_config_json(&a);
	CHECK(ja && strstr(ja, "\"mmds-config\":{\"network_interfaces\":"
			   "[\"eth0\"],\"version\":\"V2\",\"ipv4_address\":"
			   "\"169.254.170.2\",\"imds_compat\":false}"));
	/* The config file takes it back (interfaces before mmds-config). */
	path = write_tmp(ja);
	cfg_init(&b);
	CHECK_EQ(fc_load_config_file(&b, path, err, sizeof(err)), 0);
	jb = fc_vm_config_json(&b);
	CHECK(ja && jb && !strcmp(ja, jb));
	/* A copy keeps it. */
	config_free(&b);
	CHECK_EQ(config_copy(&b, &a), 0);
	free(jb);
	jb = fc_vm_config_json(&b);
	CHECK(ja && jb && !strcmp(ja, jb));
	unlink(path);
	free(path);
	free(ja);
	free(jb);
	config_free(&b);
	/* Flintlock's: V1, the default address. */
	CHECK_EQ(fc_put_mmds_config(&a, "{\"network_interfaces\":[\"eth0\"],"
				    "\"version\":\"V1\"}", 46, err, sizeof(err)),
		 0);
	CHECK(a.mmds.version == 1 && a.mmds.ipv4 == 0xa9fea9feu);
	config_free(&a);
}

struct finalize_row {
	const char *boot;   /* PUT /boot-source body, NULL: none */
	const char *drives[3];
	const char *cmdline; /* expected, NULL: an error */
	const char *first;   /* drive_id expected first */
};

static const struct finalize_row finalize_rows[] = {
	{ .boot = NULL, .cmdline = NULL },
	{ .boot = "{\"kernel_image_path\":\"/k\"}",
	  .cmdline = FC_DEFAULT_BOOT_ARGS },
	{ .boot = "{\"kernel_image_path\":\"/k\",\"boot_args\":\"console=ttyS0 pci=off\"}",
	  .drives = { DRV(""), ROOT_OK },
	  .cmdline = "console=ttyS0 pci=off root=/dev/vda rw",
	  .first = "rootfs" },
	{ .boot = "{\"kernel_image_path\":\"/k\"}",
	  .drives = { "{\"drive_id\":\"r\",\"path_on_host\":\"/r\","
		      "\"is_root_device\":true,\"is_read_only\":true,"
		      "\"partuuid\":\"0eaa91a0-01\"}" },
	  .cmdline = FC_DEFAULT_BOOT_ARGS " root=PARTUUID=0eaa91a0-01 ro",
	  .first = "r" },
	{ .boot = "{\"kernel_image_path\":\"/k\",\"boot_args\":\"x\"}",
	  .drives = { DRV("") }, .cmdline = "x", .first = "d" },
};

static void test_finalize(void)
{
	size_t i, j;

	for (i = 0; i < sizeof(finalize_rows) / sizeof(finalize_rows[0]);
	     i++) {
		const struct finalize_row *r = &finalize_rows[i];
		struct vm_config cfg;
		char err[256] = "";
		int ret;

		cfg_init(&cfg);
		if (r->boot)
			CHECK_EQ(apply(&cfg, BOOT, NULL, r->boot, err,
				       sizeof(err)), 0);
		for (j = 0; j < 3 && r->drives[j]; j++) {
			struct json_object;
			const char *id = strstr(r->drives[j], "\"r\"") ? "r" :
					 strstr(r->drives[j], "rootfs") ?
					 "rootfs" : "d";

			CHECK_EQ(apply(&cfg, DRIVE, id, r->drives[j], err,
				       sizeof(err)), 0);
		}
		ret = fc_finalize_config(&cfg, err, sizeof(err));
		CHECK_EQ(ret, r->cmdline ? 0 : -EINVAL);
		if (!r->cmdline)
			CHECK(strstr(err, "no boot source") != NULL);
		if (r->cmdline && !ret) {
			if (strcmp(cfg.cmdline, r->cmdline))
				fprintf(stderr, "finalize row %zu: '%s'\n", i,
					cfg.cmdline);
			CHECK(!strcmp(cfg.cmdline, r->cmdline));
		}
		if (r->first)
			CHECK(!strcmp(cfg.disks[0].drive_id, r->first));
		config_free(&cfg);
	}
}

int main(void)
{
	test_boot_source();
	test_machine();
#if !defined(__aarch64__)
	test_machine_smt();
#endif
	test_drive();
	test_drive_limits();
	test_bad();
	test_logger_metrics();
	test_vsock();
	test_vsock_engine();
	test_net();
	test_net_patch();
	test_net_config_file();
	test_mmds_config();
	test_patch();
	test_config_file();
	test_config_file_bad();
	test_round_trip();
	test_finalize();
	return test_done();
}
