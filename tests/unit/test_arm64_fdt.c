// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the arm64 device tree (src/vmm/aarch64/dtb.c): trees for
 * 1, 2 and 8 CPUs and each disk layout (none, 1 or 2 virtio-mmio, PCI only,
 * mmio + PCI) are read back with libfdt (nodes, reg, interrupts,
 * compatible, cells, phandles, /chosen, PSCI, cpu reg = MPIDR) and
 * decompiled with dtc, which must exit 0 and print nothing. Then: a buffer
 * too small at every size, and one table row per rejected description.
 * The VM generation ID's node, only when the machine has the device.
 * Exits 77 (skip) only when dtc is missing, after the libfdt checks pass.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libfdt.h>

#include "dtb.h"
#include "layout.h"
#include "test.h"
#include "vmm/arch.h"

#define MIB (1ULL << 20)
#define BUF_SIZE (64 * 1024)
#define CMDLINE "console=ttyAMA0 root=/dev/vda rw panic=-1"
#define INITRD_START 0x7f000000ULL
#define INITRD_SIZE 0x345000ULL
#define MPIDR_RES1 (1ULL << 31) /* MPIDR_EL1 bit 31 reads as one */

enum disks { DISK_NONE, DISK_MMIO1, DISK_MMIO2, DISK_PCI, DISK_MMIO_PCI };

static const char *const disk_names[] = {
	"no disk", "1 mmio", "2 mmio", "pci only", "mmio+pci",
};

static uint8_t buf[BUF_SIZE + 64];
static uint64_t mpidrs[DTB_MAX_CPUS];
static struct dtb_dev mmio[2];
static struct dtb_pci pci;
static bool dtc_missing;

/* MPIDR_EL1 as KVM's reset_mpidr() makes it: 16 vCPUs per Aff1 cluster. */
static uint64_t kvm_mpidr(unsigned int id)
{
	return MPIDR_RES1 | (id & 0xf) | ((uint64_t)(id >> 4 & 0xff) << 8) |
	       ((uint64_t)(id >> 12 & 0xff) << 16);
}

static void make_desc(struct dtb_desc *d, unsigned int cpus, enum disks disk)
{
	unsigned int i;

	dtb_desc_init(d);
	d->ram[0] = (struct dtb_range){ ARM64_RAM_BASE, 512 * MIB };
	d->nr_ram = 1;
	for (i = 0; i < cpus; i++)
		mpidrs[i] = kvm_mpidr(i);
	d->mpidr = mpidrs;
	d->nr_cpus = cpus;
	d->cmdline = CMDLINE;
	d->initrd_start = INITRD_START;
	d->initrd_size = INITRD_SIZE;
	for (i = 0; i < 2; i++)
		mmio[i] = (struct dtb_dev){
			.base = ARM64_VIRTIO_MMIO_BASE + i * ARM64_VIRTIO_MMIO_SLOT,
			.size = ARM64_VIRTIO_MMIO_SLOT,
			.spi = ARM64_SPI_VIRTIO_MMIO_FIRST + i,
		};
	d->virtio_mmio = mmio;
	d->nr_virtio_mmio = disk == DISK_MMIO1 || disk == DISK_MMIO_PCI ? 1 :
			    disk == DISK_MMIO2 ? 2 : 0;
	dtb_desc_init_pci(&pci);
	d->pci = disk == DISK_PCI || disk == DISK_MMIO_PCI ? &pci : NULL;
}

/* Big-endian cell @i of property @name, or -1 (as all ones) if short. */
static uint64_t cell(const void *fdt, int node, const char *name, int i)
{
	const fdt32_t *p;
	int len;

	p = fdt_getprop(fdt, node, name, &len);
	if (!p || len < (i + 1) * 4)
		return UINT64_MAX;
	return fdt32_to_cpu(p[i]);
}

static int prop_len(const void *fdt, int node, const char *name)
{
	int len;

	if (!fdt_getprop(fdt, node, name, &len))
		return -1;
	return len;
}

/* reg = <base size> in 2 + 2 cells. */
static void check_reg(const void *fdt, int node, uint64_t base,
		      uint64_t size)
{
	CHECK(node >= 0);
	CHECK_EQ(prop_len(fdt, node, "reg"), 16);
	CHECK_EQ(cell(fdt, node, "reg", 0) << 32 | cell(fdt, node, "reg", 1),
		 base);
	CHECK_EQ(cell(fdt, node, "reg", 2) << 32 | cell(fdt, node, "reg", 3),
		 size);
}

