// SPDX-License-Identifier: Apache-2.0
/*
 * PCI host bridge and config space model: both config mechanisms reach the
 * same bytes, absent functions read all ones, 64-bit BAR sizing and moves
 * (with bar_moved), read-only fields and capabilities survive all-ones
 * writes, the capability walk, odd-width and misaligned accesses, BAR
 * window dispatch that follows the BAR and COMMAND.MEMORY, no
 * bus-wide lock held while a device's config callback blocks, and the
 * bus's snapshot state (CONFIG_ADDRESS, the host bridge's writable
 * bytes) through a state file into a fresh bus.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "devices/pci.h"
#include "snap_roundtrip.h"
#include "test.h"
#include "util/le.h"

#define WIN_BASE 0xc0000000ULL
#define WIN_SIZE 0x20000000ULL
#define BAR0_SIZE 0x4000ULL
#define BAR2_SIZE 0x1000ULL
#define VCAP_BODY 6   /* vendor cap: len byte, 4 read-only, 1 writable */
#define XCAP_BODY 10  /* MSI-X-shaped cap: control + 2 dwords */

struct moved {
	int bar;
	uint64_t old, new_addr;
};

struct fixture {
	struct pci_bus bus;
	struct pci_dev dev;
	int vcap, xcap;
	struct moved moves[16];
	int nr_moves;
	/* BAR handler log */
	int bar_calls;
	uint64_t bar_off;
	unsigned int bar_len;
	bool bar_write;
	uint64_t bar_val;
	/* config hook log */
	int hook_writes;
	unsigned int hook_off, hook_len;
};

static struct fixture f;

static void fake_bar_moved(struct pci_dev *d, int bar, uint64_t old,
			   uint64_t new_addr)
{
	struct fixture *fx = d->opaque;

	if (fx->nr_moves < 16)
		fx->moves[fx->nr_moves] = (struct moved){ bar, old, new_addr };
	fx->nr_moves++;
}

static void fake_hook(struct pci_dev *d, unsigned int off, unsigned int len,
		      bool is_write)
{
	struct fixture *fx = d->opaque;

	if (!is_write)
		return;
	fx->hook_writes++;
	fx->hook_off = off;
	fx->hook_len = len;
}

/* Reads return bytes 0xa0 + offset; writes are logged. */
static void fake_bar(void *opaque, uint64_t off, uint8_t *data,
		     unsigned int len, bool is_write)
{
	struct fixture *fx = opaque;
	unsigned int i;

	fx->bar_calls++;
	fx->bar_off = off;
	fx->bar_len = len;
	fx->bar_write = is_write;
	if (is_write) {
		fx->bar_val = le_get(data, len);
		return;
	}
	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(0xa0 + off + i);
}

static void setup(void)
{
	const struct pci_ids ids = {
		.vendor = 0x1234, .device = 0x5678, .subsys_vendor = 0x1af4,
		.subsys_id = 0x0042, .class_code = 0x018000, .revision = 3,
	};
	uint8_t vbody[VCAP_BODY] = { 8, 0x11, 0x22, 0x33, 0x44, 0x55 };
	uint8_t vmask[VCAP_BODY] = { 0, 0, 0, 0, 0, 0xff };
	uint8_t xbody[XCAP_BODY] = { 3, 0, 0, 0x40, 0, 0, 0, 0x50, 0, 0 };
	uint8_t xmask[XCAP_BODY] = { 0, 0xc0 };

	memset(&f, 0, sizeof(f));
	CHECK_EQ(pci_bus_init(&f.bus, WIN_BASE, WIN_SIZE), 0);
	pci_dev_init(&f.dev, &ids);
	f.dev.opaque = &f;
	f.dev.bar_moved = fake_bar_moved;
	f.dev.cfg_hook = fake_hook;
	CHECK_EQ(pci_dev_set_bar(&f.dev, 0, BAR0_SIZE, false, fake_bar, &f),
		 0);
	CHECK_EQ(pci_dev_set_bar(&f.dev, 2, BAR2_SIZE, true, fake_bar, &f), 0);
	f.vcap = pci_add_cap(&f.dev, PCI_CAP_ID_VNDR, vbody, sizeof(vbody),
			     vmask);
	f.xcap = pci_add_cap(&f.dev, PCI_CAP_ID_MSIX, xbody, sizeof(xbody),
			     xmask);
	CHECK_EQ(f.vcap, PCI_CAP_START);
	CHECK_EQ(f.xcap, PCI_CAP_START + 8);
	CHECK_EQ(pci_bus_add(&f.bus, &f.dev), 0);
	CHECK_EQ(f.dev.slot, 1);
}

