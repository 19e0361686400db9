/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vhost-blk queue backend: the project's kernel module
 * (kernel/vhost-blk, ABI in kernel/vhost-blk/uapi/vhost_blk.h) serves the
 * queues, the VMM only sets it up and takes the ring state back. The
 * generic sequence is the vhost layer's (virtio/vhost.h); this adds the
 * device node, the ABI version check, the image (VHOST_BLK_SET_BACKEND)
 * and the feature filter.
 *
 *	blk_vhost_open(&v, sys, gm, name);     // GET_VERSION, SET_OWNER,
 *	                                        // GET_FEATURES, SET_MEM_TABLE
 *	vhost_set_call(&v, i, fd);              // any time after open
 *	blk_vhost_start(&v, &s, &img);          // SET_FEATURES, per queue
 *	                                        // NUM/ADDR/BASE/KICK, BACKEND
 *	blk_vhost_stop(&v, &s);                 // BACKEND -1, GET_VRING_BASE
 *	blk_vhost_close(&v);
 */
#ifndef MICROVM_BLK_VHOST_H
#define MICROVM_BLK_VHOST_H

#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/blk_backend.h"
#include "virtio/vhost.h"

/* The device node; MICROVM_VHOST_BLK_DEVICE names another (tests). */
#define BLK_VHOST_DEVICE "/dev/vhost-blk"

/* The image as the module is to serve it. */
struct blk_vhost_image {
	int fd;            /* regular file or block device */
	bool readonly;
	bool no_flush;     /* cache=unsafe: FLUSH completes at once */
	uint64_t capacity; /* 512-byte sectors */
	const char *serial; /* <= 20 bytes */
	uint32_t poll_us;   /* the workers' polling cap, 0 .. BLK_POLL_MAX_US */
};

/**
 * blk_vhost_open() - open the module's device and give it the VM.
 * @v: state to fill
 * @sys: the system calls (vhost_sys_host, or a fake)
 * @gm: guest RAM; every region goes into the memory table
 * @name: device name for messages, e.g. "vda"
 *
 * Opens BLK_VHOST_DEVICE (or $MICROVM_VHOST_BLK_DEVICE), checks
 * VHOST_BLK_GET_VERSION against VHOST_BLK_API_VERSION, takes ownership
 * (VHOST_SET_OWNER), reads the features it serves and sets the memory
 * table. Each failure logs one message naming the fix: the module to
 * load (modprobe vhost_blk, the build target vhost-blk-module), the
 * module to rebuild, the supported kernels.
 * Return: 0 or -errno (nothing left open). Context: startup.
 */
int blk_vhost_open(struct vhost_dev *v, const struct vhost_sys *sys,
		   const struct guest_mem *gm, const char *name);

/**
 * blk_vhost_start() - serve @s's queues from @img: SET_FEATURES, then per
 * queue SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE (queues[i].base),
 * SET_VRING_KICK (its ioeventfd), SET_VRING_ERR (an eventfd a thread
 * watches: a ring the vhost core finds broken calls v->err_fn), then
 * VHOST_BLK_SET_BACKEND. The call eventfds are set apart
 * (vhost_set_call()). queues[i].index is i: the module serves queues
 * [0, nr_queues) (blk_backend.c stops at the first gap).
 * Return: 0 or -errno; on failure the module serves nothing.
 * Context: the thread handling DRIVER_OK.
 */
int blk_vhost_start(struct vhost_dev *v, const struct blk_backend_start *s,
		    const struct blk_vhost_image *img);

/**
 * blk_vhost_stop() - VHOST_BLK_SET_BACKEND with fd -1 (returns once every
 * request in flight has completed and been pushed), then
 * VHOST_GET_VRING_BASE per queue, written into queues[i].base and kept in
 * stop_base[] for the next start and --stats. Nothing happens unless a
 * start succeeded.
 * Context: the thread handling reset, or teardown.
 */
void blk_vhost_stop(struct vhost_dev *v, struct blk_backend_start *s);

/**
 * blk_vhost_close() - vhost_close(): stop serving if need be, close the
 * device (the module drops the VM).
 * @v: the device
 * Context: teardown.
 */
void blk_vhost_close(struct vhost_dev *v);

/**
 * blk_vhost_features() - of the device features @offered, those the VMM
 * may still offer: the bits the module serves, plus those only the
 * VMM's configuration space answers (sizes, topology, MQ, RO).
 */
uint64_t blk_vhost_features(const struct vhost_dev *v, uint64_t offered);

#endif
