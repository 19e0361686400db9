/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tap backend of virtio-net: opening a tap interface with one queue
 * fd per queue pair (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, IFF_MULTI_QUEUE
 * for more than one), each fd carrying 12-byte virtio-net headers, and
 * setting the offloads the guest negotiated when the device starts.
 *
 *	net_tap_open("tap0", pairs, fds, err, sizeof(err));  // startup
 *	net_tap_set_offload(fd, driver_features);           // DRIVER_OK
 */
#ifndef MICROVM_VIRTIO_TAP_H
#define MICROVM_VIRTIO_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Queue fds of one tap; the kernel allows more, a machine needs fewer. */
#define NET_TAP_MAX_QUEUES 32

/**
 * net_tap_open() - attach to (or create) the tap @ifname, @queues queue
 * fds, non-blocking and close-on-exec, each with a 12-byte vnet header.
 * @ifname: interface name, shorter than IFNAMSIZ
 * @queues: 1 .. NET_TAP_MAX_QUEUES (more than 1: IFF_MULTI_QUEUE)
 * @fds: filled with @queues fds on success
 * @err/@errlen: one line naming the interface and the failure
 * Return: 0 or -errno (nothing left open). Context: startup, before
 * the process confines itself (it opens /dev/net/tun).
 */
int net_tap_open(const char *ifname, unsigned int queues, int *fds,
		 char *err, size_t errlen);

/**
 * net_tap_set_queue() - TUNSETQUEUE: attach (@on) or detach the tap queue
 * @fd. The kernel picks the queue of a packet to the guest among the
 * attached ones only, so the queues of pairs the driver does not use are
 * detached: a flow sent there would wait for a reader that never comes.
 * Return: 0, -ENOTTY when @fd is not a tap (a test's socket), or -errno.
 * Context: any thread.
 */
int net_tap_set_queue(int fd, bool on);

/**
 * net_tap_offloads() - the TUN_F_* flags for the negotiated virtio-net
 * features: what the guest can take on receive (GUEST_CSUM, GUEST_TSO4,
 * GUEST_TSO6). Context: any thread.
 */
unsigned int net_tap_offloads(uint64_t features);

/**
 * net_tap_set_offload() - TUNSETOFFLOAD with net_tap_offloads(@features).
 * Return: 0, -ENOTTY when @fd is not a tap (a test's socket: nothing to
 * set), or -errno. Context: the thread that starts the device.
 */
int net_tap_set_offload(int fd, uint64_t features);

#endif