static void check_irq(const void *fdt, int node, uint32_t type,
		      uint32_t num, uint32_t flags)
{
	CHECK_EQ(prop_len(fdt, node, "interrupts"), 12);
	CHECK_EQ(cell(fdt, node, "interrupts", 0), type);
	CHECK_EQ(cell(fdt, node, "interrupts", 1), num);
	CHECK_EQ(cell(fdt, node, "interrupts", 2), flags);
}

/* The node property @name's first cell points at, or a negative value. */
static int deref(const void *fdt, int node, const char *name, int i)
{
	uint64_t ph = cell(fdt, node, name, i);

	if (ph == UINT64_MAX || !ph)
		return -1;
	return fdt_node_offset_by_phandle(fdt, (uint32_t)ph);
}

static void check_chosen(const void *fdt, const struct dtb_desc *d)
{
	int node = fdt_path_offset(fdt, "/chosen"), uart;
	const char *s;
	int len;

	CHECK(node >= 0);
	s = fdt_getprop(fdt, node, "bootargs", &len);
	CHECK(s && !strcmp(s, CMDLINE) && len == (int)sizeof(CMDLINE));
	CHECK_EQ(prop_len(fdt, node, "linux,initrd-start"), 8);
	CHECK_EQ(cell(fdt, node, "linux,initrd-start", 0) << 32 |
		 cell(fdt, node, "linux,initrd-start", 1), d->initrd_start);
	CHECK_EQ(prop_len(fdt, node, "linux,initrd-end"), 8);
	CHECK_EQ(cell(fdt, node, "linux,initrd-end", 0) << 32 |
		 cell(fdt, node, "linux,initrd-end", 1),
		 d->initrd_start + d->initrd_size);
	s = fdt_getprop(fdt, node, "stdout-path", NULL);
	uart = s ? fdt_path_offset(fdt, s) : -1;
	CHECK(uart >= 0 &&
	      !fdt_node_check_compatible(fdt, uart, "arm,pl011"));
	check_reg(fdt, uart, ARM64_PL011_BASE, ARM64_PL011_SIZE);
	check_irq(fdt, uart, 0, ARM64_SPI_PL011, 4);
}

static void check_cpus(const void *fdt, const struct dtb_desc *d)
{
	int cpus = fdt_path_offset(fdt, "/cpus"), node, n = 0;
	const char *s;

	CHECK(cpus >= 0);
	CHECK_EQ(cell(fdt, cpus, "#address-cells", 0), 1);
	CHECK_EQ(cell(fdt, cpus, "#size-cells", 0), 0);
	fdt_for_each_subnode(node, fdt, cpus) {
		s = fdt_getprop(fdt, node, "device_type", NULL);
		CHECK(s && !strcmp(s, "cpu"));
		s = fdt_getprop(fdt, node, "enable-method", NULL);
		CHECK(s && !strcmp(s, "psci"));
		CHECK(!fdt_node_check_compatible(fdt, node, "arm,arm-v8"));
		CHECK_EQ(prop_len(fdt, node, "reg"), 4);
		/* The affinity alone: bit 31 (RES1) is not part of it. */
		CHECK_EQ(cell(fdt, node, "reg", 0),
			 d->mpidr[n] & DTB_MPIDR_AFF_MASK);
		n++;
	}
	CHECK_EQ(n, d->nr_cpus);
	node = fdt_path_offset(fdt, "/psci");
	CHECK(node >= 0 && !fdt_node_check_compatible(fdt, node,
						       "arm,psci-0.2"));
	s = fdt_getprop(fdt, node, "method", NULL);
	CHECK(s && !strcmp(s, "hvc"));
}

