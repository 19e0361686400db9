// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-input keyboard (virtio 1.2 §5.8) behind the virtio-mmio
 * transport, driven by an in-test driver on fake guest RAM: configuration
 * space answers (§5.8.5), Ctrl-Alt-Del events in eventq buffers (§5.8.6),
 * events kept while the guest has no buffers (bounded, oldest dropped),
 * forgotten by a reset and kept across a pause, the statusq drained, and
 * hostile elements (short, device-readable, outside RAM, a runaway avail
 * index) failed without losing an event.
 */
#include <endian.h>
#include <errno.h>

#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/input.h"
#include "virtio/mmio.h"

#define BASE 0xd0000000ULL
#define GSI 7
#define RAM_GPA 0x10000ull
#define RAM_SIZE 0x100000ull
#define QSZ 8
/* Rings of queue q at RING_GPA(q) + DESC/AVAIL/USED. */
#define RING_GPA(q) (0x10000ull + 0x4000ull * (q))
#define DESC_OFF 0x0
#define AVAIL_OFF 0x1000
#define USED_OFF 0x2000
#define BUF_GPA 0x40000ull /* 64-byte buffers, one per descriptor */
#define BUF(q, i) (BUF_GPA + 0x1000ull * (q) + 64ull * (i))
#define OUTSIDE_GPA 0x900000ull

#define REG_DEVICE_ID 0x008
#define REG_DRIVER_FEATURES 0x020
#define REG_DRIVER_FEATURES_SEL 0x024
#define REG_QUEUE_SEL 0x030
#define REG_QUEUE_NUM 0x038
#define REG_QUEUE_READY 0x044
#define REG_QUEUE_NOTIFY 0x050
#define REG_INTERRUPT_ACK 0x064
#define REG_STATUS 0x070
#define REG_QUEUE_DESC_LOW 0x080
#define REG_QUEUE_DRIVER_LOW 0x090
#define REG_QUEUE_DEVICE_LOW 0x0a0
#define REG_CONFIG 0x100

#define W VIRTQ_DESC_F_WRITE
#define NEXT VIRTQ_DESC_F_NEXT

static int nr_ioev;

static int fake_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			  bool pio, bool match, uint64_t data, int fd,
			  bool assign)
{
	(void)opaque, (void)addr, (void)len, (void)pio, (void)match;
	(void)data, (void)fd;
	nr_ioev += assign ? 1 : -1;
	return 0;
}

static int fake_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	(void)opaque, (void)fd, (void)gsi, (void)assign;
	return 0;
}

static const struct virtio_host_ops fake_host_ops = {
	.ioeventfd = fake_ioeventfd,
	.irqfd = fake_irqfd,
};

static uint8_t *ram;
static struct guest_mem gm;
static struct virtio_input kbd;
static struct virtio_mmio t;
static uint16_t drv_avail[2]; /* the driver's next avail idx per queue */
static uint16_t drv_used[2];  /* used entries the driver has read */
static uint16_t next_desc[2];

static void *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static uint32_t rd(uint64_t off)
{
	uint8_t b[4] = { 0 };

	virtio_mmio_access(&t, off, b, 4, false);
	return (uint32_t)le_get(b, 4);
}

static void wr(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	le_put(b, 4, v);
	virtio_mmio_access(&t, off, b, 4, true);
}

static uint8_t cfg8(uint64_t off)
{
	uint8_t b = 0xee;

	virtio_mmio_access(&t, REG_CONFIG + off, &b, 1, false);
	return b;
}

static void cfg_select(uint8_t select, uint8_t subsel)
{
	virtio_mmio_access(&t, REG_CONFIG + 0, &select, 1, true);
	virtio_mmio_access(&t, REG_CONFIG + 1, &subsel, 1, true);
}

static void desc_set(unsigned int q, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint8_t *d = host(RING_GPA(q) + DESC_OFF + 16ull * i);

	le_put(d, 8, addr);
	le_put(d + 8, 4, len);
	le_put(d + 12, 2, flags);
	le_put(d + 14, 2, next);
}

