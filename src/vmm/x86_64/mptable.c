// SPDX-License-Identifier: Apache-2.0
/*
 * The Intel MultiProcessor table (MP spec 1.4, chapter 4) for a guest that
 * boots without ACPI (acpi=off): the floating pointer structure, then the
 * configuration table with its base entries, each written field by field
 * at its spec offset. The machine it describes is the one the MADT does:
 * the same APIC IDs, the same IOAPIC, the timer on pin 2.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "layout.h"
#include "mptable.h"

/* Floating pointer structure (§4.1). */
#define MPF_SIG "_MP_"
#define MPF_PHYSPTR 4
#define MPF_LENGTH 8    /* in 16-byte units */
#define MPF_SPEC_REV 9
#define MPF_CHECKSUM 10
#define MPF_FEATURE1 11 /* 0: a configuration table is present */

/* Configuration table header (§4.2). */
#define MPC_SIG "PCMP"
#define MPC_BASE_LEN 4
#define MPC_SPEC_REV 6
#define MPC_CHECKSUM 7
#define MPC_OEM_ID 8      /* 8 bytes, space padded */
#define MPC_PRODUCT_ID 16 /* 12 bytes, space padded */
#define MPC_ENTRY_COUNT 34
#define MPC_LAPIC_ADDR 36
#define MPC_OEM_ID_STR "MICROVM "
#define MPC_PRODUCT_STR "MICROVM     "

#define MP_SPEC_REV_1_4 4

/* Base entry types (§4.3). */
#define MP_PROCESSOR 0
#define MP_BUS 1
#define MP_IOAPIC 2
#define MP_IOINT 3
#define MP_LINT 4

#define MP_CPU_ENABLED (1u << 0)
#define MP_CPU_BSP (1u << 1)
#define MP_LAPIC_VERSION 0x14 /* KVM's local APIC */
/* CPU signature: family 6; features: FPU (bit 0), on-chip APIC (bit 9). */
#define MP_CPU_SIGNATURE 0x600
#define MP_CPU_FEATURES ((1u << 0) | (1u << 9))

#define MP_BUS_ISA_ID 0
#define MP_BUS_ISA_TYPE "ISA   " /* 6 bytes, space padded */

#define MP_IOAPIC_VERSION 0x11 /* KVM's IOAPIC, 24 pins */
#define MP_IOAPIC_ENABLED (1u << 0)

/* Interrupt types (§4.3.4, table 4-9). */
#define MP_INT 0
#define MP_NMI 1
#define MP_EXTINT 3
#define MP_IRQ_CONFORMING 0  /* polarity and trigger as the bus: ISA edge */
#define MP_LAPIC_ALL 0xff

struct mp_out {
	uint8_t *p;
	unsigned int entries;
};

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The byte that makes @n bytes at @p sum to zero (checksum byte 0). */
static uint8_t mp_checksum(const uint8_t *p, size_t n)
{
	uint8_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum = (uint8_t)(sum + p[i]);
	return (uint8_t)-sum;
}

static void mp_cpu(struct mp_out *o, unsigned int i)
{
	uint8_t *p = o->p;

	p[0] = MP_PROCESSOR;
	p[1] = (uint8_t)i; /* local APIC ID, as the MADT's */
	p[2] = MP_LAPIC_VERSION;
	p[3] = MP_CPU_ENABLED | (i == 0 ? MP_CPU_BSP : 0);
	put_le(p + 4, MP_CPU_SIGNATURE, 4);
	put_le(p + 8, MP_CPU_FEATURES, 4);
	/* 12..19 reserved, zero */
	o->p += MPTABLE_CPU_LEN;
	o->entries++;
}

/* An I/O (type MP_IOINT) or local (MP_LINT) interrupt assignment. */
static void mp_int(struct mp_out *o, uint8_t entry, uint8_t irqtype,
		   uint8_t src_irq, uint8_t dst_id, uint8_t dst_pin)
{
	uint8_t *p = o->p;

	p[0] = entry;
	p[1] = irqtype;
	put_le(p + 2, MP_IRQ_CONFORMING, 2);
	p[4] = MP_BUS_ISA_ID;
	p[5] = src_irq;
	p[6] = dst_id;
	p[7] = dst_pin;
	o->p += MPTABLE_ENTRY_LEN;
	o->entries++;
}

