/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Confinement of microvm's own threads: one seccomp-BPF filter per thread
 * class (main/control, vCPU, I/O, console), built once at startup and
 * installed by each thread on itself at the top of its entry function.
 *
 * Usage:
 *	main, before any thread:  confine_prepare(mode, err, errlen);
 *	each thread entry:        confine_thread(CONFINE_VCPU);  (etc.)
 *	main, once its threads run: confine_thread(CONFINE_MAIN);
 *
 * Filters stack and are inherited, so the order matters: see confine.c.
 */
#ifndef MICROVM_UTIL_CONFINE_H
#define MICROVM_UTIL_CONFINE_H

#include <stddef.h>

enum confine_mode {
	CONFINE_ON,   /* forbidden call: one log line, then death by SIGSYS */
	CONFINE_KILL, /* the kernel's SECCOMP_RET_KILL_PROCESS, no line */
	CONFINE_LOG,  /* allowed, but the kernel logs it (audit/dmesg) */
	CONFINE_OFF,  /* no filters */
};

enum confine_class {
	CONFINE_MAIN,    /* the main thread and its helpers (stats) */
	CONFINE_VCPU,    /* a vCPU thread (and what it starts: I/O queues) */
	CONFINE_IO,      /* a virtio-blk queue thread */
	CONFINE_CONSOLE, /* stdin pump, console output */
	CONFINE_CONTROL, /* the API server on a Unix socket (no caller yet) */
	CONFINE_VSOCK,   /* the virtio-vsock worker and its host sockets */
	CONFINE_NET,     /* a virtio-net queue pair's worker and its tap */
	CONFINE_NR_CLASSES,
};

/* What the process exits with after a forbidden call: death by SIGSYS. */
#define CONFINE_EXIT_STATUS (128 + 31)

/**
 * confine_parse_mode() - "on", "kill", "log" or "off".
 * Return: 0, or -EINVAL for anything else.
 */
int confine_parse_mode(const char *s, enum confine_mode *out);

/**
 * confine_mode_name() - the --seccomp spelling of @mode.
 */
const char *confine_mode_name(enum confine_mode mode);

/**
 * confine_control_listen_fd() - the listening socket that the control
 * class may accept4() on; every other accept4() is forbidden there.
 * Designed for the API server of the lifecycle work, which has no caller
 * yet: it makes its socket and calls this before confine_prepare(), and
 * its thread, created before main confines itself, calls
 * confine_thread(CONFINE_CONTROL) first thing.
 * @fd: the listening Unix socket, or -1 (no accept4 at all).
 * Context: main thread, before confine_prepare().
 */
void confine_control_listen_fd(int fd);

/* Most disk descriptors confine_disk_fds() takes. */
#define CONFINE_MAX_DISK_FDS 64

/**
 * confine_disk_fds() - the descriptors of the disks: BLKDISCARD and
 * BLKZEROOUT are allowed on these only (until called: on none). Rebuilds
 * the io and vcpu filters.
 * @fds: the disks' image descriptors.
 * @n: how many, at most CONFINE_MAX_DISK_FDS.
 * @err/@errlen: message on failure.
 * Return: 0 or -errno.  Context: main thread, after confine_prepare()
 * and before any vCPU or I/O thread exists.
 */
int confine_disk_fds(const int *fds, unsigned int n, char *err,
		     size_t errlen);

/**
 * confine_prepare() - build every class's filter, set no_new_privs and
 * install the SIGSYS handler that reports forbidden calls. Reads
 * MICROVM_SECCOMP_SELFTEST=main|vcpu|io|console|control|vsock|net once: the first thread of
 * that class (for main: the main thread) then makes one forbidden call
 * (socket()) right after installing its filter, for tests.
 * @mode: from --seccomp.
 * @err/@errlen: message naming the bad value on failure.
 * Return: 0 or -errno.  Context: main thread, before any other thread.
 */
int confine_prepare(enum confine_mode mode, char *err, size_t errlen);

/* Descriptors a queue opens when it starts (blk_queue_start: stop
 * eventfd, epoll set; its ring and completion eventfd exist already). */
#define CONFINE_FDS_PER_QUEUE 2
/* Room left for everything else opened after setup (sanitizer reports). */
#define CONFINE_FDS_SLACK 64

/**
 * confine_limit_fds() - lower RLIMIT_NOFILE (soft and hard) to the
 * descriptors open now plus @later plus CONFINE_FDS_SLACK: whatever a
 * guest makes microvm do, its descriptor table stays that small. Never
 * raises the limit.
 * Return: the new soft limit, or -errno.  Context: main thread, after
 * setup, before confine_thread(CONFINE_MAIN).
 */
long confine_limit_fds(unsigned int later);

/**
 * confine_thread() - install @cls's filter on the calling thread. With
 * CONFINE_MAIN from the main thread it also lets the vCPU threads go on:
 * a vCPU thread's call returns only once the main thread has its filter,
 * so every filter is in place before the first KVM_RUN. A thread that
 * cannot be confined ends the process (status 125): it never runs
 * unconfined. Does nothing when the mode is off or nothing was prepared.
 * Context: the top of a thread's entry function, once per thread.
 */
void confine_thread(enum confine_class cls);

#endif
