// SPDX-License-Identifier: Apache-2.0
/*
 * The I/O thread of one virtio-blk queue, on the generic queue worker
 * (worker.h). It waits on the queue's kick eventfd, its disk queue's
 * completion fd and the worker's doorbell; drains the
 * ring with kicks off, at most a queue size of chains per round, parses
 * every chain before executing it, submits the batch with a single flush,
 * and pushes completions inside a defer_call section so that each batch
 * raises at most one interrupt (or, with blk_config.defer_off, signals each
 * completion the driver wants to hear of as it is pushed). With
 * blk_config.irq_hold_us a batch's notification may be held back for
 * later batches to join it. Before sleeping it may busy-poll the ring and
 * the disk queue for a while (blk_poll.c).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "util/confine.h"
#include "util/defer_call.h"
#include "util/guarded_copy.h"
#include "util/evloop.h"
#include "virtio/blk_priv.h"

/* The device's tags in its worker's epoll set. */
enum { BQ_TAG_KICK, BQ_TAG_DISK };

/* ---- completion ---- */

static void bq_slot_put(struct blk_queue *bq, struct blk_slot *slot)
{
	assert(bq->nr_free < bq->size);
	bq->free_list[bq->nr_free++] = (uint16_t)(slot - bq->slots);
}

/*
 * Count a push. With deferral off (blk_config.defer_off) the round opens no
 * defer_call section, so a notification the driver did not suppress goes
 * out at once, per completion: the baseline that batching is measured
 * against. The check at the round's end then finds nothing new.
 */
static void bq_pushed(struct blk_queue *bq)
{
	bq->pushed++;
	if (bq->b->defer_off && virtq_need_notify(&bq->q->vq))
		virtio_queue_notify(bq->q);
}

/* Return a chain with no status byte to report through. */
static void bq_push_nostatus(struct blk_queue *bq, uint16_t head)
{
	atomic_fetch_add(&bq->q->stats.requests, 1);
	atomic_fetch_add(&bq->q->stats.errors, 1);
	virtq_push(&bq->q->vq, head, 0);
	bq_pushed(bq);
}

/* Write the status byte, push, free the slot. */
static void bq_finish(struct blk_queue *bq, struct blk_slot *slot,
		      uint8_t status, uint32_t written)
{
	/* The status byte is guest memory: a plain byte store. */
	*slot->req.status = status;
	/*
	 * Counted before the push: whoever sees the completion in the used
	 * ring (a driver, a test, a metrics reader after it) sees it counted.
	 */
	atomic_fetch_add(&bq->q->stats.requests, 1);
	if (status != VIRTIO_BLK_S_OK)
		atomic_fetch_add(&bq->q->stats.errors, 1);
	virtq_push(&bq->q->vq, slot->head, written);
	bq_pushed(bq);
	bq_slot_put(bq, slot);
}

static const char *const blk_op_names[DISK_OP_COUNT] = {
	[DISK_OP_READ] = "read",
	[DISK_OP_WRITE] = "write",
	[DISK_OP_FLUSH] = "flush",
	[DISK_OP_DISCARD] = "discard",
	[DISK_OP_WRITE_ZEROES] = "write-zeroes",
};

/*
 * Count a request that reached the disk by operation: what succeeded and
 * its bytes, or one failure. Relaxed adds: the queue thread is the only
 * writer; --stats and metrics only read.
 */
static void bq_count_op(struct blk_queue *bq, enum disk_op op, bool ok,
			uint64_t bytes)
{
	struct virtio_queue_stats *st = &bq->q->stats;
	atomic_uint_fast64_t *n, *b = NULL;

	if (!ok) {
		atomic_fetch_add_explicit(&st->execute_fails, 1,
					  memory_order_relaxed);
		return;
	}
	switch (op) {
	case DISK_OP_READ:
		n = &st->read_count;
		b = &st->read_bytes;
		break;
	case DISK_OP_WRITE:
		n = &st->write_count;
		b = &st->write_bytes;
		break;
	case DISK_OP_FLUSH:
		n = &st->flush_count;
		break;
	case DISK_OP_DISCARD:
		n = &st->discard_count;
		break;
	default:
		n = &st->write_zeroes_count;
		break;
	}
	atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
	if (b)
		atomic_fetch_add_explicit(b, bytes, memory_order_relaxed);
}

