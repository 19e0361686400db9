// SPDX-License-Identifier: Apache-2.0
/*
 * ACPI tables for the x86_64 guest. The platform is hardware-reduced
 * (ACPI 6.3 §4.1): no PM1 blocks, GPEs, SCI or FACS; poweroff goes through
 * the FADT sleep control register and reboot through the reset register.
 * The fixed-layout tables are written field by field at their spec
 * offsets; the DSDT comes from the AML builder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "acpi.h"
#include "cpuid_topo.h"
#include "layout.h"
#include "vmm/aml.h"

#define ACPI_OEM_ID "MICROV"
#define ACPI_OEM_TABLE_ID "MICROVM "
#define ACPI_OEM_REVISION 1
#define ACPI_HDR_LEN AML_TABLE_HEADER_LEN
#define ACPI_TABLE_ALIGN 8

/* RSDP, ACPI 6.3 §5.2.5.3. */
#define RSDP_SIG "RSD PTR "
#define RSDP_LEN 36
#define RSDP_V1_LEN 20
#define RSDP_REVISION 2

/* FADT, ACPI 6.3 §5.2.9: revision 6, minor 3. Field offsets. */
#define FADT_LEN 276
#define FADT_REVISION 6
#define FADT_MINOR_REVISION 3
#define FADT_IAPC_BOOT_ARCH 109
#define FADT_FLAGS 112
#define FADT_RESET_REG 116
#define FADT_RESET_VALUE 128
#define FADT_MINOR 131
#define FADT_X_DSDT 140
#define FADT_SLEEP_CONTROL_REG 244
#define FADT_SLEEP_STATUS_REG 256
#define FADT_HYPERVISOR_ID 268
#define FADT_HYPERVISOR_NAME "MICROVM"

/*
 * IA-PC boot architecture flags (§5.2.9.3). The 8042 bit (1) stays clear,
 * as Firecracker's: Linux then finds the keyboard controller only through
 * the DSDT's PNP0303 device (acpi_dsdt_ps2()), the one way in for
 * SendCtrlAltDel.
 */
#define IAPC_VGA_NOT_PRESENT (1u << 2)
#define IAPC_CMOS_RTC_NOT_PRESENT (1u << 5)

/* FADT fixed feature flags (§5.2.9). */
#define FADT_F_WBINVD (1u << 0)
#define FADT_F_PROC_C1 (1u << 2)
#define FADT_F_PWR_BUTTON (1u << 4) /* no fixed-feature power button */
#define FADT_F_SLP_BUTTON (1u << 5) /* no fixed-feature sleep button */
#define FADT_F_RESET_REG_SUP (1u << 10)
#define FADT_F_HW_REDUCED_ACPI (1u << 20)

/* Generic Address Structure (§5.2.3.2). */
#define GAS_SPACE_SYSTEM_IO 1
#define GAS_ACCESS_BYTE 1

/* MADT, ACPI 6.3 §5.2.12, revision 5. */
#define MADT_REVISION 5
#define MADT_PCAT_COMPAT (1u << 0)
#define MADT_LAPIC 0
#define MADT_LAPIC_LEN 8
#define MADT_LAPIC_ENABLED (1u << 0)
#define MADT_IOAPIC 1
#define MADT_IOAPIC_LEN 12
#define MADT_ISO 2
#define MADT_ISO_LEN 10
#define MADT_LAPIC_NMI 4
#define MADT_LAPIC_NMI_LEN 6
#define MADT_ALL_PROCESSORS 0xff
#define MADT_IOAPIC_ID IOAPIC_ID

/* MCFG, PCI Firmware Specification 3.2 §4.1.2. */
#define MCFG_REVISION 1
#define MCFG_LEN (ACPI_HDR_LEN + 8 + 16)
#define ECAM_BUS_SHIFT 20

#define XSDT_REVISION 1
#define DSDT_REVISION 2 /* 64-bit integers */

#define PCI_CONFIG_PORTS 8 /* 0xcf8-0xcff */
#define COM1_PORTS 8
#define RTC_PORT 0x70 /* the PC's CMOS RTC: index and data port */
#define RTC_PORTS 2
#define PVPANIC_PORTS 1
#define STA_PRESENT_ENABLED_SHOWN_OK 0x0f /* _STA bits 0-3, ACPI 6.3 §6.3.7 */

