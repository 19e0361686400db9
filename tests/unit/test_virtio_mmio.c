// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-mmio version 2 registers (virtio 1.2 §4.2.2) against a fake device
 * and fake hypervisor services: identification, register widths, and the
 * queue size rules of §4.2.2.2 (QueueNum must be a power of two no larger
 * than QueueNumMax; otherwise QueueReady is refused and the device reports
 * NEEDS_RESET), queue registers frozen once ready; used-buffer interrupts
 * coalesced while InterruptStatus is unacknowledged.
 */
#include <errno.h>

#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/mmio.h"

#define BASE 0xd0000000ULL
#define GSI 5
#define NQ 2
#define QMAX 128
#define MEM_SIZE 0x100000

#define REG_MAGIC 0x000
#define REG_VERSION 0x004
#define REG_DEVICE_ID 0x008
#define REG_QUEUE_SEL 0x030
#define REG_QUEUE_NUM_MAX 0x034
#define REG_QUEUE_NUM 0x038
#define REG_QUEUE_READY 0x044
#define REG_INTERRUPT_STATUS 0x060
#define REG_INTERRUPT_ACK 0x064
#define REG_STATUS 0x070
#define REG_QUEUE_DESC_LOW 0x080
#define REG_QUEUE_DRIVER_LOW 0x090
#define REG_QUEUE_DEVICE_LOW 0x0a0

/* ---- fake hypervisor services: count registrations ---- */

static int nr_ioev, nr_irqfd;
/* InterruptACK in the kernel: registered now, and with what match. */
static int ack_ioev;
static bool ack_match;
static uint64_t ack_data;

static int fake_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			  bool pio, bool match, uint64_t data, int fd,
			  bool assign)
{
	(void)opaque, (void)len, (void)pio, (void)fd;
	nr_ioev += assign ? 1 : -1;
	if (addr == BASE + REG_INTERRUPT_ACK) {
		ack_ioev += assign ? 1 : -1;
		ack_match = match;
		ack_data = data;
	}
	return 0;
}

static int fake_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	(void)opaque, (void)fd, (void)gsi;
	nr_irqfd += assign ? 1 : -1;
	return 0;
}

static const struct virtio_host_ops fake_host_ops = {
	.ioeventfd = fake_ioeventfd,
	.irqfd = fake_irqfd,
};

/* ---- fake device: no config space, counts starts ---- */

static int starts, stops;

static void fake_config(struct virtio_dev *vdev, uint64_t off, uint8_t *data,
			unsigned int len, bool is_write)
{
	(void)vdev, (void)off;
	if (!is_write)
		memset(data, 0, len);
}

static int fake_start(struct virtio_dev *vdev)
{
	(void)vdev;
	starts++;
	return 0;
}

static void fake_stop(struct virtio_dev *vdev)
{
	(void)vdev;
	stops++;
}

static const struct virtio_dev_ops fake_dev_ops = {
	.name = "fake",
	.device_id = 2,
	.config_access = fake_config,
	.start = fake_start,
	.stop = fake_stop,
};

static struct guest_mem gm;
static struct virtio_dev vdev;
static struct virtio_mmio t;

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

static void setup(void)
{
	static uint8_t mem[MEM_SIZE];
	struct virtio_host host = { &fake_host_ops, NULL };

	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	CHECK_EQ(virtio_dev_init(&vdev, &fake_dev_ops, NULL, &gm, NQ, QMAX, 0,
				 "vmmio"), 0);
	CHECK_EQ(virtio_mmio_init(&t, &vdev, &host, BASE, GSI), 0);
	CHECK_EQ(nr_ioev, NQ);
	CHECK_EQ(nr_irqfd, 1);
}

/* §4.2.2: magic, version 2, device ID; narrow accesses read 0. */
static void test_ids(void)
{
	uint8_t b[2] = { 0xff, 0xff };

	CHECK_EQ(rd(REG_MAGIC), VIRTIO_MMIO_MAGIC);
	CHECK_EQ(rd(REG_VERSION), 2);
	CHECK_EQ(rd(REG_DEVICE_ID), 2);
	virtio_mmio_access(&t, REG_MAGIC, b, 2, false);
	CHECK_EQ(le_get(b, 2), 0);
	CHECK_EQ(rd(REG_MAGIC + 1), 0);
}

