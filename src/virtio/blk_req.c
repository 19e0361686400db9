// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-blk request parsing (virtio 1.2 §5.2.6): a pure function from a
 * popped descriptor chain to a checked struct blk_req. Guest-written fields
 * are copied out once and checked on the copy; every range check is written
 * so that it cannot overflow (n > total - start).
 */
#include "virtio/blk_req.h"

#include <endian.h>
#include <string.h>

static const char *const blk_req_error_names[BLK_REQ_ERR_COUNT] = {
	[BLK_REQ_OK] = "ok",
	[BLK_REQ_ERR_NO_STATUS] = "no writable status byte",
	[BLK_REQ_ERR_HDR_SHORT] = "header shorter than 16 bytes",
	[BLK_REQ_ERR_TYPE] = "unknown request type",
	[BLK_REQ_ERR_NOT_OFFERED] = "request type not negotiated",
	[BLK_REQ_ERR_IN_READABLE] = "read with readable data",
	[BLK_REQ_ERR_EXTRA_WRITABLE] = "writable data in a write request",
	[BLK_REQ_ERR_DATA_ALIGN] = "data not a multiple of 512 bytes",
	[BLK_REQ_ERR_RANGE] = "sectors beyond capacity",
	[BLK_REQ_ERR_READONLY] = "write to a read-only disk",
	[BLK_REQ_ERR_SEG_LEN] = "bad discard/write-zeroes payload length",
	[BLK_REQ_ERR_SEG_COUNT] = "too many discard/write-zeroes segments",
	[BLK_REQ_ERR_SEG_FLAGS] = "unsupported discard/write-zeroes flags",
	[BLK_REQ_ERR_SEG_SECTORS] = "discard/write-zeroes range too large",
	[BLK_REQ_ERR_TOO_MANY_IOV] = "too many data segments",
};

const char *blk_req_error_str(enum blk_req_error err)
{
	if ((unsigned int)err >= BLK_REQ_ERR_COUNT)
		return "unknown";
	return blk_req_error_names[err];
}

uint8_t blk_req_status(enum blk_req_error err)
{
	switch (err) {
	case BLK_REQ_OK:
		return VIRTIO_BLK_S_OK;
	case BLK_REQ_ERR_TYPE:
	case BLK_REQ_ERR_NOT_OFFERED:
	case BLK_REQ_ERR_SEG_COUNT:
	case BLK_REQ_ERR_SEG_FLAGS:
		return VIRTIO_BLK_S_UNSUPP;
	default:
		return VIRTIO_BLK_S_IOERR;
	}
}

/*
 * Copy @len bytes starting @skip bytes into segments [0, @n) to @dst.
 * The caller has checked that the segments hold skip + len bytes.
 */
static void segs_copy(void *dst, const struct virtq_seg *segs, unsigned int n,
		      uint64_t skip, uint64_t len)
{
	uint8_t *d = dst;
	unsigned int i;

	for (i = 0; i < n && len; i++) {
		uint64_t take;

		if (skip >= segs[i].len) {
			skip -= segs[i].len;
			continue;
		}
		take = segs[i].len - skip;
		if (take > len)
			take = len;
		memcpy(d, (uint8_t *)segs[i].addr + skip, take);
		d += take;
		len -= take;
		skip = 0;
	}
}

/* Describe bytes [@skip, @skip + @len) of segments [0, @n) in out->iov. */
static enum blk_req_error segs_slice(const struct virtq_seg *segs,
				     unsigned int n, uint64_t skip,
				     uint64_t len, struct blk_req *out)
{
	unsigned int i;

	out->iovcnt = 0;
	out->data_len = len;
	for (i = 0; i < n && len; i++) {
		uint64_t take;

		if (skip >= segs[i].len) {
			skip -= segs[i].len;
			continue;
		}
		if (out->iovcnt >= out->iov_max)
			return BLK_REQ_ERR_TOO_MANY_IOV;
		take = segs[i].len - skip;
		if (take > len)
			take = len;
		out->iov[out->iovcnt].iov_base = (uint8_t *)segs[i].addr + skip;
		out->iov[out->iovcnt].iov_len = take;
		out->iovcnt++;
		len -= take;
		skip = 0;
	}
	return BLK_REQ_OK;
}

/* [sector, sector + nsect) within capacity, written not to overflow. */
static bool in_range(uint64_t sector, uint64_t nsect, uint64_t capacity)
{
	return sector <= capacity && nsect <= capacity - sector;
}

static enum blk_req_error parse_in(const struct virtq_elem *e,
				   const struct blk_req_limits *lim,
				   struct blk_req *out)
{
	const struct virtq_seg *wsegs = e->segs + e->nr_out;
	uint64_t len = e->in_len - 1; /* the status byte is not data */
	if (e->out_len > VIRTIO_BLK_HDR_BYTES)
		return BLK_REQ_ERR_IN_READABLE;
	if (len % BLK_SECTOR_SIZE)
		return BLK_REQ_ERR_DATA_ALIGN;
	out->nsect = len >> BLK_SECTOR_SHIFT;
	if (!in_range(out->sector, out->nsect, lim->capacity))
		return BLK_REQ_ERR_RANGE;
	return segs_slice(wsegs, e->nr_in, 0, len, out);
}

