/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-test virtio-net driver for tests/unit/test_net*.c: a malloc'd buffer
 * is guest RAM, rings and buffers are written into it, kicks go through
 * each queue's eventfd, a fake transport counts interrupts, and each tap
 * queue is a SOCK_SEQPACKET socketpair (one packet: 12-byte virtio-net
 * header + frame) whose other end the test reads and writes.
 */
#ifndef MICROVM_TEST_NET_DRIVER_H
#define MICROVM_TEST_NET_DRIVER_H

#include <endian.h>
#include <errno.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/net.h"
#include "virtio/net_hdr.h"

#define QSZ 64
#define MAXQ 5
#define RAM_GPA 0x100000ull
#define RING_DRIVER_QUEUES MAXQ
#define RAM_SIZE 0x1000000ull
#define RING_GPA(q) (RAM_GPA + 0x4000ull * (q))
#define AVAIL_OFF 0x1000ull
#define USED_OFF 0x2000ull
#define IND_GPA (RAM_GPA + 0x20000ull)
#define CTRL_GPA (RAM_GPA + 0x30000ull)
#define TX_GPA (RAM_GPA + 0x40000ull)    /* QSZ slots of TX_STRIDE */
#define TX_STRIDE 0x1000ull
#define RX_GPA (RAM_GPA + 0x100000ull)   /* per rx queue: RX_QBYTES */
#define RX_QBYTES 0x400000ull
#define SMALL 1024u                      /* a mergeable buffer */
#define BIG (NET_MAX_PACKET)             /* a buffer without MRG_RXBUF */
#define F(bit) (1ull << (bit))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "queue_driver.h"

static struct guest_mem gm;
static struct net_dev *dev;
/* Set: drv_start() expects the device to refuse the start. */
static bool drv_start_refused;
/* Set: the next device takes engine=vhost through these system calls. */
static const struct vhost_sys *drv_vhost_sys;
static int tap[4][2]; /* [pair][0]: the device's, [1]: the test's */
static unsigned int nr_pairs, nr_queues;

/* ---- the in-test driver ---- */


static inline void desc_set(uint64_t table, uint16_t i, uint64_t addr,
			    uint32_t len, uint16_t flags, uint16_t next)
{
	uint64_t d = table + 16ull * i;

	put_le(d, addr, 8);
	put_le(d + 8, len, 4);
	put_le(d + 12, flags, 2);
	put_le(d + 14, next, 2);
}

static inline bool wait_used(unsigned int q, uint16_t want)
{
	uint64_t end = now_ms() + 10000;

	while (used_idx(q) != want) {
		if (now_ms() > end) {
			fprintf(stderr, "timeout: queue %u used %u, want %u\n",
				q, used_idx(q), want);
			return false;
		}
		sleep_ms(1);
	}
	return true;
}

#define TEST_MAC { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }

/*
 * The device on @pairs tap fds: @real (a real tap's queues), or NULL for
 * socketpairs whose other ends the test keeps in tap[i][1].
 */
static inline void dev_open_fds(unsigned int pairs, const int *real,
				const struct rl_config *tx_rl)
{
	struct net_config cfg = {
		.mac = TEST_MAC,
		.queue_pairs = pairs,
		.queue_size = QSZ,
	};
	int fds[4];
	unsigned int i;

	for (i = 0; i < pairs; i++) {
		if (real) {
			fds[i] = tap[i][0] = real[i];
			tap[i][1] = -1;
			continue;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			       tap[i])) {
			perror("socketpair");
			exit(1);
		}
		fds[i] = tap[i][0];
	}
	cfg.tap_fds = fds;
	if (tx_rl)
		cfg.tx_rl = *tx_rl;
	cfg.vhost = drv_vhost_sys != NULL;
	cfg.vhost_sys = drv_vhost_sys;
	CHECK_EQ(net_dev_create(&dev, &vdev, &cfg, &gm, "eth0"), 0);
	if (!dev)
		exit(1);
	vdev.tops = &fake_tops;
	nr_pairs = pairs;
	nr_queues = vdev.num_queues;
	for (i = 0; i < nr_queues; i++)
		vdev.queues[i].kick_fd = evfd_new();
}

static inline void dev_open(unsigned int pairs, const struct rl_config *tx_rl)
{
	dev_open_fds(pairs, NULL, tx_rl);
}

static inline void dev_close(void)
{
	unsigned int i;

	net_dev_destroy(dev);
	dev = NULL;
	for (i = 0; i < nr_queues; i++)
		close(vdev.queues[i].kick_fd);
	for (i = 0; i < nr_pairs; i++)
		if (tap[i][1] >= 0)
			close(tap[i][1]); /* [0] was the device's */
	memset(&vdev, 0, sizeof(vdev));
}

