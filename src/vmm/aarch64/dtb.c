// SPDX-License-Identifier: Apache-2.0
/*
 * Builds the arm64 guest's device tree with libfdt's sequential-write API:
 * nodes are emitted once, in order, and phandles are fixed numbers
 * (enum dtb_phandle), so nothing is patched afterwards. Every libfdt call
 * goes through one sticky error: the first failure is kept with the node it
 * happened in, later calls do nothing, and dtb_build() returns it.
 * Bindings: Documentation/devicetree/bindings/ (arm/cpus, arm/psci,
 * interrupt-controller/arm,gic-v3, timer/arm,arch_timer, serial/pl011,
 * rtc/arm,pl031, virtio/mmio, pci/host-generic-pci).
 */
#include "dtb.h"

#include <errno.h>
#include <stdio.h>

#include <libfdt.h>

#include "dtb_priv.h"

/* The interrupt specifier's first cell (arm,gic-v3 binding). */
#define GIC_FDT_SPI 0
#define GIC_FDT_PPI 1
/* Its third: trigger (include/dt-bindings/interrupt-controller/irq.h). */
#define IRQ_TYPE_EDGE_RISING 1
#define IRQ_TYPE_LEVEL_HIGH 4
/* PCI address space code of a ranges entry's first cell (PCI bus
 * binding, IEEE 1275): 32-bit and 64-bit memory. */
#define PCI_RANGE_MEM32 0x02000000u
#define PCI_RANGE_MEM64 0x03000000u

struct dtb_ctx {
	void *fdt;
	int fdt_err;    /* first libfdt error (negative), 0 if none */
	char where[64]; /* the node or property it happened in, copied:
			 * node names live in their callers' frames */
};

static void dtb_check(struct dtb_ctx *c, int ret, const char *where)
{
	if (ret < 0 && !c->fdt_err) {
		c->fdt_err = ret;
		snprintf(c->where, sizeof(c->where), "%s", where);
	}
}

static void dtb_begin(struct dtb_ctx *c, const char *name)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_begin_node(c->fdt, name), name);
}

/* "name@addr" in @buf, as the unit-address convention spells it. */
static void dtb_begin_at(struct dtb_ctx *c, const char *name, uint64_t addr,
			 char *buf, size_t len)
{
	snprintf(buf, len, "%s@%llx", name, (unsigned long long)addr);
	dtb_begin(c, buf);
}

static void dtb_end(struct dtb_ctx *c)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_end_node(c->fdt), "end of node");
}

static void dtb_prop(struct dtb_ctx *c, const char *name, const void *val,
		     int len)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_property(c->fdt, name, val, len), name);
}

static void dtb_prop_u32(struct dtb_ctx *c, const char *name, uint32_t v)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_property_u32(c->fdt, name, v), name);
}

static void dtb_prop_u64(struct dtb_ctx *c, const char *name, uint64_t v)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_property_u64(c->fdt, name, v), name);
}

static void dtb_prop_str(struct dtb_ctx *c, const char *name, const char *s)
{
	if (!c->fdt_err)
		dtb_check(c, fdt_property_string(c->fdt, name, s), name);
}

/* A string list: @list holds the strings with their NULs, @len in all. */
static void dtb_prop_strs(struct dtb_ctx *c, const char *name,
			  const char *list, size_t len)
{
	dtb_prop(c, name, list, (int)len);
}
#define DTB_STRS(c, name, lit) dtb_prop_strs(c, name, lit, sizeof(lit))

/* Big-endian cells from host-order @v. */
static void dtb_prop_cells(struct dtb_ctx *c, const char *name,
			   const uint32_t *v, unsigned int n)
{
	fdt32_t cells[16];
	unsigned int i;

	if (n > sizeof(cells) / sizeof(cells[0])) {
		dtb_check(c, -FDT_ERR_BADVALUE, name);
		return;
	}
	for (i = 0; i < n; i++)
		cells[i] = cpu_to_fdt32(v[i]);
	dtb_prop(c, name, cells, (int)(n * sizeof(fdt32_t)));
}

/* reg = <base size> with 2 address and 2 size cells (the root's). */
static void dtb_prop_reg(struct dtb_ctx *c, uint64_t base, uint64_t size)
{
	uint32_t v[4] = { base >> 32, (uint32_t)base, size >> 32,
			  (uint32_t)size };

	dtb_prop_cells(c, "reg", v, 4);
}

static void dtb_prop_irq(struct dtb_ctx *c, uint32_t type, uint32_t num,
			 uint32_t flags)
{
	uint32_t v[3] = { type, num, flags };

	dtb_prop_cells(c, "interrupts", v, 3);
}

