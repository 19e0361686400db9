// SPDX-License-Identifier: Apache-2.0
/*
 * Device-path A/B of adaptive polling, no KVM needed: the unit tests'
 * in-test driver (tests/unit/blk_driver.h) keeps QD reads of 4 KiB in
 * flight on an O_DIRECT image through the real queue thread and io_uring,
 * the way a guest driver does: it "halts" until the interrupt (an eventfd
 * the fake transport signals), refills every completed slot, and kicks only
 * when the device has not set VIRTQ_USED_F_NO_NOTIFY (virtio 1.2 §2.7.10).
 * Per run: requests, driver kicks, interrupts and device batches per
 * request, and the queue's polling counters, for poll-us 0, 32 and 200 at
 * QD 1 and 32. Not built by CMake (it is a measurement, not a test):
 *
 *	cc -O2 -std=gnu11 -Isrc -Isrc/vmm/x86_64 -Itests/unit \
 *		tests/bench/poll-ab.c build/libmicrovm_core.a \
 *		-luring -lseccomp -lfdt -lpthread -o build/poll-ab
 *	build/poll-ab [DIR]    # the image goes in DIR (default .), 64 MiB
 */
#include "blk_driver.h"

#include <poll.h>

#define AB_IMAGE_BYTES (64ull << 20)
#define AB_RUN_MS 2000

static const char *ab_dir = ".";
static unsigned int ab_qd;
static int irq_fd;
static uint64_t kicks_sent, done_reqs, irqs_seen;

static bool ab_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	(void)vdev;
	atomic_fetch_add(&notify_count[q->index], 1);
	evfd_signal(irq_fd);
	return true;
}

static const struct virtio_transport_ops ab_tops = {
	.name = "poll-ab",
	.notify = ab_notify,
	.notify_config = fake_notify_config,
};

/* Like dev_open(), on a bigger image with cache=none (O_DIRECT). */
static void ab_open(uint32_t poll_us)
{
	struct disk_opts o = { .path = h.path, .cache = DISK_CACHE_NONE,
			       .engine = engine };
	struct blk_config cfg = { .disk = &h.disk, .serial = SERIAL,
				  .num_queues = 1, .queue_size = QSZ,
				  .poll_us = poll_us };
	char err[256];
	int fd;

	snprintf(h.path, sizeof(h.path), "%s/poll-ab.XXXXXX", ab_dir);
	fd = mkstemp(h.path);
	if (fd < 0 || ftruncate(fd, AB_IMAGE_BYTES)) {
		perror(h.path);
		exit(1);
	}
	close(fd);
	if (disk_open(&h.disk, &o, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		unlink(h.path);
		exit(1);
	}
	if (blk_dev_create(&h.b, &h.vdev, &cfg, &gm, NAME))
		exit(1);
	h.vdev.tops = &ab_tops;
	h.nq = 1;
	h.vdev.queues[0].kick_fd = evfd_new();
}

static uint64_t ab_sector(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1;
	return (*seed >> 33) % (AB_IMAGE_BYTES / 4096) * 8;
}

/* The driver's kick: only when the device asked for them. */
static void ab_kick(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* avail idx before flags */
	if (!(get_le(RING_GPA(0) + USED_OFF, 2) & VIRTQ_USED_F_NO_NOTIFY)) {
		kick(0);
		kicks_sent++;
	}
}

/* Halt until the next interrupt; then take every used entry, refill. */
static void ab_drive(unsigned int ms)
{
	uint64_t end = now_ms() + ms, seed = 1;
	unsigned int irq0, irq, k;
	uint16_t last = 0, u;

	for (k = 0; k < ab_qd; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, ab_sector(&seed), 4096, true);
	publish(0);
	ab_kick();
	irq0 = atomic_load(&notify_count[0]);
	while (now_ms() < end) {
		struct pollfd p = { .fd = irq_fd, .events = POLLIN };

		irq = atomic_load(&notify_count[0]);
		if (irq == irq0) {
			poll(&p, 1, 100);
			evfd_drain(irq_fd);
			continue;
		}
		irqs_seen += irq - irq0;
		irq0 = irq;
		for (u = used_idx(0); last != u; last++, done_reqs++)
			req_add(0, used_id(0, last) / 4, VIRTIO_BLK_T_IN,
				ab_sector(&seed), 4096, true);
		publish(0);
		ab_kick();
	}
}

static void ab_run(uint32_t poll_us)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;

	kicks_sent = done_reqs = irqs_seen = 0;
	irq_fd = evfd_new();
	ab_open(poll_us);
	drv_start(default_features());
	ab_drive(AB_RUN_MS);
	quiesce(0);
	printf("qd %2u poll-us %-4u requests %8llu kicks/req %.3f "
	       "irqs/req %.3f batches/req %.3f poll hits %llu misses %llu "
	       "polled %llu ms\n", ab_qd, poll_us,
	       (unsigned long long)done_reqs,
	       done_reqs ? (double)kicks_sent / (double)done_reqs : 0.0,
	       done_reqs ? (double)irqs_seen / (double)done_reqs : 0.0,
	       done_reqs ? (double)atomic_load(&st->batches) /
			   (double)done_reqs : 0.0,
	       (unsigned long long)atomic_load(&st->poll_hits),
	       (unsigned long long)atomic_load(&st->poll_misses),
	       (unsigned long long)atomic_load(&st->poll_ns) / 1000000);
	set_status(0);
	dev_close();
	close(irq_fd);
}

static void run_engine(void)
{
	static const uint32_t polls[] = { 0, BLK_POLL_DEFAULT_US, 200 };
	static const unsigned int qds[] = { 1, SLOTS };
	unsigned int r, i, j;

	if (engine != DISK_ENGINE_URING)
		return; /* microvm runs io_uring */
	for (r = 0; r < 2; r++)
		for (i = 0; i < ARRAY_SIZE(qds); i++)
			for (j = 0; j < ARRAY_SIZE(polls); j++) {
				ab_qd = qds[i];
				ab_run(polls[j]);
			}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		ab_dir = argv[1];
	return blk_test_main(run_engine);
}
