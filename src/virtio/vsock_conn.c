// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock connection table and state machine (virtio 1.2 §5.10.6)
 * with Firecracker's hybrid host side: host programs connect to a Unix
 * socket and say `CONNECT <port>\n`; guest REQUESTs reach `<uds>_<port>`.
 * Every table walk is bounded by VSOCK_MAX_CONNS, every byte taken from
 * the guest fits the credit we gave (§5.10.6.3), and whatever a guest
 * does wrong fails its packet or resets its connection.
 */
#include "virtio/vsock_conn.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VSOCK_HASH_BITS 11
#define VSOCK_HASH_SIZE (1u << VSOCK_HASH_BITS)
/* Ring flush attempts per host event (each one moves bytes or stops). */
#define VSOCK_FLUSH_TRIES 4

static void stat_inc(atomic_uint_fast64_t *s, uint64_t n)
{
	atomic_fetch_add_explicit(s, n, memory_order_relaxed);
}

static uint32_t conn_idx(const struct vsock_core *vc,
			 const struct vsock_conn *c)
{
	return (uint32_t)(c - vc->conns);
}

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

static void hash_add(struct vsock_core *vc, struct vsock_conn *c)
{
	uint32_t h = vsock_hash(c->local_port, c->peer_port);

	c->hnext = vc->hash[h];
	vc->hash[h] = (int32_t)conn_idx(vc, c);
}

static void hash_del(struct vsock_core *vc, struct vsock_conn *c)
{
	int32_t *p = &vc->hash[vsock_hash(c->local_port, c->peer_port)];
	int32_t me = (int32_t)conn_idx(vc, c);
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

static struct vsock_conn *conn_alloc(struct vsock_core *vc)
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
	vc->ops->close(vc->opaque, c->fd, conn_idx(vc, c));
	c->fd = -1;
	c->watching = 0;
}

static void conn_drop_buf(struct vsock_conn *c)
{
	free(c->buf);
	c->buf = NULL;
	c->buf_head = c->buf_len = 0;
}

static void conn_free(struct vsock_core *vc, struct vsock_conn *c)
{
	if (c->state == VSOCK_FREE)
		return;
	conn_close_host(vc, c);
	if (c->state != VSOCK_AWAIT_LINE)
		hash_del(vc, c);
	conn_drop_buf(c);
	c->state = VSOCK_FREE;
	c->pending = 0;
	c->deadline = 0;
	vc->free_idx[vc->nr_free++] = (uint16_t)conn_idx(vc, c);
	stat_inc(&vc->stats.conns_closed, 1);
}

static uint32_t peer_credit(const struct vsock_conn *c)
{
	uint32_t used = c->tx_cnt - c->peer_fwd_cnt;

	return used >= c->peer_buf_alloc ? 0 : c->peer_buf_alloc - used;
}

static bool conn_data_ready(const struct vsock_conn *c)
{
	return c->state == VSOCK_ESTABLISHED && c->readable && !c->host_eof &&
	       !c->shut_rcv && !c->close_drained && peer_credit(c) > 0;
}

static bool conn_wants_rx(const struct vsock_conn *c)
{
	return c->state == VSOCK_RST_PENDING || c->pending ||
	       conn_data_ready(c);
}

static void set_deadline(struct vsock_core *vc, struct vsock_conn *c,
			 uint64_t after)
{
	c->deadline = vc->now + after;
	if (!c->deadline)
		c->deadline = 1;
	if (!vc->next_deadline || c->deadline < vc->next_deadline)
		vc->next_deadline = c->deadline;
}

/* Watch the host socket for what the state needs; queue owed packets. */
static void conn_update(struct vsock_core *vc, struct vsock_conn *c)
{
	uint32_t want = 0;

	if (c->state == VSOCK_AWAIT_LINE)
		want = VSOCK_WATCH_IN;
	if (c->state == VSOCK_ESTABLISHED) {
		if (c->buf_len)
			want |= VSOCK_WATCH_OUT;
		if (!c->readable && !c->host_eof && !c->shut_rcv &&
		    !c->close_drained && peer_credit(c) > 0)
			want |= VSOCK_WATCH_IN;
	}
	if (c->fd >= 0 && want != c->watching) {
		vc->ops->watch(vc->opaque, c->fd, conn_idx(vc, c), want);
		c->watching = want;
	}
	if (conn_wants_rx(c) && !c->in_rxq) {
		assert(vc->rxq_len < VSOCK_MAX_CONNS);
		vc->rxq[(vc->rxq_head + vc->rxq_len) % VSOCK_MAX_CONNS] =
			(uint16_t)conn_idx(vc, c);
		vc->rxq_len++;
		c->in_rxq = true;
	}
}