static void dtb_put_chosen(struct dtb_ctx *c, const struct dtb_desc *d)
{
	char path[32];

	dtb_begin(c, "chosen");
	if (d->cmdline)
		dtb_prop_str(c, "bootargs", d->cmdline);
	if (d->uart.size) {
		snprintf(path, sizeof(path), "/serial@%llx",
			 (unsigned long long)d->uart.base);
		dtb_prop_str(c, "stdout-path", path);
	}
	if (d->initrd_size) {
		dtb_prop_u64(c, "linux,initrd-start", d->initrd_start);
		dtb_prop_u64(c, "linux,initrd-end",
			     d->initrd_start + d->initrd_size);
	}
	dtb_end(c);
}

static void dtb_put_memory(struct dtb_ctx *c, const struct dtb_desc *d)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < d->nr_ram; i++) {
		dtb_begin_at(c, "memory", d->ram[i].base, name, sizeof(name));
		dtb_prop_str(c, "device_type", "memory");
		dtb_prop_reg(c, d->ram[i].base, d->ram[i].size);
		dtb_end(c);
	}
}

/*
 * One cpu node per vCPU, reg = its MPIDR affinity (arm/cpus.yaml): one
 * cell unless some vCPU has Aff3, then two.
 */
static void dtb_put_cpus(struct dtb_ctx *c, const struct dtb_desc *d)
{
	uint32_t cells = 1;
	unsigned int i;
	char name[32];

	for (i = 0; i < d->nr_cpus; i++)
		if ((d->mpidr[i] & DTB_MPIDR_AFF_MASK) >> 32)
			cells = 2;
	dtb_begin(c, "cpus");
	dtb_prop_u32(c, "#address-cells", cells);
	dtb_prop_u32(c, "#size-cells", 0);
	for (i = 0; i < d->nr_cpus; i++) {
		uint64_t aff = d->mpidr[i] & DTB_MPIDR_AFF_MASK;

		dtb_begin_at(c, "cpu", aff, name, sizeof(name));
		dtb_prop_str(c, "device_type", "cpu");
		dtb_prop_str(c, "compatible", "arm,arm-v8");
		dtb_prop_str(c, "enable-method", "psci");
		if (cells == 2)
			dtb_prop_u64(c, "reg", aff);
		else
			dtb_prop_u32(c, "reg", (uint32_t)aff);
		dtb_end(c);
	}
	dtb_end(c);
}

/* PSCI 1.0, which KVM implements (0.2 as the fallback), through HVC. */
static void dtb_put_psci(struct dtb_ctx *c)
{
	dtb_begin(c, "psci");
	DTB_STRS(c, "compatible", "arm,psci-1.0\0arm,psci-0.2");
	dtb_prop_str(c, "method", "hvc");
	dtb_end(c);
}

static void dtb_put_gic(struct dtb_ctx *c, const struct dtb_desc *d)
{
	uint32_t reg[8] = {
		d->gicd.base >> 32, (uint32_t)d->gicd.base,
		d->gicd.size >> 32, (uint32_t)d->gicd.size,
		d->gicr.base >> 32, (uint32_t)d->gicr.base,
		d->gicr.size >> 32, (uint32_t)d->gicr.size,
	};
	char name[32], its_name[40];

	dtb_begin_at(c, "interrupt-controller", d->gicd.base, name,
		     sizeof(name));
	dtb_prop_str(c, "compatible", "arm,gic-v3");
	dtb_prop_u32(c, "#interrupt-cells", 3);
	dtb_prop(c, "interrupt-controller", NULL, 0);
	dtb_prop_cells(c, "reg", reg, 8);
	dtb_prop_u32(c, "#redistributor-regions", 1);
	dtb_prop_u32(c, "phandle", DTB_PHANDLE_GIC);
	if (d->its.size) {
		/* The ITS is a child: the parent maps its address 1:1. */
		dtb_prop_u32(c, "#address-cells", 2);
		dtb_prop_u32(c, "#size-cells", 2);
		dtb_prop(c, "ranges", NULL, 0);
		dtb_begin_at(c, "msi-controller", d->its.base, its_name,
			     sizeof(its_name));
		dtb_prop_str(c, "compatible", "arm,gic-v3-its");
		dtb_prop(c, "msi-controller", NULL, 0);
		dtb_prop_u32(c, "#msi-cells", 1);
		dtb_prop_reg(c, d->its.base, d->its.size);
		dtb_prop_u32(c, "phandle", DTB_PHANDLE_ITS);
		dtb_end(c);
	}
	dtb_end(c);
}

