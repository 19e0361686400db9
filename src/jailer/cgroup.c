// SPDX-License-Identifier: Apache-2.0
/*
 * The jail's cgroup, by Firecracker's rules (docs/jailer.md): the
 * hierarchies are found in /proc/mounts; v1 makes <mount>/<parent>/<id>
 * in the hierarchy of each --cgroup file's controller, v2 makes it under
 * the cgroup2 mount (enabling the controllers on the way down) when any
 * --cgroup is given, and otherwise moves into <parent> only if it exists.
 * The values are written first, then the process joins.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"

#define CG_PATH_MAX 4096

/* /proc/mounts escapes ' ', '\t', '\n', '\\' as \ooo: undo in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Whether the comma-separated @opts holds @word. */
static bool has_option(const char *opts, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

/*
 * The mount point of the cgroup2 hierarchy (@controller NULL) or of the
 * v1 hierarchy that has @controller. Return: 0 or -ENOENT.
 */
static int find_mount(const char *controller, char *mnt, size_t len)
{
	char line[4096], dev[256], dir[PATH_MAX], type[64], opts[1024];
	FILE *f = fopen("/proc/mounts", "re");
	int ret = -ENOENT;

	if (!f) {
		jail_err("reading /proc/mounts: %s", strerror(errno));
		return -errno;
	}
	while (ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %4095s %63s %1023s", dev, dir, type,
			   opts) != 4)
			continue;
		if (controller ? strcmp(type, "cgroup") ||
					 !has_option(opts, controller)
			       : strcmp(type, "cgroup2"))
			continue;
		unescape(dir);
		if ((size_t)snprintf(mnt, len, "%s", dir) < len)
			ret = 0;
	}
	fclose(f);
	return ret;
}

/* "@a/@b" into @out; -ENAMETOOLONG (with its line) when it does not fit. */
static int join_path(char *out, size_t len, const char *a, const char *b)
{
	int n = snprintf(out, len, "%s/%s", a, b);

	if (n < 0 || (size_t)n >= len) {
		jail_err("cgroup path %s/%s is too long", a, b);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int write_file(const char *dir, const char *file, const char *value)
{
	char path[CG_PATH_MAX];
	size_t n = strlen(value);
	int fd, err;

	if (join_path(path, sizeof(path), dir, file))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, value, n) != (ssize_t)n) {
		err = errno;
		jail_err("writing '%s' to %s: %s", value, path, strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	close(fd);
	return 0;
}

/* A v1 cpuset takes no task before its cpus and mems are set: copy the
 * parent's into a new one whose files are empty. */
static int cpuset_inherit(const char *dir)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	char path[CG_PATH_MAX], value[4096];

	for (size_t i = 0; i < 2; i++) {
		ssize_t n = 0;
		int fd, ret;

		if (join_path(path, sizeof(path), dir, files[i]))
			return -ENAMETOOLONG;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, value, sizeof(value) - 1);
			close(fd);
		}
		if (n > 1)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/../%s", dir,
				     files[i]) >= sizeof(path))
			return -ENAMETOOLONG;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, value, sizeof(value) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			jail_err("reading %s: %s", path,
				 n < 0 ? strerror(errno) : "empty");
			return n < 0 ? -errno : -EINVAL;
		}
		value[n] = '\0';
		ret = write_file(dir, files[i], value);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * mkdir every component of @rel below @mnt into @dir. For each directory
 * passed on the way (the mount itself included, the last one not), v2
 * writes @enable to its cgroup.subtree_control; v1's cpuset initialises
 * each new directory.
 */
static int mkdir_below(const char *mnt, const char *rel, const char *enable,
		       bool cpuset, char *dir, size_t len)
{
	size_t at = (size_t)snprintf(dir, len, "%s", mnt);

	for (const char *c = rel; *c;) {
		size_t n = strcspn(c, "/");
		int ret;

		if (enable && *enable) {
			ret = write_file(dir, "cgroup.subtree_control", enable);
			if (ret)
				return ret;
		}
		if (at + 1 + n >= len) {
			jail_err("cgroup path %s/%s is too long", mnt, rel);
			return -ENAMETOOLONG;
		}
		dir[at++] = '/';
		memcpy(dir + at, c, n);
		at += n;
		dir[at] = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			int err = errno;

			jail_err("mkdir %s: %s", dir, strerror(err));
			return -err;
		}
		if (cpuset && (ret = cpuset_inherit(dir)))
			return ret;
		c += n;
		if (*c == '/')
			c++;
	}
	return 0;
}

