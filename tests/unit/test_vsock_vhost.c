// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-vsock with engine=vhost against a fake /dev/vhost-vsock (a
 * struct vhost_sys that records every ioctl and keeps the state the
 * kernel would: owner, CID, running, kick/call per ring, open fds): the
 * open sequence and each of its failures (nothing left open, one message
 * that names the fix or the CID), the whole device on the mmio transport
 * (DRIVER_OK hands rx and tx to the kernel with the line's irqfd as call
 * fd and keeps the event queue, reset stops it, pause and resume go on
 * from the saved bases), TRANSPORT_RESET through the VMM's event queue
 * while the kernel serves rx and tx (virtio 1.2 §5.10.6.7), and a start
 * that fails at each step leaving nothing served.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fake_vhost.h"
#include "log_capture.h"
#include "test.h"
#include "util/le.h"
#include "util/log.h"
#include "virtio/mmio.h"
#include "virtio/vsock.h"
#include "virtio/vsock_vhost.h"

/* ---- the fake kernel ---- */

#define FAKE_FD 91
#define FAKE_PATH "/nonexistent/fake-vhost-vsock"
#define CID 42

/* What the kernel's vhost-vsock offers: VHOST_FEATURES (with LOG_ALL,
 * which is vhost's, not virtio's) and SEQPACKET; no INDIRECT_DESC here,
 * so that the intersection shows. */
#define F(bit) (1ull << (bit))
#define FEAT_KERNEL                                                      \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_EVENT_IDX) | F(VHOST_F_LOG_ALL) | \
	 F(VSOCK_F_SEQPACKET) | F(24) /* NOTIFY_ON_EMPTY */)
#define FEAT_OFFERED                                                     \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_EVENT_IDX) | F(VSOCK_F_SEQPACKET))

static void fake_reset(void)
{
	fake_vhost_reset(FAKE_FD);
	fk.features = FEAT_KERNEL;
	/* The kernel's vhost-vsock has two rings: the event queue is
	 * never handed over. */
	fk.nr_rings = VSOCK_VHOST_RINGS;
	fk.one_fd = true;
}

/* ---- guest memory, the device, the mmio transport ---- */

#define MEM_SIZE 0x100000
#define QSZ 64
#define RING_GPA(q) (0x10000ull + 0x1000ull * (q))
#define AVAIL_OFF 0x400
#define USED_OFF 0x800
#define EVBUF_GPA 0x20000ull
#define TXBUF_GPA 0x21000ull

static uint8_t mem[MEM_SIZE];
static struct guest_mem gm;
static struct virtio_dev vdev;
static struct virtio_mmio t;

static int fh_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			bool pio, bool match, uint64_t data, int fd,
			bool assign)
{
	(void)opaque; (void)addr; (void)len; (void)pio; (void)match;
	(void)data; (void)fd; (void)assign;
	return 0;
}

static int fh_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	(void)opaque; (void)fd; (void)gsi; (void)assign;
	return 0;
}

static int fh_gsi_alloc(void *opaque)
{
	(void)opaque;
	return 5;
}

static int fh_msi_route(void *opaque, uint32_t gsi, uint64_t addr,
			uint32_t data, uint32_t devid)
{
	(void)opaque; (void)gsi; (void)addr; (void)data; (void)devid;
	return 0;
}

static const struct virtio_host_ops fh_ops = {
	.ioeventfd = fh_ioeventfd,
	.irqfd = fh_irqfd,
	.gsi_alloc = fh_gsi_alloc,
	.msi_route = fh_msi_route,
};

static uint32_t mmio_rd(uint64_t off)
{
	uint8_t d[4] = { 0 };

	virtio_mmio_access(&t, off, d, 4, false);
	return (uint32_t)le_get(d, 4);
}

static void mmio_wr(uint64_t off, uint32_t v)
{
	uint8_t d[4];

	le_put(d, 4, v);
	virtio_mmio_access(&t, off, d, 4, true);
}

static struct vsock_dev *dev_create(const char *uds)
{
	struct vsock_config cfg = {
		.guest_cid = CID, .uds_path = uds,
		.engine = VSOCK_ENGINE_VHOST, .vhost_sys = &fake_sys,
	};
	struct vsock_dev *v = NULL;

	if (vsock_dev_create(&v, &vdev, &cfg, &gm, "vsock"))
		return NULL;
	return v;
}

static uint64_t dev_features(void)
{
	uint64_t f;

	mmio_wr(0x014, 0);
	f = mmio_rd(0x010);
	mmio_wr(0x014, 1);
	return f | (uint64_t)mmio_rd(0x010) << 32;
}

/* The driver's side of §3.1.1 up to DRIVER_OK: every offered feature,
 * the three queues. */
