// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-blk queue backend against a fake /dev/vhost-blk (a struct
 * vhost_sys that records every ioctl): the setup sequence and its
 * error paths, start/stop/restart with the base indices handed back and
 * reused, and the whole device on both transports: DRIVER_OK hands each
 * queue the MSI-X vector's irqfd (pci) or the line's irqfd (mmio), masking
 * switches a queue to a hold eventfd whose signals become the PBA bit,
 * unmasking switches back and delivers, reset stops the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "devices/pci.h"
#include "fake_vhost.h"
#include "test.h"
#include "util/evloop.h"
#include "util/le.h"
#include "vhost_blk.h"
#include "virtio/blk.h"
#include "virtio/blk_priv.h"
#include "virtio/blk_vhost.h"
#include "virtio/mmio.h"
#include "virtio/pci.h"

/* ---- the fake device ---- */

#define FAKE_FD 77

#define FEAT_ALL                                                         \
	(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_EVENT_IDX |           \
	 1ull << VIRTIO_F_INDIRECT_DESC | 1ull << VIRTIO_BLK_F_FLUSH)

static void fake_reset(void)
{
	fake_vhost_reset(FAKE_FD);
	fk.version = VHOST_BLK_API_VERSION;
	fk.features = FEAT_ALL;
}

/* ---- blk_vhost alone ---- */

#define MEM_SIZE 0x100000
static uint8_t mem[MEM_SIZE];
static uint8_t mem2[0x10000];
static struct guest_mem gm;

static void gm_setup(void)
{
	memset(&gm, 0, sizeof(gm));
	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	CHECK_EQ(guest_mem_add_region(&gm, 0x100000000ull, sizeof(mem2), mem2),
		 0);
}

/* The order of the ABI header, and the memory table of every region. */
static void test_open_sequence(void)
{
	struct vhost_dev v;

	fake_reset();
	CHECK_EQ(blk_vhost_open(&v, &fake_sys, &gm, "vdt"), 0);
	CHECK_EQ(fk.n, 4);
	CHECK_EQ(fk.log[0].req, VHOST_BLK_GET_VERSION);
	CHECK_EQ(fk.log[1].req, VHOST_SET_OWNER);
	CHECK_EQ(fk.log[2].req, VHOST_GET_FEATURES);
	CHECK_EQ(fk.log[3].req, VHOST_SET_MEM_TABLE);
	CHECK_EQ(fk.log[3].nregions, 2);
	CHECK(fk.log[3].reg_gpa[0] == 0 && fk.log[3].reg_size[0] == MEM_SIZE &&
	      fk.log[3].reg_host[0] == (uintptr_t)mem);
	CHECK(fk.log[3].reg_gpa[1] == 0x100000000ull &&
	      fk.log[3].reg_size[1] == sizeof(mem2) &&
	      fk.log[3].reg_host[1] == (uintptr_t)mem2);
	CHECK_EQ(v.features, FEAT_ALL);
	/* DISCARD is the module's to serve; SIZE_MAX and MQ are ours. */
	CHECK_EQ(blk_vhost_features(&v, FEAT_ALL |
				    1ull << VIRTIO_BLK_F_DISCARD |
				    1ull << VIRTIO_BLK_F_SIZE_MAX |
				    1ull << VIRTIO_BLK_F_MQ),
		 FEAT_ALL | 1ull << VIRTIO_BLK_F_SIZE_MAX |
		 1ull << VIRTIO_BLK_F_MQ);
	blk_vhost_close(&v);
	CHECK_EQ(fk.closes, 1);
	/* Never started: closing stops nothing. */
	CHECK_EQ(fake_count(VHOST_BLK_SET_BACKEND, 0), 0);
}

