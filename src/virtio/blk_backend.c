// SPDX-License-Identifier: Apache-2.0
/*
 * The two queue backends of the virtio-blk device behind one const ops
 * table each (blk_backend.h): the VMM's I/O threads (blk_queue.c) and the
 * vhost-blk kernel module (blk_vhost.c). This file only adapts the
 * device's state to each; the work is in those files.
 */
#include "virtio/blk_backend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "virtio/blk_priv.h"

/* ---- the VMM's I/O threads ---- */

static uint64_t threads_features(struct blk_dev *b, uint64_t offered)
{
	(void)b;
	return offered;
}

static void threads_close(struct blk_dev *b)
{
	unsigned int i;

	for (i = 0; i < b->num_queues; i++)
		blk_queue_close(&b->queues[i]);
}

/* Every queue's ring now, before confinement; each start reuses it. */
static int threads_open(struct blk_dev *b)
{
	unsigned int i;
	int ret;

	for (i = 0; i < b->num_queues; i++) {
		ret = blk_queue_open(&b->queues[i], b->queue_size);
		if (ret) {
			log_error("%s: cannot open disk queue %u: %s",
				  b->vhost.name, i, strerror(-ret));
			threads_close(b);
			return ret;
		}
	}
	return 0;
}

static void threads_stop(struct blk_dev *b, struct blk_backend_start *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_queues; i++) {
		blk_queue_stop(&b->queues[s->queues[i].index]);
		/* Where the thread stopped taking requests: a later start
		 * (resume) goes on from there, replaying nothing. */
		s->queues[i].base = s->queues[i].q->vq.last_avail_idx;
	}
}

static int threads_start(struct blk_dev *b, struct blk_backend_start *s)
{
	unsigned int i;
	int ret;

	for (i = 0; i < s->nr_queues; i++) {
		struct blk_backend_queue *bq = &s->queues[i];

		ret = blk_queue_start(&b->queues[bq->index], bq->q);
		if (ret) {
			log_ratelimited(&b->rl, LOG_ERROR,
					"%s: cannot start queue %u: %s",
					b->vdev->name, bq->index,
					strerror(-ret));
			threads_stop(b, s);
			return ret;
		}
	}
	return 0;
}

const struct blk_backend_ops blk_backend_threads = {
	.name = "io_uring",
	.open = threads_open,
	.close = threads_close,
	.features = threads_features,
	.start = threads_start,
	.stop = threads_stop,
};

/* ---- the vhost-blk kernel module ---- */

/* The vhost core found a ring broken (virtio 1.2 §2.1.2): NEEDS_RESET. */
static void module_ring_error(void *opaque, unsigned int index)
{
	struct blk_dev *b = opaque;
	char why[64];

	snprintf(why, sizeof(why), "queue %u: the vhost-blk module found "
		 "the ring broken", index);
	virtio_dev_broken(b->vdev, why);
}

static int module_open(struct blk_dev *b)
{
	const struct disk *d = b->disk;
	const char *name = b->vhost.name;
	struct stat st;
	int ret;

	if (d->snapshot) {
		log_error("%s: engine=vhost does not serve snapshot=on disks "
			  "(the overlay lives in the VMM); use engine=io_uring",
			  name);
		return -EINVAL;
	}
	if (fstat(d->fd, &st) || (!S_ISREG(st.st_mode) &&
				  !S_ISBLK(st.st_mode))) {
		log_error("%s: engine=vhost: %s is neither a regular file nor "
			  "a block device, which is all the module serves",
			  name, d->path ? d->path : "the image");
		return -EINVAL;
	}
	/* The module does its I/O with the image's own open flags. */
	if (!d->direct && d->cache == DISK_CACHE_NONE)
		log_info("%s: engine=vhost: %s is not O_DIRECT here (file "
			 "system without direct I/O): the module goes through "
			 "the page cache, flushes still honoured", name,
			 d->path ? d->path : "the image");
	ret = blk_vhost_open(&b->vhost,
			     b->vhost_sys ? b->vhost_sys : &vhost_sys_host,
			     b->gm, name);
	b->vhost.err_fn = module_ring_error;
	b->vhost.err_opaque = b;
	return ret;
}

static void module_close(struct blk_dev *b)
{
	blk_vhost_close(&b->vhost);
}

static uint64_t module_features(struct blk_dev *b, uint64_t offered)
{
	return blk_vhost_features(&b->vhost, offered);
}

static int module_start(struct blk_dev *b, struct blk_backend_start *s)
{
	struct blk_vhost_image img = {
		.fd = b->disk->fd,
		.readonly = b->lim.readonly,
		.no_flush = b->disk->cache == DISK_CACHE_UNSAFE,
		.capacity = b->lim.capacity,
		.serial = b->serial,
		.poll_us = (uint32_t)(b->poll_max_ns / 1000),
	};
	unsigned int n = 0;

	/* The module serves queues 0 .. n-1: stop at the first gap. */
	while (n < s->nr_queues && s->queues[n].index == n)
		n++;
	if (n < s->nr_queues)
		log_ratelimited(&b->rl, LOG_WARN,
				"%s: engine=vhost: queue %u is not enabled: "
				"queues from %u on are not served",
				b->vdev->name, n, n);
	if (!n)
		return -EINVAL;
	s->nr_queues = n;
	return blk_vhost_start(&b->vhost, s, &img);
}

static void module_stop(struct blk_dev *b, struct blk_backend_start *s)
{
	blk_vhost_stop(&b->vhost, s);
}

static void module_set_call(struct blk_dev *b, unsigned int index, int fd)
{
	vhost_set_call(&b->vhost, index, fd);
}

/*
 * The module keeps no counters the VMM can read: report the ring
 * positions (used idx is the number of completions, modulo 2^16) and how
 * often the module was started.
 */
static void module_print_stats(struct blk_dev *b, int fd)
{
	struct virtio_dev *vdev = b->vdev;
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++)
		dprintf(fd,
			"microvm: stats %s queue %u vhost: used-idx %u "
			"avail-idx-at-stop %u starts %" PRIu64 "\n",
			vdev->name, i, virtio_queue_used_idx(vdev, i),
			(unsigned int)b->vhost.stop_base[i], b->vhost.starts);
}

const struct blk_backend_ops blk_backend_vhost = {
	.name = "vhost",
	.direct_irq = true,
	.open = module_open,
	.close = module_close,
	.features = module_features,
	.start = module_start,
	.stop = module_stop,
	.set_call = module_set_call,
	.print_stats = module_print_stats,
};