static enum blk_req_error parse_out(const struct virtq_elem *e,
				    const struct blk_req_limits *lim,
				    struct blk_req *out)
{
	uint64_t len = e->out_len - VIRTIO_BLK_HDR_BYTES;

	if (e->in_len > 1)
		return BLK_REQ_ERR_EXTRA_WRITABLE;
	if (len % BLK_SECTOR_SIZE)
		return BLK_REQ_ERR_DATA_ALIGN;
	if (lim->readonly)
		return BLK_REQ_ERR_READONLY;
	out->nsect = len >> BLK_SECTOR_SHIFT;
	if (!in_range(out->sector, out->nsect, lim->capacity))
		return BLK_REQ_ERR_RANGE;
	return segs_slice(e->segs, e->nr_out, VIRTIO_BLK_HDR_BYTES, len, out);
}

static enum blk_req_error parse_get_id(const struct virtq_elem *e,
				       struct blk_req *out)
{
	uint64_t len = e->in_len - 1;

	if (len > VIRTIO_BLK_ID_BYTES)
		len = VIRTIO_BLK_ID_BYTES;
	out->sector = 0;
	return segs_slice(e->segs + e->nr_out, e->nr_in, 0, len, out);
}

/* DISCARD and WRITE_ZEROES: one segment of {le64, le32, le32}. */
static enum blk_req_error parse_dwz(const struct virtq_elem *e,
				    const struct blk_req_limits *lim,
				    struct blk_req *out)
{
	bool discard = out->type == VIRTIO_BLK_T_DISCARD;
	uint64_t len = e->out_len - VIRTIO_BLK_HDR_BYTES;
	uint8_t seg[VIRTIO_BLK_DWZ_BYTES];
	uint32_t max, allowed, v32;
	uint64_t v64;

	if (!(discard ? lim->discard : lim->write_zeroes))
		return BLK_REQ_ERR_NOT_OFFERED;
	if (e->in_len > 1)
		return BLK_REQ_ERR_EXTRA_WRITABLE;
	if (!len || len % VIRTIO_BLK_DWZ_BYTES)
		return BLK_REQ_ERR_SEG_LEN;
	/* max_discard_seg = max_write_zeroes_seg = 1 in config space. */
	if (len > VIRTIO_BLK_DWZ_BYTES)
		return BLK_REQ_ERR_SEG_COUNT;
	segs_copy(seg, e->segs, e->nr_out, VIRTIO_BLK_HDR_BYTES, sizeof(seg));
	memcpy(&v64, seg, 8);
	out->sector = le64toh(v64);
	memcpy(&v32, seg + 8, 4);
	out->nsect = le32toh(v32);
	memcpy(&v32, seg + 12, 4);
	out->flags = le32toh(v32);
	/* §5.2.6.2: unknown flags, and UNMAP on DISCARD, are UNSUPP. */
	allowed = discard ? 0 : VIRTIO_BLK_WZ_F_UNMAP;
	if (out->flags & ~allowed)
		return BLK_REQ_ERR_SEG_FLAGS;
	max = discard ? lim->max_discard_sectors :
			lim->max_write_zeroes_sectors;
	if (out->nsect > max)
		return BLK_REQ_ERR_SEG_SECTORS;
	if (lim->readonly)
		return BLK_REQ_ERR_READONLY;
	if (!in_range(out->sector, out->nsect, lim->capacity))
		return BLK_REQ_ERR_RANGE;
	return BLK_REQ_OK;
}

enum blk_req_error blk_req_parse(const struct virtq_elem *e,
				 const struct blk_req_limits *lim,
				 struct blk_req *out)
{
	const struct virtq_seg *last;
	uint8_t hdr[VIRTIO_BLK_HDR_BYTES];
	uint32_t type;
	uint64_t sector;

	out->type = 0;
	out->sector = 0;
	out->nsect = 0;
	out->flags = 0;
	out->status = NULL;
	out->iovcnt = 0;
	out->data_len = 0;

	/* Status: the last writable byte (§5.2.6, no layout assumed). */
	if (!e->nr_in || !e->in_len)
		return BLK_REQ_ERR_NO_STATUS;
	last = &e->segs[e->nr_out + e->nr_in - 1];
	out->status = (uint8_t *)last->addr + last->len - 1;

	if (e->out_len < VIRTIO_BLK_HDR_BYTES)
		return BLK_REQ_ERR_HDR_SHORT;
	segs_copy(hdr, e->segs, e->nr_out, 0, sizeof(hdr));
	memcpy(&type, hdr, 4);
	memcpy(&sector, hdr + 8, 8);
	out->type = le32toh(type);
	out->sector = le64toh(sector);

	switch (out->type) {
	case VIRTIO_BLK_T_IN:
		return parse_in(e, lim, out);
	case VIRTIO_BLK_T_OUT:
		return parse_out(e, lim, out);
	case VIRTIO_BLK_T_FLUSH:
		out->sector = 0;
		return BLK_REQ_OK;
	case VIRTIO_BLK_T_GET_ID:
		return parse_get_id(e, out);
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		return parse_dwz(e, lim, out);
	default:
		return BLK_REQ_ERR_TYPE;
	}
}
