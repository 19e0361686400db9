// SPDX-License-Identifier: Apache-2.0
/*
 * Monotonic time since microvm started. The start is one word written by
 * the main thread before it creates any other thread (pthread_create
 * orders it before everything those threads do), so readers need no lock.
 */
#include "util/clock.h"

#include <stdio.h>
#include <time.h>

static uint64_t clock_start;

uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void clock_mark_start(void)
{
	clock_start = clock_now_ns();
}

uint64_t clock_since_start_ns(void)
{
	uint64_t now;

	if (!clock_start)
		return 0;
	now = clock_now_ns();
	return now > clock_start ? now - clock_start : 0;
}

char *clock_format_ms(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%llu.%03llu", (unsigned long long)(ns / 1000000),
		 (unsigned long long)(ns / 1000 % 1000));
	return buf;
}
