// SPDX-License-Identifier: Apache-2.0
/*
 * Boot-time mark device: which written bytes are marks and what each is
 * called, the low byte of wide writes, offsets and reads that are no
 * mark, the time taken from the clock, the log limit (BOOT_TIME_LOG_MAX
 * lines and one "limit reached" line, however many writes follow), the
 * first/last pair and the --stats line, and both buses at the layout's
 * addresses beside the exit register.
 */
#include "devices/boottime.h"
#include "devices/exitdev.h"
#include "test.h"

#include "layout.h"
#include "vmm/bus.h"

struct fake {
	uint64_t now;      /* what the clock returns */
	int lines;
	char last[128];
};

static uint64_t fake_clock(void *opaque)
{
	struct fake *f = opaque;

	return f->now;
}

static void fake_log(void *opaque, const char *line)
{
	struct fake *f = opaque;

	f->lines++;
	snprintf(f->last, sizeof(f->last), "%s", line);
}

static void write_byte(struct boottime *bt, uint64_t off, uint64_t value,
		       unsigned int len)
{
	uint8_t data[8];

	bus_put(data, len, value);
	boottime_access(bt, off, data, len, true);
}

/* Every byte value: exactly the documented ones are marks. */
static void test_labels(void)
{
	static const struct {
		uint8_t value;
		const char *label; /* NULL: no mark */
	} rows[] = {
		{ 0, NULL },
		{ BOOT_TIME_MARK_INIT, "init reached" },
		{ BOOT_TIME_MARK_READY, "userspace ready" },
		{ 3, "mark 3" },
		{ 15, "mark 15" },
		{ 16, NULL },
		{ 122, NULL },
		{ BOOT_TIME_MARK_BOOTED, "boot complete" },
		{ 124, NULL },
		{ 255, NULL },
	};
	char buf[BOOT_TIME_LABEL_LEN];
	unsigned int v, marks = 0;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool is_mark = boottime_label(rows[i].value, buf, sizeof(buf));

		CHECK_EQ(is_mark, rows[i].label != NULL);
		if (rows[i].label)
			CHECK(!strcmp(buf, rows[i].label));
	}
	for (v = 0; v < 256; v++) {
		if (!boottime_label((uint8_t)v, buf, sizeof(buf)))
			continue;
		marks++;
		CHECK(strlen(buf) > 0 && strlen(buf) < sizeof(buf));
	}
	CHECK_EQ(marks, BOOT_TIME_MARK_USER_MAX + 1);
}

static void test_writes(void)
{
	struct fake f = { .now = 812345678 };
	struct boottime bt;
	struct boottime_stats st;
	uint8_t data[8];

	CHECK_EQ(boottime_init(&bt, fake_clock, &f, fake_log, &f), 0);
	write_byte(&bt, 0, BOOT_TIME_MARK_INIT, 1);
	CHECK_EQ(f.lines, 1);
	CHECK(!strcmp(f.last, "boot-time: 812.345 ms since microvm started "
			      "(init reached)"));

	/* The low byte of a wide write; 0x17b is mark 123. */
	f.now = 1000000000;
	write_byte(&bt, 0, 0x17b, 2);
	CHECK_EQ(f.lines, 2);
	CHECK(!strcmp(f.last, "boot-time: 1000.000 ms since microvm started "
			      "(boot complete)"));

	/* Not a mark: other values, other offsets, reads. */
	write_byte(&bt, 0, 0, 1);
	write_byte(&bt, 0, 0xffffffff, 4);
	write_byte(&bt, 0, 0x1100, 2);       /* low byte 0 */
	write_byte(&bt, 1, BOOT_TIME_MARK_INIT, 1);
	write_byte(&bt, 4, BOOT_TIME_MARK_INIT, 4);
	memset(data, 0xff, sizeof(data));
	boottime_access(&bt, 0, data, 8, false);
	CHECK_EQ(bus_get(data, 8), 0);
	boottime_access(&bt, 0, data, 0, true); /* zero width: nothing */
	CHECK_EQ(f.lines, 2);

	boottime_get_stats(&bt, &st);
	CHECK_EQ(st.marks, 2);
	CHECK_EQ(st.ignored, 3);
	CHECK_EQ(st.unlogged, 0);
	CHECK_EQ(st.first.ns, 812345678);
	CHECK_EQ(st.first.value, BOOT_TIME_MARK_INIT);
	CHECK_EQ(st.last.ns, 1000000000);
	CHECK_EQ(st.last.value, BOOT_TIME_MARK_BOOTED);
	boottime_destroy(&bt);
}