/* One row per way the setup can fail: the error, and nothing left open. */
static void test_open_errors(void)
{
	static const struct {
		const char *what;
		int open_err;
		uint32_t version;
		uint64_t features;
		unsigned long fail_req;
		int fail_err;
		int want;
	} rows[] = {
#define V VHOST_BLK_API_VERSION
		{ "no module", -ENOENT, V, FEAT_ALL, 0, 0, -ENOENT },
		{ "no access", -EACCES, V, FEAT_ALL, 0, 0, -EACCES },
		{ "old ABI", 0, V - 1, FEAT_ALL, 0, 0, -EPROTO },
		{ "not vhost-blk", 0, V, FEAT_ALL, VHOST_BLK_GET_VERSION,
		  ENOTTY, -ENODEV },
		{ "owned", 0, V, FEAT_ALL, VHOST_SET_OWNER, EBUSY, -EBUSY },
		{ "no VERSION_1", 0, V, 1ull << VIRTIO_BLK_F_FLUSH, 0, 0,
		  -EPROTO },
		{ "features", 0, V, FEAT_ALL, VHOST_GET_FEATURES, EFAULT,
		  -EFAULT },
		{ "mem table", 0, V, FEAT_ALL, VHOST_SET_MEM_TABLE, ENOMEM,
		  -ENOMEM },
	};
#undef V
	struct vhost_dev v;
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fake_reset();
		fk.open_err = rows[i].open_err;
		fk.version = rows[i].version;
		fk.features = rows[i].features;
		fk.fail_req = rows[i].fail_req;
		fk.fail_err = rows[i].fail_err;
		printf("open error row: %s\n", rows[i].what);
		CHECK_EQ(blk_vhost_open(&v, &fake_sys, &gm, "vdt"),
			 rows[i].want);
		CHECK_EQ(fk.opens, fk.closes);
		CHECK_EQ(v.fd, -1);
	}
}

static struct blk_backend_start bs;
static int kick[VIRTIO_MAX_QUEUES];

static void bs_fill(unsigned int nq, uint16_t base)
{
	unsigned int i;

	memset(&bs, 0, sizeof(bs));
	bs.gm = &gm;
	bs.features = 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_EVENT_IDX;
	bs.nr_queues = nq;
	for (i = 0; i < nq; i++) {
		struct blk_backend_queue *q = &bs.queues[i];

		q->index = i;
		q->size = 16;
		q->desc = mem + 0x10000 + 0x1000 * i;
		q->avail = mem + 0x10400 + 0x1000 * i;
		q->used = mem + 0x10800 + 0x1000 * i;
		q->base = (uint16_t)(base + i);
		q->kick_fd = 200 + (int)i;
		kick[i] = q->kick_fd;
	}
}

