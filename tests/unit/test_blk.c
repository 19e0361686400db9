// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end tests of the virtio-blk device (virtio 1.2 §5.2) through its
 * queue threads: a malloc'd buffer is guest RAM, a small in-test driver
 * writes descriptors and avail entries into it and kicks the queue's
 * eventfd, a fake transport counts interrupts, and the disk is a temporary
 * file. The whole suite runs once per disk engine (sync, then io_uring).
 */
#include "test.h"
#include "virtio/blk.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "util/evloop.h"

/* Guest memory map of the tests. */
#define RAM_GPA 0x100000ull
#define RAM_SIZE 0x400000ull
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

#define QSZ 128
#define SLOTS (QSZ / 4) /* four descriptors per request */
#define DISK_BYTES (1ull << 20)
#define CAP (DISK_BYTES / 512)
#define NAME "vdt"
#define SERIAL "test-serial"
#define F(bit) (1ull << (bit))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t *ram;
static struct guest_mem gm;
static enum disk_engine engine;

/* ---- fake transport ---- */

static atomic_uint notify_count[2];
static atomic_uint config_count;

static void fake_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	(void)vdev;
	atomic_fetch_add(&notify_count[q->index], 1);
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
	atomic_fetch_add(&config_count, 1);
}

static const struct virtio_transport_ops fake_tops = {
	.name = "fake",
	.notify = fake_notify,
	.notify_config = fake_notify_config,
};

/* ---- the in-test driver ---- */

