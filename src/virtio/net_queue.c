// SPDX-License-Identifier: Apache-2.0
/*
 * A virtio-net queue pair's worker (virtio 1.2 §5.1.6): tx chains are
 * parsed (net_hdr.c) and written to the tap with writev straight from
 * guest RAM; a packet read from the tap goes into one rx chain, or with
 * MRG_RXBUF into as many as it needs (num_buffers set, §5.1.6.4). At
 * most one packet is held in host memory: without rx buffers the tap is
 * not read until the guest kicks rx. Pair 0 also serves the control
 * queue. Each ring's work per round is bounded by its size, and each
 * round is one defer_call section: one interrupt per queue per batch.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/virtio_net.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/defer_call.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/net_priv.h"

#define F(bit) (1ull << (bit))

struct virtq *net_vq(struct net_dev *n, unsigned int qi)
{
	struct virtio_queue *q = &n->vdev->queues[qi];

	return q->enabled && q->vq.ready && !q->vq.broken ? &q->vq : NULL;
}

void net_pair_wake(struct net_pair *np)
{
	evfd_signal(np->w.wake_fd);
}

/* Pop one chain into @segs; a malformed one goes back empty. */
static int np_pop(struct net_dev *n, struct virtio_queue *q,
		  struct virtq_elem *e, struct virtq_seg *segs)
{
	int r;

	e->segs = segs;
	e->max_segs = NET_MAX_SEGS;
	r = virtq_pop(&q->vq, e);
	if (r == -EIO)
		virtio_dev_broken(n->vdev, "net: broken ring");
	if (r == -EBADMSG) {
		virtq_push(&q->vq, e->head, 0);
		atomic_fetch_add(&q->stats.errors, 1);
		log_ratelimited(&n->rl, LOG_WARN, "%s: queue %u: bad chain: %s",
				n->vdev->name, q->index,
				virtq_error_str(q->vq.last_error));
	}
	return r;
}

/*
 * Hand the last @k popped chains back to the ring: they were taken in
 * order and none is in the used ring, so their avail entries are still
 * the driver's published ones, which it cannot reuse before they are
 * used (§2.7.13); the next pop sees them again.
 */
static void np_unpop(struct virtq *vq, unsigned int k)
{
	vq->last_avail_idx = (uint16_t)(vq->last_avail_idx - k);
}

/* After a ring's round: one notification for what it pushed. */
static void np_batch_end(struct virtio_queue *q, uint16_t pushed_before)
{
	if (q->vq.used_idx != pushed_before)
		atomic_fetch_add(&q->stats.batches, 1);
	if (virtq_need_notify(&q->vq))
		virtio_queue_notify(q);
}

/* ---- tx (§5.1.6.2) ---- */

/*
 * A frame for the metadata service goes to its stack, not the tap (and
 * past the rate limiter, as its answers come back past it). Return: true
 * when taken.
 */
static bool np_tx_mmds(struct net_pair *np, const struct virtq_elem *e)
{
	struct net_dev *n = np->n;
	uint8_t head[MMDS_MATCH_BYTES];
	size_t len;

	/* The frame follows the header in the chain's readable bytes. */
	if (net_copy_out(e, NET_HDR_SIZE, head, sizeof(head)) !=
		    sizeof(head) ||
	    !mmds_stack_match(n->mmds, head, sizeof(head)))
		return false;
	if (!np->mmds_buf) {
		np->mmds_buf = malloc(NET_MAX_FRAME);
		if (!np->mmds_buf)
			return true; /* dropped */
	}
	len = net_copy_out(e, NET_HDR_SIZE, np->mmds_buf, NET_MAX_FRAME);
	return mmds_stack_tx(n->mmds, np->mmds_buf, len, clock_now_ns());
}

