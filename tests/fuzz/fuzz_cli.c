// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the command line (src/vmm/cli.c). The input is an
 * argv: NUL-separated strings. The first string also goes through
 * cli_parse_disk() and cli_parse_size() on its own. Whatever the words,
 * parsing returns a verdict without crashing, and an accepted config
 * holds only values the options promise (checked below; abort() on a
 * broken promise). --config-file (any prefix of it getopt takes) is left
 * out: it would read whatever file the input names, a FIFO included;
 * fuzz_fc_config covers the file's contents.
 */
#include "vmm/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_ARGS 64
#define FUZZ_ERR_LEN 256

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* --help prints the usage text to stdout; keep the log readable. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

/* A message, when there is one, is a terminated non-empty string. */
static void fuzz_check_err(const char *err)
{
	if (!memchr(err, '\0', FUZZ_ERR_LEN) || !err[0])
		abort();
}

static void fuzz_check_disk(const struct disk_config *d)
{
	if (!d->path || (d->serial && (!d->serial[0] ||
				       strlen(d->serial) > 20)))
		abort();
	if (d->queues > 64 || d->queue_size > 1024 ||
	    (d->queue_size && (d->queue_size < 2 ||
			       (d->queue_size & (d->queue_size - 1)))))
		abort();
	if (d->cache != CONFIG_CACHE_NONE &&
	    d->cache != CONFIG_CACHE_WRITEBACK &&
	    d->cache != CONFIG_CACHE_UNSAFE)
		abort();
}

static void fuzz_one_disk(const char *spec)
{
	char err[FUZZ_ERR_LEN] = { 0 };
	struct disk_config d;
	uint64_t v;
	int ret;

	ret = cli_parse_disk(spec, &d, err, sizeof(err));
	if (ret == 0) {
		fuzz_check_disk(&d);
		if (strncmp(spec, d.path, strlen(d.path)))
			abort(); /* the path is the spec's first field */
	} else if (ret != -EINVAL && ret != -ENOMEM) {
		abort();
	} else {
		fuzz_check_err(err);
		if (d.path || d.serial)
			abort(); /* freed and cleared on failure */
	}
	config_disk_free(&d);
	ret = cli_parse_size(spec, &v);
	if (ret && ret != -EINVAL && ret != -ERANGE)
		abort();
}

static void fuzz_argv(char **argv, int argc)
{
	char err[FUZZ_ERR_LEN] = { 0 };
	struct vm_config cfg;
	enum cli_result res;
	unsigned int i;

	memset(&cfg, 0, sizeof(cfg));
	res = cli_parse(argc, argv, &cfg, err, sizeof(err));
	if (res == CLI_ERROR) {
		fuzz_check_err(err);
	} else if (res == CLI_RUN && (cfg.rebase_base || cfg.rebase_diff)) {
		/* --base-file with --diff-file: no guest, nothing else. */
		if (!cfg.rebase_base || !cfg.rebase_diff || cfg.kernel ||
		    cfg.restore || cfg.api_sock || cfg.config_file)
			abort();
	} else if (res == CLI_RUN && cfg.restore) {
		/* --restore: the machine comes from the snapshot. */
		if (cfg.kernel || cfg.initrd || cfg.cmdline || cfg.nr_disks ||
		    cfg.config_file)
			abort();
	} else if (res == CLI_RUN) {
		if ((!cfg.kernel && !cfg.api_sock) ||
		    (cfg.kernel && !cfg.cmdline) || (cfg.no_api && cfg.api_sock) ||
		    (cfg.id && (!cfg.id[0] || strlen(cfg.id) > 64)) ||
		    cfg.cpus < 1 ||
		    cfg.cpus > CONFIG_MAX_CPUS ||
		    cfg.memory < CONFIG_MIN_MEMORY || !cfg.memory_arg ||
		    cfg.nr_disks > CONFIG_MAX_DISKS)
			abort();
		for (i = 0; i < cfg.nr_disks; i++)
			fuzz_check_disk(&cfg.disks[i]);
	} else if (res != CLI_EXIT) {
		abort();
	}
	if (cfg.nr_disks > CONFIG_MAX_DISKS)
		abort();
	cli_free(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_MAX_ARGS + 2];
	char *buf;
	size_t i, start;
	int argc = 1;

	/* One extra NUL so the last word is terminated too. */
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"microvm";
	for (i = start = 0; i <= size && argc <= FUZZ_MAX_ARGS; i++) {
		if (buf[i])
			continue;
		argv[argc++] = buf + start;
		start = i + 1;
	}
	argv[argc] = NULL;
	for (i = 1; i < (size_t)argc; i++) {
		if (!strncmp(argv[i], "--conf", 6)) {
			free(buf);
			return 0;
		}
	}
	if (argc > 1)
		fuzz_one_disk(argv[1]);
	fuzz_argv(argv, argc);
	free(buf);
	return 0;
}
