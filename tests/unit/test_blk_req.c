// SPDX-License-Identifier: Apache-2.0
/*
 * Table-driven tests of blk_req_parse() (virtio 1.2 §5.2.6, §2.7.4): one row
 * per legal layout and one per parse error. Each segment of a row is its own
 * malloc'd buffer, so an ASan build catches any byte read or sliced past a
 * segment, and every data byte the parser hands out is checked by address
 * against the byte the layout says it must be.
 */
#include "test.h"
#include "virtio/blk_req.h"

#include <endian.h>
#include <stdint.h>

#define MAX_SEGS 8
#define CAP 1024ull /* sectors of the pretend disk */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct seg_spec {
	uint32_t len;
	bool w;
};

struct row {
	const char *name;
	uint32_t type;
	uint64_t sector;
	struct seg_spec segs[MAX_SEGS]; /* ends at the first len 0 */
	/* DISCARD/WRITE_ZEROES payload written after the header. */
	unsigned int dwz_count;
	uint64_t dwz_sector;
	uint32_t dwz_num;
	uint32_t dwz_flags;
	bool readonly;
	bool no_dwz;            /* DISCARD/WZ not negotiated */
	unsigned int iov_max;   /* 0: MAX_SEGS */
	enum blk_req_error want;
	uint64_t want_data;     /* bytes in the data iovecs */
	uint64_t want_nsect;
};

#define R_(n) { (n), false }
#define W_(n) { (n), true }

