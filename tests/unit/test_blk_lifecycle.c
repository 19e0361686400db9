// SPDX-License-Identifier: Apache-2.0
/*
 * Lifecycle tests of the virtio-blk device, once per disk engine: reset
 * with requests in flight (stop completes them first), pause and resume
 * with requests in flight (nothing replayed or lost), a broken ring
 * (NEEDS_RESET, thread survives), a read-only disk, several queues with
 * one named thread each, start failure, and the GET_ID serial; all of it
 * again with polling on.
 */
#include "blk_driver.h"

#include <dirent.h>
#include <poll.h>
#include <time.h>

/* Whether @fd has something to read now (an eventfd with a count). */
static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * Reset with requests in flight: stop returns only once everything the
 * thread took has been pushed; a request's status is written iff its head
 * is in the used ring; nothing moves afterwards; restart works.
 */
static void test_reset_inflight(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	unsigned int round, k, caught = 0;

	for (round = 0; round < 24; round++) {
		uint64_t req0 = atomic_load(&st->requests);
		uint64_t kicks0 = atomic_load(&st->kicks);
		bool pushed[QSZ] = { false };
		uint16_t before, u, i;
		uint64_t end;

		set_status(0);
		drv_start(default_features());
		for (k = 0; k < SLOTS; k++)
			req_add(0, k, k & 1 ? VIRTIO_BLK_T_IN :
				VIRTIO_BLK_T_OUT, 32 * k, DATA_STRIDE, k & 1);
		publish(0);
		kick(0);
		/*
		 * Once the thread counted the kick it is in the round that
		 * pops every chain published before it: then all of them
		 * must be completed by the time the reset returns.
		 */
		end = now_ms() + 10000;
		if (round % 3)
			while (atomic_load(&st->kicks) == kicks0 &&
			       now_ms() < end)
				;
		if (round % 3 == 2)
			sleep_ms(1);
		before = used_idx(0);
		set_status(0);
		u = used_idx(0);
		CHECK(u <= SLOTS);
		if (round % 3)
			CHECK_EQ(u, SLOTS);
		caught += u > before;
		CHECK(used_is_permutation(0, 0, u));
		CHECK_EQ(atomic_load(&st->requests) - req0, u);
		for (i = 0; i < u; i++)
			pushed[used_id(0, i)] = true;
		for (k = 0; k < SLOTS; k++)
			CHECK_EQ(status_of(k) != 0xff, pushed[head_of(k)]);
		sleep_ms(5);
		CHECK_EQ(used_idx(0), u);
	}
	printf("%s: %u of 24 resets completed requests in flight\n",
	       disk_engine_name(engine), caught);
	drv_start(default_features());
	fill_pattern(host(data_gpa(0)), 512, 9);
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_OUT, 3, 512, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
	CHECK(file_range_is(3 * 512, host(data_gpa(0)), 512));
}

/*
 * Pause with requests in flight, no reset: once virtio_dev_pause()
 * returns nothing moves, status and queue state stay; requests published
 * while paused (no kick: the driver kicked before) are served on resume;
 * each request completes exactly once and its data is on disk.
 */