/* One parsed packet to the tap. Return: false to stop (held). */
static bool np_tx_one(struct net_pair *np, struct virtio_queue *q,
		      const struct virtq_elem *e)
{
	struct net_dev *n = np->n;
	enum net_tx_err err;
	uint64_t wait;
	ssize_t w;

	err = net_tx_parse(e, n->vdev->driver_features, &np->tx);
	if (err) {
		atomic_fetch_add(&np->st.tx_errors, 1);
		atomic_fetch_add(&q->stats.errors, 1);
		log_ratelimited(&n->rl, LOG_WARN, "%s: tx queue %u: %s",
				n->vdev->name, q->index, net_tx_err_str(err));
		return true;
	}
	if (n->mmds && np_tx_mmds(np, e))
		return true;
	wait = rl_consume(&n->tx_rl, 1, np->tx.frame_len);
	if (wait) {
		if (!np->tx_throttling) {
			atomic_fetch_add(&np->st.tx_throttled, 1);
			atomic_fetch_add(&q->stats.throttled, 1);
		}
		np->tx_throttling = true;
		np->tx_until = clock_now_ns() + wait;
		return false;
	}
	np->tx_throttling = false;
	w = writev(np->tap_fd, np->tx.iov, (int)np->tx.iovcnt);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		np->tx_blocked = true;
		return false;
	}
	if (w < 0) {
		/* The tap refused it (a header the kernel rejects, the
		 * interface down): the packet is dropped. */
		atomic_fetch_add(&np->st.tx_drops, 1);
		return true;
	}
	atomic_fetch_add(&np->st.tx_packets, 1);
	atomic_fetch_add(&np->st.tx_bytes, np->tx.frame_len);
	return true;
}

static void np_tx(struct net_pair *np)
{
	struct net_dev *n = np->n;
	struct virtio_queue *q = &n->vdev->queues[2 * np->idx + 1];
	struct virtq *vq = net_vq(n, q->index);
	unsigned int budget;
	struct virtq_elem e;
	uint16_t pushed;
	int r;

	if (!vq || np->tx_blocked)
		return;
	if (np->tx_until && clock_now_ns() < np->tx_until)
		return;
	np->tx_until = 0;
	pushed = vq->used_idx;
	virtq_notify_disable(vq);
	for (budget = vq->size; budget; budget--) {
		r = np_pop(n, q, &e, np->segs);
		if (r == 0 && virtq_notify_enable(vq))
			r = np_pop(n, q, &e, np->segs);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0)
			continue;
		if (!np_tx_one(np, q, &e)) {
			np_unpop(vq, 1); /* stays in the ring until due */
			break;
		}
		virtq_push(vq, e.head, 0);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (!budget)
		np->again = true;
	np_batch_end(q, pushed);
}

/* ---- rx (§5.1.6.3, §5.1.6.4) ---- */

/*
 * Copy pkt[off, off + len) to the start of @e's writable segments; note
 * where the header's num_buffers (bytes 10 and 11) landed.
 */
static void np_rx_copy(struct net_pair *np, const struct virtq_elem *e,
		       size_t off, size_t len, uint8_t **nb)
{
	unsigned int s;
	size_t i;

	for (s = e->nr_out; s < e->nr_out + e->nr_in && len; s++) {
		uint8_t *p = e->segs[s].addr;
		size_t k = e->segs[s].len < len ? e->segs[s].len : len;

		memcpy(p, np->pkt + off, k);
		for (i = 10; i < 12; i++)
			if (i >= off && i < off + k)
				nb[i - 10] = p + (i - off);
		off += k;
		len -= k;
	}
}

/* The chains taken for a packet that will not go in this time. */
static void np_rx_undo(struct virtq *vq, struct net_pair *np, unsigned int k,
		       bool pushed_between)
{
	unsigned int i;

	if (!pushed_between) {
		np_unpop(vq, k);
		return;
	}
	/* A bad chain went to the used ring among them: they cannot go
	 * back, so they go to the used ring empty. */
	for (i = 0; i < k; i++)
		virtq_push(vq, np->used[i].head, 0);
}

/*
 * The held packet into the rx ring. Return: 1 delivered, 0 not enough
 * buffers yet (held, nothing consumed), -1 dropped.
 */