/* FEATURES_OK with @features, every queue, DRIVER_OK (§3.1.1). */
static inline void drv_start(uint64_t features)
{
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	unsigned int q;

	set_status(VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(s);
	pthread_mutex_lock(&vdev.lock);
	features |= F(VIRTIO_F_VERSION_1);
	virtio_set_driver_features_locked(&vdev, 0, (uint32_t)features);
	virtio_set_driver_features_locked(&vdev, 1,
					  (uint32_t)(features >> 32));
	virtio_set_status_locked(&vdev, s | VIRTIO_STATUS_FEATURES_OK);
	CHECK(vdev.status & VIRTIO_STATUS_FEATURES_OK);
	for (q = 0; q < nr_queues; q++) {
		struct virtio_queue *vq = &vdev.queues[q];

		memset(host(RING_GPA(q)), 0, 0x4000);
		drv_avail[q] = 0;
		vq->size = QSZ;
		vq->desc = RING_GPA(q);
		vq->avail = RING_GPA(q) + AVAIL_OFF;
		vq->used = RING_GPA(q) + USED_OFF;
		vq->enabled = true;
	}
	virtio_set_status_locked(&vdev, s | VIRTIO_STATUS_FEATURES_OK |
					   VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&vdev.lock);
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK);
	if (!drv_start_refused)
		CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
}

static inline uint64_t rx_buf(unsigned int pair, uint16_t id, uint32_t len)
{
	return RX_GPA + RX_QBYTES * pair + (uint64_t)len * id;
}

/* Rx buffer @id of @len bytes on @pair's rx queue (not kicked). */
static inline void rx_add(unsigned int pair, uint16_t id, uint32_t len)
{
	desc_set(RING_GPA(2 * pair), id, rx_buf(pair, id, len), len,
		 VIRTQ_DESC_F_WRITE, 0);
	avail_add(2 * pair, id);
}

static inline void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 31 + 3);
}

/* Tx slot @id: header + @len frame bytes in two descriptors. */
static inline void tx_add(unsigned int pair, uint16_t id, uint32_t len,
		   unsigned int seed)
{
	uint64_t g = TX_GPA + TX_STRIDE * id + 0x40000ull * pair;
	uint64_t table = RING_GPA(2 * pair + 1);
	uint16_t d = (uint16_t)(2 * (id % (QSZ / 2)));

	memset(host(g), 0, NET_HDR_SIZE);
	put_le(g + 10, 0x7777, 2); /* num_buffers: tx leaves it to us */
	fill(host(g + NET_HDR_SIZE), len, seed);
	desc_set(table, d, g, NET_HDR_SIZE, VIRTQ_DESC_F_NEXT, d + 1);
	desc_set(table, d + 1, g + NET_HDR_SIZE, len, 0, 0);
	avail_add(2 * pair + 1, d);
}

/* The next packet on the test's end of @pair's tap, or -1. */
static inline ssize_t tap_recv(unsigned int pair, uint8_t *p, size_t n,
			unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	ssize_t r;

	for (;;) {
		r = recv(tap[pair][1], p, n, MSG_DONTWAIT);
		if (r >= 0 || now_ms() > end)
			return r;
		sleep_ms(1);
	}
}

static inline void tap_send(unsigned int pair, uint32_t len, unsigned int seed)
{
	static uint8_t pkt[NET_MAX_PACKET];

	memset(pkt, 0, NET_HDR_SIZE);
	pkt[0] = VIRTIO_NET_HDR_F_DATA_VALID;
	fill(pkt + NET_HDR_SIZE, len, seed);
	CHECK_EQ(send(tap[pair][1], pkt, NET_HDR_SIZE + len, 0),
		 NET_HDR_SIZE + len);
}

static inline bool frame_ok(const uint8_t *p, uint32_t len, unsigned int seed)
{
	static uint8_t want[NET_MAX_PACKET];

	fill(want, len, seed);
	return !memcmp(p, want, len);
}

/* The control queue's index: after the last pair (MQ), else 2. */
static unsigned int ctrl_q;

/* One control command (§5.1.6.5); the ack the device wrote. */
static inline uint8_t ctrl_cmd(uint8_t class, uint8_t cmd,
			       const uint8_t *data, uint32_t len)
{
	unsigned int q = ctrl_q ? ctrl_q : 2 * nr_pairs;
	uint64_t table = RING_GPA(q), g = CTRL_GPA;
	uint16_t want = (uint16_t)(used_idx(q) + 1);

	*(uint8_t *)host(g) = class;
	*(uint8_t *)host(g + 1) = cmd;
	memcpy(host(g + 2), data, len);
	*(uint8_t *)host(g + 0x100) = 0xee;
	desc_set(table, 0, g, 2 + len, VIRTQ_DESC_F_NEXT, 1);
	desc_set(table, 1, g + 0x100, 1, VIRTQ_DESC_F_WRITE, 0);
	avail_add(q, 0);
	kick(q);
	CHECK(wait_used(q, want));
	return *(uint8_t *)host(g + 0x100);
}

static inline uint8_t set_pairs(uint16_t n)
{
	uint8_t d[2] = { (uint8_t)n, (uint8_t)(n >> 8) };

	return ctrl_cmd(VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, d,
			2);
}

#endif