static void check_gic(const void *fdt)
{
	int root = fdt_path_offset(fdt, "/"), gic, its, node;
	unsigned int i;

	CHECK_EQ(cell(fdt, root, "#address-cells", 0), 2);
	CHECK_EQ(cell(fdt, root, "#size-cells", 0), 2);
	gic = deref(fdt, root, "interrupt-parent", 0);
	CHECK(gic >= 0 && !fdt_node_check_compatible(fdt, gic, "arm,gic-v3"));
	CHECK(fdt_getprop(fdt, gic, "interrupt-controller", NULL) != NULL);
	CHECK_EQ(cell(fdt, gic, "#interrupt-cells", 0), 3);
	CHECK_EQ(prop_len(fdt, gic, "reg"), 32);
	CHECK_EQ(cell(fdt, gic, "reg", 1), ARM64_GICD_BASE);
	CHECK_EQ(cell(fdt, gic, "reg", 3), ARM64_GICD_SIZE);
	CHECK_EQ(cell(fdt, gic, "reg", 5), ARM64_GICR_BASE);
	CHECK_EQ(cell(fdt, gic, "reg", 7), ARM64_GICR_SIZE);
	its = fdt_node_offset_by_compatible(fdt, -1, "arm,gic-v3-its");
	CHECK(its >= 0 && fdt_parent_offset(fdt, its) == gic);
	CHECK(fdt_getprop(fdt, its, "msi-controller", NULL) != NULL);
	check_reg(fdt, its, ARM64_GIC_ITS_BASE, ARM64_GIC_ITS_SIZE);
	node = fdt_node_offset_by_compatible(fdt, -1, "arm,armv8-timer");
	CHECK_EQ(prop_len(fdt, node, "interrupts"), 48);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(cell(fdt, node, "interrupts", 3 * i), 1);
		CHECK_EQ(cell(fdt, node, "interrupts", 3 * i + 2), 4);
	}
	CHECK_EQ(cell(fdt, node, "interrupts", 1), ARM64_PPI_TIMER_SEC);
	CHECK_EQ(cell(fdt, node, "interrupts", 4), ARM64_PPI_TIMER_PHYS);
	CHECK_EQ(cell(fdt, node, "interrupts", 7), ARM64_PPI_TIMER_VIRT);
	CHECK_EQ(cell(fdt, node, "interrupts", 10), ARM64_PPI_TIMER_HYP);
}

static void check_platform(const void *fdt)
{
	int node, clk;

	node = fdt_node_offset_by_compatible(fdt, -1, "arm,pl031");
	check_reg(fdt, node, ARM64_PL031_BASE, ARM64_PL031_SIZE);
	/* dtb_desc_init() leaves the alarm out (test_rtc has it in). */
	CHECK_EQ(prop_len(fdt, node, "interrupts"), -1);
	clk = deref(fdt, node, "clocks", 0);
	CHECK(clk >= 0 && !fdt_node_check_compatible(fdt, clk, "fixed-clock"));
	CHECK_EQ(cell(fdt, clk, "clock-frequency", 0), ARM64_APB_CLOCK_HZ);
	node = fdt_node_offset_by_compatible(fdt, -1, "arm,pl011");
	CHECK_EQ(deref(fdt, node, "clocks", 0), clk);
	CHECK_EQ(deref(fdt, node, "clocks", 1), clk);
	node = fdt_node_offset_by_compatible(fdt, -1, "microvm,exit");
	check_reg(fdt, node, ARM64_EXIT_MMIO_ADDR, ARM64_EXIT_MMIO_SIZE);
}