static void *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static void put_le(uint64_t gpa, uint64_t v, unsigned int n)
{
	uint8_t *p = host(gpa);
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(uint64_t gpa, unsigned int n)
{
	uint8_t *p = host(gpa);
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint16_t *avail_word(unsigned int qi, unsigned int i)
{
	return host(RING_GPA(qi) + AVAIL_OFF + 2ull * i);
}

static uint16_t drv_avail_idx[2];

struct dseg {
	uint64_t gpa;
	uint32_t len;
	bool w;
};

static void chain_add(unsigned int qi, uint16_t head, const struct dseg *s,
		      unsigned int n)
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
static void publish(unsigned int qi)
{
	__atomic_store_n(avail_word(qi, 1), htole16(drv_avail_idx[qi]),
			 __ATOMIC_RELEASE);
}

static uint16_t used_idx(unsigned int qi)
{
	uint16_t *p = host(RING_GPA(qi) + USED_OFF + 2);

	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static uint32_t used_id(unsigned int qi, uint16_t i)
{
	return (uint32_t)get_le(RING_GPA(qi) + USED_OFF + 4 + 8ull * (i % QSZ),
				4);
}

static uint32_t used_len(unsigned int qi, uint16_t i)
{
	return (uint32_t)get_le(RING_GPA(qi) + USED_OFF + 8 + 8ull * (i % QSZ),
				4);
}

static void set_used_event(unsigned int qi, uint16_t v)
{
	__atomic_store_n(avail_word(qi, 2 + QSZ), htole16(v),
			 __ATOMIC_RELAXED);
}

static uint64_t hdr_gpa(unsigned int k)
{
	return HDR_GPA + 64ull * k;
}

static uint64_t status_gpa(unsigned int k)
{
	return STATUS_GPA + 16ull * k;
}

static uint64_t data_gpa(unsigned int k)
{
	return DATA_GPA + DATA_STRIDE * k;
}

static uint8_t status_of(unsigned int k)
{
	return *(uint8_t *)host(status_gpa(k));
}

static uint16_t head_of(unsigned int k)
{
	return (uint16_t)(4 * (k % SLOTS));
}

static void hdr_put(unsigned int k, uint32_t type, uint64_t sector)
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
static void req_add(unsigned int qi, unsigned int k, uint32_t type,
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
static void dwz_add(unsigned int k, uint32_t type, uint64_t sector,
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait until used->idx of queue @qi reaches @want; false after 10 s. */
static bool wait_used(unsigned int qi, uint16_t want)
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

static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed * 101 + 1);
}

static int dev_open(bool readonly, unsigned int nq, const char *serial)
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
	};
	char err[256];
	unsigned int i;
	int fd, ret;

	snprintf(h.path, sizeof(h.path), "/tmp/test_blk.XXXXXX");
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

static void dev_close(void)
{
	unsigned int i;

	blk_dev_destroy(h.b);
	for (i = 0; i < h.nq; i++)
		close(h.vdev.queues[i].kick_fd);
	disk_close(&h.disk);
	unlink(h.path);
}

static void set_status(uint8_t s)
{
	pthread_mutex_lock(&h.vdev.lock);
	virtio_set_status_locked(&h.vdev, s);
	pthread_mutex_unlock(&h.vdev.lock);
}

/* Negotiate @features and start the queues in @mask (§3.1.1). */
static void drv_start_mask(uint64_t features, unsigned int mask)
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
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
}

static uint64_t default_features(void)
{
	return h.vdev.host_features & ~F(VIRTIO_F_EVENT_IDX);
}

static void drv_start(uint64_t features)
{
	drv_start_mask(features, 1);
}

static void kick(unsigned int qi)
{
	evfd_signal(h.vdev.queues[qi].kick_fd);
}

/* Publish what was added, kick, wait for @n more used entries. */
static bool go(unsigned int qi, uint16_t n)
{
	uint16_t idx = used_idx(qi);

	publish(qi);
	kick(qi);
	return wait_used(qi, (uint16_t)(idx + n));
}

/* One request in slot @k on queue 0, waited for; returns its used len. */
static uint32_t do_req(unsigned int k, uint32_t type, uint64_t sector,
		       uint32_t len, bool data_w)
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

static bool file_range_is(uint64_t off, const uint8_t *want, size_t n)
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
static void quiesce(unsigned int qi)
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

/* ---- tests ---- */

static uint64_t buf_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void cfg_read(uint64_t off, uint8_t *buf, unsigned int len)
{
	h.vdev.ops->config_access(&h.vdev, off, buf, len, false);
}

/* Configuration space and features (virtio 1.2 §5.2.3, §5.2.4). */
static void test_config(void)
{
	uint8_t c[BLK_CONFIG_BYTES], b[8], one;
	uint64_t f = h.vdev.host_features;
	unsigned int i;

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

	/* Byte-granular: every byte alone matches the full read. */
	for (i = 0; i < sizeof(c); i++) {
		cfg_read(i, &one, 1);
		CHECK_EQ(one, c[i]);
	}
	cfg_read(1, b, 3);
	CHECK(!memcmp(b, c + 1, 3));
	/* Reads running past the end see zeros. */
	memset(b, 0xaa, sizeof(b));
	cfg_read(BLK_CONFIG_BYTES - 2, b, 4);
	CHECK(b[0] == c[BLK_CONFIG_BYTES - 2] &&
	      b[1] == c[BLK_CONFIG_BYTES - 1] && !b[2] && !b[3]);
	memset(b, 0xaa, sizeof(b));
	cfg_read(UINT64_MAX - 1, b, 4);
	CHECK(!b[0] && !b[1] && !b[2] && !b[3]);
	/* Writes are ignored (no CONFIG_WCE offered). */
	memset(b, 0xff, sizeof(b));
	h.vdev.ops->config_access(&h.vdev, 0, b, 8, true);
	h.vdev.ops->config_access(&h.vdev, BLK_CFG_WRITEBACK, b, 1, true);
	cfg_read(0, b, 8);
	CHECK(!memcmp(b, c, 8));
	cfg_read(BLK_CFG_WRITEBACK, b, 1);
	CHECK_EQ(b[0], 0);
}

/* OUT then IN of a pattern; IN with status sharing the last data buffer. */
static void test_write_read(void)
{
	uint8_t pattern[4096];
	struct dseg s[3];
	uint16_t idx;

	fill_pattern(pattern, sizeof(pattern), 1);
	memcpy(host(data_gpa(0)), pattern, sizeof(pattern));
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_OUT, 8, 4096, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
	CHECK(file_range_is(8 * 512, pattern, sizeof(pattern)));

	/* hdr split 8+8 | 1000 W | 3096 W + status in the same buffer */
	memset(host(data_gpa(1)), 0, 8192);
	hdr_put(1, VIRTIO_BLK_T_IN, 8);
	s[0] = (struct dseg){ hdr_gpa(1), 8, false };
	s[1] = (struct dseg){ data_gpa(1), 1000, true };
	s[2] = (struct dseg){ data_gpa(1) + 1000, 3096 + 1, true };
	idx = used_idx(0);
	/* The header in two pieces: 8 bytes here, 8 in descriptor 3. */
	chain_add(0, head_of(1), (struct dseg[]){
		{ hdr_gpa(1), 8, false }, { hdr_gpa(1) + 8, 8, false },
		s[1], s[2] }, 4);
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + 1)));
	CHECK_EQ(used_len(0, idx), 4096 + 1);
	CHECK_EQ(*(uint8_t *)host(data_gpa(1) + 4096), VIRTIO_BLK_S_OK);
	CHECK(!memcmp(host(data_gpa(1)), pattern, sizeof(pattern)));
}