static void driver_ok(void)
{
	uint64_t f;
	unsigned int q;

	memset(mem, 0, sizeof(mem));
	mmio_wr(0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	f = dev_features();
	mmio_wr(0x024, 0);
	mmio_wr(0x020, (uint32_t)f);
	mmio_wr(0x024, 1);
	mmio_wr(0x020, (uint32_t)(f >> 32));
	mmio_wr(0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		VIRTIO_STATUS_FEATURES_OK);
	for (q = 0; q < VSOCK_NUM_QUEUES; q++) {
		mmio_wr(0x030, q);
		mmio_wr(0x038, QSZ);
		mmio_wr(0x080, (uint32_t)RING_GPA(q));
		mmio_wr(0x090, (uint32_t)(RING_GPA(q) + AVAIL_OFF));
		mmio_wr(0x0a0, (uint32_t)(RING_GPA(q) + USED_OFF));
		mmio_wr(0x044, 1);
	}
	mmio_wr(0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
}

/* One device-writable (@write) or -readable buffer as chain 0 of @q. */
static void add_buf(unsigned int q, uint64_t gpa, uint32_t len, bool write)
{
	uint8_t *d = mem + RING_GPA(q);
	uint8_t *a = mem + RING_GPA(q) + AVAIL_OFF;

	le_put(d, 8, gpa);
	le_put(d + 8, 4, len);
	le_put(d + 12, 2, write ? 2 : 0);
	le_put(a + 4, 2, 0);
	/* The ring entry before the index; the reader's acquire pairs. */
	__atomic_store_n((uint16_t *)(a + 2), (uint16_t)1, __ATOMIC_RELEASE);
}

static uint16_t used_idx(unsigned int q)
{
	return __atomic_load_n((uint16_t *)(mem + RING_GPA(q) + USED_OFF + 2),
			       __ATOMIC_ACQUIRE);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- tests ---- */

/* Open: the node, ownership, features, the table, the CID; refusals. */
static void test_open(void)
{
	struct vsock_dev *v;

	fake_reset();
	setenv("MICROVM_VHOST_VSOCK_DEVICE", FAKE_PATH, 1);
	v = dev_create(NULL);
	CHECK(v != NULL);
	CHECK(!strcmp(fk.path, FAKE_PATH));
	CHECK_EQ(fk.open_fds, 1);
	CHECK_EQ(fk.n, 4);
	CHECK_EQ(fk.log[0].req, VHOST_SET_OWNER);
	CHECK_EQ(fk.log[1].req, VHOST_GET_FEATURES);
	CHECK_EQ(fk.log[2].req, VHOST_SET_MEM_TABLE);
	CHECK_EQ(fk.log[3].req, VHOST_VSOCK_SET_GUEST_CID);
	CHECK_EQ(fk.cid, CID);
	/* What the kernel serves and we offer; VERSION_1 always. */
	CHECK_EQ(vdev.host_features, FEAT_OFFERED);
	vsock_dev_destroy(v);
	CHECK_EQ(fk.open_fds, 0);
	CHECK_EQ(fk.running, 0);
	/* The default node. */
	fake_reset();
	unsetenv("MICROVM_VHOST_VSOCK_DEVICE");
	v = dev_create(NULL);
	CHECK(!strcmp(fk.path, VSOCK_VHOST_DEVICE));
	vsock_dev_destroy(v);
	/* uds_path and engine=vhost exclude each other: nothing opened. */
	fake_reset();
	logged();
	CHECK(dev_create("/tmp/v.sock") == NULL);
	CHECK_EQ(fk.path[0], '\0');
	CHECK(strstr(logged(), "uds_path \"/tmp/v.sock\" and engine=vhost "
		     "exclude each other") != NULL);
}

/* Each step of the open failing: nothing left open, one message. */
static void test_open_errors(void)
{
	static const struct {
		const char *what;
		int open_err;
		unsigned long req;
		int err;
		uint64_t features;
		int ret;
		const char *needle;
	} rows[] = {
		{ .what = "no node", .open_err = -ENOENT, .ret = -ENOENT,
		  .needle = "modprobe vhost_vsock" },
		{ .what = "no module", .open_err = -ENODEV, .ret = -ENODEV,
		  .needle = "modprobe vhost_vsock" },
		{ .what = "no access", .open_err = -EACCES, .ret = -EACCES,
		  .needle = "read-write access" },
		{ .what = "owner", .req = VHOST_SET_OWNER, .err = EBUSY,
		  .ret = -EBUSY, .needle = "VHOST_SET_OWNER" },
		{ .what = "features", .req = VHOST_GET_FEATURES, .err = EIO,
		  .ret = -EIO, .needle = "VHOST_GET_FEATURES" },
		{ .what = "no VERSION_1", .features = F(VIRTIO_F_EVENT_IDX),
		  .ret = -EPROTO, .needle = "VIRTIO_F_VERSION_1" },
		{ .what = "mem table", .req = VHOST_SET_MEM_TABLE, .err = ENOMEM,
		  .ret = -ENOMEM, .needle = "VHOST_SET_MEM_TABLE" },
		{ .what = "cid in use", .req = VHOST_VSOCK_SET_GUEST_CID,
		  .err = EADDRINUSE, .ret = -EADDRINUSE,
		  .needle = "guest CID 42 is in use" },
		{ .what = "cid refused", .req = VHOST_VSOCK_SET_GUEST_CID,
		  .err = EINVAL, .ret = -EINVAL,
		  .needle = "VHOST_VSOCK_SET_GUEST_CID 42" },
	};
	struct vsock_config cfg = {
		.guest_cid = CID, .engine = VSOCK_ENGINE_VHOST,
		.vhost_sys = &fake_sys,
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct vsock_dev *v = NULL;
		const char *msg;

		fake_reset();
		fk.open_err = rows[i].open_err;
		fk.fail_req = rows[i].req;
		fk.fail_err = rows[i].err;
		if (rows[i].features)
			fk.features = rows[i].features;
		logged();
		CHECK_EQ(vsock_dev_create(&v, &vdev, &cfg, &gm, "vsock"),
			 rows[i].ret);
		CHECK(v == NULL);
		CHECK_EQ(fk.open_fds, 0);
		msg = logged();
		CHECK(strstr(msg, rows[i].needle) != NULL);
		if (!strstr(msg, rows[i].needle))
			fprintf(stderr, "%s: %s\n", rows[i].what, msg);
	}
}

/* One ring's setup, from @at on: NUM, ADDR, BASE @base, KICK. */
static void check_ring(int at, unsigned int q, uint16_t base)
{
	int num = fake_find(VHOST_SET_VRING_NUM, at, (int)q);

	CHECK(num >= 0);
	if (num < 0)
		return;
	CHECK_EQ(fk.log[num].index, q);
	CHECK_EQ(fk.log[num].val, QSZ);
	CHECK_EQ(fk.log[num + 1].req, VHOST_SET_VRING_ADDR);
	CHECK_EQ(fk.log[num + 2].req, VHOST_SET_VRING_BASE);
	CHECK_EQ(fk.log[num + 2].val, base);
	CHECK_EQ(fk.log[num + 3].req, VHOST_SET_VRING_KICK);
	CHECK_EQ(fk.log[num + 3].val, vdev.queues[q].kick_fd);
}

/*
 * DRIVER_OK: the call fds (the line's irqfd), SET_FEATURES, rx and tx
 * set up, SET_RUNNING 1 last; the event queue stays. Pause and resume
 * go on from the bases the kernel gave back; reset stops it.
 */
static void test_lifecycle(void)
{
	struct virtio_host host = { &fh_ops, NULL };
	struct vsock_dev *v;
	int at, run;

	fake_reset();
	setenv("MICROVM_VHOST_VSOCK_DEVICE", FAKE_PATH, 1);
	v = dev_create(NULL);
	CHECK(v != NULL);
	if (!v)
		return;
	CHECK_EQ(virtio_mmio_init(&t, &vdev, &host, 0xd0000000, 5), 0);
	at = fk.n;
	driver_ok();
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 0), t.irq_fd);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 1), t.irq_fd);
	CHECK_EQ(fake_count(VHOST_SET_FEATURES, at), 1);
	CHECK_EQ(fk.log[fake_find(VHOST_SET_FEATURES, at, 0)].val, FEAT_OFFERED);
	CHECK_EQ(fake_count(VHOST_SET_VRING_NUM, at), 2);
	check_ring(at, 0, 0);
	check_ring(at, 1, 0);
	run = fake_find(VHOST_VSOCK_SET_RUNNING, at, 0);
	CHECK(run > fake_find(VHOST_SET_VRING_KICK, at, 1));
	CHECK_EQ(fk.running, 1);
	CHECK_EQ(fk.log[fk.n - 1].req, VHOST_VSOCK_SET_RUNNING);

	/* Pause: stopped, the bases the kernel had reached kept. */
	fk.ring_base[0] = 17;
	fk.ring_base[1] = 33;
	at = fk.n;
	virtio_dev_pause(&vdev);
	CHECK_EQ(fk.log[at].req, VHOST_VSOCK_SET_RUNNING);
	CHECK_EQ(fk.log[at].val, 0);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), 2);
	CHECK_EQ(fk.kick[0], -1);
	CHECK_EQ(fk.kick[1], -1);
	CHECK_EQ(fk.running, 0);
	CHECK_EQ(vdev.queues[0].vq.last_avail_idx, 17);
	CHECK_EQ(vdev.queues[1].vq.last_avail_idx, 33);
	/* Resume: from there, nothing replayed, nothing skipped. */
	at = fk.n;
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	check_ring(at, 0, 17);
	check_ring(at, 1, 33);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 0), t.irq_fd);
	CHECK_EQ(fk.running, 1);

	/* Reset: SET_RUNNING 0, the bases taken back, nothing served. */
	fk.ring_base[0] = 20;
	at = fk.n;
	mmio_wr(0x070, 0);
	CHECK_EQ(fk.log[at].req, VHOST_VSOCK_SET_RUNNING);
	CHECK_EQ(fk.log[at].val, 0);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), 2);
	CHECK_EQ(fk.running, 0);
	/* A new DRIVER_OK starts the fresh rings at 0. */
	at = fk.n;
	driver_ok();
	check_ring(at, 0, 0);
	check_ring(at, 1, 0);
	CHECK_EQ(fk.running, 1);
	virtio_mmio_destroy(&t);
	CHECK_EQ(fk.running, 0);
	vsock_dev_destroy(v);
	CHECK_EQ(fk.open_fds, 0);
}

