// SPDX-License-Identifier: Apache-2.0
/*
 * Request planning shared by every disk engine: range and permission checks,
 * O_DIRECT bounce buffers (read-modify-write when the offset or length is not
 * block aligned), continuation of short transfers, and the fallocate modes
 * behind discard and write-zeroes. Engines see only struct disk_kcall.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "virtio/disk_engine.h"

enum {
	STAGE_RW,           /* transfer straight on the caller's iovecs */
	STAGE_BOUNCE_READ,  /* read the aligned span, then copy out */
	STAGE_BOUNCE_WRITE, /* write the aligned span from the bounce */
	STAGE_RMW_READ,     /* read the aligned span, patch, then write */
	STAGE_FLUSH,
	STAGE_FALLOC,
	STAGE_ZERO_RANGE,   /* falls back to STAGE_FALLOC punch-hole */
};

static void req_iov_restore(struct disk_req *r)
{
	struct disk_req_priv *p = &r->priv;
	struct iovec *iov = p->stage == STAGE_RW ? r->iov : &p->biov;

	if (p->saved_idx >= 0) {
		iov[p->saved_idx] = p->saved;
		p->saved_idx = -1;
	}
}

static int req_finish(struct disk *d, struct disk_req *r, int64_t res)
{
	req_iov_restore(r);
	free(r->priv.bounce);
	r->priv.bounce = NULL;
	r->result = res;
	if (res < 0 && (unsigned int)r->op < DISK_OP_COUNT)
		atomic_fetch_add_explicit(&d->stats.errors[r->op], 1,
					  memory_order_relaxed);
	return DISK_REQ_DONE;
}

/* Describe the rest of the current transfer, past p->kdone bytes. */
static int req_xfer(struct disk_req *r, struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	struct iovec *iov = p->stage == STAGE_RW ? r->iov : &p->biov;
	int cnt = p->stage == STAGE_RW ? r->iovcnt : 1;
	uint64_t skip = p->kdone;
	int i = 0;

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
	kc->op = (p->stage == STAGE_BOUNCE_WRITE ||
		  (p->stage == STAGE_RW && r->op == DISK_OP_WRITE)) ?
		 DISK_KOP_WRITEV : DISK_KOP_READV;
	kc->pos = p->kpos + p->kdone;
	kc->len = 0;
	kc->mode = 0;
	kc->iov = &iov[i];
	kc->iovcnt = cnt - i;
	return DISK_REQ_CALL;
}

/* Copy between the caller's iovecs and @buf; @to_iov picks the direction. */
static void req_copy(struct disk_req *r, void *buf, bool to_iov)
{
	char *b = buf;
	int i;

	for (i = 0; i < r->iovcnt; i++) {
		if (to_iov)
			memcpy(r->iov[i].iov_base, b, r->iov[i].iov_len);
		else
			memcpy(b, r->iov[i].iov_base, r->iov[i].iov_len);
		b += r->iov[i].iov_len;
	}
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

static int req_start_bounce(struct disk *d, struct disk_req *r,
			    struct disk_kcall *kc)
{
	struct disk_req_priv *p = &r->priv;
	uint64_t lo = r->offset & ~(uint64_t)(d->align - 1);
	uint64_t end = r->offset + p->total;
	uint64_t hi = (end + d->align - 1) & ~(uint64_t)(d->align - 1);
	size_t balign = d->align > d->mem_align ? d->align : d->mem_align;

	if (balign < sizeof(void *))
		balign = sizeof(void *);
	if (hi - lo > SIZE_MAX || posix_memalign(&p->bounce, balign, hi - lo))
		return req_finish(d, r, -ENOMEM);
	atomic_fetch_add_explicit(&d->stats.bounced, 1, memory_order_relaxed);
	p->biov.iov_base = p->bounce;
	p->biov.iov_len = hi - lo;
	p->kpos = lo;
	p->klen = hi - lo;
	if (r->op == DISK_OP_READ) {
		p->stage = STAGE_BOUNCE_READ;
	} else if (lo == r->offset && hi == end) {
		req_copy(r, p->bounce, false);
		p->stage = STAGE_BOUNCE_WRITE;
	} else {
		p->stage = STAGE_RMW_READ;
	}
	return req_xfer(r, kc);
}

static int req_start_rw(struct disk *d, struct disk_req *r,
			struct disk_kcall *kc)
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
	if (d->direct && !req_aligned(d, r))
		return req_start_bounce(d, r, kc);
	p->stage = STAGE_RW;
	p->kpos = r->offset;
	p->klen = total;
	return req_xfer(r, kc);
}

static int req_start_fill(struct disk *d, struct disk_req *r,
			  struct disk_kcall *kc)
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
	p->kpos = r->offset;
	p->klen = r->len;
	p->stage = discard ? STAGE_FALLOC : STAGE_ZERO_RANGE;
	p->fmode = FALLOC_FL_KEEP_SIZE | (discard ? FALLOC_FL_PUNCH_HOLE :
						    FALLOC_FL_ZERO_RANGE);
	kc->op = DISK_KOP_FALLOCATE;
	kc->pos = p->kpos;
	kc->len = p->klen;
	kc->mode = p->fmode;
	kc->iov = NULL;
	kc->iovcnt = 0;
	return DISK_REQ_CALL;
}

int disk_req_start(struct disk *d, struct disk_req *r, struct disk_kcall *kc)
{
	memset(&r->priv, 0, sizeof(r->priv));
	r->priv.saved_idx = -1;
	r->result = 0;
	switch (r->op) {
	case DISK_OP_READ:
	case DISK_OP_WRITE:
		return req_start_rw(d, r, kc);
	case DISK_OP_FLUSH:
		if (d->cache == DISK_CACHE_UNSAFE)
			return req_finish(d, r, 0);
		r->priv.stage = STAGE_FLUSH;
		memset(kc, 0, sizeof(*kc));
		kc->op = DISK_KOP_FDATASYNC;
		return DISK_REQ_CALL;
	case DISK_OP_DISCARD:
	case DISK_OP_WRITE_ZEROES:
		return req_start_fill(d, r, kc);
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
	if (p->stage == STAGE_BOUNCE_READ) {
		req_copy(r, (char *)p->bounce + (r->offset - p->kpos), true);
	} else if (p->stage == STAGE_RMW_READ) {
		req_copy(r, (char *)p->bounce + (r->offset - p->kpos), false);
		p->stage = STAGE_BOUNCE_WRITE;
		p->kdone = 0;
		return req_xfer(r, kc);
	}
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
		return req_next_xfer(d, r, res, kc);
	case STAGE_ZERO_RANGE:
		if (res == -EOPNOTSUPP) {
			/* A punched hole reads back as zeros too. */
			p->stage = STAGE_FALLOC;
			p->fmode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE;
			kc->op = DISK_KOP_FALLOCATE;
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
	free(r->priv.bounce);
	r->priv.bounce = NULL;
}
