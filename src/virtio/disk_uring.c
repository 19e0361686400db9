// SPDX-License-Identifier: Apache-2.0
/*
 * io_uring disk engine: one ring per queue, created disabled, restricted to
 * the four opcodes the backend issues (READV, WRITEV, FSYNC, FALLOCATE) on
 * its registered files (the disk image, or a snapshot's overlay and its
 * image; every SQE must carry IOSQE_FIXED_FILE; no register call is
 * allowed once enabled), then enabled. Completions signal the queue's
 * eventfd; disk_queue_reap() turns CQEs into finished requests and
 * resubmits continuations of short transfers. A round's SQEs enter the
 * kernel in chunks of 1, 2, 4 and then 8 as they are prepared (see
 * uring_submit()); disk_queue_flush() enters what is left.
 *
 * Reads and writes of a memory-backed image (tmpfs, ramfs; page cache
 * only) are made in the queue thread instead: such a file takes no
 * RWF_NOWAIT, so io_uring hands every one to an io-wq worker, and the
 * hand-off (a wakeup, a worker's run, its completion) costs more CPU than
 * the copy it carries. In the thread each is one memcpy through the
 * image's mapping (disk.c, disk_map()), or one preadv/pwritev where it has
 * none. The caller collects them with disk_queue_drain() in the
 * same round, or disk_queue_flush() signals the batch once.
 */
#include <assert.h>
#include <errno.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "virtio/disk_engine.h"

struct uring_queue {
	struct disk_queue q;    /* first: the core casts between them */
	struct io_uring ring;
	unsigned int queued;    /* SQEs prepared since the last submit */
	unsigned int in_kernel; /* requests with an SQE or CQE pending */
	unsigned int enter_at;  /* queued SQEs that make the next enter */
};

/* The largest chunk of SQEs entered inside a round. */
#define URING_CHUNK_MAX 8u

static struct uring_queue *to_uq(struct disk_queue *q)
{
	return (struct uring_queue *)q;
}

static const uint8_t uring_ops_used[] = {
	IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
	IORING_OP_FALLOCATE,
};

/*
 * liburing 2.3 as packaged leaves io_uring_register_restrictions() and
 * io_uring_enable_rings() out of its shared library: use the raw call.
 */
static int uring_restrict(struct io_uring *ring)
{
	struct io_uring_restriction res[sizeof(uring_ops_used) + 3] = { 0 };
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(uring_ops_used); i++) {
		res[i].opcode = IORING_RESTRICTION_SQE_OP;
		res[i].sqe_op = uring_ops_used[i];
	}
	/* Only the registered disk file; no other SQE flag. */
	res[i].opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED;
	res[i++].sqe_flags = IOSQE_FIXED_FILE;
	/*
	 * A register call left: dropping the file at close, so that
	 * the image's OFD lock goes with the last close() and not later,
	 * when the kernel gets round to freeing the ring.
	 */
	res[i].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[i++].register_op = IORING_UNREGISTER_FILES;
	/* And a drive swap (PATCH /drives): the image's slot, re-pointed
	 * to a file the VMM opened; the ring can reach no other. */
	res[i].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[i++].register_op = IORING_REGISTER_FILES_UPDATE;
	ret = io_uring_register(ring->ring_fd, IORING_REGISTER_RESTRICTIONS,
				res, i);
	return ret < 0 ? ret : 0;
}

static int uring_enable(struct io_uring *ring)
{
	int ret = io_uring_register(ring->ring_fd,
				    IORING_REGISTER_ENABLE_RINGS, NULL, 0);

	return ret < 0 ? ret : 0;
}

static void uring_warn_unrestricted(int ret)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&warned))
		log_warn("disk: io_uring restrictions unavailable (%d), rings run unrestricted",
			 ret);
}

/*
 * Ring set up disabled, restricted, eventfd and the disk file (index 0)
 * registered, then enabled.
 */
