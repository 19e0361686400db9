// SPDX-License-Identifier: Apache-2.0
/*
 * Bus range table and guest memory translation: overlap rejection, range
 * edges, straddling accesses, and the off-by-one at the end of a region.
 */
#include <errno.h>
#include <stdint.h>

#include "test.h"
#include "util/guest_mem.h"
#include "vmm/bus.h"

struct hit {
	int calls;
	uint64_t off;
	unsigned int len;
	bool write;
};

static void record(void *opaque, uint64_t off, uint8_t *data,
		   unsigned int len, bool is_write)
{
	struct hit *h = opaque;

	h->calls++;
	h->off = off;
	h->len = len;
	h->write = is_write;
	if (!is_write)
		bus_put(data, len, 0x1122334455667788ULL);
}

static void test_bus(void)
{
	static struct bus bus;
	struct hit a = { 0 }, b = { 0 };
	uint8_t data[8];

	CHECK_EQ(bus_register(&bus, 0x100, 0x10, record, &a), 0);
	CHECK_EQ(bus_register(&bus, 0x10, 0x8, record, &b), 0);
	CHECK_EQ(bus_register(&bus, 0x10f, 1, record, &b), -EEXIST);
	CHECK_EQ(bus_register(&bus, 0xf8, 0x9, record, &b), -EEXIST);
	CHECK_EQ(bus_register(&bus, 0x1, 0, record, &b), -EINVAL);
	CHECK_EQ(bus_register(&bus, UINT64_MAX, 2, record, &b), -EINVAL);
	CHECK_EQ(bus_register(&bus, 0x110, 0x10, record, &b), 0);

	CHECK(bus_dispatch(&bus, 0x10f, data, 1, false));
	CHECK_EQ(a.calls, 1);
	CHECK_EQ(a.off, 0xf);
	CHECK_EQ(data[0], 0x88);
	/* Straddles the end of [0x100, 0x110): nobody takes it. */
	CHECK(!bus_dispatch(&bus, 0x10e, data, 4, true));
	CHECK_EQ(a.calls, 1);
	CHECK(bus_dispatch(&bus, 0x10, data, 8, true));
	CHECK_EQ(b.calls, 1);
	CHECK(b.write);
	CHECK(!bus_dispatch(&bus, 0x18, data, 1, false));
	CHECK(!bus_dispatch(&bus, 0x0, data, 1, false));
	CHECK(!bus_dispatch(&bus, UINT64_MAX, data, 1, false));
	CHECK_EQ(bus_get((const uint8_t *)"\x01\x02\x03\x04", 4), 0x04030201);
}

static void test_guest_mem(void)
{
	static uint8_t lo[4096], hi[4096];
	struct guest_mem gm = { .nr_regions = 0 };
	uint8_t buf[16];

	CHECK_EQ(guest_mem_add_region(&gm, 0x1000, sizeof(lo), lo), 0);
	CHECK_EQ(guest_mem_add_region(&gm, 0x10000, sizeof(hi), hi), 0);
	CHECK_EQ(guest_mem_add_region(&gm, 0x1800, 0x100, lo), -EINVAL);
	CHECK_EQ(guest_mem_add_region(&gm, UINT64_MAX - 10, 100, lo),
		 -EINVAL);
	CHECK(guest_mem_ptr(&gm, 0x1000, 4096) == lo);
	CHECK(guest_mem_ptr(&gm, 0x1fff, 1) == lo + 4095);
	CHECK(guest_mem_ptr(&gm, 0x1fff, 2) == NULL);  /* one past the end */
	CHECK(guest_mem_ptr(&gm, 0x2000, 1) == NULL);
	CHECK(guest_mem_ptr(&gm, 0xfff, 2) == NULL);
	CHECK(guest_mem_ptr(&gm, 0x1000, UINT64_MAX) == NULL);
	CHECK(guest_mem_ptr(&gm, UINT64_MAX, 2) == NULL);
	CHECK(guest_mem_ptr(&gm, 0x10800, 0x800) == hi + 0x800);
	CHECK(guest_mem_ptr(&gm, 0x1ff0, 0x20) == NULL); /* spans a gap */
	CHECK_EQ(guest_mem_write(&gm, 0x10000, "abcdefgh", 8), 0);
	CHECK_EQ(guest_mem_read(&gm, 0x10000, buf, 8), 0);
	CHECK(!memcmp(buf, "abcdefgh", 8));
	CHECK_EQ(guest_mem_read(&gm, 0x10ff9, buf, 8), -EFAULT);
	CHECK(guest_mem_end(&gm) == 0x11000);
}

int main(void)
{
	test_bus();
	test_guest_mem();
	return test_done();
}
