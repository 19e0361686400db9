/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Monotonic time since microvm started, for the startup and boot-time
 * figures of --stats. "Started" is the moment main() called
 * clock_mark_start(), its first statement: after exec and the dynamic
 * loader, before any option is parsed or file opened.
 *
 *	int main(...) { clock_mark_start(); ... }
 *	uint64_t t = clock_since_start_ns();      (any thread, later)
 *	char ms[CLOCK_MS_LEN]; clock_format_ms(ms, sizeof(ms), t);
 */
#ifndef MICROVM_CLOCK_H
#define MICROVM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Enough for the largest uint64_t nanosecond count as "ms.uuu". */
#define CLOCK_MS_LEN 24

/** clock_now_ns() - CLOCK_MONOTONIC in nanoseconds.  Context: any thread. */
uint64_t clock_now_ns(void);

/**
 * clock_mark_start() - record now as microvm's start.
 * Context: main thread, first thing in main(), before any other thread.
 */
void clock_mark_start(void);

/**
 * clock_since_start_ns() - nanoseconds since clock_mark_start().
 * Return: the elapsed time, or 0 when the start was never marked.
 * Context: any thread.
 */
uint64_t clock_since_start_ns(void);

/**
 * clock_format_ms() - @ns as milliseconds with three decimals ("12.345"),
 * truncated (not rounded) to the microsecond.
 * @buf/@len: output, NUL-terminated; CLOCK_MS_LEN always suffices
 * Return: @buf.  Context: any thread.
 */
char *clock_format_ms(char *buf, size_t len, uint64_t ns);

#endif
