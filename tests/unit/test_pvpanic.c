// SPDX-License-Identifier: Apache-2.0
/*
 * pvpanic event port: a read returns the supported events and has no
 * effect; PANICKED calls back on every write that has the bit; CRASH_LOADED
 * logs exactly one line however often it comes and never calls back; any
 * other bit (or none) is only counted and logged at a limited rate; the
 * port is reached through the bus at PORT_PVPANIC as one byte only; and
 * several vCPUs panicking at once are all counted (Linux's notifier runs
 * on whichever CPU panics).
 */
#include "devices/pvpanic.h"
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "vmm/bus.h"

struct panic_log {
	atomic_int count;
};

static void fake_panicked(void *opaque)
{
	struct panic_log *l = opaque;

	atomic_fetch_add(&l->count, 1);
}

/* stderr goes to a temporary file between capture_begin() and _end(). */
static FILE *capture_file;
static int saved_stderr = -1;
static int capture_fails; /* test_fail_count at capture_begin() */

static void capture_begin(void)
{
	capture_fails = test_fail_count;
	capture_file = tmpfile();
	CHECK(capture_file != NULL);
	if (!capture_file)
		return;
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(capture_file), STDERR_FILENO);
}

/* Return: what was logged, malloc'd and NUL-terminated (or NULL). */
static char *capture_end(void)
{
	char *text;
	long n;

	if (!capture_file)
		return NULL;
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	n = ftell(capture_file);
	text = calloc(1, n > 0 ? (size_t)n + 1 : 1);
	if (text && n > 0) {
		rewind(capture_file);
		if (fread(text, 1, (size_t)n, capture_file) != (size_t)n)
			text[0] = '\0';
	}
	fclose(capture_file);
	capture_file = NULL;
	/* A CHECK that failed meanwhile wrote its line into the file. */
	if (text && test_fail_count > capture_fails)
		fprintf(stderr, "--- captured stderr:\n%s", text);
	return text;
}

static size_t count_str(const char *text, const char *pat)
{
	size_t n = 0;

	for (; text && (text = strstr(text, pat)); text += strlen(pat))
		n++;
	return n;
}

/* One row per event byte: what the device must make of it. */
static void test_events(void)
{
	static const struct {
		uint8_t value;
		unsigned int panicked, crash_loaded, ignored;
	} rows[] = {
		{ 0x01, 1, 0, 0 }, /* PANICKED, what Linux sends */
		{ 0x02, 0, 1, 0 }, /* CRASH_LOADED, with a kdump kernel */
		{ 0x03, 1, 1, 0 }, /* both bits: each is an event */
		{ 0x00, 0, 0, 1 }, /* no event */
		{ 0x04, 0, 0, 1 }, /* PVPANIC_SHUTDOWN of later kernels: not
				    * offered, so only junk here */
		{ 0x80, 0, 0, 1 },
		{ 0xfe, 0, 1, 1 }, /* junk bits do not hide CRASH_LOADED */
		{ 0xff, 1, 1, 1 },
		{ 0x05, 1, 0, 1 },
	};
	struct pvpanic_stats st;
	struct panic_log l;
	struct pvpanic pp;
	uint8_t data[8];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		atomic_store(&l.count, 0);
		pvpanic_init(&pp, fake_panicked, &l);
		data[0] = rows[i].value;
		capture_begin();
		pvpanic_access(&pp, 0, data, 1, true);
		free(capture_end());
		pvpanic_get_stats(&pp, &st);
		CHECK_EQ(atomic_load(&l.count), (int)rows[i].panicked);
		CHECK_EQ(st.panicked, rows[i].panicked);
		CHECK_EQ(st.crash_loaded, rows[i].crash_loaded);
		CHECK_EQ(st.ignored, rows[i].ignored);
	}

	/* Only offset 0 is the register. */
	atomic_store(&l.count, 0);
	pvpanic_init(&pp, fake_panicked, &l);
	data[0] = PVPANIC_PANICKED;
	pvpanic_access(&pp, 1, data, 1, true);
	pvpanic_access(&pp, 0, data, 0, true);
	pvpanic_get_stats(&pp, &st);
	CHECK_EQ(atomic_load(&l.count), 0);
	CHECK(!st.panicked && !st.crash_loaded && !st.ignored);

	/* Without a callback a panic is still counted. */
	pvpanic_init(&pp, NULL, NULL);
	pvpanic_access(&pp, 0, data, 1, true);
	pvpanic_get_stats(&pp, &st);
	CHECK_EQ(st.panicked, 1);
}

