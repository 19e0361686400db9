// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for Firecracker's configuration objects
 * (src/api/fc_config*.c). The input is a sequence of requests separated
 * by NUL bytes; each request's first byte picks the call (modulo 8: PUT
 * /boot-source, PUT/PATCH /machine-config, PUT/PATCH /drives/{id}, PUT
 * /logger, PUT /metrics, a whole config file), its second the drive id
 * (modulo 6, fuzz_ids), and the rest is the JSON body. Neither byte can
 * be 0 (it ends the request): the seeds use the digits '0'-'7'. Promises checked (abort() on a broken
 * one): a refused request leaves GET /vm/config as it was; an accepted
 * config keeps its bounds (vCPUs, memory, at most 16 drives, one root);
 * GET /vm/config, loaded as a config file, gives the same JSON back; and
 * fc_finalize_config() puts the root drive first.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_ERR_LEN 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_ids[] = { "rootfs", "d1", "d_2", "x", "bad-id",
					"" };
#define FUZZ_NR_IDS (sizeof(fuzz_ids) / sizeof(fuzz_ids[0]))

static void fuzz_cfg_init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpus = 1;
	cfg->memory = CONFIG_FC_DEFAULT_MEMORY;
	cfg->memory_arg = strdup(CONFIG_FC_DEFAULT_MEMORY_ARG);
	if (!cfg->memory_arg)
		abort();
}

/* @text as a file only this process sees: /proc/self/fd/N of a memfd. */
static int fuzz_load(struct vm_config *cfg, const char *text, size_t len,
		     char *err)
{
	char path[64];
	int fd, ret;

	fd = memfd_create("fuzz_fc_config", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (len && write(fd, text, len) != (ssize_t)len)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = fc_load_config_file(cfg, path, err, FUZZ_ERR_LEN);
	close(fd);
	return ret;
}

static int fuzz_request(struct vm_config *cfg, uint8_t op, const char *id,
			const char *body, size_t len, char *err)
{
	struct fc_drive_patch p;
	int ret;

	switch (op % 8) {
	case 0:
		return fc_put_boot_source(cfg, body, len, err, FUZZ_ERR_LEN);
	case 1:
		return fc_put_machine_config(cfg, body, len, err, FUZZ_ERR_LEN);
	case 2:
		return fc_patch_machine_config(cfg, body, len, err,
					       FUZZ_ERR_LEN);
	case 3:
		return fc_put_drive(cfg, id, body, len, err, FUZZ_ERR_LEN);
	case 4:
		ret = fc_parse_drive_patch(cfg, id, body, len, &p, err,
					   FUZZ_ERR_LEN);
		if (ret && (p.path_on_host || p.has_rl))
			abort(); /* emptied on failure */
		fc_drive_patch_free(&p);
		return ret;
	case 5:
		return fc_put_logger(cfg, body, len, err, FUZZ_ERR_LEN);
	case 6:
		return fc_put_metrics(cfg, body, len, err, FUZZ_ERR_LEN);
	default:
		return fuzz_load(cfg, body, len, err);
	}
}

static void fuzz_check_cfg(const struct vm_config *cfg)
{
	unsigned int i, roots = 0;

	if (cfg->cpus < 1 || cfg->cpus > CONFIG_MAX_CPUS ||
	    cfg->memory < CONFIG_MIN_MEMORY || !cfg->memory_arg ||
	    cfg->nr_disks > CONFIG_MAX_DISKS)
		abort();
	for (i = 0; i < cfg->nr_disks; i++) {
		const struct disk_config *d = &cfg->disks[i];

		if (!d->path || !d->drive_id || !fc_valid_id(d->drive_id) ||
		    fc_disk_index(cfg, d->drive_id) != (int)i)
			abort();
		if (d->queues > CONFIG_MAX_QUEUES ||
		    d->queue_size > CONFIG_MAX_QUEUE_SIZE ||
		    d->poll_us > CONFIG_MAX_POLL_US)
			abort();
		if (d->engine == CONFIG_ENGINE_VHOST &&
		    (rl_config_active(&d->rl) || d->snapshot))
			abort();
		roots += d->is_root;
	}
	if (roots > 1)
		abort();
}

/* GET /vm/config as a config file: the same JSON again. */
static void fuzz_round_trip(const struct vm_config *cfg, const char *json)
{
	char err[FUZZ_ERR_LEN] = "";
	struct vm_config b;
	char *again;

	fuzz_cfg_init(&b);
	if (fuzz_load(&b, json, strlen(json), err))
		abort();
	again = fc_vm_config_json(&b);
	if (!again || strcmp(json, again))
		abort();
	if (b.nr_disks != cfg->nr_disks)
		abort();
	free(again);
	config_free(&b);
}

static void fuzz_finalize(const struct vm_config *cfg)
{
	char err[FUZZ_ERR_LEN] = "";
	struct vm_config f;
	bool root = false;
	unsigned int i;

	if (config_copy(&f, cfg))
		abort();
	for (i = 0; i < f.nr_disks; i++)
		root |= f.disks[i].is_root;
	if (fc_finalize_config(&f, err, sizeof(err))) {
		if (f.kernel || !err[0])
			abort();
	} else if (!f.cmdline || (root && (!f.disks[0].is_root ||
					   !strstr(f.cmdline, " root=")))) {
		abort();
	}
	config_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vm_config cfg;
	char *buf, *before, *after;
	size_t start, end;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	fuzz_cfg_init(&cfg);
	for (start = 0; start + 2 <= size; start = end + 1) {
		char err[FUZZ_ERR_LEN] = "";
		const char *id = fuzz_ids[(uint8_t)buf[start + 1] % FUZZ_NR_IDS];
		int ret;

		end = start + strlen(buf + start);
		if (end - start < 2)
			continue; /* no call and id bytes: no request */
		before = fc_vm_config_json(&cfg);
		ret = fuzz_request(&cfg, (uint8_t)buf[start], id,
				   buf + start + 2, end - start - 2, err);
		after = fc_vm_config_json(&cfg);
		if (!before || !after)
			abort();
		if (ret && (strcmp(before, after) || !err[0] ||
			    !memchr(err, '\0', sizeof(err))))
			abort();
		if (ret && ret != -EINVAL && ret != -ENOMEM)
			abort();
		free(before);
		free(after);
		fuzz_check_cfg(&cfg);
	}
	after = fc_vm_config_json(&cfg);
	if (!after)
		abort();
	fuzz_round_trip(&cfg, after);
	free(after);
	fuzz_finalize(&cfg);
	config_free(&cfg);
	free(buf);
	return 0;
}
