/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guest's side of the split rings for the net and vsock drivers
 * (net_driver.h, vsock_driver.h): one ring per queue at RING_GPA(q),
 * avail at AVAIL_OFF and used at USED_OFF from it, QSZ entries; chains
 * are published, kicked through the queue's eventfd and read back from
 * the used ring, and the status is written as the transport would.
 * Include after ring_driver.h, with those macros defined.
 */
#ifndef MICROVM_TEST_QUEUE_DRIVER_H
#define MICROVM_TEST_QUEUE_DRIVER_H

#include <endian.h>
#include <pthread.h>
#include <stdint.h>

#include "ring_driver.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/virtio.h"

#if !defined(RING_GPA) || !defined(AVAIL_OFF) || !defined(USED_OFF) || \
	!defined(QSZ)
#error "define RING_GPA, AVAIL_OFF, USED_OFF and QSZ before queue_driver.h"
#endif

static struct virtio_dev vdev;
static uint16_t drv_avail[RING_DRIVER_QUEUES]; /* avail entries published */

/* Add chain @head to @q's avail ring and publish it (§2.7.13). */
static inline void avail_add(unsigned int q, uint16_t head)
{
	uint16_t *idx = host(RING_GPA(q) + AVAIL_OFF + 2);

	put_le(RING_GPA(q) + AVAIL_OFF + 4 + 2ull * (drv_avail[q] % QSZ), head,
	       2);
	drv_avail[q]++;
	__atomic_store_n(idx, htole16(drv_avail[q]), __ATOMIC_RELEASE);
}

static inline void kick(unsigned int q)
{
	evfd_signal(vdev.queues[q].kick_fd);
}

static inline uint16_t used_idx(unsigned int q)
{
	uint16_t *p = host(RING_GPA(q) + USED_OFF + 2);

	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static inline void used_elem(unsigned int q, uint16_t i, uint32_t *id,
			     uint32_t *len)
{
	uint64_t e = RING_GPA(q) + USED_OFF + 4 + 8ull * (i % QSZ);

	*id = (uint32_t)le_get(host(e), 4);
	*len = (uint32_t)le_get(host(e + 4), 4);
}

static inline void set_status(uint8_t s)
{
	pthread_mutex_lock(&vdev.lock);
	virtio_set_status_locked(&vdev, s);
	pthread_mutex_unlock(&vdev.lock);
}

#endif /* MICROVM_TEST_QUEUE_DRIVER_H */
