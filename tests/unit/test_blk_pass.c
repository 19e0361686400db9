// SPDX-License-Identifier: Apache-2.0
/*
 * One pass of a queue thread is bounded (issue 7, defect 5): a driver
 * thread keeps the ring full of malformed chains (they take no request
 * slot), with a few well-formed reads mixed in, while the test resets the
 * device. The reads still complete, no more than a queue size of used
 * entries is pushed between two notification checks (EVENT_IDX needs
 * fewer than 65536), and the reset returns promptly. A watchdog fails the
 * test with a message instead of letting CTest time out. Once per engine.
 */
#include "blk_driver.h"

#include <pthread.h>

#define NVALID 4            /* reads in slots 0..3 (heads 0, 4, 8, 12) */
#define BAD_HEAD (4 * NVALID) /* a long chain whose last buffer is not RAM */
#define STREAM_MS 300       /* streaming before the reset, at least */
#define STREAM_BAD (8 * QSZ) /* and until this many malformed returned */
#define RESET_MS 3000       /* the reset must return within this */
#define WATCHDOG_S 20       /* after this the test gives up */

/* ---- notification checks, seen from the fake transport ---- */

static uint64_t pushes_at_check; /* I/O thread only */
static atomic_ullong max_between; /* most pushes between two checks */

static bool pass_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	uint64_t d = q->vq.pushes - pushes_at_check;

	(void)vdev;
	pushes_at_check = q->vq.pushes;
	if (d > atomic_load(&max_between))
		atomic_store(&max_between, d);
	return true;
}

static const struct virtio_transport_ops pass_tops = {
	.name = "pass",
	.notify = pass_notify,
	.notify_config = fake_notify_config,
};

/* ---- the hostile driver ---- */

struct driver {
	pthread_t t;
	atomic_bool stop;
	atomic_ullong bad_done;   /* malformed chains returned (len 0) */
	atomic_ullong valid_done; /* reads returned with status OK */
	uint64_t wrong;       /* anything else returned */
	uint64_t max_lat_ms;  /* longest a read waited for its completion */
};

static void *driver_run(void *arg)
{
	struct driver *dr = arg;
	uint64_t added_at[NVALID] = { 0 };
	bool busy[NVALID] = { false };
	uint16_t seen = 0, u;
	unsigned int k;

	/* Descriptors BAD_HEAD .. QSZ - 1: each costs the device a step. */
	for (k = BAD_HEAD; k < QSZ; k++) {
		uint64_t d = RING_GPA(0) + 16ull * k;

		put_le(d, k + 1 < QSZ ? data_gpa(0) : BAD_GPA, 8);
		put_le(d + 8, 16, 4);
		put_le(d + 12, k + 1 < QSZ ? VIRTQ_DESC_F_NEXT : 0, 2);
		put_le(d + 14, k + 1, 2);
	}
	while (!atomic_load(&dr->stop)) {
		for (u = used_idx(0); seen != u; seen++) {
			uint32_t id = used_id(0, seen);

			if (id == BAD_HEAD && used_len(0, seen) == 0) {
				atomic_fetch_add(&dr->bad_done, 1);
			} else if (id % 4 == 0 && id / 4 < NVALID &&
				   busy[id / 4] &&
				   used_len(0, seen) == 513 &&
				   status_of(id / 4) == VIRTIO_BLK_S_OK) {
				uint64_t lat = now_ms() - added_at[id / 4];

				if (lat > dr->max_lat_ms)
					dr->max_lat_ms = lat;
				busy[id / 4] = false;
				atomic_fetch_add(&dr->valid_done, 1);
			} else {
				dr->wrong++;
			}
		}
		/* Keep every ring entry in use (no more: §2.7.13.3). */
		while ((uint16_t)(drv_avail_idx[0] - seen) < QSZ) {
			for (k = 0; k < NVALID && busy[k]; k++)
				;
			if (k < NVALID) {
				req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
				busy[k] = true;
				added_at[k] = now_ms();
				continue;
			}
			put_le(RING_GPA(0) + AVAIL_OFF + 4 +
			       2ull * (drv_avail_idx[0] % QSZ), BAD_HEAD, 2);
			drv_avail_idx[0]++;
		}
		publish(0);
		/* Kick only when the device asks for kicks (§2.7.13.4). */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!(le16toh(__atomic_load_n((uint16_t *)host(RING_GPA(0) +
							       USED_OFF),
					      __ATOMIC_RELAXED)) &
		      VIRTQ_USED_F_NO_NOTIFY))
			kick(0);
	}
	return NULL;
}

/* ---- the watchdog ---- */

static atomic_bool reset_done;

static void *watchdog_run(void *arg)
{
	uint64_t end = now_ms() + 1000ull * WATCHDOG_S;

	(void)arg;
	while (!atomic_load(&reset_done)) {
		if (now_ms() > end) {
			fprintf(stderr,
				"FAIL: %s: reset did not return within %d s "
				"while the driver streamed malformed chains: "
				"the queue thread never leaves its pass\n",
				disk_engine_name(engine), WATCHDOG_S);
			unlink(h.path);
			_exit(1);
		}
		sleep_ms(10);
	}
	return NULL;
}

static void test_malformed_stream(void)
{
	struct driver dr = { .max_lat_ms = 0 };
	pthread_t wd;
	uint64_t t0, reset_ms;

	drv_start(default_features());
	h.vdev.tops = &pass_tops;
	pushes_at_check = 0;
	atomic_store(&max_between, 0);
	atomic_store(&reset_done, false);
	CHECK_EQ(pthread_create(&dr.t, NULL, driver_run, &dr), 0);
	/* On a busy host the driver may start late: wait for traffic. */
	t0 = now_ms();
	while (now_ms() - t0 < 10000 &&
	       (now_ms() - t0 < STREAM_MS ||
		atomic_load(&dr.bad_done) < STREAM_BAD ||
		atomic_load(&dr.valid_done) < NVALID))
		sleep_ms(5);
	CHECK_EQ(pthread_create(&wd, NULL, watchdog_run, NULL), 0);
	t0 = now_ms();
	set_status(0);
	reset_ms = now_ms() - t0;
	atomic_store(&reset_done, true);
	atomic_store(&dr.stop, true);
	pthread_join(dr.t, NULL);
	pthread_join(wd, NULL);
	printf("%s: reset in %llu ms; %llu malformed and %llu reads "
	       "completed, a read waited at most %llu ms; at most %llu "
	       "pushes between two notification checks (queue size %u)\n",
	       disk_engine_name(engine), (unsigned long long)reset_ms,
	       (unsigned long long)atomic_load(&dr.bad_done),
	       (unsigned long long)atomic_load(&dr.valid_done),
	       (unsigned long long)dr.max_lat_ms,
	       (unsigned long long)atomic_load(&max_between), QSZ);
	CHECK(reset_ms < RESET_MS);
	CHECK(atomic_load(&max_between) <= QSZ);
	CHECK(atomic_load(&dr.bad_done) >= STREAM_BAD); /* it did stream */
	CHECK(atomic_load(&dr.valid_done) >= NVALID);
	CHECK(dr.max_lat_ms < RESET_MS);
	CHECK_EQ(dr.wrong, 0);
	h.vdev.tops = &fake_tops;
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
	/* The device works after the reset. */
	drv_start(default_features());
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
}

static void run_engine(void)
{
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		return;
	}
	test_malformed_stream();
	dev_close();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* the watchdog may _exit() */
	return blk_test_main(run_engine);
}
