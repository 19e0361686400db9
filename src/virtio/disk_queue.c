// SPDX-License-Identifier: Apache-2.0
/*
 * The engine-independent half of a disk queue: depth accounting, the list of
 * finished requests and the completion eventfd. Every engine finishes
 * requests through disk_queue_complete(), and the caller collects them all
 * through disk_queue_reap(), so there is one completion path whatever the
 * engine.
 */
#include <assert.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "virtio/disk_engine.h"

int disk_queue_open(struct disk *d, unsigned int depth,
		    struct disk_queue **out)
{
	struct disk_queue *q;
	int efd, ret;

	if (!depth || depth > DISK_QUEUE_MAX_DEPTH)
		return -EINVAL;
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return -errno;
	ret = d->ops->queue_open(d, depth, efd, &q);
	if (ret) {
		close(efd);
		return ret;
	}
	q->disk = d;
	q->depth = q->max_depth = depth;
	q->inflight = 0;
	q->efd = efd;
	q->done_head = NULL;
	q->done_tail = &q->done_head;
	ret = disk_bounce_init(&q->bounce, d);
	if (ret) {
		d->ops->queue_close(q);
		close(efd);
		return ret;
	}
	*out = q;
	return 0;
}

void disk_queue_close(struct disk_queue *q)
{
	struct disk_bounce bounce;
	int efd;

	if (!q)
		return;
	efd = q->efd;
	/* Finished requests hold no buffers: dropping the list is enough. */
	q->done_head = NULL;
	q->done_tail = &q->done_head;
	/* The engine frees @q; the kernel is done with the buffers then. */
	bounce = q->bounce;
	q->disk->ops->queue_close(q);
	disk_bounce_fini(&bounce);
	close(efd);
}

int disk_queue_reset(struct disk_queue *q, unsigned int depth)
{
	uint64_t cnt;
	int ret;

	if (!depth || depth > q->max_depth)
		return -EINVAL;
	ret = q->disk->ops->queue_drain ? q->disk->ops->queue_drain(q) : 0;
	if (ret)
		return ret;
	/* Finished requests hold no buffers: dropping the list is enough. */
	q->done_head = NULL;
	q->done_tail = &q->done_head;
	q->inflight = 0;
	q->signal_owed = false;
	/* No wakeup of the old run is left for the next. */
	if (read(q->efd, &cnt, sizeof(cnt)) < 0)
		assert(errno == EAGAIN || errno == EINTR);
	/* Every bounce buffer is free again (disk_req_abandon()). */
	assert(q->bounce.nfree == (q->bounce.mem ? DISK_BOUNCE_SLOTS : 0));
	q->depth = depth;
	return 0;
}

void disk_queue_signal(struct disk_queue *q)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is saturated: it is readable anyway. */
	if (write(q->efd, &one, sizeof(one)) < 0)
		assert(errno == EAGAIN || errno == EINTR);
}

void disk_queue_complete(struct disk_queue *q, struct disk_req *r)
{
	r->priv.next = NULL;
	*q->done_tail = r;
	q->done_tail = &r->priv.next;
}

int disk_queue_submit(struct disk_queue *q, struct disk_req *r)
{
	struct disk_kcall kc;

	if (q->inflight >= q->depth)
		return -EAGAIN;
	switch (disk_req_start(q->disk, &q->bounce, r, &kc)) {
	case DISK_REQ_WAIT:
		/* Every bounce buffer is held by a request in flight. */
		return -EAGAIN;
	case DISK_REQ_DONE:
		q->inflight++;
		disk_queue_complete(q, r);
		disk_queue_signal(q);
		return 0;
	default:
		q->inflight++;
		q->disk->ops->submit(q, r, &kc);
		return 0;
	}
}

int disk_queue_flush(struct disk_queue *q)
{
	int ret = q->disk->ops->flush(q);

	if (q->signal_owed) {
		/* One wakeup for the batch finished in the thread. */
		q->signal_owed = false;
		disk_queue_signal(q);
	}
	return ret;
}

int disk_queue_fd(struct disk_queue *q)
{
	return q->efd;
}

int disk_queue_replace_file(struct disk_queue *q, int fd)
{
	const struct disk_engine_ops *ops = q->disk->ops;

	return ops->replace_file ? ops->replace_file(q, fd) : 0;
}

/* Finish the done list as it is now. */
static int disk_queue_finish(struct disk_queue *q, disk_complete_fn fn,
			     void *arg)
{
	struct disk_req *list, *r;
	int n = 0;

	/* Detach, so requests that @fn submits and that fail at once wait
	 * for the next reap instead of looping here. */
	list = q->done_head;
	q->done_head = NULL;
	q->done_tail = &q->done_head;
	while (list) {
		r = list;
		list = r->priv.next;
		assert(q->inflight > 0);
		q->inflight--;
		fn(arg, r);
		n++;
	}
	return n;
}

int disk_queue_reap(struct disk_queue *q, disk_complete_fn fn, void *arg)
{
	uint64_t cnt;

	/* Drain first: anything finishing after this signals again. */
	if (read(q->efd, &cnt, sizeof(cnt)) < 0)
		assert(errno == EAGAIN || errno == EINTR);
	if (q->disk->ops->reap)
		q->disk->ops->reap(q);
	return disk_queue_finish(q, fn, arg);
}

int disk_queue_drain(struct disk_queue *q, disk_complete_fn fn, void *arg)
{
	/* What the thread finished needs no wakeup now. */
	q->signal_owed = false;
	return disk_queue_finish(q, fn, arg);
}

bool disk_queue_ready(struct disk_queue *q)
{
	if (q->done_head)
		return true;
	return q->disk->ops->ready && q->disk->ops->ready(q);
}

unsigned int disk_queue_inflight(const struct disk_queue *q)
{
	return q->inflight;
}