static void test_pause_resume(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	unsigned int round, k, half = SLOTS / 2, moved = 0;

	for (round = 0; round < 24; round++) {
		uint64_t req0 = atomic_load(&st->requests);
		uint16_t from, u;
		uint8_t status;

		set_status(0);
		drv_start(default_features());
		status = virtio_get_status(&h.vdev);
		from = used_idx(0);
		for (k = 0; k < half; k++) {
			fill_pattern(host(data_gpa(k)), 4096, round * 64 + k);
			req_add(0, k, VIRTIO_BLK_T_OUT, 8 * k, 4096, false);
		}
		publish(0);
		kick(0);
		if (round % 3 == 1)
			sleep_ms(1);
		virtio_dev_pause(&h.vdev);
		u = used_idx(0);
		moved += u != from;
		for (k = half; k < SLOTS; k++) {
			fill_pattern(host(data_gpa(k)), 4096, round * 64 + k);
			req_add(0, k, VIRTIO_BLK_T_OUT, 8 * k, 4096, false);
		}
		publish(0);
		sleep_ms(round % 4 ? 2 : 20);
		CHECK_EQ(used_idx(0), u); /* paused: nothing served */
		CHECK_EQ(virtio_get_status(&h.vdev), status);
		CHECK_EQ(virtio_dev_resume(&h.vdev), 0);
		CHECK(wait_used(0, (uint16_t)(from + SLOTS)));
		sleep_ms(2);
		CHECK_EQ(used_idx(0), (uint16_t)(from + SLOTS));
		CHECK(used_is_permutation(0, from, SLOTS));
		CHECK_EQ(atomic_load(&st->requests) - req0, SLOTS);
		for (k = 0; k < SLOTS; k++) {
			CHECK_EQ(status_of(k), VIRTIO_BLK_S_OK);
			CHECK(file_range_is(8 * 512 * k, host(data_gpa(k)),
					    4096));
		}
		/* Paused twice and resumed: still serves. */
		virtio_dev_pause(&h.vdev);
		virtio_dev_pause(&h.vdev);
		CHECK_EQ(virtio_dev_resume(&h.vdev), 0);
		CHECK_EQ(do_req(0, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	}
	printf("%s: pause: %u of 24 pauses came after completions\n",
	       disk_engine_name(engine), moved);
	/* A reset forgets a pause. */
	virtio_dev_pause(&h.vdev);
	set_status(0);
	CHECK(!h.vdev.paused);
	drv_start(default_features());
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
}

/* avail idx jumping more than the queue size: NEEDS_RESET (§2.7.13.3). */
static void test_broken_ring(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	uint64_t broken0 = atomic_load(&h.vdev.broken_count);
	unsigned int cfg0 = atomic_load(&config_count);
	uint64_t end, kicks;

	set_status(0);
	drv_start(default_features());
	drv_avail_idx[0] = QSZ + 5;
	publish(0);
	kick(0);
	end = now_ms() + 10000;
	/*
	 * The device sets NEEDS_RESET, then raises the configuration
	 * interrupt: wait for both (under qemu-user the second came after
	 * the test had looked).
	 */
	while ((!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET) ||
		atomic_load(&config_count) == cfg0) &&
	       now_ms() < end)
		sleep_ms(1);
	CHECK(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK_EQ(atomic_load(&h.vdev.broken_count) - broken0, 1);
	CHECK_EQ(atomic_load(&config_count) - cfg0, 1);
	CHECK_EQ(used_idx(0), 0);
	/*
	 * The thread is alive and still drains kicks. The first kick may be
	 * counted only now (the round that broke the device may have found
	 * the ring by polling): so wait for the eventfd to be empty and the
	 * count to have moved, not for an exact count.
	 */
	kicks = atomic_load(&st->kicks);
	kick(0);
	end = now_ms() + 10000;
	while ((atomic_load(&st->kicks) == kicks ||
		fd_readable(h.vdev.queues[0].kick_fd)) && now_ms() < end)
		sleep_ms(1);
	CHECK(atomic_load(&st->kicks) > kicks);
	CHECK(!fd_readable(h.vdev.queues[0].kick_fd));
	CHECK_EQ(atomic_load(&h.vdev.broken_count) - broken0, 1);
	set_status(0);
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
	drv_start(default_features());
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
}

/* Read-only disk: writes fail with IOERR and leave the file alone. */
static void test_readonly(void)
{
	uint8_t pattern[1024];
	int fd;

	if (dev_open(true, 1, SERIAL)) {
		CHECK(0);
		return;
	}
	/* The image gets content behind the device's back, before I/O. */
	fill_pattern(pattern, sizeof(pattern), 3);
	fd = open(h.path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, pattern, sizeof(pattern), 0) == 1024);
	close(fd);
	test_config();
	drv_start(default_features());
	CHECK(h.vdev.driver_features & F(VIRTIO_BLK_F_RO));
	memset(host(data_gpa(0)), 0x11, 1024);
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_OUT, 0, 1024, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_IOERR);
	CHECK(file_range_is(0, pattern, sizeof(pattern)));
	dwz_add(1, VIRTIO_BLK_T_WRITE_ZEROES, 0, 2, 0);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(1), VIRTIO_BLK_S_UNSUPP);
	CHECK(file_range_is(0, pattern, sizeof(pattern)));
	CHECK_EQ(do_req(2, VIRTIO_BLK_T_IN, 0, 1024, true), 1025);
	CHECK_EQ(status_of(2), VIRTIO_BLK_S_OK);
	CHECK(!memcmp(host(data_gpa(2)), pattern, sizeof(pattern)));
	CHECK_EQ(do_req(3, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	CHECK_EQ(status_of(3), VIRTIO_BLK_S_OK);
	dev_close();
}

/* Does a thread of this process carry the name @name? */
static bool thread_named(const char *name)
{
	char path[300], comm[32];
	struct dirent *de;
	bool found = false;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;

	while (dir && !found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			found = !strcmp(comm, name);
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

/*
 * Wait up to 2 s for a thread named @name to be there (@want) or gone:
 * the queue thread names itself as it starts, and a joined thread's
 * /proc/self/task entry can outlive pthread_join() for a moment (the
 * kernel wakes the joiner before it reaps the task).
 */
static bool thread_named_wait(const char *name, bool want)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 200; i++) {
		if (thread_named(name) == want)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool thread_named_soon(const char *name)
{
	return thread_named_wait(name, true);
}

static bool thread_gone_soon(const char *name)
{
	return thread_named_wait(name, false);
}

/* Two queues, one thread each, named for top -H; only enabled ones run. */
static void test_multiqueue(void)
{
	unsigned int k;
	int kick_fd;

	if (dev_open(false, 2, SERIAL)) {
		CHECK(0);
		return;
	}
	test_config();
	drv_start_mask(default_features(), 1);
	CHECK(thread_named_soon(NAME "-q0"));
	CHECK(!thread_named(NAME "-q1"));
	set_status(0);
	CHECK(thread_gone_soon(NAME "-q0"));

	drv_start_mask(default_features(), 3);
	CHECK(thread_named_soon(NAME "-q0"));
	CHECK(thread_named_soon(NAME "-q1"));
	for (k = 0; k < 4; k++) {
		fill_pattern(host(data_gpa(k)), 512, k);
		req_add(0, k, VIRTIO_BLK_T_OUT, k, 512, false);
		req_add(1, k + 4, VIRTIO_BLK_T_IN, k, 512, true);
	}
	publish(0);
	kick(0);
	CHECK(wait_used(0, 4));
	publish(1);
	kick(1);
	CHECK(wait_used(1, 4));
	for (k = 0; k < 4; k++) {
		CHECK_EQ(status_of(k), VIRTIO_BLK_S_OK);
		CHECK_EQ(status_of(k + 4), VIRTIO_BLK_S_OK);
		CHECK(!memcmp(host(data_gpa(k + 4)), host(data_gpa(k)), 512));
	}
	CHECK_EQ(atomic_load(&h.vdev.queues[1].stats.requests), 4);

	/* A queue that cannot start (no kick fd): NEEDS_RESET, no thread
	 * left behind, and a later start with the fd back works. */
	set_status(0);
	kick_fd = h.vdev.queues[1].kick_fd;
	h.vdev.queues[1].kick_fd = -1;
	drv_start_try(default_features(), 3);
	CHECK(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK(thread_gone_soon(NAME "-q0"));
	set_status(0);
	h.vdev.queues[1].kick_fd = kick_fd;
	drv_start_mask(default_features(), 3);
	CHECK(thread_named_soon(NAME "-q1"));
	dev_close();
	CHECK(thread_gone_soon(NAME "-q0"));
	CHECK(thread_gone_soon(NAME "-q1"));
}

/* Serial: given, derived (stable per image), refused when bad. */
static void test_serial(void)
{
	struct blk_config cfg = {
		.disk = &h.disk, .num_queues = 1, .queue_size = QSZ,
	};
	struct virtio_dev v2;
	struct blk_dev *b2;
	char s[VIRTIO_BLK_ID_BYTES + 1];
	size_t i;

	if (dev_open(false, 1, NULL)) {
		CHECK(0);
		return;
	}
	snprintf(s, sizeof(s), "%s", blk_dev_serial(h.b));
	CHECK_EQ(strlen(s), VIRTIO_BLK_ID_BYTES);
	for (i = 0; s[i]; i++)
		CHECK(s[i] > 0x20 && s[i] < 0x7f);
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), 0);
	CHECK(!strcmp(blk_dev_serial(b2), s));
	blk_dev_destroy(b2);

	cfg.serial = "123456789012345678901";
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), -EINVAL);
	cfg.serial = "tab\there";
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), -EINVAL);
	cfg.serial = "12345678901234567890";
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), 0);
	CHECK(!strcmp(blk_dev_serial(b2), cfg.serial));
	blk_dev_destroy(b2);
	cfg.serial = NULL;
	cfg.queue_size = 96;
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), -EINVAL);
	cfg.queue_size = QSZ;
	cfg.num_queues = 0;
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), -EINVAL);
	cfg.num_queues = VIRTIO_MAX_QUEUES + 1;
	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vdu"), -EINVAL);
	dev_close();

	/* Another image, another serial. */
	if (dev_open(false, 1, NULL)) {
		CHECK(0);
		return;
	}
	CHECK(strcmp(blk_dev_serial(h.b), s) != 0);
	dev_close();
}

