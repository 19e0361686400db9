// SPDX-License-Identifier: Apache-2.0
/*
 * Request planning shared by every disk engine: range and permission checks,
 * O_DIRECT bounce buffers (a queue's preallocated chunks, used one chunk of
 * the request at a time, read-modify-write where the offset or length is
 * not block aligned), continuation of short transfers, and the fallocate
 * modes behind discard and write-zeroes, and a snapshot's split of reads
 * between overlay and image (disk_overlay.c copies clusters up before
 * writes). Engines see only struct disk_kcall.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "virtio/disk_engine.h"

enum {
	STAGE_RW,           /* transfer straight on the caller's iovecs */
	STAGE_BOUNCE_READ,  /* read a chunk of the span, then copy out */
	STAGE_BOUNCE_WRITE, /* write a chunk of the span from the bounce */
	STAGE_RMW_READ,     /* read a chunk, patch, then write it */
	STAGE_FLUSH,
	STAGE_FALLOC,
	STAGE_ZERO_RANGE,   /* falls back to STAGE_FALLOC punch-hole */
	STAGE_OV_READ,      /* snapshot: one run of clusters from one file */
};

static bool req_on_caller_iov(const struct disk_req_priv *p)
{
	return p->stage == STAGE_RW || p->stage == STAGE_OV_READ;
}

static void req_iov_restore(struct disk_req *r)
{
	struct disk_req_priv *p = &r->priv;
	struct iovec *iov = req_on_caller_iov(p) ? r->iov : &p->biov;

	/* The tail was cut after the front: undo in reverse order. */
	if (p->tail_idx >= 0) {
		iov[p->tail_idx] = p->saved_tail;
		p->tail_idx = -1;
	}
	if (p->saved_idx >= 0) {
		iov[p->saved_idx] = p->saved;
		p->saved_idx = -1;
	}
}

/* ---- the queue's bounce buffers ---- */

int disk_bounce_init(struct disk_bounce *b, const struct disk *d)
{
	void *mem;
	unsigned int i;

	memset(b, 0, sizeof(*b));
	if (d->ov) {
		/* Snapshot copy-up moves one cluster at a time through it. */
		b->cow = malloc(DISK_OVERLAY_CLUSTER);
		if (!b->cow)
			return -ENOMEM;
	}
	if (!d->direct)
		return 0;
	/* Chunk-aligned: any mem_align up to the chunk size is met. */
	if (posix_memalign(&mem, DISK_BOUNCE_CHUNK, DISK_BOUNCE_BYTES)) {
		free(b->cow);
		b->cow = NULL;
		return -ENOMEM;
	}
	b->mem = mem;
	for (i = 0; i < DISK_BOUNCE_SLOTS; i++)
		b->free[i] = (uint8_t)i;
	b->nfree = DISK_BOUNCE_SLOTS;
	return 0;
}

void disk_bounce_fini(struct disk_bounce *b)
{
	free(b->mem);
	b->mem = NULL;
	b->nfree = 0;
	free(b->cow);
	b->cow = NULL;
}

static void req_bounce_put(struct disk_req *r)
{
	struct disk_bounce *b = r->priv.pool;
	size_t i;

	if (!r->priv.bounce)
		return;
	i = (size_t)((uint8_t *)r->priv.bounce - b->mem) / DISK_BOUNCE_CHUNK;
	assert(i < DISK_BOUNCE_SLOTS && b->nfree < DISK_BOUNCE_SLOTS);
	b->free[b->nfree++] = (uint8_t)i;
	r->priv.bounce = NULL;
}

/* ---- planning ---- */

static int req_finish(struct disk *d, struct disk_req *r, int64_t res)
{
	req_iov_restore(r);
	req_bounce_put(r);
	r->result = res;
	if (res < 0 && (unsigned int)r->op < DISK_OP_COUNT)
		atomic_fetch_add_explicit(&d->stats.errors[r->op], 1,
					  memory_order_relaxed);
	return DISK_REQ_DONE;
}

/*
 * Cut the segments from @i on to the @want bytes of a snapshot read's run
 * (a run ends inside the request wherever the data's file changes).
 * Return: how many segments the run uses.
 */
