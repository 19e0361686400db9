/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic virtio queue worker: one thread that serves one or more
 * queues of a device (virtio-blk: one queue each; vsock: rx, tx and event
 * together with its host sockets; net: a queue pair and its tap). It owns
 * what every device's queue thread repeats: the thread itself (name,
 * signal mask, seccomp class), an epoll set of the queues' kick eventfds
 * and the device's own fds, kick draining and counting, the stop/wake
 * doorbell, and the stop protocol (a stop asked is seen by a polling or a
 * sleeping thread; the thread ends only once the device says everything
 * it took is done). The device supplies the rounds (pop, process, push,
 * notify inside its defer_call section) and what to do before a sleep
 * (poll, a held notification's deadline).
 *
 *	vq_worker_init(&w, &ops, dev, "vda-q0", CONFINE_IO);
 *	vq_worker_add_kick(&w, q, TAG_KICK);       // q->kick_fd, counted
 *	vq_worker_add_fd(&w, disk_fd, TAG_DISK);   // anything readable
 *	vq_worker_start(&w);                       // ops->round(kicked) first
 *	...  vq_worker_wake(&w);                   // another round, now
 *	vq_worker_stop(&w);    // stopping = true; ends once ops->drained()
 *	vq_worker_destroy(&w); // closes its epoll set and doorbell
 *
 * A stopped worker may be started again (pause/resume): its fds stay
 * registered until vq_worker_destroy(). Before vq_worker_init() (or
 * after a failed one) epfd and wake_fd are -1, and vq_worker_destroy()
 * does nothing, once the owner has set them so.
 */
#ifndef MICROVM_VIRTIO_WORKER_H
#define MICROVM_VIRTIO_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/confine.h"
#include "util/log.h"
#include "virtio/virtio.h"

/* Tags at or above this are the worker's own. */
#define VQ_WORKER_TAG_RESERVED (UINT64_C(1) << 63)
/* Queues whose kick eventfd one worker watches. */
#define VQ_WORKER_MAX_KICKS 4
/* Ready fds handled per wakeup; more are seen on the next one. */
#define VQ_WORKER_MAX_EVENTS 64

/* ops->idle(): loop at once (idle() ran a round itself). */
#define VQ_WORKER_AGAIN INT64_MIN

struct vq_worker;

struct vq_worker_ops {
	/*
	 * Optional: first thing in the new thread, before it is confined
	 * (prctl, guarded_copy_thread()).
	 */
	void (*enter)(void *opaque);
	/*
	 * One round after a wakeup. @tags[0 .. n): the device's tags whose
	 * fds were ready (kick eventfds already drained and counted in
	 * q->stats.kicks); @kicked: a kick came (or this is the first round
	 * of a start, which must look at every ring: buffers may have been
	 * added before the thread listened). n is 0 after a wake
	 * (vq_worker_wake()) or a timeout of 0.
	 */
	void (*round)(void *opaque, const uint64_t *tags, unsigned int n,
		      bool kicked);
	/*
	 * Optional: about to sleep. May busy-poll and run rounds itself
	 * (then returns VQ_WORKER_AGAIN), else returns the longest sleep in
	 * nanoseconds: -1 until an event, 0 only to look at the fds. A
	 * sleep that ends by its timeout with nothing ready is not a round:
	 * the loop comes back here. NULL: sleep until an event.
	 */
	int64_t (*idle)(void *opaque);
	/*
	 * Optional: a wakeup after a sleep, before its round (adaptive
	 * polling learns from it). @kicked: a kick was drained.
	 */
	void (*woke)(void *opaque, bool kicked);
	/*
	 * Stopping: whether everything the device took is done, so the
	 * thread may end. Until then it keeps running rounds (fds and
	 * idle as usual). NULL: at once.
	 */
	bool (*drained)(void *opaque);
	/* Optional: last thing in the thread (release a held interrupt). */
	void (*leave)(void *opaque);
};

struct vq_worker {
	const struct vq_worker_ops *ops;
	void *opaque;
	char name[16];
	enum confine_class cls;
	int epfd;
	int wake_fd;
	unsigned int nr_kicks;
	struct {
		struct virtio_queue *q;
		uint64_t tag;
	} kicks[VQ_WORKER_MAX_KICKS];
	pthread_t thread;
	bool running;     /* started and not yet joined */
	bool stopping;    /* the thread saw the stop; read by the device's
			   * callbacks, in the thread */
	atomic_bool stop_req; /* vq_worker_stop() asked; polls end on it */
	struct log_ratelimit rl;
};

/**
 * vq_worker_init() - an idle worker with an empty epoll set.
 * @w: state to fill
 * @ops: the device's callbacks (a const table)
 * @opaque: passed to each callback
 * @name: thread name (truncated to 15 bytes)
 * @cls: the seccomp class the thread confines itself to
 * Return: 0 or -errno (nothing left open). Context: device setup.
 */
int vq_worker_init(struct vq_worker *w, const struct vq_worker_ops *ops,
		   void *opaque, const char *name, enum confine_class cls);

/**
 * vq_worker_add_kick() - watch @q's kick eventfd: a ready one is drained,
 * its count added to q->stats.kicks, and @tag reported with kicked set.
 * @tag: below VQ_WORKER_TAG_RESERVED
 * Return: 0, -ENOSPC (VQ_WORKER_MAX_KICKS), or -errno.
 * Context: the worker is not running.
 */
int vq_worker_add_kick(struct vq_worker *w, struct virtio_queue *q,
		       uint64_t tag);

/**
 * vq_worker_add_fd() - watch @fd for readability; @tag is reported as is
 * (the device reads or accepts from @fd itself, or it stays ready).
 * @tag: below VQ_WORKER_TAG_RESERVED
 * Return: 0 or -errno (-EEXIST when watched already).
 * Context: the worker's thread, or any thread while it is not running.
 */
int vq_worker_add_fd(struct vq_worker *w, int fd, uint64_t tag);

/**
 * vq_worker_watch() - change what @fd is watched for: EPOLLIN and/or
 * EPOLLOUT (level-triggered); 0 keeps it registered but quiet.
 * Return: 0 or -errno. Context: as vq_worker_add_fd().
 */
int vq_worker_watch(struct vq_worker *w, int fd, uint64_t tag,
		    uint32_t events);

/**
 * vq_worker_del_fd() - stop watching @fd (before closing it).
 * Return: 0 or -errno. Context: as vq_worker_add_fd().
 */
int vq_worker_del_fd(struct vq_worker *w, int fd);

/**
 * vq_worker_start() - start the thread: ops->enter(), confinement, a
 * first round with kicked set, then the loop.
 * Return: 0 or -errno (nothing running). Context: the thread handling
 * DRIVER_OK or a resume, vdev->lock held.
 */
int vq_worker_start(struct vq_worker *w);

/**
 * vq_worker_wake() - run a round at once, as after a kick (a rate limit
 * changed, a host socket has room). No effect unless running.
 * Context: any thread; async-signal-safe.
 */
void vq_worker_wake(struct vq_worker *w);

/**
 * vq_worker_stop() - set stopping, wait until ops->drained() lets the
 * thread end, and join it. No effect unless running.
 * Context: any thread but the worker's.
 */
void vq_worker_stop(struct vq_worker *w);

/**
 * vq_worker_stop_asked() - a stop was asked: a busy-poll ends on it.
 * Context: the worker's thread.
 */
bool vq_worker_stop_asked(struct vq_worker *w);

/**
 * vq_worker_destroy() - close the epoll set and the doorbell (the
 * device's fds stay the device's). The worker must not be running.
 * Context: device teardown.
 */
void vq_worker_destroy(struct vq_worker *w);

#endif
