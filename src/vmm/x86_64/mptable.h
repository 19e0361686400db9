/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Intel MultiProcessor table (MP spec 1.4) for the x86_64 guest: a
 * floating pointer structure and a configuration table naming every vCPU,
 * the ISA bus, the IOAPIC and each of its pins. Linux reads it only when
 * it does not use ACPI's MADT (acpi=off, or a kernel without ACPI).
 */
#ifndef MICROVM_X86_MPTABLE_H
#define MICROVM_X86_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_MAX_CPUS 255 /* xAPIC IDs 0..254, as the MADT's */

/* MP spec 1.4 §4.1, §4.2 and §4.3: sizes of the pieces. */
#define MPTABLE_FLOATING_LEN 16
#define MPTABLE_HEADER_LEN 44
#define MPTABLE_CPU_LEN 20
#define MPTABLE_ENTRY_LEN 8 /* bus, I/O APIC, I/O and local interrupt */
#define MPTABLE_NR_IOINT 24 /* one per IOAPIC pin (IOAPIC_NR_PINS) */
#define MPTABLE_NR_LINT 2   /* ExtINT on LINT0, NMI on LINT1 */

/* Bytes mptable_build() writes for @ncpus vCPUs. */
#define MPTABLE_LEN(ncpus)                                                 \
	(MPTABLE_FLOATING_LEN + MPTABLE_HEADER_LEN +                       \
	 (ncpus) * MPTABLE_CPU_LEN +                                       \
	 (2 + MPTABLE_NR_IOINT + MPTABLE_NR_LINT) * MPTABLE_ENTRY_LEN)

/**
 * mptable_build() - write the MP floating pointer and configuration table.
 * @ncpus: vCPUs, 1..MPTABLE_MAX_CPUS; vCPU i has APIC ID i, vCPU 0 boots
 * @buf: host buffer the guest will see at @buf_gpa
 * @size: bytes available in @buf
 * @buf_gpa: guest physical address of @buf, 16-byte aligned, below 4 GiB;
 *	a guest finds the floating pointer only in the first KiB of the EBDA
 *	or in 0xf0000-0xfffff
 *
 * The floating pointer comes first, the configuration table right after
 * it: processor entries (vCPU order), the ISA bus (id 0), the IOAPIC
 * (IOAPIC_ID, version 0x11, at IOAPIC_ADDR), an I/O interrupt entry for
 * each IOAPIC pin (ISA IRQ n on pin n, except that ISA IRQ 0, the timer,
 * is on pin 2 as the MADT's override says and pin 0 is the 8259's
 * ExtINT), then ExtINT on LINT0 and NMI on LINT1 of every local APIC.
 * Nothing past MPTABLE_LEN(@ncpus) is written.
 *
 * Return: bytes used (MPTABLE_LEN(@ncpus)), -EINVAL for a bad @ncpus or
 * @buf_gpa, -ENOSPC when @size is too small.
 * Context: setup, any thread.
 */
int mptable_build(unsigned int ncpus, uint8_t *buf, size_t size,
		  uint64_t buf_gpa);

#endif
