// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-blk rate limit (blk_config.rl, blk_dev_set_rate_limit(),
 * blk_queue.c) once per disk engine: a queue kept full completes
 * requests at the limit's rate within 10% (operations, then bytes), a
 * request held back counts in the queue's throttled counter, a second
 * disk without a limit is not slowed while the first one is held back,
 * a reset while a request is held back is prompt and completes it,
 * lifting the limit at run time releases a held request at once, and a
 * pause while one is held back completes it and its resume replays
 * nothing. The waits are sleeps: the process uses under a quarter of a
 * CPU meanwhile.
 */
#include "blk_driver.h"

#include <string.h>

/* Second device of the tests: queue 0 on the ring memory of qi 1. */
#define QB 1u
#define KB 32u /* its request slots start here, after the first's */

static struct {
	char path[64];
	struct disk disk;
	struct virtio_dev vdev;
	struct blk_dev *b;
} hb;

static struct rl_config ops_limit(uint64_t size, uint64_t ms)
{
	struct rl_config c;

	memset(&c, 0, sizeof(c));
	c.ops.size = size;
	c.ops.refill_time_ms = ms;
	return c;
}

static struct virtio_queue_stats *qstats(void)
{
	return &h.vdev.queues[0].stats;
}

/* The first disk, queue 0 started, limited to @rl at run time. */
static void open_limited(const struct rl_config *rl)
{
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		exit(1);
	}
	CHECK_EQ(blk_dev_set_rate_limit(h.b, rl), 0);
	drv_start(default_features());
}

/* Add @n reads of @len bytes in slots @k0.. on ring @qi. */
static void add_reads(unsigned int qi, unsigned int k0, unsigned int n,
		      uint32_t len)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		req_add(qi, k0 + i, VIRTIO_BLK_T_IN, (k0 + i) * 8ull, len,
			true);
	publish(qi);
}

/*
 * Keep queue 0 busy with batches of SLOTS reads of @len bytes for at
 * least @ms; return the completions per second beyond the first
 * @bucket (the full bucket the limit starts with).
 */
static double measure_rate(unsigned int ms, uint32_t len, unsigned int bucket)
{
	uint64_t t0 = now_ms(), t;
	unsigned int done = 0;

	do {
		add_reads(0, 0, SLOTS, len);
		kick(0);
		if (!wait_used(0, (uint16_t)(done + SLOTS))) {
			CHECK(0);
			return 0;
		}
		done += SLOTS;
		t = now_ms();
	} while (t - t0 < ms);
	return (done - bucket) * 1000.0 / (double)(t - t0);
}

/* CPU time of the whole process (this test and the queue threads). */
static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void check_rate(double got, double want, const char *what)
{
	printf("%s: %s: %.1f/s, limit %.1f/s\n", disk_engine_name(engine),
	       what, got, want);
	CHECK(got >= want * 0.9 && got <= want * 1.1);
}

/*
 * 500 ops/s (250 per 500 ms), then 512 KiB/s (256 KiB per 500 ms): a
 * bucket of half a second, so that a test thread preempted for less than
 * that on a loaded host loses no tokens.
 */
static void test_rates(void)
{
	struct rl_config c = ops_limit(250, 500);

	uint64_t cpu, wall;

	open_limited(&c);
	cpu = cpu_ms();
	wall = now_ms();
	check_rate(measure_rate(1500, 512, 250), 500, "ops");
	cpu = cpu_ms() - cpu;
	wall = now_ms() - wall;
	/* Waiting for tokens is sleeping, not spinning (a sanitizer's
	 * instrumented copies cost more CPU per request). */
	printf("%s: %llu ms of CPU in %llu ms\n", disk_engine_name(engine),
	       (unsigned long long)cpu, (unsigned long long)wall);
#ifdef UNDER_SANITIZER
	CHECK(cpu * 2 < wall);
#else
	CHECK(cpu * 4 < wall);
#endif
	CHECK(atomic_load(&qstats()->throttled) > 0);
	CHECK_EQ(atomic_load(&qstats()->errors), 0);
	dev_close();

	memset(&c, 0, sizeof(c));
	c.bandwidth.size = 256 << 10;
	c.bandwidth.refill_time_ms = 500;
	open_limited(&c);
	/* 4 KiB reads: 64 in the first bucket, then 128 per second. */
	check_rate(measure_rate(1000, 4096, 64), 128, "4 KiB reads");
	CHECK(atomic_load(&qstats()->throttled) > 0);
	dev_close();
}

