// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock worker's rounds (virtio 1.2 §5.10.6): accept host
 * programs, hand ready host sockets to the core, take the guest's tx
 * packets, fill its rx buffers with what the core owes it, and post
 * TRANSPORT_RESET into the event queue; one defer_call section per round,
 * so each queue is signalled at most once. Every ring walk is bounded by
 * the queue size; a short or misshapen chain fails alone.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/defer_call.h"
#include "util/le.h"
#include "virtio/vsock_dev.h"

static void vsock_accept(struct vsock_dev *v)
{
	unsigned int i;

	for (i = 0; i < VSOCK_ACCEPT_BURST; i++) {
		int fd = accept4(v->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a connection that went away */
		if (vsock_core_host_accept(&v->core, fd))
			close(fd); /* the table is full */
	}
	v->again = true; /* more may wait in the backlog */
}

/* A started queue, or NULL. */
static struct virtq *vsock_vq(struct vsock_dev *v, unsigned int i)
{
	struct virtio_queue *q = &v->vdev->queues[i];

	return q->enabled && q->vq.ready && !q->vq.broken ? &q->vq : NULL;
}

/* Pop one chain; failed chains go back empty. 1, 0 (empty) or -EIO. */
static int vsock_pop(struct vsock_dev *v, struct virtq *vq,
		     struct virtq_elem *e)
{
	int r;

	e->segs = v->segs;
	e->max_segs = VSOCK_MAX_SEGS;
	r = virtq_pop(vq, e);
	if (r == -EIO)
		virtio_dev_broken(v->vdev, "vsock: broken ring");
	if (r == -EBADMSG) {
		atomic_fetch_add(&v->core.stats.bad_bufs, 1);
		virtq_push(vq, e->head, 0);
	}
	return r;
}

/*
 * The next chain of the rx or event queue: device-writable only, of at
 * least @min_len bytes. Notifications are turned back on when the ring
 * looks empty, and it is looked at once more (virtio 1.2 §2.7.10).
 * Return: 1 and the chain in @e; 0 when the ring is empty or broken
 * (stop); -EAGAIN when a chain was bad and went back unused (go on).
 */
static int vsock_pop_in(struct vsock_dev *v, struct virtq *vq,
			struct virtq_elem *e, uint64_t min_len)
{
	int r = vsock_pop(v, vq, e);

	if (r == 0 && virtq_notify_enable(vq))
		r = vsock_pop(v, vq, e);
	if (r == 0 || r == -EIO)
		return 0;
	if (r < 0)
		return -EAGAIN;
	if (e->nr_out || e->in_len < min_len) {
		atomic_fetch_add(&v->core.stats.bad_bufs, 1);
		virtq_push(vq, e->head, 0);
		return -EAGAIN;
	}
	return 1;
}

/* The device-readable part of a tx chain: header, then the payload. */
static void vsock_tx_one(struct vsock_dev *v, const struct virtq_elem *e)
{
	struct iovec iov[VSOCK_MAX_SEGS];
	uint8_t hdr[VSOCK_HDR_SIZE];
	size_t got = 0;
	unsigned int s;
	int n = 0;

	if (e->out_len < VSOCK_HDR_SIZE) {
		atomic_fetch_add(&v->core.stats.bad_bufs, 1);
		atomic_fetch_add(&v->core.stats.invalid, 1);
		return;
	}
	for (s = 0; s < e->nr_out; s++) {
		uint8_t *p = e->segs[s].addr;
		size_t len = e->segs[s].len, k = 0;

		if (got < VSOCK_HDR_SIZE) {
			k = VSOCK_HDR_SIZE - got < len ? VSOCK_HDR_SIZE - got :
							 len;
			memcpy(hdr + got, p, k);
			got += k;
		}
		if (k < len)
			iov[n++] = (struct iovec){ p + k, len - k };
	}
	vsock_core_tx(&v->core, hdr, iov, n, e->out_len - VSOCK_HDR_SIZE);
}

static void vsock_process_tx(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_TXQ];
	struct virtq *vq = vsock_vq(v, VSOCK_TXQ);
	unsigned int budget;
	struct virtq_elem e;
	int r;

	if (!vq)
		return;
	for (budget = vq->size; budget; budget--) {
		r = vsock_pop(v, vq, &e);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0)
			continue;
		vsock_tx_one(v, &e);
		virtq_push(vq, e.head, 0);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (!budget)
		v->again = true;
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

/* Write @n bytes of @src into the writable segments of @e from @off. */
static void vsock_put(const struct virtq_elem *e, size_t off,
		      const uint8_t *src, size_t n)
{
	unsigned int s;

	for (s = e->nr_out; s < e->nr_out + e->nr_in && n; s++) {
		size_t len = e->segs[s].len, k;

		if (off >= len) {
			off -= len;
			continue;
		}
		k = len - off < n ? len - off : n;
		memcpy((uint8_t *)e->segs[s].addr + off, src, k);
		src += k;
		n -= k;
		off = 0;
	}
}

/* One packet into an rx chain: 1, or 0 when the core had none after all. */
static int vsock_rx_one(struct vsock_dev *v, const struct virtq_elem *e,
			uint32_t *written)
{
	struct iovec iov[VSOCK_MAX_SEGS];
	uint8_t hdr[VSOCK_HDR_SIZE];
	size_t skip = VSOCK_HDR_SIZE;
	unsigned int s;
	uint32_t len;
	int n = 0;

	for (s = e->nr_out; s < e->nr_out + e->nr_in; s++) {
		size_t l = e->segs[s].len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		iov[n++] = (struct iovec){ (uint8_t *)e->segs[s].addr + skip,
					   l - skip };
		skip = 0;
	}
	if (!vsock_core_rx(&v->core, hdr, iov, n, &len))
		return 0;
	vsock_put(e, 0, hdr, sizeof(hdr));
	*written = VSOCK_HDR_SIZE + len;
	return 1;
}

static void vsock_process_rx(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_RXQ];
	struct virtq *vq = vsock_vq(v, VSOCK_RXQ);
	unsigned int budget;
	struct virtq_elem e;
	uint32_t written;
	int r;

	if (!vq)
		return;
	for (budget = vq->size; budget && vsock_core_rx_pending(&v->core);
	     budget--) {
		r = vsock_pop_in(v, vq, &e, VSOCK_HDR_SIZE);
		if (r == 0)
			break;
		if (r < 0)
			continue;
		if (!vsock_rx_one(v, &e, &written)) {
			/*
			 * Nothing after all (the sockets had no data): give
			 * the chain back unused. Its avail entry is still
			 * the driver's published one, and the driver cannot
			 * reuse it before it is in the used ring.
			 */
			vq->last_avail_idx--;
			break;
		}
		virtq_push(vq, e.head, written);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (!budget)
		v->again = true;
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

static void vsock_process_event(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_EVQ];
	struct virtq *vq = vsock_vq(v, VSOCK_EVQ);
	uint8_t ev[VSOCK_EVENT_BYTES];
	unsigned int budget;
	struct virtq_elem e;
	int r;

	if (!vq || !v->event_pending)
		return;
	le_put(ev, 4, VSOCK_EVENT_TRANSPORT_RESET);
	for (budget = vq->size; budget && v->event_pending; budget--) {
		r = vsock_pop_in(v, vq, &e, VSOCK_EVENT_BYTES);
		if (r == 0)
			break;
		if (r < 0)
			continue;
		vsock_put(&e, 0, ev, sizeof(ev));
		virtq_push(vq, e.head, VSOCK_EVENT_BYTES);
		v->event_pending = false;
		atomic_fetch_add(&v->core.stats.events_sent, 1);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

static void vsock_round(void *opaque, const uint64_t *tags, unsigned int n,
			bool kicked)
{
	struct vsock_dev *v = opaque;
	unsigned int i;

	(void)kicked; /* every ring is looked at each round: cheap */
	v->again = false;
	defer_call_begin();
	vsock_core_expire(&v->core, clock_now_ns());
	if (atomic_exchange(&v->reset_req, false)) {
		vsock_core_reset(&v->core);
		v->event_pending = true;
	}
	for (i = 0; i < n; i++) {
		if (tags[i] == TAG_LISTEN)
			vsock_accept(v);
		else if (tags[i] < VSOCK_MAX_CONNS)
			vsock_core_host_event(&v->core, (uint32_t)tags[i]);
	}
	if (!v->vhost) {
		vsock_process_tx(v);
		vsock_process_rx(v);
	}
	vsock_process_event(v);
	defer_call_end();
	if (v->again)
		vq_worker_wake(&v->w);
}

/* Sleep until the next connection deadline, or run its round now. */
static int64_t vsock_idle(void *opaque)
{
	struct vsock_dev *v = opaque;
	uint64_t next = v->core.next_deadline, now;

	if (!next)
		return -1;
	now = clock_now_ns();
	if (now < next)
		return (int64_t)(next - now);
	vsock_round(v, NULL, 0, false);
	return VQ_WORKER_AGAIN;
}

const struct vq_worker_ops vsock_worker_ops = {
	.round = vsock_round,
	.idle = vsock_idle,
};