static uint64_t ecam_rd(unsigned int dev, unsigned int fn, unsigned int reg,
			unsigned int len)
{
	uint8_t b[8];

	memset(b, 0x5a, sizeof(b));
	pci_ecam_access(&f.bus, PCI_ECAM_OFFSET(0, dev, fn, reg), b, len,
			false);
	return le_get(b, len);
}

static void ecam_wr(unsigned int dev, unsigned int reg, unsigned int len,
		    uint64_t v)
{
	uint8_t b[8];

	le_put(b, len, v);
	pci_ecam_access(&f.bus, PCI_ECAM_OFFSET(0, dev, 0, reg), b, len, true);
}

static void io_addr(unsigned int bus, unsigned int dev, unsigned int fn,
		    unsigned int reg)
{
	uint8_t b[4];

	le_put(b, 4, 0x80000000u | bus << 16 | dev << 11 | fn << 8 |
			     (reg & 0xfc));
	pci_cfg_io_access(&f.bus, 0, b, 4, true);
}

static uint64_t io_rd(unsigned int bus, unsigned int dev, unsigned int fn,
		      unsigned int reg, unsigned int len)
{
	uint8_t b[4];

	io_addr(bus, dev, fn, reg);
	memset(b, 0x5a, sizeof(b));
	pci_cfg_io_access(&f.bus, 4 + (reg & 3), b, len, false);
	return le_get(b, len);
}

static void io_wr(unsigned int dev, unsigned int reg, unsigned int len,
		  uint64_t v)
{
	uint8_t b[4];

	io_addr(0, dev, 0, reg);
	le_put(b, len, v);
	pci_cfg_io_access(&f.bus, 4 + (reg & 3), b, len, true);
}

static uint64_t mmio_rd(uint64_t addr, unsigned int len)
{
	uint8_t b[8] = { 0 };

	pci_mmio_access(&f.bus, addr - WIN_BASE, b, len, false);
	return le_get(b, len);
}

static void snapshot(unsigned int dev, uint8_t *out)
{
	unsigned int i;

	for (i = 0; i < PCI_CFG_SPACE_SIZE; i++)
		out[i] = (uint8_t)ecam_rd(dev, 0, i, 1);
}

/* Host bridge in slot 0, seen the same way by both mechanisms. */
static void test_host_bridge(void)
{
	CHECK_EQ(ecam_rd(0, 0, PCI_VENDOR_ID, 2), 0x1b36);
	CHECK_EQ(io_rd(0, 0, 0, PCI_VENDOR_ID, 4), ecam_rd(0, 0, 0, 4));
	CHECK_EQ(io_rd(0, 0, 0, PCI_REVISION_ID, 4) >> 8, 0x060000);
	CHECK_EQ(ecam_rd(0, 0, PCI_HEADER_TYPE, 1), 0);
	/* No BARs: sizing reads 0. */
	ecam_wr(0, PCI_BASE_ADDRESS_0, 4, 0xffffffff);
	CHECK_EQ(ecam_rd(0, 0, PCI_BASE_ADDRESS_0, 4), 0);
}

/* Ports 0xcf8/0xcfc and ECAM reach the same config space. */
static void test_mechanisms_agree(void)
{
	unsigned int reg;
	uint8_t b[4];

	for (reg = 0; reg < PCI_CFG_SPACE_SIZE; reg += 4)
		CHECK_EQ(io_rd(0, 1, 0, reg, 4), ecam_rd(1, 0, reg, 4));
	for (reg = 0; reg < 64; reg++)
		CHECK_EQ(io_rd(0, 1, 0, reg, 1), ecam_rd(1, 0, reg, 1));
	io_wr(1, PCI_LATENCY_TIMER, 1, 0x40);
	CHECK_EQ(ecam_rd(1, 0, PCI_LATENCY_TIMER, 1), 0x40);
	ecam_wr(1, PCI_INTERRUPT_LINE, 1, 0x0b);
	CHECK_EQ(io_rd(0, 1, 0, PCI_INTERRUPT_LINE, 1), 0x0b);
	CHECK_EQ(io_rd(0, 1, 0, PCI_DEVICE_ID, 2), 0x5678);

	/* CONFIG_ADDRESS: dword only, reserved bits read 0. */
	le_put(b, 4, 0xffffffff);
	pci_cfg_io_access(&f.bus, 0, b, 4, true);
	pci_cfg_io_access(&f.bus, 0, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0x80fffffc);
	b[0] = 0x06;
	pci_cfg_io_access(&f.bus, 1, b, 1, true);  /* 0xcf9: not ours */
	pci_cfg_io_access(&f.bus, 3, b, 1, true);
	le_put(b, 4, 0);
	pci_cfg_io_access(&f.bus, 2, b, 4, true);  /* straddles 0xcfc */
	pci_cfg_io_access(&f.bus, 2, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0xffffffff);
	pci_cfg_io_access(&f.bus, 0, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0x80fffffc);
	pci_cfg_io_access(&f.bus, 0, b, 2, false);
	CHECK_EQ(le_get(b, 2), 0xffff);

	/* Enable bit clear: data port reads all ones, writes vanish. */
	le_put(b, 4, 1u << 11 | PCI_LATENCY_TIMER);
	pci_cfg_io_access(&f.bus, 0, b, 4, true);
	pci_cfg_io_access(&f.bus, 4, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0xffffffff);
	b[0] = 0x99;
	pci_cfg_io_access(&f.bus, 5, b, 1, true);
	CHECK_EQ(ecam_rd(1, 0, PCI_LATENCY_TIMER, 1), 0x40);
}

