/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the virtio-blk device shared by blk.c (ops, configuration,
 * creation) and blk_queue.c (the per-queue I/O threads). Not for use
 * outside the device.
 */
#ifndef MICROVM_BLK_PRIV_H
#define MICROVM_BLK_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/log.h"
#include "virtio/blk.h"

/* One request slot; a queue has one per ring entry, preallocated. */
struct blk_slot {
	uint16_t head;
	struct blk_req req;
	struct disk_req dreq;
};

/* A running queue: state owned by its thread between start and stop. */
struct blk_queue {
	struct blk_dev *b;
	struct virtio_queue *q;
	struct disk_queue *dq;
	pthread_t thread;
	bool running;
	int stop_fd;
	int epfd;
	uint16_t size;
	struct blk_slot *slots;
	struct iovec *iov_pool;  /* size iovecs per slot */
	struct virtq_seg *segs;  /* scratch for virtq_pop(), size entries */
	uint16_t *free_list;
	unsigned int nr_free;
	struct blk_slot *pending; /* parsed, refused by the disk (-EAGAIN) */
	unsigned int queued;      /* submitted since the last flush */
	unsigned int pushed;      /* pushed since the last notify check,
				   * at most size (bq_process_ring()) */
	bool throttled;           /* stopped popping for want of room */
	bool more;                /* stopped popping: the round's budget */
	bool stopping;
	bool broken;
	struct log_ratelimit rl;
};

struct blk_dev {
	struct virtio_dev *vdev;
	struct disk *disk;
	struct blk_req_limits lim; /* discard/write_zeroes set at start */
	char serial[VIRTIO_BLK_ID_BYTES + 1];
	bool defer_off;            /* blk_config.defer_off */
	uint8_t config[BLK_CONFIG_BYTES];
	struct log_ratelimit rl; /* start failures, under vdev->lock */
	struct blk_queue queues[VIRTIO_MAX_QUEUES];
};

/**
 * blk_queue_start() - start the I/O thread of @q.
 * @bq: queue state, not running
 * @q: enabled queue whose virtq has been started
 *
 * Allocates the request slots (one per ring entry), opens a disk queue of
 * the same depth and starts the thread "<name>-q<index>".
 * Return: 0 or -errno (nothing left running). Context: the thread handling
 * DRIVER_OK, vdev->lock held.
 */
int blk_queue_start(struct blk_queue *bq, struct virtio_queue *q);

/**
 * blk_queue_stop() - stop the thread of @bq once every request it took has
 * completed and been pushed; join it and free the queue state.
 * @bq: queue state; nothing happens unless it is running
 * Context: the thread handling reset, vdev->lock held.
 */
void blk_queue_stop(struct blk_queue *bq);

#endif
