// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-pci modern transport (virtio 1.2 §4.1) against a fake device and
 * fake hypervisor services: the vendor capabilities, common configuration
 * (features, queues, status), ISR, the PCI_CFG window, MSI-X routing,
 * masking and pending bits, and notify ioeventfds that follow the BAR.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "devices/pci.h"
#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/pci.h"

#define WIN_BASE 0xc0000000ULL
#define WIN_SIZE 0x20000000ULL
#define NQ 3
#define NVEC (NQ + 1)
#define QMAX 256
#define GSI_FIRST 40
#define MEM_SIZE 0x100000
#define DEV_FEATURES (1ULL << 1 | 1ULL << VIRTIO_F_EVENT_IDX)
#define SLOT 1
#define MAX_IOEV 32

/* ---- fake hypervisor services ---- */

struct ioev {
	uint64_t addr;
	unsigned int len;
	bool pio, match;
	int fd;
};

struct fake_host {
	struct ioev live[MAX_IOEV];
	int nr_live;
	int ioev_calls;
	int bad_deassign;
	int next_gsi;
	int irqfd_fd[NVEC + 8];
	uint32_t irqfd_gsi[NVEC + 8];
	int nr_irqfd, irqfd_deassigned;
	int routes;
	uint32_t route_gsi, route_data, route_devid;
	uint64_t route_addr;
};

static int fake_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			  bool pio, bool match, uint64_t data, int fd,
			  bool assign)
{
	struct fake_host *h = opaque;
	int i;

	(void)data;
	h->ioev_calls++;
	if (assign) {
		if (h->nr_live >= MAX_IOEV)
			return -ENOSPC;
		h->live[h->nr_live++] = (struct ioev){ addr, len, pio, match,
						       fd };
		return 0;
	}
	for (i = 0; i < h->nr_live; i++) {
		struct ioev *e = &h->live[i];

		if (e->addr == addr && e->len == len && e->fd == fd &&
		    e->pio == pio && e->match == match) {
			*e = h->live[--h->nr_live];
			return 0;
		}
	}
	h->bad_deassign++;
	return -ENOENT;
}

static int fake_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	struct fake_host *h = opaque;

	if (!assign) {
		h->irqfd_deassigned++;
		return 0;
	}
	if (h->nr_irqfd >= NVEC + 8)
		return -ENOSPC;
	h->irqfd_fd[h->nr_irqfd] = fd;
	h->irqfd_gsi[h->nr_irqfd++] = gsi;
	return 0;
}

static int fake_gsi_alloc(void *opaque)
{
	struct fake_host *h = opaque;

	return h->next_gsi++;
}

static int fake_msi_route(void *opaque, uint32_t gsi, uint64_t addr,
			  uint32_t data, uint32_t devid)
{
	struct fake_host *h = opaque;

	h->routes++;
	h->route_devid = devid;
	h->route_gsi = gsi;
	h->route_addr = addr;
	h->route_data = data;
	return 0;
}

static const struct virtio_host_ops fake_host_ops = {
	.ioeventfd = fake_ioeventfd,
	.irqfd = fake_irqfd,
	.gsi_alloc = fake_gsi_alloc,
	.msi_route = fake_msi_route,
};

/* ---- fake device: 8 config bytes, the first two writable ---- */

struct fake_dev {
	uint8_t cfg[8];
	int starts, stops;
};

static void fake_config(struct virtio_dev *vdev, uint64_t off, uint8_t *data,
			unsigned int len, bool is_write)
{
	struct fake_dev *d = vdev->dev;
	unsigned int i;

	for (i = 0; i < len; i++) {
		if (off + i >= sizeof(d->cfg)) {
			if (!is_write)
				data[i] = 0;
		} else if (!is_write) {
			data[i] = d->cfg[off + i];
		} else if (off + i < 2) {
			d->cfg[off + i] = data[i];
		}
	}
}

static int fake_start(struct virtio_dev *vdev)
{
	((struct fake_dev *)vdev->dev)->starts++;
	return 0;
}