/* The caller's buffer, filled from the front. */
struct acpi_out {
	uint8_t *buf;
	size_t size;
	size_t used;
	uint64_t gpa;
};

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Claim @len zeroed bytes at the next aligned offset, or NULL. */
static uint8_t *acpi_alloc(struct acpi_out *o, size_t len, uint64_t *gpa)
{
	size_t off = (o->used + ACPI_TABLE_ALIGN - 1) &
		     ~(size_t)(ACPI_TABLE_ALIGN - 1);

	if (off > o->size || len > o->size - off)
		return NULL;
	memset(o->buf + o->used, 0, off + len - o->used);
	o->used = off + len;
	*gpa = o->gpa + off;
	return o->buf + off;
}

/* System description table header (§5.2.6); checksum by acpi_seal(). */
static void acpi_header(uint8_t *t, const char *sig, size_t len,
			uint8_t revision)
{
	memcpy(t, sig, 4);
	put_le(t + 4, len, 4);
	t[8] = revision;
	memcpy(t + 10, ACPI_OEM_ID, 6);
	memcpy(t + 16, ACPI_OEM_TABLE_ID, 8);
	put_le(t + 24, ACPI_OEM_REVISION, 4);
	memcpy(t + 28, AML_CREATOR_ID, 4);
	put_le(t + 32, AML_CREATOR_REVISION, 4);
}

static void acpi_seal(uint8_t *t, size_t len)
{
	t[9] = 0;
	t[9] = aml_checksum(t, len);
}

/* An 8-bit SystemIO register, byte access (§5.2.3.2). */
static void acpi_gas_io8(uint8_t *p, uint16_t port)
{
	p[0] = GAS_SPACE_SYSTEM_IO;
	p[1] = 8;	/* bit width */
	p[2] = 0;	/* bit offset */
	p[3] = GAS_ACCESS_BYTE;
	put_le(p + 4, port, 8);
}

static void acpi_fadt(uint8_t *t, uint64_t dsdt_gpa, bool rtc)
{
	acpi_header(t, "FACP", FADT_LEN, FADT_REVISION);
	put_le(t + FADT_IAPC_BOOT_ARCH, IAPC_VGA_NOT_PRESENT |
	       (rtc ? 0 : IAPC_CMOS_RTC_NOT_PRESENT), 2);
	put_le(t + FADT_FLAGS, FADT_F_WBINVD | FADT_F_PROC_C1 |
	       FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP |
	       FADT_F_HW_REDUCED_ACPI, 4);
	acpi_gas_io8(t + FADT_RESET_REG, PORT_ACPI_RESET);
	t[FADT_RESET_VALUE] = ACPI_RESET_VALUE;
	t[FADT_MINOR] = FADT_MINOR_REVISION;
	put_le(t + FADT_X_DSDT, dsdt_gpa, 8);
	acpi_gas_io8(t + FADT_SLEEP_CONTROL_REG, PORT_ACPI_SLEEP_CTL);
	acpi_gas_io8(t + FADT_SLEEP_STATUS_REG, PORT_ACPI_SLEEP_STS);
	memcpy(t + FADT_HYPERVISOR_ID, FADT_HYPERVISOR_NAME,
	       strlen(FADT_HYPERVISOR_NAME));
	acpi_seal(t, FADT_LEN);
}

static size_t acpi_madt_len(unsigned int ncpus)
{
	return ACPI_HDR_LEN + 8 + ncpus * MADT_LAPIC_LEN + MADT_IOAPIC_LEN +
	       MADT_ISO_LEN + MADT_LAPIC_NMI_LEN;
}

static void acpi_madt(uint8_t *t, unsigned int ncpus)
{
	size_t len = acpi_madt_len(ncpus);
	uint8_t *p = t + ACPI_HDR_LEN + 8;
	unsigned int i;

	acpi_header(t, "APIC", len, MADT_REVISION);
	put_le(t + ACPI_HDR_LEN, LAPIC_ADDR, 4);
	put_le(t + ACPI_HDR_LEN + 4, MADT_PCAT_COMPAT, 4);
	for (i = 0; i < ncpus; i++, p += MADT_LAPIC_LEN) {
		p[0] = MADT_LAPIC;
		p[1] = MADT_LAPIC_LEN;
		p[2] = (uint8_t)i; /* ACPI processor UID */
		p[3] = (uint8_t)x86_apic_id(i);
		put_le(p + 4, MADT_LAPIC_ENABLED, 4);
	}
	p[0] = MADT_IOAPIC;
	p[1] = MADT_IOAPIC_LEN;
	p[2] = MADT_IOAPIC_ID;
	put_le(p + 4, IOAPIC_ADDR, 4);
	put_le(p + 8, 0, 4); /* GSI base */
	p += MADT_IOAPIC_LEN;
	/* ISA IRQ 0 (the PIT) is wired to IOAPIC pin 2. */
	p[0] = MADT_ISO;
	p[1] = MADT_ISO_LEN;
	p[2] = 0; /* bus: ISA */
	p[3] = 0; /* source IRQ */
	put_le(p + 4, 2, 4);
	put_le(p + 8, 0, 2); /* conforming polarity and trigger */
	p += MADT_ISO_LEN;
	p[0] = MADT_LAPIC_NMI;
	p[1] = MADT_LAPIC_NMI_LEN;
	p[2] = MADT_ALL_PROCESSORS;
	put_le(p + 3, 0, 2);
	p[5] = 1; /* LINT1 */
	acpi_seal(t, len);
}