static void check_disks(const void *fdt, const struct dtb_desc *d)
{
	int node, its, n = 0;

	fdt_for_each_subnode(node, fdt, 0) {
		if (fdt_node_check_compatible(fdt, node, "virtio,mmio"))
			continue;
		check_reg(fdt, node, mmio[n].base, mmio[n].size);
		check_irq(fdt, node, 0, mmio[n].spi, 1);
		n++;
	}
	CHECK_EQ(n, d->nr_virtio_mmio);
	node = fdt_node_offset_by_compatible(fdt, -1,
					     "pci-host-ecam-generic");
	CHECK_EQ(node >= 0, d->pci != NULL);
	if (!d->pci)
		return;
	check_reg(fdt, node, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE);
	CHECK_EQ(cell(fdt, node, "#address-cells", 0), 3);
	CHECK_EQ(cell(fdt, node, "#size-cells", 0), 2);
	CHECK_EQ(cell(fdt, node, "bus-range", 0), 0);
	CHECK_EQ(cell(fdt, node, "bus-range", 1), 0);
	CHECK_EQ(prop_len(fdt, node, "ranges"), 2 * 7 * 4);
	CHECK_EQ(cell(fdt, node, "ranges", 0), 0x02000000);
	CHECK_EQ(cell(fdt, node, "ranges", 2), ARM64_PCI_MMIO32_BASE);
	CHECK_EQ(cell(fdt, node, "ranges", 4), ARM64_PCI_MMIO32_BASE);
	CHECK_EQ(cell(fdt, node, "ranges", 6), ARM64_PCI_MMIO32_SIZE);
	CHECK_EQ(cell(fdt, node, "ranges", 7), 0x03000000);
	CHECK_EQ(cell(fdt, node, "ranges", 8) << 32, ARM64_PCI_MMIO64_BASE);
	CHECK_EQ(cell(fdt, node, "ranges", 12) << 32, ARM64_PCI_MMIO64_SIZE);
	/* msi-map = <rid-base &its its-base length>: bus 0's 256 IDs. */
	its = deref(fdt, node, "msi-map", 1);
	CHECK(its >= 0 && fdt_getprop(fdt, its, "msi-controller", NULL));
	CHECK_EQ(cell(fdt, node, "msi-map", 0), 0);
	CHECK_EQ(cell(fdt, node, "msi-map", 3), 256);
}

/* dtc -I dtb -O dts: exit 0 and not a line on stderr. */
static void check_dtc(const void *fdt, size_t len, const char *what)
{
	char blob[] = "/tmp/test_arm64_fdt.XXXXXX";
	char cmd[256], line[512];
	FILE *p;
	int fd, status, lines = 0;

	if (dtc_missing)
		return;
	fd = mkstemp(blob);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, fdt, len), (long long)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "dtc -I dtb -O dts -o /dev/null %s 2>&1",
		 blob);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (p && fgets(line, sizeof(line), p)) {
		fprintf(stderr, "dtc (%s): %s", what, line);
		lines++;
	}
	status = p ? pclose(p) : -1;
	unlink(blob);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(lines, 0);
}

static void dump(const char *path, const void *fdt, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fwrite(fdt, 1, len, f) == len);
	if (f)
		fclose(f);
}

static void test_layouts(void)
{
	static const unsigned int cpus[] = { 1, 2, 8 };
	char err[256], what[64];
	struct dtb_desc d;
	unsigned int i, k;
	size_t len;

	for (i = 0; i < 3; i++) {
		for (k = DISK_NONE; k <= DISK_MMIO_PCI; k++) {
			make_desc(&d, cpus[i], k);
			CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err,
					   sizeof(err)), 0);
			CHECK_EQ(fdt_check_header(buf), 0);
			CHECK_EQ(fdt_totalsize(buf), len);
			check_chosen(buf, &d);
			check_cpus(buf, &d);
			check_gic(buf);
			check_platform(buf);
			check_disks(buf, &d);
			snprintf(what, sizeof(what), "%u cpus, %s", cpus[i],
				 disk_names[k]);
			check_dtc(buf, len, what);
		}
	}
	/* The last tree (8 CPUs, mmio + PCI), for a look with dtc. */
	if (getenv("TEST_ARM64_FDT_DUMP"))
		dump(getenv("TEST_ARM64_FDT_DUMP"), buf, len);
}

/*
 * The PL031: a PrimeCell with its clock, and its interrupt only when the
 * machine offers the alarm (rtc_irq); without one Linux's rtc-pl031 keeps
 * the wall clock and offers no alarm.
 */
static void test_rtc(void)
{
	char err[256];
	struct dtb_desc d;
	unsigned int irq;
	size_t len;
	int node;

	for (irq = 0; irq < 2; irq++) {
		make_desc(&d, 2, DISK_NONE);
		d.rtc_irq = irq;
		CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)),
			 0);
		node = fdt_node_offset_by_compatible(buf, -1, "arm,pl031");
		CHECK(node >= 0);
		CHECK(!fdt_node_check_compatible(buf, node, "arm,primecell"));
		check_reg(buf, node, ARM64_PL031_BASE, ARM64_PL031_SIZE);
		CHECK(deref(buf, node, "clocks", 0) >= 0);
		if (irq)
			check_irq(buf, node, 0, ARM64_SPI_PL031, 4);
		else
			CHECK_EQ(prop_len(buf, node, "interrupts"), -1);
		check_dtc(buf, len, irq ? "rtc with its interrupt" :
					  "rtc without an interrupt");
	}
	/* Size 0: no RTC node at all. */
	make_desc(&d, 2, DISK_NONE);
	d.rtc.size = 0;
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)), 0);
	CHECK(fdt_node_offset_by_compatible(buf, -1, "arm,pl031") < 0);
}

