// SPDX-License-Identifier: Apache-2.0
/*
 * stderr logging. Each line is formatted into one buffer and written with a
 * single write() so lines from several threads do not interleave.
 */
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#define LOG_BURST 5

static enum log_level log_level = LOG_WARN;
/* Guards every struct log_ratelimit; the slow path only. */
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level level)
{
	log_level = level;
}

static void __attribute__((format(printf, 1, 0)))
log_vmsg(const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "microvm: ");

	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}

void log_ratelimited(struct log_ratelimit *rl, enum log_level level,
		     const char *fmt, ...)
{
	time_t now = time(NULL);
	bool print;
	va_list ap;

	if (level > log_level)
		return;
	pthread_mutex_lock(&rl_lock);
	if (now != rl->window) {
		rl->window = now;
		rl->burst = 0;
	}
	print = rl->burst < LOG_BURST;
	if (print)
		rl->burst++;
	else
		rl->dropped++;
	pthread_mutex_unlock(&rl_lock);
	if (!print)
		return;
	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}