static void avail_add(unsigned int q, uint16_t head)
{
	uint64_t avail = RING_GPA(q) + AVAIL_OFF;

	le_put(host(avail + 4 + 2ull * (drv_avail[q] % QSZ)), 2, head);
	drv_avail[q]++;
	le_put(host(avail + 2), 2, drv_avail[q]);
}

/* One buffer of @len bytes with @flags; returns its descriptor. */
static uint16_t add_buf(unsigned int q, uint32_t len, uint16_t flags)
{
	uint16_t i = next_desc[q]++ % QSZ;

	memset(host(BUF(q, i)), 0xa5, 64);
	desc_set(q, i, BUF(q, i), len, flags, 0);
	avail_add(q, i);
	return i;
}

static uint16_t used_idx(unsigned int q)
{
	return (uint16_t)le_get(host(RING_GPA(q) + USED_OFF + 2), 2);
}

/* The next used element of @q: its id and length; false if none. */
static bool used_next(unsigned int q, uint32_t *id, uint32_t *len)
{
	uint64_t e = RING_GPA(q) + USED_OFF + 4 + 8ull * (drv_used[q] % QSZ);

	if (drv_used[q] == used_idx(q))
		return false;
	*id = (uint32_t)le_get(host(e), 4);
	*len = (uint32_t)le_get(host(e + 4), 4);
	drv_used[q]++;
	return true;
}

/* The event the device wrote into eventq descriptor @i. */
static void event_at(uint16_t i, uint16_t *type, uint16_t *code,
		     uint32_t *value)
{
	uint8_t *b = host(BUF(0, i));

	*type = (uint16_t)le_get(b, 2);
	*code = (uint16_t)le_get(b + 2, 2);
	*value = (uint32_t)le_get(b + 4, 4);
}

/* Interrupts raised since the last call (and acknowledge them). */
static uint64_t irqs(void)
{
	uint64_t n = evfd_drain(t.irq_fd);

	wr(REG_INTERRUPT_ACK, 3);
	return n;
}