/* A 4 GiB guest: RAM below the hole and above 4 GiB, two memory nodes. */
static void test_two_ram_ranges(void)
{
	struct dtb_desc d;
	char err[256];
	size_t len;
	int node, n = 0;

	make_desc(&d, 1, DISK_NONE);
	d.ram[0] = (struct dtb_range){ ARM64_RAM_BASE, ARM64_RAM_LOW_MAX };
	d.ram[1] = (struct dtb_range){ ARM64_HIMEM_START, 2048 * MIB };
	d.nr_ram = 2;
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)), 0);
	fdt_for_each_subnode(node, buf, 0) {
		const char *t = fdt_getprop(buf, node, "device_type", NULL);

		if (!t || strcmp(t, "memory"))
			continue;
		check_reg(buf, node, d.ram[n].base, d.ram[n].size);
		n++;
	}
	CHECK_EQ(n, 2);
	check_dtc(buf, len, "two RAM ranges");
}

/* Aff3 set: /cpus takes two address cells and reg the 64-bit affinity. */
static void test_aff3(void)
{
	struct dtb_desc d;
	char err[256];
	size_t len;
	int node;

	make_desc(&d, 2, DISK_NONE);
	mpidrs[1] = MPIDR_RES1 | 1ULL << 32;
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)), 0);
	node = fdt_path_offset(buf, "/cpus");
	CHECK_EQ(cell(buf, node, "#address-cells", 0), 2);
	node = fdt_path_offset(buf, "/cpus/cpu@100000000");
	CHECK_EQ(prop_len(buf, node, "reg"), 8);
	CHECK_EQ(cell(buf, node, "reg", 0), 1);
	CHECK_EQ(cell(buf, node, "reg", 1), 0);
	check_dtc(buf, len, "Aff3");
}

/*
 * Every buffer shorter than the tree fails with -ENOSPC and a message,
 * and nothing past the buffer changes.
 */
static void test_small_buffer(void)
{
	struct dtb_desc d;
	char err[256];
	size_t len, full, n;
	int bad = 0;

	make_desc(&d, 8, DISK_MMIO_PCI);
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &full, err, sizeof(err)), 0);
	for (n = 0; n < full; n++) {
		memset(buf, 0xa5, sizeof(buf));
		if (dtb_build(&d, buf, n, &len, err, sizeof(err)) != -ENOSPC ||
		    len || !strstr(err, "does not fit") || buf[n] != 0xa5)
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(dtb_build(&d, buf, full, &len, err, sizeof(err)), 0);
	CHECK_EQ(len, full);
}

struct bad_row {
	const char *name;
	void (*spoil)(struct dtb_desc *d);
	const char *msg;
};

static void no_ram(struct dtb_desc *d) { d->nr_ram = 0; }
static void no_cpus(struct dtb_desc *d) { d->nr_cpus = 0; }
static void no_mpidr(struct dtb_desc *d) { d->mpidr = NULL; }
static void ram_wraps(struct dtb_desc *d) { d->ram[0].base = ~0ULL; }
static void same_mpidr(struct dtb_desc *d) { (void)d; mpidrs[1] = mpidrs[0]; }
static void cpus_past_gicr(struct dtb_desc *d)
{
	unsigned int i;

	for (i = 0; i <= ARM64_MAX_CPUS; i++)
		mpidrs[i] = kvm_mpidr(i);
	d->nr_cpus = ARM64_MAX_CPUS + 1;
}
static void spi_too_big(struct dtb_desc *d) { (void)d; mmio[0].spi = 988; }
static void pci_no_its(struct dtb_desc *d) { d->its.size = 0; }
static void pci_buses(struct dtb_desc *d) { (void)d; pci.bus_last = 1; }
static void mmio_too_many(struct dtb_desc *d) { d->nr_virtio_mmio = 33; }
static void mmio_zero_size(struct dtb_desc *d) { (void)d; mmio[1].size = 0; }
static void genid_spi(struct dtb_desc *d)
{
	d->vmgenid = (struct dtb_dev){ ARM64_VMGENID_ADDR, 16, 1000 };
}