/* disk_complete_fn: one finished disk request. */
static void bq_complete(void *arg, struct disk_req *r)
{
	struct blk_queue *bq = arg;
	struct blk_slot *slot = r->opaque;
	bool rw = r->op == DISK_OP_READ || r->op == DISK_OP_WRITE;
	uint8_t status = VIRTIO_BLK_S_OK;
	uint32_t written = 1;

	if (r->result < 0 ||
	    (rw && (uint64_t)r->result != slot->req.data_len)) {
		status = r->result == -EOPNOTSUPP ? VIRTIO_BLK_S_UNSUPP :
						    VIRTIO_BLK_S_IOERR;
		log_ratelimited(&bq->rl, LOG_WARN,
				"%s: queue %u: %s at sector %" PRIu64
				" failed: %s", bq->b->vdev->name,
				bq->q->index, blk_op_names[r->op],
				slot->req.sector,
				r->result < 0 ? strerror((int)-r->result) :
						"short transfer");
	} else if (r->op == DISK_OP_READ) {
		written += (uint32_t)slot->req.data_len;
	}
	bq_count_op(bq, r->op, status == VIRTIO_BLK_S_OK, slot->req.data_len);
	bq_finish(bq, slot, status, written);
}

/* ---- submission ---- */

/* Copy the serial into the GET_ID data area, NUL-padded (§5.2.6). */
static uint32_t bq_get_id(struct blk_queue *bq, struct blk_req *req)
{
	const char *s = bq->b->serial;
	uint32_t done = 0;
	unsigned int i;

	for (i = 0; i < req->iovcnt; i++) {
		memcpy(req->iov[i].iov_base, s + done, req->iov[i].iov_len);
		done += (uint32_t)req->iov[i].iov_len;
	}
	return done;
}

/*
 * Start a parsed request: at once when there is nothing to do on disk,
 * else through the disk queue. Return: false when the disk queue is full
 * (the slot is kept in bq->pending).
 */
static bool bq_start_req(struct blk_queue *bq, struct blk_slot *slot)
{
	struct blk_req *req = &slot->req;
	struct disk_req *dr = &slot->dreq;

	memset(dr, 0, sizeof(*dr));
	dr->opaque = slot;
	dr->offset = req->sector << BLK_SECTOR_SHIFT;
	switch (req->type) {
	case VIRTIO_BLK_T_GET_ID:
		bq_finish(bq, slot, VIRTIO_BLK_S_OK, bq_get_id(bq, req) + 1);
		return true;
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		dr->op = req->type == VIRTIO_BLK_T_IN ? DISK_OP_READ :
							DISK_OP_WRITE;
		dr->iov = req->iov;
		dr->iovcnt = (int)req->iovcnt;
		break;
	case VIRTIO_BLK_T_FLUSH:
		dr->op = DISK_OP_FLUSH;
		dr->offset = 0;
		break;
	default:
		dr->op = req->type == VIRTIO_BLK_T_DISCARD ?
			 DISK_OP_DISCARD : DISK_OP_WRITE_ZEROES;
		dr->len = req->nsect << BLK_SECTOR_SHIFT;
		break;
	}
	if (dr->op != DISK_OP_FLUSH && !req->nsect) {
		/* Nothing to move: a valid no-op (see blk_req_parse()). */
		bq_finish(bq, slot, VIRTIO_BLK_S_OK, 1);
		return true;
	}
	if (disk_queue_submit(bq->dq, dr) == -EAGAIN) {
		atomic_fetch_add_explicit(&bq->q->stats.engine_full, 1,
					  memory_order_relaxed);
		bq->pending = slot;
		return false;
	}
	bq->queued++;
	return true;
}

/* ---- rate limit ---- */

/*
 * Whether the drive's rate limit lets @slot's request through now: one
 * operation, and its data for a read or a write (what Firecracker
 * counts). Else it is held in bq->limited until its tokens are due; each
 * request held counts once in the queue's throttled counter.
 */