static const struct row rows[] = {
	/* ---- legal layouts ---- */
	{ "IN hdr|data|status", VIRTIO_BLK_T_IN, 8,
	  { R_(16), W_(4096), W_(1) }, .want_data = 4096, .want_nsect = 8 },
	{ "IN header split 8+8", VIRTIO_BLK_T_IN, 3,
	  { R_(8), R_(8), W_(512), W_(1) }, .want_data = 512,
	  .want_nsect = 1 },
	{ "IN data+status share a descriptor", VIRTIO_BLK_T_IN, 0,
	  { R_(16), W_(1025) }, .want_data = 1024, .want_nsect = 2 },
	{ "IN data split oddly, status with data", VIRTIO_BLK_T_IN, 0,
	  { R_(16), W_(100), W_(300), W_(113) }, .want_data = 512,
	  .want_nsect = 1 },
	{ "IN many data segments", VIRTIO_BLK_T_IN, 10,
	  { R_(16), W_(512), W_(512), W_(512), W_(512), W_(512), W_(1) },
	  .want_data = 2560, .want_nsect = 5 },
	{ "IN last sector", VIRTIO_BLK_T_IN, CAP - 1,
	  { R_(16), W_(512), W_(1) }, .want_data = 512, .want_nsect = 1 },
	{ "IN zero length is a no-op", VIRTIO_BLK_T_IN, CAP,
	  { R_(16), W_(1) }, .want_nsect = 0 },
	{ "OUT header and data in one descriptor", VIRTIO_BLK_T_OUT, 5,
	  { R_(16 + 1024), W_(1) }, .want_data = 1024, .want_nsect = 2 },
	{ "OUT header split 4+12, data after", VIRTIO_BLK_T_OUT, 7,
	  { R_(4), R_(12), R_(512), R_(512), W_(1) }, .want_data = 1024,
	  .want_nsect = 2 },
	{ "OUT header spans into the data descriptor", VIRTIO_BLK_T_OUT, 1,
	  { R_(10), R_(6 + 512), W_(1) }, .want_data = 512, .want_nsect = 1 },
	{ "OUT zero length", VIRTIO_BLK_T_OUT, 0, { R_(16), W_(1) },
	  .want_nsect = 0 },
	{ "FLUSH", VIRTIO_BLK_T_FLUSH, 0, { R_(16), W_(1) }, .want_data = 0 },
	{ "FLUSH ignores data and sector", VIRTIO_BLK_T_FLUSH, 99,
	  { R_(16), R_(512), W_(1) }, .want_data = 0 },
	{ "GET_ID 20 bytes", VIRTIO_BLK_T_GET_ID, 0,
	  { R_(16), W_(20), W_(1) }, .want_data = 20 },
	{ "GET_ID id and status share", VIRTIO_BLK_T_GET_ID, 0,
	  { R_(16), W_(21) }, .want_data = 20 },
	{ "GET_ID truncated to what fits", VIRTIO_BLK_T_GET_ID, 0,
	  { R_(16), W_(8), W_(1) }, .want_data = 8 },
	{ "GET_ID big buffer gets 20", VIRTIO_BLK_T_GET_ID, 0,
	  { R_(16), W_(512), W_(1) }, .want_data = 20 },
	{ "DISCARD one descriptor", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(1) }, 1, 64, 8, 0, .want_nsect = 8 },
	{ "DISCARD segment split", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(16), R_(8), R_(8), W_(1) }, 1, CAP - 8, 8, 0,
	  .want_nsect = 8 },
	{ "DISCARD zero sectors", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(1) }, 1, CAP, 0, 0, .want_nsect = 0 },
	{ "WRITE_ZEROES with UNMAP", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(16), R_(16), W_(1) }, 1, 2, 4, VIRTIO_BLK_WZ_F_UNMAP,
	  .want_nsect = 4 },
	{ "WRITE_ZEROES max sectors", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, 0, 1000, 0, .want_nsect = 1000 },

	/* ---- errors, one row each ---- */
	{ "no writable byte", VIRTIO_BLK_T_IN, 0, { R_(16) },
	  .want = BLK_REQ_ERR_NO_STATUS },
	{ "OUT without status", VIRTIO_BLK_T_OUT, 0, { R_(16), R_(512) },
	  .want = BLK_REQ_ERR_NO_STATUS },
	{ "header 15 bytes", VIRTIO_BLK_T_IN, 0, { R_(15), W_(1) },
	  .want = BLK_REQ_ERR_HDR_SHORT },
	{ "header 8+7 bytes", VIRTIO_BLK_T_FLUSH, 0, { R_(8), R_(7), W_(1) },
	  .want = BLK_REQ_ERR_HDR_SHORT },
	{ "no readable bytes", VIRTIO_BLK_T_IN, 0, { W_(513) },
	  .want = BLK_REQ_ERR_HDR_SHORT },
	{ "unknown type", 99, 0, { R_(16), W_(1) },
	  .want = BLK_REQ_ERR_TYPE },
	{ "GET_LIFETIME not offered", VIRTIO_BLK_T_GET_LIFETIME, 0,
	  { R_(16), W_(8), W_(1) }, .want = BLK_REQ_ERR_TYPE },
	{ "legacy FLUSH_OUT", 5, 0, { R_(16), W_(1) },
	  .want = BLK_REQ_ERR_TYPE },
	{ "DISCARD not negotiated", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(1) }, 1, 0, 8, 0, .no_dwz = true,
	  .want = BLK_REQ_ERR_NOT_OFFERED },
	{ "WRITE_ZEROES not negotiated", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, 0, 8, 0, .no_dwz = true,
	  .want = BLK_REQ_ERR_NOT_OFFERED },
	{ "IN with readable data", VIRTIO_BLK_T_IN, 0,
	  { R_(16 + 512), W_(512), W_(1) },
	  .want = BLK_REQ_ERR_IN_READABLE },
	{ "OUT with writable data", VIRTIO_BLK_T_OUT, 0,
	  { R_(16), R_(512), W_(512), W_(1) },
	  .want = BLK_REQ_ERR_EXTRA_WRITABLE },
	{ "DISCARD with writable data", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(2) }, 1, 0, 8, 0,
	  .want = BLK_REQ_ERR_EXTRA_WRITABLE },
	{ "IN 511 bytes", VIRTIO_BLK_T_IN, 0, { R_(16), W_(511), W_(1) },
	  .want = BLK_REQ_ERR_DATA_ALIGN },
	{ "IN 100 bytes with status", VIRTIO_BLK_T_IN, 0,
	  { R_(16), W_(101) }, .want = BLK_REQ_ERR_DATA_ALIGN },
	{ "OUT 513 bytes", VIRTIO_BLK_T_OUT, 0, { R_(16 + 513), W_(1) },
	  .want = BLK_REQ_ERR_DATA_ALIGN },
	{ "IN at capacity", VIRTIO_BLK_T_IN, CAP, { R_(16), W_(512), W_(1) },
	  .want = BLK_REQ_ERR_RANGE },
	{ "IN crossing the end", VIRTIO_BLK_T_IN, CAP - 1,
	  { R_(16), W_(1024), W_(1) }, .want = BLK_REQ_ERR_RANGE },
	{ "IN sector overflows", VIRTIO_BLK_T_IN, UINT64_MAX,
	  { R_(16), W_(512), W_(1) }, .want = BLK_REQ_ERR_RANGE },
	{ "OUT sector wraps to 0", VIRTIO_BLK_T_OUT, UINT64_MAX - 1,
	  { R_(16), R_(1024), W_(1) }, .want = BLK_REQ_ERR_RANGE },
	{ "zero-length IN past capacity", VIRTIO_BLK_T_IN, CAP + 1,
	  { R_(16), W_(1) }, .want = BLK_REQ_ERR_RANGE },
	{ "DISCARD past capacity", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(1) }, 1, CAP, 1, 0, .want = BLK_REQ_ERR_RANGE },
	{ "WRITE_ZEROES sector overflows", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, UINT64_MAX, 1, 0,
	  .want = BLK_REQ_ERR_RANGE },
	{ "OUT on read-only", VIRTIO_BLK_T_OUT, 0, { R_(16 + 512), W_(1) },
	  .readonly = true, .want = BLK_REQ_ERR_READONLY },
	{ "DISCARD on read-only", VIRTIO_BLK_T_DISCARD, 0, { R_(32), W_(1) },
	  1, 0, 8, 0, .readonly = true, .want = BLK_REQ_ERR_READONLY },
	{ "WRITE_ZEROES on read-only", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, 0, 8, 0, .readonly = true,
	  .want = BLK_REQ_ERR_READONLY },
	{ "DISCARD no segment", VIRTIO_BLK_T_DISCARD, 0, { R_(16), W_(1) },
	  .want = BLK_REQ_ERR_SEG_LEN },
	{ "DISCARD 15-byte segment", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(31), W_(1) }, 1, 0, 8, 0, .want = BLK_REQ_ERR_SEG_LEN },
	{ "WRITE_ZEROES 24-byte payload", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(40), W_(1) }, 1, 0, 8, 0, .want = BLK_REQ_ERR_SEG_LEN },
	{ "DISCARD two segments", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(48), W_(1) }, 2, 0, 8, 0, .want = BLK_REQ_ERR_SEG_COUNT },
	{ "DISCARD with UNMAP", VIRTIO_BLK_T_DISCARD, 0, { R_(32), W_(1) },
	  1, 0, 8, VIRTIO_BLK_WZ_F_UNMAP, .want = BLK_REQ_ERR_SEG_FLAGS },
	{ "DISCARD unknown flag", VIRTIO_BLK_T_DISCARD, 0, { R_(32), W_(1) },
	  1, 0, 8, 2, .want = BLK_REQ_ERR_SEG_FLAGS },
	{ "WRITE_ZEROES unknown flag", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, 0, 8, 3, .want = BLK_REQ_ERR_SEG_FLAGS },
	{ "DISCARD above max sectors", VIRTIO_BLK_T_DISCARD, 0,
	  { R_(32), W_(1) }, 1, 0, 513, 0, .want = BLK_REQ_ERR_SEG_SECTORS },
	{ "WRITE_ZEROES above max sectors", VIRTIO_BLK_T_WRITE_ZEROES, 0,
	  { R_(32), W_(1) }, 1, 0, 1001, 0,
	  .want = BLK_REQ_ERR_SEG_SECTORS },
	{ "more data segments than iovecs", VIRTIO_BLK_T_IN, 0,
	  { R_(16), W_(512), W_(512), W_(512), W_(1) }, .iov_max = 2,
	  .want = BLK_REQ_ERR_TOO_MANY_IOV },
};