/*
 * Close the host side; a guest that knows the connection gets an RST
 * (the slot lives until it is sent), else the slot is freed now.
 */
static void conn_reset(struct vsock_core *vc, struct vsock_conn *c)
{
	conn_close_host(vc, c);
	if (c->state == VSOCK_REQUEST_SENT || c->state == VSOCK_ESTABLISHED ||
	    c->state == VSOCK_CLOSING) {
		c->state = VSOCK_RST_PENDING;
		c->pending = 0;
		c->deadline = 0;
		conn_drop_buf(c);
		conn_update(vc, c);
		return;
	}
	if (c->state != VSOCK_RST_PENDING)
		conn_free(vc, c);
}

static void stray_rst(struct vsock_core *vc, const struct vsock_hdr *h)
{
	unsigned int at;

	if (h->op == VSOCK_OP_RST)
		return;
	if (vc->stray_len == VSOCK_STRAY_MAX) {
		stat_inc(&vc->stats.stray_dropped, 1);
		return;
	}
	at = (vc->stray_head + vc->stray_len) % VSOCK_STRAY_MAX;
	vc->stray[at].local_port = h->dst_port;
	vc->stray[at].peer_port = h->src_port;
	vc->stray_len++;
}

int vsock_core_host_accept(struct vsock_core *vc, int fd)
{
	struct vsock_conn *c = conn_alloc(vc);

	if (!c) {
		stat_inc(&vc->stats.conns_refused, 1);
		return -ENOSPC;
	}
	c->state = VSOCK_AWAIT_LINE;
	c->fd = fd;
	/* Silent host programs must not hold the table. */
	set_deadline(vc, c, VSOCK_LINE_TIMEOUT_NS);
	conn_update(vc, c);
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
	hash_add(vc, c);
	set_deadline(vc, c, VSOCK_REQUEST_TIMEOUT_NS); /* replaces the line's */
	stat_inc(&vc->stats.conns_host, 1);
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
			conn_free(vc, c);
			return;
		}
		ret = vsock_line_feed(&c->line, &ch, 1, &used, &port);
		if (ret < 0) {
			stat_inc(&vc->stats.bad_lines, 1);
			conn_free(vc, c);
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
			conn_reset(vc, c);
			return;
		}
		c->buf_head = (uint32_t)((c->buf_head + (size_t)r) %
					 VSOCK_BUF_ALLOC);
		c->buf_len -= (uint32_t)r;
		c->fwd_cnt += (uint32_t)r;
	}
	if (c->buf_len)
		return;
	conn_drop_buf(c);
	if (c->close_drained) {
		conn_reset(vc, c);
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
		conn_update(vc, c);
	}
}

/* Copy @len bytes of @iov from byte @skip on into the ring's tail. */
static int conn_buffer(struct vsock_conn *c, const struct iovec *iov,
		       int iovcnt, size_t skip, size_t len)
{
	int i;

	if (!c->buf) {
		c->buf = malloc(VSOCK_BUF_ALLOC);
		if (!c->buf)
			return -ENOMEM;
		c->buf_head = 0;
	}
	for (i = 0; i < iovcnt && len; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		if (skip >= n) {
			skip -= n;
			continue;
		}
		p += skip;
		n -= skip;
		skip = 0;
		if (n > len)
			n = len;
		len -= n;
		while (n) {
			uint32_t tail = (c->buf_head + c->buf_len) %
					VSOCK_BUF_ALLOC;
			size_t k = VSOCK_BUF_ALLOC - tail;

			if (k > n)
				k = n;
			memcpy(c->buf + tail, p, k);
			c->buf_len += (uint32_t)k;
			p += k;
			n -= k;
		}
	}
	return 0;
}

/*
 * The first @len bytes of @iov as at most VSOCK_MAX_IOV entries in @out;
 * @got: how many bytes those hold (less than @len when @iov ends first).
 */
