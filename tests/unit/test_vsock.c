// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock device (virtio 1.2 §5.10) with its real worker thread
 * and real Unix sockets in a temporary directory, driven by an in-test
 * guest driver on fake guest RAM: host programs that CONNECT and guest
 * REQUESTs to <uds>_<port>, data both ways checked byte for byte, a guest
 * that stops reading (host data stops at its credit, §5.10.6.3), many
 * connections at once, pause and resume mid-transfer, TRANSPORT_RESET
 * (§5.10.6.7), a device reset, hostile chains, and creation errors.
 */
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

static uint8_t *ram;
static struct guest_mem gm;
static struct virtio_dev vdev;
static struct vsock_dev *dev;
static char dir[48], uds[80];

/* ---- fake transport ---- */

static atomic_uint notify_count[VSOCK_NUM_QUEUES];

static bool fake_notify(struct virtio_dev *d, struct virtio_queue *q)
{
	(void)d;
	atomic_fetch_add(&notify_count[q->index], 1);
	return true;
}

static void fake_notify_config(struct virtio_dev *d)
{
	(void)d;
}

static const struct virtio_transport_ops fake_tops = {
	.name = "fake",
	.notify = fake_notify,
	.notify_config = fake_notify_config,
};

/* ---- the in-test driver ---- */

static void *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static void put_le(uint64_t gpa, uint64_t v, unsigned int n)
{
	le_put(host(gpa), n, v);
}

static uint16_t drv_avail[VSOCK_NUM_QUEUES];
static uint16_t drv_used[VSOCK_NUM_QUEUES]; /* used entries read */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void desc_set(unsigned int q, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint64_t d = RING_GPA(q) + 16ull * i;

	put_le(d, addr, 8);
	put_le(d + 8, len, 4);
	put_le(d + 12, flags, 2);
	put_le(d + 14, next, 2);
}

/* Add chain @head to @q's avail ring and publish it (§2.7.13). */
static void avail_add(unsigned int q, uint16_t head)
{
	uint16_t *idx = host(RING_GPA(q) + AVAIL_OFF + 2);

	put_le(RING_GPA(q) + AVAIL_OFF + 4 + 2ull * (drv_avail[q] % QSZ), head,
	       2);
	drv_avail[q]++;
	__atomic_store_n(idx, htole16(drv_avail[q]), __ATOMIC_RELEASE);
}

static void kick(unsigned int q)
{
	evfd_signal(vdev.queues[q].kick_fd);
}

static uint16_t used_idx(unsigned int q)
{
	uint16_t *p = host(RING_GPA(q) + USED_OFF + 2);

	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static void used_elem(unsigned int q, uint16_t i, uint32_t *id, uint32_t *len)
{
	uint64_t e = RING_GPA(q) + USED_OFF + 4 + 8ull * (i % QSZ);

	*id = (uint32_t)le_get(host(e), 4);
	*len = (uint32_t)le_get(host(e + 4), 4);
}

static void set_status(uint8_t s)
{
	pthread_mutex_lock(&vdev.lock);
	virtio_set_status_locked(&vdev, s);
	pthread_mutex_unlock(&vdev.lock);
}

/* drv_start(): the first rx buffer's length (a hostile one, or normal). */
static uint32_t rx_first_len = RXBUF_LEN;

static void rx_add_len(uint16_t id, uint32_t len)
{
	desc_set(VSOCK_RXQ, id, RXBUF_GPA + RXBUF_STRIDE * id, len,
		 VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_RXQ, id);
}

static void rx_add(uint16_t id)
{
	desc_set(VSOCK_RXQ, id, RXBUF_GPA + RXBUF_STRIDE * id, RXBUF_LEN,
		 VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_RXQ, id);
}

/* FEATURES_OK, three queues, rx buffers, DRIVER_OK (§3.1.1). */
static void drv_start(void)
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

static struct vsock_hdr ghdr(uint32_t src, uint32_t dst, uint16_t op)
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
static void tx(struct vsock_hdr h, const void *data, uint32_t len)
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

static void tx_op(uint32_t src, uint32_t dst, uint16_t op, uint32_t flags)
{
	struct vsock_hdr h = ghdr(src, dst, op);

	h.flags = flags;
	tx(h, NULL, 0);
}

/* The next rx packet within @ms, its buffer given back; false if none. */
static bool rx(struct pkt *p, unsigned int ms)
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
static bool rx_ctl(struct pkt *p, unsigned int ms)
{
	while (rx(p, ms))
		if (p->h.op != VSOCK_OP_CREDIT_UPDATE)
			return true;
	return false;
}

/* ---- host programs ---- */

static int unix_connect(const char *path)
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

static int unix_listen(const char *path)
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
static size_t read_n(int fd, void *buf, size_t n)
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
static bool host_sees_eof(int fd, unsigned int ms)
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

static void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 12));
}

