// SPDX-License-Identifier: Apache-2.0
/*
 * The jailer's command line, Firecracker's (docs/jailer.md): --id,
 * --exec-file, --uid, --gid required; --chroot-base-dir, --netns,
 * --daemonize, --new-pid-ns, --cgroup-version, --cgroup (repeatable),
 * --parent-cgroup, --resource-limit (repeatable); "--" ends them and the
 * rest goes to the exec file. Values take "--opt VALUE" or "--opt=VALUE".
 * Every bad value gets one line naming it; nothing is touched here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jail.h"

static int err_fd = STDERR_FILENO;

void jail_err_set_fd(int fd)
{
	err_fd = fd;
}

void jail_err(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n = snprintf(line, sizeof(line), "microvm-jailer: ");

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* One write: the line arrives whole, or the reader sees nothing. */
	if (write(err_fd, line, strlen(line)) < 0)
		return;
}

const char *jail_usage(void)
{
	return "usage: microvm-jailer --id ID --exec-file PATH --uid N --gid N\n"
	       "    [--chroot-base-dir DIR (default " JAIL_DEFAULT_BASE ")]\n"
	       "    [--netns PATH] [--daemonize] [--new-pid-ns]\n"
	       "    [--cgroup-version 1|2] [--cgroup FILE=VALUE]...\n"
	       "    [--parent-cgroup PATH]\n"
	       "    [--resource-limit fsize=N|no-file=N]...\n"
	       "    [-- ARGS for the exec file]\n"
	       "See docs/jailer.md.\n";
}

