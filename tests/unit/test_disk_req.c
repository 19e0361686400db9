// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the disk request planner (disk_req.c) with no file at all:
 * request validation, continuation of short transfers across iovec segments
 * (and restoring the caller's iovecs), O_DIRECT bounce and read-modify-write
 * plans, and the write-zeroes fallback. Each table row feeds kernel results
 * and checks the next kernel call the planner asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>

#include "test.h"
#include "virtio/disk_engine.h"

#define MIB (1024 * 1024)

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
		ret = disk_req_start(&d, &r, &kc);
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
	CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
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
		CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
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
		CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
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
	CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
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
	CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.mode, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	CHECK_EQ(disk_req_next(&d, &r, 0, &kc), DISK_REQ_DONE);
	CHECK_EQ(r.result, 0);

	r.op = DISK_OP_FLUSH;
	CHECK_EQ(disk_req_start(&d, &r, &kc), DISK_REQ_CALL);
	CHECK_EQ(kc.op, DISK_KOP_FDATASYNC);
	CHECK_EQ(disk_req_next(&d, &r, -EIO, &kc), DISK_REQ_DONE);
	CHECK_EQ(r.result, -EIO);
	CHECK_EQ(d.stats.errors[DISK_OP_FLUSH], 1);
}

int main(void)
{
	test_start_refusals();
	test_short_continuation();
	test_transfer_failures();
	test_bounce_plans();
	test_fill_plans();
	return test_done();
}