/* The chain of one row: segments, and the host address of each byte of
 * the readable and the writable area in order. */
struct chain {
	struct virtq_seg segs[MAX_SEGS];
	struct virtq_elem e;
	uint8_t *raddr[8192];
	uint8_t *waddr[8192];
	uint32_t rlen, wlen;
};

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void chain_build(struct chain *c, const struct row *row)
{
	uint8_t stream[4096];
	uint32_t off = 0, j;
	unsigned int i, k;

	memset(c, 0, sizeof(*c));
	/* Readable stream: header, DISCARD/WZ segments, then a pattern. */
	for (j = 0; j < sizeof(stream); j++)
		stream[j] = (uint8_t)(j * 7 + 3);
	put_le(stream, row->type, 4);
	put_le(stream + 4, 0xdeadbeef, 4); /* reserved: ignored */
	put_le(stream + 8, row->sector, 8);
	for (k = 0; k < row->dwz_count; k++) {
		uint8_t *s = stream + 16 + 16 * k;

		put_le(s, row->dwz_sector, 8);
		put_le(s + 8, row->dwz_num, 4);
		put_le(s + 12, row->dwz_flags, 4);
	}
	c->e.segs = c->segs;
	c->e.max_segs = MAX_SEGS;
	for (i = 0; i < MAX_SEGS && row->segs[i].len; i++) {
		const struct seg_spec *s = &row->segs[i];
		uint8_t *buf;

		/* The tables below must fit the rows. */
		if (s->w ? c->wlen + s->len > ARRAY_SIZE(c->waddr) :
			   c->rlen + s->len > sizeof(stream)) {
			fprintf(stderr, "row %s too big\n", row->name);
			exit(1);
		}
		buf = malloc(s->len);

		c->segs[i].addr = buf;
		c->segs[i].len = s->len;
		for (j = 0; j < s->len; j++) {
			if (s->w) {
				buf[j] = 0xee;
				c->waddr[c->wlen++] = buf + j;
			} else {
				buf[j] = stream[off++];
				c->raddr[c->rlen++] = buf + j;
			}
		}
		if (s->w) {
			c->e.nr_in++;
			c->e.in_len += s->len;
		} else {
			c->e.nr_out++;
			c->e.out_len += s->len;
		}
	}
}