/* The state virtio_dev_save() writes for @vdev, as a checked file. */
static uint8_t *snap_of(struct virtio_dev *vdev, size_t *len)
{
	struct snap_writer w;
	uint8_t *buf = NULL;
	char err[256] = "";

	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_DEVICE);
	CHECK_EQ(virtio_dev_save(vdev, &w, err, sizeof(err)), 0);
	snap_section_end(&w);
	CHECK_EQ(snap_writer_finish(&w, SNAP_ARCH_X86_64, &buf, len), 0);
	if (err[0])
		printf("save: %s\n", err);
	return buf;
}

/* The one section of @buf into @vdev. Return: virtio_dev_load()'s. */
static int load_into(struct virtio_dev *vdev, const uint8_t *buf, size_t len,
		     size_t cut, char *err, size_t errlen)
{
	struct snap_reader r;
	struct snap_file f;
	uint32_t tag;
	size_t cur = 0;

	CHECK_EQ(snap_file_parse(buf, len, SNAP_ARCH_X86_64, &f, err, errlen),
		 0);
	CHECK_EQ(snap_next_section(&f, &cur, &tag, &r), 1);
	r.len -= cut < r.len ? cut : r.len;
	return virtio_dev_load(vdev, &r, err, errlen);
}

/*
 * A snapshot of a paused device with requests in flight, loaded into a
 * second device on the same image and RAM (as a restore builds it): the
 * second serves what the first left, from the saved indices, each
 * request once; the loads a restore must refuse (fewer queues, a
 * truncated state, a device already driven) change nothing.
 */
