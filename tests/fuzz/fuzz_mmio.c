// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the virtio-mmio transport (src/virtio/mmio.c) and
 * the device core behind it (src/virtio/virtio.c: status, feature
 * negotiation, reset, queue start): the input is a sequence of register
 * accesses of any width and offset in the 4 KiB window, mixed with what
 * the device side does on its own (NEEDS_RESET, interrupts, a failing
 * start). Each access is checked against the register rules: fixed
 * registers read their values, odd accesses below the config space read 0
 * and change nothing, negotiated features and queue registers freeze at
 * FEATURES_OK / DRIVER_OK, status 0 resets everything, kicks reach exactly
 * the queue named, InterruptACK clears exactly its bits. abort() on any
 * broken promise.
 *
 * Input: [0] queues (1-8), [1] QueueNumMax choice, [2] device feature
 * choice, then FUZZ_OP_SIZE-byte operations (see fuzz_op()).
 */
#include "virtio/mmio.h"

#include <unistd.h>

#include "fuzz_virtio_fakes.h"
#include "util/evloop.h"
#include "util/le.h"

#define FUZZ_BASE 0xf0000000ULL
#define FUZZ_GSI 16
#define FUZZ_HEADER 3
#define FUZZ_OP_SIZE 8
#define FUZZ_MAX_OPS 2000
#define FUZZ_CANARY 0x5a

/* Registers (virtio 1.2 §4.2.2). */
#define MMIO_MAGIC 0x000
#define MMIO_VERSION 0x004
#define MMIO_DEVICE_ID 0x008
#define MMIO_VENDOR_ID 0x00c
#define MMIO_QUEUE_NUM_MAX 0x034
#define MMIO_QUEUE_SEL 0x030
#define MMIO_QUEUE_NOTIFY 0x050
#define MMIO_INTERRUPT_STATUS 0x060
#define MMIO_INTERRUPT_ACK 0x064
#define MMIO_STATUS 0x070
#define MMIO_CONFIG 0x100

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct virtio_dev vdev;
static struct virtio_mmio mmio;

/* What an access may or may not change. */
struct fuzz_snap {
	uint8_t status;
	uint64_t features;
	unsigned int isr;
	uint32_t dsel, fsel, qsel;
	struct {
		uint16_t size;
		bool enabled;
		uint64_t desc, avail, used;
	} q[VIRTIO_MAX_QUEUES];
	uint8_t cfg[FUZZ_FAKE_CFG];
};

static void fuzz_snap(struct fuzz_snap *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->status = vdev.status;
	s->features = vdev.driver_features;
	s->isr = atomic_load(&vdev.isr);
	s->dsel = mmio.device_features_sel;
	s->fsel = mmio.driver_features_sel;
	s->qsel = mmio.queue_sel;
	for (i = 0; i < vdev.num_queues; i++) {
		const struct virtio_queue *q = &vdev.queues[i];

		s->q[i].size = q->size;
		s->q[i].enabled = q->enabled;
		s->q[i].desc = q->desc;
		s->q[i].avail = q->avail;
		s->q[i].used = q->used;
	}
	memcpy(s->cfg, fuzz_fd.cfg, sizeof(s->cfg));
}

/* Kicks seen on each queue since the last call (0 or 1 per access). */
static uint64_t fuzz_kicks(unsigned int i)
{
	return evfd_drain(vdev.queues[i].kick_fd);
}

static void fuzz_check_reg_read(uint64_t off, uint32_t v,
				const struct fuzz_snap *b)
{
	switch (off) {
	case MMIO_MAGIC:
		if (v != VIRTIO_MMIO_MAGIC)
			abort();
		break;
	case MMIO_VERSION:
		if (v != 2)
			abort();
		break;
	case MMIO_DEVICE_ID:
		if (v != fuzz_fake_dev_ops.device_id)
			abort();
		break;
	case MMIO_VENDOR_ID:
		if (v != VIRTIO_MMIO_VENDOR)
			abort();
		break;
	case MMIO_QUEUE_NUM_MAX:
		if (v != (b->qsel < vdev.num_queues ?
			  vdev.queues[b->qsel].max_size : 0))
			abort();
		break;
	case MMIO_INTERRUPT_STATUS:
		if (v != b->isr)
			abort();
		break;
	case MMIO_STATUS:
		if ((v & ~VIRTIO_STATUS_NEEDS_RESET) != b->status ||
		    !(v & VIRTIO_STATUS_NEEDS_RESET) !=
			    !atomic_load(&vdev.needs_reset))
			abort();
		break;
	default:
		break;
	}
}