static void acpi_mcfg(uint8_t *t, const struct acpi_pci_host *pci)
{
	uint8_t *p = t + ACPI_HDR_LEN + 8;

	acpi_header(t, "MCFG", MCFG_LEN, MCFG_REVISION);
	put_le(p, pci->ecam_base, 8);
	put_le(p + 8, 0, 2); /* PCI segment group */
	p[10] = pci->bus_start;
	p[11] = pci->bus_end;
	acpi_seal(t, MCFG_LEN);
}

static void acpi_xsdt(uint8_t *t, const uint64_t *entries, unsigned int n)
{
	size_t len = ACPI_HDR_LEN + 8 * (size_t)n;
	unsigned int i;

	acpi_header(t, "XSDT", len, XSDT_REVISION);
	for (i = 0; i < n; i++)
		put_le(t + ACPI_HDR_LEN + 8 * i, entries[i], 8);
	acpi_seal(t, len);
}

static void acpi_rsdp(uint8_t *t, uint64_t xsdt_gpa)
{
	memcpy(t, RSDP_SIG, 8);
	memcpy(t + 9, ACPI_OEM_ID, 6);
	t[15] = RSDP_REVISION;
	put_le(t + 16, 0, 4); /* no RSDT */
	put_le(t + 20, RSDP_LEN, 4);
	put_le(t + 24, xsdt_gpa, 8);
	t[8] = aml_checksum(t, RSDP_V1_LEN);
	t[32] = aml_checksum(t, RSDP_LEN);
}

/* COM1: the 8250 at PORT_COM1 on ISA IRQ IRQ_COM1. */
static void acpi_dsdt_com1(struct aml *a)
{
	aml_device_begin(a, "COM1");
	aml_name_eisaid(a, "_HID", "PNP0501");
	aml_name_integer(a, "_UID", 0);
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_io(a, PORT_COM1, PORT_COM1, 0, COM1_PORTS);
	aml_irq_noflags(a, IRQ_COM1);
	aml_end(a);
	aml_end(a);
}

/*
 * The PS/2 keyboard controller (i8042 at 0x60/0x64, ISA IRQ 1), declared
 * as Firecracker's DSDT does: with the FADT's 8042 flag clear, Linux
 * binds its i8042 driver only to a PNP0303 device, and that keyboard is
 * how SendCtrlAltDel reaches the guest.
 */
static void acpi_dsdt_ps2(struct aml *a)
{
	aml_device_begin(a, "PS2_");
	aml_name_eisaid(a, "_HID", "PNP0303");
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_io(a, PORT_I8042_DATA, PORT_I8042_DATA, 1, 1);
	aml_io(a, PORT_I8042_CMD, PORT_I8042_CMD, 1, 1);
	aml_irq_noflags(a, IRQ_I8042_KBD);
	aml_end(a);
	aml_end(a);
}

/*
 * The CMOS RTC. Described here, it is found without legacy probing, and
 * its interrupt is mapped through the IOAPIC even with no legacy PIC.
 */
static void acpi_dsdt_rtc(struct aml *a)
{
	aml_device_begin(a, "RTC");
	aml_name_eisaid(a, "_HID", "PNP0B00");
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_io(a, RTC_PORT, RTC_PORT, 1, RTC_PORTS);
	aml_irq_noflags(a, IRQ_RTC);
	aml_end(a);
	aml_end(a);
}

/*
 * pvpanic, as QEMU describes its ISA device: Linux's pvpanic-mmio driver
 * binds to _HID QEMU0001 and takes the port from _CRS (an IO resource
 * works as well as memory). _STA says present and working, so the device
 * is enumerated even by code that checks it before _CRS.
 */
