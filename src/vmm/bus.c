// SPDX-License-Identifier: Apache-2.0
/*
 * Sorted range table with binary search. Registration keeps the array
 * sorted by base and rejects overlaps, so lookups need no lock.
 */
#include "vmm/bus.h"

#include <errno.h>
#include <string.h>

int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 bus_access_fn fn, void *opaque)
{
	unsigned int i, pos;

	if (!len || base + len < base || !fn)
		return -EINVAL;
	if (bus->nr_ranges >= BUS_MAX_RANGES)
		return -ENOSPC;
	for (i = 0; i < bus->nr_ranges; i++) {
		const struct bus_range *r = &bus->ranges[i];

		if (base < r->base + r->len && r->base < base + len)
			return -EEXIST;
	}
	for (pos = 0; pos < bus->nr_ranges; pos++)
		if (bus->ranges[pos].base > base)
			break;
	memmove(&bus->ranges[pos + 1], &bus->ranges[pos],
		(bus->nr_ranges - pos) * sizeof(bus->ranges[0]));
	bus->ranges[pos] = (struct bus_range){ base, len, fn, opaque };
	bus->nr_ranges++;
	return 0;
}

bool bus_dispatch(const struct bus *bus, uint64_t addr, uint8_t *data,
		  unsigned int len, bool is_write)
{
	unsigned int lo = 0, hi = bus->nr_ranges;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct bus_range *r = &bus->ranges[mid];

		if (addr < r->base) {
			hi = mid;
		} else if (addr - r->base >= r->len) {
			lo = mid + 1;
		} else {
			if (len > r->len - (addr - r->base))
				return false;
			r->fn(r->opaque, addr - r->base, data, len, is_write);
			return true;
		}
	}
	return false;
}
