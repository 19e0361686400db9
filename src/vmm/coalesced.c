// SPDX-License-Identifier: Apache-2.0
/*
 * Replays KVM's coalesced-write ring (see coalesced.h). KVM fills a slot,
 * then publishes it by advancing "last" (with a write barrier); the VMM
 * reads "last" with acquire order, copies each slot out, replays it and
 * then hands it back by advancing "first" with release order.
 */
#include "vmm/coalesced.h"

#include <string.h>

unsigned int coalesced_drain(struct kvm_coalesced_mmio_ring *ring,
			     uint32_t entries, const struct bus *pio,
			     const struct bus *mmio)
{
	uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
	uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	if (!entries || first >= entries || last >= entries)
		return 0;
	while (first != last && n < entries) {
		struct kvm_coalesced_mmio e;

		memcpy(&e, &ring->coalesced_mmio[first], sizeof(e));
		if (e.len && e.len <= sizeof(e.data))
			bus_dispatch(e.pio ? pio : mmio, e.phys_addr, e.data,
				     e.len, true);
		/* Handed back once replayed: a caller that finds the ring
		 * empty knows every write in it has taken effect. */
		first = (first + 1) % entries;
		__atomic_store_n(&ring->first, first, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}