static void test_flush_get_id_unsupp(void)
{
	uint8_t id[VIRTIO_BLK_ID_BYTES] = SERIAL;

	CHECK_EQ(do_req(2, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	CHECK_EQ(status_of(2), VIRTIO_BLK_S_OK);

	memset(host(data_gpa(3)), 0x77, 64);
	CHECK_EQ(do_req(3, VIRTIO_BLK_T_GET_ID, 0, 20, true), 21);
	CHECK_EQ(status_of(3), VIRTIO_BLK_S_OK);
	CHECK(!memcmp(host(data_gpa(3)), id, sizeof(id)));
	CHECK_EQ(*(uint8_t *)host(data_gpa(3) + 20), 0x77);

	CHECK_EQ(do_req(4, 77, 0, 0, false), 1);
	CHECK_EQ(status_of(4), VIRTIO_BLK_S_UNSUPP);
	CHECK_EQ(do_req(4, VIRTIO_BLK_T_GET_LIFETIME, 0, 8, true), 1);
	CHECK_EQ(status_of(4), VIRTIO_BLK_S_UNSUPP);
}

/* Out of range and malformed requests: IOERR or len 0, nothing written. */
static void test_bad_requests(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	uint64_t errors = atomic_load(&st->errors);
	uint8_t zero[1024] = { 0 };
	uint16_t idx;

	fill_pattern(host(data_gpa(5)), 1024, 5);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, CAP - 1, 1024, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK(file_range_is(DISK_BYTES - 1024, zero, sizeof(zero)));
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, UINT64_MAX, 512, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_IN, CAP, 512, true), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, 0, 100, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK(file_range_is(0, zero, sizeof(zero)));

	/* No writable byte: nothing to report through, used len 0. */
	idx = used_idx(0);
	hdr_put(6, VIRTIO_BLK_T_FLUSH, 0);
	chain_add(0, head_of(6),
		  (struct dseg[]){ { hdr_gpa(6), 16, false } }, 1);
	/* A buffer outside guest RAM: virtq fails the chain (-EBADMSG). */
	hdr_put(7, VIRTIO_BLK_T_IN, 0);
	chain_add(0, head_of(7), (struct dseg[]){
		{ hdr_gpa(7), 16, false }, { BAD_GPA, 512, true },
		{ status_gpa(7), 1, true } }, 3);
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + 2)));
	CHECK_EQ(used_id(0, idx), head_of(6));
	CHECK_EQ(used_len(0, idx), 0);
	CHECK_EQ(used_id(0, idx + 1), head_of(7));
	CHECK_EQ(used_len(0, idx + 1), 0);
	CHECK_EQ(status_of(7), 0xff);
	CHECK_EQ(atomic_load(&st->errors) - errors, 6);
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
}

/* WRITE_ZEROES and DISCARD, then IN reads zeros (§5.2.6.2). */
static void test_discard_write_zeroes(void)
{
	uint8_t zero[4096] = { 0 };

	if (!h.disk.can_write_zeroes || !h.disk.can_discard) {
		printf("note: %s: no discard/write-zeroes on /tmp, "
		       "skipping that part\n", disk_engine_name(engine));
		return;
	}
	fill_pattern(host(data_gpa(8)), 4096, 8);
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 64, 4096, false), 1);
	CHECK_EQ(status_of(8), VIRTIO_BLK_S_OK);
	dwz_add(9, VIRTIO_BLK_T_WRITE_ZEROES, 64, 8, VIRTIO_BLK_WZ_F_UNMAP);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_OK);
	memset(host(data_gpa(10)), 0x55, 4096);
	CHECK_EQ(do_req(10, VIRTIO_BLK_T_IN, 64, 4096, true), 4097);
	CHECK(!memcmp(host(data_gpa(10)), zero, sizeof(zero)));

	/* This backend punches a hole, which reads back as zeros. */
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 128, 4096, false), 1);
	dwz_add(9, VIRTIO_BLK_T_DISCARD, 128, 8, 0);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_OK);
	CHECK(file_range_is(128 * 512, zero, sizeof(zero)));
	/* UNMAP on DISCARD is UNSUPP (§5.2.6.2), nothing discarded. */
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 128, 4096, false), 1);
	dwz_add(9, VIRTIO_BLK_T_DISCARD, 128, 8, VIRTIO_BLK_WZ_F_UNMAP);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_UNSUPP);
	CHECK(file_range_is(128 * 512, host(data_gpa(8)), 4096));
}

