// SPDX-License-Identifier: Apache-2.0
/*
 * Disk backend tests: one conformance suite (a table of tests) run against
 * every engine on a temporary image file, and on a loop block device where
 * the process may create one; then engine-specific checks: short transfers
 * and I/O errors from /proc/self/mem, and an io_uring short read that
 * resumes. Opening and locking are in test_disk_open.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loop_dev.h"
#include "test.h"
#include "util/guarded_copy.h"
#include "virtio/disk.h"

#define IMG_SIZE (1024 * 1024)
#define DEPTH 64
#define BLK 4096

struct image {
	char file[PATH_MAX];  /* backing regular file */
	char path[PATH_MAX];  /* what disk_open() gets: file or loop device */
	int loop_fd;          /* held open while a loop device is used */
	uint64_t size;
};

struct fix {
	enum disk_engine engine;
	struct image *im;
	struct disk d;
	struct disk_queue *q;
};

/* Where images go: $TMPDIR, or /dev/shm for the memory-backed runs. */
static const char *img_dir;

static const char *tmp_dir(void)
{
	const char *t = img_dir ? img_dir : getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

static uint8_t pat(uint64_t off, unsigned int seed)
{
	return (uint8_t)((off * 0x9E3779B97F4A7C15ull +
			  seed * 0xBF58476D1CE4E5B9ull) >> 56);
}

static void fill(uint8_t *b, uint64_t off, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(off + i, seed);
}

static bool matches(const uint8_t *b, uint64_t off, size_t n,
		    unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != pat(off + i, seed))
			return false;
	return true;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void *xalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, BLK, n ? n : 1))
		abort();
	return p;
}

static int image_create(struct image *im, uint64_t size, bool loop)
{
	uint8_t *buf = xalloc(size);
	int fd, ret = 0;

	snprintf(im->file, sizeof(im->file), "%s/microvm-disk-XXXXXX",
		 tmp_dir());
	fd = mkstemp(im->file);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	fill(buf, 0, size, 1);
	if (pwrite(fd, buf, size, 0) != (ssize_t)size)
		ret = -EIO;
	close(fd);
	free(buf);
	im->size = size;
	im->loop_fd = -1;
	snprintf(im->path, sizeof(im->path), "%s", im->file);
	if (!ret && loop)
		ret = loop_dev_attach(im->file, im->path, sizeof(im->path),
				      &im->loop_fd);
	if (ret)
		unlink(im->file);
	return ret;
}

static void image_destroy(struct image *im)
{
	if (im->loop_fd >= 0)
		close(im->loop_fd); /* autoclear detaches the device */
	unlink(im->file);
}

/* Read what the image holds, bypassing the backend. */
static bool image_read(const struct image *im, uint64_t off, void *buf,
		       size_t n)
{
	int fd = open(im->path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && pread(fd, buf, n, off) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok;
}

static bool image_matches(const struct image *im, uint64_t off, size_t n,
			  unsigned int seed)
{
	uint8_t *b = xalloc(n);
	bool ok = image_read(im, off, b, n) && matches(b, off, n, seed);

	free(b);
	return ok;
}

static bool image_zero(const struct image *im, uint64_t off, size_t n)
{
	uint8_t *b = xalloc(n);
	bool ok = image_read(im, off, b, n) && all_zero(b, n);

	free(b);
	return ok;
}

static bool fix_open(struct fix *f, bool readonly, enum disk_cache cache)
{
	struct disk_opts o = { .path = f->im->path, .readonly = readonly,
			       .cache = cache, .engine = f->engine };
	char err[256] = "";
	int ret;

	f->q = NULL;
	ret = disk_open(&f->d, &o, err, sizeof(err));
	CHECK_EQ(ret, 0);
	if (ret) {
		fprintf(stderr, "disk_open: %s\n", err);
		return false;
	}
	ret = disk_queue_open(&f->d, DEPTH, &f->q);
	CHECK_EQ(ret, 0);
	if (ret) {
		disk_close(&f->d);
		return false;
	}
	return true;
}

static void fix_close(struct fix *f)
{
	CHECK_EQ(disk_queue_inflight(f->q), 0);
	disk_queue_close(f->q);
	disk_close(&f->d);
}

/* Completions seen, per request index carried in ->opaque. */
struct done_log {
	unsigned int calls;
	unsigned int per[DEPTH];
	unsigned int bad;
};

static void log_done(void *arg, struct disk_req *r)
{
	struct done_log *l = arg;
	uintptr_t i = (uintptr_t)r->opaque;

	l->calls++;
	if (i < DEPTH)
		l->per[i]++;
	else
		l->bad++;
}

static bool wait_done(struct disk_queue *q, struct done_log *l,
		      unsigned int want)
{
	struct pollfd p = { .fd = disk_queue_fd(q), .events = POLLIN };

	while (l->calls < want) {
		if (poll(&p, 1, 10000) != 1)
			return false;
		disk_queue_reap(q, log_done, l);
	}
	return true;
}

/* Submit one request, flush, wait for its callback: its result. */
static ssize_t run_req(struct disk_queue *q, struct disk_req *r)
{
	struct done_log l = { 0 };

	r->opaque = NULL;
	if (disk_queue_submit(q, r))
		return -9999;
	if (disk_queue_flush(q) < 0)
		return -9998;
	if (!wait_done(q, &l, 1))
		return -9997;
	CHECK_EQ(l.calls, 1);
	CHECK_EQ(disk_queue_inflight(q), 0);
	return r->result;
}

static ssize_t do_rw(struct fix *f, enum disk_op op, uint64_t off,
		     struct iovec *iov, int cnt)
{
	struct disk_req r = { .op = op, .offset = off, .iov = iov,
			      .iovcnt = cnt };

	return run_req(f->q, &r);
}

static ssize_t do_buf(struct fix *f, enum disk_op op, uint64_t off,
		      void *buf, size_t n)
{
	struct iovec iov = { buf, n };

	return do_rw(f, op, off, &iov, 1);
}

static ssize_t do_fill(struct fix *f, enum disk_op op, uint64_t off,
		       uint64_t len)
{
	struct disk_req r = { .op = op, .offset = off, .len = len };

	return run_req(f->q, &r);
}

/* Write a pattern, read it back, and find it in the image itself. */
static void t_rw_pattern(struct fix *f)
{
	size_t n = 64 * 1024;
	uint8_t *w = xalloc(n), *r = xalloc(n);

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	CHECK_EQ(f->d.size, IMG_SIZE);
	CHECK_EQ(f->d.is_blockdev, f->im->loop_fd >= 0);
	fill(w, 8192, n, 2);
	memset(r, 0, n);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 8192, w, n), n);
	CHECK_EQ(do_buf(f, DISK_OP_READ, 8192, r, n), n);
	CHECK(matches(r, 8192, n, 2));
	CHECK_EQ(do_buf(f, DISK_OP_READ, 0, r, 8192), 8192);
	CHECK(matches(r, 0, 8192, 1));
	CHECK_EQ(f->d.stats.bounced, 0); /* aligned: straight to memory */
	fix_close(f);
	CHECK(image_matches(f->im, 8192, n, 2));
	CHECK(image_matches(f->im, 0, 8192, 1));
	CHECK(image_matches(f->im, 8192 + n, BLK, 1));