/* The controller of a "<controller>.<key>" file, into @out. */
static void controller_of(const char *file, char *out, size_t len)
{
	size_t n = strcspn(file, ".");

	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), file);
}

static int join(const char *dir, const char *procs, pid_t pid)
{
	char num[24];

	snprintf(num, sizeof(num), "%d", (int)pid);
	return write_file(dir, procs, num);
}

/* Whether the "+c1 +c2" list @list has "+@c". */
static bool listed(const char *list, const char *c)
{
	size_t n = strlen(c);

	for (const char *p = list; (p = strchr(p, '+')); p++)
		if (!strncmp(p + 1, c, n) && (p[n + 1] == ' ' || !p[n + 1]))
			return true;
	return false;
}

/* v2: "+c1 +c2" for the controllers the --cgroup files name. */
static void v2_enable_list(const struct jail_config *cfg, char *out,
			   size_t len)
{
	char c[64];
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < cfg->n_cgroups; i++) {
		controller_of(cfg->cgroups[i].file, c, sizeof(c));
		/* cgroup.* files are the core's, no controller to enable. */
		if (!strcmp(c, "cgroup") || listed(out, c))
			continue;
		at += (size_t)snprintf(out + at, len - at, "%s+%s",
				       at ? " " : "", c);
		if (at >= len) {
			out[len - 1] = '\0';
			return;
		}
	}
}

static int cgroup_v2(const struct jail_config *cfg, const char *parent,
		     pid_t pid)
{
	char mnt[PATH_MAX], dir[CG_PATH_MAX], rel[CG_PATH_MAX], enable[512];
	struct stat st;
	int ret;

	if (find_mount(NULL, mnt, sizeof(mnt))) {
		jail_err("--cgroup-version 2: no cgroup2 file system in /proc/mounts");
		return -ENOENT;
	}
	if (cfg->n_cgroups == 0) {
		/* Firecracker: join <parent> when it exists, else stay. */
		if (join_path(dir, sizeof(dir), mnt, parent))
			return -ENAMETOOLONG;
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			return 0;
		return join(dir, "cgroup.procs", pid);
	}
	if (join_path(rel, sizeof(rel), parent, cfg->id))
		return -ENAMETOOLONG;
	v2_enable_list(cfg, enable, sizeof(enable));
	ret = mkdir_below(mnt, rel, enable, false, dir, sizeof(dir));
	for (size_t i = 0; !ret && i < cfg->n_cgroups; i++)
		ret = write_file(dir, cfg->cgroups[i].file,
				 cfg->cgroups[i].value);
	return ret ? ret : join(dir, "cgroup.procs", pid);
}

static int cgroup_v1(const struct jail_config *cfg, const char *parent,
		     pid_t pid)
{
	char mnt[PATH_MAX], dir[CG_PATH_MAX], rel[CG_PATH_MAX], c[64];
	int ret;

	if (join_path(rel, sizeof(rel), parent, cfg->id))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < cfg->n_cgroups; i++) {
		controller_of(cfg->cgroups[i].file, c, sizeof(c));
		if (find_mount(c, mnt, sizeof(mnt))) {
			jail_err("--cgroup %s: no cgroup v1 hierarchy has the '%s' controller",
				 cfg->cgroups[i].file, c);
			return -ENOENT;
		}
		ret = mkdir_below(mnt, rel, NULL, !strcmp(c, "cpuset"), dir,
				  sizeof(dir));
		if (!ret)
			ret = write_file(dir, cfg->cgroups[i].file,
					 cfg->cgroups[i].value);
		if (!ret)
			ret = join(dir, "tasks", pid);
		if (ret)
			return ret;
	}
	return 0;
}

int jail_cgroup_join(const struct jail_config *cfg, pid_t pid)
{
	const char *parent = cfg->parent_cgroup ? cfg->parent_cgroup
						: jail_exec_name(cfg->exec_file);

	if (cfg->cgroup_version == 2)
		return cgroup_v2(cfg, parent, pid);
	return cgroup_v1(cfg, parent, pid);
}
