// SPDX-License-Identifier: Apache-2.0
/*
 * Synchronous disk engine: each request runs to completion inside
 * disk_queue_submit() with preadv/pwritev/fdatasync/fallocate, continuing
 * short transfers, and is then finished through the common done list and
 * completion eventfd, so callers reap it exactly like an io_uring completion.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "virtio/disk_engine.h"

int64_t disk_kcall_run(int fd, const struct disk_kcall *kc)
{
	ssize_t n;

	do {
		switch (kc->op) {
		case DISK_KOP_READV:
			n = preadv(fd, kc->iov, kc->iovcnt, (off_t)kc->pos);
			break;
		case DISK_KOP_WRITEV:
			n = pwritev(fd, kc->iov, kc->iovcnt, (off_t)kc->pos);
			break;
		case DISK_KOP_FDATASYNC:
			n = fdatasync(fd);
			break;
		case DISK_KOP_FALLOCATE:
			n = fallocate(fd, kc->mode, (off_t)kc->pos,
				      (off_t)kc->len);
			break;
		default:
			errno = EINVAL;
			n = -1;
			break;
		}
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int sync_queue_open(struct disk *d, unsigned int depth, int efd,
			   struct disk_queue **out)
{
	struct disk_queue *q;

	(void)d;
	(void)depth;
	(void)efd;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	*out = q;
	return 0;
}

static void sync_queue_close(struct disk_queue *q)
{
	/* Nothing is ever left in the kernel. */
	free(q);
}

static void sync_submit(struct disk_queue *q, struct disk_req *r,
			const struct disk_kcall *first)
{
	struct disk_kcall kc = *first;
	struct disk *d = q->disk;

	while (disk_req_next(d, r,
			     disk_kcall_run(kc.file == DISK_FILE_BASE ?
					    d->base_fd : d->fd, &kc),
			     &kc) == DISK_REQ_CALL)
		;
	disk_queue_complete(q, r);
	disk_queue_signal(q);
}

static int sync_flush(struct disk_queue *q)
{
	(void)q;
	return 0;
}

const struct disk_engine_ops disk_sync_ops = {
	.name = "sync",
	.queue_open = sync_queue_open,
	.queue_close = sync_queue_close,
	.submit = sync_submit,
	.flush = sync_flush,
	.reap = NULL,
	.ready = NULL, /* done at submit: on the done list already */
};