out:
	free(w);
	free(r);
}

/* Many small segments of odd lengths and addresses, read back another way. */
static void t_sg_segments(struct fix *f)
{
	enum { NSEG = 200 };
	struct iovec iov[NSEG], riov[3];
	uint8_t *w = xalloc(NSEG * 48), *r = xalloc(NSEG * 48);
	uint64_t off = 12345;
	size_t total = 0, pos = 1, len, i;

	for (i = 0; i < NSEG; i++) {
		len = 1 + (i * 7) % 37;
		iov[i].iov_base = w + pos;
		iov[i].iov_len = len;
		fill(w + pos, off + total, len, 3);
		total += len;
		pos += len + 1 + i % 3; /* gaps: segments never abut */
	}
	riov[0] = (struct iovec){ r + 1, 1 };
	riov[1] = (struct iovec){ r + 2, total / 2 };
	riov[2] = (struct iovec){ r + 2 + total / 2, total - 1 - total / 2 };
	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	CHECK_EQ(do_rw(f, DISK_OP_WRITE, off, iov, NSEG), total);
	CHECK_EQ(do_rw(f, DISK_OP_READ, off, riov, 3), total);
	CHECK(r[1] == pat(off, 3));
	CHECK(matches(r + 2, off + 1, total - 1, 3));
	for (i = 0; i < NSEG; i++)
		CHECK(iov[i].iov_len == 1 + (i * 7) % 37);
	fix_close(f);
	CHECK(image_matches(f->im, off, total, 3));
	CHECK(image_matches(f->im, off - 100, 100, 1));
	CHECK(image_matches(f->im, off + total, 100, 1));
out:
	free(w);
	free(r);
}

/* The last block works; anything reaching past the end is refused. */
static void t_end_of_image(struct fix *f)
{
	uint8_t *b = xalloc(2 * BLK);
	uint64_t size = IMG_SIZE;
	struct disk_req r = { .op = DISK_OP_READ, .offset = size };

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	fill(b, size - BLK, BLK, 4);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, size - BLK, b, BLK), BLK);
	memset(b, 0, BLK);
	CHECK_EQ(do_buf(f, DISK_OP_READ, size - BLK, b, BLK), BLK);
	CHECK(matches(b, size - BLK, BLK, 4));
	CHECK_EQ(do_buf(f, DISK_OP_READ, size - 512, b, 1024), -EINVAL);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, size - 512, b, 1024), -EINVAL);
	CHECK_EQ(do_buf(f, DISK_OP_READ, size, b, 1), -EINVAL);
	CHECK_EQ(do_buf(f, DISK_OP_READ, UINT64_MAX - 10, b, BLK), -EINVAL);
	CHECK_EQ(run_req(f->q, &r), 0); /* empty read at the very end */
	CHECK_EQ(do_fill(f, DISK_OP_WRITE_ZEROES, size - 512, 1024),
		 -EINVAL);
	CHECK_EQ(do_fill(f, DISK_OP_DISCARD, size, 512), -EINVAL);
	CHECK_EQ(f->d.stats.errors[DISK_OP_READ], 3);
	CHECK_EQ(f->d.stats.errors[DISK_OP_WRITE], 1);
	fix_close(f);
	CHECK(image_matches(f->im, size - BLK, BLK, 4));
out:
	free(b);
}