/* The four timer PPIs, level-high, in the binding's order. */
static void dtb_put_timer(struct dtb_ctx *c, const struct dtb_desc *d)
{
	uint32_t irqs[12];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		irqs[3 * i] = GIC_FDT_PPI;
		irqs[3 * i + 1] = d->timer_ppi[i];
		irqs[3 * i + 2] = IRQ_TYPE_LEVEL_HIGH;
	}
	dtb_begin(c, "timer");
	DTB_STRS(c, "compatible", "arm,armv8-timer\0arm,armv7-timer");
	dtb_prop_cells(c, "interrupts", irqs, 12);
	dtb_end(c);
}

/*
 * PL011 and PL031 are AMBA PrimeCells: Linux's AMBA bus reads their ID
 * registers with "apb_pclk" running, so both name a fixed clock.
 */
static void dtb_put_primecells(struct dtb_ctx *c, const struct dtb_desc *d)
{
	uint32_t clks[2] = { DTB_PHANDLE_APB_CLK, DTB_PHANDLE_APB_CLK };
	char name[32];

	if (!d->uart.size && !d->rtc.size)
		return;
	dtb_begin(c, "apb-pclk");
	dtb_prop_str(c, "compatible", "fixed-clock");
	dtb_prop_u32(c, "#clock-cells", 0);
	dtb_prop_u32(c, "clock-frequency", d->apb_clock_hz);
	dtb_prop_str(c, "clock-output-names", "clk24mhz");
	dtb_prop_u32(c, "phandle", DTB_PHANDLE_APB_CLK);
	dtb_end(c);
	if (d->uart.size) {
		dtb_begin_at(c, "serial", d->uart.base, name, sizeof(name));
		DTB_STRS(c, "compatible", "arm,pl011\0arm,primecell");
		dtb_prop_reg(c, d->uart.base, d->uart.size);
		dtb_prop_irq(c, GIC_FDT_SPI, d->uart.spi, IRQ_TYPE_LEVEL_HIGH);
		dtb_prop_cells(c, "clocks", clks, 2);
		DTB_STRS(c, "clock-names", "uartclk\0apb_pclk");
		dtb_end(c);
	}
	if (d->rtc.size) {
		dtb_begin_at(c, "rtc", d->rtc.base, name, sizeof(name));
		DTB_STRS(c, "compatible", "arm,pl031\0arm,primecell");
		dtb_prop_reg(c, d->rtc.base, d->rtc.size);
		if (d->rtc_irq)
			dtb_prop_irq(c, GIC_FDT_SPI, d->rtc.spi,
				     IRQ_TYPE_LEVEL_HIGH);
		dtb_prop_cells(c, "clocks", clks, 1);
		dtb_prop_str(c, "clock-names", "apb_pclk");
		dtb_end(c);
	}
}

/*
 * virtio-mmio interrupts are edge-triggered: an irqfd delivers a pulse,
 * and the driver learns why from InterruptStatus (virtio 1.2 §4.2.2).
 */
static void dtb_put_virtio_mmio(struct dtb_ctx *c, const struct dtb_desc *d)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < d->nr_virtio_mmio; i++) {
		const struct dtb_dev *v = &d->virtio_mmio[i];

		dtb_begin_at(c, "virtio_mmio", v->base, name, sizeof(name));
		dtb_prop_str(c, "compatible", "virtio,mmio");
		dtb_prop_reg(c, v->base, v->size);
		dtb_prop_irq(c, GIC_FDT_SPI, v->spi, IRQ_TYPE_EDGE_RISING);
		dtb_prop(c, "dma-coherent", NULL, 0);
		dtb_end(c);
	}
}

/* One ranges entry: PCI address = CPU address. */
static unsigned int pci_range(uint32_t *v, uint32_t space,
			      const struct dtb_range *r)
{
	v[0] = space;
	v[1] = v[3] = r->base >> 32;
	v[2] = v[4] = (uint32_t)r->base;
	v[5] = r->size >> 32;
	v[6] = (uint32_t)r->size;
	return 7;
}

/*
 * The ECAM host. Devices signal MSI-X only (no INTx pin), so there is an
 * msi-map to the ITS and no interrupt-map: requester ID r becomes ITS
 * device ID r (pci/pci-msi.txt), as KVM's MSI routes with
 * KVM_MSI_VALID_DEVID will name them.
 */
