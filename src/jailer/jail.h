/* SPDX-License-Identifier: Apache-2.0 */
/*
 * microvm-jailer: Firecracker's jailer command line (docs/jailer.md).
 * args.c parses it into a struct jail_config; root.c builds the chroot
 * directory and moves a process into it (pivot_root); cgroup.c puts the
 * process in its cgroup; main.c runs the steps in order and execs the
 * copied binary. Every step prints one line naming what failed through
 * jail_err() and returns -errno.
 */
#ifndef MICROVM_JAIL_H
#define MICROVM_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JAIL_ID_MAX 64
#define JAIL_CGROUPS_MAX 32
#define JAIL_DEFAULT_BASE "/srv/jailer"
#define JAIL_DEFAULT_NOFILE 2048

/* One --cgroup FILE=VALUE. */
struct jail_cgroup_arg {
	const char *file;  /* "cpuset.cpus" (points into a copy of argv) */
	const char *value; /* "0-3" */
};

struct jail_config {
	const char *id;
	const char *exec_file;
	uint32_t uid;
	uint32_t gid;
	const char *chroot_base;  /* JAIL_DEFAULT_BASE unless given */
	const char *netns;        /* NULL: stay in the caller's */
	bool daemonize;
	bool new_pid_ns;          /* Firecracker's detach-after-start mode */
	int cgroup_version;       /* 1 (default) or 2 */
	struct jail_cgroup_arg cgroups[JAIL_CGROUPS_MAX];
	size_t n_cgroups;
	const char *parent_cgroup; /* NULL: the exec file's name */
	bool has_fsize;
	uint64_t fsize;
	uint64_t nofile;          /* JAIL_DEFAULT_NOFILE unless given */
	char **extra;             /* the arguments after "--" */
	int n_extra;
	bool help;
};

/**
 * jail_err() - print "microvm-jailer: <message>" as one line.
 * Context: any; in the jailed child the line goes to the parent through
 * jail_err_set_fd(), which prints it (the child's stderr may be
 * /dev/null by then).
 */
void jail_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** jail_err_set_fd() - send later jail_err() lines to @fd instead. */
void jail_err_set_fd(int fd);

/**
 * jail_parse_args() - parse the jailer's command line.
 * @argc, @argv: as main() got them; @argv must outlive @cfg (its strings
 * are kept, "--cgroup" values are split in place).
 * @cfg: filled; defaults for everything not given.
 * Return: 0, or -EINVAL after one jail_err() line naming the bad value.
 * Context: startup.
 */
int jail_parse_args(int argc, char **argv, struct jail_config *cfg);

/** jail_usage() - the usage text for --help. */
const char *jail_usage(void);

/**
 * jail_exec_name() - the last component of @path (the exec file's name
 * that the chroot layout and the default parent cgroup use).
 */
const char *jail_exec_name(const char *path);

/* The host devices made inside the jail (major:minor read on the host). */
struct jail_devs {
	dev_t userfaultfd;
	dev_t vhost_blk;
	bool has_userfaultfd;
	bool has_vhost_blk;
};

/**
 * jail_dir_prepare() - create <base>/<exec name>/<id>/root and copy the
 * exec file into it as <root>/<exec name> (mode 0755 at most, owned by
 * root, never through a link).
 * @cfg: the parsed configuration (exec_file and chroot_base canonical).
 * @root: receives the chroot directory's path; @len its size.
 * Return: 0 or -errno (one jail_err() line). Context: parent, as root.
 */
int jail_dir_prepare(const struct jail_config *cfg, char *root, size_t len);

/** jail_devs_probe() - read the dynamic device numbers from the host. */
void jail_devs_probe(struct jail_devs *devs);

/**
 * jail_enter() - in a new mount namespace already: make every mount
 * private, bind @root on itself, pivot_root into it, detach the old root
 * and chroot("."); then make /dev/kvm, /dev/net/tun, /dev/urandom and
 * the devices in @devs that the host has, all owned by @uid:@gid, and
 * give / to @uid:@gid.
 * Return: 0 or -errno (one jail_err() line). Context: the jailed child.
 */
int jail_enter(const char *root, const struct jail_devs *devs, uid_t uid,
	       gid_t gid);

/**
 * jail_cgroup_join() - Firecracker's cgroup rules for @cfg: v1 makes
 * <controller mount>/<parent>/<id> per --cgroup file's controller;
 * v2 makes <cgroup2 mount>/<parent>/<id> when any --cgroup is given and
 * otherwise only joins <parent> when it exists. Writes each value, then
 * @pid into the cgroup.
 * Return: 0 or -errno (one jail_err() line). Context: parent, as root.
 */
int jail_cgroup_join(const struct jail_config *cfg, pid_t pid);

#endif
