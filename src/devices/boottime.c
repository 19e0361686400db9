// SPDX-License-Identifier: Apache-2.0
/*
 * Boot-time marks: each accepted guest write takes the time since microvm
 * started and logs it, for at most BOOT_TIME_LOG_MAX writes; every write
 * is counted. The lock makes the counters and the first/last pair
 * consistent when several vCPUs write at once; the log line is written
 * after it is dropped.
 */
#include "devices/boottime.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"
#include "util/log.h"

int boottime_init(struct boottime *bt, boottime_clock_fn clock,
		  void *clock_opaque, boottime_log_fn log, void *log_opaque)
{
	int ret;

	memset(bt, 0, sizeof(*bt));
	ret = pthread_mutex_init(&bt->lock, NULL);
	if (ret)
		return -ret;
	bt->clock = clock;
	bt->clock_opaque = clock_opaque;
	bt->log = log;
	bt->log_opaque = log_opaque;
	return 0;
}

void boottime_destroy(struct boottime *bt)
{
	pthread_mutex_destroy(&bt->lock);
}

bool boottime_label(uint8_t value, char *buf, size_t len)
{
	switch (value) {
	case BOOT_TIME_MARK_INIT:
		snprintf(buf, len, "init reached");
		return true;
	case BOOT_TIME_MARK_READY:
		snprintf(buf, len, "userspace ready");
		return true;
	case BOOT_TIME_MARK_BOOTED:
		snprintf(buf, len, "boot complete");
		return true;
	default:
		if (value < BOOT_TIME_MARK_USER_MIN ||
		    value > BOOT_TIME_MARK_USER_MAX)
			return false;
		snprintf(buf, len, "mark %u", value);
		return true;
	}
}

static void boottime_emit(struct boottime *bt, const char *line)
{
	if (bt->log)
		bt->log(bt->log_opaque, line);
	else
		log_warn("%s", line);
}

void boottime_access(void *opaque, uint64_t off, uint8_t *data,
		     unsigned int len, bool is_write)
{
	struct boottime *bt = opaque;
	char label[BOOT_TIME_LABEL_LEN], ms[CLOCK_MS_LEN], line[96];
	enum { QUIET, MARK, LAST } say = QUIET;
	uint8_t value;
	uint64_t ns;

	if (!len)
		return;
	if (!is_write) {
		memset(data, 0, len > 8 ? 8 : len);
		return;
	}
	if (off != 0)
		return;
	value = data[0];
	pthread_mutex_lock(&bt->lock);
	if (!boottime_label(value, label, sizeof(label))) {
		bt->st.ignored++;
		pthread_mutex_unlock(&bt->lock);
		return;
	}
	ns = bt->clock ? bt->clock(bt->clock_opaque) : 0;
	bt->st.last = (struct boottime_mark){ .ns = ns, .value = value };
	if (!bt->st.marks++)
		bt->st.first = bt->st.last;
	if (bt->st.marks <= BOOT_TIME_LOG_MAX)
		say = bt->st.marks == BOOT_TIME_LOG_MAX ? LAST : MARK;
	else
		bt->st.unlogged++;
	pthread_mutex_unlock(&bt->lock);
	if (say == QUIET)
		return;
	snprintf(line, sizeof(line),
		 "boot-time: %s ms since microvm started (%s)",
		 clock_format_ms(ms, sizeof(ms), ns), label);
	boottime_emit(bt, line);
	if (say == LAST)
		boottime_emit(bt, "boot-time: mark limit reached; further "
				  "marks are only counted (--stats)");
}

void boottime_get_stats(struct boottime *bt, struct boottime_stats *out)
{
	pthread_mutex_lock(&bt->lock);
	*out = bt->st;
	pthread_mutex_unlock(&bt->lock);
}

char *boottime_format_stats(const struct boottime_stats *st, char *buf,
			    size_t len)
{
	char fl[BOOT_TIME_LABEL_LEN], ll[BOOT_TIME_LABEL_LEN];
	char fms[CLOCK_MS_LEN], lms[CLOCK_MS_LEN];
	int n;

	n = snprintf(buf, len, "boot-time: marks %llu ignored %llu "
		     "unlogged %llu", (unsigned long long)st->marks,
		     (unsigned long long)st->ignored,
		     (unsigned long long)st->unlogged);
	if (!st->marks || n < 0 || (size_t)n >= len)
		return buf;
	if (!boottime_label(st->first.value, fl, sizeof(fl)))
		snprintf(fl, sizeof(fl), "?");
	if (!boottime_label(st->last.value, ll, sizeof(ll)))
		snprintf(ll, sizeof(ll), "?");
	snprintf(buf + n, len - n, " first %s ms (%s) last %s ms (%s)",
		 clock_format_ms(fms, sizeof(fms), st->first.ns), fl,
		 clock_format_ms(lms, sizeof(lms), st->last.ns), ll);
	return buf;
}

void boottime_print_stats(struct boottime *bt, int fd)
{
	struct boottime_stats st;
	char line[160];

	boottime_get_stats(bt, &st);
	dprintf(fd, "microvm: stats %s\n",
		boottime_format_stats(&st, line, sizeof(line)));
}