/* A host program connects to guest port @gport; the guest accepts.
 * Returns the host fd; *hport is the host side's port. */
static int host_to_guest(uint32_t gport, uint32_t *hport)
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
static void guest_to_host(int fd, uint32_t gport, uint32_t hport, size_t n,
			  unsigned int seed)
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
static void host_to_guest_data(int fd, uint32_t gport, uint32_t hport,
			       size_t n, unsigned int seed)
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

static void dev_open(void)
{
	struct vsock_config cfg = { .guest_cid = CID, .uds_path = uds };
	unsigned int q;

	CHECK_EQ(vsock_dev_create(&dev, &vdev, &cfg, &gm, "vsock0"), 0);
	vdev.tops = &fake_tops;
	for (q = 0; q < VSOCK_NUM_QUEUES; q++)
		vdev.queues[q].kick_fd = evfd_new();
}

static void dev_close(void)
{
	unsigned int q;

	vsock_dev_destroy(dev);
	for (q = 0; q < VSOCK_NUM_QUEUES; q++)
		close(vdev.queues[q].kick_fd);
	dev = NULL;
}

static struct vsock_dev_stats stats(void)
{
	struct vsock_dev_stats s;

	vsock_dev_get_stats(dev, &s);
	return s;
}

/* ---- tests ---- */

static void test_config_and_create(void)
{
	struct vsock_config bad_cid = { .guest_cid = 2, .uds_path = uds };
	struct vsock_config big_cid = { .guest_cid = UINT32_MAX,
					.uds_path = uds };
	char longp[120];
	struct vsock_config long_path = { .guest_cid = CID,
					  .uds_path = longp };
	struct virtio_dev vd2;
	struct vsock_dev *d2;
	uint8_t b[8];
	struct stat st;

	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &bad_cid, &gm, "x"), -EINVAL);
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &big_cid, &gm, "x"), -EINVAL);
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &long_path, &gm, "x"),
		 -ENAMETOOLONG);
	dev_open();
	CHECK(!stat(uds, &st) && S_ISSOCK(st.st_mode));
	/* uds_path is taken: a second device refuses it. */
	{
		struct vsock_config same = { .guest_cid = 4, .uds_path = uds };

		CHECK_EQ(vsock_dev_create(&d2, &vd2, &same, &gm, "x"),
			 -EADDRINUSE);
	}
	CHECK_EQ(vdev.ops->device_id, VIRTIO_ID_VSOCK);
	CHECK_EQ(vdev.num_queues, 3);
	CHECK_EQ(vdev.host_features, F(VIRTIO_F_VERSION_1));
	/* le64 guest_cid (§5.10.4), read-only. */
	vdev.ops->config_access(&vdev, 0, b, 8, false);
	CHECK_EQ(le_get(b, 8), CID);
	memset(b, 0xff, 8);
	vdev.ops->config_access(&vdev, 0, b, 8, true);
	vdev.ops->config_access(&vdev, 4, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0);
	vdev.ops->config_access(&vdev, 8, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0);
	dev_close();
	CHECK(stat(uds, &st) && errno == ENOENT);
	/* Kept (a confined main thread may not unlink): left in place. */
	dev_open();
	vsock_dev_keep_path(dev);
	dev_close();
	CHECK(!stat(uds, &st) && S_ISSOCK(st.st_mode));
	unlink(uds);
}