static void driver_begin(void)
{
	wr(REG_STATUS, 0);
	wr(REG_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
}

/* Program queue @q with @num and try to make it ready. */
static uint32_t try_ready(unsigned int q, uint32_t num)
{
	wr(REG_QUEUE_SEL, q);
	wr(REG_QUEUE_NUM, num);
	wr(REG_QUEUE_DESC_LOW, 0x10000);
	wr(REG_QUEUE_DRIVER_LOW, 0x20000);
	wr(REG_QUEUE_DEVICE_LOW, 0x30000);
	wr(REG_QUEUE_READY, 1);
	return rd(REG_QUEUE_READY);
}

/*
 * §4.2.2.2: the driver MUST write QueueNum <= QueueNumMax; a size the
 * device did not offer (above the maximum, 0, not a power of two, or
 * wider than 16 bits) never makes the queue ready and sets NEEDS_RESET.
 */
static void test_queue_size_refused(void)
{
	static const uint32_t bad[] = {
		QMAX * 2, 1024, 0x8000, 0, 3, QMAX - 1, 0x10000 + QMAX,
		0xffffffff,
	};
	unsigned int i;
	uint64_t broken;

	wr(REG_QUEUE_SEL, 0);
	CHECK_EQ(rd(REG_QUEUE_NUM_MAX), QMAX);
	wr(REG_QUEUE_SEL, NQ);
	CHECK_EQ(rd(REG_QUEUE_NUM_MAX), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		driver_begin();
		broken = atomic_load(&vdev.broken_count);
		CHECK_EQ(try_ready(0, bad[i]), 0);
		CHECK(!vdev.queues[0].enabled);
		CHECK(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
		CHECK_EQ(atomic_load(&vdev.broken_count), broken + 1);
		if (vdev.queues[0].enabled || !(rd(REG_STATUS) &
						VIRTIO_STATUS_NEEDS_RESET))
			fprintf(stderr, "  QueueNum %#x accepted\n", bad[i]);
	}
	/* Reset clears NEEDS_RESET and the stored size. */
	wr(REG_STATUS, 0);
	CHECK_EQ(rd(REG_STATUS), 0);
	CHECK_EQ(vdev.queues[0].size, QMAX);
}

/* Every power of two up to the maximum is fine; then it is frozen. */
static void test_queue_size_ok(void)
{
	uint32_t n;

	for (n = 1; n <= QMAX; n <<= 1) {
		driver_begin();
		CHECK_EQ(try_ready(1, n), 1);
		CHECK_EQ(vdev.queues[1].size, n);
		CHECK_EQ(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET, 0);
	}
	/* Ready: QueueNum no longer changes (§4.2.2.2). */
	wr(REG_QUEUE_NUM, QMAX * 4);
	CHECK_EQ(vdev.queues[1].size, QMAX);
	wr(REG_QUEUE_READY, 1);
	CHECK_EQ(rd(REG_QUEUE_READY), 1);
	CHECK_EQ(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET, 0);
	/* ... and the device starts on DRIVER_OK with the size chosen. */
	vdev.driver_features = 1ULL << VIRTIO_F_VERSION_1;
	wr(REG_STATUS, rd(REG_STATUS) | VIRTIO_STATUS_FEATURES_OK);
	wr(REG_STATUS, rd(REG_STATUS) | VIRTIO_STATUS_DRIVER_OK);
	CHECK(rd(REG_STATUS) & VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(starts, 1);
	CHECK_EQ(vdev.queues[1].vq.size, QMAX);
	wr(REG_STATUS, 0);
	CHECK_EQ(stops, 1);
}

/* After a refused size DRIVER_OK does not stick; nothing starts. */
static void test_queue_size_not_started(void)
{
	driver_begin();
	CHECK_EQ(try_ready(0, 1024), 0);
	vdev.driver_features = 1ULL << VIRTIO_F_VERSION_1;
	wr(REG_STATUS, rd(REG_STATUS) | VIRTIO_STATUS_FEATURES_OK);
	wr(REG_STATUS, rd(REG_STATUS) | VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(rd(REG_STATUS) & VIRTIO_STATUS_DRIVER_OK, 0);
	CHECK(!vdev.queues[0].vq.ready);
	CHECK(rd(REG_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK_EQ(starts, 1);
	wr(REG_STATUS, 0);
	CHECK_EQ(stops, 1);
}

/* Interrupts raised on the irqfd since the last call. */
static uint64_t irqs(void)
{
	return evfd_drain(t.irq_fd);
}

static uint64_t coalesced(unsigned int q)
{
	return atomic_load(&vdev.queues[q].stats.coalesced);
}

/*
 * While the used-buffer bit of InterruptStatus is set, the interrupt that
 * set it is unacknowledged and the driver has yet to read the used rings
 * (it reads them after its InterruptACK write): further notifications, of
 * any queue, raise no new interrupt. Once acknowledged, the next one does.
 * A config change still interrupts; irq-coalesce=off raises every one.
 */
static void test_irq_coalesce(void)
{
	uint64_t c0 = coalesced(0), c1 = coalesced(1);
	unsigned int i;

	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	irqs();
	virtio_queue_notify(&vdev.queues[0]);
	CHECK_EQ(irqs(), 1);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), VIRTIO_ISR_QUEUE);
	for (i = 0; i < 5; i++)
		virtio_queue_notify(&vdev.queues[i % NQ]);
	CHECK_EQ(irqs(), 0);
	CHECK_EQ(coalesced(0) - c0, 3);
	CHECK_EQ(coalesced(1) - c1, 2);
	/* Reading the status acknowledges nothing. */
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), VIRTIO_ISR_QUEUE);
	virtio_queue_notify(&vdev.queues[1]);
	CHECK_EQ(irqs(), 0);
	/* A pending used-buffer bit does not hide a config change. */
	virtio_config_changed(&vdev);
	CHECK_EQ(irqs(), 1);
	/* Acknowledging only the config bit leaves the queue's pending. */
	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_CONFIG);
	virtio_queue_notify(&vdev.queues[0]);
	CHECK_EQ(irqs(), 0);
	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), 0);
	virtio_queue_notify(&vdev.queues[1]);
	CHECK_EQ(irqs(), 1);
	/* A device reset clears the bit: the next notification interrupts. */
	wr(REG_STATUS, 0);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), 0);
	virtio_queue_notify(&vdev.queues[0]);
	CHECK_EQ(irqs(), 1);
	/* irq-coalesce=off: one interrupt per notification. */
	t.coalesce = false;
	c0 = coalesced(0);
	for (i = 0; i < 4; i++)
		virtio_queue_notify(&vdev.queues[0]);
	CHECK_EQ(irqs(), 4);
	CHECK_EQ(coalesced(0), c0);
	t.coalesce = true;
	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	irqs();
}

