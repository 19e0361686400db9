/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The machine fuzz_pci.c and fuzz_virtio_pci.c drive: the PCI host bridge
 * (src/devices/pci.c) with one virtio-pci device (src/virtio/pci.c,
 * pci_msix.c) over the fake device and host of fuzz_virtio_fakes.h, its
 * handlers registered on a PIO and an MMIO bus exactly as the x86_64
 * machine glue registers them (ports 0xcf8-0xcff, ECAM, the BAR window).
 * Every access goes through bus_dispatch() and is checked: config reads
 * return the modelled bytes (all ones where nothing answers), config
 * writes change exactly the bytes the write mask allows, BAR decoding and
 * the notify ioeventfds follow COMMAND and the BAR, negotiated state
 * freezes and resets as in virtio 1.2 §2.1-§2.4 and §4.1.4.3, ISR reads
 * clear, kicks reach exactly their queue, MSI-X entries read back what
 * was written and vectors fire, pend or stay silent as the masks say.
 * abort() on any broken promise.
 */
#ifndef MICROVM_FUZZ_PCI_COMMON_H
#define MICROVM_FUZZ_PCI_COMMON_H

#include "devices/pci.h"
#include "fuzz_virtio_fakes.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/pci.h"
#include "vmm/bus.h"

/* The x86_64 machine's layout (src/vmm/x86_64/layout.h). */
#define FUZZ_PORT_CFG 0xcf8
#define FUZZ_MMIO32_BASE 0xc0000000ULL
#define FUZZ_MMIO32_SIZE 0x20000000ULL
#define FUZZ_ECAM_BASE 0xe0000000ULL
#define FUZZ_ECAM_SIZE 0x100000ULL
#define FUZZ_SLOT 1 /* the virtio device; slot 0 is the host bridge */
#define FUZZ_CANARY 0x5a
#define FUZZ_CFG_ADDR_MASK 0x80fffffcu

struct fuzz_pci {
	struct bus pio, mmio;
	struct pci_bus bus;
	struct virtio_dev vdev;
	struct virtio_pci vp;
	uint8_t wmask[2][PCI_CFG_SPACE_SIZE];
	unsigned int nq;
};

static struct fuzz_pci fp;

static struct pci_dev *fuzz_pci_dev(unsigned int slot)
{
	return slot == 0 ? &fp.bus.host_bridge : &fp.vp.pci;
}

/* The BAR address the device decodes now, or PCI_BAR_UNMAPPED. */
static uint64_t fuzz_bar(void)
{
	const uint8_t *c = fp.vp.pci.cfg;

	if (!(le_get(c + PCI_COMMAND, 2) & PCI_COMMAND_MEMORY))
		return PCI_BAR_UNMAPPED;
	return le_get(c + PCI_BASE_ADDRESS_0, 8) & ~PCI_BAR_FLAG_MASK;
}

/*
 * BAR decode and the notify ioeventfds: the device decodes what COMMAND
 * and the BAR say, and each queue's kick fd is wired at its notify
 * address of exactly that BAR (or nowhere when unmapped).
 */
static void fuzz_pci_check_decode(void)
{
	uint64_t bar = fuzz_bar();
	unsigned int i, j, found;

	if (fp.vp.pci.bars[0].mapped != bar || fp.vp.notify_base != bar)
		abort();
	for (i = 0; i < fp.nq; i++) {
		int fd = fp.vdev.queues[i].kick_fd;

		found = 0;
		for (j = 0; j < fuzz_fh.nr_live; j++)
			if (fuzz_fh.live[j].fd == fd)
				found += fuzz_fh.live[j].addr ==
					 bar + VIRTIO_PCI_NOTIFY_OFF +
						 4ull * i ? 1 : 100;
		if (found != (bar == PCI_BAR_UNMAPPED ? 0 : 1))
			abort();
	}
}

