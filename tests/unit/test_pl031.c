// SPDX-License-Identifier: Apache-2.0
/*
 * PL031 model: the PrimeCell ID registers Linux's AMBA bus matches, the
 * counter reading the host's wall clock from reset and advancing with it,
 * RTCLR loads (and the 32-bit wrap), a match at the current count latching
 * RTCRIS at once, the alarm timerfd firing when the counter reaches RTCMR
 * (and a wakeup before that latching nothing), IMSC/MIS/ICR and the level
 * line, and hostile accesses: every offset of the page and past it at every
 * width, misaligned ones reading 0 and changing nothing.
 */
#include <poll.h>
#include <time.h>

#include <errno.h>
#include <stdlib.h>

#include "devices/pl031.h"
#include "irq_log.h"
#include "snap_roundtrip.h"
#include "test.h"

#define DR 0x000
#define MR 0x004
#define LR 0x008
#define CR 0x00c
#define IMSC 0x010
#define RIS 0x014
#define MIS 0x018
#define ICR 0x01c

/* Wall-clock seconds the fake clock is ahead of the host's. */
static int64_t skew;

static int64_t real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

static int64_t fake_now(void)
{
	return real_now() + skew;
}

static void wr(struct pl031 *r, unsigned int off, uint32_t val)
{
	uint8_t d[4] = { (uint8_t)val, (uint8_t)(val >> 8),
			 (uint8_t)(val >> 16), (uint8_t)(val >> 24) };

	pl031_access(r, off, d, 4, true);
}

static uint32_t rd(struct pl031 *r, unsigned int off)
{
	uint8_t d[4] = { 0xee, 0xee, 0xee, 0xee };

	pl031_access(r, off, d, 4, false);
	return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
	       (uint32_t)d[3] << 24;
}

static void test_ids_and_reset(void)
{
	static const uint8_t want[8] = { 0x31, 0x10, 0x04, 0x00,
					 0x0d, 0xf0, 0x05, 0xb1 };
	struct irq_log log = { 0 };
	struct pl031 r;
	int64_t t0, t1;
	unsigned int i;
	uint32_t dr;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 7, true), 0);
	for (i = 0; i < 8; i++)
		CHECK_EQ(rd(&r, 0xfe0 + 4 * i), want[i]);
	t0 = real_now();
	dr = rd(&r, DR);
	t1 = real_now();
	/* The host's wall clock, as the guest's hctosys wants it. */
	CHECK((uint32_t)t0 <= dr && dr <= (uint32_t)t1);
	CHECK_EQ(rd(&r, CR), 1);
	CHECK_EQ(rd(&r, IMSC), 0);
	CHECK_EQ(rd(&r, RIS), 0);
	CHECK_EQ(log.calls, 0);
	pl031_destroy(&r);
}

static void test_load_and_wrap(void)
{
	struct irq_log log = { 0 };
	struct pl031 r;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 7, true), 0);
	r.now = fake_now;
	skew = 0;
	wr(&r, LR, 1000);
	CHECK_EQ(rd(&r, LR), 1000);
	CHECK(rd(&r, DR) - 1000 <= 1);
	skew = 5;
	CHECK(rd(&r, DR) - 1005 <= 1);
	CHECK_EQ(rd(&r, LR), 1000);
	/* Writes to the counter and the status registers do nothing. */
	wr(&r, DR, 7);
	wr(&r, RIS, 1);
	wr(&r, MIS, 1);
	CHECK(rd(&r, DR) - 1005 <= 1);
	CHECK_EQ(rd(&r, RIS), 0);
	/* 32 bits, wrapping as the hardware's counter does. */
	skew = 0;
	wr(&r, LR, 0xffffffffu);
	skew = 2;
	CHECK(rd(&r, DR) - 1 <= 1);
	CHECK_EQ(log.calls, 0);
	pl031_destroy(&r);
}

static void test_match_now(void)
{
	struct irq_log log = { 0 };
	struct pl031 r;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 9, true), 0);
	r.now = fake_now;
	skew = 0;
	wr(&r, LR, 5000);
	wr(&r, MR, rd(&r, DR));
	CHECK_EQ(rd(&r, MR), rd(&r, DR));
	CHECK_EQ(rd(&r, RIS), 1);
	CHECK_EQ(rd(&r, MIS), 0);
	CHECK_EQ(log.calls, 0); /* masked */
	wr(&r, IMSC, 0xffffffffu);
	CHECK_EQ(rd(&r, IMSC), 1);
	CHECK_EQ(rd(&r, MIS), 1);
	CHECK_EQ(log.level, 1);
	CHECK_EQ(log.gsi, 9);
	wr(&r, ICR, 1);
	CHECK_EQ(rd(&r, RIS), 0);
	CHECK_EQ(log.level, 0);
	CHECK_EQ(log.calls, 2);
	CHECK_EQ(log.repeats, 0);
	pl031_destroy(&r);
}