static void test_snapshot(void)
{
	struct blk_config cfg = {
		.disk = &h.disk, .num_queues = 1, .queue_size = QSZ,
	};
	unsigned int k, half = SLOTS / 2;
	struct virtio_dev v2, v3;
	struct blk_dev *b2, *b3;
	uint16_t from, u;
	char err[256];
	uint8_t *buf;
	size_t len;

	set_status(0);
	drv_start(default_features());
	from = used_idx(0);
	for (k = 0; k < half; k++) {
		fill_pattern(host(data_gpa(k)), 4096, 700 + k);
		req_add(0, k, VIRTIO_BLK_T_OUT, 16 * k, 4096, false);
	}
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(from + half)));
	for (k = half; k < SLOTS; k++) {
		fill_pattern(host(data_gpa(k)), 4096, 700 + k);
		req_add(0, k, VIRTIO_BLK_T_OUT, 16 * k, 4096, false);
	}
	virtio_dev_pause(&h.vdev);
	publish(0); /* while paused: the kick went to the old device */
	u = used_idx(0);
	buf = snap_of(&h.vdev, &len);
	if (!buf)
		return;

	/* Refused: another queue count; a truncated state; a device the
	 * driver already set up. Each leaves the device reset. */
	cfg.num_queues = 2;
	CHECK_EQ(blk_dev_create(&b3, &v3, &cfg, &gm, "vdt"), 0);
	v3.tops = &fake_tops;
	CHECK_EQ(load_into(&v3, buf, len, 0, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "with 1 queues here; this one is type 2 with 2"));
	CHECK_EQ(virtio_get_status(&v3), 0);
	blk_dev_destroy(b3);
	cfg.num_queues = 1;
	CHECK_EQ(blk_dev_create(&b3, &v3, &cfg, &gm, "vdt"), 0);
	v3.tops = &fake_tops;
	CHECK_EQ(load_into(&v3, buf, len, 3, err, sizeof(err)), -EINVAL);
	CHECK_EQ(virtio_get_status(&v3), 0);
	CHECK(!v3.paused);
	pthread_mutex_lock(&v3.lock);
	virtio_set_status_locked(&v3, VIRTIO_STATUS_ACKNOWLEDGE);
	pthread_mutex_unlock(&v3.lock);
	CHECK_EQ(load_into(&v3, buf, len, 0, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "reset state"));
	blk_dev_destroy(b3);

	CHECK_EQ(blk_dev_create(&b2, &v2, &cfg, &gm, "vds"), 0);
	v2.tops = &fake_tops;
	v2.queues[0].kick_fd = evfd_new();
	CHECK_EQ(load_into(&v2, buf, len, 0, err, sizeof(err)), 0);
	CHECK(v2.paused);
	CHECK_EQ(virtio_get_status(&v2), virtio_get_status(&h.vdev));
	CHECK_EQ(v2.driver_features, h.vdev.driver_features);
	CHECK_EQ(used_idx(0), u); /* loading serves nothing */
	CHECK_EQ(virtio_dev_resume(&v2), 0);
	evfd_signal(v2.queues[0].kick_fd);
	CHECK(wait_used(0, (uint16_t)(from + SLOTS)));
	sleep_ms(5);
	CHECK_EQ(used_idx(0), (uint16_t)(from + SLOTS));
	CHECK(used_is_permutation(0, from, SLOTS));
	CHECK_EQ(atomic_load(&v2.queues[0].stats.requests), SLOTS - half);
	for (k = 0; k < SLOTS; k++) {
		CHECK_EQ(status_of(k), VIRTIO_BLK_S_OK);
		CHECK(file_range_is(16 * 512 * k, host(data_gpa(k)), 4096));
	}
	/* A paused device saves; a running one does not. */
	CHECK_EQ(load_into(&v2, buf, len, 0, err, sizeof(err)), -EINVAL);
	blk_dev_destroy(b2);
	close(v2.queues[0].kick_fd);
	free(buf);
	{
		struct snap_writer w;

		snap_writer_init(&w);
		snap_section_begin(&w, SNAP_TAG_DEVICE);
		set_status(0);
		drv_start(default_features());
		CHECK_EQ(virtio_dev_save(&h.vdev, &w, err, sizeof(err)),
			 -EBUSY);
		snap_writer_free(&w);
	}
	set_status(0);
	drv_start(default_features());
}

static void run_engine(void)
{
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		return;
	}
	drv_start(default_features());
	test_reset_inflight();
	test_pause_resume();
	test_snapshot();
	test_broken_ring();
	dev_close();
	test_readonly();
	test_multiqueue();
	test_serial();
}

int main(void)
{
	return blk_test_main_with(run_engine, true);
}
