/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging to stderr with a "microvm: " prefix. log_ratelimited() is for
 * anything a guest can trigger repeatedly: it prints at most a burst of
 * messages per second per call site and counts what it dropped.
 */
#ifndef MICROVM_LOG_H
#define MICROVM_LOG_H

#include <stdint.h>
#include <time.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/** log_set_level() - messages above @level are dropped. Context: setup. */
void log_set_level(enum log_level level);

/** log_msg() - print one line. Context: any thread. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Per-call-site state for log_ratelimited(). */
struct log_ratelimit {
	time_t window;     /* second the current burst started */
	unsigned int burst; /* messages printed in this window */
	uint64_t dropped;  /* messages suppressed so far */
};

/**
 * log_ratelimited() - print unless @rl already printed its burst this second.
 * Context: any thread; @rl may be shared between threads.
 */
void log_ratelimited(struct log_ratelimit *rl, enum log_level level,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