/* What holds after every access. */
static void fuzz_pci_check_all(void)
{
	unsigned int i;

	if (memcmp(fp.wmask[0], fp.bus.host_bridge.wmask, PCI_CFG_SPACE_SIZE) ||
	    memcmp(fp.wmask[1], fp.vp.pci.wmask, PCI_CFG_SPACE_SIZE))
		abort(); /* write masks are the device's, never the guest's */
	fuzz_pci_check_decode();
	fuzz_check_core(&fp.vdev);
	if (fp.vp.config_vector >= fp.vp.nr_vectors &&
	    fp.vp.config_vector != VIRTIO_MSI_NO_VECTOR)
		abort();
	for (i = 0; i < fp.nq; i++) {
		uint16_t v = fp.vdev.queues[i].msix_vector;

		if (v >= fp.vp.nr_vectors && v != VIRTIO_MSI_NO_VECTOR)
			abort();
	}
}

/*
 * After an access: an irqfd fired only for a vector that was pending and
 * is now deliverable (the PBA bit went), and no deliverable vector is
 * left pending. Kicks from accesses checked elsewhere are dropped.
 */
static void fuzz_pci_settle(const uint64_t *pba_before, bool broke_before,
			    bool drop_kicks)
{
	/* A DRIVER_OK whose start failed raised the config interrupt. */
	bool config_irq = !broke_before && atomic_load(&fp.vdev.needs_reset);
	unsigned int v;

	for (v = 0; v < fp.vp.nr_vectors; v++) {
		bool masked = fp.vp.msix_masked ||
			      (fp.vp.table[v].ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
		bool was = pba_before[v / 64] >> (v % 64) & 1;
		bool now = fp.vp.pba[v / 64] >> (v % 64) & 1;

		if (evfd_drain(fp.vp.irqfd[v]) &&
		    (!fp.vp.msix_enabled || masked ||
		     !((was && !now) ||
		       (config_irq && v == fp.vp.config_vector))))
			abort();
		if (fp.vp.msix_enabled && !masked && now)
			abort();
	}
	for (v = 0; drop_kicks && v < fp.nq; v++)
		evfd_drain(fp.vdev.queues[v].kick_fd);
	fuzz_pci_check_all();
}

/* Config space: the bytes a read must return, as the model says. */
static void fuzz_cfg_expect(unsigned int busnr, unsigned int dev,
			    unsigned int fn, unsigned int reg, uint8_t *out,
			    unsigned int len)
{
	const struct pci_dev *d = NULL;
	unsigned int i;

	if (busnr == 0 && fn == 0 && dev <= FUZZ_SLOT)
		d = fuzz_pci_dev(dev);
	for (i = 0; i < len; i++)
		out[i] = !d ? 0xff : reg + i < PCI_CFG_SPACE_SIZE
						? d->cfg[reg + i] : 0;
}

/*
 * Check one config space access that reached (busnr, dev, fn, reg):
 * @before is the device's config space before it, @data what the guest
 * wrote or read. A read may only refresh the PCI_CFG window's data bytes.
 */
static void fuzz_cfg_check(unsigned int busnr, unsigned int dev,
			   unsigned int fn, unsigned int reg,
			   const uint8_t *before, const uint8_t *data,
			   unsigned int len, bool is_write)
{
	const struct pci_dev *d;
	uint8_t want[8];
	unsigned int i, win;

	if (busnr != 0 || fn != 0 || dev > FUZZ_SLOT) {
		if (!is_write) {
			fuzz_cfg_expect(busnr, dev, fn, reg, want, len);
			if (memcmp(want, data, len))
				abort();
		}
		return;
	}
	d = fuzz_pci_dev(dev);
	win = dev == FUZZ_SLOT ? fp.vp.cfg_cap + VIRTIO_PCI_CAP_PCI_CFG_DATA
			       : PCI_CFG_SPACE_SIZE;
	for (i = 0; i < PCI_CFG_SPACE_SIZE; i++) {
		bool hit = i >= reg && i - reg < len;
		uint8_t m = d->wmask[i], w;

		if (is_write && hit)
			w = (uint8_t)((before[i] & ~m) | (data[i - reg] & m));
		else
			w = before[i];
		if (!is_write && i >= win && i < win + 4)
			continue; /* the window's data, refreshed by reads */
		if (d->cfg[i] != w)
			abort();
	}
	if (!is_write) {
		fuzz_cfg_expect(busnr, dev, fn, reg, want, len);
		if (memcmp(want, data, len))
			abort();
	}
}

static void fuzz_pci_setup_bus(void)
{
	if (bus_register(&fp.pio, FUZZ_PORT_CFG, PCI_CFG_IO_LEN,
			 pci_cfg_io_access, &fp.bus) ||
	    bus_register(&fp.mmio, FUZZ_ECAM_BASE, FUZZ_ECAM_SIZE,
			 pci_ecam_access, &fp.bus) ||
	    bus_register(&fp.mmio, FUZZ_MMIO32_BASE, FUZZ_MMIO32_SIZE,
			 pci_mmio_access, &fp.bus))
		abort();
}

/* Bus 0 with the host bridge and one virtio-pci device of @nq queues. */
static int fuzz_pci_setup(unsigned int nq, uint16_t max, uint64_t features)
{
	struct virtio_host host = { &fuzz_fake_host_ops, &fuzz_fh };

	if (fuzz_fake_ram())
		return -1;
	fuzz_fakes_reset();
	memset(&fp, 0, sizeof(fp));
	fp.nq = nq;
	fp.pio.name = "pio";
	fp.mmio.name = "mmio";
	if (pci_bus_init(&fp.bus, FUZZ_MMIO32_BASE, FUZZ_MMIO32_SIZE) ||
	    virtio_dev_init(&fp.vdev, &fuzz_fake_dev_ops, &fuzz_fd, &fuzz_vgm,
			    nq, max, features, "fuzz") ||
	    virtio_pci_init(&fp.vp, &fp.vdev, &host, &fp.bus) ||
	    fp.vp.pci.slot != FUZZ_SLOT)
		abort();
	fuzz_pci_setup_bus();
	memcpy(fp.wmask[0], fp.bus.host_bridge.wmask, PCI_CFG_SPACE_SIZE);
	memcpy(fp.wmask[1], fp.vp.pci.wmask, PCI_CFG_SPACE_SIZE);
	/* One GSI and irqfd per vector; no ioeventfd until decoded. */
	if (fuzz_fh.nr_irqfd != nq + 1 || fuzz_fh.nr_live)
		abort();
	fuzz_pci_check_all();
	return 0;
}

static void fuzz_pci_teardown(void)
{
	virtio_pci_destroy(&fp.vp);
	if (fuzz_fh.nr_live || fuzz_fh.nr_irqfd || fp.vdev.running)
		abort(); /* everything registered was taken down */
	virtio_dev_destroy(&fp.vdev);
	pci_bus_destroy(&fp.bus);
}

/* ---- config space through the ports and ECAM ---- */

static void fuzz_pio(uint16_t port, unsigned int len, bool is_write,
		     uint64_t value)
{
	uint32_t ca = fp.bus.config_address;
	uint8_t buf[16], before[PCI_CFG_SPACE_SIZE];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	bool broke;
	unsigned int dev = ca >> 11 & 0x1f, i, off = port - FUZZ_PORT_CFG;
	bool data_port = port >= FUZZ_PORT_CFG + 4 &&
			 port + len <= FUZZ_PORT_CFG + PCI_CFG_IO_LEN &&
			 (ca & 0x80000000u);

	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write)
		le_put(buf, len, value);
	else
		memset(buf, 0xff, len);
	if (dev <= FUZZ_SLOT)
		memcpy(before, fuzz_pci_dev(dev)->cfg, sizeof(before));
	memcpy(pba, fp.vp.pba, sizeof(pba));
	broke = atomic_load(&fp.vdev.needs_reset);
	bus_dispatch(&fp.pio, port, buf, len, is_write);
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort();
	if (data_port) {
		fuzz_cfg_check(ca >> 16 & 0xff, dev, ca >> 8 & 7,
			       (ca & 0xfc) + off - 4, before, buf, len,
			       is_write);
	} else if (port == FUZZ_PORT_CFG && len == 4) {
		/* CONFIG_ADDRESS: dword only, reserved bits read 0. */
		if (is_write && fp.bus.config_address !=
				    ((uint32_t)value & FUZZ_CFG_ADDR_MASK))
			abort();
		if (!is_write && le_get(buf, 4) != ca)
			abort();
	} else if (!is_write && port >= FUZZ_PORT_CFG &&
		   port < FUZZ_PORT_CFG + PCI_CFG_IO_LEN &&
		   port + len <= FUZZ_PORT_CFG + PCI_CFG_IO_LEN) {
		/* Anything else in the range reads all ones. */
		for (i = 0; i < len; i++)
			if (buf[i] != 0xff)
				abort();
	}
	if (is_write && port != FUZZ_PORT_CFG && fp.bus.config_address != ca)
		abort();
	fuzz_pci_settle(pba, broke, true);
}

