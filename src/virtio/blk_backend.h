/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The queue-backend seam of the virtio-blk device: what serves the
 * device's queues once the driver has set DRIVER_OK. Two implementations,
 * each a const table: the VMM's own I/O threads over the disk backend
 * (blk_queue.c, the default) and the vhost-blk kernel module
 * (blk_vhost.c). Status, feature negotiation and reset stay in the virtio
 * core and the device; a backend is only started and stopped.
 *
 *	blk_dev_create(): ops->open() (vhost: the device, memory table)
 *	DRIVER_OK:        ops->start(b, &s), s = every enabled queue
 *	                  (direct_irq backends: tops->direct_irq(q, on)
 *	                  first, which hands each queue's call eventfd to
 *	                  ops->set_call())
 *	reset, exit:      ops->stop(b): served requests all completed, the
 *	                  base indices written back into s.queues[i].base
 *	blk_dev_destroy(): ops->close()
 */
#ifndef MICROVM_BLK_BACKEND_H
#define MICROVM_BLK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/virtio.h"

struct blk_dev;

/* One queue as a backend is given it at start. */
struct blk_backend_queue {
	struct virtio_queue *q; /* its core state; q->vq started */
	unsigned int index;
	uint16_t size;
	/* Host addresses of the rings (virtq_start() checked that each
	 * lies wholly in guest RAM). */
	void *desc, *avail, *used;
	uint16_t base;          /* avail index to start at; stop writes back
				 * where serving ended */
	int kick_fd;            /* the queue's ioeventfd */
};

/* Everything a backend is given at start. */
struct blk_backend_start {
	const struct guest_mem *gm;
	uint64_t features;      /* negotiated */
	unsigned int nr_queues; /* queues[0 .. nr_queues): the enabled
				 * ones in index order (a disabled queue
				 * leaves a gap in queues[i].index) */
	struct blk_backend_queue queues[VIRTIO_MAX_QUEUES];
};

struct blk_backend_ops {
	const char *name; /* "io_uring", "vhost" */
	/*
	 * The backend signals completions by writing an eventfd the
	 * transport chooses (tops->direct_irq, ops->set_call), rather than
	 * through virtio_queue_notify().
	 */
	bool direct_irq;
	/* At device creation; @b's disk and serial are set. 0 or -errno
	 * (a message naming the fix logged). May be NULL. */
	int (*open)(struct blk_dev *b);
	/* Release what open() took. May be NULL. */
	void (*close)(struct blk_dev *b);
	/* Feature bits the backend can serve, out of @offered. */
	uint64_t (*features)(struct blk_dev *b, uint64_t offered);
	/* Serve @s's queues. 0 or -errno, with nothing left running. */
	int (*start)(struct blk_dev *b, struct blk_backend_start *s);
	/* Stop serving; every request taken has completed and been pushed.
	 * Writes the base indices back into the start's queues. */
	void (*stop)(struct blk_dev *b, struct blk_backend_start *s);
	/* direct_irq backends: queue @index signals @fd from now on. */
	void (*set_call)(struct blk_dev *b, unsigned int index, int fd);
	/* --stats: one line per queue of what the backend can tell. */
	void (*print_stats)(struct blk_dev *b, int fd);
};

/* The VMM's per-queue I/O threads (blk_queue.c). */
extern const struct blk_backend_ops blk_backend_threads;
/* The vhost-blk kernel module (blk_vhost.c). */
extern const struct blk_backend_ops blk_backend_vhost;

#endif