/* What a 32-bit register write may have done. */
static void fuzz_check_reg_write(uint64_t off, uint32_t v,
				 const struct fuzz_snap *b,
				 const struct fuzz_snap *a)
{
	unsigned int i;

	if (off == MMIO_STATUS && !(uint8_t)v) { /* the low byte counts */
		/* Reset (§2.4): nothing negotiated or configured survives. */
		if (a->status || a->features || a->isr || vdev.running ||
		    atomic_load(&vdev.needs_reset))
			abort();
		for (i = 0; i < vdev.num_queues; i++)
			if (a->q[i].enabled || a->q[i].desc || a->q[i].avail ||
			    a->q[i].used ||
			    a->q[i].size != vdev.queues[i].max_size)
				abort();
		return;
	}
	if (off == MMIO_INTERRUPT_ACK && a->isr != (b->isr & ~v))
		abort();
	/* A DRIVER_OK whose start fails raises the config interrupt. */
	if (off != MMIO_INTERRUPT_ACK && a->isr != b->isr &&
	    !(off == MMIO_STATUS && atomic_load(&vdev.needs_reset) &&
	      a->isr == (b->isr | VIRTIO_ISR_CONFIG)))
		abort();
	if (off == MMIO_STATUS && (a->status & b->status) != b->status)
		abort(); /* bits are only ever added */
	for (i = 0; i < vdev.num_queues; i++) {
		uint64_t k = fuzz_kicks(i);

		if (k != (off == MMIO_QUEUE_NOTIFY && v == i))
			abort();
	}
}

/* Frozen state: features after FEATURES_OK, queues after DRIVER_OK. */
static void fuzz_check_frozen(const struct fuzz_snap *b,
			      const struct fuzz_snap *a)
{
	unsigned int i;

	if (!a->status)
		return; /* a reset */
	if ((b->status & VIRTIO_STATUS_FEATURES_OK) &&
	    a->features != b->features)
		abort();
	for (i = 0; i < vdev.num_queues; i++) {
		bool frozen = (b->status & VIRTIO_STATUS_DRIVER_OK) ||
			      b->q[i].enabled;

		if (frozen && (a->q[i].size != b->q[i].size ||
			       a->q[i].desc != b->q[i].desc ||
			       a->q[i].avail != b->q[i].avail ||
			       a->q[i].used != b->q[i].used))
			abort();
		if ((b->status & VIRTIO_STATUS_DRIVER_OK) &&
		    a->q[i].enabled != b->q[i].enabled)
			abort();
	}
}

static void fuzz_access(uint64_t off, unsigned int len, bool is_write,
			uint64_t value)
{
	struct fuzz_snap b, a;
	uint8_t buf[16];
	unsigned int i;
	bool reg32 = off < MMIO_CONFIG && len == 4 && !(off & 3);

	if (off >= VIRTIO_MMIO_WINDOW || len > VIRTIO_MMIO_WINDOW - off)
		return; /* the bus never delivers it */
	fuzz_snap(&b);
	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write)
		le_put(buf, len, value);
	else
		memset(buf, 0xff, len);
	virtio_mmio_access(&mmio, off, buf, len, is_write);
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort();
	fuzz_snap(&a);
	fuzz_check_core(&vdev);
	if (!is_write) {
		if (memcmp(&a, &b, sizeof(a)))
			abort(); /* reads change nothing (ISR reads don't clear) */
		if (reg32)
			fuzz_check_reg_read(off, (uint32_t)le_get(buf, 4), &b);
		else if (off < MMIO_CONFIG && le_get(buf, len))
			abort(); /* odd accesses read 0 */
		return;
	}
	if (!reg32) {
		/* Odd register accesses are ignored; config writes reach
		 * only the device's writable bytes. */
		memcpy(b.cfg, a.cfg, 2);
		if (memcmp(&a, &b, sizeof(a)))
			abort();
		return;
	}
	fuzz_check_reg_write(off, (uint32_t)value, &b, &a);
	fuzz_check_frozen(&b, &a);
}

