// SPDX-License-Identifier: Apache-2.0
/*
 * Resource descriptors for the AML builder (ACPI 6.3 §6.4): the small IO
 * and IRQ descriptors, and the large Memory32Fixed, Extended Interrupt and
 * Word/DWord/QWord address space descriptors. Each appends its bytes to
 * the innermost open resource template; aml_end() adds the EndTag.
 */
#include <errno.h>

#include "vmm/aml.h"
#include "vmm/aml_priv.h"

/* Resource descriptor tags (ACPI 6.3 §6.4.2, §6.4.3). */
#define AML_RES_IRQ_NOFLAGS 0x22 /* small IRQ, 2 data bytes */
#define AML_RES_IO 0x47
#define AML_RES_MEMORY32_FIXED 0x86
#define AML_RES_DWORD_SPACE 0x87
#define AML_RES_WORD_SPACE 0x88
#define AML_RES_EXT_INTERRUPT 0x89
#define AML_RES_QWORD_SPACE 0x8a

/* Address space descriptor fields (ACPI 6.3 §6.4.3.5). */
#define AML_SPACE_MEMORY 0
#define AML_SPACE_BUS_NUMBER 2
#define AML_ADDR_MIN_FIXED (1u << 2)
#define AML_ADDR_MAX_FIXED (1u << 3)
#define AML_MEM_READ_WRITE (1u << 0)

static bool aml_in_template(struct aml *a)
{
	if (a->err)
		return false;
	if (!a->depth || a->kind[a->depth - 1] != AML_KIND_TEMPLATE) {
		aml_fail(a, -EINVAL);
		return false;
	}
	return true;
}

void aml_io(struct aml *a, uint16_t min, uint16_t max, uint8_t align,
	    uint8_t len)
{
	if (!aml_in_template(a))
		return;
	if (max < min) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, AML_RES_IO);
	aml_put_byte(a, 0x01); /* Decode16 */
	aml_put_le(a, min, 2);
	aml_put_le(a, max, 2);
	aml_put_byte(a, align);
	aml_put_byte(a, len);
}

void aml_irq_noflags(struct aml *a, unsigned int irq)
{
	if (!aml_in_template(a))
		return;
	if (irq > 15) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, AML_RES_IRQ_NOFLAGS);
	aml_put_le(a, 1u << irq, 2); /* mask of IRQ lines */
}

void aml_memory32_fixed(struct aml *a, bool writable, uint32_t base,
			uint32_t size)
{
	if (!aml_in_template(a))
		return;
	aml_put_byte(a, AML_RES_MEMORY32_FIXED);
	aml_put_le(a, 9, 2); /* length of what follows */
	aml_put_byte(a, writable ? AML_MEM_READ_WRITE : 0);
	aml_put_le(a, base, 4);
	aml_put_le(a, size, 4);
}

void aml_interrupt(struct aml *a, unsigned int flags, uint32_t gsi)
{
	if (!aml_in_template(a))
		return;
	if (flags & ~0xfu) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, AML_RES_EXT_INTERRUPT);
	aml_put_le(a, 6, 2);  /* flags, table length, one 32-bit number */
	aml_put_byte(a, (uint8_t)flags);
	aml_put_byte(a, 1);
	aml_put_le(a, gsi, 4);
}

/*
 * Word, DWord and QWord address space descriptors share one layout with
 * fields of @width bytes: granularity, minimum, maximum, translation
 * offset and length (ACPI 6.3 §6.4.3.5).
 */
static void aml_addr_space(struct aml *a, uint8_t tag, unsigned int width,
			   uint8_t type, uint8_t general, uint8_t specific,
			   uint64_t min, uint64_t max)
{
	if (!aml_in_template(a))
		return;
	/* The length, max - min + 1, must fit the field too. */
	if (max < min || max - min == UINT64_MAX ||
	    (width < 8 && max - min >= (1ULL << (8 * width)) - 1)) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, tag);
	aml_put_le(a, 3 + 5 * width, 2);
	aml_put_byte(a, type);
	aml_put_byte(a, general);
	aml_put_byte(a, specific);
	aml_put_le(a, 0, width);   /* granularity */
	aml_put_le(a, min, width);
	aml_put_le(a, max, width);
	aml_put_le(a, 0, width);   /* translation offset */
	aml_put_le(a, max - min + 1, width);
}

void aml_word_bus_number(struct aml *a, uint16_t min, uint16_t max)
{
	aml_addr_space(a, AML_RES_WORD_SPACE, 2, AML_SPACE_BUS_NUMBER,
		       AML_ADDR_MIN_FIXED | AML_ADDR_MAX_FIXED, 0, min, max);
}

static uint8_t aml_mem_flags(enum aml_cache cache)
{
	return (uint8_t)(AML_MEM_READ_WRITE | ((unsigned int)cache << 1));
}

void aml_dword_memory(struct aml *a, enum aml_usage usage,
		      enum aml_cache cache, uint32_t min, uint32_t max)
{
	aml_addr_space(a, AML_RES_DWORD_SPACE, 4, AML_SPACE_MEMORY,
		       (uint8_t)(usage | AML_ADDR_MIN_FIXED |
				 AML_ADDR_MAX_FIXED),
		       aml_mem_flags(cache), min, max);
}

void aml_qword_memory(struct aml *a, enum aml_usage usage,
		      enum aml_cache cache, uint64_t min, uint64_t max)
{
	aml_addr_space(a, AML_RES_QWORD_SPACE, 8, AML_SPACE_MEMORY,
		       (uint8_t)(usage | AML_ADDR_MIN_FIXED |
				 AML_ADDR_MAX_FIXED),
		       aml_mem_flags(cache), min, max);
}
