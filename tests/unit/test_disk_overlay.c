// SPDX-License-Identifier: Apache-2.0
/*
 * Snapshot disks (disk_overlay.c) against a model: a byte array holding
 * what the guest must read back. Fixed cases first (partial-cluster
 * writes, reads spanning overlay and image clusters, discard and
 * write-zeroes on copied and not-yet-copied clusters, the short last
 * cluster, flush), then random reads, writes, discards and write-zeroes of
 * random sizes and alignments from several threads at once, one queue
 * each, every thread owning a slice of every cluster so that they copy the
 * same clusters up concurrently. Each engine, on a file image and on a
 * loop block device where one can be made; the image is compared
 * byte-for-byte with its original afterwards. Also: shared locking,
 * refused combinations, bounded overlay size, and the reflink path where
 * the file system of the temporary directory can clone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loop_dev.h"
#include "test.h"
#include "virtio/disk.h"

#define CL DISK_OVERLAY_CLUSTER
/* Not a whole number of clusters: the last one is short. */
#define IMG_SIZE (40ull * CL + 12288)
#define NTHREADS 4
#define SLICE (CL / NTHREADS)
#define OPS_PER_THREAD 600
#define OPS_SINGLE 400
#define MAX_SEGS 5

struct image {
	char file[PATH_MAX];
	char path[PATH_MAX]; /* the file, or the loop device on it */
	int loop_fd;
	uint8_t *orig;       /* what the image held at creation */
};

/* The guest's view: what every read must return. */
struct model {
	uint8_t *bytes;
	uint64_t size;
};

struct fix {
	struct disk d;
	struct model m;
	char tmpdir[PATH_MAX];
	enum disk_engine engine;
};

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64: reproducible per seed, no shared state. */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int image_create(struct image *im, uint64_t size, bool loop,
			const char *dir)
{
	uint64_t s = 77;
	int fd, ret = 0;
	size_t i;

	im->loop_fd = -1;
	im->orig = malloc(size);
	if (!im->orig)
		return -ENOMEM;
	for (i = 0; i < size; i++)
		im->orig[i] = (uint8_t)(rnd(&s) | 1); /* never zero */
	snprintf(im->file, sizeof(im->file), "%s/microvm-ovl-XXXXXX", dir);
	fd = mkstemp(im->file);
	if (fd < 0) {
		free(im->orig);
		return -errno;
	}
	if (pwrite(fd, im->orig, size, 0) != (ssize_t)size)
		ret = -EIO;
	close(fd);
	snprintf(im->path, sizeof(im->path), "%s", im->file);
	if (!ret && loop)
		ret = loop_dev_attach(im->file, im->path, sizeof(im->path),
				      &im->loop_fd);
	if (ret) {
		unlink(im->file);
		free(im->orig);
	}
	return ret;
}

static void image_destroy(struct image *im)
{
	if (im->loop_fd >= 0)
		close(im->loop_fd);
	unlink(im->file);
	free(im->orig);
}

/* The image file still holds exactly what it was created with. */
static bool image_untouched(const struct image *im, uint64_t size)
{
	uint8_t *b = malloc(size);
	int fd = open(im->file, O_RDONLY | O_CLOEXEC);
	bool ok = b && fd >= 0 && pread(fd, b, size, 0) == (ssize_t)size &&
		  !memcmp(b, im->orig, size);
	struct stat st;

	ok = ok && !fstat(fd, &st) && (uint64_t)st.st_size == size;
	if (fd >= 0)
		close(fd);
	free(b);
	return ok;
}

static bool dir_empty(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!dir)
		return false;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dir);
	return n == 0;
}

static int fix_open(struct fix *f, const struct image *im,
		    enum disk_engine e, bool no_reflink, const char *tmpdir)
{
	struct disk_opts o = { .path = im->path,
			       .cache = DISK_CACHE_WRITEBACK, .engine = e,
			       .snapshot = true, .tmpdir = tmpdir,
			       .no_reflink = no_reflink };
	char err[256] = "";
	int ret;