const char *jail_exec_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Firecracker's rule: 1 to 64 of [A-Za-z0-9-]. */
static int check_id(const char *id)
{
	size_t len = strlen(id);

	if (len == 0 || len > JAIL_ID_MAX) {
		jail_err("--id: '%s' must be 1 to %d characters", id,
			 JAIL_ID_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		char c = id[i];

		if (!(c == '-' || (c >= '0' && c <= '9') ||
		      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
			jail_err("--id: '%s' may hold only letters, digits and '-'",
				 id);
			return -EINVAL;
		}
	}
	return 0;
}

/* A decimal u64 with nothing else around it. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* uid/gid: (uid_t)-1 means "unchanged" to setresuid(), so refuse it. */
static int parse_id_num(const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v >= UINT32_MAX) {
		jail_err("%s: '%s' is not a number from 0 to %u", opt, s,
			 UINT32_MAX - 1);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A path below a cgroup mount: relative, no "." or ".." components. */
static int check_rel_path(const char *opt, const char *p)
{
	const char *c = p;

	if (*p == '\0' || *p == '/') {
		jail_err("%s: '%s' must be a relative path", opt, p);
		return -EINVAL;
	}
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.')) {
			jail_err("%s: '%s' has an empty, '.' or '..' component",
				 opt, p);
			return -EINVAL;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	return 0;
}

static int parse_cgroup(struct jail_config *cfg, char *arg)
{
	char *eq = strchr(arg, '=');

	if (cfg->n_cgroups == JAIL_CGROUPS_MAX) {
		jail_err("--cgroup: more than %d given ('%s')",
			 JAIL_CGROUPS_MAX, arg);
		return -EINVAL;
	}
	/* FILE is "<controller>.<key>", one name in the cgroup directory. */
	if (!eq || eq == arg || !memchr(arg, '.', (size_t)(eq - arg)) ||
	    arg[0] == '.' || memchr(arg, '/', (size_t)(eq - arg)) ||
	    strchr(eq + 1, '\n')) {
		jail_err("--cgroup: '%s' is not <controller>.<file>=<value>",
			 arg);
		return -EINVAL;
	}
	*eq = '\0';
	cfg->cgroups[cfg->n_cgroups].file = arg;
	cfg->cgroups[cfg->n_cgroups].value = eq + 1;
	cfg->n_cgroups++;
	return 0;
}

static int parse_rlimit(struct jail_config *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	uint64_t v;

	if (!eq || parse_u64(eq + 1, &v)) {
		jail_err("--resource-limit: '%s' is not <resource>=<number>",
			 arg);
		return -EINVAL;
	}
	if ((size_t)(eq - arg) == 5 && !strncmp(arg, "fsize", 5)) {
		cfg->has_fsize = true;
		cfg->fsize = v;
	} else if ((size_t)(eq - arg) == 7 && !strncmp(arg, "no-file", 7)) {
		if (v == 0) {
			jail_err("--resource-limit: '%s' leaves no file descriptor",
				 arg);
			return -EINVAL;
		}
		cfg->nofile = v;
	} else {
		jail_err("--resource-limit: unknown resource in '%s' (fsize or no-file)",
			 arg);
		return -EINVAL;
	}
	return 0;
}

enum opt {
	OPT_ID, OPT_EXEC_FILE, OPT_UID, OPT_GID, OPT_CHROOT_BASE, OPT_NETNS,
	OPT_DAEMONIZE, OPT_NEW_PID_NS, OPT_CGROUP_VERSION, OPT_CGROUP,
	OPT_PARENT_CGROUP, OPT_RESOURCE_LIMIT, OPT_HELP, OPT_COUNT
};

static const struct {
	const char *name;
	bool value;    /* takes a value */
	bool repeated; /* may be given more than once */
} opts[OPT_COUNT] = {
	[OPT_ID] = { "--id", true, false },
	[OPT_EXEC_FILE] = { "--exec-file", true, false },
	[OPT_UID] = { "--uid", true, false },
	[OPT_GID] = { "--gid", true, false },
	[OPT_CHROOT_BASE] = { "--chroot-base-dir", true, false },
	[OPT_NETNS] = { "--netns", true, false },
	[OPT_DAEMONIZE] = { "--daemonize", false, false },
	[OPT_NEW_PID_NS] = { "--new-pid-ns", false, false },
	[OPT_CGROUP_VERSION] = { "--cgroup-version", true, false },
	[OPT_CGROUP] = { "--cgroup", true, true },
	[OPT_PARENT_CGROUP] = { "--parent-cgroup", true, false },
	[OPT_RESOURCE_LIMIT] = { "--resource-limit", true, true },
	[OPT_HELP] = { "--help", false, false },
};

/* The option @arg names ("--opt" or "--opt=value"), or OPT_COUNT. */
static enum opt find_opt(const char *arg, char **inline_value)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	*inline_value = NULL;
	for (int i = 0; i < OPT_COUNT; i++) {
		if (strlen(opts[i].name) == n && !strncmp(arg, opts[i].name, n)) {
			if (eq)
				*inline_value = (char *)eq + 1;
			return (enum opt)i;
		}
	}
	return OPT_COUNT;
}

static int set_opt(struct jail_config *cfg, enum opt o, char *v)
{
	switch (o) {
	case OPT_ID: cfg->id = v; return check_id(v);
	case OPT_EXEC_FILE: cfg->exec_file = v; return 0;
	case OPT_UID: return parse_id_num("--uid", v, &cfg->uid);
	case OPT_GID: return parse_id_num("--gid", v, &cfg->gid);
	case OPT_CHROOT_BASE: cfg->chroot_base = v; return 0;
	case OPT_NETNS: cfg->netns = v; return 0;
	case OPT_DAEMONIZE: cfg->daemonize = true; return 0;
	case OPT_NEW_PID_NS: cfg->new_pid_ns = true; return 0;
	case OPT_CGROUP_VERSION:
		if (strcmp(v, "1") && strcmp(v, "2")) {
			jail_err("--cgroup-version: '%s' is not 1 or 2", v);
			return -EINVAL;
		}
		cfg->cgroup_version = v[0] - '0';
		return 0;
	case OPT_CGROUP: return parse_cgroup(cfg, v);
	case OPT_PARENT_CGROUP:
		cfg->parent_cgroup = v;
		return check_rel_path("--parent-cgroup", v);
	case OPT_RESOURCE_LIMIT: return parse_rlimit(cfg, v);
	case OPT_HELP: cfg->help = true; return 0;
	case OPT_COUNT: break;
	}
	return -EINVAL;
}

static int check_required(const struct jail_config *cfg)
{
	static const enum opt required[] = { OPT_ID, OPT_EXEC_FILE, OPT_UID,
					     OPT_GID };
	const bool have[] = { cfg->id, cfg->exec_file, cfg->uid != UINT32_MAX,
			      cfg->gid != UINT32_MAX };

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!have[i]) {
			jail_err("%s is required (see --help)",
				 opts[required[i]].name);
			return -EINVAL;
		}
	}
	if (*cfg->exec_file == '\0' || *jail_exec_name(cfg->exec_file) == '\0') {
		jail_err("--exec-file: '%s' does not name a file",
			 cfg->exec_file);
		return -EINVAL;
	}
	return 0;
}

int jail_parse_args(int argc, char **argv, struct jail_config *cfg)
{
	bool seen[OPT_COUNT] = { false };
	int i;

	*cfg = (struct jail_config){ .uid = UINT32_MAX, .gid = UINT32_MAX,
				     .chroot_base = JAIL_DEFAULT_BASE,
				     .cgroup_version = 1,
				     .nofile = JAIL_DEFAULT_NOFILE };
	for (i = 1; i < argc; i++) {
		char *arg = argv[i], *v;
		enum opt o;

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		o = find_opt(arg, &v);
		if (o == OPT_COUNT) {
			jail_err("unknown option '%s' (see --help)", arg);
			return -EINVAL;
		}
		if (seen[o] && !opts[o].repeated) {
			jail_err("%s given twice ('%s')", opts[o].name, arg);
			return -EINVAL;
		}
		seen[o] = true;
		if (!opts[o].value && v) {
			jail_err("%s takes no value ('%s')", opts[o].name, arg);
			return -EINVAL;
		}
		if (opts[o].value && !v) {
			if (i + 1 >= argc) {
				jail_err("%s needs a value", opts[o].name);
				return -EINVAL;
			}
			v = argv[++i];
		}
		if (set_opt(cfg, o, v))
			return -EINVAL;
	}
	cfg->extra = argv + i;
	cfg->n_extra = argc - i;
	if (cfg->help)
		return 0;
	return check_required(cfg);
}
