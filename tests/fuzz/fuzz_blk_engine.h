/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel and the transport as fuzz_blk.c's device sees them: an
 * in-memory disk engine (struct disk_engine_ops) that runs each planned
 * kernel call on a buffer, checks it is aligned when the disk pretends to
 * need O_DIRECT and that it stays inside the image, and injects faults
 * (EIO, EINTR, short transfers, EOF) every n calls, never twice in a row;
 * and a transport whose used-buffer interrupt is an eventfd.
 */
#ifndef MICROVM_FUZZ_BLK_ENGINE_H
#define MICROVM_FUZZ_BLK_ENGINE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/evloop.h"
#include "virtio/blk_priv.h"
#include "virtio/disk_engine.h"

#define FUZZ_DISK_MAX 0x40000u

/* Harness code the fuzzer need not steer by: no coverage callbacks. */
#if defined(__clang__)
#define FUZZ_HARNESS __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_HARNESS
#endif

/* ---- the in-memory engine ---- */

struct fuzz_engine {
	uint8_t img[FUZZ_DISK_MAX];
	uint64_t calls;
	unsigned int fault_every; /* 0: never */
	unsigned int fault_kind;
	bool last_faulted;
	bool faulted[VIRTQ_MAX_SIZE]; /* by chain head */
};

static struct fuzz_engine eng;
static struct disk disk;

FUZZ_HARNESS static void fuzz_check_kcall(const struct disk_kcall *kc)
{
	uint64_t len = 0;
	int i;

	if (kc->op == DISK_KOP_FDATASYNC)
		return;
	if (kc->op == DISK_KOP_FALLOCATE) {
		len = kc->len;
	} else {
		if (kc->iovcnt <= 0 || kc->iovcnt > DISK_IOV_MAX)
			abort();
		for (i = 0; i < kc->iovcnt; i++) {
			const struct iovec *v = &kc->iov[i];

			if (disk.direct &&
			    (((uintptr_t)v->iov_base % disk.mem_align) ||
			     v->iov_len % disk.align))
				abort(); /* O_DIRECT would refuse it */
			len += v->iov_len;
		}
	}
	if (kc->pos > disk.size || len > disk.size - kc->pos)
		abort(); /* the planner checked the range */
	if (disk.direct && kc->op != DISK_KOP_FALLOCATE &&
	    kc->pos % disk.align)
		abort();
}

/* What the "kernel" does with one call: bytes moved, 0 or -errno. */
FUZZ_HARNESS static int64_t fuzz_kcall(const struct disk_kcall *kc, uint16_t head)
{
	uint64_t pos = kc->pos, done = 0, want = 0, cut;
	int i;

	fuzz_check_kcall(kc);
	eng.calls++;
	if (kc->op == DISK_KOP_FDATASYNC)
		return 0;
	if (kc->op == DISK_KOP_FALLOCATE) {
		memset(eng.img + kc->pos, 0, kc->len);
		return 0;
	}
	for (i = 0; i < kc->iovcnt; i++)
		want += kc->iov[i].iov_len;
	cut = want;
	/* Never twice in a row: a kernel does not fail a retry forever. */
	if (eng.fault_every && eng.calls % eng.fault_every == 0 &&
	    !eng.last_faulted) {
		eng.last_faulted = true;
		eng.faulted[head] = true;
		switch (eng.fault_kind % 4) {
		case 0:
			return -EIO;
		case 1:
			return -EINTR; /* the planner retries the same call */
		case 2: /* short, whole blocks under O_DIRECT */
			cut = want / 2;
			if (disk.direct)
				cut -= cut % disk.align;
			if (!cut)
				return -EIO;
			break;
		default:
			return 0; /* end of file where there is none */
		}
	}
	eng.last_faulted = false;
	for (i = 0; i < kc->iovcnt && done < cut; i++) {
		size_t n = kc->iov[i].iov_len;

		if (n > cut - done)
			n = cut - done;
		if (kc->op == DISK_KOP_READV)
			memcpy(kc->iov[i].iov_base, eng.img + pos + done, n);
		else
			memcpy(eng.img + pos + done, kc->iov[i].iov_base, n);
		done += n;
	}
	return (int64_t)done;
}

static int mem_queue_open(struct disk *d, unsigned int depth, int efd,
			  struct disk_queue **out)
{
	(void)d;
	(void)depth;
	(void)efd;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void mem_queue_close(struct disk_queue *q)
{
	free(q);
}

static void mem_submit(struct disk_queue *q, struct disk_req *r,
		       const struct disk_kcall *first)
{
	const struct blk_slot *slot = r->opaque;
	struct disk_kcall kc = *first;

	while (disk_req_next(q->disk, r, fuzz_kcall(&kc, slot->head), &kc) ==
	       DISK_REQ_CALL)
		;
	disk_queue_complete(q, r);
	disk_queue_signal(q);
}

static int mem_flush(struct disk_queue *q)
{
	(void)q;
	return 0;
}

static const struct disk_engine_ops mem_ops = {
	.name = "fuzz-mem",
	.queue_open = mem_queue_open,
	.queue_close = mem_queue_close,
	.submit = mem_submit,
	.flush = mem_flush,
	.reap = NULL,
};

/* ---- fake transport ---- */

static int notify_fd = -1; /* the used-buffer "interrupt" */

static bool fuzz_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	(void)vdev;
	(void)q;
	evfd_signal(notify_fd);
	return true;
}

static void fuzz_notify_config_fn(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops fuzz_tops = {
	.name = "fuzz",
	.notify = fuzz_notify,
	.notify_config = fuzz_notify_config_fn,
};

#endif