	f->engine = e;
	ret = disk_open(&f->d, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "disk_open: %s\n", err);
		return ret;
	}
	f->m.size = f->d.size;
	f->m.bytes = malloc(f->d.size);
	if (!f->m.bytes)
		abort();
	memcpy(f->m.bytes, im->orig, f->d.size);
	return 0;
}

static void fix_close(struct fix *f)
{
	disk_close(&f->d);
	free(f->m.bytes);
	f->m.bytes = NULL;
}

static void on_done(void *arg, struct disk_req *r)
{
	(void)r;
	(*(int *)arg)++;
}

/* Submit @r alone and wait for it: its result. */
static ssize_t run_req(struct disk_queue *q, struct disk_req *r)
{
	struct pollfd p = { .fd = disk_queue_fd(q), .events = POLLIN };
	int done = 0, tries = 0;

	if (disk_queue_submit(q, r))
		return -1000;
	disk_queue_flush(q);
	while (!done && tries++ < 2000) {
		if (poll(&p, 1, 10) < 0)
			return -1001;
		disk_queue_reap(q, on_done, &done);
	}
	return done ? r->result : -1002;
}

/*
 * Split @len bytes at @buf into up to MAX_SEGS segments of random sizes
 * (some empty) so that runs of the read end inside segments.
 */
static int split_iov(uint64_t *s, uint8_t *buf, size_t len, struct iovec *v)
{
	int n = 1 + (int)(rnd(s) % MAX_SEGS), i;
	size_t left = len;

	for (i = 0; i < n - 1; i++) {
		size_t k = left ? rnd(s) % (left + 1) : 0;

		v[i].iov_base = buf + (len - left);
		v[i].iov_len = k;
		left -= k;
	}
	v[i].iov_base = buf + (len - left);
	v[i].iov_len = left;
	return n;
}

static ssize_t do_rw(struct disk_queue *q, uint64_t *s, enum disk_op op,
		     uint64_t off, uint8_t *buf, size_t len)
{
	struct iovec v[MAX_SEGS];
	struct disk_req r = { .op = op, .offset = off, .iov = v };

	r.iovcnt = split_iov(s, buf, len, v);
	return run_req(q, &r);
}

static ssize_t do_fill(struct disk_queue *q, enum disk_op op, uint64_t off,
		       uint64_t len)
{
	struct disk_req r = { .op = op, .offset = off, .len = len };

	return run_req(q, &r);
}

/* Read [@off, +@len) and compare with the model. */
static bool check_read(struct fix *f, struct disk_queue *q, uint64_t *s,
		       uint64_t off, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	bool ok;

	memset(b, 0xA5, len);
	ok = do_rw(q, s, DISK_OP_READ, off, b, len) == (ssize_t)len &&
	     !memcmp(b, f->m.bytes + off, len);
	free(b);
	return ok;
}

static bool do_write(struct fix *f, struct disk_queue *q, uint64_t *s,
		     uint64_t off, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	bool ok;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)rnd(s);
	ok = do_rw(q, s, DISK_OP_WRITE, off, b, len) == (ssize_t)len;
	memcpy(f->m.bytes + off, b, len);
	free(b);
	return ok;
}

static bool do_zero(struct fix *f, struct disk_queue *q, enum disk_op op,
		    uint64_t off, uint64_t len)
{
	bool ok = do_fill(q, op, off, len) == 0;

	memset(f->m.bytes + off, 0, len);
	return ok;
}

/* The whole disk reads back as the model, in pieces of odd sizes. */
static bool check_all(struct fix *f, struct disk_queue *q, uint64_t *s)
{
	uint64_t off = 0, n;

	while (off < f->m.size) {
		n = 1 + rnd(s) % (3 * CL);
		if (n > f->m.size - off)
			n = f->m.size - off;
		if (!check_read(f, q, s, off, n))
			return false;
		off += n;
	}
	return true;
}

