// SPDX-License-Identifier: Apache-2.0
/*
 * Host memory under a hostile driver (issue 7, defect 1): a full ring of
 * misaligned requests on an O_DIRECT image, eight of them 254 MiB whose
 * data descriptors all alias the same 1 MiB of guest RAM (the largest
 * request seg_max x size_max allow with a 256-entry ring). The process's
 * peak RSS, measured from a baseline taken once the queue runs, must stay
 * within the per-queue bounce bound (DISK_BOUNCE_BYTES) plus a fixed
 * allowance; every request completes once, with the right data on disk
 * and in guest memory. Once per disk engine.
 */
#define QSZ 256
#define RAM_SIZE 0x1200000ull
#include "blk_driver.h"

#include <pthread.h>

#define MIB (1ull << 20)
#define ALIGN 4096u               /* forced O_DIRECT block: RMW on 512 */
#define BIG_SEGS (QSZ - 2)        /* config seg_max */
#define SEG BLK_SIZE_MAX          /* config size_max */
#define BIG_LEN ((uint64_t)BIG_SEGS * SEG - 1024)
#define NBIG 8                    /* requests of BIG_LEN: 4 OUT, 4 IN */
#define SMALL_LEN 5120u           /* other requests: 5 KiB, misaligned */
#define SHIFTS 7                  /* write segments start at 7 places */

/* Image layout: the write region, the read region, small writes. */
#define W0 (4 * MIB)
#define R0 (W0 + 256 * MIB)
#define S0 (R0 + 256 * MIB)
#define S_STRIDE 16384ull
#define IMG_BYTES (S0 + QSZ * S_STRIDE)

/* Guest RAM beyond the harness's 4 MiB. */
#define TBL_GPA(k) (0x500000ull + 4096ull * (k)) /* one table each */
#define WBUF_GPA 0x600000ull                     /* big OUT data */
#define WBUF_LEN (SEG + SHIFTS * 512ull + 1)
#define RBUF_GPA(i) (0x800000ull + 0x110000ull * (i)) /* big IN data */
#define SBUF_GPA(k) (0x1000000ull + 0x2000ull * (k))  /* small data */

/*
 * What bouncing may add to the process beyond guest RAM, and an allowance
 * for the rest: the I/O thread's stack and malloc arena, and the iovec
 * arrays of the 256 request slots (256 x 256 x 16 bytes, touched as
 * requests arrive).
 */
#define RSS_ALLOWANCE (8 * MIB)
#define RSS_BOUND (DISK_BOUNCE_BYTES + RSS_ALLOWANCE)
/* The sampler stops the test well before the host would feel it. */
#define RSS_ABORT (512 * MIB)

static uint8_t rpat(uint64_t x) /* read region: period SEG */
{
	uint64_t i = (x - R0) % SEG;

	return (uint8_t)((i * 2654435761u) >> 11);
}

static uint8_t wpat(uint64_t i) /* the big OUT buffer */
{
	return (uint8_t)((i * 0x9E3779B1u + 77) >> 9);
}

static uint8_t spat(unsigned int k, uint64_t i)
{
	return (uint8_t)(i * 31 + k * 7 + 3);
}

static bool is_big(unsigned int k)
{
	return k % (QSZ / NBIG) == 0;
}

static bool is_write(unsigned int k)
{
	return is_big(k) ? (k / (QSZ / NBIG)) % 2 == 0 : k % 2 == 0;
}

static uint64_t big_seg_len(unsigned int j)
{
	return j + 1 < BIG_SEGS ? SEG : SEG - 1024;
}

/* Big IN number @i reads from here: misaligned, inside the read region. */
static uint64_t big_read_off(unsigned int i)
{
	return R0 + 512ull * (2 * i + 1);
}

static uint64_t small_off(unsigned int k)
{
	return is_write(k) ? S0 + S_STRIDE * k + 512 :
			     R0 + 4096ull * k + 512ull * (k % 8);
}