static void driver_setup(void)
{
	unsigned int q;

	wr(REG_STATUS, 0);
	memset(ram, 0, RAM_SIZE);
	memset(drv_avail, 0, sizeof(drv_avail));
	memset(drv_used, 0, sizeof(drv_used));
	memset(next_desc, 0, sizeof(next_desc));
	wr(REG_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	wr(REG_DRIVER_FEATURES_SEL, 1);
	wr(REG_DRIVER_FEATURES, 1); /* VERSION_1 */
	wr(REG_STATUS, VIRTIO_STATUS_FEATURES_OK);
	for (q = 0; q < 2; q++) {
		wr(REG_QUEUE_SEL, q);
		wr(REG_QUEUE_NUM, QSZ);
		wr(REG_QUEUE_DESC_LOW, (uint32_t)(RING_GPA(q) + DESC_OFF));
		wr(REG_QUEUE_DRIVER_LOW, (uint32_t)(RING_GPA(q) + AVAIL_OFF));
		wr(REG_QUEUE_DEVICE_LOW, (uint32_t)(RING_GPA(q) + USED_OFF));
		wr(REG_QUEUE_READY, 1);
	}
	wr(REG_STATUS, VIRTIO_STATUS_DRIVER_OK);
	CHECK(rd(REG_STATUS) & VIRTIO_STATUS_DRIVER_OK);
	irqs();
}

static const struct {
	uint16_t type, code;
	uint32_t value;
} cad[8] = {
	{ 1, 29, 1 }, { 1, 56, 1 }, { 1, 111, 1 }, { 0, 0, 0 },
	{ 1, 111, 0 }, { 1, 56, 0 }, { 1, 29, 0 }, { 0, 0, 0 },
};

/* The next used eventq element must hold cad[@k] in 8 bytes. */
static void check_event(unsigned int k)
{
	uint16_t type, code;
	uint32_t id, len, value;

	CHECK(used_next(0, &id, &len));
	CHECK_EQ(len, VIRTIO_INPUT_EVENT_SIZE);
	event_at((uint16_t)id, &type, &code, &value);
	CHECK_EQ(type, cad[k % 8].type);
	CHECK_EQ(code, cad[k % 8].code);
	CHECK_EQ(value, cad[k % 8].value);
}

/* §5.8.5: one row per select/subsel: the size and the payload's start. */
static const struct cfg_row {
	const char *name;
	uint8_t select, subsel, size;
	const char *payload; /* NULL: not checked */
} cfg_rows[] = {
	{ "unset", VIRTIO_INPUT_CFG_UNSET, 0, 0, NULL },
	{ "name", VIRTIO_INPUT_CFG_ID_NAME, 0, 16, "microvm keyboard" },
	{ "name subsel 1", VIRTIO_INPUT_CFG_ID_NAME, 1, 0, NULL },
	{ "serial", VIRTIO_INPUT_CFG_ID_SERIAL, 0, 13, "microvm-kbd-0" },
	{ "devids", VIRTIO_INPUT_CFG_ID_DEVIDS, 0, 8, "\x06\x00" },
	{ "prop bits", VIRTIO_INPUT_CFG_PROP_BITS, 0, 0, NULL },
	{ "ev bits EV_SYN", VIRTIO_INPUT_CFG_EV_BITS, 0, 0, NULL },
	{ "ev bits EV_KEY", VIRTIO_INPUT_CFG_EV_BITS, 1, 15, NULL },
	{ "ev bits EV_REL", VIRTIO_INPUT_CFG_EV_BITS, 2, 0, NULL },
	{ "ev bits EV_ABS", VIRTIO_INPUT_CFG_EV_BITS, 3, 0, NULL },
	{ "ev bits EV_LED", VIRTIO_INPUT_CFG_EV_BITS, 0x11, 0, NULL },
	{ "abs info X", VIRTIO_INPUT_CFG_ABS_INFO, 0, 0, NULL },
	{ "unknown select", 0x7f, 0, 0, NULL },
	{ "select 0xff", 0xff, 0xff, 0, NULL },
};

static void test_config(void)
{
	unsigned int r, i;

	CHECK_EQ(rd(REG_DEVICE_ID), VIRTIO_ID_INPUT);
	/* Served in the vCPU thread: no ioeventfd for either queue. */
	CHECK_EQ(nr_ioev, 0);
	for (r = 0; r < sizeof(cfg_rows) / sizeof(cfg_rows[0]); r++) {
		const struct cfg_row *row = &cfg_rows[r];
		int fails = test_fail_count;

		cfg_select(row->select, row->subsel);
		CHECK_EQ(cfg8(0), row->select);
		CHECK_EQ(cfg8(1), row->subsel);
		CHECK_EQ(cfg8(VIRTIO_INPUT_CFG_OFF_SIZE), row->size);
		for (i = 0; row->payload && row->payload[i]; i++)
			CHECK_EQ(cfg8(8 + i), (uint8_t)row->payload[i]);
		/* Nothing past the size (a stale answer would show). */
		for (i = row->size; i < VIRTIO_INPUT_CFG_U_SIZE; i++)
			if (cfg8(8 + i))
				break;
		CHECK_EQ(i, VIRTIO_INPUT_CFG_U_SIZE);
		if (test_fail_count != fails)
			fprintf(stderr, "  in row: %s\n", row->name);
	}
	/* The key bitmap: exactly Ctrl, Alt, Delete and Power. */
	cfg_select(VIRTIO_INPUT_CFG_EV_BITS, VIRTIO_INPUT_EV_KEY);
	for (i = 0; i < 15 * 8; i++) {
		bool set = cfg8(8 + i / 8) & (1u << (i % 8));
		bool want = i == 29 || i == 56 || i == 111 || i == 116;

		if (set != want)
			fprintf(stderr, "  key %u: %d\n", i, set);
		CHECK_EQ(set, want);
	}
	/* The size byte and beyond are the device's: writes change nothing;
	 * reads past the space read 0. */
	{
		uint8_t b[4] = { 9, 9, 9, 9 };

		virtio_mmio_access(&t, REG_CONFIG + 2, b, 1, true);
		virtio_mmio_access(&t, REG_CONFIG + 8, b, 4, true);
		CHECK_EQ(cfg8(2), 15);
		CHECK_EQ(cfg8(8), 0);
		virtio_mmio_access(&t, REG_CONFIG + VIRTIO_INPUT_CFG_SIZE - 2,
				   b, 4, false);
		CHECK_EQ(le_get(b, 4), 0);
		virtio_mmio_access(&t, REG_CONFIG + 0x800, b, 4, false);
		CHECK_EQ(le_get(b, 4), 0);
	}
}

/* No driver yet: refused, nothing queued. */
static void test_no_driver(void)
{
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), -ENODEV);
	CHECK_EQ(kbd.nr_pending, 0);
}

