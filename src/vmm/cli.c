// SPDX-License-Identifier: Apache-2.0
/*
 * The microvm command line. getopt_long does the option scanning; each
 * value is checked here and a rejected one produces a message that names
 * the option and the value as the user typed them.
 */
#include "vmm/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "api/fc_config.h"

#define MAX_TIMEOUT (365U * 24 * 3600)
#define MAX_QUEUES CONFIG_MAX_QUEUES
#define MAX_QUEUE_SIZE CONFIG_MAX_QUEUE_SIZE
/* --http-api-max-payload-size: Firecracker's default is 51200 bytes. */
#define MAX_API_PAYLOAD (16u << 20)

/*
 * --help's text: generated from docs/cli.txt, the source the man page and
 * README.md's usage tables are made from too (cmake/cli-doc.cmake).
 */
#include "cli_usage.inc"

const char *cli_usage(void)
{
	return usage_text;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1ULL << 20;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		end++;
		break;
	case 'g': case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	case 't': case 'T':
		mult = 1ULL << 40;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno == ERANGE)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_onoff(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/*
 * iops=N, bps=N: Firecracker's buckets of N tokens refilled every second;
 * iops-burst=N, bps-burst=N: their one-time bursts. Return: 1 when @key
 * is none of these, else 0 or -EINVAL.
 */
static int disk_rl_key(struct disk_config *d, const char *key,
		       const char *val, char *err, size_t errlen)
{
	struct rl_bucket_config *b;
	bool burst = strstr(key, "-burst") != NULL;
	unsigned long n;

	if (!strcmp(key, "iops") || !strcmp(key, "iops-burst"))
		b = &d->rl.ops;
	else if (!strcmp(key, "bps") || !strcmp(key, "bps-burst"))
		b = &d->rl.bandwidth;
	else
		return 1;
	if (parse_uint(val, RL_TOKENS_MAX, &n) || (!burst && !n)) {
		snprintf(err, errlen, "--disk %s: %s '%s' must be %d to %llu",
			 d->spec, key, val, !burst,
			 (unsigned long long)RL_TOKENS_MAX);
		return -EINVAL;
	}
	if (burst) {
		b->one_time_burst = n;
	} else {
		b->size = n;
		b->refill_time_ms = 1000;
	}
	return 0;
}

static int disk_key(struct disk_config *d, const char *key, const char *val,
		    char *err, size_t errlen)
{
	unsigned long n;
	int ret;

	ret = disk_rl_key(d, key, val, err, errlen);
	if (ret <= 0)
		return ret;

	if (!strcmp(key, "readonly") || !strcmp(key, "ro")) {
		if (parse_onoff(val, &d->readonly))
			goto bad;
	} else if (!strcmp(key, "serial")) {
		if (!*val || strlen(val) > 20) {
			snprintf(err, errlen,
				 "--disk %s: serial '%s' must be 1-20 bytes",
				 d->spec, val);
			return -EINVAL;
		}
		free(d->serial);
		d->serial = strdup(val);
		if (!d->serial) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	} else if (!strcmp(key, "snapshot")) {
		if (parse_onoff(val, &d->snapshot))
			goto bad;
	} else if (!strcmp(key, "cache")) {
		d->cache_set = true;
		if (!strcmp(val, "none"))
			d->cache = CONFIG_CACHE_NONE;
		else if (!strcmp(val, "writeback"))
			d->cache = CONFIG_CACHE_WRITEBACK;
		else if (!strcmp(val, "unsafe"))
			d->cache = CONFIG_CACHE_UNSAFE;
		else
			goto bad;
	} else if (!strcmp(key, "transport")) {
		if (!strcmp(val, "pci"))
			d->transport = DISK_TRANSPORT_PCI;
		else if (!strcmp(val, "mmio"))
			d->transport = DISK_TRANSPORT_MMIO;
		else
			goto bad;
	} else if (!strcmp(key, "queues")) {
		if (parse_uint(val, MAX_QUEUES, &n) || n == 0)
			goto bad;
		d->queues = n;
	} else if (!strcmp(key, "queue-size")) {
		if (parse_uint(val, MAX_QUEUE_SIZE, &n) || n < 2 ||
		    (n & (n - 1)))
			goto bad;
		d->queue_size = n;
	} else if (!strcmp(key, "engine")) {
		if (!strcmp(val, "io_uring"))
			d->engine = CONFIG_ENGINE_URING;
		else if (!strcmp(val, "vhost"))
			d->engine = CONFIG_ENGINE_VHOST;
		else {
			snprintf(err, errlen,
				 "--disk %s: engine '%s' must be io_uring or vhost",
				 d->spec, val);
			return -EINVAL;
		}
	} else if (!strcmp(key, "defer")) {
		d->defer_set = true;
		if (!strcmp(val, "on"))
			d->defer_off = false;
		else if (!strcmp(val, "off"))
			d->defer_off = true;
		else
			goto bad;
	} else if (!strcmp(key, "irq-coalesce")) {
		bool on;

		if (parse_onoff(val, &on))
			goto bad;
		d->coalesce_off = !on;
	} else if (!strcmp(key, "poll-us")) {
		if (parse_uint(val, CONFIG_MAX_POLL_US, &n)) {
			snprintf(err, errlen,
				 "--disk %s: poll-us '%s' must be 0 to %u",
				 d->spec, val, CONFIG_MAX_POLL_US);
			return -EINVAL;
		}
		d->poll_us = n;
		d->poll_set = true;
	} else if (!strcmp(key, "irq-hold-us")) {
		if (parse_uint(val, CONFIG_MAX_IRQ_HOLD_US, &n)) {
			snprintf(err, errlen,
				 "--disk %s: irq-hold-us '%s' must be 0 to %u",
				 d->spec, val, CONFIG_MAX_IRQ_HOLD_US);
			return -EINVAL;
		}
		d->irq_hold_us = n;
	} else if (!strcmp(key, "irq-hold-max")) {
		if (parse_uint(val, CONFIG_MAX_IRQ_HOLD_COUNT, &n) || !n) {
			snprintf(err, errlen,
				 "--disk %s: irq-hold-max '%s' must be 1 to %u",
				 d->spec, val, CONFIG_MAX_IRQ_HOLD_COUNT);
			return -EINVAL;
		}
		d->irq_hold_max = n;
	} else {
		snprintf(err, errlen, "--disk %s: unknown key '%s'", d->spec,
			 key);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, errlen, "--disk %s: bad value '%s' for %s", d->spec, val,
		 key);
	return -EINVAL;
}

/*
 * snapshot=on keeps the guest's writes in a page-cached throwaway file:
 * O_DIRECT buys nothing there (no data outlives microvm), so cache=none
 * typed out is refused and the default becomes writeback.
 */
static int disk_snapshot_check(struct disk_config *d, char *err,
			       size_t errlen)
{
	if (d->readonly) {
		snprintf(err, errlen,
			 "--disk %s: snapshot=on and readonly=on exclude each other (a read-only disk is never written anyway)",
			 d->spec);
		return -EINVAL;
	}
	if (d->cache_set && d->cache == CONFIG_CACHE_NONE) {
		snprintf(err, errlen,
			 "--disk %s: snapshot=on does not combine with cache=none (the throwaway overlay is page-cached); use cache=writeback or leave cache out",
			 d->spec);
		return -EINVAL;
	}
	if (!d->cache_set)
		d->cache = CONFIG_CACHE_WRITEBACK;
	return 0;
}

/*
 * engine=vhost: the module reads and writes the image itself (with the
 * open flags cache= gave it) and has none of the VMM threads' knobs. One message names the
 * first setting it cannot honour.
 */
static int disk_vhost_check(const struct disk_config *d, char *err,
			    size_t errlen)
{
	const char *bad = NULL;

	if (d->snapshot)
		bad = "snapshot=on (the throwaway overlay lives in microvm)";
	else if (d->defer_set)
		bad = "defer (signalling is the module's)";
	else if (d->coalesce_off)
		bad = "irq-coalesce=off (the module raises the interrupts)";
	else if (d->irq_hold_us || d->irq_hold_max)
		bad = "irq-hold-us or irq-hold-max (the module raises the interrupts)";
	else if (rl_config_active(&d->rl))
		bad = "iops or bps (the module cannot hold requests back)";
	if (!bad)
		return 0;
	snprintf(err, errlen, "--disk %s: engine=vhost does not combine with %s; use engine=io_uring for it",
		 d->spec, bad);
	return -EINVAL;
}

int cli_parse_disk(const char *spec, struct disk_config *d, char *err,
		   size_t errlen)
{
	char *copy, *tok, *save = NULL;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->spec = strdup(spec);
	copy = strdup(spec);
	if (!copy || !d->spec) {
		ret = -ENOMEM;
		goto out;
	}
	tok = strtok_r(copy, ",", &save);
	if (!tok || spec[0] == ',') {
		snprintf(err, errlen, "--disk '%s': no image path", spec);
		ret = -EINVAL;
		goto out;
	}
	d->path = strdup(tok);
	if (!d->path)
		ret = -ENOMEM;
	while (!ret && (tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen,
				 "--disk %s: '%s' is not key=value", spec, tok);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = disk_key(d, tok, eq + 1, err, errlen);
	}
	if (!ret && d->engine == CONFIG_ENGINE_VHOST)
		ret = disk_vhost_check(d, err, errlen);
	if (!ret && d->snapshot)
		ret = disk_snapshot_check(d, err, errlen);
	if (!ret && d->irq_hold_us && d->defer_off) {
		snprintf(err, errlen,
			 "--disk %s: irq-hold-us holds a batch's interrupt, and defer=off has no batches; drop one of them",
			 spec);
		ret = -EINVAL;
	}
	if (!ret && ((d->rl.ops.one_time_burst && !d->rl.ops.size) ||
		     (d->rl.bandwidth.one_time_burst &&
		      !d->rl.bandwidth.size))) {
		snprintf(err, errlen,
			 "--disk %s: iops-burst needs iops and bps-burst needs bps",
			 spec);
		ret = -EINVAL;
	}
	if (!ret && d->irq_hold_max && !d->irq_hold_us) {
		snprintf(err, errlen,
			 "--disk %s: irq-hold-max ends a hold early, so it needs irq-hold-us",
			 spec);
		ret = -EINVAL;
	}
	if (!ret && d->coalesce_off && d->transport != DISK_TRANSPORT_MMIO) {
		snprintf(err, errlen,
			 "--disk %s: irq-coalesce=off needs transport=mmio (MSI-X on pci raises one message per notification anyway)",
			 spec);
		ret = -EINVAL;
	}
out:
	free(copy);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret)
		config_disk_free(d);
	return ret;
}

