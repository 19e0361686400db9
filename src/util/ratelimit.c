// SPDX-License-Identifier: Apache-2.0
/*
 * Token buckets (ratelimit.h): each bucket's budget is refilled from the
 * time since it was last counted, continuously, capped at its size; the
 * time that a partial token took is kept for the next refill, so no
 * fraction is lost between calls. Products of tokens and nanoseconds are
 * computed in 128 bits.
 */
#include "util/ratelimit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "util/clock.h"

#define NS_PER_MS 1000000ull

static int rl_bucket_check(const struct rl_bucket_config *b,
			   const char *name, char *err, size_t errlen)
{
	if (b->size > RL_TOKENS_MAX) {
		snprintf(err, errlen, "%s.size %" PRIu64 " is above %" PRIu64,
			 name, b->size, RL_TOKENS_MAX);
		return -EINVAL;
	}
	if (b->one_time_burst > RL_TOKENS_MAX) {
		snprintf(err, errlen,
			 "%s.one_time_burst %" PRIu64 " is above %" PRIu64,
			 name, b->one_time_burst, RL_TOKENS_MAX);
		return -EINVAL;
	}
	if (b->refill_time_ms > RL_REFILL_MS_MAX) {
		snprintf(err, errlen,
			 "%s.refill_time %" PRIu64 " ms is above %llu", name,
			 b->refill_time_ms, RL_REFILL_MS_MAX);
		return -EINVAL;
	}
	return 0;
}

int rl_config_check(const struct rl_config *c, char *err, size_t errlen)
{
	int ret = rl_bucket_check(&c->bandwidth, "bandwidth", err, errlen);

	return ret ? ret : rl_bucket_check(&c->ops, "ops", err, errlen);
}

/* A full bucket of @c (an inactive one has size 0 and never limits). */
static void rl_bucket_reset(struct rl_bucket *b,
			    const struct rl_bucket_config *c, uint64_t now)
{
	bool on = rl_bucket_active(c) && c->size <= RL_TOKENS_MAX &&
		  c->refill_time_ms <= RL_REFILL_MS_MAX;

	b->size = on ? c->size : 0;
	b->refill_ns = on ? c->refill_time_ms * NS_PER_MS : 0;
	b->budget = (int64_t)b->size;
	b->burst = on && c->one_time_burst <= RL_TOKENS_MAX ?
		   c->one_time_burst : 0;
	b->last_ns = now;
}

/* Add what was earned since last_ns, up to the size. */
static void rl_bucket_refill(struct rl_bucket *b, uint64_t now)
{
	unsigned __int128 earned;
	uint64_t used_ns;

	if (now <= b->last_ns)
		return;
	if (b->budget >= (int64_t)b->size) {
		b->last_ns = now;
		return;
	}
	earned = (unsigned __int128)(now - b->last_ns) * b->size /
		 b->refill_ns;
	if (earned >= (unsigned __int128)((int64_t)b->size - b->budget)) {
		b->budget = (int64_t)b->size;
		b->last_ns = now;
		return;
	}
	b->budget += (int64_t)earned;
	/* The time those whole tokens took, rounded up: <= now - last. */
	used_ns = (uint64_t)((earned * b->refill_ns + b->size - 1) / b->size);
	b->last_ns += used_ns;
}

/*
 * What a request of @n tokens needs the budget to reach: @n less the
 * burst left, or 0 (owing nothing) for more than the bucket holds.
 */
static int64_t rl_bucket_target(const struct rl_bucket *b, uint64_t n)
{
	uint64_t rest = n - b->burst;

	return rest > b->size ? 0 : (int64_t)rest;
}

static bool rl_bucket_ok(const struct rl_bucket *b, uint64_t n)
{
	if (!b->size || n <= b->burst)
		return true;
	return b->budget >= rl_bucket_target(b, n);
}

static void rl_bucket_take(struct rl_bucket *b, uint64_t n)
{
	__int128 left;

	if (!b->size)
		return;
	if (n <= b->burst) {
		b->burst -= n;
		return;
	}
	n -= b->burst;
	b->burst = 0;
	left = (__int128)b->budget - n;
	/* A debt beyond INT64_MIN / 2 is as good as forever. */
	b->budget = left < INT64_MIN / 2 ? INT64_MIN / 2 : (int64_t)left;
}

/* Nanoseconds from @now until rl_bucket_ok(b, n), refilled at @now. */
static uint64_t rl_bucket_wait(const struct rl_bucket *b, uint64_t n,
			       uint64_t now)
{
	unsigned __int128 need, ns;

	need = (unsigned __int128)((__int128)rl_bucket_target(b, n) - b->budget);
	ns = (need * b->refill_ns + b->size - 1) / b->size;
	ns += b->last_ns;
	if (ns <= now)
		return 1;
	ns -= now;
	return ns > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)ns;
}

void rl_init_at(struct rl_limiter *l, const struct rl_config *c,
		uint64_t now_ns)
{
	pthread_mutex_init(&l->lock, NULL);
	rl_bucket_reset(&l->bytes, &c->bandwidth, now_ns);
	rl_bucket_reset(&l->ops, &c->ops, now_ns);
	atomic_init(&l->active, l->bytes.size || l->ops.size);
}

void rl_init(struct rl_limiter *l, const struct rl_config *c)
{
	rl_init_at(l, c, clock_now_ns());
}

void rl_destroy(struct rl_limiter *l)
{
	pthread_mutex_destroy(&l->lock);
}

void rl_set_at(struct rl_limiter *l, const struct rl_config *c,
	       uint64_t now_ns)
{
	pthread_mutex_lock(&l->lock);
	rl_bucket_reset(&l->bytes, &c->bandwidth, now_ns);
	rl_bucket_reset(&l->ops, &c->ops, now_ns);
	atomic_store(&l->active, l->bytes.size || l->ops.size);
	pthread_mutex_unlock(&l->lock);
}

void rl_set(struct rl_limiter *l, const struct rl_config *c)
{
	rl_set_at(l, c, clock_now_ns());
}

uint64_t rl_consume_at(struct rl_limiter *l, uint64_t ops, uint64_t bytes,
		       uint64_t now_ns)
{
	uint64_t wait = 0, w;

	if (!atomic_load_explicit(&l->active, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&l->lock);
	rl_bucket_refill(&l->ops, now_ns);
	rl_bucket_refill(&l->bytes, now_ns);
	if (rl_bucket_ok(&l->ops, ops) && rl_bucket_ok(&l->bytes, bytes)) {
		rl_bucket_take(&l->ops, ops);
		rl_bucket_take(&l->bytes, bytes);
	} else {
		if (!rl_bucket_ok(&l->ops, ops))
			wait = rl_bucket_wait(&l->ops, ops, now_ns);
		if (!rl_bucket_ok(&l->bytes, bytes)) {
			w = rl_bucket_wait(&l->bytes, bytes, now_ns);
			wait = w > wait ? w : wait;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return wait;
}

uint64_t rl_consume(struct rl_limiter *l, uint64_t ops, uint64_t bytes)
{
	return rl_consume_at(l, ops, bytes, clock_now_ns());
}