/* The second disk, no limit, its queue 0 on ring memory QB. */
static void open_second(void)
{
	struct disk_opts o = { .path = hb.path, .cache = DISK_CACHE_WRITEBACK,
			       .engine = engine };
	struct blk_config cfg = { .disk = &hb.disk, .num_queues = 1,
				  .queue_size = QSZ };
	struct virtio_queue *q = &hb.vdev.queues[0];
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	uint64_t f;
	char err[256];
	int fd;

	snprintf(hb.path, sizeof(hb.path), "/tmp/test_blk_rl.XXXXXX");
	fd = mkstemp(hb.path);
	CHECK(fd >= 0 && !ftruncate(fd, DISK_BYTES));
	close(fd);
	CHECK_EQ(disk_open(&hb.disk, &o, err, sizeof(err)), 0);
	CHECK_EQ(blk_dev_create(&hb.b, &hb.vdev, &cfg, &gm, "vdu"), 0);
	hb.vdev.tops = &fake_tops;
	q->kick_fd = evfd_new();
	f = hb.vdev.host_features & ~F(VIRTIO_F_EVENT_IDX);
	memset(host(RING_GPA(QB)), 0, 0x4000);
	drv_avail_idx[QB] = 0;
	pthread_mutex_lock(&hb.vdev.lock);
	virtio_set_status_locked(&hb.vdev, s);
	virtio_set_driver_features_locked(&hb.vdev, 0, (uint32_t)f);
	virtio_set_driver_features_locked(&hb.vdev, 1, (uint32_t)(f >> 32));
	virtio_set_status_locked(&hb.vdev, s | VIRTIO_STATUS_FEATURES_OK);
	q->size = QSZ;
	q->desc = RING_GPA(QB);
	q->avail = RING_GPA(QB) + AVAIL_OFF;
	q->used = RING_GPA(QB) + USED_OFF;
	q->enabled = true;
	virtio_set_status_locked(&hb.vdev, s | VIRTIO_STATUS_FEATURES_OK |
					   VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&hb.vdev.lock);
	CHECK(virtio_get_status(&hb.vdev) & VIRTIO_STATUS_DRIVER_OK);
}

static void close_second(void)
{
	blk_dev_destroy(hb.b);
	close(hb.vdev.queues[0].kick_fd);
	disk_close(&hb.disk);
	unlink(hb.path);
}

/*
 * The first disk at 1 op/s with its ring full: the second disk's 320
 * reads (5 minutes at that rate) take well under a second; then a reset
 * of the first, a request held back, is prompt and completes it.
 */
static void test_other_disk_and_reset(void)
{
	struct rl_config c = ops_limit(1, 1000);
	uint64_t t0, t_other, t_reset;
	uint16_t before, after;
	unsigned int i, written = 0;

	open_limited(&c);
	open_second();
	add_reads(0, 0, SLOTS, 512);
	kick(0);
	CHECK(wait_used(0, 1)); /* the bucket's one token */
	t0 = now_ms();
	for (i = 0; i < 10; i++) {
		add_reads(QB, KB, SLOTS, 512);
		evfd_signal(hb.vdev.queues[0].kick_fd);
		CHECK(wait_used(QB, (uint16_t)(SLOTS * (i + 1))));
	}
	t_other = now_ms() - t0;
	printf("%s: unlimited disk: 320 reads in %llu ms\n",
	       disk_engine_name(engine), (unsigned long long)t_other);
	CHECK(t_other < 1000);
	before = used_idx(0);
	CHECK(before < 3);
	CHECK_EQ(atomic_load(&qstats()->throttled), 1);
	t0 = now_ms();
	set_status(0);
	t_reset = now_ms() - t0;
	after = used_idx(0);
	printf("%s: reset while held back: %llu ms, used %u -> %u\n",
	       disk_engine_name(engine), (unsigned long long)t_reset, before,
	       after);
	CHECK(t_reset < 300);
	/* The request held back completed; nothing taken was lost. */
	CHECK(after >= before + 1);
	for (i = 0; i < SLOTS; i++)
		written += status_of(i) != 0xff;
	CHECK_EQ(written, after);
	for (i = 0; i < after; i++)
		CHECK_EQ(status_of(used_id(0, (uint16_t)i) / 4),
			 VIRTIO_BLK_S_OK);
	CHECK_EQ(atomic_load(&qstats()->requests), after);
	close_second();
	dev_close();
}