static void test_host_initiated(void)
{
	struct pkt p;
	uint32_t hp;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	host_to_guest_data(fd, 52, hp, 100000, 1);
	guest_to_host(fd, 52, hp, 200000, 2);
	CHECK_EQ(stats().conns_host, 1);
	CHECK_EQ(stats().tx_bytes, 200000);
	CHECK_EQ(stats().rx_bytes, 100000);
	/* The host program leaves: SHUTDOWN, the guest's RST ends it. */
	close(fd);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_SHUTDOWN);
	tx_op(52, hp, VSOCK_OP_RST, 0);
	/* No guest listener: RST closes the host program. */
	fd = unix_connect(uds);
	CHECK_EQ(write(fd, "CONNECT 53\n", 11), 11);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	tx_op(53, p.h.src_port, VSOCK_OP_RST, 0);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	/* A bad line: closed at once, the guest hears nothing. */
	fd = unix_connect(uds);
	CHECK_EQ(write(fd, "CONNECT x\n", 10), 10);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	CHECK(!rx_ctl(&p, 100));
	CHECK_EQ(stats().bad_lines, 1);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	dev_close();
}

static void test_guest_initiated(void)
{
	char path[100];
	struct pkt p;
	int lfd, fd;

	dev_open();
	drv_start();
	snprintf(path, sizeof(path), "%s_5000", uds);
	lfd = unix_listen(path);
	CHECK(lfd >= 0);
	tx_op(1234, 5000, VSOCK_OP_REQUEST, 0);
	CHECK(rx(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RESPONSE);
	CHECK_EQ(p.h.src_port, 5000);
	CHECK_EQ(p.h.dst_port, 1234);
	fd = accept(lfd, NULL, NULL);
	CHECK(fd >= 0);
	guest_to_host(fd, 1234, 5000, 50000, 3);
	host_to_guest_data(fd, 1234, 5000, 50000, 4);
	/* The guest closes: SHUTDOWN both, RST back, the socket closes. */
	tx_op(1234, 5000, VSOCK_OP_SHUTDOWN,
	      VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	/* No listener at <uds>_5001: RST. */
	tx_op(1235, 5001, VSOCK_OP_REQUEST, 0);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK_EQ(p.h.dst_port, 1235);
	/* Another CID or a SEQPACKET request: no connection. */
	{
		struct vsock_hdr h = ghdr(1236, 5000, VSOCK_OP_REQUEST);

		h.dst_cid = 5;
		tx(h, NULL, 0);
		CHECK(!rx_ctl(&p, 100));
		h = ghdr(1236, 5000, VSOCK_OP_REQUEST);
		h.type = 2;
		tx(h, NULL, 0);
		CHECK(rx_ctl(&p, 5000));
		CHECK_EQ(p.h.op, VSOCK_OP_RST);
	}
	CHECK_EQ(stats().conns_guest, 1);
	CHECK_EQ(stats().invalid, 2);
	close(lfd);
	unlink(path);
	dev_close();
}

/* A guest that stops reading: host data stops at its credit. */
static void test_credit_stop(void)
{
	static uint8_t junk[1 << 16];
	struct vsock_hdr h;
	size_t got = 0, wrote = 0;
	struct pkt p;
	uint32_t hp;
	int fd, fl;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 10000;
	tx(h, NULL, 0);
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	/* Write until the socket is full: nothing grows behind it. */
	for (;;) {
		ssize_t r = write(fd, junk, sizeof(junk));

		if (r <= 0)
			break;
		wrote += (size_t)r;
		if (wrote > (64u << 20))
			break;
	}
	CHECK(wrote < (64u << 20));
	while (rx(&p, 300))
		if (p.h.op == VSOCK_OP_RW)
			got += p.h.len;
	CHECK_EQ(got, 10000);
	CHECK(!rx(&p, 200));
	/* It reads 10000: 10000 more come. */
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 10000;
	h.fwd_cnt = 10000;
	tx(h, NULL, 0);
	got = 0;
	while (rx(&p, 300))
		if (p.h.op == VSOCK_OP_RW)
			got += p.h.len;
	CHECK_EQ(got, 10000);
	close(fd);
	dev_close();
}

static void test_many(void)
{
	enum { N = 40 };
	int fd[N];
	uint32_t hp[N];
	unsigned int i;

	dev_open();
	drv_start();
	for (i = 0; i < N; i++)
		fd[i] = host_to_guest(100 + i, &hp[i]);
	for (i = 0; i < N; i++)
		CHECK(hp[i] != hp[(i + 1) % N]);
	for (i = 0; i < N; i++) {
		guest_to_host(fd[i], 100 + i, hp[i], 5000, i);
		host_to_guest_data(fd[i], 100 + i, hp[i], 5000, i + 100);
	}
	CHECK_EQ(stats().conns_host, N);
	for (i = 0; i < N; i++)
		close(fd[i]);
	dev_close();
}

/* Pause and resume mid-transfer: nothing lost, nothing replayed. */
static void test_pause_resume(void)
{
	static uint8_t src[60000], got[60000];
	size_t have = 0;
	struct pkt p;
	uint32_t hp;
	uint16_t want;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	pattern(src, sizeof(src), 9);
	CHECK_EQ(write(fd, src, 20000), 20000);
	while (have < 8000 && rx(&p, 5000)) {
		CHECK_EQ(p.h.op, VSOCK_OP_RW);
		memcpy(got + have, p.data, p.h.len);
		have += p.h.len;
	}
	virtio_dev_pause(&vdev);
	/* Meanwhile: host data, and a guest packet that waits in the ring. */
	CHECK_EQ(write(fd, src + 20000, 40000), 40000);
	want = (uint16_t)(drv_avail[VSOCK_TXQ] + 1);
	memcpy(host(TXDATA_GPA), "paused", 6);
	{
		struct vsock_hdr h = ghdr(52, hp, VSOCK_OP_RW);

		h.len = 6;
		vsock_hdr_encode(host(TXHDR_GPA), &h);
	}
	desc_set(VSOCK_TXQ, 0, TXHDR_GPA, VSOCK_HDR_SIZE, VIRTQ_DESC_F_NEXT,
		 1);
	desc_set(VSOCK_TXQ, 1, TXDATA_GPA, 6, 0, 0);
	avail_add(VSOCK_TXQ, 0);
	kick(VSOCK_TXQ);
	sleep_ms(100);
	CHECK(used_idx(VSOCK_TXQ) != want); /* not served while paused */
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	while (have < sizeof(src) && rx(&p, 5000)) {
		if (p.h.op != VSOCK_OP_RW)
			continue;
		if (have + p.h.len > sizeof(src))
			break;
		memcpy(got + have, p.data, p.h.len);
		have += p.h.len;
	}
	CHECK_EQ(have, sizeof(src));
	CHECK(!memcmp(src, got, sizeof(src)));
	{
		char b[8] = { 0 };

		CHECK_EQ(read_n(fd, b, 6), 6);
		CHECK(!memcmp(b, "paused", 6));
	}
	CHECK_EQ(used_idx(VSOCK_TXQ), want);
	drv_used[VSOCK_TXQ] = want;
	close(fd);
	dev_close();
}

/* TRANSPORT_RESET (§5.10.6.7): the event, and every connection closed. */
static void test_transport_reset(void)
{
	uint64_t end;
	uint32_t hp, id, len;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	put_le(EVBUF_GPA, 0xffffffff, 4);
	desc_set(VSOCK_EVQ, 0, EVBUF_GPA, 4, VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_EVQ, 0);
	kick(VSOCK_EVQ);
	sleep_ms(20);
	CHECK_EQ(used_idx(VSOCK_EVQ), 0); /* nothing to say yet */
	CHECK_EQ(vsock_dev_send_reset(dev), 0);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_EVQ) != 1 && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(used_idx(VSOCK_EVQ), 1);
	used_elem(VSOCK_EVQ, 0, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 4);
	CHECK_EQ(le_get(host(EVBUF_GPA), 4), VSOCK_EVENT_TRANSPORT_RESET);
	CHECK(host_sees_eof(fd, 5000));
	CHECK_EQ(stats().events_sent, 1);
	CHECK(atomic_load(&notify_count[VSOCK_EVQ]) >= 1);
	close(fd);
	/* A device reset closes connections too. */
	fd = host_to_guest(53, &hp);
	set_status(0);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	dev_close();
}

/* Hostile chains fail alone; the device keeps working. */
static void test_hostile(void)
{
	static uint8_t big[4096];
	struct pkt p = { .h.op = 0 };
	uint64_t end;
	uint32_t hp, id, len;
	uint16_t want;
	unsigned int i;
	int fd;

	dev_open();
	rx_first_len = 20; /* too small for a header */
	drv_start();
	rx_first_len = RXBUF_LEN;
	/* A tx chain shorter than a header, one outside guest RAM. */
	want = (uint16_t)(drv_avail[VSOCK_TXQ] + 2);
	desc_set(VSOCK_TXQ, 0, TXHDR_GPA, 10, 0, 0);
	avail_add(VSOCK_TXQ, 0);
	desc_set(VSOCK_TXQ, 1, RAM_GPA + RAM_SIZE, 64, 0, 0);
	avail_add(VSOCK_TXQ, 1);
	kick(VSOCK_TXQ);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_TXQ) != want && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(used_idx(VSOCK_TXQ), want);
	drv_used[VSOCK_TXQ] = want;
	CHECK_EQ(stats().bad_bufs, 2);
	/* The small rx buffer comes back empty, the REQUEST in the next. */
	fd = unix_connect(uds);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "CONNECT 52\n", 11), 11);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_RXQ) == 0 && now_ms() < end)
		sleep_ms(1);
	used_elem(VSOCK_RXQ, drv_used[VSOCK_RXQ]++, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 0);
	rx_add(0);
	CHECK(rx(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	CHECK_EQ(stats().bad_bufs, 3);
	tx_op(52, p.h.src_port, VSOCK_OP_RESPONSE, 0);
	hp = p.h.src_port;
	CHECK_EQ(read_n(fd, big, 3), 3); /* "OK " */
	CHECK(!memcmp(big, "OK ", 3));
	read_n(fd, big, strlen("1073741824\n"));
	guest_to_host(fd, 52, hp, 1000, 5);
	/* A guest beyond our credit (§5.10.6.3): the host program reads
	 * nothing, its socket then our 256 KiB fill, and it is reset. */
	for (i = 0; i < 4096 && stats().credit_violations == 0; i++)
		tx(ghdr(52, hp, VSOCK_OP_RW), big, sizeof(big));
	CHECK_EQ(stats().credit_violations, 1);
	CHECK(i > VSOCK_BUF_ALLOC / sizeof(big));
	while (rx(&p, 500) && p.h.op != VSOCK_OP_RST)
		;
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	dev_close();
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	snprintf(dir, sizeof(dir), "%s/test_vsock.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(uds, sizeof(uds), "%s/v.sock", dir);
	test_config_and_create();
	test_host_initiated();
	test_guest_initiated();
	test_credit_stop();
	test_many();
	test_pause_resume();
	test_transport_reset();
	test_hostile();
	rmdir(dir);
	free(ram);
	return test_done();
}
