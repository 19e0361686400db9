// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock connection table (virtio 1.2 §5.10.6) with
 * Firecracker's hybrid host side: slots, the hash of (host port, guest
 * port), each connection's watch set and rx readiness, resets, the host
 * program's CONNECT line and the writing out of what the guest sent,
 * deadlines. Guest packets are vsock_pkt.c's. Every table walk is
 * bounded by VSOCK_MAX_CONNS.
 */
#include "virtio/vsock_conn.h"
#include "virtio/vsock_priv.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VSOCK_HASH_BITS 11
#define VSOCK_HASH_SIZE (1u << VSOCK_HASH_BITS)
/* Ring flush attempts per host event (each one moves bytes or stops). */
#define VSOCK_FLUSH_TRIES 4

static uint32_t vsock_hash(uint32_t local, uint32_t peer)
{
	uint32_t h = local * 0x9e3779b1u ^ (peer * 0x85ebca6bu + 0x7f4a7c15u);

	return h >> (32 - VSOCK_HASH_BITS);
}

int vsock_core_find(const struct vsock_core *vc, uint32_t local_port,
		    uint32_t peer_port)
{
	int32_t i = vc->hash[vsock_hash(local_port, peer_port)];
	unsigned int steps = 0;

	while (i >= 0 && steps++ < VSOCK_MAX_CONNS) {
		const struct vsock_conn *c = &vc->conns[i];

		if (c->local_port == local_port && c->peer_port == peer_port)
			return i;
		i = c->hnext;
	}
	return -1;
}

void vsock_hash_add(struct vsock_core *vc, struct vsock_conn *c)
{
	uint32_t h = vsock_hash(c->local_port, c->peer_port);

	c->hnext = vc->hash[h];
	vc->hash[h] = (int32_t)vsock_conn_idx(vc, c);
}

static void hash_del(struct vsock_core *vc, struct vsock_conn *c)
{
	int32_t *p = &vc->hash[vsock_hash(c->local_port, c->peer_port)];
	int32_t me = (int32_t)vsock_conn_idx(vc, c);
	unsigned int steps = 0;

	while (*p >= 0 && steps++ < VSOCK_MAX_CONNS) {
		if (*p == me) {
			*p = c->hnext;
			return;
		}
		p = &vc->conns[*p].hnext;
	}
}

int vsock_core_init(struct vsock_core *vc, uint64_t guest_cid,
		    const struct vsock_io_ops *ops, void *opaque)
{
	unsigned int i;

	memset(vc, 0, sizeof(*vc));
	vc->ops = ops;
	vc->opaque = opaque;
	vc->guest_cid = guest_cid;
	vc->next_port = VSOCK_EPHEMERAL_BASE;
	vc->conns = calloc(VSOCK_MAX_CONNS, sizeof(*vc->conns));
	vc->hash = calloc(VSOCK_HASH_SIZE, sizeof(*vc->hash));
	vc->free_idx = calloc(VSOCK_MAX_CONNS, sizeof(*vc->free_idx));
	vc->rxq = calloc(VSOCK_MAX_CONNS, sizeof(*vc->rxq));
	if (!vc->conns || !vc->hash || !vc->free_idx || !vc->rxq) {
		free(vc->conns);
		free(vc->hash);
		free(vc->free_idx);
		free(vc->rxq);
		return -ENOMEM;
	}
	for (i = 0; i < VSOCK_HASH_SIZE; i++)
		vc->hash[i] = -1;
	for (i = 0; i < VSOCK_MAX_CONNS; i++) {
		vc->conns[i].fd = -1;
		vc->conns[i].hnext = -1;
		/* Pop order 0, 1, 2, ...: the stack holds them reversed. */
		vc->free_idx[i] = (uint16_t)(VSOCK_MAX_CONNS - 1 - i);
	}
	vc->nr_free = VSOCK_MAX_CONNS;
	return 0;
}