/* Flush completes with 0 whatever the cache mode, read-only too. */
static void t_flush(struct fix *f)
{
	static const enum disk_cache modes[] = {
		DISK_CACHE_NONE, DISK_CACHE_WRITEBACK, DISK_CACHE_UNSAFE,
	};
	uint8_t *b = xalloc(BLK);
	unsigned int i;

	fill(b, 0, BLK, 5);
	for (i = 0; i < 3; i++) {
		if (!fix_open(f, false, modes[i]))
			break;
		if (modes[i] != DISK_CACHE_NONE)
			CHECK(!f->d.direct);
		CHECK_EQ(do_buf(f, DISK_OP_WRITE, 0, b, BLK), BLK);
		CHECK_EQ(do_fill(f, DISK_OP_FLUSH, 0, 0), 0);
		fix_close(f);
		if (!fix_open(f, true, modes[i]))
			break;
		CHECK_EQ(do_fill(f, DISK_OP_FLUSH, 0, 0), 0);
		fix_close(f);
	}
	CHECK(image_matches(f->im, 0, BLK, 5));
	free(b);
}

/* After a discard or write-zeroes the range reads zeros, neighbours not. */
static void check_zeroed(struct fix *f, uint64_t off, uint64_t len)
{
	size_t n = len + 2 * BLK;
	uint64_t start = off - BLK;
	uint8_t *b = xalloc(n);

	memset(b, 0xa5, n);
	CHECK_EQ(do_buf(f, DISK_OP_READ, start, b, n), n);
	CHECK(matches(b, start, BLK, 1));
	CHECK(all_zero(b + BLK, len));
	CHECK(matches(b + BLK + len, off + len, BLK, 1));
	fix_close(f);
	CHECK(image_zero(f->im, off, len));
	CHECK(image_matches(f->im, start, BLK, 1));
	CHECK(image_matches(f->im, off + len, BLK, 1));
	free(b);
}

static void t_discard(struct fix *f)
{
	if (!fix_open(f, false, DISK_CACHE_NONE))
		return;
	if (!f->d.can_discard) {
		printf("note: %s cannot discard\n", f->im->path);
		CHECK_EQ(do_fill(f, DISK_OP_DISCARD, 65536, 65536),
			 -EOPNOTSUPP);
		fix_close(f);
		return;
	}
	CHECK_EQ(do_fill(f, DISK_OP_DISCARD, 65536, 65536), 0);
	check_zeroed(f, 65536, 65536);
}

static void t_write_zeroes(struct fix *f)
{
	uint64_t off, len;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		return;
	/* Block devices take whole sectors; files any byte range. */
	off = f->d.is_blockdev ? 9 * 512 : 5001;
	len = f->d.is_blockdev ? 136 * 512 : 70001;
	if (!f->d.can_write_zeroes) {
		printf("note: %s cannot write zeroes\n", f->im->path);
		CHECK_EQ(do_fill(f, DISK_OP_WRITE_ZEROES, off, len),
			 -EOPNOTSUPP);
		fix_close(f);
		return;
	}
	CHECK_EQ(do_fill(f, DISK_OP_WRITE_ZEROES, off, len), 0);
	check_zeroed(f, off, len);
}

/* The engine itself refuses writes to a read-only disk. */
static void t_readonly(struct fix *f)
{
	uint8_t *b = xalloc(BLK);

	if (!fix_open(f, true, DISK_CACHE_NONE))
		goto out;
	CHECK(f->d.readonly);
	CHECK(!f->d.can_discard && !f->d.can_write_zeroes);
	fill(b, 0, BLK, 6);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 0, b, BLK), -EROFS);
	CHECK_EQ(do_fill(f, DISK_OP_DISCARD, 0, BLK), -EROFS);
	CHECK_EQ(do_fill(f, DISK_OP_WRITE_ZEROES, 0, BLK), -EROFS);
	CHECK_EQ(do_buf(f, DISK_OP_READ, 0, b, BLK), BLK);
	CHECK(matches(b, 0, BLK, 1));
	CHECK_EQ(f->d.stats.errors[DISK_OP_WRITE], 1);
	CHECK_EQ(f->d.stats.errors[DISK_OP_DISCARD], 1);
	CHECK_EQ(f->d.stats.errors[DISK_OP_WRITE_ZEROES], 1);
	fix_close(f);
	CHECK(image_matches(f->im, 0, IMG_SIZE, 1));
out:
	free(b);
}

/* Does the uring engine make @f's transfers in the thread (disk_uring.c)? */
static bool uring_inline(const struct fix *f)
{
	return f->d.mem_backed && !f->d.direct;
}