static bool bq_rl_admit(struct blk_queue *bq, struct blk_slot *slot)
{
	const struct blk_req *req = &slot->req;
	bool rw = req->type == VIRTIO_BLK_T_IN || req->type == VIRTIO_BLK_T_OUT;
	uint64_t wait;

	wait = rl_consume(&bq->b->limiter, 1, rw ? req->data_len : 0);
	if (!wait)
		return true;
	if (bq->limited != slot)
		atomic_fetch_add_explicit(&bq->q->stats.throttled, 1,
					  memory_order_relaxed);
	bq->limited = slot;
	bq->limited_until = blk_clock_ns() + wait;
	return false;
}

/*
 * Start the request the rate limit held back once its tokens are due, or
 * with @force (stopping) at once: it left the ring already, and a stop
 * completes every request taken rather than wait. Return: whether none is
 * held back any more (it may wait for room in bq->pending instead).
 */
static bool bq_rl_retry(struct blk_queue *bq, bool force)
{
	struct blk_slot *slot = bq->limited;

	if (!slot)
		return true;
	if (!force && !bq_rl_admit(bq, slot))
		return false;
	bq->limited = NULL;
	bq_start_req(bq, slot);
	return true;
}

static void bq_broken(struct blk_queue *bq)
{
	char why[96];

	bq->broken = true;
	snprintf(why, sizeof(why), "queue %u: %s", bq->q->index,
		 virtq_error_str(bq->q->vq.last_error));
	virtio_dev_broken(bq->b->vdev, why);
}

/*
 * Pop one chain into a free slot and start it (or fail it at once).
 * Return: false when the ring is empty or broken.
 */
static bool bq_take_one(struct blk_queue *bq)
{
	struct virtq_elem elem = { .segs = bq->segs, .max_segs = bq->size };
	struct blk_slot *slot;
	enum blk_req_error err;
	int r;

	r = virtq_pop(&bq->q->vq, &elem);
	if (!r)
		return false;
	if (r == -EIO) {
		bq_broken(bq);
		return false;
	}
	if (r == -EBADMSG) {
		log_ratelimited(&bq->rl, LOG_WARN,
				"%s: queue %u: bad chain: %s",
				bq->b->vdev->name, bq->q->index,
				virtq_error_str(bq->q->vq.last_error));
		atomic_fetch_add_explicit(&bq->q->stats.invalid_reqs, 1,
					  memory_order_relaxed);
		bq_push_nostatus(bq, elem.head);
		return true;
	}
	slot = &bq->slots[bq->free_list[--bq->nr_free]];
	slot->head = elem.head;
	err = blk_req_parse(&elem, &bq->b->lim, &slot->req);
	/* Held back by the rate limit: no more popping until it goes. */
	if (err == BLK_REQ_OK)
		return bq_rl_admit(bq, slot) && bq_start_req(bq, slot);
	log_ratelimited(&bq->rl, LOG_WARN, "%s: queue %u: bad request: %s",
			bq->b->vdev->name, bq->q->index,
			blk_req_error_str(err));
	atomic_fetch_add_explicit(&bq->q->stats.invalid_reqs, 1,
				  memory_order_relaxed);
	if (slot->req.status) {
		bq_finish(bq, slot, blk_req_status(err), 1);
	} else {
		bq_slot_put(bq, slot);
		bq_push_nostatus(bq, elem.head);
	}
	return true;
}

/*
 * The request left waiting for room (bq->pending), submitted again.
 * Return: whether it went in (or there was none waiting).
 */
static bool bq_submit_pending(struct blk_queue *bq)
{
	if (!bq->pending)
		return true;
	if (disk_queue_submit(bq->dq, &bq->pending->dreq) == -EAGAIN)
		return false;
	bq->pending = NULL;
	bq->queued++;
	return true;
}

/*
 * Chains taken between two looks at what the thread itself finished
 * (memory-backed images complete inside disk_queue_submit()).
 */
#define BQ_PUBLISH_EVERY 8u

/* ---- interrupt holding ---- */

/* Timer slack of a thread that holds notifications (bq_thread()). */
#define BQ_HOLD_SLACK_NS 1000ul

/* The held notification goes out (at once outside a defer_call section). */
static void bq_hold_release(struct blk_queue *bq, bool full)
{
	bq->hold.until = 0;
	bq->hold.count = 0;
	atomic_fetch_add(full ? &bq->q->stats.hold_full :
				&bq->q->stats.hold_timed, 1);
	virtio_queue_notify(bq->q);
}