static void test_bad_desc(void)
{
	static const struct bad_row rows[] = {
		{ "no RAM", no_ram, "RAM ranges" },
		{ "no CPUs", no_cpus, "CPUs, need 1" },
		{ "no MPIDRs", no_mpidr, "with their MPIDRs" },
		{ "RAM wraps", ram_wraps, "wraps or is empty" },
		{ "same MPIDR", same_mpidr, "same MPIDR affinity" },
		{ "65 CPUs", cpus_past_gicr, "redistributors" },
		{ "SPI 988", spi_too_big, "SPI 988" },
		{ "PCI, no ITS", pci_no_its, "needs the ITS" },
		{ "PCI buses", pci_buses, "ECAM size" },
		{ "33 mmio", mmio_too_many, "33 virtio-mmio" },
		{ "mmio size 0", mmio_zero_size, "wraps or is 0" },
		{ "vmgenid SPI 1000", genid_spi, "SPI 1000" },
	};
	struct dtb_desc d;
	char err[256];
	unsigned int i;
	size_t len;
	int ret;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		make_desc(&d, 2, DISK_MMIO_PCI);
		d.nr_virtio_mmio = 2;
		rows[i].spoil(&d);
		ret = dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err));
		if (ret != -EINVAL || !strstr(err, rows[i].msg))
			fprintf(stderr, "row '%s': %d '%s'\n", rows[i].name,
				ret, err);
		CHECK_EQ(ret, -EINVAL);
		CHECK(strstr(err, rows[i].msg) != NULL);
		CHECK_EQ(len, 0);
	}
}

/*
 * The memory map itself: no two device ranges overlap each other or RAM,
 * the redistributors of ARM64_MAX_CPUS fit their slot, and the exit
 * register is where README documents it for both architectures.
 */
static void test_memory_map(void)
{
	static const struct { const char *name; uint64_t base, size; } r[] = {
		{ "GICD", ARM64_GICD_BASE, ARM64_GICD_SIZE },
		{ "ITS", ARM64_GIC_ITS_BASE, ARM64_GIC_ITS_SIZE },
		{ "GICR", ARM64_GICR_BASE, ARM64_GICR_SIZE },
		{ "PL011", ARM64_PL011_BASE, ARM64_PL011_SIZE },
		{ "PL031", ARM64_PL031_BASE, ARM64_PL031_SIZE },
		{ "low RAM", ARM64_RAM_BASE, ARM64_RAM_LOW_MAX },
		{ "PCI 32", ARM64_PCI_MMIO32_BASE, ARM64_PCI_MMIO32_SIZE },
		{ "ECAM", ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE },
		{ "virtio-mmio", ARM64_VIRTIO_MMIO_BASE,
		  ARM64_VIRTIO_MMIO_SLOT * ARM64_VIRTIO_MMIO_MAX_SLOTS },
		{ "exit", ARM64_EXIT_MMIO_ADDR, ARM64_EXIT_MMIO_SIZE },
		{ "boot time", ARM64_BOOT_TIME_MMIO_ADDR, 0x1000 },
		/* A page of up to 64 KiB (vm_add_device_page()). */
		{ "vmgenid", ARM64_VMGENID_ADDR, 0x10000 },
		{ "high RAM", ARM64_HIMEM_START,
		  ARM64_RAM_MAX - ARM64_RAM_LOW_MAX },
		{ "PCI 64", ARM64_PCI_MMIO64_BASE, ARM64_PCI_MMIO64_SIZE },
	};
	unsigned int i, j, n = sizeof(r) / sizeof(r[0]);

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (r[i].base < r[j].base + r[j].size &&
			    r[j].base < r[i].base + r[i].size) {
				fprintf(stderr, "%s overlaps %s\n", r[i].name,
					r[j].name);
				CHECK(0);
			}
	CHECK(ARM64_GICR_BASE + ARM64_GICR_SIZE <= ARM64_PL011_BASE);
	CHECK_EQ(ARM64_RAM_BASE % (2 * MIB), 0);
	CHECK(ARM64_PCI_MMIO64_BASE + ARM64_PCI_MMIO64_SIZE <= 1ULL << 40);
	CHECK_EQ(EXIT_MMIO_ADDR, 0xf0100000ULL);
	CHECK_EQ(ARM64_SPI_COUNT + 32 <= ARM64_GIC_NR_IRQS, 1);
	CHECK_EQ(ARM64_VMGENID_ADDR % 0x10000, 0);
	/* The SPIs no two devices share. */
	CHECK(ARM64_SPI_VMGENID != ARM64_SPI_PL011);
	CHECK(ARM64_SPI_VMGENID != ARM64_SPI_PL031);
	CHECK(ARM64_SPI_VMGENID < ARM64_SPI_VIRTIO_MMIO_FIRST);
	CHECK_EQ(ARM64_GIC_NR_IRQS % 32, 0);
}