/* Start, stop, and a restart that reuses what GET_VRING_BASE gave. */
static void test_start_stop_restart(void)
{
	struct blk_vhost_image img = { .fd = 9, .readonly = true,
				       .capacity = 2048,
				       .serial = "serial-of-20-bytes!!",
				       .poll_us = 250 };
	struct vhost_dev v;
	unsigned int i;
	int at, be;

	fake_reset();
	CHECK_EQ(blk_vhost_open(&v, &fake_sys, &gm, "vdt"), 0);
	bs_fill(8, 5);
	at = fk.n;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), 0);
	CHECK_EQ(fk.log[at].req, VHOST_SET_FEATURES);
	CHECK_EQ(fk.log[at].val, (long long)bs.features);
	for (i = 0; i < 8; i++) {
		struct fake_call *c = &fk.log[at + 1 + 4 * i];

		CHECK(c[0].req == VHOST_SET_VRING_NUM && c[0].index == i &&
		      c[0].val == 16);
		CHECK(c[1].req == VHOST_SET_VRING_ADDR && c[1].index == i &&
		      c[1].a[0] == (uintptr_t)bs.queues[i].desc &&
		      c[1].a[1] == (uintptr_t)bs.queues[i].avail &&
		      c[1].a[2] == (uintptr_t)bs.queues[i].used);
		CHECK(c[2].req == VHOST_SET_VRING_BASE && c[2].index == i &&
		      c[2].val == 5 + i);
		CHECK(c[3].req == VHOST_SET_VRING_KICK && c[3].index == i &&
		      c[3].val == kick[i]);
	}
	/* Then an error eventfd per ring, for the ring-error thread. */
	for (i = 0; i < 8; i++) {
		struct fake_call *c = &fk.log[at + 1 + 4 * 8 + i];

		CHECK(c->req == VHOST_SET_VRING_ERR && c->index == i &&
		      c->val >= 0);
	}
	CHECK(v.err_running);
	be = at + 1 + 4 * 8 + 8;
	CHECK_EQ(fk.log[be].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[be].val, 9);
	CHECK_EQ(fk.log[be].nq, 8);
	CHECK_EQ(fk.log[be].cap, 2048);
	CHECK_EQ(fk.log[be].flags, VHOST_BLK_F_READONLY);
	CHECK_EQ(fk.log[be].poll_us, 250);
	CHECK(!memcmp(fk.log[be].serial, "serial-of-20-bytes!!", 20));
	CHECK_EQ(fk.n, be + 1);
	CHECK(v.serving);
	/* A second start while serving is refused. */
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), -EINVAL);

	/* Stop: backend -1 first, then the ring state per queue. */
	for (i = 0; i < 8; i++)
		fk.ring_base[i] = (uint16_t)(1000 + 3 * i);
	at = fk.n;
	blk_vhost_stop(&v, &bs);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	for (i = 0; i < 8; i++) {
		CHECK(fk.log[at + 1 + i].req == VHOST_GET_VRING_BASE &&
		      fk.log[at + 1 + i].index == i);
		CHECK_EQ(bs.queues[i].base, 1000 + 3 * i);
		CHECK_EQ(v.stop_base[i], 1000 + 3 * i);
	}
	CHECK(!v.serving);
	/* The error eventfds detached, their thread gone. */
	CHECK_EQ(fake_count(VHOST_SET_VRING_ERR, at), 8);
	CHECK(!v.err_running && v.err_fd[0] == -1);
	/* Stopping twice does nothing more. */
	at = fk.n;
	blk_vhost_stop(&v, &bs);
	CHECK_EQ(fk.n, at);

	/* Restart: the bases handed back are where the rings resume. */
	at = fk.n;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), 0);
	for (i = 0; i < 8; i++) {
		int b = fake_find(VHOST_SET_VRING_BASE, at, (int)i);

		CHECK(b >= 0 && fk.log[b].index == i &&
		      fk.log[b].val == 1000 + 3 * i);
	}
	CHECK_EQ(v.starts, 2);
	/* Closing a serving device stops it first. */
	at = fk.n;
	blk_vhost_close(&v);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), 8);
	CHECK_EQ(fk.closes, 1);
}

/* A ring or the backend refused: nothing served, the kicks detached. */
static void test_start_errors(void)
{
	struct blk_vhost_image img = { .fd = 9, .capacity = 8 };
	struct vhost_dev v;
	int at;

	fake_reset();
	CHECK_EQ(blk_vhost_open(&v, &fake_sys, &gm, "vdt"), 0);
	bs_fill(4, 0);
	fk.fail_req = VHOST_SET_VRING_ADDR;
	fk.fail_err = EFAULT;
	fk.fail_index = 2;
	at = fk.n;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), -EFAULT);
	CHECK(!v.serving);
	CHECK_EQ(fake_count(VHOST_BLK_SET_BACKEND, at), 0);
	/* The two rings set up get their kick fd back to -1. */
	CHECK_EQ(fk.log[fk.n - 1].req, VHOST_SET_VRING_KICK);
	CHECK_EQ(fk.log[fk.n - 1].val, -1);
	CHECK_EQ(fk.log[fk.n - 1].index, 1);

	fk.fail_req = VHOST_BLK_SET_BACKEND;
	fk.fail_err = EOPNOTSUPP;
	fk.fail_index = -1;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), -EOPNOTSUPP);
	CHECK(!v.serving);
	at = fk.n;
	blk_vhost_stop(&v, &bs);
	CHECK_EQ(fk.n, at); /* nothing to stop */

	fk.fail_req = VHOST_SET_FEATURES;
	fk.fail_err = EINVAL;
	at = fk.n;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), -EINVAL);
	CHECK_EQ(fake_count(VHOST_SET_VRING_NUM, at), 0);

	/* No queues: refused before any ioctl. */
	fk.fail_req = 0;
	bs.nr_queues = 0;
	at = fk.n;
	CHECK_EQ(blk_vhost_start(&v, &bs, &img), -EINVAL);
	CHECK_EQ(fk.n, at);
	blk_vhost_close(&v);
}

