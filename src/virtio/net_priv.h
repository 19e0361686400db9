/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-net internals shared by net.c (the device: configuration,
 * start/stop, creation, stats) and net_queue.c (a queue pair's worker:
 * tx, rx, and on pair 0 the control queue). Fields marked "worker" are
 * its pair's worker thread's while it runs, the stopping thread's after.
 */
#ifndef MICROVM_VIRTIO_NET_PRIV_H
#define MICROVM_VIRTIO_NET_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmds/mmds.h"
#include "util/log.h"
#include "util/ratelimit.h"
#include "virtio/net.h"
#include "virtio/net_hdr.h"
#include "virtio/net_vhost.h"
#include "virtio/worker.h"

/* np->watching once the tap left the epoll set. */
#define NET_TAP_UNWATCHED UINT32_MAX

/* Worker tags. */
#define NET_TAG_RX 0
#define NET_TAG_TX 1
#define NET_TAG_CTRL 2
#define NET_TAG_TAP 3

struct net_pair_stats {
	atomic_uint_fast64_t rx_packets, rx_bytes, rx_drops, rx_errors;
	atomic_uint_fast64_t rx_throttled;
	atomic_uint_fast64_t tx_packets, tx_bytes, tx_drops, tx_errors;
	atomic_uint_fast64_t tx_throttled;
};

/* A used element of an rx packet not pushed yet. */
struct net_rx_used {
	uint16_t head;
	uint32_t len;
};

struct net_pair {
	struct net_dev *n;
	unsigned int idx;
	int tap_fd;
	struct vq_worker w;
	bool kicks_added;
	atomic_bool live;        /* started: pair 0 waits for its seen_gen */
	atomic_uint seen_gen;    /* n->gen at this worker's last round */
	/* worker: */
	uint32_t watching;       /* tap events the epoll set has */
	bool active;             /* idx < n->active_pairs */
	bool again;              /* more than a round's budget: wake */
	bool rx_starved;         /* a packet, or none read, for lack of
				  * rx buffers: wait for an rx kick */
	bool tx_blocked;         /* the tap took no more: wait for EPOLLOUT */
	bool tx_throttling;      /* counted in tx_throttled already */
	bool rx_throttling;      /* counted in rx_throttled already */
	bool tap_dead;           /* read failed for good: out of the epoll
				  * set (np_tap_dead()) */
	uint64_t rx_until, tx_until; /* rate limit: tokens due (ns), or 0 */
	unsigned int rl_gen;     /* n->rl_gen the deadlines are for */
	uint8_t *pkt;            /* NET_MAX_PACKET + 1: the one packet
				  * read from the tap, not yet delivered */
	size_t pkt_len;          /* 0: none */
	bool pkt_admitted;       /* the rx limiter took its tokens */
	struct virtq_seg segs[NET_MAX_SEGS];
	struct net_tx_pkt tx;
	struct net_rx_used used[VIRTQ_MAX_SIZE];
	struct net_pair_stats st;
	struct net_vhost vh;     /* engine=vhost: this pair's vhost_net */
	bool vh_open;
	bool tap_detached;       /* its tap queue out of the kernel's choice
				  * (net_tap_queues()) */
	uint8_t *mmds_buf;       /* NET_MAX_FRAME: a frame for the metadata
				  * service, gathered (worker) */
};

struct net_dev {
	struct virtio_dev *vdev;
	unsigned int pairs;
	bool has_ctrl;
	bool vhost;                /* engine=vhost: workers serve only the
				    * control queue (pair 0's) */
	uint8_t config[NET_CONFIG_BYTES];
	struct rl_limiter rx_rl, tx_rl;
	atomic_uint rl_gen;        /* bumped by net_dev_set_rate_limits() */
	atomic_uint active_pairs;  /* VQ_PAIRS_SET; 1 after a reset */
	atomic_uint gen;           /* bumped with every active_pairs change */
	unsigned int offloads;     /* TUN_F_* set on the taps, or ~0u */
	/* pair 0's worker: the control queue */
	atomic_bool ctrl_pending;  /* VQ_PAIRS_SET acked once all pairs saw
				    * it (§5.1.6.5.5) */
	uint16_t ctrl_head;
	uint8_t *ctrl_ack;
	struct virtq_seg ctrl_segs[NET_MAX_SEGS];
	atomic_uint_fast64_t ctrl_ok, ctrl_err;
	struct log_ratelimit rl;
	struct mmds_stack *mmds;   /* the metadata service, or NULL */
	struct net_pair pair[];
};

extern const struct vq_worker_ops net_worker_ops;

/**
 * net_tap_queues() - the tap queues of pairs [0, @active) attached, the
 * others detached, so that the kernel sends the guest's packets only to
 * queues the driver reads (§5.1.6.5.5). Context: pair 0's worker (a
 * VQ_PAIRS_SET), or a thread with every worker stopped.
 */
void net_tap_queues(struct net_dev *n, unsigned int active);

/* The queue a pair's worker serves, started and usable, or NULL. */
struct virtq *net_vq(struct net_dev *n, unsigned int qi);

/**
 * net_pair_wake() - another round of @np's worker, now or, when it is
 * not running, at its start (the doorbell vq_worker_wake() rings, but
 * without reading whether the worker runs, which the thread that starts
 * and stops it writes).
 * Context: any thread.
 */
void net_pair_wake(struct net_pair *np);

/**
 * net_pair_reset() - forget a stopped pair's run: a packet still held is
 * dropped (counted), deadlines and waits are cleared.
 * Context: the thread that stops the device, the worker stopped.
 */
void net_pair_reset(struct net_pair *np);

#endif