/* Request @k: an indirect table in head @k, header, data, status. */
static void big_add(unsigned int k)
{
	static struct dseg s[QSZ];
	unsigned int j, n = 0, i = k / (QSZ / NBIG);
	bool w = is_write(k);
	uint64_t off = w ? W0 + 512 : big_read_off(i / 2);

	hdr_put(k, w ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN, off / 512);
	s[n++] = (struct dseg){ hdr_gpa(k), 16, false };
	for (j = 0; j < BIG_SEGS; j++) {
		uint64_t gpa = w ? WBUF_GPA + 1 + 512ull * (j % SHIFTS) :
				   RBUF_GPA(i / 2) + 1;

		s[n++] = (struct dseg){ gpa, (uint32_t)big_seg_len(j), !w };
	}
	s[n++] = (struct dseg){ status_gpa(k), 1, true };
	table_put(TBL_GPA(k), s, n);
}

static void small_add(unsigned int k)
{
	struct dseg s[3] = {
		{ hdr_gpa(k), 16, false },
		{ SBUF_GPA(k) + 1, SMALL_LEN, !is_write(k) },
		{ status_gpa(k), 1, true },
	};
	uint64_t i;

	hdr_put(k, is_write(k) ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN,
		small_off(k) / 512);
	for (i = 0; i < SMALL_LEN; i++)
		*(uint8_t *)host(SBUF_GPA(k) + 1 + i) =
			is_write(k) ? spat(k, i) : 0xee;
	table_put(TBL_GPA(k), s, 3);
}

static unsigned int table_len(unsigned int k)
{
	return is_big(k) ? QSZ : 3;
}

/* ---- memory accounting ---- */

static uint64_t status_kib(const char *field)
{
	char line[256];
	unsigned long long v = 0;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			sscanf(line + n + 1, "%llu", &v);
	fclose(f);
	return v;
}

