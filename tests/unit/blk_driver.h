/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-test virtio driver and harness for the virtio-blk tests: a malloc'd
 * buffer is guest RAM, descriptors and avail entries are written into it,
 * kicks go through each queue's eventfd, a fake transport counts
 * interrupts, and the disk is a temporary file opened with `engine`.
 * blk_test_main() runs a program's tests once per disk engine.
 */
#ifndef MICROVM_TEST_BLK_DRIVER_H
#define MICROVM_TEST_BLK_DRIVER_H

#include "test.h"
#include "virtio/blk.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "util/evloop.h"
#include "uring_probe.h"

/* Guest memory map of the tests; a test may ask for more RAM. */
#define RAM_GPA 0x100000ull
#define RING_DRIVER_QUEUES 2
#ifndef RAM_SIZE
#define RAM_SIZE 0x400000ull
#endif
#define RING_GPA(qi) (RAM_GPA + 0x4000ull * (qi)) /* desc, avail, used */
#define AVAIL_OFF 0x1000ull
#define USED_OFF 0x2000ull
#define HDR_GPA 0x110000ull    /* 64 bytes per request slot */
#define STATUS_GPA 0x114000ull /* 16 bytes per request slot */
#define DATA_GPA 0x120000ull   /* DATA_STRIDE bytes per request slot */
#define DATA_STRIDE 0x4000ull
#define IND_GPA 0x330000ull    /* indirect tables, 64 bytes per slot */
#define IND_BIG_GPA 0x338000ull /* one indirect table of QSZ entries */
#define BIG_DATA_GPA 0x340000ull
#define BAD_GPA (RAM_GPA + RAM_SIZE + 0x1000ull) /* not RAM */

/* Ring size; a test may choose its own (power of two, 8 .. 256). */
#ifndef QSZ
#define QSZ 128
#endif
#define SLOTS (QSZ / 4) /* four descriptors per request */
#define DISK_BYTES (1ull << 20)
#define CAP (DISK_BYTES / 512)
#define NAME "vdt"
#define SERIAL "test-serial"
#define F(bit) (1ull << (bit))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "ring_driver.h"

static struct guest_mem gm;
static enum disk_engine engine;
static uint32_t dev_poll_us; /* blk_config.poll_us of dev_open() */
/* blk_config.irq_hold_us and irq_hold_max of dev_open(). */
static uint32_t dev_irq_hold_us, dev_irq_hold_max;

/* ---- the in-test driver ---- */

static inline uint64_t get_le(uint64_t gpa, unsigned int n)
{
	uint8_t *p = host(gpa);
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint16_t *avail_word(unsigned int qi, unsigned int i)
{
	return host(RING_GPA(qi) + AVAIL_OFF + 2ull * i);
}

static uint16_t drv_avail_idx[2];

struct dseg {
	uint64_t gpa;
	uint32_t len;
	bool w;
};

static inline void chain_add(unsigned int qi, uint16_t head,
			     const struct dseg *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t d = RING_GPA(qi) + 16ull * (head + i);
		uint16_t flags = (s[i].w ? VIRTQ_DESC_F_WRITE : 0) |
				 (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0);

		put_le(d, s[i].gpa, 8);
		put_le(d + 8, s[i].len, 4);
		put_le(d + 12, flags, 2);
		put_le(d + 14, head + i + 1u, 2);
	}
	put_le(RING_GPA(qi) + AVAIL_OFF + 4 + 2ull * (drv_avail_idx[qi] % QSZ),
	       head, 2);
	drv_avail_idx[qi]++;
}

/* Make the chains added so far visible (virtio 1.2 §2.7.13). */
static inline void publish(unsigned int qi)
{
	__atomic_store_n(avail_word(qi, 1), htole16(drv_avail_idx[qi]),
			 __ATOMIC_RELEASE);
}