static int req_iov_cut(struct disk_req_priv *p, struct iovec *iov, int i,
		       int cnt, uint64_t want)
{
	uint64_t acc = 0;
	int j = i;

	while (j < cnt && acc + iov[j].iov_len < want) {
		acc += iov[j].iov_len;
		j++;
	}
	if (j == cnt)
		return cnt - i;
	if (acc + iov[j].iov_len > want) {
		p->saved_tail = iov[j];
		p->tail_idx = j;
		iov[j].iov_len = want - acc;
	}
	return j - i + 1;
}

/* Describe the rest of the current transfer, past p->kdone bytes. */
static int req_xfer(struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	bool caller = req_on_caller_iov(p);
	struct iovec *iov = caller ? r->iov : &p->biov;
	int cnt = caller ? r->iovcnt : 1;
	uint64_t skip = p->kdone;
	int i = 0, n;

	/* A snapshot read's run starts where the last one ended. */
	if (p->stage == STAGE_OV_READ)
		skip += p->kpos - r->offset;
	req_iov_restore(r);
	while (i < cnt && skip >= iov[i].iov_len) {
		skip -= iov[i].iov_len;
		i++;
	}
	if (skip) {
		p->saved = iov[i];
		p->saved_idx = i;
		iov[i].iov_base = (char *)iov[i].iov_base + skip;
		iov[i].iov_len -= skip;
	}
	n = cnt - i;
	if (p->stage == STAGE_OV_READ)
		n = req_iov_cut(p, iov, i, cnt, p->klen - p->kdone);
	kc->op = (p->stage == STAGE_BOUNCE_WRITE ||
		  (p->stage == STAGE_RW && r->op == DISK_OP_WRITE)) ?
		 DISK_KOP_WRITEV : DISK_KOP_READV;
	kc->file = (enum disk_file)p->kfile;
	kc->pos = p->kpos + p->kdone;
	kc->len = 0;
	kc->mode = 0;
	kc->iov = &iov[i];
	kc->iovcnt = n;
	return DISK_REQ_CALL;
}

/* Plan the snapshot read's run of clusters that starts at p->kpos. */
static int req_ov_run(struct disk *d, struct disk_req *r,
		      struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	enum disk_file file;

	p->stage = STAGE_OV_READ;
	p->klen = disk_overlay_run(d, p->kpos, r->offset + p->total, &file);
	p->kfile = (int)file;
	p->kdone = 0;
	return req_xfer(r, kc);
}

/*
 * Copy @n bytes between @buf and bytes [@from, @from + @n) of the caller's
 * iovecs; @to_iov picks the direction.
 */
void disk_req_copy(struct disk_req *r, uint64_t from, uint8_t *buf,
		   uint64_t n, bool to_iov)
{
	size_t m;
	int i;

	for (i = 0; i < r->iovcnt && n; i++) {
		struct iovec *v = &r->iov[i];

		if (from >= v->iov_len) {
			from -= v->iov_len;
			continue;
		}
		m = v->iov_len - from < n ? v->iov_len - from : n;
		if (to_iov)
			memcpy((char *)v->iov_base + from, buf, m);
		else
			memcpy(buf, (char *)v->iov_base + from, m);
		buf += m;
		n -= m;
		from = 0;
	}
}

/*
 * Copy between the current chunk (file bytes kpos .. kpos + klen) and the
 * part of the request inside it.
 */
static void req_chunk_copy(struct disk_req *r, bool to_iov)
{
	struct disk_req_priv *p = &r->priv;
	uint64_t end = r->offset + p->total, cend = p->kpos + p->klen;
	uint64_t lo = p->kpos > r->offset ? p->kpos : r->offset;
	uint64_t hi = cend < end ? cend : end;

	disk_req_copy(r, lo - r->offset, (uint8_t *)p->bounce + (lo - p->kpos),
		      hi - lo, to_iov);
}

static bool req_chunk_covered(const struct disk_req *r)
{
	const struct disk_req_priv *p = &r->priv;

	return p->kpos >= r->offset &&
	       p->kpos + p->klen <= r->offset + p->total;
}

/* Plan the chunk of the aligned span that starts at p->kpos. */
static int req_chunk(struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	uint64_t left = p->span_end - p->kpos;

	p->klen = left < DISK_BOUNCE_CHUNK ? left : DISK_BOUNCE_CHUNK;
	p->kdone = 0;
	p->biov.iov_base = p->bounce;
	p->biov.iov_len = p->klen;
	if (r->op == DISK_OP_READ) {
		p->stage = STAGE_BOUNCE_READ;
	} else if (req_chunk_covered(r)) {
		req_chunk_copy(r, false);
		p->stage = STAGE_BOUNCE_WRITE;
	} else {
		/* Partly covered blocks: read them first (not atomic). */
		p->stage = STAGE_RMW_READ;
	}
	return req_xfer(r, kc);
}