/* Program CONFIG_ADDRESS for (bus 0, @dev, @fn, @reg) and access data. */
static void fuzz_cf8(unsigned int dev, unsigned int fn, unsigned int reg,
		     unsigned int len, bool is_write, uint64_t value)
{
	fuzz_pio(FUZZ_PORT_CFG, 4, true,
		 0x80000000u | dev << 11 | fn << 8 | (reg & 0xfc));
	fuzz_pio((uint16_t)(FUZZ_PORT_CFG + 4 + (reg & 3)), len, is_write,
		 value);
}

static void fuzz_ecam(uint64_t off, unsigned int len, bool is_write,
		      uint64_t value)
{
	unsigned int dev = (unsigned int)(off >> 15 & 0x1f), i;
	uint8_t buf[16], before[PCI_CFG_SPACE_SIZE];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	bool broke;

	if (off >= FUZZ_ECAM_SIZE || len > FUZZ_ECAM_SIZE - off)
		return;
	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write)
		le_put(buf, len, value);
	else
		memset(buf, 0xff, len);
	if (dev <= FUZZ_SLOT)
		memcpy(before, fuzz_pci_dev(dev)->cfg, sizeof(before));
	memcpy(pba, fp.vp.pba, sizeof(pba));
	broke = atomic_load(&fp.vdev.needs_reset);
	if (!bus_dispatch(&fp.mmio, FUZZ_ECAM_BASE + off, buf, len, is_write))
		abort();
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort();
	fuzz_cfg_check((unsigned int)(off >> 20), dev,
		       (unsigned int)(off >> 12 & 7),
		       (unsigned int)(off & 0xfff), before, buf, len, is_write);
	fuzz_pci_settle(pba, broke, true);
}

