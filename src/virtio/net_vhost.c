// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-net engine (net_vhost.h): what the kernel's /dev/vhost-net
 * adds to the generic vhost sequence (vhost.c): the feature filter and
 * VHOST_NET_SET_BACKEND, which attaches a pair's tap queue to both of
 * its rings, or detaches it.
 */
#include "virtio/net_vhost.h"

#include <errno.h>
#include <linux/vhost.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#define NET_VHOST_FIX_LOAD                                               \
	"modprobe vhost_net (and give microvm read-write access to "        \
	"/dev/vhost-net); or leave engine=vhost out for the VMM's own "      \
	"queue threads"

#define F(bit) (1ull << (bit))

/* Features vhost_net serves or refuses itself: offered only when it
 * serves them. The rest (checksum and segmentation offloads, MAC, MTU,
 * status, the control queue) are the tap's or the VMM's. */
#define NET_VHOST_RING_FEATURES                                          \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_EVENT_IDX) |                 \
	 F(VIRTIO_F_INDIRECT_DESC) | F(VIRTIO_NET_F_MRG_RXBUF) |          \
	 F(VIRTIO_F_ANY_LAYOUT) | F(VIRTIO_F_NOTIFY_ON_EMPTY))

static int net_vh_set_backend(struct vhost_dev *v, unsigned int index,
			      int fd)
{
	struct vhost_vring_file f = { .index = index, .fd = fd };
	int ret = vhost_ioctl(v, VHOST_NET_SET_BACKEND, &f);

	if (ret < 0)
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: ring %u: "
				"VHOST_NET_SET_BACKEND %d: %s", v->name, index,
				fd, strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* The tap queue on both rings; on a failure, none. */
static int net_vh_backend_on(struct vhost_dev *v, unsigned int nr_rings,
			     const void *arg)
{
	const struct net_vhost *nv = arg;
	unsigned int i;
	int ret;

	for (i = 0; i < nr_rings; i++) {
		ret = net_vh_set_backend(v, i, nv->tap_fd);
		if (ret) {
			while (i--)
				net_vh_set_backend(v, i, -1);
			return ret;
		}
	}
	return 0;
}

/* The kernel flushes the ring's worker before SET_BACKEND returns. */
static void net_vh_backend_off(struct vhost_dev *v, unsigned int nr_rings)
{
	unsigned int i;

	for (i = 0; i < nr_rings; i++)
		net_vh_set_backend(v, i, -1);
}

static const struct vhost_ops net_vh_ops = {
	.what = "vhost_net",
	.fix_load = NET_VHOST_FIX_LOAD,
	.fix_version = "a kernel of 4.0 or later serves it",
	.backend_on = net_vh_backend_on,
	.backend_off = net_vh_backend_off,
};

int net_vhost_open(struct net_vhost *nv, const struct vhost_sys *sys,
		   const struct guest_mem *gm, int tap_fd, const char *name)
{
	const char *path = getenv("MICROVM_VHOST_NET_DEVICE");

	if (!path || !*path)
		path = NET_VHOST_DEVICE;
	nv->tap_fd = tap_fd;
	return vhost_open(&nv->dev, sys, &net_vh_ops, nv, gm, path, name);
}

uint64_t net_vhost_features(const struct net_vhost *nv, uint64_t offered)
{
	return offered & ~(NET_VHOST_RING_FEATURES & ~nv->dev.features);
}

uint64_t net_vhost_used(const struct net_vhost *nv,
			const struct virtio_dev *vdev, unsigned int pair,
			unsigned int ring)
{
	uint64_t n = nv->used_total[ring];

	if (nv->dev.serving)
		n += (uint16_t)(virtio_queue_used_idx(vdev, 2 * pair + ring) -
				nv->used_at_start[ring]);
	return n;
}

int net_vhost_start(struct net_vhost *nv, struct virtio_dev *vdev,
		    unsigned int pair)
{
	unsigned int i;

	for (i = 0; i < NET_VHOST_RINGS; i++)
		nv->used_at_start[i] = virtio_queue_used_idx(vdev, 2 * pair + i);
	/* Only what vhost_net knows: it refuses any other bit. */
	return vhost_start_queues(&nv->dev, vdev, 2 * pair, NET_VHOST_RINGS,
				  vdev->driver_features & nv->dev.features,
				  nv);
}

void net_vhost_stop(struct net_vhost *nv, struct virtio_dev *vdev,
		    unsigned int pair)
{
	unsigned int i;

	if (!nv->dev.serving)
		return;
	vhost_stop_queues(&nv->dev, vdev, 2 * pair, NET_VHOST_RINGS);
	/* Nothing is pushed any more: what this stretch used. */
	for (i = 0; i < NET_VHOST_RINGS; i++)
		nv->used_total[i] += (uint16_t)(virtio_queue_used_idx(vdev,
								2 * pair + i) -
						nv->used_at_start[i]);
}

void net_vhost_close(struct net_vhost *nv)
{
	vhost_close(&nv->dev);
}