static int uring_setup(struct io_uring *ring, unsigned int depth, int efd,
		       const int *files, unsigned int nfiles)
{
	struct io_uring_params p = { .flags = IORING_SETUP_R_DISABLED };
	bool disabled = true;
	int ret;

	ret = io_uring_queue_init_params(depth, ring, &p);
	if (ret == -EINVAL) {
		/* Kernels before 5.10 know neither flag nor restrictions. */
		uring_warn_unrestricted(ret);
		memset(&p, 0, sizeof(p));
		disabled = false;
		ret = io_uring_queue_init_params(depth, ring, &p);
	}
	if (ret)
		return ret;
	if (disabled) {
		ret = uring_restrict(ring);
		if (ret)
			uring_warn_unrestricted(ret);
	}
	/* Registered before enabling: a restricted ring refuses it after. */
	ret = io_uring_register_eventfd(ring, efd);
	if (!ret)
		ret = io_uring_register_files(ring, files, nfiles);
	if (!ret && disabled)
		ret = uring_enable(ring);
	if (ret)
		io_uring_queue_exit(ring);
	return ret;
}

static int uring_queue_open(struct disk *d, unsigned int depth, int efd,
			    struct disk_queue **out)
{
	struct uring_queue *uq;
	int ret;

	/* Fixed-file indices are enum disk_file: a snapshot reads its image
	 * through index 1. */
	int files[2] = { d->fd, d->base_fd };
	unsigned int nfiles = d->ov ? 2 : 1;

	uq = calloc(1, sizeof(*uq));
	if (!uq)
		return -ENOMEM;
	uq->enter_at = 1;
	ret = uring_setup(&uq->ring, depth, efd, files, nfiles);
	if (ret) {
		free(uq);
		return ret;
	}
	*out = &uq->q;
	return 0;
}

/* Every submission goes through here: one io_uring_enter, counted. */
static int uring_submit_enter(struct uring_queue *uq)
{
	atomic_fetch_add_explicit(&uq->q.disk->stats.enters, 1,
				  memory_order_relaxed);
	return io_uring_submit(&uq->ring);
}

static void uring_prep(struct uring_queue *uq, struct disk_req *r,
		       const struct disk_kcall *kc)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&uq->ring);
	int fd = (int)kc->file; /* registered file index */

	if (!sqe) {
		/* Only reachable if the core let more than depth in. */
		uring_submit_enter(uq);
		uq->queued = 0;
		sqe = io_uring_get_sqe(&uq->ring);
		assert(sqe);
	}
	switch (kc->op) {
	case DISK_KOP_READV:
		io_uring_prep_readv(sqe, fd, kc->iov, kc->iovcnt, kc->pos);
		break;
	case DISK_KOP_WRITEV:
		io_uring_prep_writev(sqe, fd, kc->iov, kc->iovcnt, kc->pos);
		break;
	case DISK_KOP_FDATASYNC:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		break;
	case DISK_KOP_FALLOCATE:
		io_uring_prep_fallocate(sqe, fd, kc->mode, (off_t)kc->pos,
					(off_t)kc->len);
		break;
	}
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	io_uring_sqe_set_data(sqe, r);
	uq->queued++;
}

/* Every SQE queued so far into the kernel: one io_uring_enter. */
static int uring_enter_queued(struct disk_queue *q)
{
	static struct log_ratelimit rl;
	struct uring_queue *uq = to_uq(q);
	int ret;

	if (!uq->queued)
		return 0;
	do {
		ret = uring_submit_enter(uq);
	} while (ret == -EINTR);
	if (ret < 0) {
		/* The SQEs stay in the ring; the reap path tries again. */
		log_ratelimited(&rl, LOG_WARN, "disk %s: io_uring submit: %d",
				q->disk->path, ret);
		disk_queue_signal(q);
		return ret;
	}
	uq->queued = ret >= (int)uq->queued ? 0 : uq->queued - ret;
	return ret;
}

/* A transfer the thread makes itself: see the head of this file. */
static bool uring_inline(const struct disk *d, const struct disk_kcall *kc)
{
	return d->mem_backed && !d->direct && kc->file == DISK_FILE_MAIN &&
	       (kc->op == DISK_KOP_READV || kc->op == DISK_KOP_WRITEV);
}