/* ---- the BAR ---- */

struct fuzz_vsnap {
	uint8_t status;
	uint64_t features;
	struct {
		uint16_t size;
		bool enabled;
		uint64_t desc, avail, used;
	} q[VIRTIO_MAX_QUEUES];
};

static void fuzz_vsnap(struct fuzz_vsnap *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->status = fp.vdev.status;
	s->features = fp.vdev.driver_features;
	for (i = 0; i < fp.nq; i++) {
		const struct virtio_queue *q = &fp.vdev.queues[i];

		s->q[i].size = q->size;
		s->q[i].enabled = q->enabled;
		s->q[i].desc = q->desc;
		s->q[i].avail = q->avail;
		s->q[i].used = q->used;
	}
}

/* Frozen state and reset, as for mmio (virtio 1.2 §4.1.4.3.2). */
static void fuzz_check_frozen(const struct fuzz_vsnap *b,
			      const struct fuzz_vsnap *a)
{
	unsigned int i;

	if (!a->status) {
		if (b->status && (a->features || fp.vdev.running))
			abort();
		for (i = 0; b->status && i < fp.nq; i++)
			if (a->q[i].enabled || a->q[i].desc || a->q[i].avail ||
			    a->q[i].used ||
			    a->q[i].size != fp.vdev.queues[i].max_size)
				abort();
		return;
	}
	if ((b->status & VIRTIO_STATUS_FEATURES_OK) &&
	    a->features != b->features)
		abort();
	if ((a->status & b->status) != b->status)
		abort();
	for (i = 0; i < fp.nq; i++) {
		bool frozen = (b->status & VIRTIO_STATUS_DRIVER_OK) ||
			      b->q[i].enabled;

		if (frozen && (a->q[i].size != b->q[i].size ||
			       a->q[i].desc != b->q[i].desc ||
			       a->q[i].avail != b->q[i].avail ||
			       a->q[i].used != b->q[i].used))
			abort();
		if (b->q[i].enabled && !a->q[i].enabled)
			abort(); /* only a reset disables a queue */
	}
}

