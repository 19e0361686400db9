// SPDX-License-Identifier: Apache-2.0
/*
 * Token buckets (util/ratelimit.h) on an injected clock: a bucket starts
 * full and refills continuously at size per refill time, the one-time
 * burst goes first, both buckets or neither, the wait it reports is
 * exact, a request larger than the bucket passes and its debt holds the
 * next ones back, reconfiguring at run time starts fresh buckets, and the
 * configuration check names a bad field. Then the real clock with
 * threads sharing one limiter: their total holds to the rate.
 */
#include "util/ratelimit.h"
#include "test.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#define MS 1000000ull
#define SEC (1000 * MS)
#define T0 (5 * SEC) /* any start: the clock is injected */

/* ops: @size per @ms; bandwidth: off. */
static struct rl_config ops_cfg(uint64_t size, uint64_t burst, uint64_t ms)
{
	struct rl_config c;

	memset(&c, 0, sizeof(c));
	c.ops.size = size;
	c.ops.one_time_burst = burst;
	c.ops.refill_time_ms = ms;
	return c;
}

/* Starts full, refills continuously; the wait is when the token is due. */
static void test_refill(void)
{
	struct rl_config c = ops_cfg(10, 0, 1000);
	struct rl_limiter l;
	unsigned int i;
	uint64_t w;

	rl_init_at(&l, &c, T0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 0);
	/* Empty: one token every 100 ms. */
	w = rl_consume_at(&l, 1, 0, T0);
	CHECK_EQ(w, 100 * MS);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 40 * MS), 60 * MS);
	CHECK(rl_consume_at(&l, 1, 0, T0 + 100 * MS - 1) > 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 100 * MS), 0);
	/* Fractions carry: 3 x 50 ms earn 1.5 tokens, one taken. */
	CHECK(rl_consume_at(&l, 1, 0, T0 + 150 * MS) > 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 200 * MS), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 250 * MS), 50 * MS);
	/* Idle for long: full again, never more than the size. */
	for (i = 0; i < 10; i++)
		CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 60 * SEC), 0);
	CHECK(rl_consume_at(&l, 1, 0, T0 + 60 * SEC) > 0);
	/* Over 10 s at a steady ask, 10 per second and no more. */
	{
		uint64_t t = T0 + 100 * SEC, end = t + 10 * SEC, n = 0;

		rl_set_at(&l, &c, t);
		while (t <= end) {
			w = rl_consume_at(&l, 1, 0, t);
			if (!w)
				n++;
			t += w ? w : 1;
		}
		CHECK_EQ(n, 10 + 100); /* the full bucket, then 10 s of rate */
	}
	rl_destroy(&l);
}

/* The one-time burst goes first and never comes back. */
static void test_burst(void)
{
	struct rl_config c = ops_cfg(4, 6, 1000);
	struct rl_limiter l;
	unsigned int i;

	rl_init_at(&l, &c, T0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 250 * MS);
	/* Refilled completely: the size, not the burst, is back. */
	for (i = 0; i < 4; i++)
		CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 10 * SEC), 0);
	CHECK(rl_consume_at(&l, 1, 0, T0 + 10 * SEC) > 0);
	/* A request that the burst covers in part takes the rest from the
	 * budget, or nothing at all. */
	c = ops_cfg(4, 2, 1000);
	rl_set_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 5, 0, T0), 0); /* 2 burst + 3 */
	CHECK(rl_consume_at(&l, 2, 0, T0) > 0);   /* 1 left */
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 0);
	rl_destroy(&l);
}

/* All or nothing across the two buckets; the wait is the longer one. */
static void test_both(void)
{
	struct rl_config c = ops_cfg(100, 0, 1000);
	struct rl_limiter l;
	uint64_t w;

	c.bandwidth.size = 4096;
	c.bandwidth.refill_time_ms = 1000;
	rl_init_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 1, 4096, T0), 0);
	/* Bytes refused: the op is not taken either. */
	w = rl_consume_at(&l, 1, 1024, T0);
	CHECK_EQ(w, 250 * MS);
	CHECK_EQ(l.ops.budget, 99);
	/* A request that moves no data is not held by the bytes. */
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 1024, T0 + 250 * MS), 0);
	/* Ops empty and bytes empty: the later of the two. */
	c = ops_cfg(1, 0, 1000);
	c.bandwidth.size = 1000;
	c.bandwidth.refill_time_ms = 1000;
	rl_set_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 1, 1000, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 500, T0), 1000 * MS);
	CHECK_EQ(rl_consume_at(&l, 0, 500, T0), 500 * MS);
	rl_destroy(&l);
}