static void fake_stop(struct virtio_dev *vdev)
{
	((struct fake_dev *)vdev->dev)->stops++;
}

static const struct virtio_dev_ops fake_dev_ops = {
	.name = "fake",
	.device_id = 2,
	.config_access = fake_config,
	.start = fake_start,
	.stop = fake_stop,
};

/* ---- fixture ---- */

static struct fake_host fh;
static struct fake_dev fd_;
static struct guest_mem gm;
static struct virtio_dev vdev;
static struct pci_bus bus;
static struct virtio_pci vp;
static uint64_t bar; /* BAR 0 address as last programmed */
static unsigned int caps[6]; /* config offset per virtio cfg_type */
static unsigned int msix_cap;

/* cfg_rd/wr, bar_rd/wr, common_rd/wr over bus, bar, SLOT, WIN_BASE. */
#include "pci_access.h"

static uint8_t status(void)
{
	return (uint8_t)common_rd(VIRTIO_PCI_COMMON_STATUS, 1);
}

static int irqfd_of(unsigned int v)
{
	return fh.irqfd_fd[v];
}

static void setup(void)
{
	static uint8_t mem[MEM_SIZE];
	struct virtio_host host = { &fake_host_ops, &fh };

	memset(&fh, 0, sizeof(fh));
	fh.next_gsi = GSI_FIRST;
	memset(&gm, 0, sizeof(gm));
	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	CHECK_EQ(virtio_dev_init(&vdev, &fake_dev_ops, &fd_, &gm, NQ, QMAX,
				 DEV_FEATURES, "vtest"), 0);
	memcpy(fd_.cfg, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	CHECK_EQ(pci_bus_init(&bus, WIN_BASE, WIN_SIZE), 0);
	CHECK_EQ(virtio_pci_init(&vp, &vdev, &host, &bus), 0);
	CHECK_EQ(vp.pci.slot, SLOT);
	CHECK_EQ(fh.nr_irqfd, NVEC);
	CHECK_EQ(fh.nr_live, 0); /* decoding is off until COMMAND.MEMORY */
	bar = cfg_rd(PCI_BASE_ADDRESS_0, 8) & ~PCI_BAR_FLAG_MASK;
	CHECK_EQ(bar, WIN_BASE);
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
}

/* IDs (§4.1.2) and BAR 0 as a 64-bit memory BAR of the right size. */
static void test_ids(void)
{
	uint32_t lo = (uint32_t)cfg_rd(PCI_BASE_ADDRESS_0, 4);
	unsigned int v;

	CHECK_EQ(cfg_rd(PCI_VENDOR_ID, 2), 0x1af4);
	CHECK_EQ(cfg_rd(PCI_DEVICE_ID, 2), 0x1042);
	CHECK_EQ(cfg_rd(PCI_REVISION_ID, 1), 1);
	CHECK_EQ(cfg_rd(PCI_SUBSYSTEM_VENDOR_ID, 2), 0x1af4);
	CHECK_EQ(cfg_rd(PCI_SUBSYSTEM_ID, 2), 2);
	CHECK_EQ(cfg_rd(PCI_CLASS_PROG, 3), 0x018000);
	CHECK_EQ(lo & PCI_BAR_FLAG_MASK, PCI_BAR_MEM_TYPE_64);
	CHECK_EQ(cfg_rd(PCI_STATUS, 2) & PCI_STATUS_CAP_LIST,
		 PCI_STATUS_CAP_LIST);
	/* One GSI and irqfd per vector, in vector order. */
	for (v = 0; v < NVEC; v++)
		CHECK_EQ(fh.irqfd_gsi[v], GSI_FIRST + v);
}

/* §4.1.4: every structure found once, inside BAR 0. */
static void test_caps(void)
{
	unsigned int ptr, n = 0, seen[6] = { 0 };

	for (ptr = (unsigned int)cfg_rd(PCI_CAPABILITY_LIST, 1); ptr && n < 48;
	     ptr = (unsigned int)cfg_rd(ptr + 1, 1), n++) {
		unsigned int type, clen;
		uint64_t off, len;

		if (cfg_rd(ptr, 1) == PCI_CAP_ID_MSIX) {
			msix_cap = ptr;
			continue;
		}
		CHECK_EQ(cfg_rd(ptr, 1), PCI_CAP_ID_VNDR);
		type = (unsigned int)cfg_rd(ptr + VIRTIO_PCI_CAP_CFG_TYPE, 1);
		clen = (unsigned int)cfg_rd(ptr + VIRTIO_PCI_CAP_LEN, 1);
		off = cfg_rd(ptr + VIRTIO_PCI_CAP_OFFSET, 4);
		len = cfg_rd(ptr + VIRTIO_PCI_CAP_LENGTH, 4);
		CHECK(type >= 1 && type <= 5);
		if (type < 1 || type > 5)
			continue;
		seen[type]++;
		caps[type] = ptr;
		CHECK_EQ(cfg_rd(ptr + VIRTIO_PCI_CAP_BAR, 1), 0);
		CHECK(off + len <= VIRTIO_PCI_BAR_SIZE);
		CHECK_EQ(clen, type == VIRTIO_PCI_CAP_NOTIFY_CFG ||
				       type == VIRTIO_PCI_CAP_PCI_CFG
			       ? 20 : 16);
		if (type != VIRTIO_PCI_CAP_PCI_CFG)
			CHECK(len > 0);
	}
	CHECK_EQ(ptr, 0);
	CHECK(seen[1] == 1 && seen[2] == 1 && seen[3] == 1 && seen[4] == 1 &&
	      seen[5] == 1);
	CHECK_EQ(cfg_rd(caps[1] + VIRTIO_PCI_CAP_LENGTH, 4) >= 0x38, 1);
	CHECK_EQ(cfg_rd(caps[2] + VIRTIO_PCI_CAP_NOTIFY_MULT, 4),
		 VIRTIO_PCI_NOTIFY_MULT);
	CHECK(cfg_rd(caps[2] + VIRTIO_PCI_CAP_LENGTH, 4) >=
	      (NQ - 1) * VIRTIO_PCI_NOTIFY_MULT + 2);
	CHECK(msix_cap != 0);
	CHECK_EQ(cfg_rd(msix_cap + PCI_MSIX_FLAGS, 2), NVEC - 1);
	CHECK_EQ(cfg_rd(msix_cap + PCI_MSIX_TABLE, 4),
		 VIRTIO_PCI_MSIX_TABLE_OFF | 0);
	CHECK_EQ(cfg_rd(msix_cap + PCI_MSIX_PBA, 4),
		 VIRTIO_PCI_MSIX_PBA_OFF | 0);
	/* Read-only parts stay put; only Enable and Function Mask move. */
	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2, 0xffff);
	CHECK_EQ(cfg_rd(msix_cap + PCI_MSIX_FLAGS, 2), 0xc000 | (NVEC - 1));
	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2, 0);
	cfg_wr(caps[2] + VIRTIO_PCI_CAP_OFFSET, 4, 0);
	CHECK_EQ(cfg_rd(caps[2] + VIRTIO_PCI_CAP_OFFSET, 4),
		 VIRTIO_PCI_NOTIFY_OFF);
}