/* Are the used entries [from, from + n) each head of slots 0..n-1 once? */
static bool used_is_permutation(unsigned int qi, uint16_t from,
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

/* N requests, one kick: each completed once, fewer interrupts than N. */
static void test_batch(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	uint64_t req0, sig0, bat0, kick0;
	unsigned int k, irq0, irqs;
	uint16_t idx;

	quiesce(0);
	req0 = atomic_load(&st->requests);
	sig0 = atomic_load(&st->signals);
	bat0 = atomic_load(&st->batches);
	kick0 = atomic_load(&st->kicks);
	irq0 = atomic_load(&notify_count[0]);
	idx = used_idx(0);
	for (k = 0; k < SLOTS; k++) {
		fill_pattern(host(data_gpa(k)), 1024, k);
		req_add(0, k, k & 1 ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT,
			256 + 2 * k, 1024, k & 1);
	}
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + SLOTS)));
	quiesce(0);
	CHECK(used_is_permutation(0, idx, SLOTS));
	for (k = 0; k < SLOTS; k++)
		CHECK_EQ(status_of(k), VIRTIO_BLK_S_OK);
	irqs = atomic_load(&notify_count[0]) - irq0;
	CHECK(irqs >= 1 && irqs < SLOTS);
	CHECK_EQ(atomic_load(&st->signals) - sig0, irqs);
	CHECK_EQ(atomic_load(&st->requests) - req0, SLOTS);
	CHECK(atomic_load(&st->batches) - bat0 >= irqs);
	CHECK_EQ(atomic_load(&st->kicks) - kick0, 1);
	/* Nothing more arrives later. */
	sleep_ms(20);
	CHECK_EQ(used_idx(0), (uint16_t)(idx + SLOTS));
}

/* Write the descriptors @s as an indirect table at @table. */
static void table_put(uint64_t table, const struct dseg *s, unsigned int n)
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
 * A ring full of indirect chains: as many requests in flight as there
 * are slots, so the thread runs out of slots and must resume on
 * completions alone (virtio 1.2 §2.7.5.3).
 */
static void test_full_ring_indirect(void)
{
	bool seen[QSZ] = { false };
	uint16_t idx = used_idx(0), i;
	unsigned int k;
	bool ok = true;

	for (k = 0; k < QSZ; k++) {
		struct dseg s[3] = {
			{ hdr_gpa(k), 16, false },
			{ DATA_GPA + 512ull * k, 512, true },
			{ status_gpa(k), 1, true },
		};

		hdr_put(k, VIRTIO_BLK_T_IN, k);
		table_put(IND_GPA + 64ull * k, s, 3);
		put_le(RING_GPA(0) + 16ull * k, IND_GPA + 64ull * k, 8);
		put_le(RING_GPA(0) + 16ull * k + 8, 48, 4);
		put_le(RING_GPA(0) + 16ull * k + 12, VIRTQ_DESC_F_INDIRECT, 2);
		put_le(RING_GPA(0) + AVAIL_OFF + 4 +
		       2ull * (drv_avail_idx[0]++ % QSZ), k, 2);
	}
	CHECK(go(0, QSZ));
	for (i = 0; i < QSZ; i++) {
		uint32_t id = used_id(0, (uint16_t)(idx + i));

		ok = ok && id < QSZ && !seen[id] &&
		     used_len(0, (uint16_t)(idx + i)) == 513;
		if (id < QSZ)
			seen[id] = true;
	}
	CHECK(ok);
	for (k = 0; k < QSZ; k++)
		ok = ok && status_of(k) == VIRTIO_BLK_S_OK;
	CHECK(ok);
}

/* seg_max data segments in one request (config seg_max = QSZ - 2). */
static void test_seg_max(void)
{
	struct dseg s[QSZ];
	uint8_t *file = malloc((QSZ - 2) * 512);
	unsigned int i;
	int fd;

	fill_pattern(file, (QSZ - 2) * 512, 7);
	fd = open(h.path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, file, (QSZ - 2) * 512, 512 * 512) ==
			 (QSZ - 2) * 512);
	close(fd);
	hdr_put(0, VIRTIO_BLK_T_IN, 512);
	s[0] = (struct dseg){ hdr_gpa(0), 16, false };
	for (i = 1; i < QSZ - 1; i++)
		s[i] = (struct dseg){ BIG_DATA_GPA + 512ull * (i - 1), 512,
				      true };
	s[QSZ - 1] = (struct dseg){ status_gpa(0), 1, true };
	table_put(IND_BIG_GPA, s, QSZ);
	memset(host(BIG_DATA_GPA), 0, (QSZ - 2) * 512);
	put_le(RING_GPA(0), IND_BIG_GPA, 8);
	put_le(RING_GPA(0) + 8, 16 * QSZ, 4);
	put_le(RING_GPA(0) + 12, VIRTQ_DESC_F_INDIRECT, 2);
	put_le(RING_GPA(0) + AVAIL_OFF + 4 + 2ull * (drv_avail_idx[0]++ % QSZ),
	       0, 2);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
	CHECK_EQ(used_len(0, (uint16_t)(used_idx(0) - 1)), (QSZ - 2) * 512 + 1);
	CHECK(!memcmp(host(BIG_DATA_GPA), file, (QSZ - 2) * 512));
	free(file);
}