/* DEPTH requests, one flush: each completes exactly once. */
static void t_batch(struct fix *f)
{
	struct disk_req reqs[DEPTH + 1];
	struct iovec iov[DEPTH + 1];
	uint8_t *buf = xalloc((DEPTH + 1) * BLK);
	struct done_log l = { 0 };
	unsigned int chunk = 1, left = 0;
	uint64_t off, enters, want_enters = 0;
	bool ring;
	int i;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	memset(reqs, 0, sizeof(reqs));
	for (i = 0; i <= DEPTH; i++) {
		bool wr = !(i & 1);

		off = (uint64_t)(wr ? i : DEPTH + i) * BLK;
		iov[i] = (struct iovec){ buf + i * BLK, BLK };
		if (wr)
			fill(buf + i * BLK, off, BLK, 7);
		else
			memset(buf + i * BLK, 0, BLK);
		reqs[i] = (struct disk_req){
			.op = wr ? DISK_OP_WRITE : DISK_OP_READ,
			.offset = off, .iov = &iov[i], .iovcnt = 1,
			.opaque = (void *)(uintptr_t)i,
		};
	}
	ring = f->engine == DISK_ENGINE_URING && !uring_inline(f);
	enters = f->d.stats.enters;
	for (i = 0; i < DEPTH; i++) {
		CHECK_EQ(disk_queue_submit(f->q, &reqs[i]), 0);
		CHECK_EQ(disk_queue_inflight(f->q), i + 1);
		/*
		 * The uring engine enters SQEs as it gets them, in chunks
		 * of 1, 2, 4 and then 8, not all at the flush: the first
		 * is in the kernel before the second is submitted.
		 */
		if (!ring)
			continue;
		if (++left >= chunk) {
			want_enters++;
			left = 0;
			chunk = chunk * 2 > 8 ? 8 : chunk * 2;
		}
		CHECK_EQ(f->d.stats.enters - enters, want_enters);
	}
	CHECK(!ring || want_enters == 10);
	CHECK_EQ(disk_queue_submit(f->q, &reqs[DEPTH]), -EAGAIN);
	CHECK_EQ(disk_queue_inflight(f->q), DEPTH);
	/* The uring engine's SQEs not entered yet (1 + 2 + 4 + 7 * 8 of
	 * the 64 were); none for a memory-backed image, whose transfers
	 * the submitting thread made itself. */
	CHECK_EQ(disk_queue_flush(f->q), ring ? 1 : 0);
	CHECK(!ring || f->d.stats.enters - enters == 11);
	CHECK(wait_done(f->q, &l, DEPTH));
	CHECK_EQ(disk_queue_reap(f->q, log_done, &l), 0);
	CHECK_EQ(l.calls, DEPTH);
	CHECK_EQ(l.bad, 0);
	for (i = 0; i < DEPTH; i++) {
		CHECK_EQ(l.per[i], 1);
		CHECK_EQ(reqs[i].result, BLK);
		if (i & 1)
			CHECK(matches(buf + i * BLK, (DEPTH + i) * BLK, BLK,
				      1));
	}
	/* Room again: the request turned away goes through now. */
	CHECK_EQ(run_req(f->q, &reqs[DEPTH]), BLK);
	fix_close(f);
	for (i = 0; i <= DEPTH; i += 2)
		CHECK(image_matches(f->im, (uint64_t)i * BLK, BLK, 7));
out:
	free(buf);
}

/* O_DIRECT: aligned requests go straight, others through aligned copies. */
static void t_unaligned(struct fix *f)
{
	uint8_t *b = xalloc(4 * BLK);
	uint64_t b0;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	if (!f->d.direct) {
		/* No O_DIRECT here: run the same planning on the page cache
		 * (a new queue: bounce buffers come with direct disks). */
		printf("note: no O_DIRECT on %s, alignment set by hand\n",
		       f->im->path);
		f->d.direct = true;
		f->d.align = f->d.mem_align = 512;
		disk_queue_close(f->q);
		CHECK_EQ(disk_queue_open(&f->d, DEPTH, &f->q), 0);
	}
	CHECK(f->d.align >= 512 && f->d.align <= BLK);
	b0 = f->d.stats.bounced;
	fill(b, 4096, BLK, 8);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 4096, b, BLK), BLK);
	CHECK_EQ(f->d.stats.bounced, b0);
	fill(b + 1, 8192, BLK, 8);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 8192, b + 1, BLK), BLK);
	CHECK_EQ(f->d.stats.bounced, b0 + 1);
	memset(b, 0, 2 * BLK);
	CHECK_EQ(do_buf(f, DISK_OP_READ, 8192, b + 3, BLK), BLK);
	CHECK(matches(b + 3, 8192, BLK, 8));
	CHECK_EQ(f->d.stats.bounced, b0 + 2);
	/* Offset and length off the block: read-modify-write. */
	fill(b, 20001, 3000, 8);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 20001, b, 3000), 3000);
	memset(b, 0, 2 * BLK);
	CHECK_EQ(do_buf(f, DISK_OP_READ, 20001, b + 5, 3000), 3000);
	CHECK(matches(b + 5, 20001, 3000, 8));
	CHECK_EQ(f->d.stats.bounced, b0 + 4);
	/* A coarser block than the device needs: 512-byte writes RMW too. */
	f->d.align = f->d.mem_align = BLK;
	fill(b, 65536 + 512, 512, 8);
	CHECK_EQ(do_buf(f, DISK_OP_WRITE, 65536 + 512, b, 512), 512);
	CHECK_EQ(f->d.stats.bounced, b0 + 5);
	fix_close(f);
	CHECK(image_matches(f->im, 4096, 2 * BLK, 8));
	CHECK(image_matches(f->im, 20001, 3000, 8));
	CHECK(image_matches(f->im, 16384, 20001 - 16384, 1));
	CHECK(image_matches(f->im, 23001, 28672 - 23001, 1));
	CHECK(image_matches(f->im, 65536, 512, 1));
	CHECK(image_matches(f->im, 65536 + 512, 512, 8));
	CHECK(image_matches(f->im, 65536 + 1024, 3072, 1));
out:
	free(b);
}

/*
 * Misaligned requests larger than a bounce buffer go through in chunks
 * (read-modify-write at both ends), and more of them than the queue has
 * buffers wait (-EAGAIN) until one finishes, then complete once each.
 */
