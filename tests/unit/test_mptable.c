// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the MP table (MP spec 1.4): parse what mptable_build()
 * wrote the way Linux's mpparse does (find "_MP_" on a 16-byte boundary,
 * check its checksum, follow its pointer to "PCMP", check that table's
 * length and checksum, walk the entries by type) for 1, 2 and the most
 * vCPUs, then the sizes that do not fit and the arguments refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fw_table.h"
#include "test.h"
#include "layout.h"
#include "mptable.h"

#define GPA LAYOUT_MPTABLE_ADDR
#define GUARD 64
#define GUARD_BYTE 0xa5

static uint8_t buf[LAYOUT_MPTABLE_SIZE + GUARD];

/* What one walk of the entries found. */
struct mp_seen {
	unsigned int cpus, bsp, buses, ioapics, ioints, lints, bad;
	bool pin_seen[IOAPIC_NR_PINS];
	int pin_src[IOAPIC_NR_PINS]; /* ISA IRQ of each mp_INT pin, or -1 */
	bool extint_pin0, lint0_extint, lint1_nmi;
};

static void seen_cpu(struct mp_seen *s, const uint8_t *e, unsigned int i)
{
	CHECK_EQ(e[1], i);      /* APIC ID i, as the MADT's */
	CHECK_EQ(e[2], 0x14);   /* local APIC version */
	CHECK(e[3] & 1);        /* enabled */
	s->bsp += (e[3] & 2) != 0;
	if (i == 0)
		CHECK(e[3] & 2); /* vCPU 0 boots */
	s->cpus++;
}

static void seen_int(struct mp_seen *s, const uint8_t *e)
{
	uint8_t irqtype = e[1], src = e[5], dst = e[6], pin = e[7];

	CHECK_EQ(le(e + 2, 2), 0); /* conforming: ISA edge, active high */
	CHECK_EQ(e[4], 0);         /* source bus: the ISA bus */
	if (e[0] == 4) {
		CHECK_EQ(dst, 0xff); /* every local APIC */
		s->lint0_extint |= pin == 0 && irqtype == 3;
		s->lint1_nmi |= pin == 1 && irqtype == 1;
		s->lints++;
		return;
	}
	CHECK_EQ(dst, IOAPIC_ID);
	s->ioints++;
	if (pin >= IOAPIC_NR_PINS || s->pin_seen[pin]) {
		s->bad++;
		return;
	}
	s->pin_seen[pin] = true;
	if (irqtype == 0)
		s->pin_src[pin] = src;
	else if (irqtype == 3 && pin == 0 && src == 0)
		s->extint_pin0 = true;
}

/* Walks @count entries from @p, @end the table's end; 0 or -1. */
static int walk_entries(const uint8_t *p, const uint8_t *end,
			unsigned int count, struct mp_seen *s)
{
	unsigned int n, len;

	for (n = 0; n < count; n++, p += len) {
		len = p < end && p[0] == 0 ? 20 : 8;
		if (p >= end || p[0] > 4 || (size_t)(end - p) < len)
			return -1;
		switch (p[0]) {
		case 0:
			seen_cpu(s, p, s->cpus);
			break;
		case 1:
			CHECK(!memcmp(p + 2, "ISA   ", 6));
			CHECK_EQ(p[1], 0);
			s->buses++;
			break;
		case 2:
			CHECK_EQ(p[1], IOAPIC_ID);
			CHECK_EQ(p[2], 0x11);
			CHECK_EQ(p[3], 1); /* enabled */
			CHECK_EQ(le(p + 4, 4), IOAPIC_ADDR);
			s->ioapics++;
			break;
		default:
			seen_int(s, p);
			break;
		}
	}
	return p == end ? 0 : -1;
}