/* MSI-X table field @f of entry @v as the guest reads it. */
static uint32_t fuzz_msix_field(unsigned int v, unsigned int f)
{
	const struct virtio_pci_msix_entry *e = &fp.vp.table[v];

	return f == 0 ? e->addr_lo : f == 1 ? e->addr_hi :
	       f == 2 ? e->data : e->ctrl;
}

/* A BAR-relative access at @off, checked register by register. */
static void fuzz_bar_check(uint64_t off, const uint8_t *buf, unsigned int len,
			   bool is_write, uint64_t value, unsigned int isr,
			   const uint64_t *kicks)
{
	uint64_t roff = off % VIRTIO_PCI_REGION_SIZE, base = off - roff;
	unsigned int i;

	if (roff + len > VIRTIO_PCI_REGION_SIZE) {
		if (!is_write && le_get(buf, len))
			abort(); /* straddling accesses read 0 */
		return;
	}
	if (base == VIRTIO_PCI_ISR_OFF && !is_write && roff == 0 &&
	    (buf[0] != isr || atomic_load(&fp.vdev.isr)))
		abort(); /* reading ISR returns it and clears it */
	for (i = 0; i < fp.nq; i++) {
		bool want = base == VIRTIO_PCI_NOTIFY_OFF && is_write &&
			    roff == 4ull * i;

		if (kicks[i] != want)
			abort();
	}
	if (base == VIRTIO_PCI_MSIX_TABLE_OFF && roff / 16 < fp.vp.nr_vectors &&
	    (len == 4 || len == 8) && !(roff & (len - 1))) {
		unsigned int v = (unsigned int)(roff / 16), f;

		for (i = 0; i < len; i += 4) {
			uint32_t got = is_write ? (uint32_t)(value >> (8 * i))
						: (uint32_t)le_get(buf + i, 4);

			f = (unsigned int)(roff % 16 + i) / 4;
			if (is_write)
				got &= f == 0 ? ~3u : f == 3 ? 1u : ~0u;
			if (fuzz_msix_field(v, f) != got)
				abort();
		}
	}
	if (base == VIRTIO_PCI_COMMON_OFF && !is_write && len == 2 &&
	    roff == VIRTIO_PCI_COMMON_NUMQ && le_get(buf, 2) != fp.nq)
		abort();
}

