/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vhost-blk queue backend: the project's kernel module
 * (kernel/vhost-blk, ABI in kernel/vhost-blk/uapi/vhost_blk.h) serves the
 * queues, the VMM only sets it up and takes the ring state back. Every
 * system call goes through a struct blk_vhost_sys, so that unit tests run
 * the ioctl sequence against a fake device.
 *
 *	blk_vhost_open(&v, sys, gm, name);     // GET_VERSION, SET_OWNER,
 *	                                        // GET_FEATURES, SET_MEM_TABLE
 *	blk_vhost_set_call(&v, i, fd);          // any time after open
 *	blk_vhost_start(&v, &s, &img);          // SET_FEATURES, per queue
 *	                                        // NUM/ADDR/BASE/KICK, BACKEND
 *	blk_vhost_stop(&v, &s);                 // BACKEND -1, GET_VRING_BASE
 *	blk_vhost_close(&v);
 */
#ifndef MICROVM_BLK_VHOST_H
#define MICROVM_BLK_VHOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "util/log.h"
#include "virtio/blk_backend.h"

/* The device node; MICROVM_VHOST_BLK_DEVICE names another (tests). */
#define BLK_VHOST_DEVICE "/dev/vhost-blk"

/* System calls on the device, or a fake's. */
struct blk_vhost_sys {
	/* Return: a descriptor or -errno. */
	int (*open)(void *opaque, const char *path);
	/* Return: >= 0 or -errno. */
	int (*ioctl)(void *opaque, int fd, unsigned long req, void *arg);
	void (*close)(void *opaque, int fd);
	void *opaque;
};

/* open(2), ioctl(2), close(2). */
extern const struct blk_vhost_sys blk_vhost_sys_host;

/* The image as the module is to serve it. */
struct blk_vhost_image {
	int fd;            /* regular file or block device */
	bool readonly;
	bool no_flush;     /* cache=unsafe: FLUSH completes at once */
	uint64_t capacity; /* 512-byte sectors */
	const char *serial; /* <= 20 bytes */
	uint32_t poll_us;   /* the workers' polling cap, 0 .. BLK_POLL_MAX_US */
};

/* The module found queue @index's ring broken (VHOST_SET_VRING_ERR). */
typedef void blk_vhost_err_fn(void *opaque, unsigned int index);

struct blk_vhost {
	const struct blk_vhost_sys *sys;
	/* Called from the error thread, set by the caller after open. */
	blk_vhost_err_fn *err_fn;
	void *err_opaque;
	/* While serving: one error eventfd per ring, watched by a thread
	 * ("<name>-vherr") with a stop eventfd. */
	int err_fd[VIRTIO_MAX_QUEUES];
	int err_stop_fd;
	int err_epfd;
	pthread_t err_thread;
	bool err_running;
	int fd;
	char name[16];
	uint64_t features;       /* what the module serves (GET_FEATURES) */
	unsigned int nr_started; /* rings set up by the last start */
	bool serving;            /* SET_BACKEND with an image in effect */
	uint64_t starts;         /* successful starts, for --stats */
	uint16_t stop_base[VIRTIO_MAX_QUEUES]; /* GET_VRING_BASE at stop */
	struct log_ratelimit rl;
};

/**
 * blk_vhost_open() - open the module's device and give it the VM.
 * @v: state to fill
 * @sys: the system calls (blk_vhost_sys_host, or a fake)
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
int blk_vhost_open(struct blk_vhost *v, const struct blk_vhost_sys *sys,
		   const struct guest_mem *gm, const char *name);

/**
 * blk_vhost_start() - serve @s's queues from @img: SET_FEATURES, then per
 * queue SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE (queues[i].base),
 * SET_VRING_KICK (its ioeventfd), SET_VRING_ERR (an eventfd a thread
 * watches: a ring the vhost core finds broken calls v->err_fn), then
 * VHOST_BLK_SET_BACKEND. The call eventfds are set apart
 * (blk_vhost_set_call()).
 * Return: 0 or -errno; on failure the module serves nothing.
 * Context: the thread handling DRIVER_OK.
 */
int blk_vhost_start(struct blk_vhost *v, const struct blk_backend_start *s,
		    const struct blk_vhost_image *img);

/**
 * blk_vhost_stop() - VHOST_BLK_SET_BACKEND with fd -1 (returns once every
 * request in flight has completed and been pushed), then
 * VHOST_GET_VRING_BASE per queue, written into queues[i].base and kept in
 * stop_base[] for the next start and --stats. Nothing happens unless a
 * start succeeded.
 * Context: the thread handling reset, or teardown.
 */
void blk_vhost_stop(struct blk_vhost *v, struct blk_backend_start *s);

/**
 * blk_vhost_set_call() - VHOST_SET_VRING_CALL: queue @index signals @fd
 * (-1: nothing) from now on.
 * Return: 0 or -errno (logged rate-limited).
 * Context: any thread; the transport serialises calls per device.
 */
int blk_vhost_set_call(struct blk_vhost *v, unsigned int index, int fd);

/** blk_vhost_close() - close the device (the module drops the VM). */
void blk_vhost_close(struct blk_vhost *v);

/**
 * blk_vhost_features() - of the device features @offered, those the VMM
 * may still offer: the bits the module serves, plus those only the
 * VMM's configuration space answers (sizes, topology, MQ, RO).
 */
uint64_t blk_vhost_features(const struct blk_vhost *v, uint64_t offered);

#endif
