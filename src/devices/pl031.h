/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ARM PL031 (PrimeCell real-time clock) as Linux's rtc-pl031 driver
 * probes and drives it: a 32-bit seconds counter that reads the host's wall
 * clock from reset (so the guest's hctosys gets the real date), a load
 * register that sets it, a match register whose alarm interrupt fires when
 * the counter reaches it, and the interrupt mask/raw/masked/clear registers
 * and PrimeCell ID registers. The alarm runs on a timerfd that the VMM's
 * event loop watches (pl031_timer_fd(), pl031_timer_fired()); the device has
 * no thread of its own. The interrupt is one level line reported through
 * irq_set_fn whenever (RIS & IMSC) changes.
 *
 * Usage sketch:
 *
 *	pl031_init(&rtc, vm_irq_set, vm, SPI_RTC, true);
 *	bus_register(&mmio, RTC_BASE, PL031_MMIO_SIZE, pl031_access, &rtc);
 *	evloop_add(loop, pl031_timer_fd(&rtc), on_rtc_timer, &rtc);
 *	// on_rtc_timer(): pl031_timer_fired(&rtc);
 */
#ifndef MICROVM_PL031_H
#define MICROVM_PL031_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "devices/irq.h"

#define PL031_MMIO_SIZE 0x1000 /* one 4 KiB PrimeCell register page */

struct pl031 {
	pthread_mutex_t lock; /* guards everything below */
	irq_set_fn irq;
	void *irq_opaque;
	uint32_t gsi;
	int irq_level;        /* last level reported through irq() */
	int timer_fd;         /* CLOCK_REALTIME timerfd for the match; -1: none */

	uint32_t lr;          /* RTCLR: the counter's value at @base */
	int64_t base;         /* host wall-clock seconds when @lr was loaded */
	uint32_t mr;          /* RTCMR */
	uint8_t imsc;         /* RTCIMSC bit 0 */
	uint8_t ris;          /* RTCRIS bit 0: the counter reached RTCMR */
	int64_t alarm_at;     /* host seconds the timer is armed for; 0: none */

	/* Host wall-clock seconds; the unit test replaces it. */
	int64_t (*now)(void);
};

/**
 * pl031_init() - reset an RTC to the host's wall clock and create its timer.
 * @r: RTC to set up
 * @irq: called with the new level each time the interrupt line changes,
 *	with @r->lock held (it must not call back into this RTC), on the
 *	thread that caused the change
 * @irq_opaque: first argument of @irq
 * @gsi: passed through to @irq
 * @alarm: create the alarm's timerfd (the caller watches pl031_timer_fd());
 *	false: none, and a match latches RTCRIS only when RTCMR or RTCLR is
 *	written with the counter already equal (no system call on the vCPU
 *	thread then)
 * Return: 0, or -errno when the timerfd or the mutex cannot be created.
 * Context: setup.
 */
int pl031_init(struct pl031 *r, irq_set_fn irq, void *irq_opaque,
	       uint32_t gsi, bool alarm);

/** pl031_destroy() - release what pl031_init() created. Context: teardown. */
void pl031_destroy(struct pl031 *r);

/**
 * pl031_access() - bus handler for the RTC's 4 KiB register page.
 * @opaque: the struct pl031
 * @off: offset in the page; registers sit at multiples of 4, and an access
 *	at any other offset, or past PL031_MMIO_SIZE, reads 0 and writes
 *	nothing
 * @data: guest data, little endian
 * @len: access width, 1 to 8; a register's value fills the low bytes and a
 *	write takes the low @len bytes (at most 32 bits)
 * @is_write: direction
 * Context: any vCPU thread.
 */
void pl031_access(void *opaque, uint64_t off, uint8_t *data, unsigned int len,
		  bool is_write);

/**
 * pl031_timer_fd() - the fd that turns readable when the alarm is due, or
 * -1 without an alarm.
 * Context: any thread.
 */
int pl031_timer_fd(const struct pl031 *r);

/**
 * pl031_timer_fired() - the alarm's timerfd was readable: consume it and,
 * if the counter has reached RTCMR, latch the match interrupt.
 * Context: the event-loop thread.
 */
void pl031_timer_fired(struct pl031 *r);

struct snap_writer;
struct snap_reader;

/**
 * pl031_save() - the RTC's state for a snapshot: the counter as an
 * offset from the host's wall clock, the match value, mask and status.
 * Context: any thread, the guest paused.
 */
void pl031_save(struct pl031 *r, struct snap_writer *w);

/**
 * pl031_load() - pl031_save()'s state back: the counter goes on from the
 * host's wall clock with the saved offset, a match ahead is re-armed.
 * Return: 0, or -EINVAL for a truncated or oversized state.
 * Context: startup of a restore, before the vCPUs run.
 */
int pl031_load(struct pl031 *r, struct snap_reader *rd);

#endif