/* Reads: the capability byte, zero above it, nothing counted or called. */
static void test_reads(void)
{
	struct pvpanic_stats st;
	struct panic_log l;
	struct pvpanic pp;
	uint8_t data[9];
	unsigned int len, i;
	char *text;

	atomic_store(&l.count, 0);
	pvpanic_init(&pp, fake_panicked, &l);
	capture_begin();
	for (len = 1; len <= 8; len++) {
		memset(data, 0xaa, sizeof(data));
		pvpanic_access(&pp, 0, data, len, false);
		CHECK_EQ(data[0], PVPANIC_CAPABILITY);
		for (i = 1; i < len; i++)
			CHECK_EQ(data[i], 0);
		CHECK_EQ(data[len], 0xaa); /* nothing past the width */
		memset(data, 0xaa, sizeof(data));
		pvpanic_access(&pp, 1, data, len, false);
		for (i = 0; i < len; i++)
			CHECK_EQ(data[i], 0);
	}
	text = capture_end();
	CHECK(text && !text[0]);
	free(text);
	pvpanic_get_stats(&pp, &st);
	CHECK(!st.panicked && !st.crash_loaded && !st.ignored);
	CHECK_EQ(atomic_load(&l.count), 0);
	/* Linux keeps capability & the bits it knows: both events. */
	CHECK_EQ(PVPANIC_CAPABILITY, 0x03);
}

/* CRASH_LOADED: one line for any number; junk: a bounded burst. */
static void test_log_limits(void)
{
	struct pvpanic_stats st;
	struct panic_log l;
	struct pvpanic pp;
	uint8_t data[1];
	char *text;
	int i;

	atomic_store(&l.count, 0);
	pvpanic_init(&pp, fake_panicked, &l);
	capture_begin();
	for (i = 0; i < 1000; i++) {
		data[0] = PVPANIC_CRASH_LOADED;
		pvpanic_access(&pp, 0, data, 1, true);
		data[0] = 0x40;
		pvpanic_access(&pp, 0, data, 1, true);
	}
	text = capture_end();
	pvpanic_get_stats(&pp, &st);
	CHECK_EQ(st.crash_loaded, 1000);
	CHECK_EQ(st.ignored, 1000);
	CHECK_EQ(atomic_load(&l.count), 0);
	CHECK_EQ(count_str(text, "crash kernel loaded"), 1);
	CHECK(count_str(text, "pvpanic: ignored event 0x40") >= 1);
	/* The burst is per second; the loop may straddle one boundary. */
	CHECK(count_str(text, "pvpanic: ignored event") <= 20);
	free(text);
}

/* The machine's registration: one byte at PORT_PVPANIC, nothing else. */
static void test_bus(void)
{
	static struct bus pio = { .name = "pio" };
	struct pvpanic_stats st;
	struct panic_log l;
	struct pvpanic pp;
	uint8_t data[4];

	atomic_store(&l.count, 0);
	pvpanic_init(&pp, fake_panicked, &l);
	CHECK_EQ(PORT_PVPANIC, 0x505);
	CHECK_EQ(bus_register(&pio, PORT_PVPANIC, PVPANIC_PIO_LEN,
			      pvpanic_access, &pp), 0);
	memset(data, 0, sizeof(data));
	CHECK(bus_dispatch(&pio, PORT_PVPANIC, data, 1, false));
	CHECK_EQ(data[0], PVPANIC_CAPABILITY);
	/* A wider access straddles the range end: the bus drops it. */
	data[0] = PVPANIC_PANICKED;
	CHECK(!bus_dispatch(&pio, PORT_PVPANIC, data, 2, true));
	CHECK(!bus_dispatch(&pio, PORT_PVPANIC + 1, data, 1, true));
	CHECK(!bus_dispatch(&pio, PORT_PVPANIC - 1, data, 1, true));
	CHECK_EQ(atomic_load(&l.count), 0);
	CHECK(bus_dispatch(&pio, PORT_PVPANIC, data, 1, true));
	CHECK_EQ(atomic_load(&l.count), 1);
	pvpanic_get_stats(&pp, &st);
	CHECK_EQ(st.panicked, 1);
}

#define RACE_THREADS 4
#define RACE_WRITES 10000

static struct pvpanic race_pp;

static void *race_writer(void *arg)
{
	uint8_t data[1];
	int i;

	(void)arg;
	for (i = 0; i < RACE_WRITES; i++) {
		data[0] = i & 1 ? PVPANIC_PANICKED : PVPANIC_CRASH_LOADED;
		pvpanic_access(&race_pp, 0, data, 1, true);
		pvpanic_access(&race_pp, 0, data, 1, false);
	}
	return NULL;
}

/* Every vCPU may panic at once: no write is lost, one kdump line. */
static void test_race(void)
{
	pthread_t t[RACE_THREADS];
	struct pvpanic_stats st;
	struct panic_log l;
	char *text;
	int i;

	atomic_store(&l.count, 0);
	pvpanic_init(&race_pp, fake_panicked, &l);
	capture_begin();
	for (i = 0; i < RACE_THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, race_writer, NULL), 0);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	text = capture_end();
	pvpanic_get_stats(&race_pp, &st);
	CHECK_EQ(st.panicked, RACE_THREADS * RACE_WRITES / 2);
	CHECK_EQ(st.crash_loaded, RACE_THREADS * RACE_WRITES / 2);
	CHECK_EQ(st.ignored, 0);
	CHECK_EQ(atomic_load(&l.count), RACE_THREADS * RACE_WRITES / 2);
	CHECK_EQ(count_str(text, "crash kernel loaded"), 1);
	free(text);
}

int main(void)
{
	test_events();
	test_reads();
	test_log_limits();
	test_bus();
	test_race();
	return test_done();
}
