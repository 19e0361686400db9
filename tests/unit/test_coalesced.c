// SPDX-License-Identifier: Apache-2.0
/*
 * The coalesced-write ring's consumer (vmm/coalesced.c) on a ring laid out
 * as KVM lays it out in its page: writes replayed in order to the right
 * bus and offset, the slot handed back only after its write took effect,
 * wrap-around, guest lengths out of range dropped, indices out of range
 * left alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vmm/coalesced.h"

#define PAGE 4096

static struct kvm_coalesced_mmio_ring *ring;
static uint32_t entries;

struct seen {
	unsigned int n;
	uint64_t off[256];
	uint8_t byte[256];
	unsigned int len[256];
	uint32_t first_then[256]; /* ring->first while the write ran */
};

static struct seen pio_seen, mmio_seen;

static void record(void *opaque, uint64_t off, uint8_t *data,
		   unsigned int len, bool is_write)
{
	struct seen *s = opaque;

	CHECK(is_write);
	if (s->n >= 256)
		return;
	s->off[s->n] = off;
	s->byte[s->n] = data[0];
	s->len[s->n] = len;
	s->first_then[s->n] = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
	s->n++;
}

/* What KVM does for one write (virt/kvm/coalesced_mmio.c): fill the slot
 * at "last", then advance it. */
static void put(uint64_t addr, uint32_t len, uint32_t pio, uint8_t byte)
{
	struct kvm_coalesced_mmio *e = &ring->coalesced_mmio[ring->last];

	memset(e, 0, sizeof(*e));
	e->phys_addr = addr;
	e->len = len;
	e->pio = pio;
	e->data[0] = byte;
	ring->last = (ring->last + 1) % entries;
}

int main(void)
{
	static struct bus pio, mmio;
	unsigned int i;

	ring = aligned_alloc(PAGE, PAGE);
	CHECK(ring != NULL);
	if (!ring)
		return test_done();
	memset(ring, 0, PAGE);
	entries = coalesced_ring_entries(PAGE);
	CHECK_EQ(entries, (PAGE - 8) / 24); /* KVM_COALESCED_MMIO_MAX: 170 */
	CHECK_EQ(bus_register(&pio, 0x3f8, 8, record, &pio_seen), 0);
	CHECK_EQ(bus_register(&mmio, 0xd0000000, 0x1000, record, &mmio_seen),
		 0);

	/* Empty: nothing. */
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 0);

	/* In order, each to its bus, at its offset. */
	put(0x3f8, 1, 1, 'a');
	put(0xd0000010, 4, 0, 'm');
	put(0x3f8, 1, 1, 'b');
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 3);
	CHECK_EQ(ring->first, 3);
	CHECK_EQ(pio_seen.n, 2);
	CHECK_EQ(pio_seen.off[0], 0);
	CHECK_EQ(pio_seen.byte[0], 'a');
	CHECK_EQ(pio_seen.byte[1], 'b');
	CHECK_EQ(mmio_seen.n, 1);
	CHECK_EQ(mmio_seen.off[0], 0x10);
	CHECK_EQ(mmio_seen.len[0], 4);
	/* Each slot was still KVM's to keep while its write ran. */
	CHECK_EQ(pio_seen.first_then[0], 0);
	CHECK_EQ(mmio_seen.first_then[0], 1);
	CHECK_EQ(pio_seen.first_then[1], 2);

	/* Guest lengths KVM would never queue: dropped, slot consumed. */
	put(0x3f8, 0, 1, 'x');
	put(0x3f8, 9, 1, 'y');
	put(0x3f8, 1, 1, 'c');
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 3);
	CHECK_EQ(pio_seen.n, 3);
	CHECK_EQ(pio_seen.byte[2], 'c');
	/* An address no device holds: consumed, no handler. */
	put(0x80, 1, 1, 'z');
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 1);
	CHECK_EQ(pio_seen.n, 3);

	/* Wrap-around: a full ring (entries - 1 slots) across the end. */
	ring->first = ring->last = entries - 5;
	pio_seen.n = 0;
	for (i = 0; i < entries - 1; i++)
		put(0x3f8, 1, 1, (uint8_t)i);
	CHECK_EQ(ring->last, entries - 6);
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), entries - 1);
	CHECK_EQ(ring->first, ring->last);
	CHECK_EQ(pio_seen.n, entries - 1);
	for (i = 0; i < entries - 1 && i < 256; i++)
		if (pio_seen.byte[i] != (uint8_t)i)
			break;
	CHECK_EQ(i, entries - 1);

	/* Indices out of range: nothing replayed, nothing moved. */
	ring->first = entries;
	ring->last = 2;
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 0);
	CHECK_EQ(ring->first, entries);
	ring->first = 0;
	ring->last = UINT32_MAX;
	CHECK_EQ(coalesced_drain(ring, entries, &pio, &mmio), 0);
	CHECK_EQ(ring->first, 0);
	/* No ring size: nothing. */
	ring->last = 1;
	CHECK_EQ(coalesced_drain(ring, 0, &pio, &mmio), 0);

	free(ring);
	return test_done();
}
