/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging to stderr with a "microvm: " prefix and, once configured
 * (Firecracker's logger: --log-path, PUT /logger, the config file's
 * "logger"), to a file or FIFO as well, in Firecracker's format:
 *	2026-12-03T21:05:01.123456789 [ID:THREAD(:LEVEL)(:FILE:LINE)] text
 * log_ratelimited() is for anything a guest can trigger repeatedly: it
 * prints at most a burst of messages per second per call site and counts
 * what it dropped.
 */
#ifndef MICROVM_LOG_H
#define MICROVM_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/** log_set_level() - messages above @level are dropped. Context: setup. */
void log_set_level(enum log_level level);

/** log_msg() - print one line. Context: any thread. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** log_at() - log_msg() from @file:@line (the macros below). */
void log_at(enum log_level level, const char *file, int line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The file sink: where, from which level, and how lines look. */
struct log_sink_config {
	int fd;              /* O_NONBLOCK; -1: keep the current one */
	int level;           /* enum log_level, or -1: nothing (Off) */
	bool show_level;
	bool show_origin;
	const char *id;      /* the instance id ("anonymous-instance") */
	const char *module;  /* only origins starting with it; NULL: all */
};

/**
 * log_set_sink() - (re)configure the file sink. A line the sink cannot
 * take at once (a full FIFO) is dropped and counted, never waited for.
 * @c: the configuration; the sink owns @c->fd (the one it replaces is
 *	closed).
 * Context: main thread, before the vCPUs run.
 */
void log_set_sink(const struct log_sink_config *c);

/** log_missed_count() - lines the sink dropped so far. Context: any. */
uint64_t log_missed_count(void);

/**
 * log_set_thread_name() - the name this thread's lines carry in the sink
 * (the thread reads its own before its seccomp filter forbids it).
 * Context: the thread itself.
 */
void log_set_thread_name(const char *name);

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

#define log_error(...) log_at(LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
#define log_warn(...) log_at(LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define log_debug(...) log_at(LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__)

#endif