/* §4.1.4.3: feature words through the selects; FEATURES_OK rules. */
static void test_features(void)
{
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DF, 4), (uint32_t)DEV_FEATURES);
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DF, 4), 1); /* VERSION_1 */
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 7);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DF, 4), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DFSELECT, 4), 7);
	common_wr(VIRTIO_PCI_COMMON_DF, 4, 0xffffffff); /* read only */
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DF, 4), (uint32_t)DEV_FEATURES);

	common_wr(VIRTIO_PCI_COMMON_STATUS, 1,
		  VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1u << 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_GF, 4), 1u << 1);
	/* Without VERSION_1 (word 1, bit 0) FEATURES_OK does not stick. */
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_FEATURES_OK);
	CHECK_EQ(status() & VIRTIO_STATUS_FEATURES_OK, 0);
	/* A bit the device does not offer is refused too. */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1 | 1u << 3);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_FEATURES_OK);
	CHECK_EQ(status() & VIRTIO_STATUS_FEATURES_OK, 0);
	/* Partial (2-byte) write of the upper word keeps bit 0 only. */
	common_wr(VIRTIO_PCI_COMMON_GF + 2, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_GF, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_GF, 4), 1);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_FEATURES_OK);
	CHECK(status() & VIRTIO_STATUS_FEATURES_OK);
	CHECK_EQ(vdev.driver_features, 1ULL << 32 | 1ULL << 1);
	/* Frozen now. */
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_GF, 4), 1);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(status(), 0);
	CHECK_EQ(vdev.driver_features, 0);
}