/*
 * A batch of @pushed completions closed, the driver asking to hear of it
 * (@asked) or not. With holding on, a notification asked for is held
 * until bq->b->hold_ns from now, and the batches closed meanwhile join
 * it (whether or not they were asked for: the one interrupt covers them);
 * it goes out early once bq->b->hold_max completions have joined, or
 * while stopping. Return: whether a notification goes out now.
 */
static bool bq_notify(struct blk_queue *bq, bool asked, unsigned int pushed)
{
	struct blk_hold *h = &bq->hold;

	if (!bq->b->hold_ns) {
		if (asked)
			virtio_queue_notify(bq->q);
		return asked;
	}
	if (!h->until) {
		if (!asked)
			return false;
		h->until = blk_clock_ns() + bq->b->hold_ns;
	}
	h->count += pushed;
	if (h->count < bq->b->hold_max && !bq->w.stopping)
		return false;
	bq_hold_release(bq, h->count >= bq->b->hold_max);
	return true;
}

/*
 * The held notification, if its time has come. Return: nanoseconds until
 * it must go out, or -1 when none is held.
 */
static int64_t bq_hold_due(struct blk_queue *bq)
{
	uint64_t now;

	if (!bq->hold.until)
		return -1;
	now = blk_clock_ns();
	if (now < bq->hold.until)
		return (int64_t)(bq->hold.until - now);
	bq_hold_release(bq, false);
	return -1;
}

/*
 * What was pushed since the last check closes a batch: notify if the
 * driver asks (or hold the notification, bq_notify()). Return: whether a
 * notification goes out (inside a defer_call section at the section's
 * end).
 */
static bool bq_batch_done(struct blk_queue *bq)
{
	unsigned int pushed = bq->pushed;

	if (!pushed)
		return false;
	atomic_fetch_add(&bq->q->stats.batches, 1);
	bq->pushed = 0;
	return bq_notify(bq, virtq_need_notify(&bq->q->vq), pushed);
}

/*
 * Mid-pass: put what the thread finished itself in the used ring and
 * signal now if the driver asks, instead of at the round's end. A deep
 * ring of memory-backed requests is then a pipeline: the driver reaps and
 * refills while the thread copies, where one signal per round would leave
 * each side waiting for the other. The count per signal stays at least
 * BQ_PUBLISH_EVERY, whatever the driver does (the target is <= 0.25
 * signals per request); with deferral off every push has signalled
 * already, so there is nothing to flush.
 */
static void bq_publish(struct blk_queue *bq)
{
	if (disk_queue_drain(bq->dq, bq_complete, bq) && bq_batch_done(bq) &&
	    !bq->b->defer_off) {
		/* bq_round()'s section is the outermost: run it. */
		defer_call_end();
		defer_call_begin();
	}
}

/*
 * Drain the avail ring with kicks off (virtq.h usage, §2.7.10). One pass
 * pops at most a queue size of chains less what this round already
 * pushed: chains that fail at once take no slot, so without the budget a
 * driver refilling the ring would keep the thread here, never reaping nor
 * seeing stop, and push past 65535 entries between two notification
 * checks (§2.7.7.2 compares 16-bit indices). A spent budget sets
 * bq->more: the thread polls again at once, kicks still off.
 */
static void bq_process_ring(struct blk_queue *bq)
{
	struct virtq *vq = &bq->q->vq;
	unsigned int budget, taken = 0;

	bq->more = false;
	/* Turned off below; whoever breaks out owns turning them on. */
	bq->poll.kicks_off = false;
	/* Held back (room, rate limit): a completion or the limit's
	 * deadline resumes us, kicks stay off. */
	if (!bq_submit_pending(bq) || !bq_rl_retry(bq, false))
		return;
	budget = bq->pushed < bq->size ? bq->size - bq->pushed : 0;
	for (;;) {
		virtq_notify_disable(vq);
		while (budget && bq->nr_free && !bq->pending &&
		       bq_take_one(bq)) {
			budget--;
			if (++taken % BQ_PUBLISH_EVERY == 0)
				bq_publish(bq);
		}
		/* Out of room: a completion resumes us, kicks stay off. */
		bq->throttled = !bq->nr_free || bq->pending;
		if (bq->throttled || bq->broken || bq->limited)
			break;
		if (!budget) {
			bq->more = true;
			break;
		}
		/* Empty: blk_poll_run() watches it next, kicks still off. */
		if (blk_poll_wanted(bq)) {
			bq->poll.kicks_off = true;
			break;
		}
		if (!virtq_notify_enable(vq))
			break;
	}
}