/* However often the guest writes, the log gets LOG_MAX + 1 lines. */
static void test_log_limit(void)
{
	struct fake f = { .now = 5000 };
	struct boottime bt;
	struct boottime_stats st;
	unsigned int i;

	CHECK_EQ(boottime_init(&bt, fake_clock, &f, fake_log, &f), 0);
	for (i = 0; i < BOOT_TIME_LOG_MAX - 1; i++) {
		f.now += 1000;
		write_byte(&bt, 0, 3 + i % 13, 1);
	}
	CHECK_EQ(f.lines, BOOT_TIME_LOG_MAX - 1);
	CHECK(strstr(f.last, "since microvm started") != NULL);
	write_byte(&bt, 0, BOOT_TIME_MARK_READY, 1);
	CHECK_EQ(f.lines, BOOT_TIME_LOG_MAX + 1);
	CHECK(strstr(f.last, "limit reached") != NULL);
	for (i = 0; i < 100000; i++) {
		f.now += 1000;
		write_byte(&bt, 0, i & 1 ? BOOT_TIME_MARK_BOOTED : 7, 1);
	}
	CHECK_EQ(f.lines, BOOT_TIME_LOG_MAX + 1);
	boottime_get_stats(&bt, &st);
	CHECK_EQ(st.marks, BOOT_TIME_LOG_MAX + 100000);
	CHECK_EQ(st.unlogged, 100000);
	CHECK_EQ(st.first.ns, 6000);
	CHECK_EQ(st.first.value, 3);
	CHECK_EQ(st.last.ns, f.now);
	CHECK_EQ(st.last.value, BOOT_TIME_MARK_BOOTED);
	boottime_destroy(&bt);
}

static void test_stats_format(void)
{
	struct boottime_stats st = { 0 };
	char buf[160];

	CHECK(!strcmp(boottime_format_stats(&st, buf, sizeof(buf)),
		      "boot-time: marks 0 ignored 0 unlogged 0"));
	st = (struct boottime_stats){
		.marks = 3, .ignored = 2, .unlogged = 0,
		.first = { .ns = 1234567, .value = BOOT_TIME_MARK_INIT },
		.last = { .ns = 98765432100ull, .value = 9 },
	};
	CHECK(!strcmp(boottime_format_stats(&st, buf, sizeof(buf)),
		      "boot-time: marks 3 ignored 2 unlogged 0 first 1.234 ms "
		      "(init reached) last 98765.432 ms (mark 9)"));
	/* A short buffer truncates, NUL-terminated. */
	CHECK(strlen(boottime_format_stats(&st, buf, 20)) == 19);
}

/* At the layout's addresses on both buses, beside the exit register. */
static void test_buses(void)
{
	static struct bus pio = { .name = "pio" }, mmio = { .name = "mmio" };
	struct fake f = { .now = 42000000 };
	struct boottime bt;
	struct exitdev ed;
	struct boottime_stats st;
	uint8_t data[8];

	CHECK_EQ(boottime_init(&bt, fake_clock, &f, fake_log, &f), 0);
	exitdev_init(&ed, NULL, NULL);
	CHECK_EQ(bus_register(&pio, PORT_EXIT, EXITDEV_PIO_LEN, exitdev_access,
			      &ed), 0);
	CHECK_EQ(bus_register(&mmio, EXIT_MMIO_ADDR, EXITDEV_MMIO_LEN,
			      exitdev_access, &ed), 0);
	CHECK_EQ(bus_register(&pio, PORT_BOOT_TIME, BOOT_TIME_PIO_LEN,
			      boottime_access, &bt), 0);
	CHECK_EQ(bus_register(&mmio, BOOT_TIME_MMIO_ADDR, BOOT_TIME_MMIO_LEN,
			      boottime_access, &bt), 0);
	bus_put(data, 1, BOOT_TIME_MARK_INIT);
	CHECK(bus_dispatch(&pio, PORT_BOOT_TIME, data, 1, true));
	bus_put(data, 4, BOOT_TIME_MARK_BOOTED);
	CHECK(bus_dispatch(&mmio, BOOT_TIME_MMIO_ADDR, data, 4, true));
	bus_put(data, 8, BOOT_TIME_MARK_READY);
	CHECK(bus_dispatch(&mmio, BOOT_TIME_MMIO_ADDR, data, 8, true));
	/* The exit port's range ends before ours. */
	bus_put(data, 1, BOOT_TIME_MARK_INIT);
	CHECK(bus_dispatch(&pio, PORT_EXIT + EXITDEV_PIO_LEN - 1, data, 1,
			   true));
	CHECK_EQ(f.lines, 3);
	CHECK(strstr(f.last, "(userspace ready)") != NULL);
	boottime_get_stats(&bt, &st);
	CHECK_EQ(st.marks, 3);
	CHECK_EQ(st.first.ns, 42000000);
	boottime_destroy(&bt);
}

int main(void)
{
	test_labels();
	test_writes();
	test_log_limit();
	test_stats_format();
	test_buses();
	return test_done();
}
