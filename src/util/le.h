/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Little-endian loads and stores of 1 to 8 bytes, for register handlers
 * whose access data arrives in guest (little-endian) byte order whatever
 * the host's order is.
 */
#ifndef MICROVM_LE_H
#define MICROVM_LE_H

#include <stdint.h>

static inline uint64_t le_get(const uint8_t *data, unsigned int len)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < len && i < 8; i++)
		v |= (uint64_t)data[i] << (8 * i);
	return v;
}

static inline void le_put(uint8_t *data, unsigned int len, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < len && i < 8; i++)
		data[i] = (uint8_t)(v >> (8 * i));
}

#endif