/*
 * Queues served by an outside signaller (engine=vhost): InterruptStatus
 * always shows the used-buffer bit, and an ACK of that bit alone goes to
 * KVM (an ioeventfd matching 1), so the guest's handler exits once, not
 * twice. A config change is still acknowledged in the VMM; the last queue
 * leaving direct takes the ACK back before it raises its own interrupt.
 */
static void test_direct_ack(void)
{
	struct virtio_queue *q0 = &vdev.queues[0], *q1 = &vdev.queues[1];

	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	irqs();
	CHECK_EQ(ack_ioev, 0);
	vdev.tops->direct_irq(&vdev, q0, true);
	vdev.tops->direct_irq(&vdev, q1, true);
	CHECK_EQ(ack_ioev, 1);
	CHECK(ack_match);
	CHECK_EQ(ack_data, VIRTIO_ISR_QUEUE);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), VIRTIO_ISR_QUEUE);
	virtio_config_changed(&vdev);
	CHECK_EQ(irqs(), 1);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS),
		 VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), VIRTIO_ISR_QUEUE);
	vdev.tops->direct_irq(&vdev, q1, false);
	CHECK_EQ(ack_ioev, 1);
	vdev.tops->direct_irq(&vdev, q0, false);
	CHECK_EQ(ack_ioev, 0);
	/* The look the last one asks for, acknowledged in the VMM again. */
	CHECK_EQ(irqs(), 1);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), VIRTIO_ISR_QUEUE);
	wr(REG_INTERRUPT_ACK, VIRTIO_ISR_QUEUE);
	CHECK_EQ(rd(REG_INTERRUPT_STATUS), 0);
	/* And a reset takes it back too. */
	vdev.tops->direct_irq(&vdev, q0, true);
	CHECK_EQ(ack_ioev, 1);
	virtio_mmio_destroy(&t);
	CHECK_EQ(ack_ioev, 0);
}

int main(void)
{
	setup();
	test_ids();
	test_queue_size_refused();
	test_queue_size_ok();
	test_queue_size_not_started();
	test_irq_coalesce();
	test_direct_ack();
	CHECK_EQ(nr_ioev, 0);
	CHECK_EQ(nr_irqfd, 0);
	virtio_dev_destroy(&vdev);
	return test_done();
}
