/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What vsock_conn.c (the table) and vsock_pkt.c (the packets) share, and
 * nothing else includes: slot management, resets, the watch and rx
 * bookkeeping, deadlines, credit arithmetic. Context: the worker (or any
 * thread while it is stopped), as for struct vsock_core.
 */
#ifndef MICROVM_VIRTIO_VSOCK_PRIV_H
#define MICROVM_VIRTIO_VSOCK_PRIV_H

#include "virtio/vsock_conn.h"

static inline void vsock_stat_inc(atomic_uint_fast64_t *s, uint64_t n)
{
	atomic_fetch_add_explicit(s, n, memory_order_relaxed);
}

static inline uint32_t vsock_conn_idx(const struct vsock_core *vc,
				      const struct vsock_conn *c)
{
	return (uint32_t)(c - vc->conns);
}

/* Bytes the guest can still take (§5.10.6.3); 0 for hostile counters. */
static inline uint32_t vsock_peer_credit(const struct vsock_conn *c)
{
	uint32_t used = c->tx_cnt - c->peer_fwd_cnt;

	return used >= c->peer_buf_alloc ? 0 : c->peer_buf_alloc - used;
}

/* Host data may go to the guest now. */
static inline bool vsock_conn_data_ready(const struct vsock_conn *c)
{
	return c->state == VSOCK_ESTABLISHED && c->readable && !c->host_eof &&
	       !c->shut_rcv && !c->close_drained && vsock_peer_credit(c) > 0;
}

/* A free slot, cleared (in_rxq kept), or NULL when the table is full. */
struct vsock_conn *vsock_conn_alloc(struct vsock_core *vc);

/* Into the (host port, guest port) hash. */
void vsock_hash_add(struct vsock_core *vc, struct vsock_conn *c);

/* Close the host socket, leave the hash, give the slot back. */
void vsock_conn_free(struct vsock_core *vc, struct vsock_conn *c);

void vsock_conn_drop_buf(struct vsock_conn *c);

/* A deadline @after ns from the last vsock_core_expire(). */
void vsock_set_deadline(struct vsock_core *vc, struct vsock_conn *c,
			uint64_t after);

/* Watch the host socket for what the state needs; queue owed packets. */
void vsock_conn_update(struct vsock_core *vc, struct vsock_conn *c);

/* Close the host side; RST to a guest that knows the connection. */
void vsock_conn_reset(struct vsock_core *vc, struct vsock_conn *c);

/* Queue an RST reply to @h's sender (bounded; dropped when full). */
void vsock_stray_rst(struct vsock_core *vc, const struct vsock_hdr *h);

#endif
