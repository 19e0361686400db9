/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Metrics: the machine's counters as one JSON object per line, in
 * Firecracker's shape where it has the counter ("utc_timestamp_ms",
 * "block", "block_<drive_id>", "net", "net_<iface_id>", "vcpu", "vmm",
 * "logger") and with our own
 * detail beside it (each drive's "queues", each vCPU's exits). The
 * counters are the ones --stats prints (struct virtio_queue_stats, struct
 * disk_stats, struct vcpu's exits): metrics keeps only, per counter, the
 * value its last line reported.
 *
 *	metrics_init(&machine);              // startup, before seccomp
 *	fd = metrics_open(path, err, len);   // PUT /metrics (main thread)
 *	metrics_write(&machine, fd);         // FlushMetrics, every 60 s
 *	metrics_exit(&machine);              // teardown
 */
#ifndef MICROVM_METRICS_H
#define MICROVM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "virtio/net.h"

struct disk_stats;
struct machine;
struct metrics;
struct vcpu;
struct virtio_dev;

/* One drive as metrics sees it. */
struct metrics_drive {
	const char *id;            /* the key is "block_<id>" */
	struct virtio_dev *vdev;   /* its queues' counters */
	struct disk_stats *disk;   /* its image's counters, or NULL */
};

/* One network interface as metrics sees it: the key is "net_<id>". */
struct metrics_net {
	const char *id;
	struct net_dev_stats stats; /* totals */
};

/* Everything one line reports. */
struct vsock_dev_stats;

struct metrics_source {
	const struct metrics_drive *drives;
	unsigned int nr_drives;
	const struct metrics_net *nets;
	unsigned int nr_nets;
	struct vcpu *vcpus;        /* NULL before the vCPUs exist */
	unsigned int nr_vcpus;
	/* The vsock device's counters (totals), NULL: no vsock device. */
	const struct vsock_dev_stats *vsock;
};

/* What became of the lines so far (totals, not deltas). */
struct metrics_totals {
	uint64_t lines;   /* written whole, or their rest queued */
	uint64_t dropped; /* not written: the fd had no room (a FIFO nobody
			   * reads), their counts go out with the next line */
	uint64_t fails;   /* write errors other than no room */
	uint64_t log_missed; /* log lines the logger's sink dropped, as
			      * of the last line built */
};

/**
 * metrics_new() - the state of a metrics stream.
 * @status_fd: /proc/self/status opened for reading (the VMM's RSS, in
 *	the lines this thread writes: another's leave it out), or
 *	-1 to leave "rss_kib" out; the stream owns it from now on
 * Return: the stream, or NULL (out of memory).  Context: startup.
 */
struct metrics *metrics_new(int status_fd);

/** metrics_free() - close and free; NULL is fine. */
void metrics_free(struct metrics *mt);

/**
 * metrics_emit() - write one line for @src to @fd, whole or not at all.
 *
 * Block and vCPU counters are deltas since the last line that went out,
 * as Firecracker's SharedIncMetric; gauges (the time, uptime, RSS, the
 * current polling window) are values now. A line that finds no room on
 * @fd (O_NONBLOCK, a full pipe) is dropped and counted: its deltas stay
 * and go out with the next line. A line only partly written is finished
 * before any later line, so a reader never sees a torn line; a line that
 * finds the rest of an earlier one still waiting is dropped. Never waits.
 *
 * Return: 0 (the line went out or its rest is queued), -EAGAIN (dropped),
 * or another -errno (write error, out of memory).
 * Context: any thread, one at a time per stream (serialised inside);
 * only the thread that made the stream reads the RSS (lseek, read:
 * CONFINE_MAIN allows both, CONFINE_CONTROL no lseek).
 */
int metrics_emit(struct metrics *mt, const struct metrics_source *src,
		 int fd);

/** metrics_get_totals() - lines written, dropped and failed so far. */
void metrics_get_totals(struct metrics *mt, struct metrics_totals *out);

/**
 * metrics_print_stats() - the --stats line of the stream's totals:
 * "microvm: stats metrics: lines N dropped N fails N".
 * Context: any thread.
 */
void metrics_print_stats(struct metrics *mt, int fd);

/**
 * metrics_open() - open the metrics path as Firecracker does: created if
 * absent, read-write (a FIFO then opens without a reader and never raises
 * SIGPIPE), O_NONBLOCK (a FIFO nobody reads never blocks a write),
 * O_APPEND, close-on-exec.
 * Return: the fd, or -errno with a message naming @path in @err.
 * Context: the main thread, before seccomp or while it may open files.
 */
int metrics_open(const char *path, char *err, size_t errlen);

/**
 * metrics_init() - give @m its metrics stream (opens /proc/self/status,
 * which a confined thread could not; without /proc, as in a jail, the
 * lines have no RSS).
 * Return: 0 or -ENOMEM.  Context: startup, before seccomp.
 */
int metrics_init(struct machine *m);

/** metrics_exit() - undo metrics_init(). */
void metrics_exit(struct machine *m);

/**
 * metrics_note_startup() - Firecracker's "api_server" startup times,
 * once, when microvm is ready for its caller (the API serving, or the
 * boot starting without one): wall time since @start_us (CLOCK_MONOTONIC,
 * the jailer's --start-time-us; 0: since microvm's own start) and CPU
 * time since @start_cpu_us plus @parent_cpu_us (the jailer's share).
 * Every later line carries them. Context: main thread.
 */
void metrics_note_startup(uint64_t start_us, uint64_t start_cpu_us,
			  uint64_t parent_cpu_us);

/**
 * metrics_write() - one line of @m's counters to @fd (metrics_emit()).
 * Return: as metrics_emit(); -ENODEV without metrics_init().
 * Context: any thread (the RSS only in lines of metrics_init()'s).
 */
int metrics_write(struct machine *m, int fd);

#endif
