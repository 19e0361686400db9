// SPDX-License-Identifier: Apache-2.0
/*
 * stderr logging, and the file sink of Firecracker's logger. Each line is
 * formatted into one buffer and written with a single write() so lines
 * from several threads do not interleave. The sink's writes never wait:
 * its descriptor is O_NONBLOCK, and a line a full FIFO cannot take is
 * dropped and counted (log_missed_count()). Nothing here may make a
 * system call the seccomp classes forbid: the time is split into a date
 * by arithmetic (gmtime_r() may open /etc/localtime on its first call).
 */
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_BURST 5
#define LOG_MSG_MAX 1024
#define LOG_ID_MAX 64
#define LOG_MODULE_MAX 128
#define LOG_THREAD_MAX 16

static enum log_level log_level = LOG_WARN;
/* Guards every struct log_ratelimit; the slow path only. */
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;

/* The file sink: read-locked by each line, written by log_set_sink(). */
static pthread_rwlock_t sink_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	int fd;
	int level;
	bool show_level;
	bool show_origin;
	char id[LOG_ID_MAX + 1];
	char module[LOG_MODULE_MAX + 1];
} sink = { .fd = -1, .level = -1 };
/* The sink's level where a line can test it without the lock; -1: none. */
static atomic_int sink_level = -1;
static atomic_uint_least64_t sink_missed;
static __thread char thread_name[LOG_THREAD_MAX];

static const char *const level_names[] = {
	[LOG_ERROR] = "ERROR", [LOG_WARN] = "WARN",
	[LOG_INFO] = "INFO", [LOG_DEBUG] = "DEBUG",
};

void log_set_level(enum log_level level)
{
	log_level = level;
}

void log_set_thread_name(const char *name)
{
	snprintf(thread_name, sizeof(thread_name), "%s", name ? name : "");
}

void log_set_sink(const struct log_sink_config *c)
{
	int old = -1;

	pthread_rwlock_wrlock(&sink_lock);
	if (c->fd >= 0) {
		old = sink.fd;
		sink.fd = c->fd;
	}
	sink.level = c->level;
	sink.show_level = c->show_level;
	sink.show_origin = c->show_origin;
	snprintf(sink.id, sizeof(sink.id), "%s",
		 c->id ? c->id : "anonymous-instance");
	snprintf(sink.module, sizeof(sink.module), "%s",
		 c->module ? c->module : "");
	atomic_store(&sink_level, sink.fd >= 0 ? sink.level : -1);
	pthread_rwlock_unlock(&sink_lock);
	if (old >= 0)
		close(old);
}

uint64_t log_missed_count(void)
{
	return atomic_load(&sink_missed);
}

/* @file from its project directory on ("virtio/blk.c"): after the last
 * "src/" (or, for the tests, "tests/") in it. */
static const char *log_origin(const char *file)
{
	const char *p, *dir = file && strstr(file, "src/") ? "src/" : "tests/";

	while (file && (p = strstr(file, dir)))
		file = p + strlen(dir);
	return file;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian). */
static void civil_from_days(long z, int *y, unsigned int *m, unsigned int *d)
{
	long era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	doy = z - era * 146097 - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

/* Append to @buf (capacity @cap, @n used); clamps at the end. */
static size_t __attribute__((format(printf, 4, 5)))
put(char *buf, size_t cap, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (n >= cap)
		return n;
	va_start(ap, fmt);
	r = vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
	if (r < 0)
		return n;
	return (size_t)r >= cap - n ? cap - 1 : n + (size_t)r;
}

static void sink_write(enum log_level level, const char *file, int line,
		       const char *msg)
{
	char buf[LOG_MSG_MAX + LOG_ID_MAX + LOG_MODULE_MAX + 128];
	const char *origin = log_origin(file);
	struct timespec ts;
	unsigned int mon, day;
	size_t n;
	long secs;
	int year;

	pthread_rwlock_rdlock(&sink_lock);
	if (sink.fd < 0 || (int)level > sink.level ||
	    (sink.module[0] && (!origin || strncmp(origin, sink.module,
						   strlen(sink.module)))))
		goto out;
	clock_gettime(CLOCK_REALTIME, &ts);
	civil_from_days((long)(ts.tv_sec / 86400), &year, &mon, &day);
	secs = (long)(ts.tv_sec % 86400);
	n = put(buf, sizeof(buf), 0,
		"%04d-%02u-%02uT%02ld:%02ld:%02ld.%09ld [%s:%s", year, mon,
		day, secs / 3600, secs / 60 % 60, secs % 60, ts.tv_nsec,
		sink.id, thread_name[0] ? thread_name : "-");
	if (sink.show_level)
		n = put(buf, sizeof(buf), n, ":%s", level_names[level]);
	if (sink.show_origin)
		n = origin ? put(buf, sizeof(buf), n, ":%s:%d", origin, line) :
			     put(buf, sizeof(buf), n, ":?:?");
	n = put(buf, sizeof(buf), n, "] %s", msg);
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(sink.fd, buf, n) != (ssize_t)n)
		atomic_fetch_add(&sink_missed, 1);
out:
	pthread_rwlock_unlock(&sink_lock);
}

static bool log_wanted(enum log_level level)
{
	return level <= log_level || (int)level <= atomic_load(&sink_level);
}

static void __attribute__((format(printf, 4, 0)))
log_vat(enum log_level level, const char *file, int line, const char *fmt,
	va_list ap)
{
	char buf[LOG_MSG_MAX];
	int n = snprintf(buf, sizeof(buf), "microvm: ");
	int m;

	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if ((int)level <= atomic_load(&sink_level))
		sink_write(level, file, line, buf + n);
	if (level > log_level)
		return;
	n += m < 0 ? 0 : m;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

void log_at(enum log_level level, const char *file, int line,
	    const char *fmt, ...)
{
	va_list ap;

	if (!log_wanted(level))
		return;
	va_start(ap, fmt);
	log_vat(level, file, line, fmt, ap);
	va_end(ap);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_wanted(level))
		return;
	va_start(ap, fmt);
	log_vat(level, NULL, 0, fmt, ap);
	va_end(ap);
}

void log_ratelimited(struct log_ratelimit *rl, enum log_level level,
		     const char *fmt, ...)
{
	time_t now = time(NULL);
	bool print;
	va_list ap;

	if (!log_wanted(level))
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
	log_vat(level, NULL, 0, fmt, ap);
	va_end(ap);
}
