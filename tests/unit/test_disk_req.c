// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the disk request planner (disk_req.c) with no file at all:
 * request validation, continuation of short transfers across iovec segments
 * (and restoring the caller's iovecs), O_DIRECT bounce and read-modify-write
 * plans (chunk by chunk through a queue's bounce buffers, run against an
 * image in memory), the bounce budget, and the write-zeroes fallback. Each
 * table row feeds kernel results and checks the next kernel call the
 * planner asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>

#include "test.h"
#include "virtio/disk_engine.h"

#define MIB (1024 * 1024)

static struct disk_bounce pool; /* a queue's buffers, for direct disks */

static void fake_disk(struct disk *d, bool direct, bool readonly)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->size = MIB;
	d->direct = direct;
	d->readonly = readonly;
	d->align = 512;
	d->mem_align = 512;
	d->can_discard = true;
	d->can_write_zeroes = true;
	d->cache = DISK_CACHE_NONE;
	d->path = (char *)"fake";
}

/* Requests refused or finished by disk_req_start() itself. */
static void test_start_refusals(void)
{
	static char buf[64];
	struct iovec one = { buf, sizeof(buf) };
	struct iovec huge[2] = { { buf, SIZE_MAX }, { buf, 16 } };
	static const struct {
		const char *name;
		int op;
		uint64_t offset, len;
		int iov;          /* 0: none, 1: @one, 2: @huge */
		int iovcnt;
		bool readonly;
		bool no_fill;     /* discard/write-zeroes unsupported */
		enum disk_cache cache;
		int64_t result;
	} rows[] = {
		{ "unknown op", 99, 0, 0, 0, 0, false, false, 0, -EINVAL },
		{ "negative iovcnt", DISK_OP_READ, 0, 0, 1, -1, false, false,
		  0, -EINVAL },
		{ "iovcnt over max", DISK_OP_READ, 0, 0, 1, DISK_IOV_MAX + 1,
		  false, false, 0, -EINVAL },
		{ "null iov", DISK_OP_READ, 0, 0, 0, 1, false, false, 0,
		  -EINVAL },
		{ "iov total overflows", DISK_OP_READ, 0, 0, 2, 2, false,
		  false, 0, -EINVAL },
		{ "read past end", DISK_OP_READ, MIB - 32, 0, 1, 1, false,
		  false, 0, -EINVAL },
		{ "offset past end", DISK_OP_READ, MIB + 1, 0, 1, 1, false,
		  false, 0, -EINVAL },
		{ "offset at 2^64-1", DISK_OP_WRITE, UINT64_MAX, 0, 1, 1,
		  false, false, 0, -EINVAL },
		{ "empty read at end", DISK_OP_READ, MIB, 0, 0, 0, false,
		  false, 0, 0 },
		{ "write to read-only", DISK_OP_WRITE, 0, 0, 1, 1, true, false,
		  0, -EROFS },
		{ "discard on read-only", DISK_OP_DISCARD, 0, 512, 0, 0, true,
		  false, 0, -EROFS },
		{ "zeroes on read-only", DISK_OP_WRITE_ZEROES, 0, 512, 0, 0,
		  true, false, 0, -EROFS },
		{ "discard unsupported", DISK_OP_DISCARD, 0, 512, 0, 0, false,
		  true, 0, -EOPNOTSUPP },
		{ "zeroes unsupported", DISK_OP_WRITE_ZEROES, 0, 512, 0, 0,
		  false, true, 0, -EOPNOTSUPP },
		{ "discard past end", DISK_OP_DISCARD, MIB - 512, 1024, 0, 0,
		  false, false, 0, -EINVAL },
		{ "discard length wraps", DISK_OP_DISCARD, 512, UINT64_MAX, 0,
		  0, false, false, 0, -EINVAL },
		{ "empty discard", DISK_OP_DISCARD, 4096, 0, 0, 0, false,
		  false, 0, 0 },
		{ "unsafe flush", DISK_OP_FLUSH, 0, 0, 0, 0, false, false,
		  DISK_CACHE_UNSAFE, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct disk d;
		struct disk_req r = { 0 };
		struct disk_kcall kc;
		int ret;

		fake_disk(&d, false, rows[i].readonly);
		d.cache = rows[i].cache;
		if (rows[i].no_fill)
			d.can_discard = d.can_write_zeroes = false;
		r.op = rows[i].op;
		r.offset = rows[i].offset;
		r.len = rows[i].len;
		r.iov = rows[i].iov == 1 ? &one : rows[i].iov == 2 ? huge :
			NULL;
		r.iovcnt = rows[i].iovcnt;
		ret = disk_req_start(&d, &pool, &r, &kc);
		if (ret != DISK_REQ_DONE || r.result != rows[i].result)
			fprintf(stderr, "row '%s': ret %d result %zd\n",
				rows[i].name, ret, r.result);
		CHECK_EQ(ret, DISK_REQ_DONE);
		CHECK_EQ(r.result, rows[i].result);
		CHECK(r.priv.bounce == NULL);
		if (r.result < 0 && rows[i].op < DISK_OP_COUNT)
			CHECK_EQ(d.stats.errors[rows[i].op], 1);
	}
}

/*
 * Short transfers continue where they stopped: a row feeds one kernel
 * result and names the segment, trimmed base/length and file position of
 * the continuation the planner asks for.
 */
static void test_short_continuation(void)
{
	static const uint32_t seglen[3] = { 100, 200, 300 };
	static const struct {
		int64_t feed;
		int done;          /* DISK_REQ_DONE expected */
		int64_t result;
		uint64_t pos;      /* else: next call */
		int seg, iovcnt;
		size_t skip;       /* bytes trimmed off that segment */
	} rows[] = {
		{ 50, 0, 0, 1050, 0, 3, 50 },
		{ -EINTR, 0, 0, 1050, 0, 3, 50 }, /* retried unchanged */
		{ 50, 0, 0, 1100, 1, 2, 0 },      /* exactly a boundary */
		{ 250, 0, 0, 1350, 2, 1, 50 },
		{ 250, 1, 600, 0, 0, 0, 0 },
	};
	static char a[100], b[200], c[300];
	struct iovec iov[3] = { { a, 100 }, { b, 200 }, { c, 300 } };
	struct disk_req r = { .op = DISK_OP_READ, .offset = 1000,
			      .iov = iov, .iovcnt = 3 };
	struct disk_kcall kc;
	struct disk d;
	unsigned int i;
	int ret, k;

	fake_disk(&d, false, false);
	CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.op, DISK_KOP_READV);
	CHECK_EQ(kc.pos, 1000);
	CHECK(kc.iov == iov);
	CHECK_EQ(kc.iovcnt, 3);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ret = disk_req_next(&d, &r, rows[i].feed, &kc);
		CHECK_EQ(ret, rows[i].done ? DISK_REQ_DONE : DISK_REQ_CALL);
		if (rows[i].done) {
			CHECK_EQ(r.result, rows[i].result);
			break;
		}
		CHECK_EQ(kc.op, DISK_KOP_READV);
		CHECK_EQ(kc.pos, rows[i].pos);
		CHECK(kc.iov == &iov[rows[i].seg]);
		CHECK_EQ(kc.iovcnt, rows[i].iovcnt);
		CHECK((char *)kc.iov[0].iov_base ==
		      (char *)(rows[i].seg == 0 ? a : rows[i].seg == 1 ?
			       b : c) + rows[i].skip);
		CHECK_EQ(kc.iov[0].iov_len,
			 seglen[rows[i].seg] - rows[i].skip);
		/* Segments before the current one are the caller's again. */
		for (k = 0; k < rows[i].seg; k++)
			CHECK_EQ(iov[k].iov_len, seglen[k]);
	}
	CHECK(iov[0].iov_base == a && iov[0].iov_len == 100);
	CHECK(iov[1].iov_base == b && iov[1].iov_len == 200);
	CHECK(iov[2].iov_base == c && iov[2].iov_len == 300);
	CHECK_EQ(d.stats.resubmits, 3);
}

