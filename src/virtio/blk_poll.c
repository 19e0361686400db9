// SPDX-License-Identifier: Apache-2.0
/*
 * Adaptive polling of a virtio-blk queue thread. After a round the thread
 * busy-polls its avail ring and its disk queue, kicks off, for a bounded
 * window before it sleeps: a driver adding requests and a disk finishing
 * them are then served without a kick, an eventfd wakeup or a round each,
 * so rounds take bigger batches and batches raise fewer interrupts.
 *
 * The window adapts between 0 and the cap: it grows (from BLK_POLL_START_NS,
 * doubling) when the next event came within the cap of the window's start,
 * caught late in the window or just after it; it halves, down to 0, when a
 * kick woke the thread later than the cap. A sleep that only the disk ended
 * is a wait for the disk and says nothing of the driver, so it leaves the
 * window as it is: a slow disk would otherwise shrink, every time a batch
 * is in flight, the window that the driver's refill after each completion
 * batch grew, and the window would never outlast 0 (the refill always came
 * with a kick). So an idle guest costs one window per wakeup at most, and
 * soon none.
 */
#include <stdatomic.h>
#include <time.h>

#include "virtio/blk_priv.h"

/* First window after 0; never above the cap. */
#define BLK_POLL_START_NS 4000u

uint64_t blk_clock_ns(void)
{
	struct timespec ts;

	/* A vDSO call where the clock source allows it; else the (allowed)
	 * system call. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void blk_poll_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static void blk_poll_set(struct blk_queue *bq, uint64_t window_ns)
{
	bq->poll.window_ns = window_ns;
	atomic_store_explicit(&bq->q->stats.poll_window_ns, window_ns,
			      memory_order_relaxed);
}

static void blk_poll_grow(struct blk_queue *bq)
{
	struct blk_poll *p = &bq->poll;
	uint64_t w = p->window_ns ? p->window_ns * 2 : BLK_POLL_START_NS;

	blk_poll_set(bq, w < p->max_ns ? w : p->max_ns);
}

static void blk_poll_shrink(struct blk_queue *bq)
{
	struct blk_poll *p = &bq->poll;
	uint64_t floor = BLK_POLL_START_NS < p->max_ns ? BLK_POLL_START_NS :
							 p->max_ns;
	uint64_t w = p->window_ns / 2;

	blk_poll_set(bq, w < floor ? 0 : w);
}

void blk_poll_init(struct blk_queue *bq, uint64_t max_ns)
{
	bq->poll.max_ns = max_ns;
	bq->poll.window_ns = 0;
	bq->poll.missed_at = 0;
	bq->poll.kicks_off = false;
	blk_poll_set(bq, 0);
}

bool blk_poll_wanted(struct blk_queue *bq)
{
	return bq->poll.max_ns &&
	       !vq_worker_stop_asked(&bq->w);
}

/*
 * Kicks back on, then the ring looked at again (virtq_notify_enable()'s
 * barrier): a chain added before the driver could see kicks on is found
 * here, one added after is kicked for.
 */
static unsigned int blk_poll_end(struct blk_queue *bq)
{
	if (!bq->poll.kicks_off)
		return 0;
	bq->poll.kicks_off = false;
	if (virtq_notify_enable(&bq->q->vq) && !bq->w.stopping)
		return BLK_POLL_RING;
	return 0;
}

/* Spin until something is found, a stop is asked, or @end passes. */
static unsigned int blk_poll_spin(struct blk_queue *bq, uint64_t start,
				  uint64_t end, uint64_t *now)
{
	struct virtq *vq = &bq->q->vq;
	unsigned int found;

	for (*now = start;; *now = blk_clock_ns()) {
		found = 0;
		if (virtq_has_avail(vq))
			found |= BLK_POLL_RING;
		if (disk_queue_ready(bq->dq))
			found |= BLK_POLL_DISK;
		if (found || *now >= end ||
		    vq_worker_stop_asked(&bq->w))
			return found;
		blk_poll_relax();
	}
}

unsigned int blk_poll_run(struct blk_queue *bq)
{
	struct virtio_queue_stats *st = &bq->q->stats;
	struct blk_poll *p = &bq->poll;
	uint64_t start, end, now;
	unsigned int found;
	bool late, cut;

	if (!blk_poll_wanted(bq) || bq->w.stopping || bq->broken ||
	    bq->throttled)
		return blk_poll_end(bq);
	if (!p->kicks_off) {
		/* A round that only reaped: kicks are still on. */
		virtq_notify_disable(&bq->q->vq);
		p->kicks_off = true;
	}
	start = blk_clock_ns();
	end = start + p->window_ns;
	cut = bq->hold.until && bq->hold.until < end;
	if (cut)
		end = bq->hold.until;
	found = blk_poll_spin(bq, start, end, &now);
	atomic_fetch_add_explicit(&st->poll_ns, now - start,
				  memory_order_relaxed);
	/* The held notification is due: released, then the window anew. */
	if (!found && cut &&
	    !vq_worker_stop_asked(&bq->w))
		return BLK_POLL_HOLD;
	late = !found;
	if (late)
		found = blk_poll_end(bq);
	if (found) {
		atomic_fetch_add_explicit(&st->poll_hits, 1,
					  memory_order_relaxed);
		/* Caught at the end or in the second half of the window: a
		 * little later and it would have been missed. */
		if (late || (now - start) * 2 > p->window_ns)
			blk_poll_grow(bq);
		return found;
	}
	atomic_fetch_add_explicit(&st->poll_misses, 1, memory_order_relaxed);
	p->missed_at = start;
	return 0;
}

void blk_poll_woke(struct blk_queue *bq, bool kicked)
{
	struct blk_poll *p = &bq->poll;

	if (!p->missed_at)
		return;
	if (blk_clock_ns() - p->missed_at <= p->max_ns)
		blk_poll_grow(bq);
	else if (kicked)
		blk_poll_shrink(bq);
	p->missed_at = 0;
}
