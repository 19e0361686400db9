/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Address-range dispatch for port I/O and MMIO exits. Devices register a
 * handler for [base, base + len) during setup; vCPU threads then look ranges
 * up without locks (the table is frozen once vCPUs run). A handler gets the
 * offset into its range and does its own locking.
 */
#ifndef MICROVM_BUS_H
#define MICROVM_BUS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/le.h"

/*
 * One access: @offset from the registered base, @len of 1, 2, 4 or 8 bytes,
 * @data in guest byte order (little endian). On a read the handler fills
 * @data; a handler with nothing to return leaves it as the caller set it
 * (all ones).
 */
typedef void (*bus_access_fn)(void *opaque, uint64_t offset, uint8_t *data,
			      unsigned int len, bool is_write);

#define BUS_MAX_RANGES 64

struct bus_range {
	uint64_t base;
	uint64_t len;
	bus_access_fn fn;
	void *opaque;
};

struct bus {
	const char *name; /* "pio" or "mmio", for messages */
	struct bus_range ranges[BUS_MAX_RANGES];
	unsigned int nr_ranges; /* sorted by base */
};

/**
 * bus_register() - claim [base, base + len) for @fn.
 * Return: 0, -EINVAL for an empty or wrapping range, -EEXIST on overlap,
 * -ENOSPC when the table is full.
 * Context: setup only, before vCPUs run.
 */
int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 bus_access_fn fn, void *opaque);

/**
 * bus_dispatch() - route one access to the range that holds @addr.
 * An access that straddles the end of a range goes nowhere.
 * Return: true when a handler took it; false when no range holds it (the
 * caller then reads all ones and drops writes).
 * Context: any vCPU thread.
 */
bool bus_dispatch(const struct bus *bus, uint64_t addr, uint8_t *data,
		  unsigned int len, bool is_write);

/* Little-endian helpers for handlers. */
static inline uint64_t bus_get(const uint8_t *data, unsigned int len)
{
	return le_get(data, len);
}

static inline void bus_put(uint8_t *data, unsigned int len, uint64_t v)
{
	le_put(data, len, v);
}

#endif
