/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake vhost kernel for the unit tests: a struct vhost_sys (fake_sys)
 * whose open/ioctl/close record every ioctl in fk.log and keep the state
 * a vhost device would (owner, kick/err/call fd and backend per ring,
 * the vsock CID and running, open fds), for test_vhost, test_vsock_vhost
 * and test_blk_vhost. One fake per test executable.
 *
 *	fake_vhost_reset(FAKE_FD);       // every fd at -1, nothing logged
 *	fk.features = ...;               // what GET_FEATURES answers
 *	fk.fail_req = VHOST_SET_OWNER;   // optional: one ioctl fails
 *	fk.fail_err = EBUSY;
 *	... drive the code under test with &fake_sys ...
 *	CHECK_EQ(fake_count(VHOST_SET_VRING_CALL, 0), 2);
 */
#ifndef MICROVM_TEST_FAKE_VHOST_H
#define MICROVM_TEST_FAKE_VHOST_H

#include <errno.h>
#include <linux/vhost.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "vhost_blk.h"
#include "virtio/vhost.h"

#define FAKE_VHOST_LOG 512 /* ioctls one test may issue */
#define FAKE_VHOST_REGIONS 4 /* memory table regions recorded */

/* One ioctl, as the fake saw it. */
struct fake_call {
	unsigned long req;
	unsigned int index;
	long long val;   /* num, fd, features, cid, running, backend fd */
	uint64_t a[3];   /* SET_VRING_ADDR desc, avail, used */
	unsigned int nregions;
	uint64_t reg_gpa[FAKE_VHOST_REGIONS];
	uint64_t reg_size[FAKE_VHOST_REGIONS];
	uint64_t reg_host[FAKE_VHOST_REGIONS];
	unsigned int nq;  /* VHOST_BLK_SET_BACKEND: num_queues */
	uint64_t cap;     /* VHOST_BLK_SET_BACKEND: capacity */
	uint32_t flags;   /* VHOST_BLK_SET_BACKEND */
	uint32_t poll_us; /* VHOST_BLK_SET_BACKEND */
	char serial[21];  /* VHOST_BLK_SET_BACKEND */
};

struct fake_vhost {
	/* What the test sets after fake_vhost_reset(). */
	int fd;                 /* open() returns this ... */
	int open_err;           /* ... or this when non-zero */
	uint32_t version;       /* VHOST_BLK_GET_VERSION answers */
	uint64_t features;      /* GET_FEATURES answers */
	unsigned long fail_req; /* this ioctl fails ... */
	int fail_err;           /* ... with this */
	int fail_index;         /* ... for this ring (-1: any) */
	uint16_t ring_base[VHOST_MAX_RINGS]; /* GET_VRING_BASE answers */
	unsigned int nr_rings;  /* a ring index must be below (0: any) */
	bool one_fd;            /* every ioctl comes with exactly one open */
	/* What the fake saw. */
	char path[64];          /* the last open's */
	int open_fds;           /* opened and not yet closed */
	int opens, closes;
	int owned;
	long long cid;
	int running;
	int kick[VHOST_MAX_RINGS], err[VHOST_MAX_RINGS];
	int call[VHOST_MAX_RINGS], tap[VHOST_MAX_RINGS];
	struct fake_call log[FAKE_VHOST_LOG];
	int n;
};

static struct fake_vhost fk;

static inline int fake_open(void *opaque, const char *path)
{
	struct fake_vhost *f = opaque;

	snprintf(f->path, sizeof(f->path), "%s", path);
	if (f->open_err)
		return f->open_err;
	f->open_fds++;
	f->opens++;
	return f->fd;
}

static inline void fake_close(void *opaque, int fd)
{
	struct fake_vhost *f = opaque;

	CHECK_EQ(fd, f->fd);
	f->open_fds--;
	f->closes++;
	/* The kernel drops the owner and stops a device whose last
	 * descriptor goes; a test sees what was left behind first. */
}

static inline unsigned int fake_ring_index(unsigned long req, void *arg)
{
	switch (req) {
	case VHOST_SET_VRING_NUM:
	case VHOST_SET_VRING_BASE:
	case VHOST_GET_VRING_BASE:
		return ((struct vhost_vring_state *)arg)->index;
	case VHOST_SET_VRING_ADDR:
		return ((struct vhost_vring_addr *)arg)->index;
	case VHOST_SET_VRING_KICK:
	case VHOST_SET_VRING_CALL:
	case VHOST_SET_VRING_ERR:
	case VHOST_NET_SET_BACKEND:
		return ((struct vhost_vring_file *)arg)->index;
	default:
		return 0;
	}
}

static inline void fake_record_mem(struct fake_call *c,
				   const struct vhost_memory *m)
{
	unsigned int i;

	c->nregions = m->nregions;
	for (i = 0; i < m->nregions && i < FAKE_VHOST_REGIONS; i++) {
		c->reg_gpa[i] = m->regions[i].guest_phys_addr;
		c->reg_size[i] = m->regions[i].memory_size;
		c->reg_host[i] = m->regions[i].userspace_addr;
	}
}