static void test_alarm(void)
{
	struct irq_log log = { 0 };
	struct pl031 r;
	struct pollfd pfd;
	uint32_t dr;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 3, true), 0);
	wr(&r, IMSC, 1);
	/* Far ahead: a wakeup now (spurious, or an old one) latches nothing. */
	wr(&r, MR, rd(&r, DR) + 100);
	pl031_timer_fired(&r);
	CHECK_EQ(rd(&r, RIS), 0);
	CHECK_EQ(log.calls, 0);
	/* One second ahead: the timerfd fires, then the line goes up. */
	dr = rd(&r, DR);
	wr(&r, MR, dr + 1);
	CHECK_EQ(rd(&r, RIS), 0);
	pfd = (struct pollfd){ .fd = pl031_timer_fd(&r), .events = POLLIN };
	CHECK_EQ(poll(&pfd, 1, 5000), 1);
	pl031_timer_fired(&r);
	CHECK_EQ(rd(&r, RIS), 1);
	CHECK_EQ(log.level, 1);
	CHECK(rd(&r, DR) - (dr + 1) <= 1);
	/* Cleared and not re-armed: a later wakeup latches nothing again. */
	wr(&r, ICR, 1);
	CHECK_EQ(log.level, 0);
	pl031_timer_fired(&r);
	CHECK_EQ(rd(&r, RIS), 0);
	CHECK_EQ(log.repeats, 0);
	pl031_destroy(&r);
}

/* Without an alarm (the arm64 machine's RTC): no timerfd, same clock. */
static void test_no_alarm(void)
{
	struct irq_log log = { 0 };
	struct pl031 r;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 5, false), 0);
	CHECK_EQ(pl031_timer_fd(&r), -1);
	r.now = fake_now;
	skew = 0;
	wr(&r, LR, 4000);
	CHECK(rd(&r, DR) - 4000 <= 1);
	wr(&r, IMSC, 1);
	wr(&r, MR, rd(&r, DR) + 10);
	pl031_timer_fired(&r);
	CHECK_EQ(rd(&r, RIS), 0);
	/* A match written at the current count still latches. */
	wr(&r, MR, rd(&r, DR));
	CHECK_EQ(rd(&r, RIS), 1);
	CHECK_EQ(log.level, 1);
	wr(&r, ICR, 1);
	CHECK_EQ(log.level, 0);
	pl031_destroy(&r);
}

static void test_hostile(void)
{
	static const unsigned int widths[] = { 0, 1, 2, 3, 4, 8, 9, 100 };
	struct irq_log log = { 0 };
	unsigned int off, w;
	uint32_t lr, mr;
	struct pl031 r;
	uint8_t d[8];
	bool clean = true;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 3, true), 0);
	r.now = fake_now;
	skew = 0;
	wr(&r, LR, 77);
	wr(&r, MR, 1u << 30);
	lr = rd(&r, LR);
	mr = rd(&r, MR);
	for (off = 0; off < PL031_MMIO_SIZE + 64; off++) {
		for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
			memset(d, 0xa5, sizeof(d));
			pl031_access(&r, off, d, widths[w], false);
			if ((off & 3) || off >= PL031_MMIO_SIZE) {
				unsigned int i, n = widths[w] > 8 ? 8 :
								    widths[w];

				for (i = 0; i < n; i++)
					clean &= d[i] == 0;
				memset(d, 0xff, sizeof(d));
				pl031_access(&r, off, d, widths[w], true);
			}
		}
	}
	CHECK(clean);
	/* Misaligned and out-of-page writes of all ones changed nothing. */
	CHECK_EQ(rd(&r, LR), lr);
	CHECK_EQ(rd(&r, MR), mr);
	CHECK_EQ(rd(&r, IMSC), 0);
	/* A 1-byte read gets the low byte; a 2-byte write the low 16 bits. */
	pl031_access(&r, 0xfe0, d, 1, false);
	CHECK_EQ(d[0], 0x31);
	d[0] = 0x34;
	d[1] = 0x12;
	pl031_access(&r, LR, d, 2, true);
	CHECK_EQ(rd(&r, LR), 0x1234);
	CHECK_EQ(log.repeats, 0);
	pl031_destroy(&r);
}

static void save_fn(void *dev, struct snap_writer *w)
{
	pl031_save(dev, w);
}

/*
 * A snapshot's state: the counter goes on from the host's wall clock
 * with the saved offset (the snapshot lay on disk 50 s: 50 s later), and
 * the match, mask and latched status come back with the line.
 */
static void test_save_load(void)
{
	struct irq_log log = { 0 }, log2 = { 0 };
	struct pl031 r, q;
	struct snap_rt rt;
	struct snap_reader rd_;

	CHECK_EQ(pl031_init(&r, fake_irq, &log, 7, false), 0);
	r.now = fake_now;
	skew = 0;
	wr(&r, LR, 1000);
	wr(&r, IMSC, 1);
	wr(&r, MR, 1000); /* matches now: RIS latched, the line up */
	CHECK_EQ(rd(&r, MIS), 1);
	wr(&r, MR, 5000);
	CHECK(snap_rt_make(&rt, save_fn, &r));

	CHECK_EQ(pl031_init(&q, fake_irq, &log2, 7, false), 0);
	q.now = fake_now;
	skew = 50;
	rd_ = snap_rt_short(&rt);
	CHECK_EQ(pl031_load(&q, &rd_), -EINVAL);
	rd_ = rt.r;
	CHECK_EQ(pl031_load(&q, &rd_), 0);
	CHECK(rd(&q, DR) - 1050 <= 1);
	CHECK_EQ(rd(&q, MR), 5000);
	CHECK_EQ(rd(&q, IMSC), 1);
	CHECK_EQ(rd(&q, RIS), 1);
	CHECK_EQ(log2.level, 1);
	wr(&q, ICR, 1);
	CHECK_EQ(log2.level, 0);
	skew = 0;
	free(rt.buf);
	pl031_destroy(&q);
	pl031_destroy(&r);
}

int main(void)
{
	test_save_load();
	test_ids_and_reset();
	test_load_and_wrap();
	test_match_now();
	test_alarm();
	test_no_alarm();
	test_hostile();
	return test_done();
}
