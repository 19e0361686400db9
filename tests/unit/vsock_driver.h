/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-test guest driver and host programs for the virtio-vsock device
 * tests: a malloc'd buffer is guest RAM with the three rings and their
 * buffers in it, kicks go through each queue's eventfd, a fake transport
 * counts interrupts; rx()/tx() are the guest's packets, unix_connect()
 * and friends the host programs on real Unix sockets.
 */
#ifndef MICROVM_TEST_VSOCK_DRIVER_H
#define MICROVM_TEST_VSOCK_DRIVER_H

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/vsock.h"

#define CID 3
#define QSZ 64
#define RAM_GPA 0x100000ull
#define RING_DRIVER_QUEUES VSOCK_NUM_QUEUES
#define RAM_SIZE 0x800000ull
#define RING_GPA(q) (RAM_GPA + 0x4000ull * (q))
#define AVAIL_OFF 0x1000ull
#define USED_OFF 0x2000ull
#define RXBUF_GPA (RAM_GPA + 0x10000ull) /* QSZ buffers of RXBUF_LEN */
#define RXBUF_STRIDE 0x2000ull
#define RXBUF_LEN (VSOCK_HDR_SIZE + 4096u)
#define EVBUF_GPA (RAM_GPA + 0x90000ull)
#define TXHDR_GPA (RAM_GPA + 0xa0000ull)
#define TXDATA_GPA (RAM_GPA + 0x100000ull) /* up to 64 KiB of payload */
#define F(bit) (1ull << (bit))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "queue_driver.h"

static struct guest_mem gm;
static struct vsock_dev *dev;
static char dir[48], uds[80];

/* ---- the in-test driver ---- */

static uint16_t drv_used[VSOCK_NUM_QUEUES]; /* used entries read */

static inline void desc_set(unsigned int q, uint16_t i, uint64_t addr,
			    uint32_t len, uint16_t flags, uint16_t next)
{
	uint64_t d = RING_GPA(q) + 16ull * i;

	put_le(d, addr, 8);
	put_le(d + 8, len, 4);
	put_le(d + 12, flags, 2);
	put_le(d + 14, next, 2);
}

/* drv_start(): the first rx buffer's length (a hostile one, or normal). */
static uint32_t rx_first_len = RXBUF_LEN;

static inline void rx_add_len(uint16_t id, uint32_t len)
{
	desc_set(VSOCK_RXQ, id, RXBUF_GPA + RXBUF_STRIDE * id, len,
		 VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_RXQ, id);
}

static inline void rx_add(uint16_t id)
{
	desc_set(VSOCK_RXQ, id, RXBUF_GPA + RXBUF_STRIDE * id, RXBUF_LEN,
		 VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_RXQ, id);
}

/* FEATURES_OK, three queues, rx buffers, DRIVER_OK (§3.1.1). */
static inline void drv_start(void)
{
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	unsigned int q;
	uint16_t i;

	set_status(VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(s);
	pthread_mutex_lock(&vdev.lock);
	virtio_set_driver_features_locked(&vdev, 1, 1); /* VERSION_1 */
	virtio_set_status_locked(&vdev, s | VIRTIO_STATUS_FEATURES_OK);
	CHECK(vdev.status & VIRTIO_STATUS_FEATURES_OK);
	for (q = 0; q < VSOCK_NUM_QUEUES; q++) {
		struct virtio_queue *vq = &vdev.queues[q];

		memset(host(RING_GPA(q)), 0, 0x4000);
		drv_avail[q] = drv_used[q] = 0;
		vq->size = QSZ;
		vq->desc = RING_GPA(q);
		vq->avail = RING_GPA(q) + AVAIL_OFF;
		vq->used = RING_GPA(q) + USED_OFF;
		vq->enabled = true;
	}
	rx_add_len(0, rx_first_len);
	for (i = 1; i < QSZ; i++)
		rx_add(i);
	virtio_set_status_locked(&vdev, s | VIRTIO_STATUS_FEATURES_OK |
					   VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&vdev.lock);
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK);
}

