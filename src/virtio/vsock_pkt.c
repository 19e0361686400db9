// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-vsock packets (virtio 1.2 §5.10.6): what the guest sends, checked
 * before it acts (a new connection to <uds>_<port>, data within the credit
 * we gave, §5.10.6.3, shutdown, RST), and what the guest receives: owed
 * control packets and host data within its credit, one packet per rx
 * buffer, round robin over the connections. Whatever a guest does wrong
 * fails its packet or resets its connection.
 */
#include "virtio/vsock_conn.h"
#include "virtio/vsock_priv.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		vsock_conn_reset(vc, c);
		return;
	}
	if (h->len > VSOCK_BUF_ALLOC - c->buf_len) {
		vsock_stat_inc(&vc->stats.credit_violations, 1);
		vsock_conn_reset(vc, c);
		return;
	}
	n = iov_trim(part, iov, iovcnt, h->len, &got);
	if (got < h->len) { /* more segments than VSOCK_MAX_IOV */
		vsock_stat_inc(&vc->stats.invalid, 1);
		vsock_conn_reset(vc, c);
		return;
	}
	vsock_stat_inc(&vc->stats.tx_bytes, h->len);
	c->rx_cnt += h->len;
	if (!h->len)
		return;
	if (!c->buf_len) {
		ssize_t r = vc->ops->send(vc->opaque, c->fd, part, n);

		if (r != -EAGAIN && (r < 0 || (size_t)r > h->len)) {
			vsock_conn_reset(vc, c);
			return;
		}
		if (r > 0) {
			off = (size_t)r;
			c->fwd_cnt += (uint32_t)r;
		}
	}
	if (off < h->len && conn_buffer(c, part, n, off, h->len - off)) {
		vsock_conn_reset(vc, c);
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
			vsock_conn_reset(vc, c);
		} else if (!c->close_drained) {
			c->close_drained = true;
			vsock_set_deadline(vc, c, VSOCK_SHUTDOWN_TIMEOUT_NS);
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
		vsock_conn_reset(vc, c);
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
		vsock_conn_reset(vc, c);
		return;
	}
	c->state = VSOCK_ESTABLISHED;
	c->deadline = 0;
	iov.iov_len = (size_t)snprintf(ok, sizeof(ok), "OK %u\n",
				       c->local_port);
	r = vc->ops->send(vc->opaque, c->fd, &iov, 1);
	if (r != (ssize_t)iov.iov_len)
		vsock_conn_reset(vc, c);
}

/* A REQUEST from the guest for host port dst_port: <uds>_<port>. */
static void guest_connect(struct vsock_core *vc, const struct vsock_hdr *h)
{
	struct vsock_conn *c = vsock_conn_alloc(vc);
	int fd = -1;

	if (!c) {
		vsock_stat_inc(&vc->stats.conns_refused, 1);
		vsock_stray_rst(vc, h);
		return;
	}
	if (vc->ops->connect(vc->opaque, h->dst_port, &fd) || fd < 0) {
		/* The slot was never live: put it back untouched. */
		vc->free_idx[vc->nr_free++] = (uint16_t)vsock_conn_idx(vc, c);
		vsock_stat_inc(&vc->stats.conns_refused, 1);
		vsock_stray_rst(vc, h);
		return;
	}
	c->fd = fd;
	c->local_port = h->dst_port;
	c->peer_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	c->state = VSOCK_ESTABLISHED;
	c->pending = VSOCK_PEND_RESPONSE;
	vsock_hash_add(vc, c);
	vsock_stat_inc(&vc->stats.conns_guest, 1);
	vsock_conn_update(vc, c);
}

/* A checked packet of the guest on connection @c. */
static void conn_guest_pkt(struct vsock_core *vc, struct vsock_conn *c,
			   const struct vsock_hdr *h, const struct iovec *iov,
			   int iovcnt)
{
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	if (h->op == VSOCK_OP_RST) {
		vsock_stat_inc(&vc->stats.rst_received, 1);
		vsock_conn_free(vc, c);
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
		vsock_conn_update(vc, c);
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
		vsock_stat_inc(&vc->stats.invalid, 1);
		if (err == VSOCK_HDR_SRC_CID || err == VSOCK_HDR_DST_CID)
			return;
		i = vsock_core_find(vc, h.dst_port, h.src_port);
		if (i >= 0)
			vsock_conn_reset(vc, &vc->conns[i]);
		else
			vsock_stray_rst(vc, &h);
		return;
	}
	vsock_stat_inc(&vc->stats.tx_packets, 1);
	i = vsock_core_find(vc, h.dst_port, h.src_port);
	if (i >= 0) {
		conn_guest_pkt(vc, &vc->conns[i], &h, iov, iovcnt);
		return;
	}
	if (h.op == VSOCK_OP_REQUEST)
		guest_connect(vc, &h);
	else if (h.op == VSOCK_OP_RST)
		vsock_stat_inc(&vc->stats.rst_received, 1);
	else
		vsock_stray_rst(vc, &h);
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
	size_t want = vsock_peer_credit(c);
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
		vsock_conn_reset(vc, c);
		return 0;
	}
	if (r == 0) {
		/* The host program is gone: close both ways (§5.10.6.5). */
		c->host_eof = true;
		c->state = VSOCK_CLOSING;
		vsock_conn_drop_buf(c);
		vsock_set_deadline(vc, c, VSOCK_SHUTDOWN_TIMEOUT_NS);
		h->op = VSOCK_OP_SHUTDOWN;
		h->flags = VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND;
		return 1;
	}
	h->op = VSOCK_OP_RW;
	h->len = (uint32_t)r;
	c->tx_cnt += (uint32_t)r;
	vsock_stat_inc(&vc->stats.rx_bytes, (uint64_t)r);
	return 1;
}

/* The next packet connection @c owes the guest, if any. */
static int conn_rx(struct vsock_core *vc, struct vsock_conn *c,
		   struct vsock_hdr *h, const struct iovec *iov, int iovcnt)
{
	hdr_base(vc, h, c->local_port, c->peer_port, VSOCK_OP_INVALID);
	if (c->state == VSOCK_RST_PENDING) {
		h->op = VSOCK_OP_RST;
		vsock_stat_inc(&vc->stats.rst_sent, 1);
		vsock_conn_free(vc, c);
		return 1;
	}
	if (c->pending & VSOCK_PEND_REQUEST) {
		c->pending &= ~VSOCK_PEND_REQUEST;
		h->op = VSOCK_OP_REQUEST;
	} else if (c->pending & VSOCK_PEND_RESPONSE) {
		c->pending &= ~VSOCK_PEND_RESPONSE;
		h->op = VSOCK_OP_RESPONSE;
	} else if (!vsock_conn_data_ready(c) ||
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
		vsock_stat_inc(&vc->stats.rst_sent, 1);
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
			vsock_conn_update(vc, c);
		if (made)
			goto out;
	}
	return 0;
out:
	*len = h.len;
	vsock_hdr_encode(hdr, &h);
	vsock_stat_inc(&vc->stats.rx_packets, 1);
	return 1;
}

