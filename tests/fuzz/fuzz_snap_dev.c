// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the per-device loaders of a snapshot's DEVICE
 * sections: virtio_dev_load() (src/virtio/virtio_snap.c) on virtio-mmio
 * (mmio_load()) and on virtio-pci (virtio_pci_load(), MSI-X), with the
 * fake device of fuzz_virtio_fakes.h given snapshot hooks here, and
 * serial_load() and i8042_load(). Whoever can write a state file can fix
 * its CRC, so every payload byte is hostile. To get past the early checks
 * a patch mode saves a device driven through its registers (DRIVER_OK,
 * rings in the fake RAM, MSI-X, pending interrupts, ring progress), pauses
 * it, patches the saved bytes where the input says and loads the result
 * into a second, fresh device.
 *
 * Input: [0] target, bits 0-1: 0 virtio-mmio, 1 virtio-pci, 2 UART,
 * 3 i8042. UART, i8042: [1..] the payload. virtio: [1] queues (1-8),
 * [2] QueueNumMax choice, [3] device feature choice; bit 2 of [0] clear:
 * [4..] the payload; set: [4] plan, [5] mask of queues enabled, [6] ring
 * progress (see drive()), then FUZZ_PATCH_SIZE-byte patches of the saved
 * state (see patch_apply()).
 *
 * The model (abort() when broken):
 * - a refused virtio load has a message and leaves the core reset
 *   (status 0, nothing negotiated, no ISR bit, not paused, every queue
 *   disabled at its reset size, addresses and vector, no ring), started
 *   nothing and signalled nothing (no kick, no interrupt);
 * - an accepted one holds exactly the payload's fields (as the load
 *   masks them), a state a driver could have reached (fuzz_check_core()),
 *   each enabled queue a power of two up to QueueNumMax and, if it ran, a
 *   ready ring inside guest RAM; pci: config space is the device's
 *   read-only bytes and the payload's writable ones, vectors are valid or
 *   NO_VECTOR, exactly the pending vectors now deliverable fired;
 * - saved again, an accepted state loads into a fresh device and saves
 *   to the same bytes; an unpatched save loads back byte for byte;
 * - resume starts exactly a device that ran; then register reads, kicks,
 *   interrupts and a reset work, and a driver brings it to DRIVER_OK;
 * - UART, i8042: a state of the right shape is accepted, any other
 *   refused and nothing changes; FIFO counts stay within their sizes, the
 *   registers keep only the bits the device has, the guest reads the
 *   bytes back in order, the interrupt line follows the state;
 * - everything is torn down per input: no ioeventfd, irqfd or fd left.
 */
#include "devices/i8042.h"
#include "devices/serial.h"
#include "fuzz_pci_common.h"
#include "snapshot/snap.h"
#include "virtio/mmio.h"

#include <dirent.h>
#include <stdio.h>

#define FUZZ_MMIO_BASE 0xd0000000ULL
#define FUZZ_MMIO_GSI 5
#define FUZZ_BAR_ADDR FUZZ_MMIO32_BASE /* where the driver puts BAR 0 */
#define FUZZ_VIRTIO_HEADER 4
#define FUZZ_PLAN_HEADER 3
#define FUZZ_PATCH_SIZE 4
#define FUZZ_MAX_PATCHES 64
#define FUZZ_ERR_LEN 256
#define FAKE_STATE_VERSION 1

/* The plan of the driver in patch mode (drive()). */
#define PLAN_STAGE 3           /* 0 ACK|DRIVER, 1 FEATURES_OK, 2 DRIVER_OK,
				* 3 DRIVER_OK whose start fails */
#define PLAN_NO_EVENT_IDX 0x04 /* the driver leaves EVENT_IDX out */
#define PLAN_CONFIG 0x08       /* a configuration change */
#define PLAN_NOTIFY 0x10       /* a used-buffer notification on queue 0 */
#define PLAN_MSIX 0x20         /* pci: MSI-X on, a vector each */
#define PLAN_MASK 0x40         /* pci: queue 0's vector masked again */
#define PLAN_BROKEN 0x80       /* the device reports NEEDS_RESET */

/* virtio-mmio registers (virtio 1.2 §4.2.2). */
#define MMIO_DRIVER_FEATURES 0x020
#define MMIO_DRIVER_FEATURES_SEL 0x024
#define MMIO_QUEUE_SEL 0x030
#define MMIO_QUEUE_NUM_MAX 0x034
#define MMIO_QUEUE_NUM 0x038
#define MMIO_QUEUE_READY 0x044
#define MMIO_QUEUE_NOTIFY 0x050
#define MMIO_INTERRUPT_STATUS 0x060
#define MMIO_INTERRUPT_ACK 0x064
#define MMIO_STATUS 0x070
#define MMIO_QUEUE_DESC_LOW 0x080
#define MMIO_QUEUE_DRIVER_LOW 0x090
#define MMIO_QUEUE_DEVICE_LOW 0x0a0
#define MMIO_CONFIG_GENERATION 0x0fc

/* 8250 registers and bits (serial.c keeps its own private). */
#define UART_RBR 0
#define UART_LCR 3
#define UART_LSR 5
#define UART_LCR_DLAB 0x80
#define UART_LSR_DR 0x01
#define UART_LSR_ERRS 0x9e /* OE, PE, FE, BI, RX FIFO error */
#define UART_FCR_KEEP 0xc9 /* enable, DMA mode, RX trigger level */
#define UART_REGS 10
#define FUZZ_GSI_COM1 4
#define FUZZ_GSI_KBD 1
#define KBD_REGS 5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the fake device's own state: a version byte and its config ---- */

static int fake_save(struct virtio_dev *vdev, struct snap_writer *w,
		     char *err, size_t errlen)
{
	struct fuzz_dev *d = vdev->dev;

	(void)err;
	(void)errlen;
	snap_put_u8(w, FAKE_STATE_VERSION);
	snap_put_bytes(w, d->cfg, sizeof(d->cfg));
	return 0;
}