/* ---- guest packets ---- */

struct pkt {
	struct vsock_hdr h;
	uint8_t data[4096];
};

static inline struct vsock_hdr ghdr(uint32_t src, uint32_t dst,
				    uint16_t op)
{
	struct vsock_hdr h = {
		.src_cid = CID, .dst_cid = VSOCK_HOST_CID, .src_port = src,
		.dst_port = dst, .type = VSOCK_TYPE_STREAM, .op = op,
		.buf_alloc = 1u << 20,
	};
	return h;
}

/* One tx packet (header and payload in two descriptors); waits until
 * the device took it. */
static inline void tx(struct vsock_hdr h, const void *data, uint32_t len)
{
	uint16_t want = (uint16_t)(drv_avail[VSOCK_TXQ] + 1);
	uint64_t end = now_ms() + 5000;

	h.len = len;
	vsock_hdr_encode(host(TXHDR_GPA), &h);
	if (len) {
		memcpy(host(TXDATA_GPA), data, len);
		desc_set(VSOCK_TXQ, 0, TXHDR_GPA, VSOCK_HDR_SIZE,
			 VIRTQ_DESC_F_NEXT, 1);
		desc_set(VSOCK_TXQ, 1, TXDATA_GPA, len, 0, 0);
	} else {
		desc_set(VSOCK_TXQ, 0, TXHDR_GPA, VSOCK_HDR_SIZE, 0, 0);
	}
	avail_add(VSOCK_TXQ, 0);
	kick(VSOCK_TXQ);
	while (used_idx(VSOCK_TXQ) != want && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(used_idx(VSOCK_TXQ), want);
	drv_used[VSOCK_TXQ] = want;
}

static inline void tx_op(uint32_t src, uint32_t dst, uint16_t op,
			 uint32_t flags)
{
	struct vsock_hdr h = ghdr(src, dst, op);

	h.flags = flags;
	tx(h, NULL, 0);
}

/* The next rx packet within @ms, its buffer given back; false if none. */
static inline bool rx(struct pkt *p, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	uint32_t id, len;

	while (used_idx(VSOCK_RXQ) == drv_used[VSOCK_RXQ]) {
		if (now_ms() >= end)
			return false;
		sleep_ms(1);
	}
	used_elem(VSOCK_RXQ, drv_used[VSOCK_RXQ]++, &id, &len);
	CHECK(id < QSZ);
	CHECK(len >= VSOCK_HDR_SIZE && len <= RXBUF_LEN);
	if (id >= QSZ || len < VSOCK_HDR_SIZE || len > RXBUF_LEN)
		return false;
	vsock_hdr_decode(host(RXBUF_GPA + RXBUF_STRIDE * id), &p->h);
	CHECK_EQ(p->h.len, len - VSOCK_HDR_SIZE);
	CHECK_EQ(p->h.src_cid, VSOCK_HOST_CID);
	CHECK_EQ(p->h.dst_cid, CID);
	memcpy(p->data, host(RXBUF_GPA + RXBUF_STRIDE * id + VSOCK_HDR_SIZE),
	       len - VSOCK_HDR_SIZE);
	rx_add((uint16_t)id);
	kick(VSOCK_RXQ);
	return true;
}

/* The next packet that is not a CREDIT_UPDATE (those come as the
 * device forwards our data: §5.10.6.3). */
static inline bool rx_ctl(struct pkt *p, unsigned int ms)
{
	while (rx(p, ms))
		if (p->h.op != VSOCK_OP_CREDIT_UPDATE)
			return true;
	return false;
}

/* ---- host programs ---- */

static inline int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int unix_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 16))
		return -1;
	return fd;
}