static int np_rx_deliver(struct net_pair *np, struct virtio_queue *q)
{
	struct net_dev *n = np->n;
	struct virtq *vq = &q->vq;
	bool mrg = n->vdev->driver_features & F(VIRTIO_NET_F_MRG_RXBUF);
	size_t off = 0, len = np->pkt_len, take;
	unsigned int k = 0, i, steps;
	bool pushed = false;
	uint8_t *nb[2] = { NULL, NULL };
	struct virtq_elem e;
	int r;

	/* Each step consumes an avail entry: bounded by twice the ring. */
	for (steps = 0; off < len && steps < 2u * vq->size; steps++) {
		if (k == vq->size)
			break; /* a whole ring cannot hold it */
		r = np_pop(n, q, &e, np->segs);
		if (r == 0 && virtq_notify_enable(vq))
			r = np_pop(n, q, &e, np->segs);
		if (r == 0) {
			np_rx_undo(vq, np, k, pushed);
			return pushed && k ? -1 : 0;
		}
		if (r == -EIO)
			return -1; /* the device is broken now */
		if (r < 0 || e.nr_out) {
			if (r > 0) {
				virtq_push(vq, e.head, 0);
				atomic_fetch_add(&q->stats.errors, 1);
			}
			atomic_fetch_add(&np->st.rx_errors, 1);
			pushed = true;
			continue;
		}
		if (!mrg && e.in_len < len) {
			/* Without MRG_RXBUF a packet takes one chain
			 * (§5.1.6.3.1): too small for this one. */
			np->used[k++] = (struct net_rx_used){ e.head, 0 };
			np_rx_undo(vq, np, k, pushed);
			return -1;
		}
		take = e.in_len < len - off ? (size_t)e.in_len : len - off;
		np_rx_copy(np, &e, off, take, nb);
		np->used[k++] = (struct net_rx_used){ e.head, (uint32_t)take };
		off += take;
	}
	if (off < len) {
		np_rx_undo(vq, np, k, pushed);
		return -1;
	}
	/* num_buffers: 1 without MRG_RXBUF (§5.1.6.4). */
	for (i = 0; i < 2; i++)
		if (nb[i])
			*nb[i] = (uint8_t)(k >> (8 * i));
	for (i = 0; i < k; i++)
		virtq_push(vq, np->used[i].head, np->used[i].len);
	atomic_fetch_add(&q->stats.requests, k);
	return 1;
}

/*
 * The tap failed for good (a detached queue, a socket whose peer left):
 * epoll would report it ready forever (EPOLLERR, EPOLLHUP), so it leaves
 * the epoll set; the pair's tx chains go on being taken and dropped.
 */
static void np_tap_dead(struct net_pair *np, int err)
{
	struct net_dev *n = np->n;

	atomic_fetch_add(&np->st.rx_errors, 1);
	log_ratelimited(&n->rl, LOG_ERROR, "%s: pair %u: tap: %s",
			n->vdev->name, np->idx,
			err ? strerror(err) : "end of file");
	np->tap_dead = true;
	if (np->watching != NET_TAP_UNWATCHED &&
	    !vq_worker_del_fd(&np->w, np->tap_fd))
		np->watching = NET_TAP_UNWATCHED;
}

/* Read the next packet from the tap. Return: false when there is none. */
static bool np_rx_read(struct net_pair *np)
{
	ssize_t r;

	r = read(np->tap_fd, np->pkt, NET_MAX_PACKET + 1);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		      errno == EINTR))
		return false;
	if (r <= 0) {
		np_tap_dead(np, r ? errno : 0);
		return false;
	}
	if (r < (ssize_t)(NET_HDR_SIZE + NET_MIN_FRAME) ||
	    r > (ssize_t)NET_MAX_PACKET) {
		atomic_fetch_add(&np->st.rx_drops, 1);
		return true; /* dropped; look for the next one */
	}
	np->pkt_len = (size_t)r;
	np->pkt_admitted = false;
	return true;
}

/* The metadata service's next frame for the guest into the held
 * packet's place. Return: false when it has none. */
static bool np_rx_mmds(struct net_pair *np)
{
	size_t k = mmds_stack_rx(np->n->mmds, np->pkt + NET_HDR_SIZE,
				 NET_MAX_FRAME, clock_now_ns());

	if (!k)
		return false;
	memset(np->pkt, 0, NET_HDR_SIZE);
	np->pkt_len = NET_HDR_SIZE + k;
	np->pkt_admitted = true; /* not the tap's: no rx limit */
	return true;
}