/* Finds and checks the tables in buf as a guest would. */
static void check_tables(unsigned int ncpus, int used)
{
	const uint8_t *f = NULL, *t;
	struct mp_seen s;
	uint64_t phys, len;
	unsigned int pin;
	int off;

	memset(&s, 0, sizeof(s));
	for (pin = 0; pin < IOAPIC_NR_PINS; pin++)
		s.pin_src[pin] = -1;
	for (off = 0; off + 16 <= used && !f; off += 16)
		if (!memcmp(buf + off, "_MP_", 4))
			f = buf + off;
	CHECK(f == buf);
	if (!f)
		return;
	CHECK_EQ(f[8], 1); /* length in paragraphs */
	CHECK_EQ(f[9], 4); /* spec 1.4 */
	CHECK(sums_to_zero(f, 16));
	CHECK_EQ(f[11], 0); /* a configuration table, not a default one */
	phys = le(f + 4, 4);
	CHECK(phys >= GPA && phys - GPA + 44 <= (uint64_t)used);
	if (phys < GPA || phys - GPA + 44 > (uint64_t)used)
		return;
	t = buf + (phys - GPA);
	CHECK(!memcmp(t, "PCMP", 4));
	len = le(t + 4, 2);
	CHECK_EQ(len, MPTABLE_LEN(ncpus) - 16);
	CHECK_EQ(phys - GPA + len, (uint64_t)used);
	if (phys - GPA + len > (uint64_t)used)
		return;
	CHECK(sums_to_zero(t, len));
	CHECK_EQ(t[6], 4);
	CHECK_EQ(le(t + 36, 4), LAPIC_ADDR);
	CHECK_EQ(le(t + 40, 2), 0); /* no extended entries */
	CHECK_EQ(le(t + 34, 2), ncpus + 2 + 24 + 2);
	CHECK_EQ(walk_entries(t + 44, t + len, le(t + 34, 2), &s), 0);
	CHECK_EQ(s.cpus, ncpus);
	CHECK_EQ(s.bsp, 1);
	CHECK_EQ(s.buses, 1);
	CHECK_EQ(s.ioapics, 1);
	CHECK_EQ(s.ioints, IOAPIC_NR_PINS);
	CHECK_EQ(s.lints, 2);
	CHECK_EQ(s.bad, 0);
	CHECK(s.lint0_extint && s.lint1_nmi && s.extint_pin0);
	/* ISA IRQ 0 on pin 2 (the MADT's override), IRQ n on pin n. */
	CHECK_EQ(s.pin_src[2], 0);
	for (pin = 1; pin < IOAPIC_NR_PINS; pin++)
		if (pin != 2)
			CHECK_EQ(s.pin_src[pin], pin);
}

static void test_cpus(void)
{
	static const unsigned int cpus[] = { 1, 2, 8, 254, MPTABLE_MAX_CPUS };
	unsigned int i, j;
	int used, bad;

	for (i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		memset(buf, GUARD_BYTE, sizeof(buf));
		used = mptable_build(cpus[i], buf, LAYOUT_MPTABLE_SIZE, GPA);
		CHECK_EQ(used, MPTABLE_LEN(cpus[i]));
		if (used <= 0)
			continue;
		check_tables(cpus[i], used);
		for (j = (unsigned int)used, bad = 0; j < sizeof(buf); j++)
			bad += buf[j] != GUARD_BYTE;
		CHECK_EQ(bad, 0);
	}
	/* The most vCPUs fit where the machine writes the table. */
	CHECK(MPTABLE_LEN(MPTABLE_MAX_CPUS) <= LAYOUT_MPTABLE_SIZE);
	CHECK(LAYOUT_MPTABLE_ADDR >= LAYOUT_ACPI_ADDR + LAYOUT_ACPI_SIZE);
	CHECK(LAYOUT_MPTABLE_ADDR + LAYOUT_MPTABLE_SIZE <= LAYOUT_RESET_VECTOR);
}

/* Every size below what the table needs fails and writes nothing. */
static void test_enospc(void)
{
	size_t need = MPTABLE_LEN(2), size;
	unsigned int bad = 0, touched = 0, j;

	for (size = 0; size < need; size++) {
		memset(buf, GUARD_BYTE, sizeof(buf));
		bad += mptable_build(2, buf, size, GPA) != -ENOSPC;
		for (j = 0; j < sizeof(buf); j++)
			touched += buf[j] != GUARD_BYTE;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(touched, 0);
	CHECK_EQ(mptable_build(2, buf, need, GPA), (int)need);
}

static void test_einval(void)
{
	CHECK_EQ(mptable_build(0, buf, LAYOUT_MPTABLE_SIZE, GPA), -EINVAL);
	CHECK_EQ(mptable_build(MPTABLE_MAX_CPUS + 1, buf, LAYOUT_MPTABLE_SIZE,
			       GPA), -EINVAL);
	CHECK_EQ(mptable_build(1, NULL, LAYOUT_MPTABLE_SIZE, GPA), -EINVAL);
	CHECK_EQ(mptable_build(1, buf, LAYOUT_MPTABLE_SIZE, GPA + 8), -EINVAL);
	CHECK_EQ(mptable_build(1, buf, LAYOUT_MPTABLE_SIZE, 0xfffffff0ULL),
		 -EINVAL);
}

int main(void)
{
	test_cpus();
	test_enospc();
	test_einval();
	return test_done();
}