static void mp_bus_ioapic(struct mp_out *o)
{
	uint8_t *p = o->p;

	p[0] = MP_BUS;
	p[1] = MP_BUS_ISA_ID;
	memcpy(p + 2, MP_BUS_ISA_TYPE, 6);
	p += MPTABLE_ENTRY_LEN;
	p[0] = MP_IOAPIC;
	p[1] = IOAPIC_ID;
	p[2] = MP_IOAPIC_VERSION;
	p[3] = MP_IOAPIC_ENABLED;
	put_le(p + 4, IOAPIC_ADDR, 4);
	o->p += 2 * MPTABLE_ENTRY_LEN;
	o->entries += 2;
}

/*
 * Pin n takes ISA IRQ n, except pin 2, which takes ISA IRQ 0 (the PIT,
 * arch_irq_routes()), and pin 0, the 8259's output (ExtINT), as in the
 * spec's default configurations (§5.3).
 */
static void mp_ioints(struct mp_out *o)
{
	unsigned int pin;

	for (pin = 0; pin < MPTABLE_NR_IOINT; pin++) {
		if (pin == 0)
			mp_int(o, MP_IOINT, MP_EXTINT, 0, IOAPIC_ID, 0);
		else
			mp_int(o, MP_IOINT, MP_INT, pin == 2 ? 0 : (uint8_t)pin,
			       IOAPIC_ID, (uint8_t)pin);
	}
	mp_int(o, MP_LINT, MP_EXTINT, 0, MP_LAPIC_ALL, 0);
	mp_int(o, MP_LINT, MP_NMI, 0, MP_LAPIC_ALL, 1);
}

static void mp_floating(uint8_t *f, uint64_t table_gpa)
{
	memcpy(f, MPF_SIG, 4);
	put_le(f + MPF_PHYSPTR, table_gpa, 4);
	f[MPF_LENGTH] = MPTABLE_FLOATING_LEN / 16;
	f[MPF_SPEC_REV] = MP_SPEC_REV_1_4;
	f[MPF_FEATURE1] = 0;
	f[MPF_CHECKSUM] = mp_checksum(f, MPTABLE_FLOATING_LEN);
}

int mptable_build(unsigned int ncpus, uint8_t *buf, size_t size,
		  uint64_t buf_gpa)
{
	size_t len = MPTABLE_LEN((size_t)ncpus);
	uint8_t *t = buf + MPTABLE_FLOATING_LEN;
	struct mp_out o = { .p = t + MPTABLE_HEADER_LEN };
	unsigned int i;

	if (!buf || ncpus < 1 || ncpus > MPTABLE_MAX_CPUS || buf_gpa & 15 ||
	    buf_gpa > UINT32_MAX - len)
		return -EINVAL;
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, len);
	for (i = 0; i < ncpus; i++)
		mp_cpu(&o, i);
	mp_bus_ioapic(&o);
	mp_ioints(&o);
	assert(o.p == buf + len);

	memcpy(t, MPC_SIG, 4);
	put_le(t + MPC_BASE_LEN, len - MPTABLE_FLOATING_LEN, 2);
	t[MPC_SPEC_REV] = MP_SPEC_REV_1_4;
	memcpy(t + MPC_OEM_ID, MPC_OEM_ID_STR, 8);
	memcpy(t + MPC_PRODUCT_ID, MPC_PRODUCT_STR, 12);
	put_le(t + MPC_ENTRY_COUNT, o.entries, 2);
	put_le(t + MPC_LAPIC_ADDR, LAPIC_ADDR, 4);
	t[MPC_CHECKSUM] = mp_checksum(t, len - MPTABLE_FLOATING_LEN);

	mp_floating(buf, buf_gpa + MPTABLE_FLOATING_LEN);
	return (int)len;
}
