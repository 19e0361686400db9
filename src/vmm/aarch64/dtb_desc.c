// SPDX-License-Identifier: Apache-2.0
/*
 * The description side of the arm64 device tree: the defaults the memory
 * map (layout.h) fixes, and the check that a description is a machine
 * before dtb.c writes a byte of it. Every refusal names the bad value.
 */
#include "dtb_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

/* Last SPI: INTID 1019 is the GIC's highest (1020..1023 are special). */
#define DTB_SPI_MAX 987

int dtb_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* [base, base + size) non-empty and not wrapping. */
static bool range_ok(uint64_t base, uint64_t size)
{
	return size && base <= UINT64_MAX - (size - 1);
}

static int dtb_check_devs(const struct dtb_desc *d, char *err, size_t errlen)
{
	const struct dtb_dev *devs[3 + DTB_MAX_VIRTIO_MMIO];
	unsigned int i, n = 0;

	if (d->nr_virtio_mmio > DTB_MAX_VIRTIO_MMIO)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: %u virtio-mmio devices, at most %d",
				d->nr_virtio_mmio, DTB_MAX_VIRTIO_MMIO);
	if (d->nr_virtio_mmio && !d->virtio_mmio)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: virtio-mmio devices not given");
	if (d->uart.size)
		devs[n++] = &d->uart;
	if (d->rtc.size)
		devs[n++] = &d->rtc;
	if (d->vmgenid.size)
		devs[n++] = &d->vmgenid;
	for (i = 0; i < d->nr_virtio_mmio; i++)
		devs[n++] = &d->virtio_mmio[i];
	for (i = 0; i < n; i++) {
		if (!range_ok(devs[i]->base, devs[i]->size))
			return dtb_fail(err, errlen, -EINVAL,
					"device tree: device at 0x%llx: size 0x%llx wraps or is 0",
					(unsigned long long)devs[i]->base,
					(unsigned long long)devs[i]->size);
		if (devs[i]->spi > DTB_SPI_MAX)
			return dtb_fail(err, errlen, -EINVAL,
					"device tree: device at 0x%llx: SPI %u, at most %d",
					(unsigned long long)devs[i]->base,
					devs[i]->spi, DTB_SPI_MAX);
	}
	return 0;
}

int dtb_check_desc(const struct dtb_desc *d, char *err, size_t errlen)
{
	unsigned int i, j;

	if (!d->nr_ram || d->nr_ram > DTB_MAX_RAM_RANGES)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: %u RAM ranges, need 1 to %d",
				d->nr_ram, DTB_MAX_RAM_RANGES);
	for (i = 0; i < d->nr_ram; i++)
		if (!range_ok(d->ram[i].base, d->ram[i].size))
			return dtb_fail(err, errlen, -EINVAL,
					"device tree: RAM range %u (0x%llx, size 0x%llx) wraps or is empty",
					i, (unsigned long long)d->ram[i].base,
					(unsigned long long)d->ram[i].size);
	if (!d->nr_cpus || d->nr_cpus > DTB_MAX_CPUS || !d->mpidr)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: %u CPUs, need 1 to %d with their MPIDRs",
				d->nr_cpus, DTB_MAX_CPUS);
	for (i = 1; i < d->nr_cpus; i++)
		for (j = 0; j < i; j++)
			if (!((d->mpidr[i] ^ d->mpidr[j]) & DTB_MPIDR_AFF_MASK))
				return dtb_fail(err, errlen, -EINVAL,
						"device tree: vCPUs %u and %u have the same MPIDR affinity 0x%llx",
						j, i,
						(unsigned long long)(d->mpidr[i] &
							DTB_MPIDR_AFF_MASK));
	if (!range_ok(d->gicd.base, d->gicd.size) ||
	    !range_ok(d->gicr.base, d->gicr.size) || !d->gicr_stride ||
	    d->gicr.size / d->gicr_stride < d->nr_cpus)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: %u CPUs need %u redistributors of 0x%x bytes, the region has 0x%llx",
				d->nr_cpus, d->nr_cpus, d->gicr_stride,
				(unsigned long long)d->gicr.size);
	if (d->initrd_size && !range_ok(d->initrd_start, d->initrd_size))
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: initrd at 0x%llx, size 0x%llx wraps",
				(unsigned long long)d->initrd_start,
				(unsigned long long)d->initrd_size);
	if (d->pci && (d->pci->bus_last < d->pci->bus_first ||
		       d->pci->bus_last > 255 ||
		       d->pci->ecam_size != (d->pci->bus_last -
					     d->pci->bus_first + 1ULL) << 20))
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: PCI buses %u-%u do not match ECAM size 0x%llx (1 MiB a bus, 0..255)",
				d->pci->bus_first, d->pci->bus_last,
				(unsigned long long)d->pci->ecam_size);
	if (d->pci && !d->its.size)
		return dtb_fail(err, errlen, -EINVAL,
				"device tree: a PCI host needs the ITS for its MSIs");
	return dtb_check_devs(d, err, errlen);
}

void dtb_desc_init(struct dtb_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->gicd = (struct dtb_range){ ARM64_GICD_BASE, ARM64_GICD_SIZE };
	d->gicr = (struct dtb_range){ ARM64_GICR_BASE, ARM64_GICR_SIZE };
	d->its = (struct dtb_range){ ARM64_GIC_ITS_BASE, ARM64_GIC_ITS_SIZE };
	d->gicr_stride = ARM64_GICR_STRIDE;
	d->timer_ppi[0] = ARM64_PPI_TIMER_SEC;
	d->timer_ppi[1] = ARM64_PPI_TIMER_PHYS;
	d->timer_ppi[2] = ARM64_PPI_TIMER_VIRT;
	d->timer_ppi[3] = ARM64_PPI_TIMER_HYP;
	d->apb_clock_hz = ARM64_APB_CLOCK_HZ;
	d->uart = (struct dtb_dev){ ARM64_PL011_BASE, ARM64_PL011_SIZE,
				    ARM64_SPI_PL011 };
	d->rtc = (struct dtb_dev){ ARM64_PL031_BASE, ARM64_PL031_SIZE,
				   ARM64_SPI_PL031 };
	d->exit = (struct dtb_range){ ARM64_EXIT_MMIO_ADDR,
				      ARM64_EXIT_MMIO_SIZE };
}

void dtb_desc_init_pci(struct dtb_pci *pci)
{
	memset(pci, 0, sizeof(*pci));
	pci->ecam_base = ARM64_PCI_ECAM_BASE;
	pci->ecam_size = ARM64_PCI_ECAM_SIZE;
	pci->bus_first = 0;
	pci->bus_last = ARM64_PCI_ECAM_SIZE / 0x100000 - 1;
	pci->mmio32 = (struct dtb_range){ ARM64_PCI_MMIO32_BASE,
					  ARM64_PCI_MMIO32_SIZE };
	pci->mmio64 = (struct dtb_range){ ARM64_PCI_MMIO64_BASE,
					  ARM64_PCI_MMIO64_SIZE };
}