/* Results that end a transfer: errors, no progress, nonsense counts. */
static void test_transfer_failures(void)
{
	static const struct {
		int64_t first, second;
		int64_t result;
	} rows[] = {
		{ -ENOSPC, 0, -ENOSPC },
		{ -EIO, 0, -EIO },
		{ 0, 0, -EIO },            /* end of file before the end */
		{ 4097, 0, -EIO },         /* more than was asked */
		{ 1000, 0, -EIO },         /* short, then end of file */
		{ 1000, -EFBIG, -EFBIG },  /* short, then the error */
	};
	static char buf[4096];
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct disk_req r = { .op = DISK_OP_WRITE, .iov = &iov,
				      .iovcnt = 1 };
		struct disk_kcall kc;
		struct disk d;
		int ret;

		fake_disk(&d, false, false);
		CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
		CHECK_EQ(kc.op, DISK_KOP_WRITEV);
		ret = disk_req_next(&d, &r, rows[i].first, &kc);
		if (ret == DISK_REQ_CALL) {
			CHECK_EQ(kc.pos, rows[i].first);
			ret = disk_req_next(&d, &r, rows[i].second, &kc);
		}
		CHECK_EQ(ret, DISK_REQ_DONE);
		CHECK_EQ(r.result, rows[i].result);
		CHECK(iov.iov_base == buf && iov.iov_len == sizeof(buf));
		CHECK_EQ(d.stats.errors[DISK_OP_WRITE], 1);
	}
}

