/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the metrics stream (metrics.h): its state, shared by metrics.c
 * (writing lines out) and metrics_line.c (the snapshot of the counters
 * and the line made from it). Not for other modules.
 */
#ifndef MICROVM_METRICS_PRIV_H
#define MICROVM_METRICS_PRIV_H

#include <json-c/json.h>
#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "virtio/net.h"
#include "virtio/vsock.h"
#include "vmm/config.h"
#include "vmm/metrics.h"

/*
 * Counter values of one drive or of the vCPUs: @base is what the last
 * line that went out reported, @cur this line's snapshot (it becomes
 * @base once the line is out).
 */
struct mvals {
	uint64_t *base, *cur;
	size_t n;
};

struct mdrive {
	unsigned int nq;
	struct mvals q;   /* nq * QF_COUNT */
	struct mvals img; /* DF_COUNT */
};

struct metrics {
	pthread_mutex_t lock;
	int status_fd;
	pid_t owner;       /* the thread that made the stream */
	struct mdrive *drives;
	unsigned int nr_drives;
	struct mvals vcpu; /* nr_vcpus * VCPU_EXIT_KINDS */
	struct metrics_totals totals;
	struct metrics_totals reported; /* totals as of the last line */
	/* The vsock device's totals now and as of the last line. */
	struct vsock_dev_stats vsock, vsock_reported;
	bool has_vsock;
	/* Each network interface's totals now and as of the last line. */
	struct net_dev_stats net[CONFIG_MAX_NETS];
	struct net_dev_stats net_reported[CONFIG_MAX_NETS];
	unsigned int nr_nets;
	/* The rest of a line only partly written, to go out first. */
	char *rest;
	size_t rest_len, rest_off;
	int rest_fd;
};

/**
 * metrics_snap() - read every counter of @src into the stream's current
 * snapshot (reshaping it when drives, queues or vCPUs changed).
 * Return: 0 or -ENOMEM.  Context: @mt->lock held.
 */
int metrics_snap(struct metrics *mt, const struct metrics_source *src);

/**
 * metrics_snap_commit() - the line of the current snapshot went out: it
 * is what the next line's deltas start from.  Context: @mt->lock held.
 */
void metrics_snap_commit(struct metrics *mt);

/**
 * metrics_line() - the JSON line of the current snapshot, newline ended.
 * Return: malloc'd text (@len bytes without the NUL), or NULL.
 * Context: @mt->lock held.
 */
char *metrics_line(struct metrics *mt, const struct metrics_source *src,
		   size_t *len);

/**
 * metrics_snap_nets() - the interfaces' totals of @src into the current
 * snapshot (another set of interfaces: nothing reported yet).
 * Context: @mt->lock held.
 */
void metrics_snap_nets(struct metrics *mt, const struct metrics_source *src);

/** metrics_commit_nets() - the snapshot's totals as reported. */
void metrics_commit_nets(struct metrics *mt);

/**
 * metrics_add_nets() - "net" (Firecracker's NetDeviceMetrics names,
 * summed over the interfaces) and "net_<iface_id>" for each, deltas since
 * the last line, into @root. Return: 0 or -ENOMEM.
 * Context: @mt->lock held.
 */
int metrics_add_nets(struct metrics *mt, const struct metrics_source *src,
		     struct json_object *root);

/** metrics_free_drives() - forget the drives' snapshots. */
void metrics_free_drives(struct metrics *mt);

#endif