static inline uint16_t used_idx(unsigned int qi)
{
	uint16_t *p = host(RING_GPA(qi) + USED_OFF + 2);

	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static inline uint32_t used_id(unsigned int qi, uint16_t i)
{
	return (uint32_t)get_le(RING_GPA(qi) + USED_OFF + 4 + 8ull * (i % QSZ),
				4);
}

static inline uint32_t used_len(unsigned int qi, uint16_t i)
{
	return (uint32_t)get_le(RING_GPA(qi) + USED_OFF + 8 + 8ull * (i % QSZ),
				4);
}

static inline void set_used_event(unsigned int qi, uint16_t v)
{
	__atomic_store_n(avail_word(qi, 2 + QSZ), htole16(v),
			 __ATOMIC_RELAXED);
}

static inline uint64_t hdr_gpa(unsigned int k)
{
	return HDR_GPA + 64ull * k;
}

static inline uint64_t status_gpa(unsigned int k)
{
	return STATUS_GPA + 16ull * k;
}

static inline uint64_t data_gpa(unsigned int k)
{
	return DATA_GPA + DATA_STRIDE * k;
}

static inline uint8_t status_of(unsigned int k)
{
	return *(uint8_t *)host(status_gpa(k));
}

static inline uint16_t head_of(unsigned int k)
{
	return (uint16_t)(4 * (k % SLOTS));
}

static inline void hdr_put(unsigned int k, uint32_t type, uint64_t sector)
{
	put_le(hdr_gpa(k), type, 4);
	put_le(hdr_gpa(k) + 4, 0, 4);
	put_le(hdr_gpa(k) + 8, sector, 8);
	*(uint8_t *)host(status_gpa(k)) = 0xff;
}

/*
 * The usual layout in slot @k: header | data in two descriptors | status.
 * @data_w: the data is device-writable (IN, GET_ID).
 */
static inline void req_add(unsigned int qi, unsigned int k, uint32_t type,
			   uint64_t sector, uint32_t len, bool data_w)
{
	struct dseg s[4];
	unsigned int n = 0;

	hdr_put(k, type, sector);
	s[n++] = (struct dseg){ hdr_gpa(k), 16, false };
	if (len > 512) {
		s[n++] = (struct dseg){ data_gpa(k), 512, data_w };
		s[n++] = (struct dseg){ data_gpa(k) + 512, len - 512, data_w };
	} else if (len) {
		s[n++] = (struct dseg){ data_gpa(k), len, data_w };
	}
	s[n++] = (struct dseg){ status_gpa(k), 1, true };
	chain_add(qi, head_of(k), s, n);
}

/* DISCARD or WRITE_ZEROES with its one segment after the header. */
static inline void dwz_add(unsigned int k, uint32_t type, uint64_t sector,
			   uint32_t num, uint32_t flags)
{
	struct dseg s[2] = {
		{ hdr_gpa(k), 32, false },
		{ status_gpa(k), 1, true },
	};

	hdr_put(k, type, 0);
	put_le(hdr_gpa(k) + 16, sector, 8);
	put_le(hdr_gpa(k) + 24, num, 4);
	put_le(hdr_gpa(k) + 28, flags, 4);
	chain_add(0, head_of(k), s, 2);
}

/* Wait until used->idx of queue @qi reaches @want; false after 10 s. */
static inline bool wait_used(unsigned int qi, uint16_t want)
{
	uint64_t end = now_ms() + 10000;

	while (used_idx(qi) != want) {
		if (now_ms() > end) {
			fprintf(stderr, "timeout: used idx %u, want %u\n",
				used_idx(qi), want);
			return false;
		}
		sleep_ms(1);
	}
	return true;
}

/* ---- the device under test ---- */

struct harness {
	char path[64];
	struct disk disk;
	struct virtio_dev vdev;
	struct blk_dev *b;
	unsigned int nq;
};

static struct harness h;
/* blk_config.defer_off of the next dev_open(). */
static bool dev_defer_off;

static inline void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed * 101 + 1);
}

static inline int dev_open(bool readonly, unsigned int nq, const char *serial)
{
	struct disk_opts o = {
		.path = h.path,
		.readonly = readonly,
		.cache = DISK_CACHE_WRITEBACK,
		.engine = engine,
	};
	struct blk_config cfg = {
		.disk = &h.disk,
		.serial = serial,
		.num_queues = nq,
		.queue_size = QSZ,
		.defer_off = dev_defer_off,
		.poll_us = dev_poll_us,
		.irq_hold_us = dev_irq_hold_us,
		.irq_hold_max = dev_irq_hold_max,
	};
	char err[256];
	unsigned int i;
	int fd, ret;

	/* $TMPDIR: the unit.*_shm runs put the image on tmpfs, where the
	 * uring engine makes transfers in the queue thread. */
	snprintf(h.path, sizeof(h.path), "%s/test_blk.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") :
							  "/tmp");
	fd = mkstemp(h.path);
	if (fd < 0 || ftruncate(fd, DISK_BYTES)) {
		perror("temp disk");
		exit(1);
	}
	close(fd);
	ret = disk_open(&h.disk, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		unlink(h.path);
		return ret;
	}
	ret = blk_dev_create(&h.b, &h.vdev, &cfg, &gm, NAME);
	CHECK_EQ(ret, 0);
	if (ret)
		exit(1);
	h.vdev.tops = &fake_tops;
	h.nq = nq;
	for (i = 0; i < nq; i++)
		h.vdev.queues[i].kick_fd = evfd_new();
	return 0;
}

