/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Boot-time marks: a guest writes one byte, a mark value, to I/O port
 * PORT_BOOT_TIME or to BOOT_TIME_MMIO_ADDR, and microvm logs
 *	microvm: boot-time: 812.345 ms since microvm started (init reached)
 * with the time since clock_mark_start(). The first and last mark go into
 * --stats. Mark values (any other byte is ignored and only counted):
 *	BOOT_TIME_MARK_INIT (1)       "init reached": first line of /init
 *	BOOT_TIME_MARK_READY (2)      "userspace ready"
 *	3..15 (_USER_MIN.._USER_MAX) "mark N": the guest's own milestones
 *	BOOT_TIME_MARK_BOOTED (123)   "boot complete" (Firecracker's value)
 * A guest can write as often as it likes, so only the first
 * BOOT_TIME_LOG_MAX marks are logged, then one line saying the rest are
 * only counted. The same handler serves both buses.
 *
 *	boottime_init(&bt, clock_since_start_ns_fn, NULL, NULL, NULL);
 *	bus_register(&pio, PORT_BOOT_TIME, BOOT_TIME_PIO_LEN,
 *		     boottime_access, &bt);
 *	...
 *	boottime_print_stats(&bt, fd);
 *	boottime_destroy(&bt);
 */
#ifndef MICROVM_BOOTTIME_H
#define MICROVM_BOOTTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Range lengths, as for the exit register: the widest access fits. */
#define BOOT_TIME_PIO_LEN 4
#define BOOT_TIME_MMIO_LEN 8

#define BOOT_TIME_MARK_INIT 1
#define BOOT_TIME_MARK_READY 2
#define BOOT_TIME_MARK_USER_MIN 3
#define BOOT_TIME_MARK_USER_MAX 15
#define BOOT_TIME_MARK_BOOTED 123

/* Marks logged before the device falls silent (counted still). */
#define BOOT_TIME_LOG_MAX 16

/* Longest label, "userspace ready", plus room; labels are ASCII. */
#define BOOT_TIME_LABEL_LEN 24

/* Nanoseconds since microvm started. */
typedef uint64_t (*boottime_clock_fn)(void *opaque);
/* One finished log line, without "microvm: " and the newline. */
typedef void (*boottime_log_fn)(void *opaque, const char *line);

struct boottime_mark {
	uint64_t ns;
	uint8_t value;
};

struct boottime_stats {
	uint64_t marks;    /* accepted mark writes */
	uint64_t ignored;  /* writes of a value that is no mark */
	uint64_t unlogged; /* marks past BOOT_TIME_LOG_MAX */
	struct boottime_mark first, last; /* valid when marks > 0 */
};

struct boottime {
	pthread_mutex_t lock; /* vCPU threads write, the stats thread reads */
	boottime_clock_fn clock;
	void *clock_opaque;
	boottime_log_fn log;
	void *log_opaque;
	struct boottime_stats st;
};

/**
 * boottime_init() - set up the device.
 * @clock/@clock_opaque: the time source (clock_since_start_ns() in microvm)
 * @log/@log_opaque: where lines go; NULL: log_msg() at LOG_WARN, so that
 *	they show without --verbose
 * Return: 0 or -errno.  Context: setup.
 */
int boottime_init(struct boottime *bt, boottime_clock_fn clock,
		  void *clock_opaque, boottime_log_fn log, void *log_opaque);

/** boottime_destroy() - release the lock.  Context: teardown. */
void boottime_destroy(struct boottime *bt);

/**
 * boottime_label() - the label of mark @value.
 * @buf/@len: room for the label (BOOT_TIME_LABEL_LEN)
 * Return: true and the label in @buf when @value is a mark, else false.
 * Context: any thread.
 */
bool boottime_label(uint8_t value, char *buf, size_t len);

/**
 * boottime_access() - bus handler for port I/O and MMIO alike.
 * @opaque: the struct boottime
 * @off: offset into the registered range; only writes at 0 count
 * @data: guest data; a write of any width uses its low byte
 * @len: access width; reads return 0
 * @is_write: direction
 *
 * Context: any vCPU thread.
 */
void boottime_access(void *opaque, uint64_t off, uint8_t *data,
		     unsigned int len, bool is_write);

/** boottime_get_stats() - a consistent copy.  Context: any thread. */
void boottime_get_stats(struct boottime *bt, struct boottime_stats *out);

/**
 * boottime_format_stats() - the --stats line for @st (no prefix, no
 * newline): "boot-time: marks N ignored N unlogged N first T ms (LABEL)
 * last T ms (LABEL)"; without marks it ends after "unlogged N".
 * Return: @buf.  Context: any thread.
 */
char *boottime_format_stats(const struct boottime_stats *st, char *buf,
			    size_t len);

/** boottime_print_stats() - "microvm: stats " and that line to @fd. */
void boottime_print_stats(struct boottime *bt, int fd);

#endif