struct vsock_conn *vsock_conn_alloc(struct vsock_core *vc)
{
	struct vsock_conn *c;
	bool in_rxq;

	if (!vc->nr_free)
		return NULL;
	c = &vc->conns[vc->free_idx[--vc->nr_free]];
	assert(c->state == VSOCK_FREE);
	/* in_rxq stays with the slot: the ring may still hold it. */
	in_rxq = c->in_rxq;

	memset(c, 0, sizeof(*c));
	c->in_rxq = in_rxq;
	c->fd = -1;
	c->hnext = -1;
	return c;
}

static void conn_close_host(struct vsock_core *vc, struct vsock_conn *c)
{
	if (c->fd < 0)
		return;
	vc->ops->close(vc->opaque, c->fd, vsock_conn_idx(vc, c));
	c->fd = -1;
	c->watching = 0;
}

void vsock_conn_drop_buf(struct vsock_conn *c)
{
	/*
	 * Whatever the guest sent that the host socket did not take (the
	 * ring, or a packet a failed send cut short) is gone as surely as
	 * what it took: all of it counts as forwarded, so buf_len ==
	 * rx_cnt - fwd_cnt holds on every live connection, a reset or
	 * closing one too.
	 */
	c->fwd_cnt = c->rx_cnt;
	free(c->buf);
	c->buf = NULL;
	c->buf_head = c->buf_len = 0;
}

void vsock_conn_free(struct vsock_core *vc, struct vsock_conn *c)
{
	if (c->state == VSOCK_FREE)
		return;
	conn_close_host(vc, c);
	if (c->state != VSOCK_AWAIT_LINE)
		hash_del(vc, c);
	vsock_conn_drop_buf(c);
	c->state = VSOCK_FREE;
	c->pending = 0;
	c->deadline = 0;
	vc->free_idx[vc->nr_free++] = (uint16_t)vsock_conn_idx(vc, c);
	vsock_stat_inc(&vc->stats.conns_closed, 1);
}

static bool conn_wants_rx(const struct vsock_conn *c)
{
	return c->state == VSOCK_RST_PENDING || c->pending ||
	       vsock_conn_data_ready(c);
}

void vsock_set_deadline(struct vsock_core *vc, struct vsock_conn *c,
			 uint64_t after)
{
	c->deadline = vc->now + after;
	if (!c->deadline)
		c->deadline = 1;
	if (!vc->next_deadline || c->deadline < vc->next_deadline)
		vc->next_deadline = c->deadline;
}

/* Watch the host socket for what the state needs; queue owed packets. */
void vsock_conn_update(struct vsock_core *vc, struct vsock_conn *c)
{
	uint32_t want = 0;

	if (c->state == VSOCK_AWAIT_LINE)
		want = VSOCK_WATCH_IN;
	if (c->state == VSOCK_ESTABLISHED) {
		if (c->buf_len)
			want |= VSOCK_WATCH_OUT;
		if (!c->readable && !c->host_eof && !c->shut_rcv &&
		    !c->close_drained && vsock_peer_credit(c) > 0)
			want |= VSOCK_WATCH_IN;
	}
	if (c->fd >= 0 && want != c->watching) {
		vc->ops->watch(vc->opaque, c->fd, vsock_conn_idx(vc, c), want);
		c->watching = want;
	}
	if (conn_wants_rx(c) && !c->in_rxq) {
		assert(vc->rxq_len < VSOCK_MAX_CONNS);
		vc->rxq[(vc->rxq_head + vc->rxq_len) % VSOCK_MAX_CONNS] =
			(uint16_t)vsock_conn_idx(vc, c);
		vc->rxq_len++;
		c->in_rxq = true;
	}
}

/*
 * Close the host side; a guest that knows the connection gets an RST
 * (the slot lives until it is sent), else the slot is freed now.
 */