/* One wakeup: reap, take new requests, flush once, signal once. */
static void bq_round(struct blk_queue *bq, bool kicked, bool disk_ready)
{
	struct virtio_queue *q = bq->q;
	bool defer = !bq->b->defer_off;
	int ret;

	if (defer)
		defer_call_begin();
	if (disk_ready)
		disk_queue_reap(bq->dq, bq_complete, bq);
	if (!bq->w.stopping && !bq->broken &&
	    (kicked || bq->throttled || bq->more || bq->limited)) {
		bq_process_ring(bq);
	} else {
		/* Stopping: what was taken runs, rate limit or not. */
		bq_rl_retry(bq, bq->w.stopping);
		bq_submit_pending(bq);
	}
	/*
	 * Finished while being submitted (a memory-backed image): into the
	 * used ring now, under this round's one signal. That frees room:
	 * a request left waiting for it goes in, and the ring behind it is
	 * looked at again next (no wakeup would come for it otherwise).
	 */
	if (disk_queue_drain(bq->dq, bq_complete, bq) && bq->pending &&
	    bq_submit_pending(bq))
		bq->more = !bq->w.stopping;
	if (bq->queued) {
		ret = disk_queue_flush(bq->dq);
		if (ret < 0)
			log_ratelimited(&bq->rl, LOG_WARN,
					"%s: queue %u: disk submit: %s",
					bq->b->vdev->name, q->index,
					strerror(-ret));
		bq->queued = 0;
	}
	bq_batch_done(bq);
	if (defer)
		defer_call_end();
}

/*
 * The longest sleep: -1 (until an event), or until a held notification
 * or the tokens of a request the rate limit held back are due.
 */
static int64_t bq_sleep_ns(struct blk_queue *bq)
{
	int64_t t = bq_hold_due(bq), l;
	uint64_t now;

	if (!bq->limited)
		return t;
	now = blk_clock_ns();
	l = bq->limited_until > now ? (int64_t)(bq->limited_until - now) : 0;
	return t < 0 || l < t ? l : t;
}

/* ---- the worker's callbacks (worker.h) ---- */

static void bq_enter(void *opaque)
{
	struct blk_queue *bq = opaque;

	/* A held notification's deadline is a sleep's timeout: the default
	 * timer slack (50 us) would add up to 50 us to every hold. */
	if (bq->b->hold_ns)
		prctl(PR_SET_TIMERSLACK, BQ_HOLD_SLACK_NS, 0, 0, 0);
	/* A mapped image's copies must be able to fail (util/guarded_copy.h). */
	guarded_copy_thread();
}

static void bq_wround(void *opaque, const uint64_t *tags, unsigned int n,
		      bool kicked)
{
	struct blk_queue *bq = opaque;
	bool disk_ready = false;
	unsigned int i;

	for (i = 0; i < n; i++)
		disk_ready |= tags[i] == BQ_TAG_DISK;
	bq_round(bq, kicked, disk_ready);
}

static int64_t bq_idle(void *opaque)
{
	struct blk_queue *bq = opaque;
	unsigned int found;

	bq_hold_due(bq);
	/* About to sleep: poll a while first (blk_poll.c). Not while the
	 * rate limit holds a request back: the chains behind it would end
	 * every window at once. */
	found = (bq->more || bq->limited) && !bq->w.stopping ? 0 :
		blk_poll_run(bq);
	if (found == BLK_POLL_HOLD)
		return VQ_WORKER_AGAIN;
	if (found) {
		bq_round(bq, found & BLK_POLL_RING, found & BLK_POLL_DISK);
		return VQ_WORKER_AGAIN;
	}
	/* More on the ring: only look at the fds, then go on. A held
	 * notification bounds the sleep. */
	return bq->more && !bq->w.stopping ? 0 : bq_sleep_ns(bq);
}

static void bq_woke(void *opaque, bool kicked)
{
	blk_poll_woke(opaque, kicked);
}