static inline void fake_record_blk(struct fake_call *c,
				   const struct vhost_blk_backend *b)
{
	unsigned int i;

	c->val = b->fd;
	c->nq = b->num_queues;
	c->cap = b->capacity;
	c->flags = b->flags;
	c->poll_us = b->poll_us;
	memcpy(c->serial, b->serial, 20);
	for (i = 0; i < sizeof(b->reserved) / sizeof(b->reserved[0]); i++)
		CHECK_EQ(b->reserved[i], 0);
}

/* Every ring ioctl that carries a struct vhost_vring_file. */
static inline void fake_record_file(struct fake_vhost *f, struct fake_call *c,
				    unsigned long req,
				    const struct vhost_vring_file *file)
{
	unsigned int i = c->index;

	c->val = file->fd;
	if (req == VHOST_SET_VRING_KICK)
		f->kick[i] = file->fd;
	else if (req == VHOST_SET_VRING_ERR)
		f->err[i] = file->fd;
	else if (req == VHOST_SET_VRING_CALL)
		f->call[i] = file->fd;
	else
		f->tap[i] = file->fd;
}

static inline void fake_record(struct fake_vhost *f, struct fake_call *c,
			       unsigned long req, void *arg)
{
	switch (req) {
	case VHOST_SET_OWNER:
		f->owned = 1;
		break;
	case VHOST_BLK_GET_VERSION:
		*(__u32 *)arg = f->version;
		break;
	case VHOST_GET_FEATURES:
		*(__u64 *)arg = f->features;
		break;
	case VHOST_SET_FEATURES:
		c->val = (long long)*(__u64 *)arg;
		break;
	case VHOST_SET_MEM_TABLE:
		fake_record_mem(c, arg);
		break;
	case VHOST_SET_VRING_NUM:
	case VHOST_SET_VRING_BASE:
		c->val = ((struct vhost_vring_state *)arg)->num;
		break;
	case VHOST_GET_VRING_BASE:
		((struct vhost_vring_state *)arg)->num = f->ring_base[c->index];
		break;
	case VHOST_SET_VRING_ADDR: {
		struct vhost_vring_addr *a = arg;

		c->a[0] = a->desc_user_addr;
		c->a[1] = a->avail_user_addr;
		c->a[2] = a->used_user_addr;
		break;
	}
	case VHOST_SET_VRING_KICK:
	case VHOST_SET_VRING_ERR:
	case VHOST_SET_VRING_CALL:
	case VHOST_NET_SET_BACKEND:
		fake_record_file(f, c, req, arg);
		break;
	case VHOST_VSOCK_SET_GUEST_CID:
		c->val = f->cid = (long long)*(__u64 *)arg;
		break;
	case VHOST_VSOCK_SET_RUNNING:
		c->val = f->running = *(int *)arg;
		break;
	case VHOST_BLK_SET_BACKEND:
		fake_record_blk(c, arg);
		break;
	default:
		break;
	}
}

static inline int fake_ioctl(void *opaque, int fd, unsigned long req,
			     void *arg)
{
	struct fake_vhost *f = opaque;
	struct fake_call *c;

	CHECK_EQ(fd, f->fd);
	if (f->one_fd)
		CHECK_EQ(f->open_fds, 1);
	if (f->n >= FAKE_VHOST_LOG)
		return -ENOSPC;
	c = &f->log[f->n++];
	memset(c, 0, sizeof(*c));
	c->req = req;
	c->index = fake_ring_index(req, arg);
	if (f->nr_rings)
		CHECK(c->index < f->nr_rings);
	if (c->index >= VHOST_MAX_RINGS)
		return -EINVAL;
	if (req == f->fail_req &&
	    (f->fail_index < 0 || (unsigned int)f->fail_index == c->index))
		return -f->fail_err;
	fake_record(f, c, req, arg);
	return 0;
}

static const struct vhost_sys fake_sys = {
	.open = fake_open,
	.ioctl = fake_ioctl,
	.close = fake_close,
	.opaque = &fk,
};

/* A fresh fake whose open() returns @fd: nothing logged, no failure,
 * every ring's fds and the CID at -1. */
static inline void fake_vhost_reset(int fd)
{
	unsigned int i;

	memset(&fk, 0, sizeof(fk));
	fk.fd = fd;
	fk.fail_index = -1;
	fk.cid = -1;
	for (i = 0; i < VHOST_MAX_RINGS; i++)
		fk.kick[i] = fk.err[i] = fk.call[i] = fk.tap[i] = -1;
}

/* Index of the @nth (0-based) call of @req from @from on, or -1. */
static inline int fake_find(unsigned long req, int from, int nth)
{
	int i;

	for (i = from < 0 ? 0 : from; i < fk.n; i++)
		if (fk.log[i].req == req && !nth--)
			return i;
	return -1;
}

/* How many calls of @req from @from on. */
static inline int fake_count(unsigned long req, int from)
{
	int i, n = 0;

	for (i = from; i < fk.n; i++)
		n += fk.log[i].req == req;
	return n;
}

/* The value of the last @req of ring @q, or -100: none. */
static inline long long fake_last_val(unsigned long req, unsigned int q)
{
	int i;

	for (i = fk.n - 1; i >= 0; i--)
		if (fk.log[i].req == req && fk.log[i].index == q)
			return fk.log[i].val;
	return -100;
}

#endif /* MICROVM_TEST_FAKE_VHOST_H */