void vsock_conn_reset(struct vsock_core *vc, struct vsock_conn *c)
{
	conn_close_host(vc, c);
	if (c->state == VSOCK_REQUEST_SENT || c->state == VSOCK_ESTABLISHED ||
	    c->state == VSOCK_CLOSING) {
		c->state = VSOCK_RST_PENDING;
		c->pending = 0;
		c->deadline = 0;
		vsock_conn_drop_buf(c);
		vsock_conn_update(vc, c);
		return;
	}
	if (c->state != VSOCK_RST_PENDING)
		vsock_conn_free(vc, c);
}

void vsock_stray_rst(struct vsock_core *vc, const struct vsock_hdr *h)
{
	unsigned int at;

	if (h->op == VSOCK_OP_RST)
		return;
	if (vc->stray_len == VSOCK_STRAY_MAX) {
		vsock_stat_inc(&vc->stats.stray_dropped, 1);
		return;
	}
	at = (vc->stray_head + vc->stray_len) % VSOCK_STRAY_MAX;
	vc->stray[at].local_port = h->dst_port;
	vc->stray[at].peer_port = h->src_port;
	vc->stray_len++;
}

int vsock_core_host_accept(struct vsock_core *vc, int fd)
{
	struct vsock_conn *c = vsock_conn_alloc(vc);

	if (!c) {
		vsock_stat_inc(&vc->stats.conns_refused, 1);
		return -ENOSPC;
	}
	c->state = VSOCK_AWAIT_LINE;
	c->fd = fd;
	/* Silent host programs must not hold the table. */
	vsock_set_deadline(vc, c, VSOCK_LINE_TIMEOUT_NS);
	vsock_conn_update(vc, c);
	return 0;
}

static bool port_in_use(const struct vsock_core *vc, uint32_t port)
{
	unsigned int i;

	for (i = 0; i < VSOCK_MAX_CONNS; i++) {
		const struct vsock_conn *c = &vc->conns[i];

		if (c->state != VSOCK_FREE && c->state != VSOCK_AWAIT_LINE &&
		    c->local_port == port)
			return true;
	}
	return false;
}

/* An ephemeral port no live connection uses (VSOCK_MAX_CONNS + 1 tries
 * always find one: at most that many are live). */
static uint32_t alloc_port(struct vsock_core *vc)
{
	unsigned int tries;
	uint32_t p = vc->next_port;

	for (tries = 0; tries <= VSOCK_MAX_CONNS; tries++) {
		p = vc->next_port;
		vc->next_port = p == UINT32_MAX ? VSOCK_EPHEMERAL_BASE : p + 1;
		if (!port_in_use(vc, p))
			break;
	}
	return p;
}

/* The CONNECT line is complete: ask the guest (§5.10.6.4). */
static void host_connect(struct vsock_core *vc, struct vsock_conn *c,
			 uint32_t port)
{
	c->local_port = alloc_port(vc);
	c->peer_port = port;
	c->state = VSOCK_REQUEST_SENT;
	c->pending = VSOCK_PEND_REQUEST;
	vsock_hash_add(vc, c);
	vsock_set_deadline(vc, c, VSOCK_REQUEST_TIMEOUT_NS); /* replaces the line's */
	vsock_stat_inc(&vc->stats.conns_host, 1);
}

/* Read the CONNECT line a byte at a time: what follows it is data. */
static void conn_read_line(struct vsock_core *vc, struct vsock_conn *c)
{
	unsigned int i;
	uint32_t port;
	size_t used;
	char ch;

	for (i = 0; i <= VSOCK_LINE_MAX; i++) {
		struct iovec iov = { &ch, 1 };
		ssize_t r = vc->ops->recv(vc->opaque, c->fd, &iov, 1);
		int ret;

		if (r == -EAGAIN)
			return;
		if (r <= 0) {
			vsock_conn_free(vc, c);
			return;
		}
		ret = vsock_line_feed(&c->line, &ch, 1, &used, &port);
		if (ret < 0) {
			vsock_stat_inc(&vc->stats.bad_lines, 1);
			vsock_conn_free(vc, c);
			return;
		}
		if (ret == 1) {
			host_connect(vc, c, port);
			return;
		}
	}
}