/* With EVENT_IDX and used_event far ahead: no interrupt at all (§2.7.7.2). */
static void test_event_idx(void)
{
	unsigned int k, irq0;

	set_status(0);
	drv_start(h.vdev.host_features);
	set_used_event(0, 0x8000);
	irq0 = atomic_load(&notify_count[0]);
	for (k = 0; k < SLOTS; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
	publish(0);
	kick(0);
	CHECK(wait_used(0, SLOTS));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 0);
	CHECK(used_is_permutation(0, 0, SLOTS));

	/* used_event = the next entry: the next push must interrupt. */
	set_used_event(0, SLOTS);
	req_add(0, 0, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	publish(0);
	kick(0);
	CHECK(wait_used(0, SLOTS + 1));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 1);
	set_status(0);
	drv_start(default_features());
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
		if (round % 3)
			while (atomic_load(&st->kicks) == kicks0)
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
	while (!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET) &&
	       now_ms() < end)
		sleep_ms(1);
	CHECK(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK_EQ(atomic_load(&h.vdev.broken_count) - broken0, 1);
	CHECK_EQ(atomic_load(&config_count) - cfg0, 1);
	CHECK_EQ(used_idx(0), 0);
	/* The thread is alive and still drains kicks. */
	kicks = atomic_load(&st->kicks);
	kick(0);
	end = now_ms() + 10000;
	while (atomic_load(&st->kicks) == kicks && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(atomic_load(&st->kicks), kicks + 1);
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

/* Two queues, one thread each, named for top -H; only enabled ones run. */
static void test_multiqueue(void)
{
	unsigned int k;

	if (dev_open(false, 2, SERIAL)) {
		CHECK(0);
		return;
	}
	test_config();
	drv_start_mask(default_features(), 1);
	CHECK(thread_named(NAME "-q0"));
	CHECK(!thread_named(NAME "-q1"));
	set_status(0);
	CHECK(!thread_named(NAME "-q0"));

	drv_start_mask(default_features(), 3);
	CHECK(thread_named(NAME "-q0"));
	CHECK(thread_named(NAME "-q1"));
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
	dev_close();
	CHECK(!thread_named(NAME "-q0"));
	CHECK(!thread_named(NAME "-q1"));
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

static void run_engine(void)
{
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		return;
	}
	test_config();
	drv_start(default_features());
	test_write_read();
	test_flush_get_id_unsupp();
	test_bad_requests();
	test_discard_write_zeroes();
	test_batch();
	test_full_ring_indirect();
	test_seg_max();
	test_event_idx();
	test_reset_inflight();
	test_broken_ring();
	dev_close();
	test_readonly();
	test_multiqueue();
}

/* Can this kernel (or sandbox) run the io_uring engine? */
static bool uring_works(void)
{
	struct disk_opts o = {
		.path = "/proc/self/exe",
		.readonly = true,
		.cache = DISK_CACHE_WRITEBACK,
		.engine = DISK_ENGINE_URING,
	};
	struct disk_queue *q;
	struct disk d;
	char err[256];
	bool ok;

	if (disk_open(&d, &o, err, sizeof(err)))
		return false;
	ok = !disk_queue_open(&d, 4, &q);
	if (ok)
		disk_queue_close(q);
	disk_close(&d);
	return ok;
}

int main(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram)) {
		fprintf(stderr, "guest memory setup failed\n");
		return 1;
	}
	memset(ram, 0, RAM_SIZE);

	engine = DISK_ENGINE_SYNC;
	test_serial();
	run_engine();
	engine = DISK_ENGINE_URING;
	if (uring_works())
		run_engine();
	else
		printf("note: io_uring unavailable here: uring run skipped\n");
	free(ram);
	return test_done();
}