/* *@dst = a copy of @s, the old one freed; -ENOMEM leaves *@dst as it was. */
static int set_str(char **dst, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* --memory SIZE[,merge=on|off]: the size, then key=value pairs. */
static int memory_keys(const char *arg, char *keys, struct vm_config *cfg,
		       char *err, size_t errlen)
{
	char *tok, *eq, *save = NULL;

	for (tok = strtok_r(keys, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, errlen,
				 "--memory %s: '%s' is not key=value", arg,
				 tok);
			return -EINVAL;
		}
		*eq = '\0';
		if (strcmp(tok, "merge")) {
			snprintf(err, errlen, "--memory %s: unknown key '%s'",
				 arg, tok);
			return -EINVAL;
		}
		if (parse_onoff(eq + 1, &cfg->memory_merge)) {
			snprintf(err, errlen,
				 "--memory %s: bad value '%s' for merge", arg,
				 eq + 1);
			return -EINVAL;
		}
	}
	return 0;
}

/* --cpus N[,smt=on|off]: the count, then Firecracker's smt rule. */
static int cpus_option(const char *arg, struct vm_config *cfg, char *err,
		       size_t errlen)
{
	const char *keys = strchr(arg, ',');
	size_t len = keys ? (size_t)(keys - arg) : strlen(arg);
	unsigned long n = 0;
	bool smt = false;
	char num[16];
	int ret;

	if (len < sizeof(num)) {
		memcpy(num, arg, len);
		num[len] = '\0';
	}
	if (len >= sizeof(num) || parse_uint(num, CONFIG_MAX_CPUS, &n) ||
	    n == 0) {
		snprintf(err, errlen, "--cpus %s: must be a number from 1 to %d",
			 arg, CONFIG_MAX_CPUS);
		return -EINVAL;
	}
	if (keys && (strncmp(keys, ",smt=", 5) ||
		     parse_onoff(keys + 5, &smt))) {
		snprintf(err, errlen,
			 "--cpus %s: '%s' is not smt=on or smt=off", arg,
			 keys + 1);
		return -EINVAL;
	}
	ret = config_check_smt(n, smt);
	if (ret == -EOPNOTSUPP)
		snprintf(err, errlen,
			 "--cpus %s: smt=on is not supported on this architecture (as Firecracker's aarch64)",
			 arg);
	else if (ret)
		snprintf(err, errlen,
			 "--cpus %s: smt=on needs 1 or an even number of vCPUs (two threads per core)",
			 arg);
	if (ret)
		return ret;
	cfg->cpus = n;
	cfg->smt = smt;
	return 0;
}