/* Read exactly @n bytes within 5 s; returns what was read. */
static inline size_t read_n(int fd, void *buf, size_t n)
{
	uint64_t end = now_ms() + 5000;
	size_t got = 0;

	while (got < n && now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = read(fd, (uint8_t *)buf + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* EOF (or an error) within @ms. */
static inline bool host_sees_eof(int fd, unsigned int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b[64];

	while (poll(&p, 1, (int)ms) > 0) {
		ssize_t r = read(fd, b, sizeof(b));

		if (r <= 0)
			return true;
	}
	return false;
}

static inline void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 12));
}

/* A host program connects to guest port @gport; the guest accepts.
 * Returns the host fd; *hport is the host side's port. */
static inline int host_to_guest(uint32_t gport, uint32_t *hport)
{
	char line[32], want[32];
	struct pkt p;
	int fd = unix_connect(uds);
	size_t n;

	CHECK(fd >= 0);
	n = (size_t)snprintf(line, sizeof(line), "CONNECT %u\n", gport);
	CHECK_EQ(write(fd, line, n), (ssize_t)n);
	CHECK(rx(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	CHECK_EQ(p.h.dst_port, gport);
	CHECK(p.h.src_port >= VSOCK_EPHEMERAL_BASE);
	*hport = p.h.src_port;
	tx_op(gport, p.h.src_port, VSOCK_OP_RESPONSE, 0);
	n = (size_t)snprintf(want, sizeof(want), "OK %u\n", p.h.src_port);
	memset(line, 0, sizeof(line));
	CHECK_EQ(read_n(fd, line, n), n);
	CHECK(!memcmp(line, want, n));
	return fd;
}

/* Guest -> host: @n bytes in 4 KiB packets, read back byte for byte. */
static inline void guest_to_host(int fd, uint32_t gport, uint32_t hport,
				 size_t n, unsigned int seed)
{
	static uint8_t src[1 << 18], got[1 << 18];
	size_t off;

	pattern(src, n, seed);
	for (off = 0; off < n; off += 4096) {
		size_t k = n - off < 4096 ? n - off : 4096;

		tx(ghdr(gport, hport, VSOCK_OP_RW), src + off, (uint32_t)k);
	}
	memset(got, 0, n);
	CHECK_EQ(read_n(fd, got, n), n);
	CHECK(!memcmp(src, got, n));
}

/* Host -> guest: @n bytes written, received as RW packets in order. */
static inline void host_to_guest_data(int fd, uint32_t gport,
				      uint32_t hport, size_t n,
				      unsigned int seed)
{
	static uint8_t src[1 << 18], got[1 << 18];
	size_t have = 0;
	struct pkt p;

	pattern(src, n, seed);
	CHECK_EQ(write(fd, src, n), (ssize_t)n);
	while (have < n && rx(&p, 5000)) {
		CHECK_EQ(p.h.src_port, hport);
		CHECK_EQ(p.h.dst_port, gport);
		if (p.h.op != VSOCK_OP_RW)
			continue; /* credit updates */
		CHECK(have + p.h.len <= n);
		if (have + p.h.len > n)
			break;
		memcpy(got + have, p.data, p.h.len);
		have += p.h.len;
	}
	CHECK_EQ(have, n);
	CHECK(!memcmp(src, got, n));
}

/* ---- device set-up ---- */

static inline void dev_open(void)
{
	struct vsock_config cfg = { .guest_cid = CID, .uds_path = uds };
	unsigned int q;

	CHECK_EQ(vsock_dev_create(&dev, &vdev, &cfg, &gm, "vsock0"), 0);
	vdev.tops = &fake_tops;
	for (q = 0; q < VSOCK_NUM_QUEUES; q++)
		vdev.queues[q].kick_fd = evfd_new();
}

static inline void dev_close(void)
{
	unsigned int q;

	vsock_dev_destroy(dev);
	for (q = 0; q < VSOCK_NUM_QUEUES; q++)
		close(vdev.queues[q].kick_fd);
	dev = NULL;
}

static inline struct vsock_dev_stats stats(void)
{
	struct vsock_dev_stats s;

	vsock_dev_get_stats(dev, &s);
	return s;
}

#endif
