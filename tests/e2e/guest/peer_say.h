/* SPDX-License-Identifier: Apache-2.0 */
/*
 * say(fmt, ...): one line to stdout in one write(), so that the lines of
 * several processes on one console do not interleave. Shared by the
 * static test helpers (vsockpeer, netpeer).
 */
#ifndef PEER_SAY_H
#define PEER_SAY_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static inline void say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, (size_t)n) < 0)
		return;
}

#endif