static uint64_t rss_now(void)
{
	unsigned long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Reset VmHWM to the current RSS (proc(5), clear_refs "5"). */
static bool hwm_reset(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, "5", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

struct sampler {
	pthread_t t;
	atomic_bool stop;
	uint64_t base;
	uint64_t peak;
};

/* Samples RSS every millisecond; ends the test before the host suffers. */
static void *sampler_run(void *arg)
{
	struct sampler *s = arg;
	uint64_t r;

	while (!atomic_load(&s->stop)) {
		r = rss_now();
		if (r > s->peak)
			s->peak = r;
		if (r > s->base + RSS_ABORT) {
			fprintf(stderr,
				"FAIL: %s: RSS grew by %llu MiB (bound %llu MiB): "
				"bounce memory follows the guest's request size\n",
				disk_engine_name(engine),
				(unsigned long long)((r - s->base) / MIB),
				(unsigned long long)(RSS_BOUND / MIB));
			unlink(h.path);
			_exit(1);
		}
		sleep_ms(1);
	}
	return NULL;
}

/* ---- the image ---- */

static int image_create(void)
{
	uint8_t *b = malloc(SEG);
	uint64_t off;
	int fd, ret = 0;

	snprintf(h.path, sizeof(h.path), "/tmp/test_blk_bounce.XXXXXX");
	fd = mkstemp(h.path);
	if (fd < 0 || !b || ftruncate(fd, (off_t)IMG_BYTES)) {
		perror("temp disk");
		exit(1);
	}
	for (off = R0; off < S0 && !ret; off += SEG) {
		uint64_t i;

		for (i = 0; i < SEG; i++)
			b[i] = rpat(off + i);
		if (pwrite(fd, b, SEG, (off_t)off) != (ssize_t)SEG)
			ret = -EIO;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	free(b);
	return ret;
}

static int dev_open_direct(void)
{
	struct disk_opts o = {
		.path = h.path,
		.cache = DISK_CACHE_NONE,
		.engine = engine,
	};
	struct blk_config cfg = {
		.disk = &h.disk,
		.num_queues = 1,
		.queue_size = QSZ,
	};
	char err[256];
	int ret;

	if (image_create()) {
		perror("image");
		unlink(h.path);
		exit(1);
	}
	ret = disk_open(&h.disk, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		unlink(h.path);
		exit(1);
	}
	if (!h.disk.direct) {
		printf("skip: O_DIRECT refused on /tmp\n");
		disk_close(&h.disk);
		unlink(h.path);
		exit(77);
	}
	/* A 4 KiB block makes 512-byte offsets read-modify-write. */
	if (h.disk.align < ALIGN)
		h.disk.align = h.disk.mem_align = ALIGN;
	ret = blk_dev_create(&h.b, &h.vdev, &cfg, &gm, NAME);
	CHECK_EQ(ret, 0);
	if (ret)
		exit(1);
	h.vdev.tops = &fake_tops;
	h.nq = 1;
	h.vdev.queues[0].kick_fd = evfd_new();
	return 0;
}

/* ---- checks ---- */

static bool file_check(int fd, uint64_t off, uint64_t len,
		       uint8_t (*want)(uint64_t arg, uint64_t i),
		       uint64_t arg, uint8_t *b)
{
	uint64_t done = 0, n, i;

	while (done < len) {
		n = len - done < SEG ? len - done : SEG;
		if (pread(fd, b, n, (off_t)(off + done)) != (ssize_t)n)
			return false;
		for (i = 0; i < n; i++)
			if (b[i] != want(arg, done + i)) {
				fprintf(stderr, "image byte %llu: %#x, want %#x\n",
					(unsigned long long)(off + done + i),
					b[i], want(arg, done + i));
				return false;
			}
		done += n;
	}
	return true;
}

static uint8_t want_zero(uint64_t arg, uint64_t i)
{
	(void)arg;
	(void)i;
	return 0;
}

/* Byte @i of the big OUT request: segment i / SEG at its shift. */
static uint8_t want_big(uint64_t arg, uint64_t i)
{
	(void)arg;
	return wpat(1 + 512ull * ((i / SEG) % SHIFTS) + i % SEG);
}

static uint8_t want_small(uint64_t k, uint64_t i)
{
	return spat((unsigned int)k, i);
}

static void check_image(void)
{
	uint8_t *b = malloc(SEG);
	int fd = open(h.path, O_RDONLY | O_CLOEXEC);
	unsigned int k;
	bool ok = true;

	CHECK(fd >= 0 && b);
	if (fd < 0 || !b)
		goto out;
	CHECK(file_check(fd, W0 - ALIGN, ALIGN + 512, want_zero, 0, b));
	CHECK(file_check(fd, W0 + 512, BIG_LEN, want_big, 0, b));
	CHECK(file_check(fd, W0 + 512 + BIG_LEN, 2 * ALIGN, want_zero, 0, b));
	for (k = 0; k < QSZ; k++) {
		if (is_big(k) || !is_write(k))
			continue;
		ok = ok && file_check(fd, S0 + S_STRIDE * k, 512, want_zero,
				      0, b) &&
		     file_check(fd, small_off(k), SMALL_LEN, want_small, k,
				b) &&
		     file_check(fd, small_off(k) + SMALL_LEN,
				S_STRIDE - 512 - SMALL_LEN, want_zero, 0, b);
	}
	CHECK(ok);
out:
	if (fd >= 0)
		close(fd);
	free(b);
}

/* Guest memory of the IN requests holds what the image holds. */
static void check_reads(void)
{
	unsigned int i, k;
	uint64_t j;
	bool ok = true;

	for (i = 0; i < NBIG / 2; i++) {
		const uint8_t *p = host(RBUF_GPA(i) + 1);

		/* Every segment landed on the same bytes: any one wins. */
		for (j = 0; j < SEG && ok; j++)
			ok = p[j] == rpat(big_read_off(i) + j);
		if (!ok)
			fprintf(stderr, "big IN %u: byte %llu wrong\n", i,
				(unsigned long long)(j - 1));
	}
	CHECK(ok);
	for (k = 0; k < QSZ && ok; k++) {
		const uint8_t *p = host(SBUF_GPA(k) + 1);

		if (is_big(k) || is_write(k))
			continue;
		for (j = 0; j < SMALL_LEN && ok; j++)
			ok = p[j] == rpat(small_off(k) + j);
		if (!ok)
			fprintf(stderr, "small IN %u: byte %llu wrong\n", k,
				(unsigned long long)(j - 1));
	}
	CHECK(ok);
}

/* Each head once in the used ring, with its status and length. */
static void check_used(void)
{
	bool seen[QSZ] = { false };
	unsigned int i, k, dup = 0, bad = 0;

	for (i = 0; i < QSZ; i++) {
		uint32_t id = used_id(0, (uint16_t)i), want;

		if (id >= QSZ || seen[id]) {
			dup++;
			continue;
		}
		seen[id] = true;
		want = is_write(id) ? 1 :
		       (uint32_t)(is_big(id) ? BIG_LEN : SMALL_LEN) + 1;
		if (used_len(0, (uint16_t)i) != want ||
		    status_of(id) != VIRTIO_BLK_S_OK)
			bad++;
	}
	for (k = 0; k < QSZ; k++)
		dup += !seen[k];
	CHECK_EQ(dup, 0);
	CHECK_EQ(bad, 0);
}

static bool wait_all(uint16_t want, unsigned int secs)
{
	uint64_t end = now_ms() + 1000ull * secs;

	while (used_idx(0) != want) {
		if (now_ms() > end) {
			fprintf(stderr, "timeout: used idx %u, want %u\n",
				used_idx(0), want);
			return false;
		}
		sleep_ms(2);
	}
	return true;
}

/* The whole ring: one indirect chain per head, all published at once. */
static void ring_fill(void)
{
	unsigned int k;

	for (k = 0; k < WBUF_LEN; k++)
		*(uint8_t *)host(WBUF_GPA + k) = wpat(k);
	for (k = 0; k < NBIG / 2; k++)
		memset(host(RBUF_GPA(k)), 0xee, SEG + 1);
	for (k = 0; k < QSZ; k++) {
		if (is_big(k))
			big_add(k);
		else
			small_add(k);
		put_le(RING_GPA(0) + 16ull * k, TBL_GPA(k), 8);
		put_le(RING_GPA(0) + 16ull * k + 8, 16ull * table_len(k), 4);
		put_le(RING_GPA(0) + 16ull * k + 12, VIRTQ_DESC_F_INDIRECT, 2);
		put_le(RING_GPA(0) + AVAIL_OFF + 4 + 2ull * k, k, 2);
	}
	drv_avail_idx[0] = QSZ;
}

/* Kick the full ring, wait for it; Return: peak RSS growth in bytes. */
static uint64_t ring_run(void)
{
	struct sampler s = { .peak = 0 };
	uint64_t hwm0, grow;
	bool hwm_ok;

	/* Baseline: guest RAM touched, the queue thread running. */
	hwm_ok = hwm_reset();
	hwm0 = status_kib("VmHWM") * 1024;
	s.base = s.peak = rss_now();
	CHECK_EQ(pthread_create(&s.t, NULL, sampler_run, &s), 0);
	publish(0);
	kick(0);
	CHECK(wait_all(QSZ, 100));
	atomic_store(&s.stop, true);
	pthread_join(s.t, NULL);
	grow = hwm_ok ? status_kib("VmHWM") * 1024 - hwm0 : 0;
	return s.peak - s.base > grow ? s.peak - s.base : grow;
}

static void run_engine(void)
{
	struct disk_stats *st = &h.disk.stats;
	uint64_t t0, grow, bounced0, waits0;

	dev_open_direct();
	drv_start(default_features());
	ring_fill();
	bounced0 = atomic_load(&st->bounced);
	waits0 = atomic_load(&st->bounce_waits);
	t0 = now_ms();
	grow = ring_run();
	printf("%s: ring of %u (%u x %llu bytes aliased), %llu ms, "
	       "peak RSS +%llu KiB (bound %llu KiB), %llu bounced, "
	       "%llu deferred for want of a bounce buffer\n",
	       disk_engine_name(engine), QSZ, NBIG,
	       (unsigned long long)BIG_LEN,
	       (unsigned long long)(now_ms() - t0),
	       (unsigned long long)(grow / 1024),
	       (unsigned long long)(RSS_BOUND / 1024),
	       (unsigned long long)(atomic_load(&st->bounced) - bounced0),
	       (unsigned long long)(atomic_load(&st->bounce_waits) - waits0));
	CHECK(grow <= RSS_BOUND);
	sleep_ms(20);
	CHECK_EQ(used_idx(0), QSZ);
	CHECK_EQ(atomic_load(&st->bounced) - bounced0, QSZ);
	check_used();
	check_reads();
	set_status(0);
	check_image();
	dev_close();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* the sampler may _exit() */
#ifdef UNDER_SANITIZER
	/* Shadow memory follows what is touched, and 2 GiB of copies per
	 * engine take minutes: neither bound nor time would mean much. */
	printf("skip: RSS bound not measurable under a sanitizer\n");
	return 77;
#endif
	return blk_test_main(run_engine);
}