/* O_DIRECT plans: which requests bounce, over which aligned span. */
static void test_bounce_plans(void)
{
	static const struct {
		const char *name;
		int op;
		uint64_t offset;
		size_t len, buf_off;
		bool bounce;
		uint64_t pos, span;   /* first call */
		int first, second;    /* DISK_KOP_*, -1 for none */
	} rows[] = {
		{ "aligned read", DISK_OP_READ, 4096, 4096, 0, false, 4096,
		  4096, DISK_KOP_READV, -1 },
		{ "buffer off by 8", DISK_OP_READ, 4096, 4096, 8, true, 4096,
		  4096, DISK_KOP_READV, -1 },
		{ "read at odd offset", DISK_OP_READ, 1000, 1000, 0, true, 512,
		  1536, DISK_KOP_READV, -1 },
		{ "write, odd buffer", DISK_OP_WRITE, 512, 1024, 1, true, 512,
		  1024, DISK_KOP_WRITEV, -1 },
		{ "write at odd offset", DISK_OP_WRITE, 700, 100, 0, true, 512,
		  512, DISK_KOP_READV, DISK_KOP_WRITEV },
		{ "write, odd length", DISK_OP_WRITE, 0, 1000, 0, true, 0,
		  1024, DISK_KOP_READV, DISK_KOP_WRITEV },
	};
	static char mem[16384] __attribute__((aligned(4096)));
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct iovec iov = { mem + rows[i].buf_off, rows[i].len };
		struct disk_req r = { .op = rows[i].op,
				      .offset = rows[i].offset,
				      .iov = &iov, .iovcnt = 1 };
		struct disk_kcall kc;
		struct disk d;
		int ret;

		fake_disk(&d, true, false);
		CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
		CHECK_EQ(d.stats.bounced, rows[i].bounce);
		CHECK_EQ(r.priv.bounce != NULL, rows[i].bounce);
		CHECK_EQ(kc.op, rows[i].first);
		CHECK_EQ(kc.pos, rows[i].pos);
		CHECK_EQ(kc.iovcnt, 1);
		CHECK_EQ(kc.iov[0].iov_len, rows[i].span);
		if (rows[i].bounce)
			CHECK(((uintptr_t)kc.iov[0].iov_base & 511) == 0);
		ret = disk_req_next(&d, &r, rows[i].span, &kc);
		if (rows[i].second >= 0) {
			CHECK_EQ(ret, DISK_REQ_CALL);
			CHECK_EQ(kc.op, rows[i].second);
			CHECK_EQ(kc.pos, rows[i].pos);
			CHECK_EQ(kc.iov[0].iov_len, rows[i].span);
			ret = disk_req_next(&d, &r, rows[i].span, &kc);
		}
		CHECK_EQ(ret, DISK_REQ_DONE);
		CHECK_EQ(r.result, rows[i].len);
		CHECK(r.priv.bounce == NULL);
		CHECK(iov.iov_base == mem + rows[i].buf_off);
	}
}