/* ---- the device on virtio-pci ---- */

#define WIN_BASE 0xc0000000ULL
#define WIN_SIZE 0x20000000ULL
#define NQ 2
#define NVEC (NQ + 1)
#define QSZ 16
#define SLOT 1

struct fake_host {
	int next_gsi;
	int irqfd_fd[16];
	int nr_irqfd;
};

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
	struct fake_host *h = opaque;

	(void)gsi;
	if (assign && h->nr_irqfd < 16)
		h->irqfd_fd[h->nr_irqfd++] = fd;
	return 0;
}

static int fh_gsi_alloc(void *opaque)
{
	return ((struct fake_host *)opaque)->next_gsi++;
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

static struct fake_host fh;
static struct pci_bus bus;
static struct virtio_pci vp;
static struct virtio_dev vdev;
static uint64_t bar;
static unsigned int msix_cap;
static struct disk disk;

/* cfg_rd/wr, bar_rd/wr, common_rd/wr over bus, bar, SLOT, WIN_BASE. */
#include "pci_access.h"

static uint64_t entry(unsigned int v, unsigned int field)
{
	return VIRTIO_PCI_MSIX_TABLE_OFF + PCI_MSIX_ENTRY_SIZE * v + field;
}

static uint32_t pba(void)
{
	return (uint32_t)bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 4);
}

static int irqfd_of(unsigned int v)
{
	return fh.irqfd_fd[v];
}

/* An image the module could serve: O_DIRECT on a regular file. */
static int disk_setup(bool direct)
{
	char path[] = "test_blk_vhost.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, 1 << 20))
		return -1;
	memset(&disk, 0, sizeof(disk));
	disk.fd = fd;
	disk.size = 1 << 20;
	disk.direct = direct;
	disk.align = 512;
	disk.phys_block = 4096;
	disk.base_fd = -1;
	return 0;
}

static struct blk_dev *dev_create(unsigned int nq)
{
	struct blk_config cfg = {
		.disk = &disk, .num_queues = nq, .queue_size = QSZ,
		.engine = BLK_ENGINE_VHOST, .vhost_sys = &fake_sys,
		.poll_us = 40,
	};
	struct blk_dev *b = NULL;

	if (blk_dev_create(&b, &vdev, &cfg, &gm, "vdv"))
		return NULL;
	return b;
}

/* The driver's side of §3.1.1 up to DRIVER_OK, queue q on vector q,
 * the queues in @skip left disabled. */
static void pci_driver_ok_some(unsigned int nq, unsigned int skip)
{
	unsigned int q, v;

	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	for (v = 0; v <= nq; v++) {
		bar_wr(entry(v, 0), 4, 0xfee00000);
		bar_wr(entry(v, 8), 4, 0x40 + v);
		bar_wr(entry(v, 12), 4, 0);
	}
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER);
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1);  /* VERSION_1 */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1u << VIRTIO_BLK_F_FLUSH);
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, nq);
	for (q = 0; q < nq; q++) {
		if (skip & 1u << q)
			continue;
		common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, q);
		common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, QSZ);
		common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, q);
		common_wr(VIRTIO_PCI_COMMON_Q_DESC, 8, 0x10000 + 0x1000 * q);
		common_wr(VIRTIO_PCI_COMMON_Q_AVAIL, 8, 0x10400 + 0x1000 * q);
		common_wr(VIRTIO_PCI_COMMON_Q_USED, 8, 0x10800 + 0x1000 * q);
		common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	}
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
		  VIRTIO_STATUS_DRIVER_OK);
}