static int fake_load(struct virtio_dev *vdev, struct snap_reader *r,
		     char *err, size_t errlen)
{
	struct fuzz_dev *d = vdev->dev;
	uint8_t v = snap_get_u8(r), cfg[FUZZ_FAKE_CFG];

	snap_get_bytes(r, cfg, sizeof(cfg));
	if (r->bad || v != FAKE_STATE_VERSION) {
		snprintf(err, errlen, "%s: fake state version %u", vdev->name,
			 v);
		return -EINVAL;
	}
	memcpy(d->cfg, cfg, sizeof(cfg));
	return 0;
}

/* fuzz_fake_dev_ops with the hooks virtio_dev_save() wants of a device
 * that ran. */
static const struct virtio_dev_ops snap_dev_ops = {
	.name = "fake",
	.device_id = 2,
	.config_access = fuzz_fake_config,
	.start = fuzz_fake_start,
	.stop = fuzz_fake_stop,
	.save = fake_save,
	.load = fake_load,
};

/* ---- saved states ---- */

typedef void save_fn(void *opaque, struct snap_writer *w);

/* One section's payload from @fn, in a buffer with @room bytes more. */
static uint8_t *save_payload(save_fn *fn, void *opaque, size_t room,
			     size_t *len)
{
	const size_t head = SNAP_HEADER_LEN + SNAP_SECTION_HEADER_LEN;
	struct snap_writer w;
	uint8_t *file, *p;
	size_t n;

	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_DEVICE);
	fn(opaque, &w);
	snap_section_end(&w);
	if (snap_writer_finish(&w, SNAP_ARCH_X86_64, &file, &n) || n < head)
		abort();
	*len = n - head;
	p = malloc(*len + room + 1);
	if (!p)
		abort();
	memcpy(p, file + head, *len);
	free(file);
	return p;
}

static void vdev_saver(void *opaque, struct snap_writer *w)
{
	char err[FUZZ_ERR_LEN];

	if (virtio_dev_save(opaque, w, err, sizeof(err)))
		abort(); /* paused, with save hooks on both sides */
}

static void uart_saver(void *opaque, struct snap_writer *w)
{
	serial_save(opaque, w);
}

static void kbd_saver(void *opaque, struct snap_writer *w)
{
	i8042_save(opaque, w);
}

/* An exact-size copy, so that ASan sees any read past the payload. */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	if (!q)
		abort();
	memcpy(q, p, n);
	return q;
}