/* §5.8.6.1: buffers first, then the key: 8 events, one interrupt. */
static void test_delivery(void)
{
	unsigned int k;

	driver_setup();
	for (k = 0; k < 8; k++)
		add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	CHECK_EQ(used_idx(0), 8);
	for (k = 0; k < 8; k++)
		check_event(k);
	CHECK_EQ(irqs(), 1);
	CHECK_EQ(kbd.nr_pending, 0);
}

/* No buffers: the events wait, and go out as buffers come (kick). */
static void test_queued(void)
{
	unsigned int k;

	driver_setup();
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(kbd.nr_pending, 8);
	CHECK_EQ(irqs(), 0);
	for (k = 0; k < 3; k++)
		add_buf(0, 8, W);
	CHECK_EQ(used_idx(0), 0); /* not before the notification */
	wr(REG_QUEUE_NOTIFY, 0);
	CHECK_EQ(used_idx(0), 3);
	CHECK_EQ(kbd.nr_pending, 5);
	CHECK_EQ(irqs(), 1);
	for (k = 0; k < 3; k++)
		check_event(k);
	/* An event split over two writable descriptors (4 + 4 bytes). */
	desc_set(0, 3, BUF(0, 3), 4, W | NEXT, 4);
	desc_set(0, 4, BUF(0, 3) + 4, 4, W, 0);
	avail_add(0, 3);
	next_desc[0] = 5;
	for (k = 0; k < 4; k++)
		add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	for (k = 3; k < 8; k++)
		check_event(k);
	CHECK_EQ(kbd.nr_pending, 0);
	CHECK_EQ(irqs(), 1);
}

/* More than VIRTIO_INPUT_PENDING events: the oldest go first. */
static void test_overflow(void)
{
	struct virtio_input_stats st0, st;
	unsigned int k;

	driver_setup();
	virtio_input_get_stats(&kbd, &st0);
	for (k = 0; k < 10; k++)
		CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	CHECK_EQ(kbd.nr_pending, VIRTIO_INPUT_PENDING);
	virtio_input_get_stats(&kbd, &st);
	CHECK_EQ(st.events_dropped - st0.events_dropped, 80 - 64);
	for (k = 0; k < QSZ; k++)
		add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	/* 16 dropped: the first kept is event 16, cad[0]. */
	for (k = 0; k < QSZ; k++)
		check_event(16 + k);
	CHECK_EQ(kbd.nr_pending, VIRTIO_INPUT_PENDING - QSZ);
}

/* §2.4: a reset forgets the queued events; a new driver gets none. */
static void test_reset_forgets(void)
{
	struct virtio_input_stats st0, st;
	unsigned int k;

	driver_setup();
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	virtio_input_get_stats(&kbd, &st0);
	wr(REG_STATUS, 0);
	CHECK_EQ(kbd.nr_pending, 0);
	virtio_input_get_stats(&kbd, &st);
	CHECK_EQ(st.events_dropped - st0.events_dropped, 8);
	/* While reset: accepted (a driver was there), dropped at the next
	 * DRIVER_OK. */
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	driver_setup();
	for (k = 0; k < 4; k++)
		add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(kbd.nr_pending, 0);
}