static void pci_driver_ok(void)
{
	pci_driver_ok_some(NQ, 0);
}

/* The module writes the call fd it was last given for queue @q. */
static void module_signals(unsigned int q)
{
	long long fd = fake_last_val(VHOST_SET_VRING_CALL, q);

	CHECK(fd >= 0);
	if (fd >= 0)
		evfd_signal((int)fd);
}

static void test_pci(void)
{
	struct virtio_host host = { &fh_ops, &fh };
	struct blk_dev *b;
	unsigned int q, v;
	int at;

	fake_reset();
	memset(&fh, 0, sizeof(fh));
	fh.next_gsi = 40;
	b = dev_create(NQ);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(fk.n, 4); /* open: version, owner, features, mem table */
	CHECK_EQ(pci_bus_init(&bus, WIN_BASE, WIN_SIZE), 0);
	CHECK_EQ(virtio_pci_init(&vp, &vdev, &host, &bus), 0);
	bar = cfg_rd(PCI_BASE_ADDRESS_0, 8) & ~PCI_BAR_FLAG_MASK;
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	msix_cap = vp.msix_cap;
	/* Offered: the module's bits, none of DISCARD (it has none). */
	CHECK(vdev.host_features & 1ull << VIRTIO_BLK_F_FLUSH);
	CHECK(vdev.host_features & 1ull << VIRTIO_BLK_F_MQ);
	CHECK(!(vdev.host_features & 1ull << VIRTIO_BLK_F_DISCARD));

	at = fk.n;
	pci_driver_ok();
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	/* The call fd is the vector's irqfd itself, set before serving. */
	for (q = 0; q < NQ; q++) {
		CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, q), irqfd_of(q));
		CHECK(fake_find(VHOST_SET_VRING_CALL, at, (int)q) <
		      fake_find(VHOST_BLK_SET_BACKEND, at, 0));
		CHECK_EQ(fk.log[fake_find(VHOST_SET_VRING_KICK, at, (int)q)].val,
			 vdev.queues[q].kick_fd);
	}
	CHECK_EQ(fk.log[fake_find(VHOST_SET_FEATURES, at, 0)].val,
		 (long long)(1ull << VIRTIO_F_VERSION_1 |
			     1ull << VIRTIO_BLK_F_FLUSH));
	at = fake_find(VHOST_BLK_SET_BACKEND, at, 0);
	CHECK(at >= 0 && fk.log[at].nq == NQ && fk.log[at].val == disk.fd &&
	      fk.log[at].cap == 2048 && fk.log[at].flags == 0);
	/* The workers poll as long as the queue threads would. */
	CHECK_EQ(fk.log[at].poll_us, 40);

	/* A ring the vhost core finds broken: its error eventfd, then
	 * NEEDS_RESET and the config interrupt (virtio 1.2 §2.1.2). */
	{
		int e = fake_find(VHOST_SET_VRING_ERR, 0, 1), t;

		CHECK(e >= 0 && fk.log[e].index == 1);
		evfd_drain(irqfd_of(NQ));
		if (e >= 0)
			evfd_signal((int)fk.log[e].val);
		for (t = 0; t < 200 && !(virtio_get_status(&vdev) &
					 VIRTIO_STATUS_NEEDS_RESET); t++)
			usleep(5000);
		CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET);
		CHECK_EQ(evfd_drain(irqfd_of(NQ)), 1);
	}
	/* Unmasked: the module's write is the interrupt; no PBA. */
	for (v = 0; v < NVEC; v++)
		evfd_drain(irqfd_of(v));
	module_signals(0);
	CHECK_EQ(evfd_drain(irqfd_of(0)), 1);
	CHECK_EQ(pba(), 0);

	/* Entry masked: queue 0 goes to a hold fd, its signals to the PBA. */
	at = fk.n;
	bar_wr(entry(0, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	CHECK_EQ(fake_count(VHOST_SET_VRING_CALL, at), 1);
	CHECK(fake_last_val(VHOST_SET_VRING_CALL, 0) >= 0 && fake_last_val(VHOST_SET_VRING_CALL, 0) != irqfd_of(0));
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 1), irqfd_of(1)); /* the other is untouched */
	CHECK_EQ(pba(), 0);
	module_signals(0);
	module_signals(0);
	CHECK_EQ(evfd_drain(irqfd_of(0)), 0);
	CHECK_EQ(pba(), 1u << 0);
	CHECK_EQ(pba(), 1u << 0); /* reading does not clear it */
	/* Unmask: switched back, the pending one delivered once. */
	at = fk.n;
	bar_wr(entry(0, 12), 4, 0);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 0), irqfd_of(0));
	CHECK_EQ(evfd_drain(irqfd_of(0)), 1);
	CHECK_EQ(pba(), 0);
	/* Masked and unmasked with nothing signalled: nothing delivered. */
	bar_wr(entry(0, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	bar_wr(entry(0, 12), 4, 0);
	CHECK_EQ(evfd_drain(irqfd_of(0)), 0);
	/* A signal that lands between the unmask's switch and its drain
	 * cannot be told apart; one on the hold fd is never lost: */
	bar_wr(entry(1, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	module_signals(1);
	bar_wr(entry(1, 12), 4, 0);
	CHECK_EQ(evfd_drain(irqfd_of(1)), 1);

	/* Function mask: every queue held; unmask delivers each. */
	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2,
	       PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	for (q = 0; q < NQ; q++) {
		CHECK(fake_last_val(VHOST_SET_VRING_CALL, q) != irqfd_of(q));
		module_signals(q);
	}
	CHECK_EQ(pba(), (1u << NQ) - 1);
	cfg_wr(msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	for (q = 0; q < NQ; q++) {
		CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, q), irqfd_of(q));
		CHECK_EQ(evfd_drain(irqfd_of(q)), 1);
	}
	CHECK_EQ(pba(), 0);

	/* A new vector while serving: the call fd follows it. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 0);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 1), irqfd_of(0));
	/* NO_VECTOR: held (nothing to deliver to). */
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, VIRTIO_MSI_NO_VECTOR);
	CHECK(fake_last_val(VHOST_SET_VRING_CALL, 1) != irqfd_of(0) && fake_last_val(VHOST_SET_VRING_CALL, 1) != irqfd_of(1));
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 1), irqfd_of(1));

	/* Reset: backend -1, then GET_VRING_BASE per queue; no more calls. */
	fk.ring_base[0] = 33;
	fk.ring_base[1] = 44;
	at = fk.n;
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, 0);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), NQ);
	CHECK_EQ(b->vhost.stop_base[0], 33);
	CHECK_EQ(b->vhost.stop_base[1], 44);
	at = fk.n;
	bar_wr(entry(0, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	bar_wr(entry(0, 12), 4, 0);
	CHECK_EQ(fake_count(VHOST_SET_VRING_CALL, at), 0);

	/* Again from the start: a fresh ring starts at 0. */
	at = fk.n;
	pci_driver_ok();
	CHECK_EQ(fake_count(VHOST_BLK_SET_BACKEND, at), 1);
	CHECK_EQ(fk.log[fake_find(VHOST_SET_VRING_BASE, at, 0)].val, 0);
	CHECK_EQ(b->vhost.starts, 2);

	/* Pause, no reset: the module stops and hands the rings' places
	 * back; resume starts it from them (nothing replayed), each call
	 * fd its vector's irqfd again, the driver's status untouched. */
	for (q = 0; q < NQ; q++)
		fk.ring_base[q] = (uint16_t)(700 + q);
	at = fk.n;
	virtio_dev_pause(&vdev);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), NQ);
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_DRIVER_OK);
	at = fk.n;
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	CHECK_EQ(fake_count(VHOST_BLK_SET_BACKEND, at), 1);
	for (q = 0; q < NQ; q++) {
		int vb = fake_find(VHOST_SET_VRING_BASE, at, (int)q);

		CHECK(vb >= 0 && fk.log[vb].val == 700 + q);
		CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, q), irqfd_of(q));
	}
	CHECK_EQ(b->vhost.starts, 3);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));

	/* Teardown stops the module and closes it. */
	at = fk.n;
	virtio_pci_destroy(&vp);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	blk_dev_destroy(b);
	CHECK_EQ(fk.closes, 1);
}

