/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the in-test device drivers (blk_driver.h, net_driver.h,
 * vsock_driver.h) share: guest RAM as a malloc'd buffer at RAM_GPA with
 * little-endian stores into it, a fake transport that counts interrupts
 * per queue and config changes, and a monotonic clock for their waits.
 * The includer defines RAM_GPA and RING_DRIVER_QUEUES (the queues whose
 * interrupts are counted) first.
 */
#ifndef MICROVM_TEST_RING_DRIVER_H
#define MICROVM_TEST_RING_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/le.h"
#include "virtio/virtio.h"

#if !defined(RAM_GPA) || !defined(RING_DRIVER_QUEUES)
#error "define RAM_GPA and RING_DRIVER_QUEUES before ring_driver.h"
#endif

#include "snapshot/snap.h"

static uint8_t *ram;

/* ---- fake transport ---- */

static atomic_uint notify_count[RING_DRIVER_QUEUES];
static atomic_uint config_count;

static inline bool fake_notify(struct virtio_dev *d, struct virtio_queue *q)
{
	(void)d;
	atomic_fetch_add(&notify_count[q->index], 1);
	return true;
}

static inline void fake_notify_config(struct virtio_dev *d)
{
	(void)d;
	atomic_fetch_add(&config_count, 1);
}

/* The fake transport's snapshot state: one word, checked on load. */
#define FAKE_TRANSPORT_STATE 0xfa4e7a11u

static inline int fake_save(struct virtio_dev *d, struct snap_writer *w,
			    char *err, size_t errlen)
{
	(void)d;
	(void)err;
	(void)errlen;
	snap_put_u32(w, FAKE_TRANSPORT_STATE);
	return 0;
}

static inline int fake_load(struct virtio_dev *d, struct snap_reader *r,
			    char *err, size_t errlen)
{
	(void)d;
	if (snap_get_u32(r) == FAKE_TRANSPORT_STATE)
		return 0;
	snprintf(err, errlen, "fake transport: bad state");
	return -EINVAL;
}

static const struct virtio_transport_ops fake_tops = {
	.name = "fake",
	.notify = fake_notify,
	.notify_config = fake_notify_config,
	.save = fake_save,
	.load = fake_load,
};

/* ---- guest RAM and the clock ---- */

static inline void *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static inline void put_le(uint64_t gpa, uint64_t v, unsigned int n)
{
	le_put(host(gpa), n, v);
}

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

#endif /* MICROVM_TEST_RING_DRIVER_H */