static bool bq_drained(void *opaque)
{
	struct blk_queue *bq = opaque;

	return bq->nr_free == bq->size;
}

static void bq_leave(void *opaque)
{
	struct blk_queue *bq = opaque;

	/* Stopping: what is held goes out with the last completions. */
	if (bq->hold.until)
		bq_hold_release(bq, false);
}

static const struct vq_worker_ops bq_worker_ops = {
	.enter = bq_enter,
	.round = bq_wround,
	.idle = bq_idle,
	.woke = bq_woke,
	.drained = bq_drained,
	.leave = bq_leave,
};

/* ---- queue start and stop ---- */

static void bq_free(struct blk_queue *bq)
{
	/* Before the slots go: the kernel may still hold requests. The
	 * disk queue and its ring stay for the next start. */
	if (bq->dq && disk_queue_reset(bq->dq, bq->size)) {
		disk_queue_close(bq->dq);
		bq->dq = NULL;
	}
	vq_worker_destroy(&bq->w);
	free(bq->slots);
	free(bq->iov_pool);
	free(bq->segs);
	free(bq->free_list);
	bq->slots = NULL;
	bq->iov_pool = NULL;
	bq->segs = NULL;
	bq->free_list = NULL;
}

static int bq_alloc(struct blk_queue *bq, uint16_t size)
{
	unsigned int i;

	bq->slots = calloc(size, sizeof(*bq->slots));
	bq->iov_pool = calloc((size_t)size * size, sizeof(*bq->iov_pool));
	bq->segs = calloc(size, sizeof(*bq->segs));
	bq->free_list = calloc(size, sizeof(*bq->free_list));
	if (!bq->slots || !bq->iov_pool || !bq->segs || !bq->free_list)
		return -ENOMEM;
	for (i = 0; i < size; i++) {
		bq->slots[i].req.iov = &bq->iov_pool[(size_t)i * size];
		bq->slots[i].req.iov_max = size;
		/* Hand out low slots first. */
		bq->free_list[i] = (uint16_t)(size - 1 - i);
	}
	bq->nr_free = size;
	return 0;
}

static int bq_setup(struct blk_queue *bq, struct virtio_queue *q)
{
	char name[16];
	int ret;

	bq->q = q;
	bq->size = q->size;
	snprintf(name, sizeof(name), "%.10s-q%u", bq->b->vdev->name,
		 q->index);
	ret = vq_worker_init(&bq->w, &bq_worker_ops, bq, name, CONFINE_IO);
	if (ret)
		return ret;
	bq->pending = bq->limited = NULL;
	bq->queued = bq->pushed = 0;
	bq->throttled = bq->more = bq->broken = false;
	bq->hold.until = 0;
	bq->hold.count = 0;
	blk_poll_init(bq, bq->b->poll_max_ns);
	ret = bq_alloc(bq, q->size);
	if (ret)
		return ret;
	/* The ring was made at device creation (blk_queue_open()). */
	if (!bq->dq)
		return -EIO;
	ret = disk_queue_reset(bq->dq, q->size);
	if (ret)
		return ret;
	ret = vq_worker_add_kick(&bq->w, q, BQ_TAG_KICK);
	if (!ret)
		ret = vq_worker_add_fd(&bq->w, disk_queue_fd(bq->dq),
				       BQ_TAG_DISK);
	return ret;
}

int blk_queue_open(struct blk_queue *bq, uint16_t max_size)
{
	return disk_queue_open(bq->b->disk, max_size, &bq->dq);
}

void blk_queue_close(struct blk_queue *bq)
{
	assert(!bq->w.running);
	disk_queue_close(bq->dq);
	bq->dq = NULL;
}

int blk_queue_start(struct blk_queue *bq, struct virtio_queue *q)
{
	int ret;

	ret = bq_setup(bq, q);
	if (!ret)
		ret = vq_worker_start(&bq->w);
	if (ret)
		goto err_free;
	return 0;

err_free:
	bq_free(bq);
	return ret;
}

void blk_queue_wake(struct blk_queue *bq)
{
	vq_worker_wake(&bq->w); /* nothing unless running */
}

void blk_queue_stop(struct blk_queue *bq)
{
	if (!bq->w.running)
		return;
	vq_worker_stop(&bq->w);
	bq_free(bq);
}