/*
 * Queue 1 of 3 left disabled: the module serves queues [0, 1) only, and
 * queue 2 goes back to notify() (its call fd never set), a warning naming
 * the gap.
 */
static void test_pci_gap(void)
{
	struct virtio_host host = { &fh_ops, &fh };
	struct blk_dev *b;
	int at;

	fake_reset();
	memset(&fh, 0, sizeof(fh));
	fh.next_gsi = 40;
	b = dev_create(3);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(pci_bus_init(&bus, WIN_BASE, WIN_SIZE), 0);
	CHECK_EQ(virtio_pci_init(&vp, &vdev, &host, &bus), 0);
	bar = cfg_rd(PCI_BASE_ADDRESS_0, 8) & ~PCI_BAR_FLAG_MASK;
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	msix_cap = vp.msix_cap;
	at = fk.n;
	pci_driver_ok_some(3, 1u << 1);
	at = fake_find(VHOST_BLK_SET_BACKEND, at, 0);
	CHECK(at >= 0 && fk.log[at].nq == 1);
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 0), irqfd_of(0));
	/* Queue 2 was handed its call fd, then taken back from the module:
	 * masking its vector switches nothing. */
	CHECK(!vp.direct[2] && vp.direct[0]);
	at = fk.n;
	bar_wr(entry(2, 12), 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	CHECK_EQ(fake_count(VHOST_SET_VRING_CALL, at), 0);
	bar_wr(entry(2, 12), 4, 0);
	at = fk.n;
	virtio_pci_destroy(&vp);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), 1);
	blk_dev_destroy(b);
}

