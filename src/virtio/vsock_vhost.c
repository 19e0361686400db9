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
	return vhost_open(&vv->dev, sys, &vsock_vh_ops, vv, gm, path, name);
}

uint64_t vsock_vhost_features(const struct vsock_vhost *vv, uint64_t offered)
{
	return offered & vv->dev.features;
}

int vsock_vhost_start(struct vsock_vhost *vv, struct virtio_dev *vdev)
{
	return vhost_start_queues(&vv->dev, vdev, 0, VSOCK_VHOST_RINGS,
				  vdev->driver_features, NULL);
}

void vsock_vhost_stop(struct vsock_vhost *vv, struct virtio_dev *vdev)
{
	vhost_stop_queues(&vv->dev, vdev, 0, VSOCK_VHOST_RINGS);
}

void vsock_vhost_close(struct vsock_vhost *vv)
{
	vhost_close(&vv->dev);
}