static bool req_aligned(const struct disk *d, const struct disk_req *r)
{
	uint64_t a = d->align - 1, m = d->mem_align - 1;
	int i;

	if ((r->offset | r->priv.total) & a)
		return false;
	for (i = 0; i < r->iovcnt; i++)
		if (((uintptr_t)r->iov[i].iov_base & m) ||
		    (r->iov[i].iov_len & a))
			return false;
	return true;
}

/*
 * Move a misaligned request through one bounce buffer, chunk by chunk
 * over the aligned span that covers it. The span's end cannot overflow:
 * the request ends within the disk, and the disk size is below 2^63.
 */
static int req_start_bounce(struct disk *d, struct disk_bounce *b,
			    struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	uint64_t mask = (uint64_t)d->align - 1;

	if (!b || !b->mem || d->align > DISK_BOUNCE_CHUNK ||
	    d->mem_align > DISK_BOUNCE_CHUNK)
		return req_finish(d, r, -ENOMEM);
	if (!b->nfree) {
		atomic_fetch_add_explicit(&d->stats.bounce_waits, 1,
					  memory_order_relaxed);
		return DISK_REQ_WAIT;
	}
	p->pool = b;
	p->bounce = b->mem + (size_t)b->free[--b->nfree] * DISK_BOUNCE_CHUNK;
	atomic_fetch_add_explicit(&d->stats.bounced, 1, memory_order_relaxed);
	p->kpos = r->offset & ~mask;
	p->span_end = (r->offset + p->total + mask) & ~mask;
	return req_chunk(r, kc);
}

static int req_start_rw(struct disk *d, struct disk_bounce *b,
			struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	uint64_t total = 0;
	int i;

	if (r->op == DISK_OP_WRITE && d->readonly)
		return req_finish(d, r, -EROFS);
	if (r->iovcnt < 0 || r->iovcnt > DISK_IOV_MAX ||
	    (r->iovcnt && !r->iov))
		return req_finish(d, r, -EINVAL);
	for (i = 0; i < r->iovcnt; i++) {
		if (r->iov[i].iov_len > d->size - total)
			return req_finish(d, r, -EINVAL);
		total += r->iov[i].iov_len;
	}
	if (r->offset > d->size || total > d->size - r->offset)
		return req_finish(d, r, -EINVAL);
	if (!total)
		return req_finish(d, r, 0);
	p->total = total;
	if (d->ov && r->op == DISK_OP_READ) {
		p->kpos = r->offset;
		return req_ov_run(d, r, kc);
	}
	if (d->ov) {
		int ret = disk_overlay_prepare(d, b ? b->cow : NULL, r, total);

		if (ret)
			return req_finish(d, r, ret < 0 ? ret : (int64_t)total);
	}
	if (d->direct && !req_aligned(d, r))
		return req_start_bounce(d, b, r, kc);
	p->stage = STAGE_RW;
	p->kpos = r->offset;
	p->klen = total;
	return req_xfer(r, kc);
}

static int req_start_fill(struct disk *d, struct disk_bounce *b,
			  struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	bool discard = r->op == DISK_OP_DISCARD;
	uint64_t range[2] = { r->offset, r->len };

	if (d->readonly)
		return req_finish(d, r, -EROFS);
	if (r->offset > d->size || r->len > d->size - r->offset)
		return req_finish(d, r, -EINVAL);
	if (discard ? !d->can_discard : !d->can_write_zeroes)
		return req_finish(d, r, -EOPNOTSUPP);
	if (!r->len)
		return req_finish(d, r, 0);
	if (d->is_blockdev) {
		/* No io_uring opcode for these: run them right here. */
		if (ioctl(d->fd, discard ? BLKDISCARD : BLKZEROOUT, range))
			return req_finish(d, r, -errno);
		return req_finish(d, r, 0);
	}
	if (d->ov) {
		/* Unwritten clusters must read back as zeroes, not as
		 * the image. */
		int ret = disk_overlay_prepare(d, b ? b->cow : NULL, r, r->len);

		if (ret < 0)
			return req_finish(d, r, ret);
	}
	p->kpos = r->offset;
	p->klen = r->len;
	p->stage = discard ? STAGE_FALLOC : STAGE_ZERO_RANGE;
	p->fmode = FALLOC_FL_KEEP_SIZE | (discard ? FALLOC_FL_PUNCH_HOLE :
						    FALLOC_FL_ZERO_RANGE);
	kc->op = DISK_KOP_FALLOCATE;
	kc->file = DISK_FILE_MAIN;
	kc->pos = p->kpos;
	kc->len = p->klen;
	kc->mode = p->fmode;
	kc->iov = NULL;
	kc->iovcnt = 0;
	return DISK_REQ_CALL;
}

