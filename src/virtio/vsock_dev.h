/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtio-vsock device's state, shared by vsock.c (creation, ops,
 * host sockets) and vsock_queue.c (the worker's rounds over the rings);
 * nothing else includes it.
 */
#ifndef MICROVM_VIRTIO_VSOCK_DEV_H
#define MICROVM_VIRTIO_VSOCK_DEV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/un.h>

#include "util/log.h"
#include "virtio/virtio.h"
#include "virtio/vsock.h"
#include "virtio/vsock_conn.h"
#include "virtio/vsock_vhost.h"
#include "virtio/worker.h"

/* Worker tags: connections are their table index, below these. */
#define TAG_RXQ (VSOCK_MAX_CONNS + 0ull)
#define TAG_TXQ (VSOCK_MAX_CONNS + 1ull)
#define TAG_EVQ (VSOCK_MAX_CONNS + 2ull)
#define TAG_LISTEN (VSOCK_MAX_CONNS + 3ull)

struct vsock_dev {
	struct virtio_dev *vdev;
	const struct guest_mem *gm;
	uint64_t guest_cid;
	char uds_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd;          /* hybrid; -1 with engine=vhost */
	bool vhost;             /* engine=vhost: the kernel serves rx, tx */
	struct vsock_vhost vh;
	struct vq_worker w;
	bool kicks_added;
	bool keep_path;         /* vsock_dev_keep_path(): no unlink at exit */
	uint8_t config[VSOCK_CONFIG_BYTES];
	atomic_bool reset_req;  /* vsock_dev_send_reset() asked */
	/* The worker's: */
	struct vsock_core core;
	bool event_pending;     /* TRANSPORT_RESET owed to the guest */
	bool again;             /* a ring had more than one round's budget */
	struct virtq_seg segs[VSOCK_MAX_SEGS];
	struct log_ratelimit rl;
};

/* The worker's callbacks (vsock_queue.c). */
extern const struct vq_worker_ops vsock_worker_ops;

#endif