static void t_bounce_chunks(struct fix *f)
{
	enum { N = DISK_BOUNCE_SLOTS + 3, LEN = 2 * DISK_BOUNCE_CHUNK + 3000 };
	uint8_t *b = xalloc(LEN + 2 * BLK), *small = xalloc(N * BLK);
	struct iovec iov[3], siov[N];
	struct disk_req reqs[N];
	struct done_log l = { 0 };
	uint64_t off = 5 * BLK + 1000, w0;
	unsigned int again = 0, i;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	if (!f->d.direct) {
		printf("note: no O_DIRECT on %s, alignment set by hand\n",
		       f->im->path);
		f->d.direct = true;
		disk_queue_close(f->q);
		CHECK_EQ(disk_queue_open(&f->d, DEPTH, &f->q), 0);
	}
	f->d.align = f->d.mem_align = BLK;
	fill(b + 3, off, LEN, 12);
	iov[0] = (struct iovec){ b + 3, 1000 };
	iov[1] = (struct iovec){ b + 1003, DISK_BOUNCE_CHUNK };
	iov[2] = (struct iovec){ b + 1003 + DISK_BOUNCE_CHUNK,
				 LEN - 1000 - DISK_BOUNCE_CHUNK };
	CHECK_EQ(do_rw(f, DISK_OP_WRITE, off, iov, 3), LEN);
	memset(b, 0, LEN + 2 * BLK);
	CHECK_EQ(do_buf(f, DISK_OP_READ, off - 7, b + 1, LEN + 14), LEN + 14);
	CHECK(matches(b + 1, off - 7, 7, 1));
	CHECK(matches(b + 8, off, LEN, 12));
	CHECK(matches(b + 8 + LEN, off + LEN, 7, 1));
	/* More misaligned requests at once than there are buffers. */
	w0 = f->d.stats.bounce_waits;
	memset(reqs, 0, sizeof(reqs));
	for (i = 0; i < N; i++) {
		uint64_t o = 600 * 1024 + (uint64_t)i * BLK + 512;

		fill(small + i * BLK + 1, o, 2048, 13);
		siov[i] = (struct iovec){ small + i * BLK + 1, 2048 };
		reqs[i] = (struct disk_req){ .op = DISK_OP_WRITE,
					     .offset = o, .iov = &siov[i],
					     .iovcnt = 1,
					     .opaque = (void *)(uintptr_t)i };
		while (disk_queue_submit(f->q, &reqs[i]) == -EAGAIN) {
			again++;
			CHECK(disk_queue_inflight(f->q) > 0);
			if (disk_queue_flush(f->q) < 0 ||
			    !wait_done(f->q, &l, l.calls + 1))
				break;
		}
	}
	CHECK(disk_queue_flush(f->q) >= 0);
	CHECK(wait_done(f->q, &l, N));
	CHECK_EQ(l.calls, N);
	for (i = 0; i < N; i++) {
		CHECK_EQ(l.per[i], 1);
		CHECK_EQ(reqs[i].result, 2048);
	}
	CHECK_EQ(f->d.stats.bounce_waits - w0, again);
	if (f->engine == DISK_ENGINE_URING)
		CHECK(again > 0);
	fix_close(f);
	CHECK(image_matches(f->im, off - BLK, BLK, 1));
	CHECK(image_matches(f->im, off, LEN, 12));
	CHECK(image_matches(f->im, off + LEN, BLK, 1));
	for (i = 0; i < N; i++) {
		uint64_t o = 600 * 1024 + (uint64_t)i * BLK;

		CHECK(image_matches(f->im, o, 512, 1));
		CHECK(image_matches(f->im, o + 512, 2048, 13));
		CHECK(image_matches(f->im, o + 2560, BLK - 2560, 1));
	}
out:
	free(b);
	free(small);
}

/*
 * RLIMIT_FSIZE makes the kernel write only up to the limit: the engine must
 * ask for the rest, and only that continuation fails with EFBIG.
 */
static void t_short_write(struct fix *f)
{
	struct iovec iov[3];
	uint8_t *b = xalloc(3 * BLK);
	uint64_t s = IMG_SIZE, r0;
	struct rlimit old, lim;
	struct stat st;
	ssize_t res;
	int i;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	f->d.size = s + 65536; /* let the write run past the file's end */
	fill(b, s, 3 * BLK, 5);
	for (i = 0; i < 3; i++)
		iov[i] = (struct iovec){ b + i * BLK, BLK };
	r0 = f->d.stats.resubmits;
	CHECK_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = s + BLK;
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	res = do_rw(f, DISK_OP_WRITE, s, iov, 3);
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
	CHECK_EQ(res, -EFBIG);
	CHECK(f->d.stats.resubmits > r0);
	CHECK(iov[0].iov_base == b && iov[0].iov_len == BLK);
	CHECK(iov[1].iov_base == b + BLK && iov[1].iov_len == BLK);
	fix_close(f);
	CHECK_EQ(stat(f->im->file, &st), 0);
	CHECK_EQ(st.st_size, s + BLK);
	CHECK(image_matches(f->im, s, BLK, 5));
out:
	free(b);
}

struct thread_arg {
	struct disk *d;
	uint64_t base;
	unsigned int seed;
	int fails;
};