/* §4.1.4.3: queue registers, absent queues, freezing after enable. */
static void test_queues(void)
{
	unsigned int i;

	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	common_wr(VIRTIO_PCI_COMMON_NUMQ, 2, 9);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ, 1), NQ);
	for (i = 0; i < NQ; i++) {
		common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, i);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SELECT, 2), i);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_NOFF, 2), i);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2),
			 VIRTIO_MSI_NO_VECTOR);
	}
	/* Beyond num_queues: size reads 0, writes go nowhere. */
	for (i = NQ; i < 0x10000; i += 0x3ffd) {
		common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, i);
		common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 64);
		common_wr(VIRTIO_PCI_COMMON_Q_DESC, 8, 0x1000);
		common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
		common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), 0);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_DESC, 8), 0);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
	}
	for (i = 0; i < NQ; i++)
		CHECK(vdev.queues[i].size == QMAX && !vdev.queues[i].desc &&
		      !vdev.queues[i].enabled &&
		      vdev.queues[i].msix_vector == VIRTIO_MSI_NO_VECTOR);

	/* Queue 1: 64-bit fields as two halves or one 8-byte access. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 64);
	common_wr(VIRTIO_PCI_COMMON_Q_DESC, 4, 0x89abc000);
	common_wr(VIRTIO_PCI_COMMON_Q_DESC + 4, 4, 0x1);
	common_wr(VIRTIO_PCI_COMMON_Q_AVAIL, 8, 0x2000);
	common_wr(VIRTIO_PCI_COMMON_Q_USED, 4, 0x3000);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_DESC, 8), 0x189abc000ULL);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_DESC + 4, 4), 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_AVAIL, 8), 0x2000);
	CHECK_EQ(vdev.queues[1].used, 0x3000);
	CHECK_EQ(vdev.queues[1].size, 64);
	/* Wrong widths: across two fields, misaligned; nothing happens. */
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_DFSELECT, 8), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ - 1, 2), 0);
	common_wr(VIRTIO_PCI_COMMON_NUMQ, 4, 0x0fff0000);  /* + status */
	CHECK_EQ(status(), 0);
	common_wr(VIRTIO_PCI_COMMON_Q_DESC + 2, 4, 0);
	CHECK_EQ(vdev.queues[1].desc, 0x189abc000ULL);

	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 32);
	common_wr(VIRTIO_PCI_COMMON_Q_DESC, 8, 0x5000);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), 64);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_DESC, 8), 0x189abc000ULL);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	/* Queue 2 is still configurable. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 2);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 16);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), 16);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(vdev.queues[1].enabled, 0);
	CHECK_EQ(vdev.queues[2].size, QMAX);
}

/*
 * §4.1.4.3.2: the driver may only lower queue_size (to a power of two for
 * split rings). Anything else: queue_enable is refused (reads 0) and the
 * device reports NEEDS_RESET; reset clears both.
 */