/* Things the device side does by itself. */
static void fuzz_device_event(unsigned int what, unsigned int arg)
{
	unsigned int isr = atomic_load(&vdev.isr);
	bool ok = vdev.status & VIRTIO_STATUS_DRIVER_OK;
	bool was = atomic_load(&vdev.needs_reset);

	switch (what % 4) {
	case 0:
		virtio_dev_broken(&vdev, "fuzz");
		if (!atomic_load(&vdev.needs_reset) ||
		    (!was && ok && !(atomic_load(&vdev.isr) & VIRTIO_ISR_CONFIG)))
			abort();
		break;
	case 1:
		evfd_drain(mmio.irq_fd); /* earlier config interrupts */
		virtio_queue_notify(&vdev.queues[arg % vdev.num_queues]);
		/* An unacknowledged used-buffer bit covers this one too
		 * (mmio_notify(), coalescing): no new interrupt then. */
		if (atomic_load(&vdev.isr) != (isr | VIRTIO_ISR_QUEUE) ||
		    !evfd_drain(mmio.irq_fd) !=
		    (mmio.coalesce && (isr & VIRTIO_ISR_QUEUE)))
			abort();
		break;
	case 2:
		virtio_config_changed(&vdev);
		if (!(atomic_load(&vdev.isr) & VIRTIO_ISR_CONFIG))
			abort();
		break;
	default:
		fuzz_fd.fail_start = true;
		break;
	}
	fuzz_check_core(&vdev);
}

/*
 * One operation: [0] kind, [1..2] le16 offset, [3..7] value (le32 + 1).
 *	kind bits 0-1: 0 32-bit register, 1 any width and offset, 2 config
 *	space, 3 a device-side event; bit 2: write; bits 3-4: width of 1.
 */
static void fuzz_op(const uint8_t *op)
{
	uint16_t off = (uint16_t)le_get(op + 1, 2);
	uint64_t value = le_get(op + 3, 4);
	unsigned int len = 1u << (op[0] >> 3 & 3);
	bool is_write = op[0] & 4;

	switch (op[0] & 3) {
	case 0:
		fuzz_access((off % MMIO_CONFIG) & ~3u, 4, is_write, value);
		break;
	case 1:
		fuzz_access(off % VIRTIO_MMIO_WINDOW, len, is_write,
			    value | (uint64_t)op[7] << 32);
		break;
	case 2:
		fuzz_access(MMIO_CONFIG + off % 16, len, is_write, value);
		break;
	default:
		fuzz_device_event(op[1], op[2]);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t features[4] = {
		0, 1ULL << 1, 1ULL << VIRTIO_F_EVENT_IDX,
		1ULL << VIRTIO_F_EVENT_IDX | 1ULL << VIRTIO_F_INDIRECT_DESC |
			1ULL << 9,
	};
	struct virtio_host host = { &fuzz_fake_host_ops, &fuzz_fh };
	size_t i, n;

	if (size < FUZZ_HEADER || fuzz_fake_ram())
		return 0;
	fuzz_fakes_reset();
	if (virtio_dev_init(&vdev, &fuzz_fake_dev_ops, &fuzz_fd, &fuzz_vgm,
			    1 + data[0] % 8, (uint16_t)(2u << (data[1] % 10)),
			    features[data[2] % 4], "fuzz"))
		abort();
	memset(&mmio, 0, sizeof(mmio));
	if (virtio_mmio_init(&mmio, &vdev, &host, FUZZ_BASE, FUZZ_GSI))
		abort();
	/* One datamatch ioeventfd per queue at QueueNotify, one irqfd. */
	if (fuzz_fh.nr_live != vdev.num_queues || fuzz_fh.nr_irqfd != 1)
		abort();
	n = (size - FUZZ_HEADER) / FUZZ_OP_SIZE;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + FUZZ_HEADER + i * FUZZ_OP_SIZE);
	virtio_mmio_destroy(&mmio);
	if (fuzz_fh.nr_live || fuzz_fh.nr_irqfd || vdev.running)
		abort(); /* everything registered was taken down */
	virtio_dev_destroy(&vdev);
	return 0;
}