int disk_req_start(struct disk *d, struct disk_bounce *b, struct disk_req *r,
		   struct disk_kcall *kc)
{
	memset(&r->priv, 0, sizeof(r->priv));
	r->priv.saved_idx = -1;
	r->priv.tail_idx = -1;
	r->result = 0;
	switch (r->op) {
	case DISK_OP_READ:
	case DISK_OP_WRITE:
		return req_start_rw(d, b, r, kc);
	case DISK_OP_FLUSH:
		/* A snapshot's overlay is dropped at exit: nothing to keep. */
		if (d->cache == DISK_CACHE_UNSAFE || d->snapshot)
			return req_finish(d, r, 0);
		r->priv.stage = STAGE_FLUSH;
		memset(kc, 0, sizeof(*kc));
		kc->op = DISK_KOP_FDATASYNC;
		return DISK_REQ_CALL;
	case DISK_OP_DISCARD:
	case DISK_OP_WRITE_ZEROES:
		return req_start_fill(d, b, r, kc);
	default:
		return req_finish(d, r, -EINVAL);
	}
}

static int req_next_xfer(struct disk *d, struct disk_req *r, int64_t res,
			 struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;

	if (res == -EINTR)
		return req_xfer(r, kc);
	if (res < 0)
		return req_finish(d, r, res);
	/* No progress: end of file on an image that shrank, or worse. */
	if (res == 0 || (uint64_t)res > p->klen - p->kdone)
		return req_finish(d, r, -EIO);
	p->kdone += res;
	if (p->kdone < p->klen) {
		atomic_fetch_add_explicit(&d->stats.resubmits, 1,
					  memory_order_relaxed);
		return req_xfer(r, kc);
	}
	req_iov_restore(r);
	switch (p->stage) {
	case STAGE_RW:
		return req_finish(d, r, p->total);
	case STAGE_OV_READ:
		p->kpos += p->klen;
		if (p->kpos < r->offset + p->total)
			return req_ov_run(d, r, kc);
		return req_finish(d, r, p->total);
	case STAGE_RMW_READ:
		/* Patch the chunk, then write it back whole. */
		req_chunk_copy(r, false);
		p->stage = STAGE_BOUNCE_WRITE;
		p->kdone = 0;
		return req_xfer(r, kc);
	case STAGE_BOUNCE_READ:
		req_chunk_copy(r, true);
		break;
	default:
		break;
	}
	p->kpos += p->klen;
	if (p->kpos < p->span_end)
		return req_chunk(r, kc);
	return req_finish(d, r, p->total);
}

int disk_req_next(struct disk *d, struct disk_req *r, int64_t res,
		  struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;

	switch (p->stage) {
	case STAGE_RW:
	case STAGE_BOUNCE_READ:
	case STAGE_BOUNCE_WRITE:
	case STAGE_RMW_READ:
	case STAGE_OV_READ:
		return req_next_xfer(d, r, res, kc);
	case STAGE_ZERO_RANGE:
		if (res == -EOPNOTSUPP) {
			/* A punched hole reads back as zeros too. */
			p->stage = STAGE_FALLOC;
			p->fmode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE;
			kc->op = DISK_KOP_FALLOCATE;
			kc->file = DISK_FILE_MAIN;
			kc->pos = p->kpos;
			kc->len = p->klen;
			kc->mode = p->fmode;
			kc->iov = NULL;
			kc->iovcnt = 0;
			return DISK_REQ_CALL;
		}
		return req_finish(d, r, res < 0 ? res : 0);
	default:
		return req_finish(d, r, res < 0 ? res : 0);
	}
}

void disk_req_abandon(struct disk_req *r)
{
	req_iov_restore(r);
	req_bounce_put(r);
}
