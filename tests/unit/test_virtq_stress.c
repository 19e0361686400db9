// SPDX-License-Identifier: Apache-2.0
/*
 * Two-thread test of the split virtqueue's notification protocol: a driver
 * thread with the barriers of virtio 1.2 §2.7.13 and §2.7.14 and a device
 * thread that sleeps whenever virtq_notify_enable() finds the ring empty.
 * Kicks and interrupts are semaphores; a lost one shows up as a timeout
 * rather than a hang. Meant for the TSan build as much as the plain one.
 */
#include "virtq_driver.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#define NR_REQUESTS 50000u
#define NR_SLOTS (QSIZE / 2) /* each request: readable id + writable id */
#define WAIT_SECONDS 10

static sem_t kick_sem;
static sem_t irq_sem;
static bool event_idx;
static int stop;         /* driver -> device: exit */
static int device_error; /* device -> driver: what went wrong, 0 if fine */
static uint64_t kicks, irqs;

static uint16_t *ring16(uint64_t gpa)
{
	return host(gpa);
}

static uint16_t load16(uint64_t gpa, int order)
{
	return le16toh(__atomic_load_n(ring16(gpa), order));
}

static void store16(uint64_t gpa, uint16_t v, int order)
{
	__atomic_store_n(ring16(gpa), htole16(v), order);
}

/* Wait for @sem at most WAIT_SECONDS; false on timeout. */
static bool sem_wait_bounded(sem_t *sem)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_SECONDS;
	while (sem_timedwait(sem, &ts)) {
		if (errno != EINTR)
			return false;
	}
	return true;
}

/* The device: echo each request's id from its readable segment into its
 * writable one, the drain loop of virtq.h's usage sketch. */
