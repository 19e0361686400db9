// SPDX-License-Identifier: Apache-2.0
/*
 * Guest exit register: the written byte (the low byte of a wider write)
 * becomes the exit status through the callback, whether the access came
 * from port I/O or MMIO; reads return 0 and never exit.
 */
#include "devices/exitdev.h"
#include "test.h"

#include "vmm/bus.h"
#include "layout.h"

struct exit_log {
	int count;
	int status;
};

static void fake_exit(void *opaque, int status)
{
	struct exit_log *l = opaque;

	l->count++;
	l->status = status;
}

static void test_writes(void)
{
	static const struct {
		uint64_t value;
		unsigned int len;
		int status;
	} rows[] = {
		{ 0x00, 1, 0 },
		{ 0x01, 1, 1 },
		{ 0x7f, 1, 127 },
		{ 0xff, 1, 255 },
		{ 0x1203, 2, 3 },       /* low byte of a wide write */
		{ 0xdeadbe00, 4, 0 },
		{ 0x11223344556677fe, 8, 254 },
	};
	struct exit_log l = { 0 };
	struct exitdev dev;
	uint8_t data[8];
	size_t i;

	exitdev_init(&dev, fake_exit, &l);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		l.count = 0;
		l.status = -1;
		bus_put(data, rows[i].len, rows[i].value);
		exitdev_access(&dev, 0, data, rows[i].len, true);
		CHECK_EQ(l.count, 1);
		CHECK_EQ(l.status, rows[i].status);
	}

	/* A write that does not start at the register is not an exit. */
	l.count = 0;
	data[0] = 5;
	exitdev_access(&dev, 1, data, 1, true);
	CHECK_EQ(l.count, 0);

	memset(data, 0xff, sizeof(data));
	exitdev_access(&dev, 0, data, 8, false);
	CHECK_EQ(bus_get(data, 8), 0);
	CHECK_EQ(l.count, 0);
}

/* Registered on both buses the way the VMM does, reached through them. */
static void test_buses(void)
{
	static const struct {
		bool mmio;
		uint64_t addr;
		unsigned int len;
		uint64_t value;
		int status;
	} rows[] = {
		{ false, PORT_EXIT, 1, 42, 42 },
		{ false, PORT_EXIT, 4, 0x100, 0 },
		{ true, EXIT_MMIO_ADDR, 1, 7, 7 },
		{ true, EXIT_MMIO_ADDR, 4, 0xffffff80, 128 },
		{ true, EXIT_MMIO_ADDR, 8, 0x3, 3 },
	};
	static struct bus pio = { .name = "pio" }, mmio = { .name = "mmio" };
	struct exit_log l = { 0 };
	struct exitdev dev;
	uint8_t data[8];
	size_t i;

	exitdev_init(&dev, fake_exit, &l);
	CHECK_EQ(bus_register(&pio, PORT_EXIT, EXITDEV_PIO_LEN, exitdev_access,
			      &dev), 0);
	CHECK_EQ(bus_register(&mmio, EXIT_MMIO_ADDR, EXITDEV_MMIO_LEN,
			      exitdev_access, &dev), 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		l.count = 0;
		bus_put(data, rows[i].len, rows[i].value);
		CHECK(bus_dispatch(rows[i].mmio ? &mmio : &pio, rows[i].addr,
				   data, rows[i].len, true));
		CHECK_EQ(l.count, 1);
		CHECK_EQ(l.status, rows[i].status);
	}
	l.count = 0;
	memset(data, 0xff, sizeof(data));
	CHECK(bus_dispatch(&mmio, EXIT_MMIO_ADDR, data, 4, false));
	CHECK_EQ(bus_get(data, 4), 0);
	CHECK_EQ(l.count, 0);
}

int main(void)
{
	test_writes();
	test_buses();
	return test_done();
}