/* Write-zeroes asks for ZERO_RANGE and falls back to a punched hole. */
static void test_fill_plans(void)
{
	struct disk_req r = { .op = DISK_OP_WRITE_ZEROES, .offset = 1000,
			      .len = 5000 };
	struct disk_kcall kc;
	struct disk d;

	fake_disk(&d, false, false);
	CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.op, DISK_KOP_FALLOCATE);
	CHECK_EQ(kc.mode, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE);
	CHECK_EQ(kc.pos, 1000);
	CHECK_EQ(kc.len, 5000);
	CHECK_EQ(disk_req_next(&d, &r, -EOPNOTSUPP, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.op, DISK_KOP_FALLOCATE);
	CHECK_EQ(kc.mode, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	CHECK_EQ(kc.pos, 1000);
	CHECK_EQ(kc.len, 5000);
	CHECK_EQ(disk_req_next(&d, &r, -EOPNOTSUPP, &kc), DISK_REQ_DONE);
	CHECK_EQ(r.result, -EOPNOTSUPP);

	r.op = DISK_OP_DISCARD;
	CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.mode, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	CHECK_EQ(disk_req_next(&d, &r, 0, &kc), DISK_REQ_DONE);
	CHECK_EQ(r.result, 0);

	r.op = DISK_OP_FLUSH;
	CHECK_EQ(disk_req_start(&d, &pool, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.op, DISK_KOP_FDATASYNC);
	CHECK_EQ(disk_req_next(&d, &r, -EIO, &kc), DISK_REQ_DONE);
	CHECK_EQ(r.result, -EIO);
	CHECK_EQ(d.stats.errors[DISK_OP_FLUSH], 1);
}

/* ---- chunked bounce plans, run against an image in memory ---- */

static uint8_t img[MIB];      /* what the planner's calls act on */
static uint8_t model[MIB];    /* what the image must hold afterwards */

/*
 * Play the kernel: run @kc on img, moving at most @cap bytes (a short
 * transfer), and check what O_DIRECT would refuse on a bounced request.
 */
static int64_t kexec(const struct disk *d, const struct disk_kcall *kc,
		     uint64_t cap, bool bounced, bool *odd)
{
	uint64_t pos = kc->pos, done = 0, m;
	int i;

	for (i = 0; i < kc->iovcnt && done < cap; i++) {
		m = kc->iov[i].iov_len;
		if (m > cap - done)
			m = cap - done;
		if (pos + m > sizeof(img))
			return done ? (int64_t)done : 0;
		if (kc->op == DISK_KOP_WRITEV)
			memcpy(img + pos, kc->iov[i].iov_base, m);
		else
			memcpy(kc->iov[i].iov_base, img + pos, m);
		pos += m;
		done += m;
	}
	/* A bounced call: one buffer within a chunk, aligned at the start. */
	if (bounced && (kc->iovcnt != 1 ||
			kc->iov[0].iov_len > DISK_BOUNCE_CHUNK ||
			(kc->pos + kc->iov[0].iov_len) % d->align))
		*odd = true;
	return (int64_t)done;
}

static void patt(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 9));
}