static void acpi_dsdt_pvpanic(struct aml *a, uint16_t port)
{
	aml_device_begin(a, "PEVT");
	aml_name_string(a, "_HID", "QEMU0001");
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_io(a, port, port, 1, PVPANIC_PORTS);
	aml_end(a);
	aml_name_integer(a, "_STA", STA_PRESENT_ENABLED_SHOWN_OK);
	aml_end(a);
}

/*
 * The VM generation ID and the event device that announces a new one.
 * Linux's vmgenid driver (and Windows) match the _CID VM_GEN_COUNTER,
 * which is not a valid _HID; the _HID is the project's own. The driver
 * reads the ID's address from ADDR, a package of its low and high 32
 * bits; a Notify on the device makes it read the ID again and, when it
 * changed, reseed the kernel's random number generator. The generic
 * event device (ACPI 6.3 §5.6.9) runs _EVT on its interrupt; it has no
 * other event, so _EVT does not look at Arg0.
 */
static void acpi_dsdt_vmgenid(struct aml *a, uint64_t gpa, uint32_t gsi)
{
	aml_device_begin(a, "VGEN");
	aml_name_string(a, "_HID", "MVMG0001");
	aml_name_string(a, "_CID", "VM_GEN_COUNTER");
	aml_name_string(a, "_DDN", "VM_Gen_Counter");
	aml_name(a, "ADDR");
	aml_package_begin(a, 2);
	aml_integer(a, gpa & UINT32_MAX);
	aml_integer(a, gpa >> 32);
	aml_end(a);
	aml_end(a);
	aml_device_begin(a, "GED0");
	aml_name_string(a, "_HID", "ACPI0013");
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_interrupt(a, AML_INT_CONSUMER | AML_INT_EDGE, gsi);
	aml_end(a);
	aml_method_begin(a, "_EVT", 1, false);
	/* The namespace search upward finds VGEN in \\_SB. */
	aml_notify(a, "VGEN", 0x80);
	aml_end(a);
	aml_end(a);
}

/* One virtio-mmio transport, matched by Linux's virtio_mmio driver. */
static void acpi_dsdt_virtio(struct aml *a, unsigned int n,
			     const struct acpi_mmio_dev *dev)
{
	char name[8];

	snprintf(name, sizeof(name), "VR%02X", n & 0xffu);
	aml_device_begin(a, name);
	aml_name_string(a, "_HID", "LNRO0005");
	aml_name_integer(a, "_UID", n);
	aml_name_integer(a, "_CCA", 1);
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_memory32_fixed(a, true, (uint32_t)dev->base, (uint32_t)dev->size);
	aml_interrupt(a, AML_INT_CONSUMER | AML_INT_EDGE, dev->gsi);
	aml_end(a);
	aml_end(a);
}

static uint64_t acpi_ecam_start(const struct acpi_pci_host *pci)
{
	return pci->ecam_base + ((uint64_t)pci->bus_start << ECAM_BUS_SHIFT);
}

static uint64_t acpi_ecam_size(const struct acpi_pci_host *pci)
{
	return (uint64_t)(pci->bus_end - pci->bus_start + 1) << ECAM_BUS_SHIFT;
}

/*
 * The ECAM window is not a bridge window: PCI Firmware Specification 3.2
 * §4.1.2 wants it reserved by a motherboard resource device (PNP0C02),
 * which is also where Linux looks before it trusts the MCFG.
 */
static void acpi_dsdt_ecam(struct aml *a, const struct acpi_pci_host *pci)
{
	uint64_t start = acpi_ecam_start(pci);
	uint64_t end = start + acpi_ecam_size(pci) - 1;

	aml_device_begin(a, "RES0");
	aml_name_eisaid(a, "_HID", "PNP0C02");
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	if (end <= UINT32_MAX)
		aml_memory32_fixed(a, true, (uint32_t)start,
				   (uint32_t)acpi_ecam_size(pci));
	else
		aml_qword_memory(a, AML_CONSUMER, AML_NON_CACHEABLE, start,
				 end);
	aml_end(a);
	aml_end(a);
}

