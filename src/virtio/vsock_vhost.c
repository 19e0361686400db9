// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-vsock engine: what the kernel's /dev/vhost-vsock adds to the
 * generic vhost sequence (vhost.c): the guest CID set once the memory
 * table is, SET_RUNNING as the backend switch, and the rx/tx rings of a
 * virtio-vsock device handed over with their interrupts. The event queue
 * is not the kernel's: vsock.c serves it.
 */
#include "virtio/vsock_vhost.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/vhost.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#define VSOCK_VHOST_FIX_LOAD                                             \
	"modprobe vhost_vsock (and give microvm read-write access to "      \
	"/dev/vhost-vsock); or use uds= for the hybrid vsock"

/* After SET_MEM_TABLE: the guest's CID, which the host then reaches. */
static int vsock_vh_setup(struct vhost_dev *v)
{
	struct vsock_vhost *vv = v->opaque;
	__u64 cid = vv->guest_cid;
	int ret;

	ret = vhost_ioctl(v, VHOST_VSOCK_SET_GUEST_CID, &cid);
	if (ret == -EADDRINUSE)
		log_error("%s: engine=vhost: guest CID %" PRIu64 " is in use "
			  "(another VM or vhost-vsock user has it): choose "
			  "another cid=", v->name, vv->guest_cid);
	else if (ret < 0)
		log_error("%s: engine=vhost: VHOST_VSOCK_SET_GUEST_CID %" PRIu64
			  ": %s", v->name, vv->guest_cid, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int vsock_vh_running(struct vhost_dev *v, int on)
{
	int ret = vhost_ioctl(v, VHOST_VSOCK_SET_RUNNING, &on);

	if (ret < 0)
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: VHOST_VSOCK_SET_RUNNING %d: "
				"%s", v->name, on, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int vsock_vh_backend_on(struct vhost_dev *v, unsigned int nr_rings,
			       const void *arg)
{
	(void)nr_rings;
	(void)arg;
	return vsock_vh_running(v, 1);
}

/* The kernel's SET_RUNNING 0 returns once its workers are flushed. */
static void vsock_vh_backend_off(struct vhost_dev *v, unsigned int nr_rings)
{
	(void)nr_rings;
	vsock_vh_running(v, 0);
}

static const struct vhost_ops vsock_vh_ops = {
	.what = "vhost_vsock",
	.fix_load = VSOCK_VHOST_FIX_LOAD,
	.fix_version = "a kernel of 4.8 or later serves it",
	.setup = vsock_vh_setup,
	.backend_on = vsock_vh_backend_on,
	.backend_off = vsock_vh_backend_off,
};

int vsock_vhost_open(struct vsock_vhost *vv, const struct vhost_sys *sys,
		     const struct guest_mem *gm, uint64_t guest_cid,
		     const char *name)
{
	const char *path = getenv("MICROVM_VHOST_VSOCK_DEVICE");

	if (!path || !*path)
		path = VSOCK_VHOST_DEVICE;
	vv->guest_cid = guest_cid;
	vv->nr_irq = 0;
	return vhost_open(&vv->dev, sys, &vsock_vh_ops, vv, gm, path, name);
}

uint64_t vsock_vhost_features(const struct vsock_vhost *vv, uint64_t offered)
{
	return offered & vv->dev.features;
}

/* Queues [0, @n) of @vdev: interrupts direct (@on) or back to notify(). */
static void vsock_vh_direct_irq(struct virtio_dev *vdev, unsigned int n,
				bool on)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		vdev->tops->direct_irq(vdev, &vdev->queues[i], on);
}

int vsock_vhost_start(struct vsock_vhost *vv, struct virtio_dev *vdev)
{
	struct vhost_ring rings[VSOCK_VHOST_RINGS];
	unsigned int i;
	int ret;

	if (!vdev->tops->direct_irq) {
		log_ratelimited(&vv->dev.rl, LOG_ERROR,
				"%s: transport %s cannot take interrupts from "
				"vhost_vsock", vdev->name, vdev->tops->name);
		return -ENOTSUP;
	}
	for (i = 0; i < VSOCK_VHOST_RINGS; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		if (!q->enabled || !q->vq.ready) {
			log_ratelimited(&vv->dev.rl, LOG_ERROR,
					"%s: engine=vhost: queue %u is not "
					"enabled", vdev->name, i);
			return -EINVAL;
		}
		rings[i] = (struct vhost_ring){
			.size = q->vq.size,
			.desc = q->vq.desc,
			.avail = q->vq.avail,
			.used = q->vq.used,
			.base = q->vq.last_avail_idx,
			.kick_fd = q->kick_fd,
		};
	}
	/* Each ring's call fd before the kernel may signal it. */
	vsock_vh_direct_irq(vdev, VSOCK_VHOST_RINGS, true);
	vv->nr_irq = VSOCK_VHOST_RINGS;
	ret = vhost_start(&vv->dev, rings, VSOCK_VHOST_RINGS,
			  vdev->driver_features, NULL);
	if (ret) {
		vsock_vh_direct_irq(vdev, VSOCK_VHOST_RINGS, false);
		vv->nr_irq = 0;
	}
	return ret;
}

void vsock_vhost_stop(struct vsock_vhost *vv, struct virtio_dev *vdev)
{
	struct vhost_ring rings[VSOCK_VHOST_RINGS];
	unsigned int i;

	if (!vv->dev.serving)
		return;
	for (i = 0; i < VSOCK_VHOST_RINGS; i++)
		rings[i].base = vdev->queues[i].vq.last_avail_idx;
	vhost_stop(&vv->dev, rings, VSOCK_VHOST_RINGS);
	/* What the kernel signalled meanwhile is delivered. */
	vsock_vh_direct_irq(vdev, vv->nr_irq, false);
	vv->nr_irq = 0;
	/* Where serving ended: a resume goes on from there. A ring whose
	 * GET_VRING_BASE failed keeps its base (logged). */
	for (i = 0; i < VSOCK_VHOST_RINGS; i++)
		vdev->queues[i].vq.last_avail_idx = rings[i].base;
}

void vsock_vhost_close(struct vsock_vhost *vv)
{
	vhost_close(&vv->dev);
}