static void np_rx(struct net_pair *np)
{
	struct net_dev *n = np->n;
	struct virtio_queue *q = &n->vdev->queues[2 * np->idx];
	struct virtq *vq = net_vq(n, q->index);
	unsigned int budget;
	uint16_t pushed;
	uint64_t wait;
	int r;

	/* No usable ring (not enabled, broken) or no tap: nothing to read
	 * for, and a readable tap must not be watched (it would spin). */
	np->rx_starved = !vq || np->tap_dead;
	if (np->rx_starved)
		return;
	if (np->rx_until && clock_now_ns() < np->rx_until)
		return;
	np->rx_until = 0;
	pushed = vq->used_idx;
	for (budget = vq->size; budget; budget--) {
		if (!np->pkt_len) {
			/* No buffer, no read (nothing held for nothing). */
			if (!virtq_has_avail(vq) && !virtq_notify_enable(vq)) {
				np->rx_starved = true;
				break;
			}
			if ((!n->mmds || !np_rx_mmds(np)) && !np_rx_read(np))
				break;
			if (!np->pkt_len)
				continue;
		}
		if (!np->pkt_admitted) {
			wait = rl_consume(&n->rx_rl, 1,
					  np->pkt_len - NET_HDR_SIZE);
			if (wait) {
				if (!np->rx_throttling)
					atomic_fetch_add(&np->st.rx_throttled,
							 1);
				np->rx_throttling = true;
				np->rx_until = clock_now_ns() + wait;
				break;
			}
			np->rx_throttling = false;
			np->pkt_admitted = true;
		}
		r = np_rx_deliver(np, q);
		if (r == 0) {
			np->rx_starved = true;
			break;
		}
		if (r > 0) {
			atomic_fetch_add(&np->st.rx_packets, 1);
			atomic_fetch_add(&np->st.rx_bytes,
					 np->pkt_len - NET_HDR_SIZE);
		} else {
			atomic_fetch_add(&np->st.rx_drops, 1);
		}
		np->pkt_len = 0;
		if (vq->broken)
			break;
	}
	if (!budget)
		np->again = true;
	np_batch_end(q, pushed);
}

/* ---- the control queue (§5.1.6.5), on pair 0 ---- */

/*
 * The control queue's index (§5.1.2): after the last pair with MQ, after
 * the first without it, where pair 1's worker watches its kicks and
 * passes them on (np_round()). UINT_MAX: no control queue negotiated.
 */
static unsigned int np_ctrl_qi(struct net_dev *n)
{
	uint64_t f = n->vdev->driver_features;

	if (!n->has_ctrl || !(f & F(VIRTIO_NET_F_CTRL_VQ)))
		return UINT_MAX;
	return f & F(VIRTIO_NET_F_MQ) ? 2 * n->pairs : 2;
}

static void np_ctrl(struct net_dev *n)
{
	unsigned int qi = np_ctrl_qi(n);
	struct virtio_queue *q = qi == UINT_MAX ? NULL : &n->vdev->queues[qi];
	struct virtq *vq = q ? net_vq(n, qi) : NULL;
	/* Without MQ no VQ_PAIRS_SET is in range (§5.1.6.5.5). */
	unsigned int max = n->vdev->driver_features & F(VIRTIO_NET_F_MQ) ?
				   n->pairs : 0;
	struct net_ctrl_cmd cmd;
	enum net_ctrl_err err;
	unsigned int budget, i;
	struct virtq_elem e;
	int r;

	if (!vq || atomic_load(&n->ctrl_pending))
		return;
	for (budget = vq->size; budget; budget--) {
		r = np_pop(n, q, &e, n->ctrl_segs);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0) {
			atomic_fetch_add(&n->ctrl_err, 1);
			continue;
		}
		err = net_ctrl_parse(&e, max, &cmd);
		if (err) {
			log_ratelimited(&n->rl, LOG_WARN, "%s: control: %s",
					n->vdev->name, net_ctrl_err_str(err));
			atomic_fetch_add(&n->ctrl_err, 1);
			atomic_fetch_add(&q->stats.errors, 1);
			if (cmd.ack)
				*cmd.ack = VIRTIO_NET_ERR;
			virtq_push(vq, e.head, cmd.ack ? 1 : 0);
			continue;
		}
		/* VQ_PAIRS_SET: acked once every pair has seen it. */
		atomic_store(&n->active_pairs, cmd.pairs);
		net_tap_queues(n, cmd.pairs);
		atomic_fetch_add(&n->gen, 1);
		n->ctrl_head = e.head;
		n->ctrl_ack = cmd.ack;
		atomic_store(&n->ctrl_pending, true);
		for (i = 1; i < n->pairs; i++)
			net_pair_wake(&n->pair[i]);
		break;
	}
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