static void acpi_dsdt_pci(struct aml *a, const struct acpi_pci_host *pci)
{
	aml_device_begin(a, "PCI0");
	aml_name_eisaid(a, "_HID", "PNP0A08");
	aml_name_eisaid(a, "_CID", "PNP0A03");
	aml_name_integer(a, "_SEG", 0);
	aml_name_integer(a, "_BBN", pci->bus_start);
	aml_name_integer(a, "_UID", 0);
	aml_name(a, "_CRS");
	aml_resource_template_begin(a);
	aml_word_bus_number(a, pci->bus_start, pci->bus_end);
	aml_io(a, PORT_PCI_CONFIG_ADDR, PORT_PCI_CONFIG_ADDR, 1,
	       PCI_CONFIG_PORTS);
	aml_dword_memory(a, AML_PRODUCER, AML_NON_CACHEABLE,
			 (uint32_t)pci->mmio32_base,
			 (uint32_t)(pci->mmio32_base + pci->mmio32_size - 1));
	if (pci->mmio64_size)
		aml_qword_memory(a, AML_PRODUCER, AML_NON_CACHEABLE,
				 pci->mmio64_base,
				 pci->mmio64_base + pci->mmio64_size - 1);
	aml_end(a);
	/*
	 * _OSC (ACPI 6.3 §6.2.11): grant every control the OS asks for by
	 * returning its capabilities buffer unchanged (no error bits).
	 */
	aml_method_begin(a, "_OSC", 4, false);
	aml_return(a);
	aml_arg(a, 3);
	aml_end(a);
	acpi_dsdt_ecam(a, pci);
	aml_end(a);
}

static int acpi_dsdt(const struct acpi_config *cfg, struct aml *a)
{
	unsigned int i;

	aml_definition_block_begin(a, "DSDT", DSDT_REVISION, ACPI_OEM_ID,
				   ACPI_OEM_TABLE_ID, ACPI_OEM_REVISION);
	aml_scope_begin(a, "_SB");
	acpi_dsdt_com1(a);
	acpi_dsdt_ps2(a);
	if (cfg->rtc)
		acpi_dsdt_rtc(a);
	if (cfg->pvpanic_port)
		acpi_dsdt_pvpanic(a, cfg->pvpanic_port);
	for (i = 0; i < cfg->nr_mmio; i++)
		acpi_dsdt_virtio(a, i, &cfg->mmio[i]);
	if (cfg->pci.present)
		acpi_dsdt_pci(a, &cfg->pci);
	if (cfg->vmgenid_gpa)
		acpi_dsdt_vmgenid(a, cfg->vmgenid_gpa, cfg->ged_gsi);
	aml_end(a);
	/* \_S5: SLP_TYP for the sleep control register on poweroff. */
	aml_name(a, "_S5");
	aml_package_begin(a, 4);
	aml_integer(a, ACPI_S5_SLP_TYP);
	aml_integer(a, 0);
	aml_integer(a, 0);
	aml_integer(a, 0);
	aml_end(a);
	aml_end(a);
	return aml_finish(a);
}

/* Guest physical ranges that must not overlap: [start, end] inclusive. */
struct acpi_range {
	uint64_t start, end;
};

static bool acpi_range_add(struct acpi_range *r, unsigned int *n,
			   uint64_t base, uint64_t size)
{
	unsigned int i;

	if (!size || base + size - 1 < base)
		return false;
	for (i = 0; i < *n; i++) {
		if (base <= r[i].end && r[i].start <= base + size - 1)
			return false;
	}
	r[*n].start = base;
	r[*n].end = base + size - 1;
	(*n)++;
	return true;
}

static int acpi_check_pci(const struct acpi_pci_host *pci,
			  struct acpi_range *r, unsigned int *n)
{
	if (pci->bus_start > pci->bus_end ||
	    pci->ecam_base & ((1ULL << ECAM_BUS_SHIFT) - 1) ||
	    pci->ecam_base > UINT64_MAX - (256ULL << ECAM_BUS_SHIFT))
		return -EINVAL;
	if (pci->mmio32_base > UINT32_MAX ||
	    pci->mmio32_size > (uint64_t)UINT32_MAX + 1 - pci->mmio32_base)
		return -EINVAL;
	if (!acpi_range_add(r, n, acpi_ecam_start(pci), acpi_ecam_size(pci)) ||
	    !acpi_range_add(r, n, pci->mmio32_base, pci->mmio32_size))
		return -EINVAL;
	if (pci->mmio64_size &&
	    !acpi_range_add(r, n, pci->mmio64_base, pci->mmio64_size))
		return -EINVAL;
	return 0;
}

/*
 * An edge-triggered, exclusive interrupt needs a pin of its own: not one
 * COM1, the i8042 keyboard, the RTC or the timer (ISA IRQ 0 on pin 2)
 * has, nor one of the first @i virtio-mmio devices'.
 */