/* ---- the device on virtio-mmio ---- */

static uint32_t mmio_rd(struct virtio_mmio *t, uint64_t off)
{
	uint8_t d[4] = { 0 };

	virtio_mmio_access(t, off, d, 4, false);
	return (uint32_t)le_get(d, 4);
}

static void mmio_wr(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	uint8_t d[4];

	le_put(d, 4, v);
	virtio_mmio_access(t, off, d, 4, true);
}

static void test_mmio(void)
{
	struct virtio_host host = { &fh_ops, &fh };
	static struct virtio_mmio t;
	struct blk_dev *b;
	int at;

	fake_reset();
	memset(&fh, 0, sizeof(fh));
	disk.cache = DISK_CACHE_UNSAFE; /* FLUSH is the module's no-op */
	b = dev_create(1);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(virtio_mmio_init(&t, &vdev, &host, 0xd0000000, 5), 0);
	mmio_wr(&t, 0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	mmio_wr(&t, 0x024, 1);
	mmio_wr(&t, 0x020, 1);
	mmio_wr(&t, 0x024, 0);
	mmio_wr(&t, 0x020, 1u << VIRTIO_BLK_F_FLUSH);
	mmio_wr(&t, 0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		VIRTIO_STATUS_FEATURES_OK);
	mmio_wr(&t, 0x030, 0);
	mmio_wr(&t, 0x038, QSZ);
	mmio_wr(&t, 0x080, 0x10000);
	mmio_wr(&t, 0x090, 0x10400);
	mmio_wr(&t, 0x0a0, 0x10800);
	mmio_wr(&t, 0x044, 1);
	CHECK_EQ(mmio_rd(&t, 0x060), 0); /* not served yet: the real ISR */
	at = fk.n;
	mmio_wr(&t, 0x070, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	CHECK_EQ(fake_count(VHOST_BLK_SET_BACKEND, at), 1);
	CHECK_EQ(fk.log[fake_find(VHOST_BLK_SET_BACKEND, at, 0)].flags,
		 VHOST_BLK_F_NO_FLUSH);
	/* The line's irqfd is the call fd; InterruptStatus shows the
	 * used-buffer bit while the module serves (mmio_direct_irq()). */
	CHECK_EQ(fake_last_val(VHOST_SET_VRING_CALL, 0), t.irq_fd);
	CHECK_EQ(mmio_rd(&t, 0x060), VIRTIO_ISR_QUEUE);
	mmio_wr(&t, 0x064, VIRTIO_ISR_QUEUE);
	CHECK_EQ(mmio_rd(&t, 0x060), VIRTIO_ISR_QUEUE);
	/* A config interrupt still shows its own bit. */
	virtio_config_changed(&vdev);
	CHECK_EQ(mmio_rd(&t, 0x060), VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	mmio_wr(&t, 0x064, VIRTIO_ISR_CONFIG | VIRTIO_ISR_QUEUE);
	/* Reset: stopped, and the register is the VMM's again. */
	at = fk.n;
	mmio_wr(&t, 0x070, 0);
	CHECK_EQ(fk.log[at].req, VHOST_BLK_SET_BACKEND);
	CHECK_EQ(fk.log[at].val, -1);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), 1);
	CHECK_EQ(mmio_rd(&t, 0x060), 0);
	disk.cache = DISK_CACHE_NONE;
	virtio_mmio_destroy(&t);
	blk_dev_destroy(b);
	CHECK_EQ(fk.closes, 1);
}

/* Images the module cannot serve are refused at creation. */
static void test_refused_images(void)
{
	struct blk_dev *b;

	fake_reset();
	disk.snapshot = true;
	b = dev_create(1);
	CHECK(b == NULL);
	CHECK_EQ(fk.opens, 0);
	disk.snapshot = false;
	/* The module missing: creation fails with its error. */
	fk.open_err = -ENOENT;
	b = dev_create(1);
	CHECK(b == NULL);
	fk.open_err = 0;
	b = dev_create(1);
	CHECK(b != NULL);
	blk_dev_destroy(b);
}

/* The module cannot honour a rate limit: refused at creation, before
 * /dev/vhost-blk is opened, and at run time; lifting none is fine. */
static void test_rate_limit_refused(void)
{
	struct blk_config cfg = {
		.disk = &disk, .num_queues = 1, .queue_size = QSZ,
		.engine = BLK_ENGINE_VHOST, .vhost_sys = &fake_sys,
		.rl.ops = { .size = 100, .refill_time_ms = 1000 },
	};
	struct rl_config none;
	struct blk_dev *b = NULL;

	memset(&none, 0, sizeof(none));
	fake_reset();
	CHECK_EQ(blk_dev_create(&b, &vdev, &cfg, &gm, "vdv"), -EINVAL);
	CHECK_EQ(fk.opens, 0);
	b = dev_create(1);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(blk_dev_set_rate_limit(b, &cfg.rl), -ENOTSUP);
	CHECK_EQ(blk_dev_set_rate_limit(b, &none), 0);
	blk_dev_destroy(b);
}

int main(void)
{
	gm_setup();
	test_open_sequence();
	test_open_errors();
	test_start_stop_restart();
	test_start_errors();
	/* One region for the device tests: the rings live in it. */
	memset(&gm, 0, sizeof(gm));
	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	if (disk_setup(true)) {
		printf("SKIP: no temporary file\n");
		return 77;
	}
	test_refused_images();
	test_rate_limit_refused();
	test_pci();
	test_pci_gap();
	test_mmio();
	close(disk.fd);
	return test_done();
}