static void test_queue_size_refused(void)
{
	static const uint16_t bad[] = { QMAX * 2, 1024, 0x8000, 0xffff, 0, 3,
					QMAX - 1 };
	unsigned int i;
	uint64_t broken;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
		common_wr(VIRTIO_PCI_COMMON_STATUS, 1,
			  VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
		broken = atomic_load(&vdev.broken_count);
		common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
		common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, bad[i]);
		common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
		CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
		CHECK(!vdev.queues[0].enabled);
		CHECK(status() & VIRTIO_STATUS_NEEDS_RESET);
		CHECK_EQ(atomic_load(&vdev.broken_count), broken + 1);
		if (vdev.queues[0].enabled)
			fprintf(stderr, "  queue_size %#x accepted\n", bad[i]);
	}
	/* DRIVER_OK does not stick: the device is not started. */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_FEATURES_OK);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(status() & VIRTIO_STATUS_DRIVER_OK, 0);
	CHECK(!vdev.queues[0].vq.ready);
	CHECK_EQ(fd_.starts, 0);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(status(), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX);
	/* The maximum itself and smaller powers of two are fine. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 2);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, QMAX);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	CHECK_EQ(status() & VIRTIO_STATUS_NEEDS_RESET, 0);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(fd_.stops, 0);
}

/* §3.1.1 through the transport: DRIVER_OK starts, reset stops. */
static void test_driver_ok(void)
{
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1,
		  VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_FEATURES_OK);
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 128);
	common_wr(VIRTIO_PCI_COMMON_Q_DESC, 8, 0x10000);
	common_wr(VIRTIO_PCI_COMMON_Q_AVAIL, 8, 0x20000);
	common_wr(VIRTIO_PCI_COMMON_Q_USED, 8, 0x30000);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, status() |
		  VIRTIO_STATUS_DRIVER_OK);
	CHECK(status() & VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(fd_.starts, 1);
	/* After DRIVER_OK queue 2 is frozen as well. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 2);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 8);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), 0);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(fd_.stops, 1);
	CHECK_EQ(status(), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SELECT, 2), 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
}

/* Device config, ISR read-to-clear, config_generation. */
static void test_device_cfg_isr(void)
{
	CHECK_EQ(bar_rd(VIRTIO_PCI_DEVICE_OFF, 4), 0x44332211);
	CHECK_EQ(bar_rd(VIRTIO_PCI_DEVICE_OFF + 6, 2), 0x8877);
	CHECK_EQ(bar_rd(VIRTIO_PCI_DEVICE_OFF + 8, 8), 0);
	bar_wr(VIRTIO_PCI_DEVICE_OFF, 2, 0xbbaa);
	CHECK_EQ(bar_rd(VIRTIO_PCI_DEVICE_OFF, 4), 0x4433bbaa);

	atomic_store(&vdev.isr, VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	bar_wr(VIRTIO_PCI_ISR_OFF, 1, 0); /* writes do nothing */
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF + 1, 1), 0);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), 3);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), 0);
	atomic_store(&vdev.isr, VIRTIO_ISR_CONFIG);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 4), 2);
	CHECK_EQ(atomic_load(&vdev.isr), 0);

	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_CFGGENERATION, 1), 0);
	virtio_config_changed(&vdev);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_CFGGENERATION, 1), 1);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), VIRTIO_ISR_CONFIG);
}

static uint64_t entry(unsigned int v, unsigned int field)
{
	return VIRTIO_PCI_MSIX_TABLE_OFF + PCI_MSIX_ENTRY_SIZE * v + field;
}

static uint32_t pba(void)
{
	return (uint32_t)bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 4);
}

static void msix_ctrl(uint16_t v)
{
	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2, v);
}