static bool acpi_gsi_free(const struct acpi_config *cfg, uint32_t gsi,
			  unsigned int i)
{
	unsigned int j;

	if (gsi >= IOAPIC_NR_PINS || gsi == IRQ_COM1 || gsi == 0 || gsi == 2 ||
	    gsi == IRQ_I8042_KBD || (cfg->rtc && gsi == IRQ_RTC))
		return false;
	for (j = 0; j < i; j++) {
		if (cfg->mmio[j].gsi == gsi)
			return false;
	}
	return true;
}

static int acpi_check(const struct acpi_config *cfg, uint64_t buf_gpa)
{
	struct acpi_range r[VIRTIO_MMIO_MAX_SLOTS + 3];
	const struct acpi_mmio_dev *dev;
	unsigned int i, n = 0;

	if (cfg->ncpus < 1 || cfg->ncpus > ACPI_MAX_CPUS || buf_gpa & 15)
		return -EINVAL;
	if (cfg->nr_mmio > VIRTIO_MMIO_MAX_SLOTS ||
	    (cfg->nr_mmio && !cfg->mmio))
		return -EINVAL;
	for (i = 0; i < cfg->nr_mmio; i++) {
		dev = &cfg->mmio[i];
		if (dev->base > UINT32_MAX ||
		    dev->size > (uint64_t)UINT32_MAX + 1 - dev->base ||
		    dev->size > UINT32_MAX || !acpi_gsi_free(cfg, dev->gsi, i) ||
		    !acpi_range_add(r, &n, dev->base, dev->size))
			return -EINVAL;
	}
	if (cfg->vmgenid_gpa &&
	    (cfg->vmgenid_gpa & 7 || cfg->vmgenid_gpa > UINT32_MAX - 15 ||
	     !acpi_gsi_free(cfg, cfg->ged_gsi, cfg->nr_mmio)))
		return -EINVAL;
	if (cfg->pci.present)
		return acpi_check_pci(&cfg->pci, r, &n);
	return 0;
}

/* Lay the tables out after the RSDP and fill them in. */
static int acpi_write(const struct acpi_config *cfg, const struct aml *dsdt,
		      struct acpi_out *o)
{
	uint64_t rsdp_gpa = 0, xsdt_gpa = 0, dsdt_gpa = 0, entries[3] = { 0 };
	uint8_t *rsdp, *xsdt, *fadt, *madt, *mcfg = NULL, *t;
	unsigned int n = 0;
	unsigned int nent = cfg->pci.present ? 3 : 2;

	rsdp = acpi_alloc(o, RSDP_LEN, &rsdp_gpa);
	xsdt = acpi_alloc(o, ACPI_HDR_LEN + 8 * nent, &xsdt_gpa);
	fadt = acpi_alloc(o, FADT_LEN, &entries[n++]);
	madt = acpi_alloc(o, acpi_madt_len(cfg->ncpus), &entries[n++]);
	if (cfg->pci.present)
		mcfg = acpi_alloc(o, MCFG_LEN, &entries[n++]);
	t = acpi_alloc(o, dsdt->len, &dsdt_gpa);
	if (!rsdp || !xsdt || !fadt || !madt || !t ||
	    (cfg->pci.present && !mcfg))
		return -ENOSPC;
	memcpy(t, dsdt->buf, dsdt->len);
	acpi_fadt(fadt, dsdt_gpa, cfg->rtc);
	acpi_madt(madt, cfg->ncpus);
	if (mcfg)
		acpi_mcfg(mcfg, &cfg->pci);
	acpi_xsdt(xsdt, entries, n);
	acpi_rsdp(rsdp, xsdt_gpa);
	return 0;
}

int acpi_build(const struct acpi_config *cfg, uint8_t *buf, size_t size,
	       uint64_t buf_gpa)
{
	struct acpi_out o = { .buf = buf, .size = size, .gpa = buf_gpa };
	struct aml dsdt;
	int ret;

	if (!cfg || !buf || buf_gpa > UINT64_MAX - size)
		return -EINVAL;
	/* The return value counts bytes in an int. */
	if (o.size > INT32_MAX)
		o.size = INT32_MAX;
	ret = acpi_check(cfg, buf_gpa);
	if (ret)
		return ret;
	aml_init(&dsdt);
	ret = acpi_dsdt(cfg, &dsdt);
	if (!ret)
		ret = acpi_write(cfg, &dsdt, &o);
	aml_release(&dsdt);
	return ret ? ret : (int)o.used;
}
