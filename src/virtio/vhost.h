/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vhost-kernel backend layer: a kernel vhost device (the project's
 * /dev/vhost-blk, the kernel's /dev/vhost-vsock or /dev/vhost-net) serves
 * a device's rings; the VMM opens it, gives it the VM's memory and each
 * ring, and takes the ring state back at stop. A device adds only what is
 * its own through a const struct vhost_ops (a probe before ownership, a
 * setup after the memory table, the backend switch). Every system call
 * goes through a struct vhost_sys, so that unit tests run the ioctl
 * sequence against a fake device.
 *
 *	vhost_open(&v, sys, ops, opaque, gm, path, name);
 *	        // ops->probe, SET_OWNER, GET_FEATURES, SET_MEM_TABLE,
 *	        // ops->setup; on failure nothing is left open
 *	vhost_set_call(&v, i, fd);          // any time after open
 *	vhost_start(&v, rings, n, features, arg);
 *	        // SET_FEATURES, per ring NUM/ADDR/BASE/KICK/ERR,
 *	        // ops->backend_on(arg)
 *	vhost_stop(&v, rings, n);           // ops->backend_off, then
 *	        // GET_VRING_BASE per ring into rings[i].base: a later
 *	        // vhost_start() with the same rings resumes there
 *	vhost_close(&v);                    // stops first if serving
 */
#ifndef MICROVM_VHOST_H
#define MICROVM_VHOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "util/log.h"

/* The most rings one vhost device serves. */
#define VHOST_MAX_RINGS 64

struct virtio_dev;

/* System calls on the device, or a fake's. */
struct vhost_sys {
	/* Return: a descriptor or -errno. */
	int (*open)(void *opaque, const char *path);
	/* Return: >= 0 or -errno. */
	int (*ioctl)(void *opaque, int fd, unsigned long req, void *arg);
	void (*close)(void *opaque, int fd);
	void *opaque;
};

/* open(2) (O_RDWR | O_CLOEXEC), ioctl(2), close(2). */
extern const struct vhost_sys vhost_sys_host;

/* Ring i of a device as vhost_start() hands it to the kernel. */
struct vhost_ring {
	uint16_t size;
	/* Host addresses of the rings, each wholly in guest RAM (the
	 * caller checked). */
	void *desc, *avail, *used;
	uint16_t base; /* avail index to start at; vhost_stop() writes
			* back where serving ended */
	int kick_fd;   /* the queue's ioeventfd */
};

struct vhost_dev;

/* What a device adds to the generic sequence; a const table. */
struct vhost_ops {
	/* The device in messages, e.g. "vhost-blk", "vhost_vsock". */
	const char *what;
	/* The fix when the device node is missing: what to load. */
	const char *fix_load;
	/* The fix when the device lacks VIRTIO_F_VERSION_1. */
	const char *fix_version;
	/* After the open, before VHOST_SET_OWNER (blk: its ABI version).
	 * 0 or -errno, a message logged. May be NULL. */
	int (*probe)(struct vhost_dev *v, const char *path);
	/* After VHOST_SET_MEM_TABLE (vsock: VHOST_VSOCK_SET_GUEST_CID).
	 * 0 or -errno, a message logged. May be NULL. */
	int (*setup)(struct vhost_dev *v);
	/* The last step of vhost_start(): serve rings [0, @nr_rings) (blk:
	 * its SET_BACKEND; vsock: SET_RUNNING 1; net: a tap per ring).
	 * @arg is vhost_start()'s. 0 or -errno with nothing served, a
	 * message logged. */
	int (*backend_on)(struct vhost_dev *v, unsigned int nr_rings,
			  const void *arg);
	/* The first step of vhost_stop(): serve nothing more; returns once
	 * every request in flight has completed and been pushed. */
	void (*backend_off)(struct vhost_dev *v, unsigned int nr_rings);
};

/* The kernel found ring @index broken (VHOST_SET_VRING_ERR). */
typedef void vhost_err_fn(void *opaque, unsigned int index);

struct vhost_dev {
	const struct vhost_sys *sys;
	const struct vhost_ops *ops;
	void *opaque; /* the device's, for its ops */
	/* Called from the error thread, set by the caller after open. */
	vhost_err_fn *err_fn;
	void *err_opaque;
	/* While serving: one error eventfd per ring, watched by a thread
	 * ("<name>-vherr") with a stop eventfd. */
	int err_fd[VHOST_MAX_RINGS];
	int err_stop_fd;
	int err_epfd;
	pthread_t err_thread;
	bool err_running;
	int fd;
	char name[16];
	uint64_t features;       /* what the device serves (GET_FEATURES) */
	unsigned int nr_started; /* rings set up by the last start */
	bool serving;            /* backend_on in effect */
	uint64_t starts;         /* successful starts, for --stats */
	uint16_t stop_base[VHOST_MAX_RINGS]; /* GET_VRING_BASE at stop */
	struct log_ratelimit rl;
};

/**
 * vhost_open() - open a vhost device and give it the VM.
 * @v: state to fill
 * @sys: the system calls (vhost_sys_host, or a fake)
 * @ops: what the device adds; outlives @v
 * @opaque: the device's, kept in v->opaque for @ops
 * @gm: guest RAM; every region goes into the memory table
 * @path: the device node, e.g. "/dev/vhost-vsock"
 * @name: device name for messages (@v->name may be passed)
 *
 * Opens @path, runs ops->probe, takes ownership (VHOST_SET_OWNER), reads
 * the features the device serves (it must serve VIRTIO_F_VERSION_1),
 * sets the memory table and runs ops->setup. Each failure logs one
 * message; a missing node names ops->fix_load.
 * Return: 0 or -errno (nothing left open). Context: startup.
 */
int vhost_open(struct vhost_dev *v, const struct vhost_sys *sys,
	       const struct vhost_ops *ops, void *opaque,
	       const struct guest_mem *gm, const char *path,
	       const char *name);

/**
 * vhost_ioctl() - one ioctl on the open device, for @v's ops.
 * @v: an open device
 * @req: the request
 * @arg: its argument
 * Return: >= 0 or -errno (not logged). Context: any thread.
 */
int vhost_ioctl(struct vhost_dev *v, unsigned long req, void *arg);

/**
 * vhost_start() - serve @rings: VHOST_SET_FEATURES, then per ring
 * SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE (rings[i].base),
 * SET_VRING_KICK, SET_VRING_ERR (an eventfd a thread watches: a ring the
 * vhost core finds broken calls v->err_fn; without it, a warning), then
 * ops->backend_on(@arg). The call eventfds are set apart
 * (vhost_set_call()).
 * @v: an open device, not serving
 * @rings: rings[i] is ring i of the device
 * @nr_rings: 1 .. VHOST_MAX_RINGS
 * @features: the negotiated features
 * @arg: handed to ops->backend_on
 * Return: 0 or -errno; on failure nothing is served, the kicks detached.
 * Context: the thread handling DRIVER_OK.
 */
int vhost_start(struct vhost_dev *v, const struct vhost_ring *rings,
		unsigned int nr_rings, uint64_t features,
		const void *arg);

/**
 * vhost_stop() - ops->backend_off, then VHOST_GET_VRING_BASE per started
 * ring, written into rings[i].base (for i < @nr_rings) and kept in
 * v->stop_base[]; the error eventfds and the kicks detached. A ring
 * whose GET_VRING_BASE fails keeps its base (logged). Nothing happens
 * unless a start succeeded.
 * @v: an open device
 * @rings: where to write the bases, or NULL
 * @nr_rings: the length of @rings
 * Context: the thread handling reset, pause, or teardown.
 */
void vhost_stop(struct vhost_dev *v, struct vhost_ring *rings,
		unsigned int nr_rings);

/**
 * vhost_start_queues() - vhost_start() with queues [@first, @first + @n)
 * of @vdev as rings 0 .. @n - 1, each from its avail index: every one
 * must be enabled and started, and the transport able to take
 * interrupts from outside (tops->direct_irq), which they are handed to
 * before the kernel may signal them (and given back on a failure).
 * @v: an open device, not serving
 * @vdev: the virtio device whose queues it serves
 * @first: its first queue
 * @n: how many, 1 .. VHOST_MAX_RINGS
 * @features: the negotiated features the kernel takes
 * @arg: handed to ops->backend_on
 * Return: 0 or -errno (logged; nothing served). Context: DRIVER_OK or a
 * resume, vdev->lock held.
 */
int vhost_start_queues(struct vhost_dev *v, struct virtio_dev *vdev,
		       unsigned int first, unsigned int n, uint64_t features,
		       const void *arg);

/**
 * vhost_stop_queues() - vhost_stop() of what vhost_start_queues()
 * started: each queue's avail index set where serving ended (a resume
 * goes on from there; a ring whose GET_VRING_BASE failed keeps its own),
 * the interrupts back to the transport, which delivers what the kernel
 * signalled meanwhile. Nothing happens unless serving.
 * Context: reset, pause, teardown, vdev->lock held.
 */
void vhost_stop_queues(struct vhost_dev *v, struct virtio_dev *vdev,
		       unsigned int first, unsigned int n);

/**
 * vhost_set_call() - VHOST_SET_VRING_CALL: ring @index signals @fd (-1:
 * nothing) from now on.
 * @v: an open device
 * @index: the ring
 * @fd: an eventfd (an irqfd), or -1
 * Return: 0 or -errno (logged rate-limited).
 * Context: any thread; the transport serialises calls per device.
 */
int vhost_set_call(struct vhost_dev *v, unsigned int index, int fd);

/**
 * vhost_close() - stop the device if it serves, then close it (the
 * kernel drops the VM). Nothing happens after a failed open or a close.
 * @v: the device
 * Context: teardown.
 */
void vhost_close(struct vhost_dev *v);

#endif