static int iov_trim(struct iovec *out, const struct iovec *iov, int iovcnt,
		    size_t len, size_t *got)
{
	int i, n = 0;

	*got = 0;
	for (i = 0; i < iovcnt && len && n < VSOCK_MAX_IOV; i++) {
		size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;

		if (!k)
			continue;
		out[n++] = (struct iovec){ iov[i].iov_base, k };
		len -= k;
		*got += k;
	}
	return n;
}

/* OP_RW from the guest: to the host socket, the rest into the ring. */
static void conn_guest_rw(struct vsock_core *vc, struct vsock_conn *c,
			  const struct vsock_hdr *h, const struct iovec *iov,
			  int iovcnt)
{
	struct iovec part[VSOCK_MAX_IOV];
	size_t off = 0, got;
	int n;

	assert(c->buf_len == c->rx_cnt - c->fwd_cnt);
	if (c->shut_send || c->close_drained) {
		conn_reset(vc, c);
		return;
	}
	if (h->len > VSOCK_BUF_ALLOC - c->buf_len) {
		stat_inc(&vc->stats.credit_violations, 1);
		conn_reset(vc, c);
		return;
	}
	n = iov_trim(part, iov, iovcnt, h->len, &got);
	if (got < h->len) { /* more segments than VSOCK_MAX_IOV */
		stat_inc(&vc->stats.invalid, 1);
		conn_reset(vc, c);
		return;
	}
	stat_inc(&vc->stats.tx_bytes, h->len);
	c->rx_cnt += h->len;
	if (!h->len)
		return;
	if (!c->buf_len) {
		ssize_t r = vc->ops->send(vc->opaque, c->fd, part, n);

		if (r != -EAGAIN && (r < 0 || (size_t)r > h->len)) {
			conn_reset(vc, c);
			return;
		}
		if (r > 0) {
			off = (size_t)r;
			c->fwd_cnt += (uint32_t)r;
		}
	}
	if (off < h->len && conn_buffer(c, part, n, off, h->len - off)) {
		conn_reset(vc, c);
		return;
	}
	if (c->fwd_cnt - c->fwd_sent >= VSOCK_CREDIT_THRESHOLD)
		c->pending |= VSOCK_PEND_CREDIT;
}

static void conn_guest_shutdown(struct vsock_core *vc, struct vsock_conn *c,
				uint32_t flags)
{
	if (flags & VSOCK_SHUTDOWN_RCV)
		c->shut_rcv = true;
	if (flags & VSOCK_SHUTDOWN_SEND)
		c->shut_send = true;
	if (c->shut_rcv && c->shut_send) {
		if (!c->buf_len) {
			conn_reset(vc, c);
		} else if (!c->close_drained) {
			c->close_drained = true;
			set_deadline(vc, c, VSOCK_SHUTDOWN_TIMEOUT_NS);
		}
		return;
	}
	if (c->shut_send && !c->buf_len)
		vc->ops->shut_wr(vc->opaque, c->fd);
}

static void conn_guest_established(struct vsock_core *vc,
				   struct vsock_conn *c,
				   const struct vsock_hdr *h,
				   const struct iovec *iov, int iovcnt)
{
	switch (h->op) {
	case VSOCK_OP_RW:
		conn_guest_rw(vc, c, h, iov, iovcnt);
		break;
	case VSOCK_OP_CREDIT_UPDATE:
		break; /* the credit was taken from the header */
	case VSOCK_OP_CREDIT_REQUEST:
		c->pending |= VSOCK_PEND_CREDIT;
		break;
	case VSOCK_OP_SHUTDOWN:
		conn_guest_shutdown(vc, c, h->flags);
		break;
	default: /* REQUEST or RESPONSE on a live connection */
		conn_reset(vc, c);
		break;
	}
}

/* The guest's answer to our REQUEST (§5.10.6.4). */
static void conn_guest_answer(struct vsock_core *vc, struct vsock_conn *c,
			      const struct vsock_hdr *h)
{
	char ok[24];
	struct iovec iov = { ok, 0 };
	ssize_t r;

	if (h->op != VSOCK_OP_RESPONSE) {
		conn_reset(vc, c);
		return;
	}
	c->state = VSOCK_ESTABLISHED;
	c->deadline = 0;
	iov.iov_len = (size_t)snprintf(ok, sizeof(ok), "OK %u\n",
				       c->local_port);
	r = vc->ops->send(vc->opaque, c->fd, &iov, 1);
	if (r != (ssize_t)iov.iov_len)
		conn_reset(vc, c);
}