static void *device_main(void *arg)
{
	struct virtq_seg s[2];
	struct virtq_elem e = { .segs = s, .max_segs = 2 };
	int r;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		virtq_notify_disable(&vq);
		while ((r = virtq_pop(&vq, &e)) > 0) {
			if (e.nr_out != 1 || e.nr_in != 1 || s[1].len != 4) {
				__atomic_store_n(&device_error, 1,
						 __ATOMIC_RELEASE);
				return NULL;
			}
			memcpy(s[1].addr, s[0].addr, 4);
			virtq_push(&vq, e.head, 4);
		}
		if (r < 0) {
			__atomic_store_n(&device_error, 2, __ATOMIC_RELEASE);
			return NULL;
		}
		if (virtq_need_notify(&vq)) {
			irqs++;
			sem_post(&irq_sem);
		}
		if (virtq_notify_enable(&vq))
			continue;
		if (!sem_wait_bounded(&kick_sem)) {
			__atomic_store_n(&device_error, 3, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	return NULL;
}

/* Queue every free slot as one batch, then kick unless suppressed. */
static void driver_submit(uint32_t *next_id, bool *slot_busy,
			  uint32_t *slot_id)
{
	uint16_t old = drv_avail_idx;
	unsigned int k;
	bool kick;

	for (k = 0; k < NR_SLOTS && *next_id < NR_REQUESTS; k++) {
		uint32_t id = htole32(*next_id);

		if (slot_busy[k])
			continue;
		memcpy(host(buf(2 * k)), &id, 4);
		memset(host(buf(2 * k + 1)), 0xff, 4);
		desc_set(DESC_GPA, 2 * k, buf(2 * k), 4, R | NEXT, 2 * k + 1);
		desc_set(DESC_GPA, 2 * k + 1, buf(2 * k + 1), 4, W, 0);
		put16(AVAIL_GPA + 4 + 2ull * (drv_avail_idx % QSIZE), 2 * k);
		drv_avail_idx++;
		slot_busy[k] = true;
		slot_id[k] = (*next_id)++;
	}
	if (old == drv_avail_idx)
		return;
	/* §2.7.13 step 4: ring contents before the idx (release). */
	store16(AVAIL_GPA + 2, drv_avail_idx, __ATOMIC_RELEASE);
	/* §2.7.13.4.1: the idx before reading the suppression fields. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (event_idx) {
		uint16_t ev = load16(USED_GPA + 4 + 8ull * QSIZE,
				     __ATOMIC_RELAXED);

		kick = (uint16_t)(drv_avail_idx - ev - 1) <
		       (uint16_t)(drv_avail_idx - old);
	} else {
		kick = !(load16(USED_GPA, __ATOMIC_RELAXED) &
			 VIRTQ_USED_F_NO_NOTIFY);
	}
	if (kick) {
		kicks++;
		sem_post(&kick_sem);
	}
}

/* Reap completions; returns how many, checking each echoed id. */
static unsigned int driver_reap(uint16_t *last_used, bool *slot_busy,
				const uint32_t *slot_id, unsigned int *bad)
{
	uint16_t idx = load16(USED_GPA + 2, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	for (; *last_used != idx; (*last_used)++, n++) {
		uint32_t head = used_id(*last_used), got;
		unsigned int k = head / 2;

		if (head % 2 || k >= NR_SLOTS || !slot_busy[k] ||
		    used_len(*last_used) != 4) {
			(*bad)++;
			continue;
		}
		memcpy(&got, host(buf(2 * k + 1)), 4);
		if (le32toh(got) != slot_id[k])
			(*bad)++;
		slot_busy[k] = false;
	}
	return n;
}

/* Ask for an interrupt, re-check, then sleep (§2.7.14). */
static bool driver_wait(uint16_t last_used)
{
	if (event_idx)
		store16(AVAIL_GPA + 4 + 2ull * QSIZE, last_used,
			__ATOMIC_RELAXED);
	else
		store16(AVAIL_GPA, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (load16(USED_GPA + 2, __ATOMIC_ACQUIRE) != last_used)
		return true;
	return sem_wait_bounded(&irq_sem);
}

static void run(uint64_t features)
{
	bool slot_busy[NR_SLOTS] = { false };
	uint32_t slot_id[NR_SLOTS], next_id = 0;
	unsigned int done = 0, bad = 0;
	uint16_t last_used = 0;
	pthread_t dev;

	q_setup(QSIZE, features);
	event_idx = features & F_EVENT_IDX;
	stop = 0;
	device_error = 0;
	kicks = irqs = 0;
	sem_init(&kick_sem, 0, 0);
	sem_init(&irq_sem, 0, 0);
	CHECK_EQ(pthread_create(&dev, NULL, device_main, NULL), 0);

	while (done < NR_REQUESTS) {
		unsigned int n;

		driver_submit(&next_id, slot_busy, slot_id);
		n = driver_reap(&last_used, slot_busy, slot_id, &bad);
		done += n;
		if (n) {
			/* Busy polling: no interrupts until we sleep. */
			if (!event_idx)
				store16(AVAIL_GPA, VIRTQ_AVAIL_F_NO_INTERRUPT,
					__ATOMIC_RELAXED);
			continue;
		}
		if (!driver_wait(last_used) ||
		    __atomic_load_n(&device_error, __ATOMIC_ACQUIRE))
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	sem_post(&kick_sem);
	pthread_join(dev, NULL);

	CHECK_EQ(device_error, 0);
	CHECK_EQ(done, NR_REQUESTS);
	CHECK_EQ(bad, 0);
	CHECK_EQ(vq.pops, NR_REQUESTS);
	CHECK_EQ(vq.pushes, NR_REQUESTS);
	CHECK(kicks > 0 && irqs > 0);
	printf("features %#llx: %u requests, %llu kicks, %llu interrupts\n",
	       (unsigned long long)features, done, (unsigned long long)kicks,
	       (unsigned long long)irqs);
	sem_destroy(&kick_sem);
	sem_destroy(&irq_sem);
}

int main(void)
{
	if (driver_init())
		return 1;
	run(0);
	run(F_EVENT_IDX);
	free(ram);
	return test_done();
}