static inline void dev_close(void)
{
	unsigned int i;

	blk_dev_destroy(h.b);
	for (i = 0; i < h.nq; i++)
		close(h.vdev.queues[i].kick_fd);
	disk_close(&h.disk);
	unlink(h.path);
}

static inline void set_status(uint8_t s)
{
	pthread_mutex_lock(&h.vdev.lock);
	virtio_set_status_locked(&h.vdev, s);
	pthread_mutex_unlock(&h.vdev.lock);
}

/*
 * Negotiate @features and set DRIVER_OK with the queues in @mask enabled
 * (§3.1.1); the device may still fail to start (NEEDS_RESET).
 */
static inline void drv_start_try(uint64_t features, unsigned int mask)
{
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	unsigned int qi;

	set_status(VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(s);
	pthread_mutex_lock(&h.vdev.lock);
	virtio_set_driver_features_locked(&h.vdev, 0, (uint32_t)features);
	virtio_set_driver_features_locked(&h.vdev, 1,
					  (uint32_t)(features >> 32));
	virtio_set_status_locked(&h.vdev, s | VIRTIO_STATUS_FEATURES_OK);
	CHECK(h.vdev.status & VIRTIO_STATUS_FEATURES_OK);
	for (qi = 0; qi < h.nq; qi++) {
		struct virtio_queue *q = &h.vdev.queues[qi];

		memset(host(RING_GPA(qi)), 0, 0x4000);
		drv_avail_idx[qi] = 0;
		if (!(mask & (1u << qi)))
			continue;
		q->size = QSZ;
		q->desc = RING_GPA(qi);
		q->avail = RING_GPA(qi) + AVAIL_OFF;
		q->used = RING_GPA(qi) + USED_OFF;
		q->enabled = true;
	}
	virtio_set_status_locked(&h.vdev, s | VIRTIO_STATUS_FEATURES_OK |
					  VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&h.vdev.lock);
	CHECK(virtio_get_status(&h.vdev) & VIRTIO_STATUS_DRIVER_OK);
}

static inline void drv_start_mask(uint64_t features, unsigned int mask)
{
	drv_start_try(features, mask);
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
}

static inline uint64_t default_features(void)
{
	return h.vdev.host_features & ~F(VIRTIO_F_EVENT_IDX);
}

static inline void drv_start(uint64_t features)
{
	drv_start_mask(features, 1);
}

static inline void kick(unsigned int qi)
{
	evfd_signal(h.vdev.queues[qi].kick_fd);
}

/* Publish what was added, kick, wait for @n more used entries. */
static inline bool go(unsigned int qi, uint16_t n)
{
	uint16_t idx = used_idx(qi);

	publish(qi);
	kick(qi);
	return wait_used(qi, (uint16_t)(idx + n));
}

/* One request in slot @k on queue 0, waited for; returns its used len. */
static inline uint32_t do_req(unsigned int k, uint32_t type,
			      uint64_t sector, uint32_t len, bool data_w)
{
	uint16_t idx = used_idx(0);

	req_add(0, k, type, sector, len, data_w);
	publish(0);
	kick(0);
	if (!wait_used(0, (uint16_t)(idx + 1)))
		return UINT32_MAX;
	CHECK_EQ(used_id(0, idx), head_of(k));
	return used_len(0, idx);
}

static inline bool file_range_is(uint64_t off, const uint8_t *want, size_t n)
{
	uint8_t *buf = malloc(n);
	int fd = open(h.path, O_RDONLY);
	bool same;

	same = fd >= 0 && pread(fd, buf, n, (off_t)off) == (ssize_t)n &&
	       !memcmp(buf, want, n);
	if (fd >= 0)
		close(fd);
	free(buf);
	return same;
}

/* Wait until the queue thread has finished signalling (nothing moves). */
static inline void quiesce(unsigned int qi)
{
	struct virtio_queue_stats *st = &h.vdev.queues[qi].stats;
	uint64_t a, b;

	do {
		a = atomic_load(&st->batches) + atomic_load(&st->signals) +
		    atomic_load(&notify_count[qi]);
		sleep_ms(30);
		b = atomic_load(&st->batches) + atomic_load(&st->signals) +
		    atomic_load(&notify_count[qi]);
	} while (a != b);
}

static inline uint64_t buf_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void cfg_read(uint64_t off, uint8_t *buf, unsigned int len)
{
	h.vdev.ops->config_access(&h.vdev, off, buf, len, false);
}

/* Configuration space and features (virtio 1.2 §5.2.3, §5.2.4). */
static inline void test_config(void)
{
	uint8_t c[BLK_CONFIG_BYTES];
	uint64_t f = h.vdev.host_features;

	CHECK_EQ(h.vdev.ops->device_id, VIRTIO_ID_BLOCK);
	cfg_read(0, c, sizeof(c));
	CHECK_EQ(buf_le(c + BLK_CFG_CAPACITY, 8), CAP);
	CHECK_EQ(buf_le(c + BLK_CFG_SEG_MAX, 4), QSZ - 2);
	CHECK_EQ(buf_le(c + BLK_CFG_SIZE_MAX, 4), BLK_SIZE_MAX);
	CHECK_EQ(buf_le(c + BLK_CFG_BLK_SIZE, 4), 512);
	CHECK_EQ(buf_le(c + BLK_CFG_NUM_QUEUES, 2), h.nq);
	CHECK_EQ(c[BLK_CFG_WRITEBACK], 0);
	if (h.disk.can_discard) {
		CHECK(f & F(VIRTIO_BLK_F_DISCARD));
		CHECK_EQ(buf_le(c + BLK_CFG_MAX_DISCARD_SEG, 4), 1);
		CHECK(buf_le(c + BLK_CFG_MAX_DISCARD_SECTORS, 4) > 0);
		CHECK(buf_le(c + BLK_CFG_DISCARD_ALIGNMENT, 4) > 0);
	} else {
		CHECK(!(f & F(VIRTIO_BLK_F_DISCARD)));
	}
	if (h.disk.can_write_zeroes) {
		CHECK(f & F(VIRTIO_BLK_F_WRITE_ZEROES));
		CHECK_EQ(buf_le(c + BLK_CFG_MAX_WZ_SEG, 4), 1);
		CHECK(buf_le(c + BLK_CFG_MAX_WZ_SECTORS, 4) > 0);
	}
	CHECK(f & F(VIRTIO_F_VERSION_1));
	CHECK(f & F(VIRTIO_F_EVENT_IDX));
	CHECK(f & F(VIRTIO_F_INDIRECT_DESC));
	CHECK(f & F(VIRTIO_BLK_F_FLUSH));
	CHECK(f & F(VIRTIO_BLK_F_SEG_MAX));
	CHECK(f & F(VIRTIO_BLK_F_BLK_SIZE));
	CHECK(!(f & F(VIRTIO_BLK_F_CONFIG_WCE)));
	CHECK_EQ(!!(f & F(VIRTIO_BLK_F_RO)), h.disk.readonly);
	CHECK_EQ(!!(f & F(VIRTIO_BLK_F_MQ)), h.nq > 1);
}

/* Are the used entries [from, from + n) each head of slots 0..n-1 once? */
static inline bool used_is_permutation(unsigned int qi, uint16_t from,
				       unsigned int n)
{
	bool seen[QSZ] = { false };
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t id = used_id(qi, (uint16_t)(from + i));

		if (id >= QSZ || id % 4 || seen[id])
			return false;
		seen[id] = true;
	}
	return true;
}