/* One thread, one queue: write then read back 128 blocks, 8 at a time. */
static void *thread_io(void *p)
{
	struct thread_arg *a = p;
	struct disk_req reqs[8];
	struct iovec iov[8];
	struct disk_queue *q;
	uint8_t *buf = xalloc(8 * BLK);
	int pass, round, k;

	if (disk_queue_open(a->d, 8, &q)) {
		a->fails++;
		free(buf);
		return NULL;
	}
	for (pass = 0; pass < 2; pass++) {
		for (round = 0; round < 16; round++) {
			struct done_log l = { 0 };

			for (k = 0; k < 8; k++) {
				uint64_t off = a->base +
					       (uint64_t)(round * 8 + k) * BLK;

				iov[k] = (struct iovec){ buf + k * BLK, BLK };
				if (pass == 0)
					fill(buf + k * BLK, off, BLK, a->seed);
				reqs[k] = (struct disk_req){
					.op = pass ? DISK_OP_READ :
						     DISK_OP_WRITE,
					.offset = off, .iov = &iov[k],
					.iovcnt = 1,
					.opaque = (void *)(uintptr_t)k,
				};
				if (disk_queue_submit(q, &reqs[k]))
					a->fails++;
			}
			if (disk_queue_flush(q) < 0 || !wait_done(q, &l, 8))
				a->fails++;
			for (k = 0; k < 8; k++)
				if (l.per[k] != 1 || reqs[k].result != BLK ||
				    !matches(buf + k * BLK, reqs[k].offset,
					     BLK, a->seed))
					a->fails++;
		}
	}
	disk_queue_close(q);
	free(buf);
	return NULL;
}

