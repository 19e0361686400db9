/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-net (virtio 1.2 §5.1, device id 1) with a tap backend: N queue
 * pairs (rx = 2k, tx = 2k + 1) and, when N > 1, VIRTIO_NET_F_MQ with a
 * control queue (the last) whose VQ_PAIRS_SET chooses how many pairs
 * carry traffic. One queue worker (worker.h, seccomp class CONFINE_NET)
 * per pair serves its two rings and its tap queue fd; pair 0's also the
 * control queue. Rate limits (Firecracker's rx/tx rate_limiter) hold tx
 * chains in the ring and stop reading the tap until tokens are due.
 *
 *	confine_policy_net(true);                      // before confine_prepare
 *	net_tap_open("tap0", pairs, fds, err, len);    // tap.h
 *	net_dev_create(&n, &vdev, &cfg, &gm, "eth0");  // takes the fds
 *	virtio_mmio_init(&t, &vdev, ...);              // the transport
 *	... DRIVER_OK starts the workers, reset stops them; pause/resume ...
 *	net_dev_set_rate_limits(n, &rx, &tx);          // PATCH, any time
 *	virtio_mmio_destroy(&t);
 *	net_dev_destroy(n);                            // closes the fds
 */
#ifndef MICROVM_VIRTIO_NET_H
#define MICROVM_VIRTIO_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "mmds/mmds.h"
#include "util/guest_mem.h"
#include "util/ratelimit.h"
#include "virtio/virtio.h"

#define VIRTIO_ID_NET 1

/* Queue pairs: with more than one, the control queue takes a queue too. */
#define NET_MAX_QUEUE_PAIRS ((VIRTIO_MAX_QUEUES - 1) / 2)
#define NET_QUEUE_SIZE 256
#define NET_MTU 1500

/* Configuration space (§5.1.4): mac[6], le16 status, le16
 * max_virtqueue_pairs, le16 mtu. */
#define NET_CONFIG_BYTES 12

struct net_config {
	uint8_t mac[6];
	unsigned int queue_pairs;   /* 1 .. NET_MAX_QUEUE_PAIRS */
	const int *tap_fds;         /* queue_pairs fds; the device owns them */
	uint16_t queue_size;        /* 0: NET_QUEUE_SIZE; else a power of
				     * two, 2 .. VIRTQ_MAX_SIZE */
	struct rl_config rx_rl, tx_rl; /* not with vhost */
	/* engine=vhost: the kernel's vhost_net serves each pair's rings
	 * (net_vhost.h); the control queue stays here. */
	bool vhost;
	/* The metadata service on this interface (user engine only): its
	 * frames go to a stack of its own (src/mmds), not to the tap. */
	struct mmds *mmds;
	/* engine=vhost's system calls: NULL for the real ones
	 * (vhost_sys_host), a fake in tests. */
	const struct vhost_sys *vhost_sys;
};

/* A consistent-enough copy of the counters (each read atomically). */
struct net_dev_stats {
	uint64_t rx_packets, rx_bytes, rx_drops, rx_errors, rx_throttled;
	uint64_t tx_packets, tx_bytes, tx_drops, tx_errors, tx_throttled;
	uint64_t ctrl_ok, ctrl_err;
	struct mmds_stats mmds;   /* zero without the metadata service */
};

struct net_dev;
struct vhost_sys;
struct mmds;

/**
 * net_dev_create() - a virtio-net device on @cfg->queue_pairs tap fds:
 * checks the configuration (one message naming the bad value), makes
 * the fds non-blocking, and initialises @vdev (virtio_dev_init(), 2N
 * queues plus the control queue when N > 1); attach a transport next.
 * On success the device owns the fds (closed by net_dev_destroy()).
 * @out: the device
 * @vdev: core state, owned by the caller, filled here
 * @gm: guest memory
 * @name: for messages and the workers' thread names
 * Return: 0 or -errno (the fds stay the caller's). Context: startup.
 */
int net_dev_create(struct net_dev **out, struct virtio_dev *vdev,
		   const struct net_config *cfg, const struct guest_mem *gm,
		   const char *name);

/**
 * net_dev_destroy() - stop the device and close its tap fds; after the
 * transport's destroy. NULL is ignored. Context: teardown.
 */
void net_dev_destroy(struct net_dev *n);

/**
 * net_dev_set_rate_limits() - replace the rx and tx limits (NULL keeps
 * one); the new buckets start full, and a worker waiting on the old
 * ones looks again at once.
 * Return: 0, -EINVAL (rl_config_check(); nothing changed), or -ENOTSUP
 * with engine=vhost (the kernel paces nothing).
 * Context: any thread.
 */
int net_dev_set_rate_limits(struct net_dev *n, const struct rl_config *rx,
			    const struct rl_config *tx);

/**
 * net_dev_get_stats() - the counters summed over the queue pairs.
 * Context: any thread.
 */
void net_dev_get_stats(struct net_dev *n, struct net_dev_stats *out);

/**
 * net_dev_print_stats() - "microvm: stats <name> net:" lines, one per
 * queue pair and one for the control queue, then each queue's
 * (virtio_dev_print_stats()). Context: any thread.
 */
void net_dev_print_stats(struct net_dev *n, int fd);

#endif