/* Absent devices, functions and buses read all ones. */
static void test_absent(void)
{
	static const struct {
		unsigned int bus, dev, fn;
	} rows[] = {
		{ 0, 2, 0 }, { 0, 31, 0 }, { 0, 0, 1 }, { 0, 1, 7 },
		{ 1, 0, 0 }, { 255, 1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t b[4];

		CHECK_EQ(io_rd(rows[i].bus, rows[i].dev, rows[i].fn, 0, 4),
			 0xffffffff);
		CHECK_EQ(io_rd(rows[i].bus, rows[i].dev, rows[i].fn, 0x3e, 2),
			 0xffff);
		memset(b, 0, sizeof(b));
		pci_ecam_access(&f.bus, PCI_ECAM_OFFSET(rows[i].bus,
							rows[i].dev,
							rows[i].fn, 8),
				b, 4, false);
		CHECK_EQ(le_get(b, 4), 0xffffffff);
		pci_ecam_access(&f.bus, PCI_ECAM_OFFSET(rows[i].bus,
							rows[i].dev,
							rows[i].fn, 4),
				b, 4, true);
	}
	/* A present function's extended space reads 0. */
	CHECK_EQ(ecam_rd(1, 0, 0x100, 4), 0);
	CHECK_EQ(ecam_rd(1, 0, 0xffc, 4), 0);
	CHECK_EQ(ecam_rd(1, 0, 0x800, 8), 0);
}

/* 64-bit BAR sizing: write all ones to each half, read ~(size-1)|type. */
static void test_bar_sizing(void)
{
	static const struct {
		unsigned int bar;
		uint32_t lo_mask, hi_mask;
		uint64_t addr;
	} rows[] = {
		{ 0, 0xffffc004, 0xffffffff, WIN_BASE },
		{ 2, 0xfffff00c, 0xffffffff, WIN_BASE + BAR0_SIZE },
		{ 4, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned int reg = PCI_BASE_ADDRESS_0 + 4 * rows[i].bar;
		uint32_t lo = (uint32_t)ecam_rd(1, 0, reg, 4);
		uint32_t hi = (uint32_t)ecam_rd(1, 0, reg + 4, 4);

		CHECK_EQ(((uint64_t)hi << 32 | lo) & ~PCI_BAR_FLAG_MASK,
			 rows[i].addr);
		CHECK_EQ(lo & PCI_BAR_FLAG_MASK,
			 rows[i].lo_mask & PCI_BAR_FLAG_MASK);
		ecam_wr(1, reg, 4, 0xffffffff);
		ecam_wr(1, reg + 4, 4, 0xffffffff);
		CHECK_EQ(ecam_rd(1, 0, reg, 4), rows[i].lo_mask);
		CHECK_EQ(ecam_rd(1, 0, reg + 4, 4), rows[i].hi_mask);
		ecam_wr(1, reg, 4, lo);
		ecam_wr(1, reg + 4, 4, hi);
		CHECK_EQ(ecam_rd(1, 0, reg, 4), lo);
		CHECK_EQ(ecam_rd(1, 0, reg + 4, 4), hi);
	}
	/* Decoding was off throughout: nothing moved. */
	CHECK_EQ(f.nr_moves, 0);
	/* No expansion ROM. */
	ecam_wr(1, PCI_ROM_ADDRESS, 4, 0xfffff800);
	CHECK_EQ(ecam_rd(1, 0, PCI_ROM_ADDRESS, 4), 0);
}

/* bar_moved follows decode on, moves of either half, decode off. */
static void test_bar_moved(void)
{
	uint64_t a0 = WIN_BASE, a2 = WIN_BASE + BAR0_SIZE;
	uint64_t n0 = WIN_BASE + 0x100000;

	f.nr_moves = 0;
	ecam_wr(1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	CHECK_EQ(f.nr_moves, 2);
	CHECK(f.moves[0].bar == 0 && f.moves[0].old == PCI_BAR_UNMAPPED &&
	      f.moves[0].new_addr == a0);
	CHECK(f.moves[1].bar == 2 && f.moves[1].old == PCI_BAR_UNMAPPED &&
	      f.moves[1].new_addr == a2);
	/* The same value again changes nothing. */
	ecam_wr(1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	ecam_wr(1, PCI_BASE_ADDRESS_0, 4, (uint32_t)a0);
	CHECK_EQ(f.nr_moves, 2);

	ecam_wr(1, PCI_BASE_ADDRESS_0, 4, (uint32_t)n0);
	CHECK_EQ(f.nr_moves, 3);
	CHECK(f.moves[2].bar == 0 && f.moves[2].old == a0 &&
	      f.moves[2].new_addr == n0);
	/* The high half alone moves it above 4 GiB; the 8-byte write back. */
	ecam_wr(1, PCI_BASE_ADDRESS_0 + 4, 4, 0x1);
	CHECK_EQ(f.nr_moves, 4);
	CHECK(f.moves[3].old == n0 && f.moves[3].new_addr == (n0 | 1ULL << 32));
	ecam_wr(1, PCI_BASE_ADDRESS_0, 8, n0);
	CHECK_EQ(f.nr_moves, 5);
	CHECK(f.moves[4].old == (n0 | 1ULL << 32) && f.moves[4].new_addr == n0);

	ecam_wr(1, PCI_COMMAND, 2, 0);
	CHECK_EQ(f.nr_moves, 7);
	CHECK(f.moves[5].bar == 0 && f.moves[5].old == n0 &&
	      f.moves[5].new_addr == PCI_BAR_UNMAPPED);
	CHECK(f.moves[6].bar == 2 && f.moves[6].old == a2 &&
	      f.moves[6].new_addr == PCI_BAR_UNMAPPED);
	/* Moving while not decoded is silent. */
	ecam_wr(1, PCI_BASE_ADDRESS_0, 4, (uint32_t)a0);
	CHECK_EQ(f.nr_moves, 7);
}

/* All-ones written everywhere leaves read-only bytes alone. */
static void test_read_only(void)
{
	static const unsigned int ro[] = {
		PCI_VENDOR_ID, PCI_VENDOR_ID + 1, PCI_DEVICE_ID,
		PCI_DEVICE_ID + 1, PCI_STATUS, PCI_STATUS + 1,
		PCI_REVISION_ID, PCI_CLASS_PROG, PCI_CLASS_PROG + 1,
		PCI_CLASS_PROG + 2, PCI_HEADER_TYPE, PCI_SUBSYSTEM_VENDOR_ID,
		PCI_SUBSYSTEM_ID + 1, PCI_CAPABILITY_LIST, PCI_INTERRUPT_PIN,
		0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, /* vendor cap */
		0x48, 0x49, 0x4a, 0x4c, 0x4f, 0x50, 0x53, /* MSI-X-like cap */
		0x80, 0xff,
	};
	uint8_t before[PCI_CFG_SPACE_SIZE], after[PCI_CFG_SPACE_SIZE];
	unsigned int reg;
	size_t i;

	snapshot(1, before);
	for (reg = 0; reg < PCI_CFG_SPACE_SIZE; reg += 4)
		ecam_wr(1, reg, 4, 0xffffffff);
	for (reg = 0; reg < PCI_CFG_SPACE_SIZE; reg++)
		io_wr(1, reg, 1, 0xff);
	snapshot(1, after);
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		CHECK_EQ(after[ro[i]], before[ro[i]]);
	CHECK_EQ(before[PCI_STATUS] & PCI_STATUS_CAP_LIST, PCI_STATUS_CAP_LIST);
	/* The writable ones took the write. */
	CHECK_EQ(le_get(after + PCI_COMMAND, 2),
		 PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
		 PCI_COMMAND_INTX_DISABLE);
	CHECK_EQ(after[PCI_CACHE_LINE_SIZE], 0xff);
	CHECK_EQ(after[0x47], 0xff);                 /* vendor cap byte */
	CHECK_EQ(le_get(after + 0x4a, 2), 0xc003);    /* enable|mask|size */
	CHECK_EQ(f.hook_writes > 0, 1);
	/* Restore a sane state for what follows. */
	ecam_wr(1, PCI_COMMAND, 2, 0);
	ecam_wr(1, PCI_BASE_ADDRESS_0, 8, WIN_BASE);
	ecam_wr(1, PCI_BASE_ADDRESS_0 + 8, 8, WIN_BASE + BAR0_SIZE);
}

/* From 0x34 every capability is visited once, ending at 0. */
static void test_cap_walk(void)
{
	static const uint8_t ids[] = { PCI_CAP_ID_VNDR, PCI_CAP_ID_MSIX };
	unsigned int ptr, n = 0;
	struct pci_dev d;
	const struct pci_ids none = { 0 };
	uint8_t big[300] = { 0 };
	int off, last = 0;

	for (ptr = (unsigned int)ecam_rd(1, 0, PCI_CAPABILITY_LIST, 1);
	     ptr && n < 48; n++) {
		CHECK(ptr >= PCI_CAP_START && ptr < PCI_CFG_SPACE_SIZE &&
		      !(ptr & 3));
		if (n < sizeof(ids))
			CHECK_EQ(ecam_rd(1, 0, ptr, 1), ids[n]);
		ptr = (unsigned int)ecam_rd(1, 0, ptr + 1, 1);
	}
	CHECK_EQ(n, sizeof(ids));
	CHECK_EQ(ptr, 0);

	/* The builder stops at the end of config space. */
	pci_dev_init(&d, &none);
	CHECK_EQ(pci_add_cap(&d, 0x09, big, sizeof(big), NULL), -ENOSPC);
	CHECK_EQ(pci_add_cap(&d, 0x09, big, 150, NULL), PCI_CAP_START);
	while ((off = pci_add_cap(&d, 0x09, big, 6, NULL)) > 0)
		last = off;
	CHECK_EQ(off, -ENOSPC);
	CHECK(last > PCI_CAP_START && last + 8 <= PCI_CFG_SPACE_SIZE);
	CHECK_EQ(d.cfg[last + 1], 0);
}

/* Odd widths and misaligned offsets: split by byte, never spill over. */
static void test_odd_access(void)
{
	uint8_t before[PCI_CFG_SPACE_SIZE], after[PCI_CFG_SPACE_SIZE];
	uint8_t b[8];

	snapshot(1, before);
	CHECK_EQ(ecam_rd(1, 0, 3, 2), before[3] | before[4] << 8);
	CHECK_EQ(io_rd(0, 1, 0, 3, 1), before[3]);
	CHECK_EQ(io_rd(0, 1, 0, 2, 2), le_get(before + 2, 2));
	CHECK_EQ(ecam_rd(1, 0, 0xfe, 4), le_get(before + 0xfe, 2));
	CHECK_EQ(ecam_rd(1, 0, 0xfc, 8), le_get(before + 0xfc, 4));
	CHECK_EQ(ecam_rd(1, 0, 0x41, 3), le_get(before + 0x41, 3));

	/* 2 bytes at 0x0b: class byte read only, cache line writable. */
	ecam_wr(1, 0x0b, 2, 0x2211);
	before[PCI_CACHE_LINE_SIZE] = 0x22;
	/* 4 bytes at 0xfe and 8 at 0xfc: read only, past the end nothing. */
	ecam_wr(1, 0xfe, 4, 0xffffffff);
	ecam_wr(1, 0xfc, 8, UINT64_MAX);
	ecam_wr(1, 0x100, 4, 0xffffffff);
	/* cf8 data port at +1, 2 bytes: latency timer and header type. */
	io_wr(1, PCI_LATENCY_TIMER, 2, 0x7733);
	before[PCI_LATENCY_TIMER] = 0x33;
	/* Lengths the handlers refuse. */
	memset(b, 0xff, sizeof(b));
	pci_ecam_access(&f.bus, PCI_ECAM_OFFSET(0, 1, 0, 0x3c), b, 0, true);
	pci_cfg_io_access(&f.bus, 6, b, 4, true);
	pci_cfg_io_access(&f.bus, 4, b, 8, true);
	snapshot(1, after);
	CHECK(!memcmp(before, after, sizeof(before)));
	CHECK_EQ(f.nr_moves, 0);
}

/* The BAR window reaches the BAR that decodes the address now. */
static void test_mmio_dispatch(void)
{
	uint64_t n0 = WIN_BASE + 0x200000;
	uint8_t b[4];

	f.bar_calls = 0;
	CHECK_EQ(mmio_rd(WIN_BASE + 0x10, 4), 0xffffffff);
	CHECK_EQ(f.bar_calls, 0);
	ecam_wr(1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	CHECK_EQ(mmio_rd(WIN_BASE + 0x10, 4), 0xb3b2b1b0);
	CHECK(f.bar_calls == 1 && f.bar_off == 0x10 && f.bar_len == 4 &&
	      !f.bar_write);
	le_put(b, 2, 0xbeef);
	pci_mmio_access(&f.bus, BAR0_SIZE + 6, b, 2, true);
	CHECK(f.bar_calls == 2 && f.bar_off == 6 && f.bar_len == 2 &&
	      f.bar_write && f.bar_val == 0xbeef);
	/* Straddling the end of BAR 0 or past BAR 2: nobody. */
	CHECK_EQ(mmio_rd(WIN_BASE + BAR0_SIZE - 2, 4), 0xffffffff);
	CHECK_EQ(mmio_rd(WIN_BASE + BAR0_SIZE + BAR2_SIZE, 4), 0xffffffff);
	CHECK_EQ(f.bar_calls, 2);

	/* Moved: old address dead, new one live. */
	ecam_wr(1, PCI_BASE_ADDRESS_0, 4, (uint32_t)n0);
	CHECK_EQ(mmio_rd(WIN_BASE + 0x10, 4), 0xffffffff);
	CHECK_EQ(mmio_rd(n0 + 0x20, 1), 0xc0);
	CHECK(f.bar_calls == 3 && f.bar_off == 0x20);

	ecam_wr(1, PCI_COMMAND, 2, PCI_COMMAND_IO);
	CHECK_EQ(mmio_rd(n0 + 0x20, 1), 0xff);
	CHECK_EQ(f.bar_calls, 3);
	ecam_wr(1, PCI_BASE_ADDRESS_0, 4, (uint32_t)WIN_BASE);
}

/* ---- no bus-wide lock across a device's config callbacks ---- */

#define BLOCK_REG (PCI_CAP_START + 7) /* the vendor cap's writable byte */
#define BLOCK_MAX_MS 10000 /* the blocked write gives up after this */
#define OTHER_MAX_MS 2000  /* the other device must answer sooner */

struct blocker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool entered, released;
	int other_done;     /* accesses to the other device that returned */
	uint64_t other_vendor, other_io, other_bar;
	bool via_io;        /* block through 0xcf8/0xcfc instead of ECAM */
	struct pci_bus bus;
	struct pci_dev slow, other;
};

static struct blocker bl;

/* The slow device's config write: a reset waiting for queued disk I/O. */
static void block_hook(struct pci_dev *d, unsigned int off, unsigned int len,
		       bool is_write)
{
	struct timespec until;

	(void)d;
	if (!is_write || off > BLOCK_REG || off + len <= BLOCK_REG)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += BLOCK_MAX_MS / 1000;
	pthread_mutex_lock(&bl.lock);
	bl.entered = true;
	pthread_cond_broadcast(&bl.cond);
	while (!bl.released &&
	       pthread_cond_timedwait(&bl.cond, &bl.lock, &until) == 0)
		;
	pthread_mutex_unlock(&bl.lock);
}

static void *slow_writer(void *arg)
{
	uint8_t b[4] = { 1 };

	(void)arg;
	if (bl.via_io) {
		le_put(b, 4, 0x80000000u | (unsigned int)bl.slow.slot << 11 |
				     (BLOCK_REG & 0xfc));
		pci_cfg_io_access(&bl.bus, 0, b, 4, true);
		b[0] = 1;
		pci_cfg_io_access(&bl.bus, 4 + (BLOCK_REG & 3), b, 1, true);
	} else {
		pci_ecam_access(&bl.bus,
				PCI_ECAM_OFFSET(0, bl.slow.slot, 0, BLOCK_REG),
				b, 1, true);
	}
	return NULL;
}

/* Another vCPU: the other device's config space (both ways) and BAR. */
static void *other_reader(void *arg)
{
	uint8_t b[4];

	(void)arg;
	memset(b, 0, sizeof(b));
	pci_ecam_access(&bl.bus, PCI_ECAM_OFFSET(0, bl.other.slot, 0, 0), b,
			2, false);
	bl.other_vendor = le_get(b, 2);
	le_put(b, 4, 0x80000000u | (unsigned int)bl.other.slot << 11);
	pci_cfg_io_access(&bl.bus, 0, b, 4, true);
	memset(b, 0, sizeof(b));
	pci_cfg_io_access(&bl.bus, 4, b, 4, false);
	bl.other_io = le_get(b, 4);
	memset(b, 0, sizeof(b));
	pci_mmio_access(&bl.bus, 0x10000, b, 1, false);
	bl.other_bar = b[0];
	pthread_mutex_lock(&bl.lock);
	bl.other_done++;
	pthread_cond_broadcast(&bl.cond);
	pthread_mutex_unlock(&bl.lock);
	return NULL;
}

static bool wait_for(bool *flag, int *count, int want, int ms)
{
	struct timespec until;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&bl.lock);
	while (!(flag ? *flag : *count >= want) &&
	       pthread_cond_timedwait(&bl.cond, &bl.lock, &until) == 0)
		;
	ok = flag ? *flag : *count >= want;
	pthread_mutex_unlock(&bl.lock);
	return ok;
}

static void blocker_round(bool via_io)
{
	pthread_t slow_t, other_t;
	bool answered;

	bl.via_io = via_io;
	bl.entered = bl.released = false;
	bl.other_done = 0;
	CHECK_EQ(pthread_create(&slow_t, NULL, slow_writer, NULL), 0);
	CHECK(wait_for(&bl.entered, NULL, 0, BLOCK_MAX_MS));
	CHECK_EQ(pthread_create(&other_t, NULL, other_reader, NULL), 0);
	answered = wait_for(NULL, &bl.other_done, 1, OTHER_MAX_MS);
	if (!answered)
		fprintf(stderr, "config access to another device blocked "
				"behind a blocked config write (%s)\n",
			via_io ? "0xcf8" : "ECAM");
	CHECK(answered);
	pthread_mutex_lock(&bl.lock);
	bl.released = true;
	pthread_cond_broadcast(&bl.cond);
	pthread_mutex_unlock(&bl.lock);
	pthread_join(slow_t, NULL);
	pthread_join(other_t, NULL);
	CHECK_EQ(bl.other_vendor, 0x1234);
	CHECK_EQ(bl.other_io, 0x00021234);
	CHECK_EQ(bl.other_bar, 0xa0);
	CHECK_EQ(bl.slow.cfg[BLOCK_REG], 1); /* the write itself landed */
	bl.slow.cfg[BLOCK_REG] = 0;
}

/*
 * A device whose config write blocks (reset waiting for its I/O) holds up
 * only itself: another vCPU's config reads (ECAM and 0xcf8) and BAR
 * accesses of another device complete meanwhile.
 */
static void test_cfg_no_bus_lock(void)
{
	const struct pci_ids slow_ids = { .vendor = 0x1234, .device = 1 };
	const struct pci_ids other_ids = { .vendor = 0x1234, .device = 2 };
	uint8_t vbody[VCAP_BODY] = { 8, 0, 0, 0, 0, 0 };
	uint8_t vmask[VCAP_BODY] = { 0, 0, 0, 0, 0, 0xff };
	uint8_t b[2];

	memset(&bl, 0, sizeof(bl));
	pthread_mutex_init(&bl.lock, NULL);
	pthread_cond_init(&bl.cond, NULL);
	CHECK_EQ(pci_bus_init(&bl.bus, 0, 0x100000), 0);
	pci_dev_init(&bl.slow, &slow_ids);
	bl.slow.cfg_hook = block_hook;
	CHECK_EQ(pci_add_cap(&bl.slow, PCI_CAP_ID_VNDR, vbody, sizeof(vbody),
			     vmask), PCI_CAP_START);
	CHECK_EQ(pci_dev_set_bar(&bl.slow, 0, 0x10000, false, fake_bar, &f),
		 0);
	pci_dev_init(&bl.other, &other_ids);
	CHECK_EQ(pci_dev_set_bar(&bl.other, 0, 0x10000, false, fake_bar, &f),
		 0);
	CHECK_EQ(pci_bus_add(&bl.bus, &bl.slow), 0);
	CHECK_EQ(pci_bus_add(&bl.bus, &bl.other), 0);
	le_put(b, 2, PCI_COMMAND_MEMORY);
	pci_ecam_access(&bl.bus, PCI_ECAM_OFFSET(0, bl.other.slot, 0,
						 PCI_COMMAND), b, 2, true);
	blocker_round(false);
	blocker_round(true);
	pci_bus_remove(&bl.bus, &bl.other);
	pci_bus_remove(&bl.bus, &bl.slow);
	pci_bus_destroy(&bl.bus);
}

/* Slots and window run out cleanly; a removed device reads all ones. */
static void test_bus_limits(void)
{
	static struct pci_dev devs[PCI_MAX_SLOTS];
	const struct pci_ids ids = { .vendor = 0x1234, .device = 1 };
	struct pci_bus small;
	unsigned int i;
	int ret = 0;

	CHECK_EQ(pci_bus_init(&small, 0, 0), -EINVAL);
	CHECK_EQ(pci_bus_init(&small, UINT64_MAX - 0xfff, 0x2000), -EINVAL);
	CHECK_EQ(pci_bus_init(&small, 0x10000000, 0x10000), 0);
	for (i = 0; i < 3; i++) {
		pci_dev_init(&devs[i], &ids);
		CHECK_EQ(pci_dev_set_bar(&devs[i], 0, 0x8000, false, fake_bar,
					 &f), 0);
		ret = pci_bus_add(&small, &devs[i]);
	}
	CHECK_EQ(ret, -ENOSPC); /* the third BAR does not fit 64 KiB */
	CHECK_EQ(le_get(devs[1].cfg + PCI_BASE_ADDRESS_0, 4),
		 0x10008000 | PCI_BAR_MEM_TYPE_64);
	CHECK_EQ(pci_dev_set_bar(&devs[3], 1, 0x1000, false, fake_bar, &f),
		 -EINVAL);
	CHECK_EQ(pci_dev_set_bar(&devs[3], 0, 0x1800, false, fake_bar, &f),
		 -EINVAL);
	CHECK_EQ(pci_dev_set_bar(&devs[3], 0, 8, false, fake_bar, &f),
		 -EINVAL);
	pci_bus_destroy(&small);

	for (i = 0; i < PCI_MAX_SLOTS; i++) {
		pci_dev_init(&devs[i], &ids);
		ret = pci_bus_add(&f.bus, &devs[i]);
		if (ret)
			break;
	}
	CHECK_EQ(ret, -ENOSPC);
	CHECK_EQ(i, PCI_MAX_SLOTS - 2); /* bridge and fixture hold two */
	CHECK_EQ(ecam_rd(31, 0, 0, 2), 0x1234);
	pci_bus_remove(&f.bus, &devs[29]);
	CHECK_EQ(ecam_rd(31, 0, 0, 4), 0xffffffff);
	CHECK_EQ(devs[29].slot, -1);
}

static void bus_save(void *bus, struct snap_writer *w)
{
	pci_bus_save(bus, w);
}

/*
 * A snapshot taken between a vCPU's CONFIG_ADDRESS write and its data
 * access: the restored bus answers that access as the saved one would,
 * and the host bridge keeps what the guest wrote to it.
 */
static void test_bus_snapshot(void)
{
	struct pci_bus nb;
	struct snap_rt rt;
	struct snap_reader r;
	uint8_t b[4];

	ecam_wr(0, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	ecam_wr(0, PCI_CACHE_LINE_SIZE, 1, 0x10);
	ecam_wr(0, PCI_INTERRUPT_LINE, 1, 0x0b);
	io_addr(0, 0, 0, PCI_VENDOR_ID);
	CHECK(snap_rt_make(&rt, bus_save, &f.bus));
	CHECK_EQ(pci_bus_init(&nb, WIN_BASE, WIN_SIZE), 0);
	r = snap_rt_short(&rt);
	CHECK_EQ(pci_bus_load(&nb, &r), -EINVAL);
	r = rt.r;
	CHECK_EQ(pci_bus_load(&nb, &r), 0);
	CHECK_EQ(nb.config_address, 0x80000000u);
	memset(b, 0, sizeof(b));
	pci_cfg_io_access(&nb, 4, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0x00081b36u);
	CHECK_EQ(le_get(nb.host_bridge.cfg + PCI_COMMAND, 2),
		 PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	CHECK_EQ(nb.host_bridge.cfg[PCI_CACHE_LINE_SIZE], 0x10);
	CHECK_EQ(nb.host_bridge.cfg[PCI_INTERRUPT_LINE], 0x0b);
	pci_bus_destroy(&nb);
	/* Another bridge (its read-only device ID) is refused, and the
	 * bus it was loaded into keeps its own bytes. */
	rt.buf[rt.r.p - rt.buf + 4 + PCI_DEVICE_ID] ^= 1;
	CHECK_EQ(pci_bus_init(&nb, WIN_BASE, WIN_SIZE), 0);
	r = rt.r;
	CHECK_EQ(pci_bus_load(&nb, &r), -EINVAL);
	CHECK_EQ(le_get(nb.host_bridge.cfg + PCI_DEVICE_ID, 2), 0x0008);
	CHECK_EQ(nb.config_address, 0);
	pci_bus_destroy(&nb);
	free(rt.buf);
}

int main(void)
{
	setup();
	test_host_bridge();
	test_mechanisms_agree();
	test_absent();
	test_bar_sizing();
	test_bar_moved();
	test_read_only();
	test_cap_walk();
	f.nr_moves = 0;
	test_odd_access();
	test_mmio_dispatch();
	test_cfg_no_bus_lock();
	test_bus_limits();
	test_bus_snapshot();
	pci_bus_destroy(&f.bus);
	return test_done();
}