/*
 * The VM generation ID as Linux's binding (rng/microsoft,vmgenid.yaml)
 * has it: compatible "microsoft,vmgenid", reg its 16 bytes, interrupts
 * one edge-rising SPI; only when the description names it (dtb_desc_init()
 * does not: test_layouts' trees have no such node).
 */
static void test_vmgenid(void)
{
	struct dtb_desc d;
	char err[256];
	size_t len;
	int node;

	make_desc(&d, 2, DISK_PCI);
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)), 0);
	CHECK(fdt_node_offset_by_compatible(buf, -1, "microsoft,vmgenid") < 0);
	d.vmgenid = (struct dtb_dev){ ARM64_VMGENID_ADDR, 16,
				      ARM64_SPI_VMGENID };
	CHECK_EQ(dtb_build(&d, buf, BUF_SIZE, &len, err, sizeof(err)), 0);
	node = fdt_node_offset_by_compatible(buf, -1, "microsoft,vmgenid");
	CHECK(node >= 0);
	CHECK_EQ(fdt_parent_offset(buf, node), 0);
	CHECK(!strcmp(fdt_get_name(buf, node, NULL), "vmgenid@f0110000"));
	check_reg(buf, node, ARM64_VMGENID_ADDR, 16);
	check_irq(buf, node, 0, ARM64_SPI_VMGENID, 1);
	check_platform(buf);
	check_dtc(buf, len, "vmgenid");
}

/* arch_ram_layout(): one range up to 2 GiB of RAM, then a second at 4 GiB. */
static void test_ram_layout(void)
{
	struct arch_ram_range r[4];

	CHECK_EQ(arch_ram_layout(512 * MIB, r, 4), 1);
	CHECK_EQ(r[0].gpa, ARM64_RAM_BASE);
	CHECK_EQ(r[0].size, 512 * MIB);
	CHECK_EQ(arch_ram_layout(ARM64_RAM_LOW_MAX, r, 4), 1);
	CHECK_EQ(r[0].size, ARM64_RAM_LOW_MAX);
	CHECK_EQ(arch_ram_layout(ARM64_RAM_LOW_MAX + 4096, r, 4), 2);
	CHECK_EQ(r[1].gpa, ARM64_HIMEM_START);
	CHECK_EQ(r[1].size, 4096);
	CHECK_EQ(arch_ram_layout(ARM64_RAM_MAX, r, 4), 2);
	CHECK_EQ(r[1].gpa + r[1].size, ARM64_PCI_MMIO64_BASE);
	CHECK_EQ(arch_ram_layout(ARM64_RAM_MAX + 1, r, 4), 0);
	/* main's --memory check refuses what the layout cannot hold. */
	CHECK_EQ(arch_ram_max(), ARM64_RAM_MAX);
	CHECK_EQ(arch_ram_max(), 510 * 1024 * MIB);
	CHECK_EQ(arch_ram_layout(512 * MIB, r, 1), 0);
	CHECK_EQ(arch_ram_layout(0, r, 4), 0);
}

int main(void)
{
	test_memory_map();
	test_ram_layout();
	dtc_missing = system("command -v dtc >/dev/null 2>&1") != 0;
	test_layouts();
	test_rtc();
	test_vmgenid();
	test_two_ram_ranges();
	test_aff3();
	test_small_buffer();
	test_bad_desc();
	if (dtc_missing && !test_fail_count) {
		printf("dtc missing (Debian: device-tree-compiler): skipped the dtc half\n");
		return 77;
	}
	return test_done();
}