/* Table writes program the GSI route once the entry is unmasked. */
static void test_msix_route(void)
{
	unsigned int v;
	int n;

	for (v = 0; v < NVEC; v++)
		CHECK_EQ(bar_rd(entry(v, 12), 4), PCI_MSIX_ENTRY_CTRL_MASKBIT);
	n = fh.routes;
	bar_wr(entry(1, 0), 8, 0xfee01000ULL);
	bar_wr(entry(1, 8), 4, 0x4041);
	CHECK_EQ(fh.routes, n); /* masked: nothing yet */
	CHECK_EQ(bar_rd(entry(1, 0), 4), 0xfee01000);
	CHECK_EQ(bar_rd(entry(1, 4), 4), 0);
	CHECK_EQ(bar_rd(entry(1, 0), 8), 0xfee01000ULL);
	CHECK_EQ(bar_rd(entry(1, 8), 4), 0x4041);
	bar_wr(entry(1, 12), 4, 0);
	CHECK_EQ(fh.routes, n + 1);
	CHECK(fh.route_gsi == GSI_FIRST + 1 && fh.route_addr == 0xfee01000ULL &&
	      fh.route_data == 0x4041);
	/* The requester id an ITS translates by: bus 0, our slot, fn 0. */
	CHECK_EQ(fh.route_devid, (uint32_t)vp.pci.slot << 3);
	CHECK(vp.pci.slot > 0);
	/* Unmasked: each change is routed at once. */
	bar_wr(entry(1, 8), 4, 0x4042);
	CHECK(fh.routes == n + 2 && fh.route_data == 0x4042);
	/* Misaligned or narrow table accesses are dropped. */
	bar_wr(entry(1, 2), 4, 0xffffffff);
	bar_wr(entry(1, 8), 2, 0xffff);
	bar_wr(entry(1, 4), 8, 0xffffffffffffffffULL);
	CHECK_EQ(bar_rd(entry(1, 8), 4), 0x4042);
	CHECK_EQ(bar_rd(entry(1, 4), 4), 0);
	CHECK_EQ(bar_rd(entry(1, 2), 4), 0);
	CHECK_EQ(fh.routes, n + 2);
	/* Beyond the table and the PBA: nothing. */
	bar_wr(entry(NVEC, 0), 4, 0x1234);
	CHECK_EQ(bar_rd(entry(NVEC, 0), 4), 0);
	bar_wr(VIRTIO_PCI_MSIX_PBA_OFF, 4, 0xffffffff);
	CHECK_EQ(pba(), 0);
	/* Route the others too. */
	for (v = 0; v < NVEC; v++) {
		bar_wr(entry(v, 0), 4, 0xfee00000 + 0x1000 * v);
		bar_wr(entry(v, 8), 4, 0x4040 + v);
		bar_wr(entry(v, 12), 4, 0);
		CHECK(fh.route_gsi == GSI_FIRST + v &&
		      fh.route_data == 0x4040 + v);
	}
}

static uint64_t drain(unsigned int v)
{
	return evfd_drain(irqfd_of(v));
}

static void notify_q(unsigned int q)
{
	vdev.tops->notify(&vdev, &vdev.queues[q]);
}