/*
 * Misaligned requests over several chunks, with short transfers: the
 * image (writes) or the buffers (reads) end up right, every call is
 * aligned and within one chunk, the caller's iovecs and the pool's
 * buffers are all given back.
 */
static void test_chunked_bounce(void)
{
	static const struct {
		const char *name;
		int op;
		uint64_t offset;
		uint32_t seg[3];    /* segment lengths, 0 for none */
		size_t buf_off;     /* misalignment of the buffers */
		uint64_t cap;       /* bytes each call moves at most */
		unsigned int calls; /* kernel calls expected */
	} rows[] = {
		{ "write, head and tail RMW, 3 chunks", DISK_OP_WRITE, 700,
		  { 100000, 300000, 124300 }, 1, UINT64_MAX, 5 },
		{ "write, misaligned memory only", DISK_OP_WRITE, 4096,
		  { 512, 600 * 1024 - 512, 0 }, 3, UINT64_MAX, 3 },
		{ "write, RMW, short transfers", DISK_OP_WRITE, 1000,
		  { 300 * 1024, 212 * 1024, 24 }, 5, 100000, 0 },
		{ "read over 3 chunks", DISK_OP_READ, 512 * 3,
		  { 1000, 700 * 1024, 0 }, 1, UINT64_MAX, 3 },
		{ "read, short transfers", DISK_OP_READ, 999,
		  { 256 * 1024, 256 * 1024, 7 }, 9, 77777, 0 },
		{ "write at the end of the disk", DISK_OP_WRITE,
		  MIB - 300 * 1024 - 1, { 300 * 1024, 1, 0 }, 0, UINT64_MAX,
		  3 },
	};
	static uint8_t mem[MIB + 64] __attribute__((aligned(4096)));
	unsigned int i, j;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct iovec iov[3];
		struct disk_req r = { .op = rows[i].op,
				      .offset = rows[i].offset, .iov = iov };
		struct disk_kcall kc;
		struct disk d;
		uint64_t total = 0;
		unsigned int calls = 0;
		bool odd = false;
		size_t at = rows[i].buf_off;
		int ret;

		fake_disk(&d, true, false);
		for (j = 0; j < 3 && rows[i].seg[j]; j++) {
			/* 8 bytes apart: no segment starts aligned. */
			iov[j] = (struct iovec){ mem + at, rows[i].seg[j] };
			at += rows[i].seg[j] + 8;
			total += rows[i].seg[j];
		}
		r.iovcnt = (int)j;
		patt(img, sizeof(img), 1);
		patt(mem, sizeof(mem), 2);
		memcpy(model, img, sizeof(img));
		for (j = 0; j < (unsigned int)r.iovcnt; j++)
			memcpy(model + rows[i].offset +
			       ((uint8_t *)iov[j].iov_base - mem) -
			       rows[i].buf_off - 8 * j,
			       iov[j].iov_base, iov[j].iov_len);
		ret = disk_req_start(&d, &pool, &r, &kc);
		while (ret == DISK_REQ_CALL && calls < 10000) {
			calls++;
			ret = disk_req_next(&d, &r,
					    kexec(&d, &kc, rows[i].cap, true,
						  &odd), &kc);
		}
		if (ret != DISK_REQ_DONE || (int64_t)r.result != (int64_t)total)
			fprintf(stderr, "row '%s': ret %d result %zd\n",
				rows[i].name, ret, r.result);
		CHECK_EQ(ret, DISK_REQ_DONE);
		CHECK_EQ(r.result, total);
		CHECK(!odd);
		if (rows[i].calls)
			CHECK_EQ(calls, rows[i].calls);
		else
			CHECK_EQ(d.stats.resubmits > 0, 1);
		if (r.op == DISK_OP_WRITE) {
			CHECK(!memcmp(img, model, sizeof(img)));
		} else {
			uint64_t done = 0;

			for (j = 0; j < (unsigned int)r.iovcnt; j++) {
				CHECK(!memcmp(iov[j].iov_base,
					      img + rows[i].offset + done,
					      iov[j].iov_len));
				done += iov[j].iov_len;
			}
		}
		at = rows[i].buf_off;
		for (j = 0; j < (unsigned int)r.iovcnt; j++) {
			CHECK(iov[j].iov_base == mem + at &&
			      iov[j].iov_len == rows[i].seg[j]);
			at += rows[i].seg[j] + 8;
		}
		CHECK(r.priv.bounce == NULL);
		CHECK_EQ(pool.nfree, DISK_BOUNCE_SLOTS);
		CHECK_EQ(d.stats.bounced, 1);
	}
}