static void chain_free(struct chain *c)
{
	unsigned int i;

	for (i = 0; i < MAX_SEGS; i++)
		free(c->segs[i].addr);
}

/* Every data byte handed out must be the byte the layout puts there. */
static void check_data(const struct row *row, const struct chain *c,
		       const struct blk_req *req)
{
	uint8_t *const *want = row->type == VIRTIO_BLK_T_OUT ?
			       c->raddr + 16 : c->waddr;
	uint64_t k = 0, total = 0;
	unsigned int i;
	size_t j;
	bool ok = true;

	for (i = 0; i < req->iovcnt; i++) {
		CHECK(req->iov[i].iov_len > 0);
		total += req->iov[i].iov_len;
		for (j = 0; j < req->iov[i].iov_len && ok; j++, k++)
			ok = (uint8_t *)req->iov[i].iov_base + j == want[k];
	}
	CHECK(ok);
	CHECK_EQ(total, req->data_len);
	CHECK_EQ(req->data_len, row->want_data);
}

static void run_row(const struct row *row)
{
	struct blk_req_limits lim = {
		.capacity = CAP,
		.readonly = row->readonly,
		.discard = !row->no_dwz,
		.write_zeroes = !row->no_dwz,
		.max_discard_sectors = 512,
		.max_write_zeroes_sectors = 1000,
	};
	struct iovec iov[MAX_SEGS];
	struct blk_req req = {
		.iov = iov,
		.iov_max = row->iov_max ? row->iov_max : MAX_SEGS,
	};
	struct chain *c = calloc(1, sizeof(*c));
	int fails = test_fail_count;
	enum blk_req_error err;

	chain_build(c, row);
	err = blk_req_parse(&c->e, &lim, &req);
	CHECK_EQ(err, row->want);
	if (row->want == BLK_REQ_ERR_NO_STATUS) {
		CHECK(req.status == NULL);
	} else {
		/* The status is the last writable byte, wherever it is. */
		CHECK(c->wlen > 0 && req.status == c->waddr[c->wlen - 1]);
	}
	if (row->want == BLK_REQ_OK) {
		CHECK_EQ(req.type, row->type);
		CHECK_EQ(req.nsect, row->want_nsect);
		if (row->dwz_count) {
			CHECK_EQ(req.sector, row->dwz_sector);
			CHECK_EQ(req.flags, row->dwz_flags);
		} else if (row->type == VIRTIO_BLK_T_IN ||
			   row->type == VIRTIO_BLK_T_OUT) {
			CHECK_EQ(req.sector, row->sector);
		} else {
			CHECK_EQ(req.sector, 0);
		}
		check_data(row, c, &req);
	}
	if (test_fail_count != fails)
		fprintf(stderr, "  in row: %s\n", row->name);
	chain_free(c);
	free(c);
}