static void t_fixed(struct fix *f, struct disk_queue *q)
{
	uint64_t s = 1, last = (f->m.size - 1) / CL * CL;
	int failed = test_fail_count;

	/* Reads of an untouched disk see the image. */
	CHECK(check_read(f, q, &s, 0, 3 * CL + 17));
	/* Partial-cluster write: the cluster's other bytes stay the image's. */
	CHECK(do_write(f, q, &s, CL + 100, 5000));
	CHECK_EQ(f->d.stats.copy_ups, f->d.ov ? 1 : 0);
	CHECK(check_read(f, q, &s, CL, CL));
	/* A read across image, overlay, image clusters. */
	CHECK(check_read(f, q, &s, 100, 3 * CL));
	/* A second write into a copied cluster copies nothing. */
	CHECK(do_write(f, q, &s, CL + 60000, 3000));
	CHECK_EQ(f->d.stats.copy_ups, f->d.ov ? 1 : 0);
	/* One write over whole and partial clusters, some copied. */
	CHECK(do_write(f, q, &s, CL - 1, 2 * CL + 2));
	CHECK(check_read(f, q, &s, 0, 4 * CL));
	/* A whole-cluster write needs no image read but counts once. */
	CHECK(do_write(f, q, &s, 5 * CL, CL));
	CHECK(check_read(f, q, &s, 4 * CL, 3 * CL));
	if (f->d.can_discard) {
		/* Discard on never-copied clusters, whole and partial: zero. */
		CHECK(do_zero(f, q, DISK_OP_DISCARD, 8 * CL, CL));
		CHECK(do_zero(f, q, DISK_OP_DISCARD, 10 * CL + 4096, 8192));
		/* And on copied ones. */
		CHECK(do_zero(f, q, DISK_OP_DISCARD, CL + 50, 200));
		CHECK(check_read(f, q, &s, 0, 12 * CL));
	}
	if (f->d.can_write_zeroes) {
		CHECK(do_zero(f, q, DISK_OP_WRITE_ZEROES, 12 * CL + 1, CL));
		CHECK(do_zero(f, q, DISK_OP_WRITE_ZEROES, 5 * CL + 7, 70000));
		CHECK(do_zero(f, q, DISK_OP_WRITE_ZEROES, 15 * CL, 2 * CL));
		CHECK(check_read(f, q, &s, 4 * CL, 14 * CL));
	}
	/* The short last cluster: copy-up stops at the end of the image. */
	CHECK(do_write(f, q, &s, f->m.size - 10, 10));
	CHECK(check_read(f, q, &s, last - CL, f->m.size - (last - CL)));
	CHECK(do_write(f, q, &s, last, f->m.size - last));
	/* Out of range stays refused. */
	CHECK_EQ(do_fill(q, DISK_OP_DISCARD, f->m.size - 1, 2), -EINVAL);
	/* Flush of a throwaway disk completes at once, OK. */
	CHECK_EQ(do_fill(q, DISK_OP_FLUSH, 0, 0), 0);
	CHECK(check_all(f, q, &s));
	printf("%s %s: fixed cases\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(f->engine));
}

/* One random op anywhere (single thread: arbitrary ranges). */
static bool random_op(struct fix *f, struct disk_queue *q, uint64_t *s,
		      uint64_t lo, uint64_t span, uint64_t maxlen, int stride)
{
	uint64_t c = rnd(s) % (f->m.size / CL + 1), in, len, off;
	unsigned int op = (unsigned int)(rnd(s) % 8);

	/* @stride > 0: only bytes [lo, lo + span) of some cluster. */
	if (stride) {
		in = rnd(s) % span;
		len = 1 + rnd(s) % (span - in);
		off = c * CL + lo + in;
		if (off >= f->m.size)
			off = lo + in; /* past the short last cluster */
		if (off + len > f->m.size)
			len = f->m.size - off;
	} else {
		off = rnd(s) % f->m.size;
		len = 1 + rnd(s) % maxlen;
		if (len > f->m.size - off)
			len = f->m.size - off;
	}
	/* Sector-aligned now and then, as a guest mostly sends. */
	if (rnd(s) % 2 && !stride) {
		off &= ~511ull;
		len = (len + 511) & ~511ull;
		if (len > f->m.size - off)
			len = f->m.size - off;
	}
	switch (op) {
	case 0:
	case 1:
	case 2:
		return check_read(f, q, s, off, len);
	case 3:
	case 4:
	case 5:
		return do_write(f, q, s, off, len);
	case 6:
		if (!f->d.can_discard)
			return true;
		return do_zero(f, q, DISK_OP_DISCARD, off, len);
	default:
		if (!f->d.can_write_zeroes)
			return true;
		return do_zero(f, q, DISK_OP_WRITE_ZEROES, off, len);
	}
}

struct worker {
	struct fix *f;
	int idx;
	int bad;
	int ops;
};

/*
 * Thread @idx owns bytes [idx * SLICE, (idx + 1) * SLICE) of every
 * cluster, so its model bytes are its own, while every thread copies up
 * the same clusters at the same time.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct disk_queue *q;
	uint64_t s = 1000 + (uint64_t)w->idx;
	int i;

	if (disk_queue_open(&w->f->d, 8, &q)) {
		w->bad = -1;
		return NULL;
	}
	for (i = 0; i < OPS_PER_THREAD; i++) {
		if (!random_op(w->f, q, &s, (uint64_t)w->idx * SLICE, SLICE,
			       0, 1))
			w->bad++;
		w->ops++;
	}
	disk_queue_close(q);
	return NULL;
}

static void t_random(struct fix *f, struct disk_queue *q)
{
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t s = 99, copies;
	int i, bad = 0, failed = test_fail_count;

	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .f = f, .idx = i };
		CHECK_EQ(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(w[i].bad, 0);
		CHECK_EQ(w[i].ops, OPS_PER_THREAD);
	}
	/* Every thread's bytes of every cluster survived the others'. */
	CHECK(check_all(f, q, &s));
	for (i = 0; i < OPS_SINGLE; i++)
		if (!random_op(f, q, &s, 0, 0, 4 * CL + 1000, 0))
			bad++;
	CHECK_EQ(bad, 0);
	CHECK(check_all(f, q, &s));
	/* Each cluster is copied up at most once, whatever happened. */
	copies = atomic_load(&f->d.stats.copy_ups);
	CHECK(copies <= (f->m.size + CL - 1) / CL);
	printf("%s %s: %d threads x %d random ops, then %d spanning ones "
	       "(%llu copy-ups)\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(f->engine), NTHREADS, OPS_PER_THREAD,
	       OPS_SINGLE, (unsigned long long)copies);
}