static void t_two_threads(struct fix *f)
{
	struct thread_arg a[2] = {
		{ .base = 0, .seed = 10 },
		{ .base = IMG_SIZE / 2, .seed = 11 },
	};
	pthread_t t[2];
	int i;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		return;
	for (i = 0; i < 2; i++) {
		a[i].d = &f->d;
		CHECK_EQ(pthread_create(&t[i], NULL, thread_io, &a[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(a[i].fails, 0);
	}
	fix_close(f);
	CHECK(image_matches(f->im, 0, IMG_SIZE / 2, 10));
	CHECK(image_matches(f->im, IMG_SIZE / 2, IMG_SIZE / 2, 11));
}

/*
 * disk_queue_ready(): the syscall-free peek a polling thread uses. False
 * on an idle queue; turns true by itself once a request finished (no reap,
 * no wait on the fd), together with the fd; false again after the reap.
 */
static void t_ready(struct fix *f)
{
	struct pollfd p = { .events = POLLIN };
	uint8_t *buf = xalloc(BLK);
	struct done_log l = { 0 };
	struct iovec iov = { buf, BLK };
	struct disk_req r = { .op = DISK_OP_READ, .offset = BLK,
			      .iov = &iov, .iovcnt = 1 };
	struct disk_req bad = { .op = DISK_OP_READ, .offset = IMG_SIZE,
				.iov = &iov, .iovcnt = 1 };
	time_t end;

	if (!fix_open(f, false, DISK_CACHE_NONE))
		goto out;
	p.fd = disk_queue_fd(f->q);
	CHECK(!disk_queue_ready(f->q));
	CHECK_EQ(disk_queue_submit(f->q, &r), 0);
	CHECK(disk_queue_flush(f->q) >= 0);
	end = time(NULL) + 10;
	while (!disk_queue_ready(f->q) && time(NULL) < end)
		;
	CHECK(disk_queue_ready(f->q));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(disk_queue_reap(f->q, log_done, &l), 1);
	CHECK_EQ(r.result, BLK);
	CHECK(!disk_queue_ready(f->q));
	/* Refused at submit (past the end): ready at once, no flush. */
	CHECK_EQ(disk_queue_submit(f->q, &bad), 0);
	CHECK(disk_queue_ready(f->q));
	CHECK_EQ(disk_queue_reap(f->q, log_done, &l), 1);
	CHECK(bad.result < 0);
	CHECK(!disk_queue_ready(f->q));
	fix_close(f);
out:
	free(buf);
}

static const struct conf_test {
	const char *name;
	void (*fn)(struct fix *f);
	bool file_only; /* needs to write past the end of a file */
} conf_tests[] = {
	{ "write pattern, read back", t_rw_pattern, false },
	{ "scatter/gather, odd segment lengths", t_sg_segments, false },
	{ "end of image", t_end_of_image, false },
	{ "flush in every cache mode", t_flush, false },
	{ "discard reads zeros", t_discard, false },
	{ "write zeroes reads zeros", t_write_zeroes, false },
	{ "read-only refuses writes", t_readonly, false },
	{ "batch of 64, one flush", t_batch, false },
	{ "O_DIRECT bounce and read-modify-write", t_unaligned, false },
	{ "bounce in chunks, waits for a buffer", t_bounce_chunks, false },
	{ "short write then EFBIG", t_short_write, true },
	{ "two queues on two threads", t_two_threads, false },
	{ "completion peek without a system call", t_ready, false },
};

static void run_conformance(enum disk_engine e, bool loop)
{
	unsigned int i;
	int failed;

	for (i = 0; i < sizeof(conf_tests) / sizeof(conf_tests[0]); i++) {
		struct image im;
		struct fix f = { .engine = e, .im = &im };
		int ret;

		if (loop && conf_tests[i].file_only)
			continue;
		ret = image_create(&im, IMG_SIZE, loop);
		if (ret) {
			printf("skip: %s on a loop device: %s\n",
			       disk_engine_name(e), strerror(-ret));
			return;
		}
		failed = test_fail_count;
		conf_tests[i].fn(&f);
		printf("%s %s/%s: %s\n",
		       failed == test_fail_count ? "ok  " : "FAIL",
		       disk_engine_name(e),
		       loop ? "loop" : img_dir ? "shm" : "file",
		       conf_tests[i].name);
		image_destroy(&im);
	}
}

/*
 * /proc/self/mem as the image: offsets are addresses. A read running from
 * a mapped page into one that cannot be faulted in (a shared mapping past
 * the end of its memfd) returns a short count, and the continuation EIO.
 */
static void t_proc_mem(enum disk_engine e)
{
	struct disk_opts o = { .path = "/proc/self/mem", .readonly = true,
			       .engine = e };
	struct fix f = { .engine = e };
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m, *buf = xalloc(2 * pg);
	char err[256] = "";
	int mfd, fd, failed = test_fail_count;
	uint64_t r0;

	mfd = memfd_create("disk-test", MFD_CLOEXEC);
	CHECK(mfd >= 0 && !ftruncate(mfd, pg));
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	CHECK(m != MAP_FAILED);
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (mfd < 0 || m == MAP_FAILED || fd < 0)
		goto out;
	fill(m, 0, pg, 3);
	CHECK_EQ(disk_open_fd(&f.d, fd, &o, err, sizeof(err)), 0);
	f.d.size = 1ull << 48;
	CHECK_EQ(disk_queue_open(&f.d, DEPTH, &f.q), 0);
	memset(buf, 0xee, 2 * pg);
	r0 = f.d.stats.resubmits;
	CHECK_EQ(do_buf(&f, DISK_OP_READ, (uintptr_t)m, buf, 2 * pg), -EIO);
	CHECK(matches(buf, 0, pg, 3)); /* the short part arrived */
	CHECK(f.d.stats.resubmits > r0); /* and the rest was asked for */
	CHECK_EQ(do_buf(&f, DISK_OP_READ, (uintptr_t)m + pg, buf, pg), -EIO);
	CHECK_EQ(f.d.stats.errors[DISK_OP_READ], 2);
	/* The engine carries on after errors. */
	memset(buf, 0, pg);
	CHECK_EQ(do_buf(&f, DISK_OP_READ, (uintptr_t)m, buf, pg), pg);
	CHECK(matches(buf, 0, pg, 3));
	printf("%s %s/proc-mem: short read, EIO\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(e));
	fix_close(&f);
out:
	if (m != MAP_FAILED)
		munmap(m, 2 * pg);
	if (mfd >= 0)
		close(mfd);
	free(buf);
}

/*
 * io_uring: a read crossing the end of file completes short; the file grows
 * before the reap, and the continuation fetches the new data. @split puts
 * the short count inside a segment (page cache: the caller's iovec is
 * trimmed) or lets O_DIRECT bounce (the bounce segment is trimmed).
 */
static void t_uring_short_resume(enum disk_cache cache, size_t split)
{
	struct image im;
	struct fix f = { .engine = DISK_ENGINE_URING, .im = &im };
	struct pollfd p = { .events = POLLIN };
	struct done_log l = { 0 };
	uint8_t *buf = xalloc(2 * BLK), *ext = xalloc(BLK);
	struct iovec iov[2] = { { buf, split },
				{ buf + split, 2 * BLK - split } };
	struct disk_req r = { .op = DISK_OP_READ, .offset = IMG_SIZE - BLK,
			      .iov = iov, .iovcnt = 2 };
	int fd, failed = test_fail_count;
	uint64_t r0;

	if (image_create(&im, IMG_SIZE, false)) {
		CHECK(0);
		goto out;
	}
	if (!fix_open(&f, false, cache))
		goto out_image;
	f.d.size = IMG_SIZE + BLK;
	r0 = f.d.stats.resubmits;
	CHECK_EQ(disk_queue_submit(f.q, &r), 0);
	/* A round's first SQE enters at submit: none left to flush. */
	CHECK_EQ(disk_queue_flush(f.q), 0);
	p.fd = disk_queue_fd(f.q);
	CHECK_EQ(poll(&p, 1, 10000), 1); /* the short completion is in */
	fill(ext, IMG_SIZE, BLK, 9);
	fd = open(im.file, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && pwrite(fd, ext, BLK, IMG_SIZE) == BLK);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(disk_queue_reap(f.q, log_done, &l), 0);
	CHECK_EQ(f.d.stats.resubmits, r0 + 1);
	CHECK_EQ(disk_queue_inflight(f.q), 1);
	CHECK(wait_done(f.q, &l, 1));
	CHECK_EQ(r.result, 2 * BLK);
	CHECK(matches(buf, IMG_SIZE - BLK, BLK, 1));
	CHECK(matches(buf + BLK, IMG_SIZE, BLK, 9));
	CHECK(iov[0].iov_base == buf && iov[0].iov_len == split);
	CHECK(iov[1].iov_base == buf + split &&
	      iov[1].iov_len == 2 * BLK - split);
	fix_close(&f);
	printf("%s uring/file: short read resumes (%s, split %zu)\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       cache == DISK_CACHE_NONE ? "direct" : "page cache", split);
out_image:
	image_destroy(&im);
out:
	free(buf);
	free(ext);
}

/*
 * A memory-backed image (tmpfs): the uring engine makes its reads and
 * writes in the thread, counted, with no io_uring_enter; a file elsewhere
 * goes through the ring. Then the whole conformance set on tmpfs.
 */
static void t_uring_mem_backed(void)
{
	struct statfs fs;
	struct image im;
	struct fix f = { .engine = DISK_ENGINE_URING, .im = &im };
	uint8_t *buf = xalloc(BLK);
	int failed = test_fail_count;

	if (statfs("/dev/shm", &fs) || fs.f_type != TMPFS_MAGIC) {
		printf("skip: no tmpfs at /dev/shm: uring/shm not run\n");
		free(buf);
		return;
	}
	img_dir = "/dev/shm";
	if (image_create(&im, IMG_SIZE, false)) {
		CHECK(0);
		goto out;
	}
	if (fix_open(&f, false, DISK_CACHE_WRITEBACK)) {
		CHECK(f.d.mem_backed);
		fill(buf, 5 * BLK, BLK, 4);
		CHECK_EQ(do_buf(&f, DISK_OP_WRITE, 5 * BLK, buf, BLK), BLK);
		memset(buf, 0, BLK);
		CHECK_EQ(do_buf(&f, DISK_OP_READ, 5 * BLK, buf, BLK), BLK);
		CHECK(matches(buf, 5 * BLK, BLK, 4));
		CHECK_EQ(f.d.stats.inline_calls, 2);
		CHECK_EQ(f.d.stats.enters, 0);
		/* Through the image's mapping, no system call per transfer
		 * (where the SIGBUS guard exists: not under ThreadSanitizer). */
		CHECK(f.d.map != NULL || guarded_copy_init() == -ENOTSUP);
		fix_close(&f);
		CHECK(f.d.map == NULL);
		CHECK(image_matches(&im, 5 * BLK, BLK, 4));
	}
	/*
	 * The image shrinks behind microvm's back (another process
	 * truncates it): transfers past its new end fail with -EIO, the
	 * mapping's SIGBUS caught; those before it still work.
	 */
	if (guarded_copy_init() == -ENOTSUP)
		printf("skip: uring/shm shrunk image: no SIGBUS guard here\n");
	else if (fix_open(&f, false, DISK_CACHE_WRITEBACK)) {
		CHECK(f.d.map != NULL);
		CHECK_EQ(truncate(im.file, IMG_SIZE / 2), 0);
		CHECK_EQ(do_buf(&f, DISK_OP_READ, IMG_SIZE / 2 + BLK, buf, BLK),
			 -EIO);
		CHECK_EQ(do_buf(&f, DISK_OP_WRITE, IMG_SIZE - BLK, buf, BLK),
			 -EIO);
		CHECK_EQ(do_buf(&f, DISK_OP_READ, 5 * BLK, buf, BLK), BLK);
		CHECK(matches(buf, 5 * BLK, BLK, 4));
		CHECK_EQ(f.d.stats.errors[DISK_OP_READ], 1);
		CHECK_EQ(f.d.stats.errors[DISK_OP_WRITE], 1);
		fix_close(&f);
		CHECK_EQ(truncate(im.file, IMG_SIZE), 0);
	}
	/*
	 * A sparse image is not mapped: a read fault on a hole would
	 * allocate a tmpfs page where preadv allocates nothing. Its holes
	 * read as zeros and take no memory.
	 */
	CHECK_EQ(truncate(im.file, 0), 0);
	CHECK_EQ(truncate(im.file, IMG_SIZE), 0);
	if (fix_open(&f, false, DISK_CACHE_WRITEBACK)) {
		struct stat st;

		CHECK(f.d.mem_backed);
		CHECK(f.d.map == NULL);
		memset(buf, 0xee, BLK);
		CHECK_EQ(do_buf(&f, DISK_OP_READ, 7 * BLK, buf, BLK), BLK);
		CHECK(buf[0] == 0 && buf[BLK - 1] == 0);
		CHECK(!stat(im.file, &st) && st.st_blocks == 0);
		CHECK_EQ(f.d.stats.inline_calls, 1);
		fix_close(&f);
	}
	image_destroy(&im);
	printf("%s uring/shm: reads and writes made in the thread, "
	       "through the mapping; a shrunk image fails them; a sparse "
	       "one is not mapped\n",
	       failed == test_fail_count ? "ok  " : "FAIL");
	run_conformance(DISK_ENGINE_URING, false);
out:
	img_dir = NULL;
	free(buf);
}

/* A file off tmpfs: every transfer through the ring, none in the thread. */
static void t_uring_not_inline(void)
{
	struct image im;
	struct fix f = { .engine = DISK_ENGINE_URING, .im = &im };
	uint8_t *buf = xalloc(BLK);

	if (image_create(&im, IMG_SIZE, false)) {
		CHECK(0);
		free(buf);
		return;
	}
	if (fix_open(&f, false, DISK_CACHE_WRITEBACK)) {
		if (f.d.mem_backed) {
			printf("note: $TMPDIR is memory-backed: uring/file "
			       "ring check not run\n");
		} else {
			CHECK_EQ(do_buf(&f, DISK_OP_READ, 0, buf, BLK), BLK);
			CHECK_EQ(f.d.stats.inline_calls, 0);
			CHECK(f.d.stats.enters > 0);
		}
		fix_close(&f);
	}
	image_destroy(&im);
	free(buf);
}

int main(void)
{
	enum disk_engine e;

	signal(SIGXFSZ, SIG_IGN);
	for (e = 0; e < DISK_ENGINE_COUNT; e++) {
		run_conformance(e, false);
		run_conformance(e, true);
		t_proc_mem(e);
	}
	t_uring_short_resume(DISK_CACHE_WRITEBACK, 3000);
	t_uring_short_resume(DISK_CACHE_NONE, 1000);
	t_uring_short_resume(DISK_CACHE_NONE, BLK);
	t_uring_not_inline();
	t_uring_mem_backed();
	return test_done();
}