/*
 * The event queue is the VMM's: TRANSPORT_RESET (§5.10.6.7) reaches
 * the guest through it while the kernel serves rx and tx, and the worker
 * leaves the tx ring alone.
 */
static void test_event_queue(void)
{
	struct virtio_host host = { &fh_ops, NULL };
	struct vsock_dev *v;
	uint64_t one = 1;
	unsigned int i;

	fake_reset();
	v = dev_create(NULL);
	CHECK(v != NULL);
	if (!v)
		return;
	CHECK_EQ(virtio_mmio_init(&t, &vdev, &host, 0xd0000000, 5), 0);
	driver_ok();
	CHECK_EQ(fk.running, 1);
	add_buf(VSOCK_TXQ, TXBUF_GPA, VSOCK_HDR_SIZE, false);
	CHECK_EQ(write(vdev.queues[VSOCK_TXQ].kick_fd, &one, 8), 8);
	add_buf(VSOCK_EVQ, EVBUF_GPA, 8, true);
	CHECK_EQ(vsock_dev_send_reset(v), 0);
	for (i = 0; i < 200 && used_idx(VSOCK_EVQ) != 1; i++)
		sleep_ms(10);
	CHECK_EQ(used_idx(VSOCK_EVQ), 1);
	CHECK_EQ(le_get(mem + EVBUF_GPA, 4), VSOCK_EVENT_TRANSPORT_RESET);
	/* The kernel's ring: not ours to pop. */
	sleep_ms(20);
	CHECK_EQ(used_idx(VSOCK_TXQ), 0);
	CHECK_EQ(vdev.queues[VSOCK_TXQ].vq.last_avail_idx, 0);
	virtio_mmio_destroy(&t);
	vsock_dev_destroy(v);
	CHECK_EQ(fk.open_fds, 0);
}