/* Ack a pending VQ_PAIRS_SET once no pair works on the old count. */
static void np_ctrl_finish(struct net_dev *n)
{
	unsigned int qi = np_ctrl_qi(n);
	struct virtio_queue *q = qi == UINT_MAX ? NULL : &n->vdev->queues[qi];
	struct virtq *vq = q ? net_vq(n, qi) : NULL;
	unsigned int gen = atomic_load(&n->gen), i;

	if (!atomic_load(&n->ctrl_pending))
		return;
	for (i = 1; i < n->pairs; i++)
		if (atomic_load(&n->pair[i].live) &&
		    atomic_load(&n->pair[i].seen_gen) != gen)
			return;
	atomic_store(&n->ctrl_pending, false);
	n->pair[0].again = true; /* the next command */
	if (!vq)
		return;
	*n->ctrl_ack = VIRTIO_NET_OK;
	virtq_push(vq, n->ctrl_head, 1);
	atomic_fetch_add(&n->ctrl_ok, 1);
	atomic_fetch_add(&q->stats.requests, 1);
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

/* ---- the worker ---- */

/* What the tap fd is watched for: see net_priv.h. */
static void np_watch(struct net_pair *np)
{
	uint32_t want = 0;
	int ret;

	if (np->n->vhost)
		return; /* the tap is vhost_net's */
	if (np->active && !np->rx_starved && !np->rx_until && !np->pkt_len)
		want |= EPOLLIN;
	if (np->active && np->tx_blocked)
		want |= EPOLLOUT;
	if (want == np->watching || np->tap_dead)
		return;
	ret = vq_worker_watch(&np->w, np->tap_fd, NET_TAG_TAP, want);
	if (ret)
		log_ratelimited(&np->n->rl, LOG_WARN,
				"%s: epoll on the tap: %s",
				np->n->vdev->name, strerror(-ret));
	else
		np->watching = want;
}

static void np_round(void *opaque, const uint64_t *tags, unsigned int nt,
		     bool kicked)
{
	struct net_pair *np = opaque;
	struct net_dev *n = np->n;
	unsigned int gen, rl_gen, i;

	(void)kicked; /* both rings are looked at every round: cheap */
	for (i = 0; i < nt; i++) {
		if (tags[i] == NET_TAG_TAP)
			np->tx_blocked = false; /* writable, or try again */
		/* A kick of queue 2 is pair 0's control queue without MQ. */
		if (tags[i] == NET_TAG_RX && np->idx == 1 &&
		    np_ctrl_qi(n) == 2)
			net_pair_wake(&n->pair[0]);
	}
	np->again = false;
	rl_gen = atomic_load(&n->rl_gen);
	if (rl_gen != np->rl_gen) {
		np->rl_gen = rl_gen; /* new limits: look again now */
		np->rx_until = np->tx_until = 0;
	}
	defer_call_begin();
	if (np->idx == 0)
		np_ctrl(n);
	gen = atomic_load(&n->gen);
	np->active = np->idx < atomic_load(&n->active_pairs);
	/* engine=vhost: the kernel serves rx and tx. */
	if (np->active && !n->vhost) {
		np_tx(np);
		np_rx(np);
	}
	atomic_store(&np->seen_gen, gen);
	if (np->idx == 0)
		np_ctrl_finish(n);
	else if (atomic_load(&n->ctrl_pending))
		net_pair_wake(&n->pair[0]);
	defer_call_end();
	np_watch(np);
	if (np->again)
		vq_worker_wake(&np->w);
}

/* Sleep until a rate limit's tokens are due, or run that round now. */
static int64_t np_idle(void *opaque)
{
	struct net_pair *np = opaque;
	uint64_t next = np->rx_until, now, m;

	if (np->tx_until && (!next || np->tx_until < next))
		next = np->tx_until;
	/* The metadata service's resends, on pair 0 while it can take
	 * them (a starved ring waits for the guest's rx kick). */
	if (np->idx == 0 && np->n->mmds && np->active && !np->rx_starved &&
	    (m = mmds_stack_deadline(np->n->mmds)) && (!next || m < next))
		next = m;
	if (!next)
		return -1;
	now = clock_now_ns();
	if (now < next)
		return (int64_t)(next - now);
	np_round(np, NULL, 0, false);
	return VQ_WORKER_AGAIN;
}

const struct vq_worker_ops net_worker_ops = {
	.round = np_round,
	.idle = np_idle,
};

void net_pair_reset(struct net_pair *np)
{
	if (np->pkt_len)
		atomic_fetch_add(&np->st.rx_drops, 1);
	np->pkt_len = 0;
	np->pkt_admitted = false;
	np->rx_starved = np->tx_blocked = np->tx_throttling = false;
	np->rx_throttling = false;
	np->rx_until = np->tx_until = 0;
	np->active = false;
}