/* Lifting the limit at run time releases a held request at once. */
static void test_lift(void)
{
	struct rl_config c = ops_limit(1, 10000), none;
	uint64_t t0;

	memset(&none, 0, sizeof(none));
	open_limited(&c);
	add_reads(0, 0, 4, 512);
	kick(0);
	CHECK(wait_used(0, 1));
	sleep_ms(50);
	CHECK_EQ(used_idx(0), 1);
	t0 = now_ms();
	CHECK_EQ(blk_dev_set_rate_limit(h.b, &none), 0);
	CHECK(wait_used(0, 4));
	printf("%s: lifted: 3 held requests done in %llu ms\n",
	       disk_engine_name(engine), (unsigned long long)(now_ms() - t0));
	CHECK(now_ms() - t0 < 500);
	/* And set again: held back again. */
	CHECK_EQ(blk_dev_set_rate_limit(h.b, &c), 0);
	add_reads(0, 4, 2, 512);
	kick(0);
	CHECK(wait_used(0, 5));
	sleep_ms(50);
	CHECK_EQ(used_idx(0), 5);
	CHECK_EQ(atomic_load(&qstats()->throttled), 2);
	/* A bad value is refused and changes nothing. */
	c.ops.refill_time_ms = RL_REFILL_MS_MAX + 1;
	CHECK_EQ(blk_dev_set_rate_limit(h.b, &c), -EINVAL);
	dev_close();
}

/*
 * A pause while a request is held back is prompt and completes it; the
 * resume goes on from there: with the limit lifted the rest complete,
 * each request once, none replayed, none lost.
 */
static void test_pause_resume(void)
{
	struct rl_config c = ops_limit(1, 1000), none;
	uint16_t before, after;
	uint64_t t0;
	unsigned int i;

	memset(&none, 0, sizeof(none));
	open_limited(&c);
	add_reads(0, 0, 8, 512);
	kick(0);
	CHECK(wait_used(0, 1));
	sleep_ms(20);
	before = used_idx(0);
	t0 = now_ms();
	virtio_dev_pause(&h.vdev);
	t0 = now_ms() - t0;
	after = used_idx(0);
	printf("%s: pause while held back: %llu ms, used %u -> %u\n",
	       disk_engine_name(engine), (unsigned long long)t0, before,
	       after);
	CHECK(t0 < 300);
	CHECK(after >= before + 1);
	sleep_ms(50);
	CHECK_EQ(used_idx(0), after);
	CHECK_EQ(virtio_dev_resume(&h.vdev), 0);
	CHECK_EQ(blk_dev_set_rate_limit(h.b, &none), 0);
	CHECK(wait_used(0, 8));
	sleep_ms(50);
	CHECK_EQ(used_idx(0), 8);
	CHECK(used_is_permutation(0, 0, 8));
	for (i = 0; i < 8; i++)
		CHECK_EQ(status_of(i), VIRTIO_BLK_S_OK);
	dev_close();
}

static void run_engine(void)
{
	test_rates();
	test_other_disk_and_reset();
	test_lift();
	test_pause_resume();
}

int main(void)
{
	return blk_test_main(run_engine);
}