static void uring_submit(struct disk_queue *q, struct disk_req *r,
			 const struct disk_kcall *kc)
{
	struct uring_queue *uq = to_uq(q);
	struct disk *d = q->disk;
	struct disk_kcall c = *kc;

	/* Continuations (short transfers) too, each bounded by the
	 * request's length, as in the sync engine. */
	while (uring_inline(d, &c)) {
		atomic_fetch_add_explicit(&d->stats.inline_calls, 1,
					  memory_order_relaxed);
		if (disk_req_next(d, r, d->map ? disk_map_kcall(d, &c) :
					disk_kcall_run(d->fd, &c), &c) !=
		    DISK_REQ_CALL) {
			disk_queue_complete(q, r);
			q->signal_owed = true;
			return;
		}
	}
	uring_prep(uq, r, &c);
	uq->in_kernel++;
	/*
	 * Enter early, in growing chunks. The kernel plugs the SQEs of one
	 * enter and hands them to the disk only when the enter ends: 64
	 * O_DIRECT reads entered together left the disk idle for the ~150
	 * us their submission took, every round (BENCHMARKS.md, section 1).
	 * Now the first request reaches the disk while the thread prepares
	 * the rest, and a deep round still costs one enter per 8 requests.
	 */
	if (uq->queued >= uq->enter_at) {
		uring_enter_queued(q);
		uq->enter_at = uq->enter_at * 2 > URING_CHUNK_MAX ?
				       URING_CHUNK_MAX : uq->enter_at * 2;
	}
}

/* The end of a round: enter what is left; the next round starts at 1. */
static int uring_flush(struct disk_queue *q)
{
	to_uq(q)->enter_at = 1;
	return uring_enter_queued(q);
}

static void uring_reap(struct disk_queue *q)
{
	struct uring_queue *uq = to_uq(q);
	struct io_uring_cqe *cqe;
	struct disk_kcall kc;
	struct disk_req *r;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&uq->ring, head, cqe) {
		r = io_uring_cqe_get_data(cqe);
		seen++;
		if (disk_req_next(q->disk, r, cqe->res, &kc) ==
		    DISK_REQ_CALL) {
			uring_prep(uq, r, &kc);
			continue;
		}
		uq->in_kernel--;
		disk_queue_complete(q, r);
	}
	io_uring_cq_advance(&uq->ring, seen);
	/* Continuations, and anything a failed flush left behind. */
	uring_flush(q);
}

/* A load of the CQ tail (acquire), shared with the kernel: no syscall. */
static bool uring_ready(struct disk_queue *q)
{
	return io_uring_cq_ready(&to_uq(q)->ring) > 0;
}

/*
 * Wait out every request the kernel holds (abandoned, no callback) and
 * leave the ring empty for the next run: no SQE queued, no CQE left.
 */
static int uring_queue_drain(struct disk_queue *q)
{
	struct uring_queue *uq = to_uq(q);
	struct io_uring_cqe *cqe;
	int ret = 0;

	if (uq->queued)
		uring_submit_enter(uq);
	uq->queued = 0;
	uq->enter_at = 1;
	while (uq->in_kernel) {
		ret = io_uring_wait_cqe(&uq->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret) {
			log_error("disk %s: io_uring wait at close: %d",
				  q->disk->path, ret);
			return ret;
		}
		disk_req_abandon(io_uring_cqe_get_data(cqe));
		io_uring_cqe_seen(&uq->ring, cqe);
		uq->in_kernel--;
	}
	/* Every CQE belongs to a request counted above: none is left. */
	assert(!io_uring_cq_ready(&uq->ring));
	return 0;
}

static void uring_queue_close(struct disk_queue *q)
{
	struct uring_queue *uq = to_uq(q);

	uring_queue_drain(q);
	io_uring_unregister_files(&uq->ring);
	io_uring_queue_exit(&uq->ring);
	free(uq);
}

static int uring_replace_file(struct disk_queue *q, int fd)
{
	int ret = io_uring_register_files_update(&to_uq(q)->ring, 0, &fd, 1);

	return ret < 0 ? ret : ret == 1 ? 0 : -EIO;
}

const struct disk_engine_ops disk_uring_ops = {
	.name = "uring",
	.queue_open = uring_queue_open,
	.queue_close = uring_queue_close,
	.queue_drain = uring_queue_drain,
	.submit = uring_submit,
	.flush = uring_flush,
	.reap = uring_reap,
	.ready = uring_ready,
	.replace_file = uring_replace_file,
};
