/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine=vhost for virtio-vsock: the kernel's vhost_vsock module serves
 * the rx and tx queues (0 and 1) and the host reaches the guest through
 * AF_VSOCK at its CID; the event queue (2) stays in the VMM, for
 * TRANSPORT_RESET. The generic sequence is the vhost layer's
 * (virtio/vhost.h); this adds the device node, the guest CID
 * (VHOST_VSOCK_SET_GUEST_CID), the switch (VHOST_VSOCK_SET_RUNNING) and
 * the feature filter. Each queue's used-buffer interrupt goes straight
 * from the kernel to the transport's eventfd (tops->direct_irq).
 *
 *	vsock_vhost_open(&vv, sys, gm, cid, name); // SET_OWNER, GET_FEATURES,
 *	                                           // SET_MEM_TABLE, GUEST_CID
 *	DRIVER_OK, resume: vsock_vhost_start(&vv, vdev);  // from the bases
 *	reset, pause:      vsock_vhost_stop(&vv, vdev);   // bases kept
 *	vsock_vhost_close(&vv);
 */
#ifndef MICROVM_VIRTIO_VSOCK_VHOST_H
#define MICROVM_VIRTIO_VSOCK_VHOST_H

#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/vhost.h"
#include "virtio/virtio.h"

/* The device node; MICROVM_VHOST_VSOCK_DEVICE names another (tests). */
#define VSOCK_VHOST_DEVICE "/dev/vhost-vsock"
/* The rings the kernel serves: rx and tx (virtio 1.2 §5.10.2). */
#define VSOCK_VHOST_RINGS 2

/* VIRTIO_VSOCK_F_SEQPACKET (virtio 1.2 §5.10.3): the kernel's to serve. */
#define VSOCK_F_SEQPACKET 1

struct vsock_vhost {
	struct vhost_dev dev;
	uint64_t guest_cid;
};

/**
 * vsock_vhost_open() - open the vhost-vsock device for guest @guest_cid.
 * @vv: state to fill
 * @sys: the system calls (vhost_sys_host, or a fake)
 * @gm: guest RAM
 * @guest_cid: the guest's CID, 3 .. 0xfffffffe
 * @name: for messages
 *
 * Opens /dev/vhost-vsock (or $MICROVM_VHOST_VSOCK_DEVICE), takes it and
 * sets the memory table (vhost_open()), then VHOST_VSOCK_SET_GUEST_CID.
 * A missing node names `modprobe vhost_vsock`; a CID another VM or
 * vhost user holds (EADDRINUSE) names the CID.
 * Return: 0 or -errno (nothing left open). Context: startup.
 */
int vsock_vhost_open(struct vsock_vhost *vv, const struct vhost_sys *sys,
		     const struct guest_mem *gm, uint64_t guest_cid,
		     const char *name);

/**
 * vsock_vhost_features() - the feature bits to offer: @offered that the
 * kernel serves (VHOST_GET_FEATURES at open).
 * @vv: an open device
 * @offered: what the VMM can offer with this engine
 * Return: the intersection. Context: startup.
 */
uint64_t vsock_vhost_features(const struct vsock_vhost *vv,
			      uint64_t offered);

/**
 * vsock_vhost_start() - serve rx and tx from their saved avail index
 * (q->vq.last_avail_idx): each queue's interrupt goes direct
 * (tops->direct_irq, which sets its call fd through ops->call_changed),
 * then vhost_start() with VHOST_VSOCK_SET_RUNNING 1.
 * @vv: an open device, not serving
 * @vdev: the device; rx and tx enabled and started (virtq_start())
 * Return: 0 or -errno (logged rate-limited; nothing served, both queues
 * back to notify()). Context: the thread handling DRIVER_OK or a resume,
 * vdev->lock held.
 */
int vsock_vhost_start(struct vsock_vhost *vv, struct virtio_dev *vdev);

/**
 * vsock_vhost_stop() - VHOST_VSOCK_SET_RUNNING 0, GET_VRING_BASE per
 * ring into q->vq.last_avail_idx (a later start resumes there, replaying
 * nothing), interrupts back to notify(). Nothing happens unless serving.
 * @vv: an open device
 * @vdev: the device it serves
 * Context: the thread handling reset, pause or teardown, vdev->lock held.
 */
void vsock_vhost_stop(struct vsock_vhost *vv, struct virtio_dev *vdev);

/**
 * vsock_vhost_close() - close the device (the kernel drops the CID).
 * Nothing happens after a failed open or a close. Context: teardown.
 */
void vsock_vhost_close(struct vsock_vhost *vv);

#endif