static int memory_option(const char *arg, struct vm_config *cfg, char *err,
			 size_t errlen)
{
	char *copy = strdup(arg), *keys;
	int ret;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (set_str(&cfg->memory_arg, arg)) {
		free(copy);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cfg->memory_set = true;
	keys = strchr(copy, ',');
	if (keys)
		*keys++ = '\0';
	ret = cli_parse_size(copy, &cfg->memory);
	if (ret) {
		snprintf(err, errlen,
			 "--memory %s: not a size (use e.g. 512M, 2G)", arg);
	} else if (cfg->memory < CONFIG_MIN_MEMORY) {
		snprintf(err, errlen, "--memory %s: too small, at least %lluM",
			 arg, CONFIG_MIN_MEMORY >> 20);
		ret = -EINVAL;
	} else if (keys && !*keys) {
		snprintf(err, errlen, "--memory %s: nothing after ','", arg);
		ret = -EINVAL;
	} else if (keys) {
		ret = memory_keys(arg, keys, cfg, err, errlen);
	}
	free(copy);
	return ret;
}

enum { OPT_KERNEL = 256, OPT_INITRD, OPT_CMDLINE, OPT_CPUS, OPT_MEMORY,
       OPT_DISK, OPT_TIMEOUT, OPT_STATS, OPT_SECCOMP, OPT_VERBOSE, OPT_HELP,
       OPT_CONSOLE, OPT_VERSION, OPT_VSOCK, OPT_NET,
       /* Firecracker's (cli_fc_option()) */
       OPT_API_SOCK, OPT_CONFIG_FILE, OPT_ID, OPT_NO_API, OPT_BOOT_TIMER,
       OPT_ENABLE_PCI, OPT_LOG_PATH, OPT_LEVEL, OPT_MODULE, OPT_SHOW_LEVEL,
       OPT_SHOW_ORIGIN, OPT_METRICS_PATH, OPT_MAX_PAYLOAD, OPT_START_US,
       OPT_START_CPU_US, OPT_PARENT_CPU_US, OPT_NO_SECCOMP, OPT_METADATA,
       OPT_MMDS_LIMIT, OPT_RESTORE, OPT_RESTORE_DRIVE, OPT_BASE_FILE,
       OPT_DIFF_FILE };

static const struct option options[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "cmdline", required_argument, NULL, OPT_CMDLINE },
	{ "console", required_argument, NULL, OPT_CONSOLE },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "vsock", required_argument, NULL, OPT_VSOCK },
	{ "net", required_argument, NULL, OPT_NET },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "api-sock", required_argument, NULL, OPT_API_SOCK },
	{ "config-file", required_argument, NULL, OPT_CONFIG_FILE },
	{ "id", required_argument, NULL, OPT_ID },
	{ "no-api", no_argument, NULL, OPT_NO_API },
	{ "boot-timer", no_argument, NULL, OPT_BOOT_TIMER },
	{ "enable-pci", no_argument, NULL, OPT_ENABLE_PCI },
	{ "log-path", required_argument, NULL, OPT_LOG_PATH },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "module", required_argument, NULL, OPT_MODULE },
	{ "show-level", no_argument, NULL, OPT_SHOW_LEVEL },
	{ "show-log-origin", no_argument, NULL, OPT_SHOW_ORIGIN },
	{ "metrics-path", required_argument, NULL, OPT_METRICS_PATH },
	{ "http-api-max-payload-size", required_argument, NULL,
	  OPT_MAX_PAYLOAD },
	{ "start-time-us", required_argument, NULL, OPT_START_US },
	{ "start-time-cpu-us", required_argument, NULL, OPT_START_CPU_US },
	{ "parent-cpu-time-us", required_argument, NULL, OPT_PARENT_CPU_US },
	{ "no-seccomp", no_argument, NULL, OPT_NO_SECCOMP },
	{ "metadata", required_argument, NULL, OPT_METADATA },
	{ "mmds-size-limit", required_argument, NULL, OPT_MMDS_LIMIT },
	{ "restore", required_argument, NULL, OPT_RESTORE },
	{ "restore-drive", required_argument, NULL, OPT_RESTORE_DRIVE },
	{ "base-file", required_argument, NULL, OPT_BASE_FILE },
	{ "diff-file", required_argument, NULL, OPT_DIFF_FILE },
	{ NULL, 0, NULL, 0 },
};