static void dtb_put_pci(struct dtb_ctx *c, const struct dtb_pci *p)
{
	uint32_t ranges[14], n = 0;
	uint32_t buses[2] = { p->bus_first, p->bus_last };
	uint32_t rids = (p->bus_last - p->bus_first + 1) << 8;
	uint32_t msi_map[4] = { p->bus_first << 8, DTB_PHANDLE_ITS,
				p->bus_first << 8, rids };
	char name[32];

	if (p->mmio32.size)
		n += pci_range(ranges + n, PCI_RANGE_MEM32, &p->mmio32);
	if (p->mmio64.size)
		n += pci_range(ranges + n, PCI_RANGE_MEM64, &p->mmio64);
	dtb_begin_at(c, "pcie", p->ecam_base, name, sizeof(name));
	dtb_prop_str(c, "compatible", "pci-host-ecam-generic");
	dtb_prop_str(c, "device_type", "pci");
	dtb_prop_u32(c, "#address-cells", 3);
	dtb_prop_u32(c, "#size-cells", 2);
	dtb_prop_reg(c, p->ecam_base, p->ecam_size);
	dtb_prop_cells(c, "bus-range", buses, 2);
	dtb_prop_u32(c, "linux,pci-domain", 0);
	dtb_prop_cells(c, "ranges", ranges, n);
	dtb_prop_cells(c, "msi-map", msi_map, 4);
	dtb_prop(c, "dma-coherent", NULL, 0);
	dtb_end(c);
}

static void dtb_put_exit(struct dtb_ctx *c, const struct dtb_desc *d)
{
	char name[32];

	if (!d->exit.size)
		return;
	dtb_begin_at(c, "exit", d->exit.base, name, sizeof(name));
	dtb_prop_str(c, "compatible", "microvm,exit");
	dtb_prop_reg(c, d->exit.base, d->exit.size);
	dtb_end(c);
}

/*
 * Linux's binding (rng/microsoft,vmgenid.yaml, 6.10): the driver maps the
 * 16 bytes, copies them at probe and again on each edge of the interrupt.
 */
static void dtb_put_vmgenid(struct dtb_ctx *c, const struct dtb_desc *d)
{
	char name[32];

	if (!d->vmgenid.size)
		return;
	dtb_begin_at(c, "vmgenid", d->vmgenid.base, name, sizeof(name));
	dtb_prop_str(c, "compatible", "microsoft,vmgenid");
	dtb_prop_reg(c, d->vmgenid.base, d->vmgenid.size);
	dtb_prop_irq(c, GIC_FDT_SPI, d->vmgenid.spi, IRQ_TYPE_EDGE_RISING);
	dtb_end(c);
}

static void dtb_put_tree(struct dtb_ctx *c, const struct dtb_desc *d)
{
	dtb_check(c, fdt_finish_reservemap(c->fdt), "memory reserve map");
	dtb_begin(c, "");
	dtb_prop_str(c, "compatible", "microvm,virt");
	dtb_prop_str(c, "model", "microvm");
	dtb_prop_u32(c, "#address-cells", 2);
	dtb_prop_u32(c, "#size-cells", 2);
	dtb_prop_u32(c, "interrupt-parent", DTB_PHANDLE_GIC);
	dtb_put_chosen(c, d);
	dtb_put_memory(c, d);
	dtb_put_cpus(c, d);
	dtb_put_psci(c);
	dtb_put_gic(c, d);
	dtb_put_timer(c, d);
	dtb_put_primecells(c, d);
	dtb_put_virtio_mmio(c, d);
	if (d->pci)
		dtb_put_pci(c, d->pci);
	dtb_put_exit(c, d);
	dtb_put_vmgenid(c, d);
	dtb_end(c);
	if (!c->fdt_err)
		dtb_check(c, fdt_finish(c->fdt), "finish");
}

int dtb_build(const struct dtb_desc *d, void *buf, size_t bufsize,
	      size_t *len, char *err, size_t errlen)
{
	struct dtb_ctx c = { .fdt = buf };
	int ret;

	*len = 0;
	if (errlen)
		err[0] = '\0';
	ret = dtb_check_desc(d, err, errlen);
	if (ret)
		return ret;
	if (bufsize > DTB_MAX_SIZE)
		bufsize = DTB_MAX_SIZE;
	dtb_check(&c, fdt_create(buf, (int)bufsize), "header");
	if (!c.fdt_err)
		dtb_put_tree(&c, d);
	if (c.fdt_err == -FDT_ERR_NOSPACE)
		return dtb_fail(err, errlen, -ENOSPC,
				"device tree: does not fit in %zu bytes (full at %s)",
				bufsize, c.where);
	if (c.fdt_err)
		return dtb_fail(err, errlen, -EIO,
				"device tree: libfdt failed at %s: %s",
				c.where, fdt_strerror(c.fdt_err));
	*len = fdt_totalsize(buf);
	return 0;
}