/* Write what the ring holds to the host socket. */
static void conn_flush(struct vsock_core *vc, struct vsock_conn *c)
{
	unsigned int tries;

	for (tries = 0; c->buf_len && tries < VSOCK_FLUSH_TRIES; tries++) {
		uint32_t first = VSOCK_BUF_ALLOC - c->buf_head;
		struct iovec iov[2];
		int n = 1;
		ssize_t r;

		if (first > c->buf_len)
			first = c->buf_len;
		iov[0] = (struct iovec){ c->buf + c->buf_head, first };
		if (first < c->buf_len) {
			iov[1] = (struct iovec){ c->buf, c->buf_len - first };
			n = 2;
		}
		r = vc->ops->send(vc->opaque, c->fd, iov, n);
		if (r == -EAGAIN)
			break;
		if (r <= 0 || (size_t)r > c->buf_len) {
			vsock_conn_reset(vc, c);
			return;
		}
		c->buf_head = (uint32_t)((c->buf_head + (size_t)r) %
					 VSOCK_BUF_ALLOC);
		c->buf_len -= (uint32_t)r;
		c->fwd_cnt += (uint32_t)r;
	}
	if (c->buf_len)
		return;
	vsock_conn_drop_buf(c);
	if (c->close_drained) {
		vsock_conn_reset(vc, c);
		return;
	}
	if (c->shut_send)
		vc->ops->shut_wr(vc->opaque, c->fd);
}

void vsock_core_host_event(struct vsock_core *vc, uint32_t idx)
{
	struct vsock_conn *c;

	if (idx >= VSOCK_MAX_CONNS)
		return;
	c = &vc->conns[idx];
	if (c->fd < 0)
		return;
	if (c->state == VSOCK_AWAIT_LINE) {
		conn_read_line(vc, c);
	} else if (c->state == VSOCK_ESTABLISHED) {
		if (c->watching & VSOCK_WATCH_IN)
			c->readable = true;
		if (c->buf_len)
			conn_flush(vc, c);
	}
	if (c->state != VSOCK_FREE) {
		if (c->fwd_cnt - c->fwd_sent >= VSOCK_CREDIT_THRESHOLD &&
		    c->state == VSOCK_ESTABLISHED)
			c->pending |= VSOCK_PEND_CREDIT;
		vsock_conn_update(vc, c);
	}
}

uint64_t vsock_core_expire(struct vsock_core *vc, uint64_t now)
{
	uint64_t next = 0;
	unsigned int i;

	vc->now = now;
	if (!vc->next_deadline || now < vc->next_deadline)
		return vc->next_deadline;
	for (i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &vc->conns[i];

		if (c->state == VSOCK_FREE || !c->deadline)
			continue;
		if (now >= c->deadline) {
			c->deadline = 0;
			vsock_stat_inc(&vc->stats.timeouts, 1);
			vsock_conn_reset(vc, c);
			continue;
		}
		if (!next || c->deadline < next)
			next = c->deadline;
	}
	vc->next_deadline = next;
	return next;
}

unsigned int vsock_core_nr_conns(const struct vsock_core *vc)
{
	return VSOCK_MAX_CONNS - vc->nr_free;
}

void vsock_core_reset(struct vsock_core *vc)
{
	unsigned int i;

	for (i = 0; i < VSOCK_MAX_CONNS; i++) {
		vsock_conn_free(vc, &vc->conns[i]);
		vc->conns[i].in_rxq = false;
	}
	vc->rxq_head = vc->rxq_len = 0;
	vc->stray_head = vc->stray_len = 0;
	vc->next_deadline = 0;
}

void vsock_core_destroy(struct vsock_core *vc)
{
	if (!vc->conns)
		return;
	vsock_core_reset(vc);
	free(vc->conns);
	free(vc->hash);
	free(vc->free_idx);
	free(vc->rxq);
	vc->conns = NULL;
}