/* §4.1.5: delivery, entry mask, function mask, PBA, NO_VECTOR. */
static void test_msix_notify(void)
{
	unsigned int v;

	for (v = 0; v < NVEC; v++)
		drain(v);
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2), 1);

	/* MSI-X disabled: no signal, only the ISR queue bit. */
	atomic_store(&vdev.isr, 0);
	notify_q(0);
	CHECK_EQ(drain(1), 0);
	CHECK_EQ(pba(), 0);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), VIRTIO_ISR_QUEUE);

	msix_ctrl(PCI_MSIX_FLAGS_ENABLE);
	notify_q(0);
	CHECK_EQ(drain(1), 1);
	CHECK(!drain(0) && !drain(2) && !drain(3));
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), 0);

	/* Entry masked: pending bit instead; unmask delivers it. */
	bar_wr(entry(1, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	notify_q(0);
	notify_q(0);
	CHECK_EQ(drain(1), 0);
	CHECK_EQ(pba(), 1u << 1);
	bar_wr(entry(1, 12), 4, 0);
	CHECK_EQ(drain(1), 1);
	CHECK_EQ(pba(), 0);

	/* Function mask likewise. */
	msix_ctrl(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	notify_q(0);
	CHECK_EQ(drain(1), 0);
	CHECK_EQ(pba(), 1u << 1);
	cfg_wr(msix_cap + PCI_MSIX_FLAGS + 1, 1, PCI_MSIX_FLAGS_ENABLE >> 8);
	CHECK_EQ(drain(1), 1);
	CHECK_EQ(pba(), 0);

	/* Vector changes take effect at the next notify. */
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 2);
	notify_q(0);
	CHECK(drain(2) == 1 && drain(1) == 0);

	/* Out of range reads back NO_VECTOR (§4.1.5.1.2) and never fires. */
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, NVEC);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 0x1234);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, VIRTIO_MSI_NO_VECTOR);
	notify_q(0);
	for (v = 0; v < NVEC; v++)
		CHECK_EQ(drain(v), 0);
	CHECK_EQ(pba(), 0);

	/* Config vector: ISR bit 1 and its own vector. */
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, 9);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, NQ);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), NQ);
	vdev.tops->notify_config(&vdev);
	CHECK_EQ(drain(NQ), 1);
	CHECK_EQ(bar_rd(VIRTIO_PCI_ISR_OFF, 1), VIRTIO_ISR_CONFIG);
	bar_wr(entry(NQ, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	vdev.tops->notify_config(&vdev);
	CHECK_EQ(drain(NQ), 0);
	CHECK_EQ(pba(), 1u << NQ);
	/* Disabling MSI-X keeps it pending; enabling delivers it. */
	msix_ctrl(0);
	bar_wr(entry(NQ, 12), 4, 0);
	CHECK_EQ(drain(NQ), 0);
	msix_ctrl(PCI_MSIX_FLAGS_ENABLE);
	CHECK_EQ(drain(NQ), 1);
	CHECK_EQ(pba(), 0);
}

struct stress {
	int loops;
};

static void *notify_thread(void *arg)
{
	struct stress *s = arg;
	int i;

	for (i = 0; i < s->loops; i++)
		notify_q(1);
	return NULL;
}

/* Queue thread notifies while a vCPU flips the mask: nothing is lost. */
static void test_msix_concurrent(void)
{
	struct stress s = { 20000 };
	pthread_t th;
	int i;

	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 2);
	drain(2);
	CHECK_EQ(pthread_create(&th, NULL, notify_thread, &s), 0);
	for (i = 0; i < 2000; i++) {
		bar_wr(entry(2, 12), 4, (unsigned int)i & 1);
		common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, i % 7 ? 2 : 1);
	}
	pthread_join(th, NULL);
	bar_wr(entry(2, 12), 4, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 2);
	notify_q(1);
	CHECK(drain(2) >= 1);
	CHECK_EQ(pba(), 0);
	drain(1);
}

/* §4.1.4.9: pci_cfg_data reads and writes BAR bytes. */
static void test_pci_cfg_window(void)
{
	unsigned int c = caps[VIRTIO_PCI_CAP_PCI_CFG];
	unsigned int data = c + VIRTIO_PCI_CAP_PCI_CFG_DATA;

	cfg_wr(c + VIRTIO_PCI_CAP_BAR, 1, 0);
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_COMMON_NUMQ);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 2);
	CHECK_EQ(cfg_rd(data, 4), common_rd(VIRTIO_PCI_COMMON_NUMQ, 2));
	CHECK_EQ(cfg_rd(data, 2), NQ);

	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_COMMON_DF);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 4);
	CHECK_EQ(cfg_rd(data, 4), common_rd(VIRTIO_PCI_COMMON_DF, 4));
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_DEVICE_OFF + 1);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 1);
	CHECK_EQ(cfg_rd(data, 1), bar_rd(VIRTIO_PCI_DEVICE_OFF + 1, 1));
	CHECK_EQ(cfg_rd(data, 1), 0xbb);

	/* Writes go through too. */
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_COMMON_Q_SELECT);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 2);
	cfg_wr(data, 4, 2);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_Q_SELECT, 2), 2);

	/* Another BAR, a bad length or past the BAR: reads 0. */
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_COMMON_NUMQ);
	cfg_wr(c + VIRTIO_PCI_CAP_BAR, 1, 2);
	CHECK_EQ(cfg_rd(data, 4), 0);
	cfg_wr(c + VIRTIO_PCI_CAP_BAR, 1, 0);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 3);
	CHECK_EQ(cfg_rd(data, 4), 0);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 4);
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_BAR_SIZE - 2);
	CHECK_EQ(cfg_rd(data, 4), 0);
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, 0xfffffffe);
	cfg_wr(data, 4, 0xffffffff);
	/* The window works with decoding off as well. */
	cfg_wr(PCI_COMMAND, 2, 0);
	cfg_wr(c + VIRTIO_PCI_CAP_OFFSET, 4, VIRTIO_PCI_COMMON_NUMQ);
	cfg_wr(c + VIRTIO_PCI_CAP_LENGTH, 4, 2);
	CHECK_EQ(cfg_rd(data, 2), NQ);
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
}