/* An MMIO access anywhere; checked as BAR traffic when it lands there. */
static void fuzz_mmio_access(uint64_t addr, unsigned int len, bool is_write,
			     uint64_t value)
{
	uint64_t bar = fuzz_bar(), kicks[VIRTIO_MAX_QUEUES];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	bool broke;
	unsigned int isr = atomic_load(&fp.vdev.isr), i;
	struct fuzz_vsnap b, a;
	uint8_t buf[16];
	/* Decoded, and reachable: the bus routes only the window to it. */
	bool in_bar = bar != PCI_BAR_UNMAPPED && addr >= bar &&
		      addr - bar < VIRTIO_PCI_BAR_SIZE &&
		      len <= VIRTIO_PCI_BAR_SIZE - (addr - bar) &&
		      addr >= FUZZ_MMIO32_BASE &&
		      addr - FUZZ_MMIO32_BASE < FUZZ_MMIO32_SIZE &&
		      len <= FUZZ_MMIO32_SIZE - (addr - FUZZ_MMIO32_BASE);

	if (addr >= FUZZ_ECAM_BASE && addr - FUZZ_ECAM_BASE < FUZZ_ECAM_SIZE) {
		fuzz_ecam(addr - FUZZ_ECAM_BASE, len, is_write, value);
		return;
	}
	fuzz_vsnap(&b);
	memcpy(pba, fp.vp.pba, sizeof(pba));
	broke = atomic_load(&fp.vdev.needs_reset);
	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write)
		le_put(buf, len, value);
	else
		memset(buf, 0xff, len);
	bus_dispatch(&fp.mmio, addr, buf, len, is_write);
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort();
	for (i = 0; i < fp.nq; i++)
		kicks[i] = evfd_drain(fp.vdev.queues[i].kick_fd);
	fuzz_vsnap(&a);
	if (in_bar) {
		fuzz_bar_check(addr - bar, buf, len, is_write, value, isr,
			       kicks);
		fuzz_check_frozen(&b, &a);
	} else {
		/* Nothing decodes it: all ones, and nothing changes. */
		if (memcmp(&a, &b, sizeof(a)))
			abort();
		for (i = 0; i < fp.nq; i++)
			if (kicks[i])
				abort();
		for (i = 0; !is_write && i < len; i++)
			if (buf[i] != 0xff)
				abort();
	}
	fuzz_pci_settle(pba, broke, false);
}

/* ---- the device side ---- */

/*
 * A vector fires: with MSI-X on it signals its irqfd unless masked, when
 * it pends in the PBA instead; with MSI-X off only the ISR shows it.
 */
static void fuzz_check_vector(uint16_t v, bool queue)
{
	bool on = fp.vp.msix_enabled, valid = v < fp.vp.nr_vectors;
	bool masked = valid && (fp.vp.msix_masked ||
				(fp.vp.table[v].ctrl &
				 PCI_MSIX_ENTRY_CTRL_MASKBIT));
	bool pending = valid && (fp.vp.pba[v / 64] >> (v % 64) & 1);
	unsigned int i;

	for (i = 0; i < fp.vp.nr_vectors; i++) {
		uint64_t n = evfd_drain(fp.vp.irqfd[i]);

		if (n != (on && valid && i == v && !masked))
			abort();
	}
	if (on && valid && masked && !pending)
		abort();
	if (queue && !on && !(atomic_load(&fp.vdev.isr) & VIRTIO_ISR_QUEUE))
		abort();
}

static void fuzz_device_event(unsigned int what, unsigned int arg)
{
	struct virtio_queue *q = &fp.vdev.queues[arg % fp.nq];

	switch (what % 4) {
	case 0:
		virtio_queue_notify(q);
		fuzz_check_vector(q->msix_vector, true);
		break;
	case 1:
		virtio_config_changed(&fp.vdev);
		if (!(atomic_load(&fp.vdev.isr) & VIRTIO_ISR_CONFIG))
			abort();
		fuzz_check_vector(fp.vp.config_vector, false);
		break;
	case 2: {
		bool was = atomic_load(&fp.vdev.needs_reset);
		bool ok = fp.vdev.status & VIRTIO_STATUS_DRIVER_OK;
		unsigned int i;

		virtio_dev_broken(&fp.vdev, "fuzz");
		if (!(virtio_get_status(&fp.vdev) & VIRTIO_STATUS_NEEDS_RESET))
			abort();
		if (!was && ok) {
			/* The first NEEDS_RESET of a live device: config irq. */
			fuzz_check_vector(fp.vp.config_vector, false);
			break;
		}
		for (i = 0; i < fp.vp.nr_vectors; i++)
			if (evfd_drain(fp.vp.irqfd[i]))
				abort(); /* told once only (virtio_dev_broken()) */
		break;
	}
	default:
		fuzz_fd.fail_start = true;
		break;
	}
	fuzz_pci_check_all();
}

#endif