/* DRIVER_OK failing at each step of the start: nothing served. */
static void test_start_errors(void)
{
	static const struct {
		unsigned long req;
		int index;
		const char *needle;
	} rows[] = {
		{ VHOST_SET_FEATURES, -1, "VHOST_SET_FEATURES" },
		{ VHOST_SET_VRING_NUM, 1, "queue 1: VHOST_SET_VRING_NUM" },
		{ VHOST_SET_VRING_ADDR, 0, "queue 0: VHOST_SET_VRING_ADDR" },
		{ VHOST_SET_VRING_BASE, 1, "VHOST_SET_VRING_BASE" },
		{ VHOST_SET_VRING_KICK, 1, "VHOST_SET_VRING_KICK" },
		{ VHOST_VSOCK_SET_RUNNING, -1, "VHOST_VSOCK_SET_RUNNING 1" },
	};
	struct virtio_host host = { &fh_ops, NULL };
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct vsock_dev *v;
		const char *msg;

		fake_reset();
		v = dev_create(NULL);
		CHECK(v != NULL);
		if (!v)
			return;
		CHECK_EQ(virtio_mmio_init(&t, &vdev, &host, 0xd0000000, 5),
			 0);
		fk.fail_req = rows[i].req;
		fk.fail_index = rows[i].index;
		fk.fail_err = EIO;
		logged();
		driver_ok();
		msg = logged();
		CHECK(strstr(msg, rows[i].needle) != NULL);
		if (!strstr(msg, rows[i].needle))
			fprintf(stderr, "row %zu: %s\n", i, msg);
		CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK) ||
		      (virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
		CHECK_EQ(fk.running, 0);
		CHECK(fk.kick[0] <= 0 && fk.kick[1] <= 0);
		virtio_mmio_destroy(&t);
		vsock_dev_destroy(v);
		CHECK_EQ(fk.open_fds, 0);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	log_capture(LOG_ERROR);
	test_open();
	test_open_errors();
	test_lifecycle();
	test_event_queue();
	test_start_errors();
	return test_done();
}