/* The status mapping the spec prescribes for each error (§5.2.6.2). */
static void test_status_map(void)
{
	static const struct {
		enum blk_req_error err;
		uint8_t status;
	} map[] = {
		{ BLK_REQ_OK, VIRTIO_BLK_S_OK },
		{ BLK_REQ_ERR_TYPE, VIRTIO_BLK_S_UNSUPP },
		{ BLK_REQ_ERR_NOT_OFFERED, VIRTIO_BLK_S_UNSUPP },
		{ BLK_REQ_ERR_SEG_COUNT, VIRTIO_BLK_S_UNSUPP },
		{ BLK_REQ_ERR_SEG_FLAGS, VIRTIO_BLK_S_UNSUPP },
		{ BLK_REQ_ERR_READONLY, VIRTIO_BLK_S_IOERR },
		{ BLK_REQ_ERR_RANGE, VIRTIO_BLK_S_IOERR },
		{ BLK_REQ_ERR_HDR_SHORT, VIRTIO_BLK_S_IOERR },
		{ BLK_REQ_ERR_DATA_ALIGN, VIRTIO_BLK_S_IOERR },
		{ BLK_REQ_ERR_SEG_SECTORS, VIRTIO_BLK_S_IOERR },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		CHECK_EQ(blk_req_status(map[i].err), map[i].status);
	for (i = 0; i < BLK_REQ_ERR_COUNT; i++)
		CHECK(strcmp(blk_req_error_str(i), "unknown") != 0);
	CHECK(strcmp(blk_req_error_str(BLK_REQ_ERR_COUNT), "unknown") == 0);
}

/* Every error code has a row that produces it. */
static void test_every_error_has_a_row(void)
{
	bool seen[BLK_REQ_ERR_COUNT] = { false };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seen[rows[i].want] = true;
	for (i = 0; i < BLK_REQ_ERR_COUNT; i++) {
		if (!seen[i])
			fprintf(stderr, "no row for error %u (%s)\n", i,
				blk_req_error_str(i));
		CHECK(seen[i]);
	}
}

int main(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		run_row(&rows[i]);
	test_status_map();
	test_every_error_has_a_row();
	return test_done();
}
