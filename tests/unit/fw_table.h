/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading firmware tables the VMM wrote (ACPI, the MP table) in unit
 * tests: little-endian fields and byte checksums.
 */
#ifndef MICROVM_TEST_FW_TABLE_H
#define MICROVM_TEST_FW_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The @n-byte little-endian value at @p. */
static inline uint64_t le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A table's checksum: its @n bytes add up to 0 modulo 256. */
static inline bool sums_to_zero(const uint8_t *p, size_t n)
{
	uint8_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum = (uint8_t)(sum + p[i]);
	return sum == 0;
}

#endif