/* A pause keeps the events; the resume delivers them. */
static void test_pause(void)
{
	unsigned int k;

	driver_setup();
	for (k = 0; k < 8; k++)
		add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	virtio_dev_pause(&kbd.vdev);
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(kbd.nr_pending, 8);
	CHECK_EQ(virtio_dev_resume(&kbd.vdev), 0);
	CHECK_EQ(used_idx(0), 8);
	for (k = 0; k < 8; k++)
		check_event(k);
	CHECK_EQ(irqs(), 1);
}

/* §5.8.6.2: statusq buffers go back unread, with 0 bytes written. */
static void test_statusq(void)
{
	struct virtio_input_stats st0, st;
	uint32_t id, len;

	driver_setup();
	virtio_input_get_stats(&kbd, &st0);
	add_buf(1, 8, 0);
	add_buf(1, 8, 0);
	wr(REG_QUEUE_NOTIFY, 1);
	CHECK(used_next(1, &id, &len));
	CHECK_EQ(len, 0);
	CHECK(used_next(1, &id, &len));
	CHECK(!used_next(1, &id, &len));
	virtio_input_get_stats(&kbd, &st);
	CHECK_EQ(st.status_msgs - st0.status_msgs, 2);
	CHECK_EQ(irqs(), 1);
	/* A kick of a queue that does not exist reaches nothing. */
	wr(REG_QUEUE_NOTIFY, 2);
	wr(REG_QUEUE_NOTIFY, 0xffffffff);
	CHECK_EQ(used_idx(0), 0);
}

/*
 * Hostile eventq elements, each failed alone with 0 bytes and the event
 * kept for the next good buffer: 7 bytes, device-readable, a buffer
 * outside guest RAM, a zero-length one, a chain looping on itself.
 */
static void test_hostile(void)
{
	struct virtio_input_stats st0, st;
	uint32_t id, len;
	unsigned int k;

	driver_setup();
	virtio_input_get_stats(&kbd, &st0);
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	add_buf(0, 7, W);
	add_buf(0, 8, 0);
	desc_set(0, 2, OUTSIDE_GPA, 8, W, 0);
	avail_add(0, 2);
	desc_set(0, 3, BUF(0, 3), 0, W, 0);
	avail_add(0, 3);
	desc_set(0, 4, BUF(0, 4), 8, W | NEXT, 4);
	avail_add(0, 4);
	next_desc[0] = 5;
	add_buf(0, 8, W);
	wr(REG_QUEUE_NOTIFY, 0);
	for (k = 0; k < 5; k++) {
		CHECK(used_next(0, &id, &len));
		CHECK_EQ(id, k);
		CHECK_EQ(len, 0);
	}
	check_event(0);
	virtio_input_get_stats(&kbd, &st);
	CHECK_EQ(st.bad_bufs - st0.bad_bufs, 5);
	CHECK_EQ(st.events_sent - st0.events_sent, 1);
	CHECK_EQ(kbd.nr_pending, 7);
	CHECK(!(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET));
	/* A runaway avail index breaks the ring: NEEDS_RESET, no event
	 * lost to it, and the VMM goes on. */
	le_put(host(RING_GPA(0) + AVAIL_OFF + 2), 2, drv_avail[0] + 100);
	wr(REG_QUEUE_NOTIFY, 0);
	CHECK(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK_EQ(kbd.nr_pending, 7);
	CHECK_EQ(virtio_input_ctrl_alt_del(&kbd), 0);
	CHECK_EQ(kbd.nr_pending, 15);
}

int main(void)
{
	struct virtio_host host = { &fake_host_ops, NULL };

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram)) {
		fprintf(stderr, "cannot set up guest RAM\n");
		return 1;
	}
	CHECK_EQ(virtio_input_init(&kbd, &gm, "kbd"), 0);
	CHECK_EQ(virtio_mmio_init(&t, &kbd.vdev, &host, BASE, GSI), 0);
	test_config();
	test_no_driver();
	test_delivery();
	test_queued();
	test_overflow();
	test_reset_forgets();
	test_pause();
	test_statusq();
	test_hostile();
	virtio_mmio_destroy(&t);
	virtio_input_destroy(&kbd);
	free(ram);
	return test_done();
}
