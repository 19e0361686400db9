/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine=vhost for virtio-net: the kernel's vhost_net module serves the
 * rx and tx rings of a queue pair straight to and from its tap queue
 * fd, one /dev/vhost-net per pair (the module serves exactly two rings).
 * The control queue stays in the VMM. The generic sequence is the vhost
 * layer's (virtio/vhost.h); this adds the device node, the feature
 * filter and the switch (VHOST_NET_SET_BACKEND per ring: the tap fd,
 * or -1 to stop, which returns once the kernel's workers are flushed).
 * Each ring's used-buffer interrupt goes straight from the kernel to
 * the transport's eventfd (tops->direct_irq).
 *
 *	net_vhost_open(&nv, sys, gm, tap_fd, name);  // SET_OWNER, FEATURES,
 *	                                             // SET_MEM_TABLE
 *	DRIVER_OK, resume: net_vhost_start(&nv, vdev, pair); // from the bases
 *	reset, pause:      net_vhost_stop(&nv, vdev, pair);  // bases kept
 *	net_vhost_close(&nv);
 */
#ifndef MICROVM_VIRTIO_NET_VHOST_H
#define MICROVM_VIRTIO_NET_VHOST_H

#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/vhost.h"
#include "virtio/virtio.h"

/* The device node; MICROVM_VHOST_NET_DEVICE names another (tests). */
#define NET_VHOST_DEVICE "/dev/vhost-net"
/* The rings one vhost-net device serves: a pair's rx and tx. */
#define NET_VHOST_RINGS 2

struct net_vhost {
	struct vhost_dev dev;
	int tap_fd;          /* the pair's tap queue; not owned */
	/* Buffers each ring used (rx: filled, tx: sent) while served,
	 * over every start: the kernel counts nothing the VMM can read.
	 * Read under the device's lock (start and stop hold it). */
	uint16_t used_at_start[NET_VHOST_RINGS];
	uint64_t used_total[NET_VHOST_RINGS];
};

/**
 * net_vhost_open() - open a vhost-net device for one queue pair.
 * @nv: state to fill
 * @sys: the system calls (vhost_sys_host, or a fake)
 * @gm: guest RAM
 * @tap_fd: the pair's tap queue fd (12-byte vnet headers), kept open by
 *          the caller for as long as @nv
 * @name: for messages
 * Opens /dev/vhost-net (or $MICROVM_VHOST_NET_DEVICE), takes it and sets
 * the memory table (vhost_open()). A missing node names
 * `modprobe vhost_net`.
 * Return: 0 or -errno (nothing left open). Context: startup.
 */
int net_vhost_open(struct net_vhost *nv, const struct vhost_sys *sys,
		   const struct guest_mem *gm, int tap_fd, const char *name);

/**
 * net_vhost_features() - the feature bits to offer: @offered less the
 * ring and buffer features vhost_net knows of but does not serve (the
 * offloads are the tap's, not vhost_net's).
 */
uint64_t net_vhost_features(const struct net_vhost *nv, uint64_t offered);

/**
 * net_vhost_start() - hand queues 2 * @pair (rx) and 2 * @pair + 1 (tx)
 * of @vdev to the kernel from their avail indices, interrupts direct.
 * Return: 0 or -errno (logged; nothing served). Context: DRIVER_OK or a
 * resume.
 */
int net_vhost_start(struct net_vhost *nv, struct virtio_dev *vdev,
		    unsigned int pair);

/**
 * net_vhost_stop() - stop serving (the kernel flushes what is in
 * flight), write where each ring ended back into its queue's avail index
 * and give the interrupts back to the transport. Nothing happens unless
 * serving. Context: reset, pause, teardown.
 */
void net_vhost_stop(struct net_vhost *nv, struct virtio_dev *vdev,
		    unsigned int pair);

/**
 * net_vhost_used() - buffers ring @ring (0: rx, 1: tx) of @pair used
 * while vhost_net served it, over every start (each stretch counted
 * modulo 2^16: the used index's width). Context: any thread.
 */
uint64_t net_vhost_used(const struct net_vhost *nv,
			const struct virtio_dev *vdev, unsigned int pair,
			unsigned int ring);

/** net_vhost_close() - stop if serving, then close the device. */
void net_vhost_close(struct net_vhost *nv);

#endif
