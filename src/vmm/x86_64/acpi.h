/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ACPI tables for the x86_64 guest: a hardware-reduced platform (ACPI 6.3)
 * described by RSDP, XSDT, FADT, MADT, DSDT and, with a PCI host bridge,
 * MCFG. The guest finds its CPUs through the MADT and its virtio-mmio
 * devices, COM1, the pvpanic port, the PCI root bridge and the VM
 * generation ID through the DSDT.
 */
#ifndef MICROVM_X86_ACPI_H
#define MICROVM_X86_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_MAX_CPUS 255 /* xAPIC IDs 0..254; 255 is the broadcast ID */

/* One virtio-mmio slot: _HID "LNRO0005", edge, active-high interrupt. */
struct acpi_mmio_dev {
	uint64_t base; /* register window; must lie below 4 GiB */
	uint64_t size;
	uint32_t gsi;  /* IOAPIC pin, below IOAPIC_NR_PINS */
};

/* The PCI host bridge (PNP0A08, segment 0); present == false: no PCI. */
struct acpi_pci_host {
	bool present;
	uint64_t ecam_base;   /* MCFG base (bus 0's config), 1 MiB aligned */
	uint8_t bus_start, bus_end;
	uint64_t mmio32_base; /* 32-bit BAR window, below 4 GiB, size > 0 */
	uint64_t mmio32_size;
	uint64_t mmio64_base; /* 64-bit BAR window */
	uint64_t mmio64_size; /* 0: none */
};

struct acpi_config {
	unsigned int ncpus; /* 1..ACPI_MAX_CPUS, APIC IDs 0..ncpus-1 */
	const struct acpi_mmio_dev *mmio;
	unsigned int nr_mmio; /* at most VIRTIO_MMIO_MAX_SLOTS */
	struct acpi_pci_host pci;
	/*
	 * A CMOS RTC at ports 0x70-0x71, ISA IRQ 8: described in the DSDT
	 * (PNP0B00). false: the FADT says "CMOS RTC not present", so Linux
	 * does not probe ports that would read as all ones.
	 */
	bool rtc;
	/*
	 * The pvpanic event port (QEMU0001, one byte, as QEMU's ISA
	 * pvpanic); 0: no such device.
	 */
	uint16_t pvpanic_port;
	/*
	 * The VM generation ID (_CID VM_GEN_COUNTER, which Linux's vmgenid
	 * driver matches; _HID MVMG0001): 16 bytes at @vmgenid_gpa (8-byte aligned, below
	 * 4 GiB), whose ADDR package gives their address. A new ID is
	 * announced by the generic event device (ACPI0013) on @ged_gsi, edge
	 * and active high, whose _EVT notifies the ID's device. 0: neither
	 * device.
	 */
	uint64_t vmgenid_gpa;
	uint32_t ged_gsi;
};

/**
 * acpi_build() - write the ACPI tables for @cfg into @buf.
 * @cfg: what the guest has
 * @buf: host buffer the guest will see at @buf_gpa
 * @size: bytes available in @buf
 * @buf_gpa: guest physical address of @buf, 16-byte aligned
 *
 * The RSDP (revision 2) comes first at offset 0, so a guest that scans
 * 0xe0000-0xfffff finds it when @buf_gpa is LAYOUT_ACPI_ADDR; the other
 * tables follow at 8-byte aligned offsets. Nothing past the returned
 * length is written, and nothing past @size in any case.
 *
 * Return: bytes used, -ENOSPC when the tables do not fit in @size,
 * -EINVAL for a bad @cfg (CPU count, device window above 4 GiB or a GSI
 * the IOAPIC does not have, malformed PCI windows), -ENOMEM.
 * Context: setup, any thread.
 */
int acpi_build(const struct acpi_config *cfg, uint8_t *buf, size_t size,
	       uint64_t buf_gpa);

#endif