/* Write the descriptors @s as an indirect table at @table. */
static inline void table_put(uint64_t table, const struct dseg *s,
			     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t d = table + 16ull * i;
		uint16_t flags = (s[i].w ? VIRTQ_DESC_F_WRITE : 0) |
				 (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0);

		put_le(d, s[i].gpa, 8);
		put_le(d + 8, s[i].len, 4);
		put_le(d + 12, flags, 2);
		put_le(d + 14, i + 1u, 2);
	}
}

/*
 * Run @run_engine with the sync engine, then with io_uring if it works;
 * with @polled, each once more with polling on (the default poll_us).
 */
static inline int blk_test_main_with(void (*run_engine)(void), bool polled)
{
	unsigned int pass;

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram)) {
		fprintf(stderr, "guest memory setup failed\n");
		return 1;
	}
	memset(ram, 0, RAM_SIZE);
	for (pass = 0; pass < (polled ? 2u : 1u); pass++) {
		dev_poll_us = pass ? BLK_POLL_DEFAULT_US : 0;
		if (polled)
			printf("polling %s\n", pass ? "on" : "off");
		engine = DISK_ENGINE_SYNC;
		run_engine();
		engine = DISK_ENGINE_URING;
		if (uring_works())
			run_engine();
		else
			printf("note: io_uring unavailable here: uring run "
			       "skipped\n");
	}
	free(ram);
	return test_done();
}

static inline int blk_test_main(void (*run_engine)(void))
{
	return blk_test_main_with(run_engine, false);
}

/* UNDER_SANITIZER: built with ASan or TSan (gcc or clang), where timing
 * and memory-footprint claims of the plain build do not hold. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#endif
