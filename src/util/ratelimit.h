/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Token-bucket rate limits as Firecracker's API describes them: a limiter
 * has two buckets, bandwidth (bytes) and operations (requests). A bucket
 * holds at most @size tokens and refills @size tokens every
 * @refill_time_ms, plus a one-time burst of @one_time_burst tokens spent
 * first. A bucket with size 0 or refill_time_ms 0 does not limit.
 *
 * The runtime limiter (struct rl_limiter) starts with both buckets full
 * and refills them continuously from CLOCK_MONOTONIC. A request takes its
 * tokens from both buckets or from neither. A request larger than a
 * bucket still goes through once that bucket owes nothing, and the bucket
 * then owes the excess: the requests after it wait until it is repaid, so
 * the long-run rate holds and nothing waits forever (Firecracker blocks
 * its limiter for the same time). One limiter may be shared by threads.
 *
 *	rl_init(&l, &cfg);                 // once; rl_destroy(&l) at the end
 *	wait = rl_consume(&l, 1, bytes);   // 0: go; else retry in wait ns
 *	rl_set(&l, &new_cfg);              // any thread, at any time
 */
#ifndef MICROVM_UTIL_RATELIMIT_H
#define MICROVM_UTIL_RATELIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rl_bucket_config {
	uint64_t size;
	uint64_t one_time_burst;
	uint64_t refill_time_ms;
};

struct rl_config {
	struct rl_bucket_config bandwidth; /* bytes */
	struct rl_bucket_config ops;       /* requests */
};

/* Largest size or one_time_burst (Firecracker's int64). */
#define RL_TOKENS_MAX ((uint64_t)INT64_MAX)
/* Largest refill_time_ms: about 31 years, so that it fits nanoseconds. */
#define RL_REFILL_MS_MAX 1000000000000ull

/* Does @b limit anything? */
static inline bool rl_bucket_active(const struct rl_bucket_config *b)
{
	return b->size && b->refill_time_ms;
}

/* Does @c limit anything? */
static inline bool rl_config_active(const struct rl_config *c)
{
	return rl_bucket_active(&c->bandwidth) || rl_bucket_active(&c->ops);
}

/* One bucket at run time; the fields are the limiter's, under its lock. */
struct rl_bucket {
	uint64_t size;      /* 0: does not limit */
	uint64_t refill_ns; /* time to refill @size tokens */
	int64_t budget;     /* tokens now, at most @size; below 0: owed by
			     * a request larger than the bucket */
	uint64_t burst;     /* one-time burst left, spent first */
	uint64_t last_ns;   /* @budget counts the refill up to here */
};

struct rl_limiter {
	pthread_mutex_t lock;
	atomic_bool active;  /* either bucket limits: read without the lock */
	struct rl_bucket bytes;
	struct rl_bucket ops;
};

/**
 * rl_config_check() - whether @c is a configuration the limiter takes.
 * @c: the configuration
 * @err/@errlen: one line naming the bad field and value, on error
 * Return: 0, or -EINVAL (a size or burst above RL_TOKENS_MAX, a refill
 * time above RL_REFILL_MS_MAX). Context: any thread.
 */
int rl_config_check(const struct rl_config *c, char *err, size_t errlen);

/**
 * rl_init() - a limiter with @c's buckets, full, their bursts unspent.
 * @l: the limiter
 * @c: a configuration rl_config_check() accepts (all zero: no limit)
 * Context: before any thread uses @l; rl_destroy() undoes it.
 */
void rl_init(struct rl_limiter *l, const struct rl_config *c);

/** rl_destroy() - free what rl_init() made.  Context: no user left. */
void rl_destroy(struct rl_limiter *l);

/**
 * rl_set() - replace the buckets of a limiter in use: the new ones start
 * full with their bursts unspent, as Firecracker's update does; the next
 * rl_consume() sees them.
 * @l: the limiter
 * @c: a configuration rl_config_check() accepts (all zero: no limit)
 * Context: any thread.
 */
void rl_set(struct rl_limiter *l, const struct rl_config *c);

/**
 * rl_consume() - take @ops operation tokens and @bytes bandwidth tokens,
 * from both buckets or from neither.
 * @l: the limiter
 * @ops: tokens for the operations bucket (1 per request)
 * @bytes: tokens for the bandwidth bucket (0: a request that moves no
 *         data, which bandwidth debt does not hold back)
 * Return: 0 when the tokens were taken (always, for a limiter that does
 * not limit); else the nanoseconds after which the same call would take
 * them, if nothing else takes tokens meanwhile (at least 1).
 * Context: any thread.
 */
uint64_t rl_consume(struct rl_limiter *l, uint64_t ops, uint64_t bytes);

/* rl_init(), rl_set() and rl_consume() at the time @now_ns (tests). */
void rl_init_at(struct rl_limiter *l, const struct rl_config *c,
		uint64_t now_ns);
void rl_set_at(struct rl_limiter *l, const struct rl_config *c,
	       uint64_t now_ns);
uint64_t rl_consume_at(struct rl_limiter *l, uint64_t ops, uint64_t bytes,
		       uint64_t now_ns);

#endif