/* The name of option @opt, for messages. */
static const char *opt_name(int opt)
{
	const struct option *o;

	for (o = options; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/* A file name option (--kernel, --log-path, ...): non-empty, owned. */
static int path_option(int opt, const char *arg, char **dst, char *err,
		       size_t errlen)
{
	if (!*arg) {
		snprintf(err, errlen, "--%s '': needs a file name",
			 opt_name(opt));
		return -EINVAL;
	}
	if (set_str(dst, arg)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Firecracker's instance id rule: 1-64 of [A-Za-z0-9-]. */
static bool valid_instance_id(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz"
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");

	return n && n == strlen(s) && n <= 64;
}

static int u64_option(int opt, const char *arg, uint64_t min, uint64_t max,
		      uint64_t *out, char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end || errno || v < min || v > max) {
		snprintf(err, errlen, "--%s %s: must be a number from %llu to %llu",
			 opt_name(opt), arg, (unsigned long long)min,
			 (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int level_option(const char *arg, struct vm_config *cfg, char *err,
			size_t errlen)
{
	static const char *const names[] = { "Off", "Error", "Warning",
					     "Info", "Debug", "Trace" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(arg, names[i])) {
			cfg->log_level = (enum config_log_level)(i + 1);
			return 0;
		}
	}
	if (!strcasecmp(arg, "warn")) { /* as Firecracker's logger */
		cfg->log_level = CONFIG_LOG_WARNING;
		return 0;
	}
	snprintf(err, errlen,
		 "--level %s: must be Error, Warning, Info, Debug, Trace or Off",
		 arg);
	return -EINVAL;
}

/* Firecracker's options; 1: not one of them. */
static int cli_fc_option(int opt, const char *arg, struct vm_config *cfg,
			 char *err, size_t errlen)
{
	switch (opt) {
	case OPT_API_SOCK:
		if (strlen(arg) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, errlen,
				 "--api-sock %s: longer than the %zu bytes a Unix socket path holds",
				 arg, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
			return -EINVAL;
		}
		return path_option(opt, arg, &cfg->api_sock, err, errlen);
	case OPT_CONFIG_FILE:
		return path_option(opt, arg, &cfg->config_file, err, errlen);
	case OPT_ID:
		if (!valid_instance_id(arg)) {
			snprintf(err, errlen,
				 "--id %s: must be 1 to 64 letters, digits or '-'",
				 arg);
			return -EINVAL;
		}
		return path_option(opt, arg, &cfg->id, err, errlen);
	case OPT_NO_API:
		cfg->no_api = true;
		return 0;
	case OPT_BOOT_TIMER:
		cfg->boot_timer = true;
		return 0;
	case OPT_ENABLE_PCI:
		cfg->enable_pci = true;
		return 0;
	case OPT_LOG_PATH:
		return path_option(opt, arg, &cfg->log_path, err, errlen);
	case OPT_LEVEL:
		return level_option(arg, cfg, err, errlen);
	case OPT_MODULE:
		return path_option(opt, arg, &cfg->log_module, err, errlen);
	case OPT_SHOW_LEVEL:
		cfg->log_show_level = true;
		return 0;
	case OPT_SHOW_ORIGIN:
		cfg->log_show_origin = true;
		return 0;
	case OPT_METRICS_PATH:
		return path_option(opt, arg, &cfg->metrics_path, err, errlen);
	case OPT_MAX_PAYLOAD:
		return u64_option(opt, arg, 1, MAX_API_PAYLOAD,
				  &cfg->api_max_payload, err, errlen);
	case OPT_START_US:
		return u64_option(opt, arg, 0, UINT64_MAX, &cfg->start_time_us,
				  err, errlen);
	case OPT_START_CPU_US:
		return u64_option(opt, arg, 0, UINT64_MAX,
				  &cfg->start_time_cpu_us, err, errlen);
	case OPT_PARENT_CPU_US:
		return u64_option(opt, arg, 0, UINT64_MAX,
				  &cfg->parent_cpu_time_us, err, errlen);
	case OPT_NO_SECCOMP: /* firecracker-go-sdk's default passes it */
		cfg->seccomp = CONFINE_OFF;
		return 0;
	case OPT_METADATA: /* flintlock always passes it */
		return path_option(opt, arg, &cfg->metadata, err, errlen);
	case OPT_MMDS_LIMIT:
		return u64_option(opt, arg, 1, MAX_API_PAYLOAD,
				  &cfg->mmds_size_limit, err, errlen);
	case OPT_RESTORE:
		return path_option(opt, arg, &cfg->restore, err, errlen);
	case OPT_BASE_FILE:
		return path_option(opt, arg, &cfg->rebase_base, err, errlen);
	case OPT_DIFF_FILE:
		return path_option(opt, arg, &cfg->rebase_diff, err, errlen);
	case OPT_RESTORE_DRIVE:
		if (cfg->nr_restore_drives >= CONFIG_MAX_DISKS) {
			snprintf(err, errlen, "--restore-drive %s: at most %d",
				 arg, CONFIG_MAX_DISKS);
			return -EINVAL;
		}
		if (set_str(&cfg->restore_drives[cfg->nr_restore_drives],
			    arg)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		cfg->nr_restore_drives++;
		return 0;
	default:
		return 1;
	}
}

static int disk_option(const char *arg, struct vm_config *cfg, char *err,
		       size_t errlen)
{
	struct disk_config *d = &cfg->disks[cfg->nr_disks];
	char id[16];
	int ret;

	if (cfg->nr_disks >= CONFIG_MAX_DISKS) {
		snprintf(err, errlen, "--disk %s: at most %d disks", arg,
			 CONFIG_MAX_DISKS);
		return -EINVAL;
	}
	ret = cli_parse_disk(arg, d, err, errlen);
	if (ret)
		return ret;
	/* The API's name for it (PATCH /drives/disk0). */
	snprintf(id, sizeof(id), "disk%u", cfg->nr_disks);
	if (set_str(&d->drive_id, id)) {
		config_disk_free(d);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cfg->nr_disks++;
	return 0;
}

/* One key=value of --vsock. */
static int vsock_key(struct config_vsock *v, const char *arg,
		     const char *key, const char *val, char *err,
		     size_t errlen)
{
	unsigned long long n;
	char *end;

	if (!strcmp(key, "cid")) {
		errno = 0;
		n = strtoull(val, &end, 10);
		if (errno || end == val || *end || val[0] == '-' ||
		    n < CONFIG_VSOCK_MIN_CID || n > CONFIG_VSOCK_MAX_CID) {
			snprintf(err, errlen,
				 "--vsock %s: cid '%s' must be %llu to %llu",
				 arg, val, CONFIG_VSOCK_MIN_CID,
				 CONFIG_VSOCK_MAX_CID);
			return -EINVAL;
		}
		v->guest_cid = n;
		return 0;
	}
	if (!strcmp(key, "uds")) {
		if (!*val || strlen(val) > CONFIG_VSOCK_MAX_UDS_PATH) {
			snprintf(err, errlen,
				 "--vsock %s: uds '%s' must be 1 to %u bytes (<uds>_<port> must fit a Unix socket path)",
				 arg, val, CONFIG_VSOCK_MAX_UDS_PATH);
			return -EINVAL;
		}
		return set_str(&v->uds_path, val);
	}
	if (!strcmp(key, "engine")) {
		if (!strcmp(val, "hybrid")) {
			v->engine = CONFIG_VSOCK_HYBRID;
		} else if (!strcmp(val, "vhost")) {
			v->engine = CONFIG_VSOCK_VHOST;
		} else {
			snprintf(err, errlen,
				 "--vsock %s: engine '%s' must be hybrid or vhost",
				 arg, val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "transport")) {
		if (!strcmp(val, "pci")) {
			v->transport = DISK_TRANSPORT_PCI;
		} else if (!strcmp(val, "mmio")) {
			v->transport = DISK_TRANSPORT_MMIO;
		} else {
			snprintf(err, errlen,
				 "--vsock %s: transport '%s' must be pci or mmio",
				 arg, val);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen, "--vsock %s: unknown key '%s'", arg, key);
	return -EINVAL;
}

/* The keys together: uds= for the hybrid engine, none for vhost. */
static int vsock_check(const struct config_vsock *v, const char *arg,
		       char *err, size_t errlen)
{
	if (v->engine == CONFIG_VSOCK_VHOST && v->uds_path) {
		snprintf(err, errlen,
			 "--vsock %s: uds= and engine=vhost exclude each other (with engine=vhost host programs use AF_VSOCK to the guest's cid)",
			 arg);
		return -EINVAL;
	}
	if (v->engine == CONFIG_VSOCK_VHOST && !v->guest_cid) {
		snprintf(err, errlen, "--vsock %s: needs cid=N", arg);
		return -EINVAL;
	}
	if (v->engine == CONFIG_VSOCK_HYBRID &&
	    (!v->guest_cid || !v->uds_path)) {
		snprintf(err, errlen,
			 "--vsock %s: needs cid=N and uds=PATH (or engine=vhost)",
			 arg);
		return -EINVAL;
	}
	return 0;
}

/* --vsock cid=N,uds=PATH|engine=vhost[,transport=pci|mmio] */
static int vsock_option(const char *arg, struct vm_config *cfg, char *err,
			size_t errlen)
{
	struct config_vsock *v = &cfg->vsock;
	char *copy, *tok, *eq, *save = NULL;
	int ret = 0;

	if (v->set) {
		snprintf(err, errlen,
			 "--vsock %s: one vsock device at most (as Firecracker's)",
			 arg);
		return -EINVAL;
	}
	copy = strdup(arg);
	if (!copy)
		goto err_nomem;
	v->guest_cid = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, errlen,
				 "--vsock %s: '%s' is not key=value", arg, tok);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = vsock_key(v, arg, tok, eq + 1, err, errlen);
	}
	free(copy);
	if (ret == -ENOMEM)
		goto err_nomem;
	if (!ret)
		ret = vsock_check(v, arg, err, errlen);
	if (ret) {
		free(v->uds_path);
		memset(v, 0, sizeof(*v));
		return ret;
	}
	v->set = true;
	return 0;

err_nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static int cli_option(int opt, const char *arg, struct vm_config *cfg,
		      char *err, size_t errlen)
{
	unsigned long n;
	int ret;

	ret = cli_fc_option(opt, arg, cfg, err, errlen);
	if (ret != 1)
		return ret;
	switch (opt) {
	case OPT_KERNEL:
		return path_option(opt, arg, &cfg->kernel, err, errlen);
	case OPT_INITRD:
		return path_option(opt, arg, &cfg->initrd, err, errlen);
	case OPT_CMDLINE:
		if (set_str(&cfg->cmdline, arg)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		return 0;
	case OPT_CONSOLE:
		return path_option(opt, arg, &cfg->console, err, errlen);
	case OPT_CPUS:
		return cpus_option(arg, cfg, err, errlen);
	case OPT_MEMORY:
		return memory_option(arg, cfg, err, errlen);
	case OPT_VSOCK:
		return vsock_option(arg, cfg, err, errlen);
	case OPT_NET:
		return cli_net_option(arg, cfg, err, errlen);
	case OPT_DISK:
		return disk_option(arg, cfg, err, errlen);
	case OPT_TIMEOUT:
		if (parse_uint(arg, MAX_TIMEOUT, &n) || n == 0) {
			snprintf(err, errlen,
				 "--timeout %s: must be 1 to %u seconds", arg,
				 MAX_TIMEOUT);
			return -EINVAL;
		}
		cfg->timeout = n;
		return 0;
	case OPT_STATS:
		cfg->stats = true;
		return 0;
	case OPT_SECCOMP:
		if (confine_parse_mode(arg, &cfg->seccomp)) {
			snprintf(err, errlen,
				 "--seccomp %s: must be on, kill, log or off",
				 arg);
			return -EINVAL;
		}
		return 0;
	case OPT_VERBOSE:
		cfg->verbose++;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The command line when --cmdline is not given. With no initramfs the
 * kernel needs to be told where its root is, so that `microvm --kernel
 * bzImage --disk root.raw` boots as written: the first disk is vda (one
 * transport enumerates its disks in --disk order). virtio-blk probes
 * before the root is mounted, so no rootwait; a read-only disk is
 * mounted ro, since ext4 refuses rw on a read-only device.
 */
static const char *cli_default_cmdline(const struct vm_config *cfg)
{
	if (cfg->initrd || !cfg->nr_disks)
		return CLI_CMDLINE_CONSOLE;
	return cfg->disks[0].readonly ? CLI_CMDLINE_ROOT_RO : CLI_CMDLINE_ROOT_RW;
}

/*
 * How the modes combine, once the command line is read: --no-api and
 * --api-sock exclude each other; without --kernel, --config-file or --id
 * serve the API on Firecracker's default socket unless --no-api; the API
 * and the config file start from Firecracker's 128 MiB unless --memory.
 */
/*
 * --restore DIR: the machine comes from the snapshot; what would
 * configure another is refused, naming the option.
 */
static int cli_restore_mode(struct vm_config *cfg, char *err, size_t errlen)
{
	const char *clash = cfg->kernel ? "--kernel" :
			    cfg->initrd ? "--initrd" :
			    cfg->cmdline ? "--cmdline" :
			    cfg->nr_disks ? "--disk" :
			    cfg->nr_nets ? "--net" :
			    cfg->vsock.set ? "--vsock" :
			    cfg->config_file ? "--config-file" :
			    cfg->memory_set ? "--memory" : NULL;

	if (clash) {
		snprintf(err, errlen, "--restore %s: the machine comes from "
			 "the snapshot; %s cannot be given with it",
			 cfg->restore, clash);
		return -EINVAL;
	}
	return 0;
}

static int cli_modes(struct vm_config *cfg, char *err, size_t errlen)
{
	if (cfg->rebase_base || cfg->rebase_diff) {
		if (cfg->rebase_base && cfg->rebase_diff && !cfg->kernel &&
		    !cfg->restore && !cfg->api_sock && !cfg->config_file)
			return 0;
		snprintf(err, errlen, "--base-file and --diff-file go together "
			 "and alone: they write a Diff snapshot's memory file "
			 "over its base, and run no guest");
		return -EINVAL;
	}
	if (cfg->restore)
		return cli_restore_mode(cfg, err, errlen);
	if (cfg->nr_restore_drives) {
		snprintf(err, errlen, "--restore-drive %s: only with --restore",
			 cfg->restore_drives[0]);
		return -EINVAL;
	}
	if (cfg->no_api && cfg->api_sock) {
		snprintf(err, errlen,
			 "--no-api and --api-sock %s exclude each other",
			 cfg->api_sock);
		return -EINVAL;
	}
	if (cfg->no_api && !cfg->config_file && !cfg->kernel) {
		snprintf(err, errlen,
			 "--no-api needs --config-file (or --kernel): nothing else would configure the VM");
		return -EINVAL;
	}
	if (!cfg->api_sock && !cfg->no_api && !cfg->kernel &&
	    (cfg->config_file || cfg->id) &&
	    set_str(&cfg->api_sock, FC_DEFAULT_API_SOCK))
		return -ENOMEM;
	if ((cfg->api_sock || cfg->config_file) && !cfg->memory_set) {
		cfg->memory = CONFIG_FC_DEFAULT_MEMORY;
		if (set_str(&cfg->memory_arg, CONFIG_FC_DEFAULT_MEMORY_ARG))
			return -ENOMEM;
	}
	if (!cfg->kernel && !cfg->api_sock && !cfg->config_file) {
		snprintf(err, errlen, "no --kernel given (see --help)");
		return -EINVAL;
	}
	return 0;
}

static enum cli_result cli_finish(struct vm_config *cfg, char *err,
				  size_t errlen)
{
	int ret = cli_modes(cfg, err, errlen);

	/* The command line's own default only for its own --kernel. */
	if (!ret && cfg->kernel && !cfg->cmdline)
		ret = set_str(&cfg->cmdline, cli_default_cmdline(cfg));
	if (!ret && cfg->config_file)
		ret = fc_load_config_file(cfg, cfg->config_file, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret)
		return CLI_ERROR;
	if (!cfg->kernel && !cfg->api_sock && !cfg->restore &&
	    !cfg->rebase_base) {
		snprintf(err, errlen,
			 "--config-file %s: no \"boot-source\", and no --kernel or --api-sock to give one",
			 cfg->config_file);
		return CLI_ERROR;
	}
	return CLI_RUN;
}

enum cli_result cli_parse(int argc, char **argv, struct vm_config *cfg,
			  char *err, size_t errlen)
{
	int opt;

	cfg->cpus = 1;
	cfg->memory = CONFIG_DEFAULT_MEMORY;
	if (set_str(&cfg->memory_arg, CONFIG_DEFAULT_MEMORY_ARG)) {
		snprintf(err, errlen, "out of memory");
		return CLI_ERROR;
	}
	/* 0, not 1: glibc then forgets the argv of any earlier scan. */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == OPT_HELP) {
			fputs(usage_text, stdout);
			return CLI_EXIT;
		}
		if (opt == OPT_VERSION) {
			printf("microvm v%s (git %s)\n", MICROVM_VERSION,
			       microvm_git_revision);
			return CLI_EXIT;
		}
		if (opt == '?') {
			if (optopt)
				snprintf(err, errlen,
					 "option %s needs a value",
					 argv[optind - 1]);
			else
				snprintf(err, errlen,
					 "unknown option '%s' (see --help)",
					 argv[optind - 1]);
			return CLI_ERROR;
		}
		if (cli_option(opt, optarg, cfg, err, errlen))
			return CLI_ERROR;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)",
			 argv[optind]);
		return CLI_ERROR;
	}
	return cli_finish(cfg, err, errlen);
}

void cli_free(struct vm_config *cfg)
{
	config_free(cfg);
}