static bool same_bytes(const uint8_t *a, size_t alen, const uint8_t *b,
		       size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* File descriptors this process holds. */
static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- a virtio device on either transport ---- */

struct vcfg {
	bool pci;
	unsigned int nq;
	uint16_t max;
	uint64_t features;
};

static struct virtio_dev mdev; /* the virtio-mmio device; pci: fp.vdev */
static struct virtio_mmio mm;

static struct virtio_dev *vdev_up(const struct vcfg *c)
{
	struct virtio_host host = { &fuzz_fake_host_ops, &fuzz_fh };

	if (c->pci) {
		if (fuzz_pci_setup(c->nq, c->max, c->features))
			abort();
		/* The same fake device, with its snapshot hooks. */
		fp.vdev.ops = &snap_dev_ops;
		return &fp.vdev;
	}
	fuzz_fakes_reset();
	memset(&mm, 0, sizeof(mm));
	if (virtio_dev_init(&mdev, &snap_dev_ops, &fuzz_fd, &fuzz_vgm, c->nq,
			    c->max, c->features, "fuzz") ||
	    virtio_mmio_init(&mm, &mdev, &host, FUZZ_MMIO_BASE,
			     FUZZ_MMIO_GSI) ||
	    fuzz_fh.nr_live != c->nq || fuzz_fh.nr_irqfd != 1)
		abort();
	return &mdev;
}

static void vdev_down(const struct vcfg *c)
{
	if (c->pci) {
		fuzz_pci_teardown();
	} else {
		virtio_mmio_destroy(&mm);
		if (fuzz_fh.nr_live || fuzz_fh.nr_irqfd || mdev.running)
			abort();
		virtio_dev_destroy(&mdev);
	}
	if (fuzz_fd.starts != fuzz_fd.stops)
		abort();
}

static uint32_t mmio_rd(uint64_t off)
{
	uint8_t b[4];

	virtio_mmio_access(&mm, off, b, 4, false);
	return (uint32_t)le_get(b, 4);
}

static void mmio_wr(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	le_put(b, 4, v);
	virtio_mmio_access(&mm, off, b, 4, true);
	fuzz_check_core(&mdev);
}

static void pci_cfg_wr(unsigned int reg, unsigned int len, uint64_t v)
{
	fuzz_ecam(PCI_ECAM_OFFSET(0, FUZZ_SLOT, 0, reg), len, true, v);
}

static void pci_common(unsigned int field, unsigned int len, bool w,
		       uint64_t v)
{
	fuzz_mmio_access(FUZZ_BAR_ADDR + VIRTIO_PCI_COMMON_OFF + field, len, w,
			 v);
}

/* Firmware's part: BAR 0 at FUZZ_BAR_ADDR, decoded; MSI-X on or off. */
static void pci_firmware(bool msix)
{
	pci_cfg_wr(PCI_BASE_ADDRESS_0, 4, (uint32_t)FUZZ_BAR_ADDR);
	pci_cfg_wr(PCI_BASE_ADDRESS_0 + 4, 4, 0);
	pci_cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	fuzz_cf8(FUZZ_SLOT, 0, fp.vp.msix_cap + PCI_MSIX_FLAGS, 2, true,
		 msix ? PCI_MSIX_FLAGS_ENABLE : 0);
}

/* MSI-X table entry @v: an address and data, unmasked or not. */
static void pci_vector(unsigned int v, bool masked)
{
	uint64_t e = FUZZ_BAR_ADDR + VIRTIO_PCI_MSIX_TABLE_OFF +
		     PCI_MSIX_ENTRY_SIZE * v;

	fuzz_mmio_access(e, 4, true, 0xfee00000u);
	fuzz_mmio_access(e + 4, 4, true, 0);
	fuzz_mmio_access(e + 8, 4, true, 0x4020 + v);
	fuzz_mmio_access(e + 12, 4, true, masked);
}

static void drv_status(const struct vcfg *c, uint8_t s)
{
	if (c->pci)
		pci_common(VIRTIO_PCI_COMMON_STATUS, 1, true, s);
	else
		mmio_wr(MMIO_STATUS, s);
}

static void drv_features(const struct vcfg *c, uint64_t f)
{
	unsigned int w;

	for (w = 0; w < 2; w++) {
		if (c->pci) {
			pci_common(VIRTIO_PCI_COMMON_GFSELECT, 4, true, w);
			pci_common(VIRTIO_PCI_COMMON_GF, 4, true,
				   (uint32_t)(f >> (32 * w)));
		} else {
			mmio_wr(MMIO_DRIVER_FEATURES_SEL, w);
			mmio_wr(MMIO_DRIVER_FEATURES,
				(uint32_t)(f >> (32 * w)));
		}
	}
}

/* Queue @i's rings in its own slice of the fake RAM, at the largest
 * power-of-two size up to QueueNumMax that fits the slice. */
static uint16_t ring_place(const struct vcfg *c, unsigned int i,
			   uint64_t *desc, uint64_t *avail, uint64_t *used)
{
	uint64_t slice = (FUZZ_VDEV_RAM / c->nq) & ~15ull;
	uint16_t s = c->max;

	while (s > 1 && VIRTQ_DESC_BYTES(s) + VIRTQ_AVAIL_BYTES(s) + 3 +
				VIRTQ_USED_BYTES(s) > slice)
		s /= 2;
	*desc = i * slice;
	*avail = *desc + VIRTQ_DESC_BYTES(s);
	*used = (*avail + VIRTQ_AVAIL_BYTES(s) + 3) & ~3ull;
	return s;
}

static void drv_queue(const struct vcfg *c, unsigned int i, uint16_t vec)
{
	uint64_t desc, avail, used;
	uint16_t s = ring_place(c, i, &desc, &avail, &used);

	if (c->pci) {
		pci_common(VIRTIO_PCI_COMMON_Q_SELECT, 2, true, i);
		pci_common(VIRTIO_PCI_COMMON_Q_SIZE, 2, true, s);
		pci_common(VIRTIO_PCI_COMMON_Q_DESC, 8, true, desc);
		pci_common(VIRTIO_PCI_COMMON_Q_AVAIL, 8, true, avail);
		pci_common(VIRTIO_PCI_COMMON_Q_USED, 8, true, used);
		pci_common(VIRTIO_PCI_COMMON_Q_MSIX, 2, true, vec);
		pci_common(VIRTIO_PCI_COMMON_Q_ENABLE, 2, true, 1);
		return;
	}
	mmio_wr(MMIO_QUEUE_SEL, i);
	mmio_wr(MMIO_QUEUE_NUM, s);
	mmio_wr(MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	mmio_wr(MMIO_QUEUE_DRIVER_LOW, (uint32_t)avail);
	mmio_wr(MMIO_QUEUE_DEVICE_LOW, (uint32_t)used);
	mmio_wr(MMIO_QUEUE_READY, 1);
}

/* The device consumed and used @k * 257 chains on each started queue. */
static void ring_progress(struct virtio_dev *vdev, uint8_t k)
{
	uint16_t idx = (uint16_t)(k * 257u);
	unsigned int i;

	for (i = 0; k && vdev->running && i < vdev->num_queues; i++) {
		struct virtq *vq = &vdev->queues[i].vq;
		uint8_t b[2];

		if (!vq->ready)
			continue;
		le_put(b, 2, idx);
		guest_mem_write(vdev->gm, vq->avail_gpa + 2, b, 2);
		guest_mem_write(vdev->gm, vq->used_gpa + 2, b, 2);
		vq->last_avail_idx = vq->used_idx = idx;
		vq->signalled_used = (uint16_t)(idx - k);
	}
}

/* Things the device side does by itself. */
static void device_events(const struct vcfg *c, struct virtio_dev *vdev,
			  uint8_t plan)
{
	if (c->pci) {
		if (plan & PLAN_CONFIG)
			fuzz_device_event(1, 0);
		if (plan & PLAN_NOTIFY)
			fuzz_device_event(0, 0);
		if (plan & PLAN_BROKEN)
			fuzz_device_event(2, 0);
		return;
	}
	if (plan & PLAN_CONFIG)
		virtio_config_changed(vdev);
	if (plan & PLAN_NOTIFY)
		virtio_queue_notify(&vdev->queues[0]);
	if (plan & PLAN_BROKEN)
		virtio_dev_broken(vdev, "fuzz");
	evfd_drain(mm.irq_fd);
}

/*
 * A driver's probe as far as @plan says (PLAN_*), with the queues of
 * @mask (bit i % 8 for queue i) set up and enabled, then what the device
 * did meanwhile: @progress chains on each ring, events.
 */
static void drive(const struct vcfg *c, struct virtio_dev *vdev, uint8_t plan,
		  uint8_t mask, uint8_t progress)
{
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	unsigned int stage = plan & PLAN_STAGE, i;
	bool msix = c->pci && (plan & PLAN_MSIX);
	uint64_t drop = plan & PLAN_NO_EVENT_IDX ? 1ULL << VIRTIO_F_EVENT_IDX
						 : 0;

	if (c->pci)
		pci_firmware(msix);
	drv_status(c, s);
	if (stage >= 1) {
		drv_features(c, vdev->host_features & ~drop);
		s |= VIRTIO_STATUS_FEATURES_OK;
		drv_status(c, s);
		for (i = 0; msix && i <= c->nq; i++)
			pci_vector(i, false);
		if (msix)
			pci_common(VIRTIO_PCI_COMMON_MSIX, 2, true, 0);
		for (i = 0; i < c->nq; i++)
			if (mask >> (i % 8) & 1)
				drv_queue(c, i, msix ? (uint16_t)(i + 1) :
						       VIRTIO_MSI_NO_VECTOR);
		if (msix && (plan & PLAN_MASK))
			pci_vector(1, true);
	}
	if (stage >= 2) {
		fuzz_fd.fail_start = stage == 3;
		drv_status(c, s | VIRTIO_STATUS_DRIVER_OK);
		if (stage == 2 && !vdev->running)
			abort(); /* rings inside RAM, features ok */
		if (!c->pci)
			evfd_drain(mm.irq_fd); /* the failed start's */
	}
	ring_progress(vdev, progress);
	device_events(c, vdev, plan);
}

/* ---- the payload as the model reads it ---- */

struct vq_file {
	uint16_t size, vector;
	uint8_t enabled;
	uint64_t desc, avail, used;
	struct virtq_state st;
};

struct v_file {
	uint32_t id, nq, gen, isr;
	uint64_t host, drv;
	uint8_t status, broken, running;
	struct vq_file q[VIRTIO_MAX_QUEUES];
	uint64_t base;        /* mmio */
	uint32_t gsi, sel[3]; /* mmio; pci: slot, config length, queue_sel */
	const uint8_t *cfg;   /* pci */
	uint32_t dfsel, gfsel, nvec;
	uint16_t cvec;
	struct virtio_pci_msix_entry table[VIRTIO_PCI_MAX_VECTORS];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	uint8_t fake_cfg[FUZZ_FAKE_CFG];
};

static void file_read_queues(struct snap_reader *r, struct v_file *f)
{
	unsigned int i;

	for (i = 0; i < f->nq && i < VIRTIO_MAX_QUEUES; i++) {
		struct vq_file *l = &f->q[i];

		l->size = snap_get_u16(r);
		l->enabled = snap_get_u8(r);
		l->desc = snap_get_u64(r);
		l->avail = snap_get_u64(r);
		l->used = snap_get_u64(r);
		l->vector = snap_get_u16(r);
		l->st.last_avail_idx = snap_get_u16(r);
		l->st.used_idx = snap_get_u16(r);
		l->st.signalled_used = snap_get_u16(r);
	}
}

static void file_read_pci(struct snap_reader *r, struct v_file *f)
{
	unsigned int v;

	f->gsi = snap_get_u32(r);    /* slot */
	f->sel[0] = snap_get_u32(r); /* config space length */
	f->cfg = snap_get_ref(r, PCI_CFG_SPACE_SIZE);
	f->dfsel = snap_get_u32(r);
	f->gfsel = snap_get_u32(r);
	f->sel[2] = snap_get_u16(r);
	f->nvec = snap_get_u32(r);
	f->cvec = snap_get_u16(r);
	for (v = 0; v < f->nvec && v < VIRTIO_PCI_MAX_VECTORS; v++) {
		f->table[v].addr_lo = snap_get_u32(r);
		f->table[v].addr_hi = snap_get_u32(r);
		f->table[v].data = snap_get_u32(r);
		f->table[v].ctrl = snap_get_u32(r);
	}
	for (v = 0; v < VIRTIO_PCI_PBA_WORDS; v++)
		f->pba[v] = snap_get_u64(r);
}

/* The layout virtio_dev_save() writes; false when @p is not one. */
static bool file_read(const struct vcfg *c, const uint8_t *p, size_t n,
		      struct v_file *f)
{
	struct snap_reader r = { .p = p, .len = n };

	memset(f, 0, sizeof(*f));
	f->id = snap_get_u32(&r);
	f->nq = snap_get_u32(&r);
	f->host = snap_get_u64(&r);
	f->status = snap_get_u8(&r);
	f->broken = snap_get_u8(&r);
	f->drv = snap_get_u64(&r);
	f->gen = snap_get_u32(&r);
	f->isr = snap_get_u32(&r);
	f->running = snap_get_u8(&r);
	file_read_queues(&r, f);
	/* The device's part, then the transport's (virtio_dev_save()). */
	if (snap_get_u8(&r) != FAKE_STATE_VERSION)
		return false;
	snap_get_bytes(&r, f->fake_cfg, sizeof(f->fake_cfg));
	if (c->pci) {
		file_read_pci(&r, f);
	} else {
		f->base = snap_get_u64(&r);
		f->gsi = snap_get_u32(&r);
		f->sel[0] = snap_get_u32(&r);
		f->sel[1] = snap_get_u32(&r);
		f->sel[2] = snap_get_u32(&r);
	}
	return snap_reader_done(&r);
}

/* ---- what a load leaves ---- */

/* Refused: the core as reset left it, nothing started, nothing raised. */
static void check_refused(const struct vcfg *c, struct virtio_dev *vdev)
{
	unsigned int i;

	if (virtio_get_status(vdev) || vdev->driver_features ||
	    atomic_load(&vdev->isr) || vdev->paused || vdev->paused_running ||
	    vdev->running || fuzz_fd.starts || fuzz_fd.stops)
		abort();
	for (i = 0; i < vdev->num_queues; i++) {
		const struct virtio_queue *q = &vdev->queues[i];

		if (q->enabled || q->size != q->max_size || q->desc ||
		    q->avail || q->used || q->vq.ready ||
		    q->msix_vector != VIRTIO_MSI_NO_VECTOR ||
		    evfd_drain(q->kick_fd))
			abort();
	}
	if (!c->pci) {
		if (evfd_drain(mm.irq_fd))
			abort();
		return;
	}
	for (i = 0; i < fp.vp.nr_vectors; i++)
		if (evfd_drain(fp.vp.irqfd[i]))
			abort();
	fuzz_pci_check_all();
}

/* A vector the table has, else NO_VECTOR (virtio 1.2 §4.1.5.1.2). */
static uint16_t pci_vec(uint16_t v)
{
	return v < fp.vp.nr_vectors ? v : VIRTIO_MSI_NO_VECTOR;
}

/* One queue as loaded from @l. */
static void check_queue(const struct vcfg *c, struct virtio_dev *vdev,
			const struct virtio_queue *q, const struct vq_file *l)
{
	const struct virtq *vq = &q->vq;
	uint16_t vec = l->vector;

	if (c->pci)
		vec = pci_vec(vec);
	if (q->enabled != !!l->enabled || q->desc != l->desc ||
	    q->avail != l->avail || q->used != l->used ||
	    q->size != (l->size ? l->size : q->max_size) ||
	    q->msix_vector != vec || evfd_drain(q->kick_fd))
		abort();
	if (q->enabled && (q->size > q->max_size || (q->size & (q->size - 1))))
		abort(); /* §2.7: a power of two up to QueueNumMax */
	if (!q->enabled || !vdev->paused_running) {
		if (vq->ready)
			abort();
		return;
	}
	if (!vq->ready || vq->size != q->size ||
	    !guest_mem_ptr(vdev->gm, q->desc, VIRTQ_DESC_BYTES(q->size)) ||
	    !guest_mem_ptr(vdev->gm, q->avail, VIRTQ_AVAIL_BYTES(q->size)) ||
	    !guest_mem_ptr(vdev->gm, q->used, VIRTQ_USED_BYTES(q->size)) ||
	    vq->last_avail_idx != l->st.last_avail_idx ||
	    vq->used_idx != l->st.used_idx ||
	    vq->signalled_used != l->st.signalled_used ||
	    (uint16_t)(vq->last_avail_idx - vq->used_idx) > q->size)
		abort();
}

/* MSI-X as loaded: entries, config vector, pending bits, routes; and
 * exactly the pending vectors now deliverable fired. */
static void check_msix(const struct v_file *f, unsigned int routes)
{
	struct virtio_pci *t = &fp.vp;
	uint16_t flags = (uint16_t)le_get(f->cfg + t->msix_cap +
					  PCI_MSIX_FLAGS, 2);
	unsigned int v, unmasked = 0;

	if (f->nvec != t->nr_vectors ||
	    t->config_vector != pci_vec(f->cvec) ||
	    t->msix_enabled != !!(flags & PCI_MSIX_FLAGS_ENABLE) ||
	    t->msix_masked != !!(flags & PCI_MSIX_FLAGS_MASKALL))
		abort();
	for (v = 0; v < 64 * VIRTIO_PCI_PBA_WORDS; v++) {
		bool in = v < t->nr_vectors;
		const struct virtio_pci_msix_entry *e = &f->table[in ? v : 0];
		bool was = in && (f->pba[v / 64] >> (v % 64) & 1);
		bool now = t->pba[v / 64] >> (v % 64) & 1;
		bool masked = !in || (e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
		bool live = t->msix_enabled && !t->msix_masked && !masked;
		uint64_t fired = in ? evfd_drain(t->irqfd[v]) : 0;

		if (now != (was && !live) || fired != (was && live))
			abort();
		if (!in)
			continue;
		unmasked += !masked;
		if (t->table[v].addr_lo != (e->addr_lo & ~3u) ||
		    t->table[v].addr_hi != e->addr_hi ||
		    t->table[v].data != e->data ||
		    t->table[v].ctrl != (e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT))
			abort();
	}
	if (fuzz_fh.routes - routes != unmasked)
		abort(); /* each unmasked entry routed again */
}

/* pci: config space is the device's read-only bytes and the payload's
 * writable ones; selectors as saved. */
static void check_pci(const struct v_file *f, const uint8_t *fresh,
		      unsigned int routes)
{
	const struct pci_dev *d = &fp.vp.pci;
	unsigned int i;

	if (f->gsi != (uint32_t)d->slot || f->sel[0] != PCI_CFG_SPACE_SIZE ||
	    fp.vp.dfselect != f->dfsel || fp.vp.gfselect != f->gfsel ||
	    fp.vp.queue_sel != f->sel[2])
		abort();
	for (i = 0; i < PCI_CFG_SPACE_SIZE; i++)
		if (d->cfg[i] != ((fresh[i] & ~d->wmask[i]) |
				  (f->cfg[i] & d->wmask[i])))
			abort();
	check_msix(f, routes);
	fuzz_pci_check_all();
}

/* Accepted: the payload's fields, as the load promises them. */
static void check_loaded(const struct vcfg *c, struct virtio_dev *vdev,
			 const uint8_t *p, size_t n, const uint8_t *fresh,
			 unsigned int routes)
{
	struct v_file f;
	unsigned int i;

	if (!file_read(c, p, n, &f) || f.id != vdev->ops->device_id ||
	    f.nq != vdev->num_queues || f.host != vdev->host_features)
		abort();
	if (c->pci) {
		check_pci(&f, fresh, routes);
	} else if (f.base != mm.base || f.gsi != mm.gsi ||
		   mm.device_features_sel != f.sel[0] ||
		   mm.driver_features_sel != f.sel[1] ||
		   mm.queue_sel != f.sel[2] || evfd_drain(mm.irq_fd)) {
		abort();
	}
	if (memcmp(fuzz_fd.cfg, f.fake_cfg, sizeof(f.fake_cfg)) ||
	    vdev->status != f.status ||
	    atomic_load(&vdev->needs_reset) != !!f.broken ||
	    vdev->driver_features != f.drv ||
	    vdev->config_generation != f.gen ||
	    atomic_load(&vdev->isr) != f.isr || !vdev->paused ||
	    vdev->paused_running != !!f.running || vdev->running ||
	    fuzz_fd.starts)
		abort();
	for (i = 0; i < vdev->num_queues; i++)
		check_queue(c, vdev, &vdev->queues[i], &f.q[i]);
	/* A state the driver's register writes could have reached. */
	fuzz_check_core(vdev);
}

/* ---- the device in use afterwards ---- */

static void use_mmio(struct virtio_dev *vdev)
{
	unsigned int i, j, isr;

	for (i = 0; i < vdev->num_queues; i++) {
		mmio_wr(MMIO_QUEUE_SEL, i);
		if (mmio_rd(MMIO_QUEUE_NUM_MAX) != vdev->queues[i].max_size ||
		    mmio_rd(MMIO_QUEUE_READY) != vdev->queues[i].enabled)
			abort();
		mmio_wr(MMIO_QUEUE_NOTIFY, i);
		for (j = 0; j < vdev->num_queues; j++)
			if (evfd_drain(vdev->queues[j].kick_fd) != (i == j))
				abort(); /* exactly the queue named */
	}
	isr = atomic_load(&vdev->isr);
	if (mmio_rd(MMIO_STATUS) != virtio_get_status(vdev) ||
	    mmio_rd(MMIO_INTERRUPT_STATUS) != isr ||
	    mmio_rd(MMIO_CONFIG_GENERATION) != vdev->config_generation)
		abort();
	if (vdev->running) {
		virtio_queue_notify(&vdev->queues[0]);
		if (atomic_load(&vdev->isr) != (isr | VIRTIO_ISR_QUEUE) ||
		    !evfd_drain(mm.irq_fd) != (mm.coalesce &&
					       (isr & VIRTIO_ISR_QUEUE)))
			abort();
	}
	mmio_wr(MMIO_INTERRUPT_ACK, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	if (atomic_load(&vdev->isr))
		abort();
}

static void use_pci(void)
{
	/* Common configuration (§4.1.4.3): device fields, then queue's. */
	static const uint8_t cf[][2] = {
		{ 0x00, 4 }, { 0x04, 4 }, { 0x08, 4 }, { 0x0c, 4 }, { 0x10, 2 },
		{ 0x12, 2 }, { 0x14, 1 }, { 0x15, 1 }, { 0x18, 2 }, { 0x1a, 2 },
		{ 0x1c, 2 }, { 0x1e, 2 }, { 0x20, 8 }, { 0x28, 8 }, { 0x30, 8 },
	};
	unsigned int i, k;

	pci_firmware(fp.vp.msix_enabled);
	for (k = 0; k < 8; k++)
		pci_common(cf[k][0], cf[k][1], false, 0);
	for (i = 0; i < fp.nq; i++) {
		pci_common(VIRTIO_PCI_COMMON_Q_SELECT, 2, true, i);
		for (k = 8; k < sizeof(cf) / sizeof(cf[0]); k++)
			pci_common(cf[k][0], cf[k][1], false, 0);
		fuzz_mmio_access(FUZZ_BAR_ADDR + VIRTIO_PCI_NOTIFY_OFF +
					 VIRTIO_PCI_NOTIFY_MULT * i,
				 2, true, i);
		fuzz_device_event(0, i);
	}
	fuzz_device_event(1, 0);
	fuzz_mmio_access(FUZZ_BAR_ADDR + VIRTIO_PCI_ISR_OFF, 1, false, 0);
}

/* Resume (if it loaded), use it, reset it, probe it again. */
static void use_after(const struct vcfg *c, struct virtio_dev *vdev,
		      bool loaded)
{
	bool ran = vdev->paused_running;
	unsigned int i;

	if (loaded) {
		if (virtio_dev_resume(vdev) || vdev->paused ||
		    vdev->running != ran || fuzz_fd.starts != ran)
			abort();
		if (c->pci)
			fuzz_pci_check_all();
		else
			fuzz_check_core(vdev);
	}
	if (c->pci)
		use_pci();
	else
		use_mmio(vdev);
	drv_status(c, 0);
	if (virtio_get_status(vdev) || vdev->running ||
	    fuzz_fd.starts != fuzz_fd.stops)
		abort();
	for (i = 0; i < vdev->num_queues; i++)
		if (vdev->queues[i].enabled)
			abort();
	drive(c, vdev, 2 | PLAN_MSIX, 0xff, 0);
}

/* ---- one input ---- */

/*
 * A patch: [0] op, [1..2] le16 offset, [3] value. op % 8: 0 set the
 * byte, 1 xor it, 2 add to it, 3 set 4 bytes to the value, 4 set a le16
 * to 1 << (value % 16), 5 cut the state there, 6 insert the value there,
 * 7 delete the byte there. Return: the new length (at most @cap).
 */
static size_t patch_apply(uint8_t *s, size_t len, size_t cap,
			  const uint8_t *pt)
{
	size_t off = (size_t)le_get(pt + 1, 2), i;
	uint8_t v = pt[3];

	if (pt[0] % 8 == 6) {
		if (len >= cap)
			return len;
		off %= len + 1;
		memmove(s + off + 1, s + off, len - off);
		s[off] = v;
		return len + 1;
	}
	if (!len)
		return 0;
	off %= len;
	switch (pt[0] % 8) {
	case 0:
		s[off] = v;
		break;
	case 1:
		s[off] ^= v;
		break;
	case 2:
		s[off] = (uint8_t)(s[off] + v);
		break;
	case 3:
		for (i = off; i < off + 4 && i < len; i++)
			s[i] = v;
		break;
	case 4:
		s[off] = (uint8_t)(1u << (v % 16));
		if (off + 1 < len)
			s[off + 1] = (uint8_t)((1u << (v % 16)) >> 8);
		break;
	case 5:
		return off;
	default:
		memmove(s + off, s + off + 1, len - off - 1);
		return len - 1;
	}
	return len;
}

/* Patch mode: the state of a device driven by @plan, patched. */
static uint8_t *patched_state(const struct vcfg *c, const uint8_t *in,
			      size_t n, size_t *len)
{
	struct virtio_dev *vdev = vdev_up(c);
	uint8_t *s;
	size_t i, cap;

	drive(c, vdev, in[0], in[1], in[2]);
	virtio_dev_pause(vdev);
	s = save_payload(vdev_saver, vdev, FUZZ_MAX_PATCHES, len);
	vdev_down(c);
	cap = *len + FUZZ_MAX_PATCHES;
	n = (n - FUZZ_PLAN_HEADER) / FUZZ_PATCH_SIZE;
	for (i = 0; i < n && i < FUZZ_MAX_PATCHES; i++)
		*len = patch_apply(s, *len, cap,
				   in + FUZZ_PLAN_HEADER + i * FUZZ_PATCH_SIZE);
	return s;
}

/* Load @p into a fresh device; 0 or the load's -errno. */
static int load_into(struct virtio_dev *vdev, const uint8_t *p, size_t n)
{
	struct snap_reader r = { .p = p, .len = n };
	char err[FUZZ_ERR_LEN] = "";
	int ret = virtio_dev_load(vdev, &r, err, sizeof(err));

	if (ret && (ret != -EINVAL || !err[0]))
		abort(); /* -EINVAL with a message */
	if (!ret && !snap_reader_done(&r))
		abort();
	return ret;
}

/* A state saved from a loaded device loads again and saves the same. */
static void check_fixed_point(const struct vcfg *c, const uint8_t *s1,
			      size_t n1)
{
	struct virtio_dev *vdev = vdev_up(c);
	uint8_t *s2;
	size_t n2;

	if (load_into(vdev, s1, n1))
		abort();
	s2 = save_payload(vdev_saver, vdev, 0, &n2);
	if (!same_bytes(s1, n1, s2, n2))
		abort();
	free(s2);
	vdev_down(c);
}

static void run_virtio(const uint8_t *data, size_t size)
{
	static const uint64_t features[4] = {
		0, 1ULL << 1, 1ULL << VIRTIO_F_EVENT_IDX,
		1ULL << VIRTIO_F_EVENT_IDX | 1ULL << VIRTIO_F_INDIRECT_DESC |
			1ULL << 9,
	};
	struct vcfg c;
	struct virtio_dev *vdev;
	uint8_t fresh[PCI_CFG_SPACE_SIZE], *p, *state, *s1 = NULL;
	size_t n, n1 = 0;
	unsigned int routes = 0;
	bool patch = data[0] & 4, pristine;

	if (size < FUZZ_VIRTIO_HEADER + (patch ? FUZZ_PLAN_HEADER : 0))
		return;
	c = (struct vcfg){ data[0] & 1, 1 + data[1] % 8,
			   (uint16_t)(2u << (data[2] % 10)),
			   features[data[3] % 4] };
	memset(fuzz_vram, 0, FUZZ_VDEV_RAM);
	data += FUZZ_VIRTIO_HEADER;
	size -= FUZZ_VIRTIO_HEADER;
	pristine = patch && size < FUZZ_PLAN_HEADER + FUZZ_PATCH_SIZE;
	n = size;
	state = patch ? patched_state(&c, data, size, &n) : NULL;
	p = dup_exact(patch ? state : data, n);
	vdev = vdev_up(&c);
	if (c.pci) {
		memcpy(fresh, fp.vp.pci.cfg, sizeof(fresh));
		routes = fuzz_fh.routes;
	}
	if (load_into(vdev, p, n)) {
		if (pristine)
			abort(); /* a state just saved loads */
		check_refused(&c, vdev);
		use_after(&c, vdev, false);
	} else {
		check_loaded(&c, vdev, p, n, fresh, routes);
		s1 = save_payload(vdev_saver, vdev, 0, &n1);
		if (pristine && !same_bytes(state, n, s1, n1))
			abort(); /* back byte for byte */
		use_after(&c, vdev, true);
	}
	vdev_down(&c);
	if (s1)
		check_fixed_point(&c, s1, n1);
	free(s1);
	free(p);
	free(state);
}

/* ---- the UART ---- */

struct fuzz_line {
	int level;
	unsigned int calls;
};

static struct fuzz_line com1_line, kbd_line;

static void line_set(void *opaque, uint32_t gsi, int level)
{
	struct fuzz_line *l = opaque;

	if ((l == &com1_line ? FUZZ_GSI_COM1 : FUZZ_GSI_KBD) != gsi ||
	    level == l->level)
		abort(); /* the wrong line, or no change reported */
	l->level = level;
	l->calls++;
}

static uint8_t uart_rw(struct serial *s, unsigned int reg, bool w, uint8_t v)
{
	uint8_t b[8] = { v };

	serial_access(s, reg, b, 1, w);
	return b[0];
}

/* The interrupt line the UART's state asks for (PC: OUT2 gates it). */
static int uart_level(const struct serial *s)
{
	bool pending = ((s->ier & 4) && s->lsr_err) ||
		       ((s->ier & 1) && s->rx_count) ||
		       ((s->ier & 2) && s->thre_pending) ||
		       ((s->ier & 8) && s->msr_delta);

	return pending && (s->mcr & 0x08);
}

/* An accepted UART state: what serial.h promises of it. */
static void uart_check(struct serial *s, const uint8_t *p, uint32_t n)
{
	const uint8_t *regs = p, *rx = p + UART_REGS + 4;
	uint32_t i;

	if (s->rx_count != n || s->rx_count > SERIAL_RX_FIFO_SIZE ||
	    s->rx_head >= SERIAL_RX_FIFO_SIZE)
		abort();
	for (i = 0; i < n; i++)
		if (s->rx[(s->rx_head + i) % SERIAL_RX_FIFO_SIZE] != rx[i])
			abort();
	if (s->ier != (regs[0] & 0x0f) || s->lcr != regs[1] ||
	    s->mcr != (regs[2] & 0x1f) || s->scr != regs[4] ||
	    s->dll != regs[5] || s->dlm != regs[6] ||
	    s->msr_delta != (regs[8] & 0x0f) || s->thre_pending != !!regs[9])
		abort();
	/* "Masked to the bits the UART has" (serial.h): FCR keeps what
	 * serial_set_fcr_locked() keeps, the LSR latch only error bits. */
	if (s->fcr != (regs[3] & UART_FCR_KEEP) ||
	    (s->lsr_err & ~UART_LSR_ERRS))
		abort();
	if (com1_line.level != uart_level(s) ||
	    s->h.irq_level != com1_line.level)
		abort();
	/* The guest reads the bytes back, in order, then nothing. */
	uart_rw(s, UART_LCR, true, s->lcr & ~UART_LCR_DLAB);
	for (i = 0; i < n; i++)
		if (!(uart_rw(s, UART_LSR, false, 0) & UART_LSR_DR) ||
		    uart_rw(s, UART_RBR, false, 0) != rx[i])
			abort();
	if ((uart_rw(s, UART_LSR, false, 0) & UART_LSR_DR) ||
	    uart_rw(s, UART_RBR, false, 0))
		abort();
}

static void uart_init(struct serial *s)
{
	com1_line = (struct fuzz_line){ 0, 0 };
	if (serial_init(s, -1, line_set, &com1_line, FUZZ_GSI_COM1))
		abort();
}

static void run_uart(const uint8_t *data, size_t size)
{
	struct serial s, s2;
	struct snap_reader r = { .p = data, .len = size };
	uint8_t *before, *after, *again;
	size_t blen, alen, glen;
	uint32_t n = size >= UART_REGS + 4 ?
			     (uint32_t)le_get(data + UART_REGS, 4) : 0;
	bool shaped = size >= UART_REGS + 4 && n <= SERIAL_RX_FIFO_SIZE &&
		      size - (UART_REGS + 4) == n; /* no trailing bytes */

	uart_init(&s);
	before = save_payload(uart_saver, &s, 0, &blen);
	if (serial_load(&s, &r) != (shaped ? 0 : -EINVAL))
		abort();
	after = save_payload(uart_saver, &s, 0, &alen);
	if (!shaped) {
		if (!same_bytes(before, blen, after, alen) || com1_line.calls)
			abort(); /* refused: nothing changed */
	} else {
		if (r.bad || r.off != UART_REGS + 4 + n)
			abort(); /* it read exactly its state */
		/* Saved again: a state that loads and saves the same. */
		uart_init(&s2);
		r = (struct snap_reader){ .p = after, .len = alen };
		if (serial_load(&s2, &r) || !snap_reader_done(&r))
			abort();
		again = save_payload(uart_saver, &s2, 0, &glen);
		if (!same_bytes(after, alen, again, glen))
			abort();
		free(again);
		serial_destroy(&s2);
		com1_line = (struct fuzz_line){ s.h.irq_level, 0 };
		uart_check(&s, data, n);
	}
	free(before);
	free(after);
	serial_destroy(&s);
}

/* ---- the i8042 ---- */

static uint8_t kbd_rd(struct i8042 *k, bool cmd_port)
{
	uint8_t b[8] = { 0 };

	if (cmd_port)
		i8042_cmd_access(k, 0, b, 1, false);
	else
		i8042_data_access(k, 0, b, 1, false);
	return b[0];
}

static void kbd_check(struct i8042 *k, const uint8_t *p, uint32_t n)
{
	const uint8_t *q = p + KBD_REGS + 4;
	bool level = n && (p[0] & I8042_CTR_KBDINT);
	uint32_t i;

	if (k->len != n || k->len > I8042_QUEUE || k->head >= I8042_QUEUE)
		abort();
	for (i = 0; i < n; i++)
		if (k->queue[(k->head + i) % I8042_QUEUE] != q[i])
			abort();
	if (k->ctr != p[0] || k->outp != p[1] ||
	    k->status_cmd != (p[2] ? I8042_STATUS_CMD : 0) ||
	    k->want != p[3] || k->kbd_want != p[4] || k->level != level ||
	    kbd_line.level != level)
		abort();
	for (i = 0; i < n; i++)
		if (!(kbd_rd(k, true) & I8042_STATUS_OBF) ||
		    kbd_rd(k, false) != q[i])
			abort();
	if ((kbd_rd(k, true) & I8042_STATUS_OBF) || kbd_rd(k, false) ||
	    k->level || kbd_line.level)
		abort();
}

static void kbd_init(struct i8042 *k)
{
	kbd_line = (struct fuzz_line){ 0, 0 };
	i8042_init(k, NULL, NULL, line_set, &kbd_line, FUZZ_GSI_KBD);
}

static void run_kbd(const uint8_t *data, size_t size)
{
	struct i8042 k, k2;
	struct snap_reader r = { .p = data, .len = size };
	uint8_t *before, *after, *again;
	size_t blen, alen, glen;
	uint32_t n = size >= KBD_REGS + 4 ?
			     (uint32_t)le_get(data + KBD_REGS, 4) : 0;
	bool shaped = size >= KBD_REGS + 4 && n <= I8042_QUEUE &&
		      size - (KBD_REGS + 4) == n; /* no trailing bytes */

	kbd_init(&k);
	before = save_payload(kbd_saver, &k, 0, &blen);
	if (i8042_load(&k, &r) != (shaped ? 0 : -EINVAL))
		abort();
	after = save_payload(kbd_saver, &k, 0, &alen);
	if (!shaped) {
		if (!same_bytes(before, blen, after, alen) || kbd_line.calls)
			abort();
	} else {
		if (r.bad || r.off != KBD_REGS + 4 + n)
			abort();
		kbd_init(&k2);
		r = (struct snap_reader){ .p = after, .len = alen };
		if (i8042_load(&k2, &r) || !snap_reader_done(&r))
			abort();
		again = save_payload(kbd_saver, &k2, 0, &glen);
		if (!same_bytes(after, alen, again, glen))
			abort();
		free(again);
		i8042_destroy(&k2);
		kbd_check(&k, data, n);
	}
	free(before);
	free(after);
	i8042_destroy(&k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fds = fds_open();
	uint8_t *p;

	if (!size || fuzz_fake_ram())
		return 0;
	p = dup_exact(data + 1, size - 1);
	switch (data[0] & 3) {
	case 0:
	case 1:
		run_virtio(data, size);
		break;
	case 2:
		run_uart(p, size - 1);
		break;
	default:
		run_kbd(p, size - 1);
		break;
	}
	free(p);
	if (fds_open() != fds)
		abort(); /* an fd left open */
	return 0;
}