/* Larger than the bucket: passes when nothing is owed, then owes. */
static void test_oversize(void)
{
	struct rl_config c;
	struct rl_limiter l;
	uint64_t t;
	unsigned int n = 0;

	memset(&c, 0, sizeof(c));
	c.bandwidth.size = 1000;
	c.bandwidth.refill_time_ms = 1000;
	rl_init_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 1, 500, T0), 0);
	/* 500 left, 3000 asked: goes through, owes 2500 (2.5 s). */
	CHECK_EQ(rl_consume_at(&l, 1, 3000, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 1, T0), 2501 * MS);
	CHECK_EQ(rl_consume_at(&l, 1, 3000, T0), 2500 * MS);
	CHECK_EQ(rl_consume_at(&l, 1, 3000, T0 + 2500 * MS), 0);
	/* Never a deadlock, and the long-run rate holds: 60 s of 3000-byte
	 * requests at 1000 bytes/s move about 60000 bytes. */
	rl_set_at(&l, &c, T0);
	for (t = T0; t < T0 + 60 * SEC;) {
		uint64_t w = rl_consume_at(&l, 1, 3000, t);

		if (!w)
			n++;
		t += w ? w : 1;
	}
	CHECK(n * 3000 >= 60000 && n * 3000 <= 61000 + 3000);
	/* A huge debt saturates instead of wrapping. */
	rl_set_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 0, UINT64_MAX, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 0, UINT64_MAX, T0), UINT64_MAX / 2);
	rl_destroy(&l);
}

/* Reconfigured while in use: fresh buckets at once; zero lifts it. */
static void test_reconfigure(void)
{
	struct rl_config c = ops_cfg(1, 0, 10000), none;
	struct rl_limiter l;
	unsigned int i;

	memset(&none, 0, sizeof(none));
	rl_init_at(&l, &c, T0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0), 10 * SEC);
	rl_set_at(&l, &none, T0 + MS);
	for (i = 0; i < 1000; i++)
		CHECK_EQ(rl_consume_at(&l, 1, 1u << 20, T0 + MS), 0);
	c = ops_cfg(2, 0, 1000);
	rl_set_at(&l, &c, T0 + 2 * MS);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 2 * MS), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 2 * MS), 0);
	CHECK_EQ(rl_consume_at(&l, 1, 0, T0 + 2 * MS), 500 * MS);
	/* A bucket of size 0 or refill 0 does not limit. */
	c = ops_cfg(0, 5, 1000);
	c.bandwidth.size = 10;
	rl_set_at(&l, &c, T0);
	CHECK(!atomic_load(&l.active));
	CHECK_EQ(rl_consume_at(&l, 100, 100, T0), 0);
	rl_destroy(&l);
}

/* One row per field the check refuses, each message naming it. */
static void test_config_check(void)
{
	static const struct {
		struct rl_config c;
		const char *names;
	} rows[] = {
		{ .c.bandwidth.size = RL_TOKENS_MAX + 1,
		  .names = "bandwidth.size" },
		{ .c.ops.one_time_burst = UINT64_MAX,
		  .names = "ops.one_time_burst" },
		{ .c.ops.refill_time_ms = RL_REFILL_MS_MAX + 1,
		  .names = "ops.refill_time" },
		{ .c.bandwidth.refill_time_ms = UINT64_MAX,
		  .names = "bandwidth.refill_time" },
	};
	struct rl_config ok = ops_cfg(RL_TOKENS_MAX, RL_TOKENS_MAX,
				      RL_REFILL_MS_MAX);
	struct rl_limiter l;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = 0;
		CHECK_EQ(rl_config_check(&rows[i].c, err, sizeof(err)),
			 -EINVAL);
		CHECK(strstr(err, rows[i].names) != NULL);
	}
	CHECK_EQ(rl_config_check(&ok, err, sizeof(err)), 0);
	/* The largest values do not overflow. */
	rl_init_at(&l, &ok, T0);
	CHECK_EQ(rl_consume_at(&l, RL_TOKENS_MAX, 0, T0), 0);
	CHECK_EQ(rl_consume_at(&l, RL_TOKENS_MAX, 0, T0), 0);
	CHECK(rl_consume_at(&l, RL_TOKENS_MAX, 0, T0) > 0);
	CHECK_EQ(rl_consume_at(&l, RL_TOKENS_MAX, 0,
			       T0 + RL_REFILL_MS_MAX * MS), 0);
	rl_destroy(&l);
}

struct worker {
	struct rl_limiter *l;
	uint64_t end;
	unsigned int taken;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct timespec ts;
	uint64_t wait;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec >= w->end)
			return NULL;
		wait = rl_consume(w->l, 1, 0);
		if (!wait) {
			w->taken++;
			continue;
		}
		ts.tv_sec = (time_t)(wait / SEC);
		ts.tv_nsec = (long)(wait % SEC);
		nanosleep(&ts, NULL);
	}
}

/* Four threads on one limiter, 0.5 s: 50 + 0.5 * 1000 ops at most. */
static void test_threads(void)
{
	struct rl_config c = ops_cfg(50, 0, 50);
	struct worker w[4];
	struct rl_limiter l;
	struct timespec ts;
	unsigned int i, total = 0;
	pthread_t t[4];

	rl_init(&l, &c);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (i = 0; i < 4; i++) {
		w[i].l = &l;
		w[i].end = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec +
			   500 * MS;
		w[i].taken = 0;
		CHECK_EQ(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		total += w[i].taken;
	}
	printf("4 threads, 0.5 s at 1000/s after 50: %u taken\n", total);
	CHECK(total <= 50 + 500 + 1);
	CHECK(total >= 50 + 500 * 9 / 10);
	rl_destroy(&l);
}

int main(void)
{
	test_refill();
	test_burst();
	test_both();
	test_oversize();
	test_reconfigure();
	test_config_check();
	test_threads();
	return test_done();
}