struct racer {
	struct disk *d;
	pthread_barrier_t *bar;
	int idx;
	int bad;
	uint8_t *want; /* what the thread wrote, per cluster: its slice */
};

/*
 * Every thread writes its slice of cluster 0, then of cluster 1, ... in
 * step: each cluster's first writers race to copy it up.
 */
static void *racer_main(void *arg)
{
	struct racer *w = arg;
	uint64_t nc = w->d->size / CL, c, s = 5000 + (uint64_t)w->idx;
	struct disk_queue *q;
	size_t i;

	if (disk_queue_open(w->d, 8, &q)) {
		w->bad = -1;
		pthread_barrier_wait(w->bar);
		return NULL;
	}
	for (i = 0; i < nc * SLICE; i++)
		w->want[i] = (uint8_t)rnd(&s);
	pthread_barrier_wait(w->bar);
	for (c = 0; c < nc; c++) {
		struct iovec v = { w->want + c * SLICE, SLICE };
		struct disk_req r = { .op = DISK_OP_WRITE,
				      .offset = c * CL + (uint64_t)w->idx *
							 SLICE,
				      .iov = &v, .iovcnt = 1 };

		if (run_req(q, &r) != SLICE)
			w->bad++;
	}
	disk_queue_close(q);
	return NULL;
}