/* A request finding every buffer held waits, holding nothing. */
static void test_bounce_budget(void)
{
	static char mem[8 * 4096] __attribute__((aligned(4096)));
	struct disk_req r[DISK_BOUNCE_SLOTS + 1];
	struct iovec iov[DISK_BOUNCE_SLOTS + 1];
	struct disk_kcall kc;
	struct disk_bounce none = { 0 };
	struct disk d;
	unsigned int i;

	fake_disk(&d, true, false);
	for (i = 0; i <= DISK_BOUNCE_SLOTS; i++) {
		iov[i] = (struct iovec){ mem + 4096 * i + 1, 1024 };
		r[i] = (struct disk_req){ .op = DISK_OP_READ,
					  .offset = 4096ull * i,
					  .iov = &iov[i], .iovcnt = 1 };
	}
	for (i = 0; i < DISK_BOUNCE_SLOTS; i++)
		CHECK_EQ(disk_req_start(&d, &pool, &r[i], &kc),
			 DISK_REQ_CALL);
	CHECK_EQ(pool.nfree, 0);
	CHECK_EQ(disk_req_start(&d, &pool, &r[i], &kc), DISK_REQ_WAIT);
	CHECK(r[i].priv.bounce == NULL);
	CHECK_EQ(d.stats.bounce_waits, 1);
	CHECK_EQ(d.stats.bounced, DISK_BOUNCE_SLOTS);
	/* One finishes (a failure returns its buffer too); then it starts. */
	CHECK_EQ(disk_req_next(&d, &r[0], -EIO, &kc), DISK_REQ_DONE);
	CHECK_EQ(pool.nfree, 1);
	CHECK_EQ(disk_req_start(&d, &pool, &r[i], &kc), DISK_REQ_CALL);
	CHECK_EQ(disk_req_next(&d, &r[i], 1024, &kc), DISK_REQ_DONE);
	CHECK_EQ(r[i].result, 1024);
	/* Queue close: abandoned requests give their buffers back. */
	for (i = 1; i < DISK_BOUNCE_SLOTS; i++)
		disk_req_abandon(&r[i]);
	CHECK_EQ(pool.nfree, DISK_BOUNCE_SLOTS);
	/* No buffers at all (not opened for O_DIRECT): refused, no wait. */
	CHECK_EQ(disk_req_start(&d, &none, &r[0], &kc), DISK_REQ_DONE);
	CHECK_EQ(r[0].result, -ENOMEM);
	CHECK_EQ(disk_req_start(&d, NULL, &r[0], &kc), DISK_REQ_DONE);
	CHECK_EQ(r[0].result, -ENOMEM);
}

int main(void)
{
	struct disk d;

	fake_disk(&d, true, false);
	if (disk_bounce_init(&pool, &d)) {
		fprintf(stderr, "bounce buffers: out of memory\n");
		return 1;
	}
	test_start_refusals();
	test_short_continuation();
	test_transfer_failures();
	test_bounce_plans();
	test_fill_plans();
	test_chunked_bounce();
	test_bounce_budget();
	disk_bounce_fini(&pool);
	return test_done();
}