/* A REQUEST from the guest for host port dst_port: <uds>_<port>. */
static void guest_connect(struct vsock_core *vc, const struct vsock_hdr *h)
{
	struct vsock_conn *c = conn_alloc(vc);
	int fd = -1;

	if (!c) {
		stat_inc(&vc->stats.conns_refused, 1);
		stray_rst(vc, h);
		return;
	}
	if (vc->ops->connect(vc->opaque, h->dst_port, &fd) || fd < 0) {
		/* The slot was never live: put it back untouched. */
		vc->free_idx[vc->nr_free++] = (uint16_t)conn_idx(vc, c);
		stat_inc(&vc->stats.conns_refused, 1);
		stray_rst(vc, h);
		return;
	}
	c->fd = fd;
	c->local_port = h->dst_port;
	c->peer_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	c->state = VSOCK_ESTABLISHED;
	c->pending = VSOCK_PEND_RESPONSE;
	hash_add(vc, c);
	stat_inc(&vc->stats.conns_guest, 1);
	conn_update(vc, c);
}

/* A checked packet of the guest on connection @c. */
static void conn_guest_pkt(struct vsock_core *vc, struct vsock_conn *c,
			   const struct vsock_hdr *h, const struct iovec *iov,
			   int iovcnt)
{
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	if (h->op == VSOCK_OP_RST) {
		stat_inc(&vc->stats.rst_received, 1);
		conn_free(vc, c);
		return;
	}
	switch (c->state) {
	case VSOCK_REQUEST_SENT:
		conn_guest_answer(vc, c, h);
		break;
	case VSOCK_ESTABLISHED:
		conn_guest_established(vc, c, h, iov, iovcnt);
		break;
	default: /* CLOSING, RST_PENDING: only its RST matters */
		break;
	}
	if (c->state != VSOCK_FREE)
		conn_update(vc, c);
}

void vsock_core_tx(struct vsock_core *vc, const uint8_t *hdr,
		   const struct iovec *iov, int iovcnt, uint64_t bytes)
{
	enum vsock_hdr_err err;
	struct vsock_hdr h;
	int i;

	vsock_hdr_decode(hdr, &h);
	err = vsock_hdr_check(&h, vc->guest_cid, bytes);
	if (err != VSOCK_HDR_OK) {
		stat_inc(&vc->stats.invalid, 1);
		if (err == VSOCK_HDR_SRC_CID || err == VSOCK_HDR_DST_CID)
			return;
		i = vsock_core_find(vc, h.dst_port, h.src_port);
		if (i >= 0)
			conn_reset(vc, &vc->conns[i]);
		else
			stray_rst(vc, &h);
		return;
	}
	stat_inc(&vc->stats.tx_packets, 1);
	i = vsock_core_find(vc, h.dst_port, h.src_port);
	if (i >= 0) {
		conn_guest_pkt(vc, &vc->conns[i], &h, iov, iovcnt);
		return;
	}
	if (h.op == VSOCK_OP_REQUEST)
		guest_connect(vc, &h);
	else if (h.op == VSOCK_OP_RST)
		stat_inc(&vc->stats.rst_received, 1);
	else
		stray_rst(vc, &h);
}

bool vsock_core_rx_pending(const struct vsock_core *vc)
{
	return vc->stray_len || vc->rxq_len;
}

static void hdr_base(const struct vsock_core *vc, struct vsock_hdr *h,
		     uint32_t local, uint32_t peer, uint16_t op)
{
	memset(h, 0, sizeof(*h));
	h->src_cid = VSOCK_HOST_CID;
	h->dst_cid = vc->guest_cid;
	h->src_port = local;
	h->dst_port = peer;
	h->type = VSOCK_TYPE_STREAM;
	h->op = op;
	h->buf_alloc = VSOCK_BUF_ALLOC;
}