/* Concurrent partial writes to one cluster both survive its copy-up. */
static void t_copy_up_race(enum disk_engine e, int rounds)
{
	struct racer w[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t bar;
	struct image im;
	struct fix f = { 0 };
	struct disk_queue *q;
	uint64_t nc, c, s = 3;
	int i, round, lost = 0, failed = test_fail_count;

	if (image_create(&im, IMG_SIZE, false, tmp_dir())) {
		CHECK(0);
		return;
	}
	nc = IMG_SIZE / CL;
	for (i = 0; i < NTHREADS; i++)
		w[i].want = malloc(nc * SLICE);
	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (round = 0; round < rounds; round++) {
		if (fix_open(&f, &im, e, true, NULL)) {
			CHECK(0);
			break;
		}
		for (i = 0; i < NTHREADS; i++) {
			w[i].d = &f.d;
			w[i].bar = &bar;
			w[i].idx = i;
			w[i].bad = 0;
			CHECK_EQ(pthread_create(&th[i], NULL, racer_main,
						&w[i]), 0);
		}
		for (i = 0; i < NTHREADS; i++) {
			pthread_join(th[i], NULL);
			CHECK_EQ(w[i].bad, 0);
			for (c = 0; c < nc; c++)
				memcpy(f.m.bytes + c * CL + i * SLICE,
				       w[i].want + c * SLICE, SLICE);
		}
		CHECK_EQ(f.d.stats.copy_ups, nc);
		if (disk_queue_open(&f.d, 8, &q)) {
			CHECK(0);
			fix_close(&f);
			break;
		}
		if (!check_all(&f, q, &s))
			lost++;
		disk_queue_close(q);
		fix_close(&f);
	}
	CHECK_EQ(lost, 0);
	CHECK(image_untouched(&im, IMG_SIZE));
	pthread_barrier_destroy(&bar);
	for (i = 0; i < NTHREADS; i++)
		free(w[i].want);
	image_destroy(&im);
	printf("%s %s: copy-up race, %d threads x %llu clusters x %d rounds "
	       "(%d rounds lost data)\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(e), NTHREADS, (unsigned long long)nc, rounds,
	       lost);
}

/* The overlay never outgrows the image. */
static void t_bounded(struct fix *f)
{
	struct stat st;

	CHECK(!fstat(f->d.fd, &st));
	CHECK_EQ((uint64_t)st.st_size, f->m.size);
	CHECK((uint64_t)st.st_blocks * 512 <=
	      (f->m.size + CL - 1) / CL * CL + 2 * CL);
}

/*
 * The model phases on an open snapshot disk, on one queue of 8, then
 * close it; with @bounded, also check its map and overlay bounds.
 */
static void t_model(struct fix *f, bool bounded)
{
	struct disk_queue *q;

	if (disk_queue_open(&f->d, 8, &q)) {
		CHECK(0);
		fix_close(f);
		return;
	}
	t_fixed(f, q);
	t_random(f, q);
	if (bounded)
		t_bounded(f);
	disk_queue_close(q);
	fix_close(f);
}

static void run_model(enum disk_engine e, bool loop)
{
	struct image im;
	struct fix f = { 0 };
	char tmpl[PATH_MAX];
	int ret, failed = test_fail_count;

	snprintf(tmpl, sizeof(tmpl), "%s/microvm-ovdir-XXXXXX", tmp_dir());
	if (!mkdtemp(tmpl)) {
		CHECK(0);
		return;
	}
	ret = image_create(&im, IMG_SIZE, loop, tmp_dir());
	if (ret) {
		if (loop)
			printf("skip %s/loop: no loop device (%s)\n",
			       disk_engine_name(e), strerror(-ret));
		else
			CHECK(0);
		rmdir(tmpl);
		return;
	}
	if (fix_open(&f, &im, e, true, tmpl)) {
		CHECK(0);
		goto out;
	}
	CHECK(f.d.snapshot && f.d.ov && !f.d.reflinked);
	CHECK(f.d.base_fd >= 0 && !f.d.readonly && !f.d.is_blockdev);
	CHECK_EQ(f.d.size, IMG_SIZE);
	/* The overlay is unlinked: nothing shows in its directory. */
	CHECK(dir_empty(tmpl));
	t_model(&f, true);
	CHECK(image_untouched(&im, IMG_SIZE));
	CHECK(dir_empty(tmpl));
	printf("%s %s/%s: image byte-identical afterwards\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(e), loop ? "loop" : "file");
out:
	image_destroy(&im);
	rmdir(tmpl);
}

/* Shared read locks: snapshots coexist, a writer conflicts either way. */
static void t_locks(void)
{
	struct disk_opts snap = { .cache = DISK_CACHE_WRITEBACK,
				  .snapshot = true, .no_reflink = true };
	struct disk_opts rw = { .cache = DISK_CACHE_WRITEBACK };
	struct disk a, b, c;
	struct image im;
	char err[256] = "";
	int failed = test_fail_count;

	if (image_create(&im, 3 * CL, false, tmp_dir())) {
		CHECK(0);
		return;
	}
	snap.path = rw.path = im.path;
	CHECK_EQ(disk_open(&a, &snap, err, sizeof(err)), 0);
	CHECK_EQ(disk_open(&b, &snap, err, sizeof(err)), 0);
	err[0] = '\0';
	CHECK_EQ(disk_open(&c, &rw, err, sizeof(err)), -EBUSY);
	CHECK(strstr(err, "in use by another process") != NULL);
	disk_close(&a);
	disk_close(&b);
	CHECK_EQ(disk_open(&c, &rw, err, sizeof(err)), 0);
	CHECK_EQ(disk_open(&a, &snap, err, sizeof(err)), -EBUSY);
	disk_close(&c);

	/* Refused combinations name the image and the reason. */
	snap.cache = DISK_CACHE_NONE;
	CHECK_EQ(disk_open(&a, &snap, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "O_DIRECT") && strstr(err, im.path));
	snap.cache = DISK_CACHE_WRITEBACK;
	snap.readonly = true;
	CHECK_EQ(disk_open(&a, &snap, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "read-only") != NULL);
	snap.readonly = false;
	snap.tmpdir = "/nonexistent-microvm-dir";
	CHECK_EQ(disk_open(&a, &snap, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "/nonexistent-microvm-dir") != NULL);
	disk_close(&a);
	CHECK(image_untouched(&im, 3 * CL));
	image_destroy(&im);
	printf("%s locks: snapshots share an image, writers conflict\n",
	       failed == test_fail_count ? "ok  " : "FAIL");
}

/*
 * The reflink path: possible only where the temporary directory's file
 * system clones (btrfs, XFS with reflink, bcachefs); MICROVM_TEST_REFLINK_DIR
 * names such a directory when $TMPDIR is not one.
 */
static void t_reflink(enum disk_engine e)
{
	const char *dir = getenv("MICROVM_TEST_REFLINK_DIR");
	struct image im;
	struct fix f = { 0 };
	int failed = test_fail_count;

	if (!dir || !*dir)
		dir = tmp_dir();
	if (image_create(&im, IMG_SIZE, false, dir)) {
		CHECK(0);
		return;
	}
	if (fix_open(&f, &im, e, false, dir)) {
		CHECK(0);
		goto out;
	}
	if (!f.d.reflinked) {
		CHECK(f.d.ov != NULL);
		printf("skip %s/reflink: %s cannot clone files (FICLONE)\n",
		       disk_engine_name(e), dir);
		fix_close(&f);
		goto out;
	}
	CHECK(f.d.ov == NULL);
	t_model(&f, false);
	CHECK(image_untouched(&im, IMG_SIZE));
	printf("%s %s/reflink: clone in %s, image byte-identical\n",
	       failed == test_fail_count ? "ok  " : "FAIL",
	       disk_engine_name(e), dir);
out:
	image_destroy(&im);
}

int main(void)
{
	enum disk_engine e;

	for (e = 0; e < DISK_ENGINE_COUNT; e++) {
		run_model(e, false);
		run_model(e, true);
		t_reflink(e);
		t_copy_up_race(e, 20);
	}
	t_locks();
	return test_done();
}
