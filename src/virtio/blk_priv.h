/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the virtio-blk device shared by blk.c (ops, configuration,
 * creation) and blk_queue.c (the per-queue I/O threads). Not for use
 * outside the device.
 */
#ifndef MICROVM_BLK_PRIV_H
#define MICROVM_BLK_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/log.h"
#include "virtio/blk.h"
#include "virtio/blk_backend.h"
#include "virtio/blk_vhost.h"
#include "virtio/worker.h"

/* One request slot; a queue has one per ring entry, preallocated. */
struct blk_slot {
	uint16_t head;
	struct blk_req req;
	struct disk_req dreq;
};

/* Adaptive polling state of one queue thread (blk_poll.c). */
struct blk_poll {
	uint64_t max_ns;    /* the cap; 0: polling off */
	uint64_t window_ns; /* the current window, 0 .. max_ns */
	uint64_t missed_at; /* start of the window that ended in the sleep
			     * now under way; 0: none */
	bool kicks_off;     /* the ring was left with kicks off for the poll,
			     * which owes their re-enabling */
};

/* What blk_poll_run() found. */
#define BLK_POLL_RING 1u /* the avail ring has chains */
#define BLK_POLL_DISK 2u /* the disk queue has completions */
#define BLK_POLL_HOLD 4u /* nothing, but a held notification is due */

/* A notification held back for more completions to join (blk.h). */
struct blk_hold {
	uint64_t until;     /* when it must go out (blk_clock_ns());
			     * 0: none held */
	unsigned int count; /* completions pushed since it was asked for */
};

/* A running queue: state owned by its thread between start and stop. */
struct blk_queue {
	struct blk_dev *b;
	struct virtio_queue *q;
	struct disk_queue *dq;
	struct vq_worker w;       /* its thread (worker.h): w.running,
				   * w.stopping */
	uint16_t size;
	struct blk_slot *slots;
	struct iovec *iov_pool;  /* size iovecs per slot */
	struct virtq_seg *segs;  /* scratch for virtq_pop(), size entries */
	uint16_t *free_list;
	unsigned int nr_free;
	struct blk_slot *pending; /* parsed, refused by the disk (-EAGAIN) */
	struct blk_slot *limited; /* parsed, held back by the rate limit */
	uint64_t limited_until;   /* when its tokens are due (blk_clock_ns()) */
	unsigned int queued;      /* submitted since the last flush */
	unsigned int pushed;      /* pushed since the last notify check,
				   * at most size (bq_process_ring()) */
	bool throttled;           /* stopped popping for want of room */
	bool more;                /* stopped popping: the round's budget */
	bool broken;
	struct blk_poll poll;
	struct blk_hold hold;
	struct log_ratelimit rl;
};

struct blk_dev {
	struct virtio_dev *vdev;
	struct disk *disk;
	const struct guest_mem *gm;
	const struct blk_backend_ops *be_ops; /* what serves the queues */
	struct blk_backend_start be_start;    /* its queues while running */
	const struct vhost_sys *vhost_sys;
	struct vhost_dev vhost;               /* BLK_ENGINE_VHOST */
	struct blk_req_limits lim; /* discard/write_zeroes set at start */
	uint64_t poll_max_ns;      /* blk_config.poll_us */
	uint64_t hold_ns;          /* blk_config.irq_hold_us; 0: off */
	unsigned int hold_max;     /* blk_config.irq_hold_max */
	struct rl_limiter limiter; /* blk_config.rl, shared by the queues */
	char serial[VIRTIO_BLK_ID_BYTES + 1];
	bool defer_off;            /* blk_config.defer_off */
	uint8_t config[BLK_CONFIG_BYTES];
	unsigned int num_queues;   /* blk_config.num_queues */
	uint16_t queue_size;       /* blk_config.queue_size: the largest */
	struct log_ratelimit rl; /* start failures, under vdev->lock */
	struct blk_queue queues[VIRTIO_MAX_QUEUES];
};

/**
 * blk_queue_open() - make the disk queue (for the io_uring engine: the
 * ring, restricted to the opcodes used on the disk's files) that every
 * run of @bq uses, so that no ring is made once the threads are confined
 * (util/confine.c: no class may call io_uring_setup).
 * @bq: queue state, never started
 * @max_size: the largest queue size the driver may choose
 * Return: 0 or -errno. Context: device creation, before confinement.
 */
int blk_queue_open(struct blk_queue *bq, uint16_t max_size);

/**
 * blk_queue_close() - free what blk_queue_open() made.
 * @bq: queue state, not running (or never opened)
 * Context: device teardown.
 */
void blk_queue_close(struct blk_queue *bq);

/**
 * blk_queue_start() - start the I/O thread of @q.
 * @bq: queue state, not running
 * @q: enabled queue whose virtq has been started
 *
 * Allocates the request slots (one per ring entry), resets the disk queue
 * from blk_queue_open() to the same depth and starts the thread
 * "<name>-q<index>".
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

/**
 * blk_queue_wake() - make the thread of @bq look at its ring again at
 * once, as after a kick (the rate limit changed).
 * @bq: queue state; nothing happens unless it is running
 * Context: any thread but @bq's, vdev->lock held.
 */
void blk_queue_wake(struct blk_queue *bq);

/**
 * blk_clock_ns() - CLOCK_MONOTONIC in nanoseconds (a vDSO call where the
 * clock source allows it).
 * Context: any thread.
 */
uint64_t blk_clock_ns(void);

/**
 * blk_poll_init() - polling state of a starting queue: off, or a window
 * that starts at 0 and adapts up to @max_ns.
 * @bq: queue state, thread not running
 * @max_ns: the cap, 0 for no polling
 * Context: blk_queue_start().
 */
void blk_poll_init(struct blk_queue *bq, uint64_t max_ns);

/**
 * blk_poll_wanted() - whether the thread will poll before it next sleeps,
 * so that bq_process_ring() may leave an empty ring with kicks off.
 * @bq: queue state
 * Return: true when polling is on and no stop was asked. Context: the
 * queue thread.
 */
bool blk_poll_wanted(struct blk_queue *bq);

/**
 * blk_poll_run() - busy-poll the avail ring and the disk queue, kicks
 * off, for up to the current window, instead of going to sleep at once.
 * @bq: queue state after a round
 *
 * Never polls while stopping, throttled, broken or with a stop asked.
 * A held notification (bq->hold) ends the window at its deadline: then,
 * if nothing was found, kicks stay off and BLK_POLL_HOLD is returned so
 * that the caller releases it and polls on.
 * When the window ends empty, kicks are turned back on and the ring is
 * looked at once more (virtio 1.2 §2.7.10), so a chain added meanwhile is
 * not lost; the thread may then sleep, and blk_poll_woke() adapts the
 * window. Counts hits, misses and time polled in the queue's stats.
 * Return: BLK_POLL_RING and/or BLK_POLL_DISK for what to handle in a
 * round, BLK_POLL_HOLD, or 0: sleep. Context: the queue thread.
 */
unsigned int blk_poll_run(struct blk_queue *bq);

/**
 * blk_poll_woke() - account a wakeup after a sleep: grow the window when
 * the event came within the cap of the last window's start (a longer
 * window would have caught it), shrink it when a kick came later; a later
 * wakeup without a kick (the disk's, a stop) leaves it.
 * @bq: queue state
 * @kicked: the wakeup drained a kick
 * Context: the queue thread, after each evloop_wait().
 */
void blk_poll_woke(struct blk_queue *bq, bool kicked);

#endif