static bool ioev_at(uint64_t addr, int fd)
{
	int i;

	for (i = 0; i < fh.nr_live; i++)
		if (fh.live[i].addr == addr && fh.live[i].fd == fd &&
		    fh.live[i].len == 0 && !fh.live[i].pio &&
		    !fh.live[i].match)
			return true;
	return false;
}

static bool ioevs_at(uint64_t base)
{
	unsigned int i;
	bool ok = fh.nr_live == NQ;

	for (i = 0; i < NQ; i++)
		ok = ok && ioev_at(base + VIRTIO_PCI_NOTIFY_OFF +
					   i * VIRTIO_PCI_NOTIFY_MULT,
				   vdev.queues[i].kick_fd);
	return ok;
}

/* Notify ioeventfds sit at BAR + NOTIFY_OFF + 4 i and follow the BAR. */
static void test_notify(void)
{
	uint64_t moved = WIN_BASE + 0x1000000;
	unsigned int i;

	CHECK(ioevs_at(bar));
	/* Writes that reach the handler kick the queue's eventfd. */
	for (i = 0; i < NQ; i++) {
		evfd_drain(vdev.queues[i].kick_fd);
		bar_wr(VIRTIO_PCI_NOTIFY_OFF + i * VIRTIO_PCI_NOTIFY_MULT, 2,
		       i);
		CHECK_EQ(evfd_drain(vdev.queues[i].kick_fd), 1);
	}
	bar_wr(VIRTIO_PCI_NOTIFY_OFF + 2, 2, 0);
	bar_wr(VIRTIO_PCI_NOTIFY_OFF + NQ * VIRTIO_PCI_NOTIFY_MULT, 2, 0);
	CHECK_EQ(bar_rd(VIRTIO_PCI_NOTIFY_OFF, 2), 0);
	for (i = 0; i < NQ; i++)
		CHECK_EQ(evfd_drain(vdev.queues[i].kick_fd), 0);

	cfg_wr(PCI_BASE_ADDRESS_0, 4, (uint32_t)moved);
	CHECK(ioevs_at(moved));
	CHECK_EQ(fh.bad_deassign, 0);
	bar = moved;
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MASTER);
	CHECK_EQ(fh.nr_live, 0);
	CHECK_EQ(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), 0xffff); /* nobody */
	cfg_wr(PCI_BASE_ADDRESS_0, 4, (uint32_t)WIN_BASE);
	CHECK_EQ(fh.nr_live, 0);
	bar = WIN_BASE;
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	CHECK(ioevs_at(WIN_BASE));
	CHECK_EQ(fh.bad_deassign, 0);
}

/* Teardown undoes every registration. */
static void test_destroy(void)
{
	virtio_pci_destroy(&vp);
	CHECK_EQ(fh.nr_live, 0);
	CHECK_EQ(fh.bad_deassign, 0);
	CHECK_EQ(fh.irqfd_deassigned, NVEC);
	CHECK_EQ(vdev.queues[0].kick_fd, -1);
	CHECK_EQ(cfg_rd(PCI_VENDOR_ID, 4), 0xffffffff);
	virtio_dev_destroy(&vdev);
	pci_bus_destroy(&bus);
}

int main(void)
{
	setup();
	test_ids();
	test_caps();
	test_features();
	test_queues();
	test_queue_size_refused();
	test_driver_ok();
	test_device_cfg_isr();
	test_msix_route();
	test_msix_notify();
	test_msix_concurrent();
	test_pci_cfg_window();
	test_notify();
	test_destroy();
	return test_done();
}
