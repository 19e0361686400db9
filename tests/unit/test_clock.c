// SPDX-License-Identifier: Apache-2.0
/*
 * Time since start: 0 before clock_mark_start(), monotonic after it, and
 * the millisecond format of --stats (three decimals, truncated).
 */
#include "util/clock.h"
#include "test.h"

#include <time.h>

static void test_format(void)
{
	static const struct {
		uint64_t ns;
		const char *text;
	} rows[] = {
		{ 0, "0.000" },
		{ 999, "0.000" },
		{ 1000, "0.001" },
		{ 1999999, "1.999" },
		{ 12345678, "12.345" },
		{ 1000000000, "1000.000" },
		{ UINT64_MAX, "18446744073709.551" },
	};
	char buf[CLOCK_MS_LEN];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		clock_format_ms(buf, sizeof(buf), rows[i].ns);
		CHECK(!strcmp(buf, rows[i].text));
	}
}

static void test_since_start(void)
{
	struct timespec ts = { .tv_nsec = 2000000 };
	uint64_t a, b;

	CHECK_EQ(clock_since_start_ns(), 0);
	clock_mark_start();
	nanosleep(&ts, NULL);
	a = clock_since_start_ns();
	b = clock_since_start_ns();
	CHECK(a >= 2000000);
	CHECK(b >= a);
}

int main(void)
{
	test_format();
	test_since_start();
	return test_done();
}