/* Host data into the guest's buffer, within its credit. */
static int conn_rx_data(struct vsock_core *vc, struct vsock_conn *c,
			struct vsock_hdr *h, const struct iovec *iov,
			int iovcnt)
{
	struct iovec part[VSOCK_MAX_IOV];
	size_t want = peer_credit(c);
	ssize_t r;
	int n;

	if (want > VSOCK_MAX_PAYLOAD)
		want = VSOCK_MAX_PAYLOAD;
	n = iov_trim(part, iov, iovcnt, want, &want);
	if (!n)
		return 0;
	r = vc->ops->recv(vc->opaque, c->fd, part, n);
	if (r == -EAGAIN) {
		c->readable = false;
		return 0;
	}
	if (r < 0 || (size_t)r > want) {
		conn_reset(vc, c);
		return 0;
	}
	if (r == 0) {
		/* The host program is gone: close both ways (§5.10.6.5). */
		c->host_eof = true;
		c->state = VSOCK_CLOSING;
		conn_drop_buf(c);
		set_deadline(vc, c, VSOCK_SHUTDOWN_TIMEOUT_NS);
		h->op = VSOCK_OP_SHUTDOWN;
		h->flags = VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND;
		return 1;
	}
	h->op = VSOCK_OP_RW;
	h->len = (uint32_t)r;
	c->tx_cnt += (uint32_t)r;
	stat_inc(&vc->stats.rx_bytes, (uint64_t)r);
	return 1;
}

/* The next packet connection @c owes the guest, if any. */
static int conn_rx(struct vsock_core *vc, struct vsock_conn *c,
		   struct vsock_hdr *h, const struct iovec *iov, int iovcnt)
{
	hdr_base(vc, h, c->local_port, c->peer_port, VSOCK_OP_INVALID);
	if (c->state == VSOCK_RST_PENDING) {
		h->op = VSOCK_OP_RST;
		stat_inc(&vc->stats.rst_sent, 1);
		conn_free(vc, c);
		return 1;
	}
	if (c->pending & VSOCK_PEND_REQUEST) {
		c->pending &= ~VSOCK_PEND_REQUEST;
		h->op = VSOCK_OP_REQUEST;
	} else if (c->pending & VSOCK_PEND_RESPONSE) {
		c->pending &= ~VSOCK_PEND_RESPONSE;
		h->op = VSOCK_OP_RESPONSE;
	} else if (!conn_data_ready(c) ||
		   !conn_rx_data(vc, c, h, iov, iovcnt)) {
		if (c->state == VSOCK_RST_PENDING)
			return conn_rx(vc, c, h, iov, iovcnt);
		if (!(c->pending & VSOCK_PEND_CREDIT))
			return 0;
		h->op = VSOCK_OP_CREDIT_UPDATE;
	}
	c->pending &= ~VSOCK_PEND_CREDIT;
	h->fwd_cnt = c->fwd_cnt;
	c->fwd_sent = c->fwd_cnt;
	return 1;
}

int vsock_core_rx(struct vsock_core *vc, uint8_t *hdr,
		  const struct iovec *iov, int iovcnt, uint32_t *len)
{
	unsigned int budget = 3 * VSOCK_MAX_CONNS;
	struct vsock_hdr h;

	*len = 0;
	if (vc->stray_len) {
		hdr_base(vc, &h, vc->stray[vc->stray_head].local_port,
			 vc->stray[vc->stray_head].peer_port, VSOCK_OP_RST);
		vc->stray_head = (vc->stray_head + 1) % VSOCK_STRAY_MAX;
		vc->stray_len--;
		stat_inc(&vc->stats.rst_sent, 1);
		goto out;
	}
	while (vc->rxq_len && budget--) {
		struct vsock_conn *c = &vc->conns[vc->rxq[vc->rxq_head]];
		int made = 0;

		vc->rxq_head = (vc->rxq_head + 1) % VSOCK_MAX_CONNS;
		vc->rxq_len--;
		c->in_rxq = false;
		if (c->state != VSOCK_FREE)
			made = conn_rx(vc, c, &h, iov, iovcnt);
		/* Round robin: back to the end if it owes more. */
		if (c->state != VSOCK_FREE)
			conn_update(vc, c);
		if (made)
			goto out;
	}
	return 0;
out:
	*len = h.len;
	vsock_hdr_encode(hdr, &h);
	stat_inc(&vc->stats.rx_packets, 1);
	return 1;
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
			stat_inc(&vc->stats.timeouts, 1);
			conn_reset(vc, c);
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
		conn_free(vc, &vc->conns[i]);
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
