/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Token-bucket rate limits as Firecracker's API describes them: a limiter
 * has two buckets, bandwidth (bytes) and operations (requests). A bucket
 * holds at most @size tokens and refills @size tokens every
 * @refill_time_ms, plus a one-time burst of @one_time_burst tokens spent
 * first. A bucket with size 0 or refill_time_ms 0 does not limit.
 */
#ifndef MICROVM_UTIL_RATELIMIT_H
#define MICROVM_UTIL_RATELIMIT_H

#include <stdbool.h>
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

#endif
