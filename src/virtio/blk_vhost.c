// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-blk queue backend: what /dev/vhost-blk (the project's kernel
 * module) adds to the generic vhost sequence (vhost.c): the device node,
 * its ABI version checked before ownership, the image handed over with
 * VHOST_BLK_SET_BACKEND and taken back with fd -1, and the feature bits
 * the VMM may offer. The order of the ioctls is the one the ABI header
 * gives (kernel/vhost-blk/uapi/vhost_blk.h).
 */
#include "virtio/blk_vhost.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vhost_blk.h"
#include "virtio/blk_req.h"

_Static_assert(VIRTIO_MAX_QUEUES <= VHOST_MAX_RINGS,
	       "every virtio-blk queue can be a vhost ring");

#define BLK_VHOST_FIX_LOAD                                               \
	"modprobe vhost_blk, or insmod the vhost_blk.ko "                    \
	"that the build target vhost-blk-module builds (kernel/vhost-blk/"   \
	"README lists the supported kernels); or use engine=io_uring"

static int blk_vh_probe(struct vhost_dev *v, const char *path)
{
	__u32 ver = 0;
	int ret;

	ret = vhost_ioctl(v, VHOST_BLK_GET_VERSION, &ver);
	if (ret == -ENOTTY || ret == -EINVAL) {
		log_error("%s: engine=vhost: %s is not the project's vhost-blk "
			  "device (VHOST_BLK_GET_VERSION: %s): %s", v->name,
			  path, strerror(-ret), BLK_VHOST_FIX_LOAD);
		return -ENODEV;
	}
	if (ret < 0) {
		log_error("%s: engine=vhost: %s: VHOST_BLK_GET_VERSION: %s",
			  v->name, path, strerror(-ret));
		return ret;
	}
	if (ver != VHOST_BLK_API_VERSION) {
		log_error("%s: engine=vhost: %s speaks ABI version %u, this "
			  "microvm version %u: rebuild the module from this "
			  "tree (build target vhost-blk-module) and reload it "
			  "(rmmod vhost_blk; insmod build/.../vhost_blk.ko)",
			  v->name, path, ver, VHOST_BLK_API_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* vhost_start()'s last step: @arg is the struct blk_vhost_image. */
static int blk_vh_backend_on(struct vhost_dev *v, unsigned int nr_rings,
			     const void *arg)
{
	const struct blk_vhost_image *img = arg;
	struct vhost_blk_backend be;
	int ret;

	memset(&be, 0, sizeof(be));
	be.fd = img->fd;
	be.flags = (img->readonly ? VHOST_BLK_F_READONLY : 0) |
		   (img->no_flush ? VHOST_BLK_F_NO_FLUSH : 0);
	be.capacity = img->capacity;
	be.num_queues = nr_rings;
	be.num_workers = 0;
	be.poll_us = img->poll_us;
	/* NUL-padded, not NUL-terminated: 20 bytes is a valid serial. */
	if (img->serial)
		memcpy(be.serial, img->serial,
		       strnlen(img->serial, sizeof(be.serial)));
	ret = vhost_ioctl(v, VHOST_BLK_SET_BACKEND, &be);
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: the module cannot serve the "
				"image (VHOST_BLK_SET_BACKEND: %s): it takes "
				"regular files and block devices, on the "
				"kernels kernel/vhost-blk/README lists; or use "
				"engine=io_uring", v->name,
				strerror(-ret));
		return ret;
	}
	return 0;
}

static void blk_vh_backend_off(struct vhost_dev *v, unsigned int nr_rings)
{
	struct vhost_blk_backend be;
	int ret;

	(void)nr_rings;
	memset(&be, 0, sizeof(be));
	be.fd = -1;
	/* Returns once every request in flight has been pushed. */
	ret = vhost_ioctl(v, VHOST_BLK_SET_BACKEND, &be);
	if (ret < 0)
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: stopping: "
				"VHOST_BLK_SET_BACKEND -1: %s", v->name,
				strerror(-ret));
}

static const struct vhost_ops blk_vh_ops = {
	.what = "vhost-blk",
	.fix_load = BLK_VHOST_FIX_LOAD,
	.fix_version = "rebuild it from this tree (build target "
		       "vhost-blk-module)",
	.probe = blk_vh_probe,
	.backend_on = blk_vh_backend_on,
	.backend_off = blk_vh_backend_off,
};

int blk_vhost_open(struct vhost_dev *v, const struct vhost_sys *sys,
		   const struct guest_mem *gm, const char *name)
{
	const char *path = getenv("MICROVM_VHOST_BLK_DEVICE");

	if (!path || !*path)
		path = BLK_VHOST_DEVICE;
	return vhost_open(v, sys, &blk_vh_ops, NULL, gm, path, name);
}

void blk_vhost_close(struct vhost_dev *v)
{
	vhost_close(v);
}

/* Bits the VMM answers alone, from its configuration space. */
#define BLK_VHOST_VMM_FEATURES                                           \
	(1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |      \
	 1ull << VIRTIO_BLK_F_GEOMETRY | 1ull << VIRTIO_BLK_F_RO |           \
	 1ull << VIRTIO_BLK_F_BLK_SIZE | 1ull << VIRTIO_BLK_F_TOPOLOGY |     \
	 1ull << VIRTIO_BLK_F_MQ)

uint64_t blk_vhost_features(const struct vhost_dev *v, uint64_t offered)
{
	return offered & (v->features | BLK_VHOST_VMM_FEATURES);
}

/* The rings of @s's queues, in the vhost layer's terms. */
static unsigned int blk_vh_rings(const struct blk_backend_start *s,
				 struct vhost_ring *rings)
{
	unsigned int i, n = s ? s->nr_queues : 0;

	assert(n <= VHOST_MAX_RINGS);
	for (i = 0; i < n; i++) {
		const struct blk_backend_queue *bq = &s->queues[i];

		rings[i] = (struct vhost_ring){
			.size = bq->size,
			.desc = bq->desc,
			.avail = bq->avail,
			.used = bq->used,
			.base = bq->base,
			.kick_fd = bq->kick_fd,
		};
	}
	return n;
}

int blk_vhost_start(struct vhost_dev *v, const struct blk_backend_start *s,
		    const struct blk_vhost_image *img)
{
	struct vhost_ring rings[VHOST_MAX_RINGS];
	unsigned int n = blk_vh_rings(s, rings);

	return vhost_start(v, rings, n, s->features, img);
}

void blk_vhost_stop(struct vhost_dev *v, struct blk_backend_start *s)
{
	struct vhost_ring rings[VHOST_MAX_RINGS];
	unsigned int i, n = blk_vh_rings(s, rings);

	vhost_stop(v, rings, n);
	/* A queue whose GET_VRING_BASE failed keeps its base. */
	for (i = 0; i < n; i++)
		s->queues[i].base = rings[i].base;
}
