// SPDX-License-Identifier: Apache-2.0
/*
 * The generic virtio queue worker (worker.h): a thread, its epoll set of
 * kick eventfds and device fds, a doorbell for stop and wake, and the loop
 * that alternates the device's rounds with its idle step (poll, or the
 * deadline of something it holds) and sleeps. Devices own everything
 * about their requests; the worker owns only the thread and its events.
 */
#include "virtio/worker.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/evloop.h"

/* The doorbell's tag (stop and wake). */
#define VQW_TAG_WAKE VQ_WORKER_TAG_RESERVED

int vq_worker_init(struct vq_worker *w, const struct vq_worker_ops *ops,
		   void *opaque, const char *name, enum confine_class cls)
{
	int ret;

	memset(w, 0, sizeof(*w));
	w->epfd = w->wake_fd = -1;
	w->ops = ops;
	w->opaque = opaque;
	w->cls = cls;
	snprintf(w->name, sizeof(w->name), "%s", name);
	ret = evloop_new();
	if (ret < 0)
		return ret;
	w->epfd = ret;
	w->wake_fd = evfd_new();
	if (w->wake_fd < 0) {
		ret = w->wake_fd;
		goto err_close_ep;
	}
	ret = evloop_add(w->epfd, w->wake_fd, VQW_TAG_WAKE);
	if (ret)
		goto err_close_wake;
	return 0;

err_close_wake:
	close(w->wake_fd);
err_close_ep:
	close(w->epfd);
	w->epfd = w->wake_fd = -1;
	return ret;
}

int vq_worker_add_kick(struct vq_worker *w, struct virtio_queue *q,
		       uint64_t tag)
{
	int ret;

	assert(!w->running && tag < VQ_WORKER_TAG_RESERVED);
	if (w->nr_kicks == VQ_WORKER_MAX_KICKS)
		return -ENOSPC;
	ret = evloop_add(w->epfd, q->kick_fd, tag);
	if (ret)
		return ret;
	w->kicks[w->nr_kicks].q = q;
	w->kicks[w->nr_kicks].tag = tag;
	w->nr_kicks++;
	return 0;
}

int vq_worker_add_fd(struct vq_worker *w, int fd, uint64_t tag)
{
	assert(tag < VQ_WORKER_TAG_RESERVED);
	return evloop_add(w->epfd, fd, tag);
}

int vq_worker_watch(struct vq_worker *w, int fd, uint64_t tag,
		    uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	assert(tag < VQ_WORKER_TAG_RESERVED);
	return epoll_ctl(w->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

int vq_worker_del_fd(struct vq_worker *w, int fd)
{
	return evloop_del(w->epfd, fd);
}

bool vq_worker_stop_asked(struct vq_worker *w)
{
	return atomic_load_explicit(&w->stop_req, memory_order_relaxed);
}

/*
 * The tags of one wakeup, with the worker's own handled: a kick eventfd
 * is drained and counted, the doorbell drained (a stop asked becomes
 * stopping). Return: how many device tags are left in @tags, and in
 * @kicked whether a kick was drained.
 */
static unsigned int vqw_sort(struct vq_worker *w, uint64_t *tags,
			     unsigned int n, bool *kicked)
{
	unsigned int i, k, out = 0;
	uint64_t count;

	*kicked = false;
	for (i = 0; i < n; i++) {
		if (tags[i] == VQW_TAG_WAKE) {
			evfd_drain(w->wake_fd);
			if (atomic_load(&w->stop_req))
				w->stopping = true;
			continue;
		}
		for (k = 0; k < w->nr_kicks; k++) {
			if (w->kicks[k].tag != tags[i])
				continue;
			count = evfd_drain(w->kicks[k].q->kick_fd);
			atomic_fetch_add(&w->kicks[k].q->stats.kicks, count);
			*kicked |= count > 0;
			break;
		}
		tags[out++] = tags[i];
	}
	return out;
}

static bool vqw_done(struct vq_worker *w)
{
	return w->stopping && (!w->ops->drained || w->ops->drained(w->opaque));
}

static void *vqw_thread(void *arg)
{
	struct vq_worker *w = arg;
	const struct vq_worker_ops *ops = w->ops;
	uint64_t tags[VQ_WORKER_MAX_EVENTS];
	unsigned int left;
	int64_t timeout;
	bool kicked;
	int n;

	/* Named here: naming another thread opens /proc/self/task/N/comm,
	 * which the vCPU thread that starts us may not (util/confine.c). */
	pthread_setname_np(pthread_self(), w->name);
	if (ops->enter)
		ops->enter(w->opaque);
	confine_thread(w->cls);
	/* Buffers may have been added before this thread listened. */
	ops->round(w->opaque, NULL, 0, true);
	while (!vqw_done(w)) {
		timeout = ops->idle ? ops->idle(w->opaque) : -1;
		if (timeout == VQ_WORKER_AGAIN)
			continue;
		n = evloop_wait_ns(w->epfd, tags, VQ_WORKER_MAX_EVENTS,
				   timeout);
		/* The device's own deadline ended the sleep: idle() sees to
		 * it; a poll learns nothing from it. */
		if (!n && timeout > 0)
			continue;
		if (n < 0) {
			if (ops->woke)
				ops->woke(w->opaque, false);
			log_ratelimited(&w->rl, LOG_ERROR, "%s: epoll: %s",
					w->name, strerror(-n));
			continue;
		}
		left = vqw_sort(w, tags, (unsigned int)n, &kicked);
		if (ops->woke)
			ops->woke(w->opaque, kicked);
		ops->round(w->opaque, tags, left, kicked);
	}
	if (ops->leave)
		ops->leave(w->opaque);
	return NULL;
}

int vq_worker_start(struct vq_worker *w)
{
	sigset_t all, old;
	int ret;

	assert(!w->running && w->epfd >= 0);
	w->stopping = false;
	atomic_store(&w->stop_req, false);
	/* A wake or stop left from the last run is not this run's. */
	evfd_drain(w->wake_fd);
	/* Signals are for the vCPU threads: block them all in ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&w->thread, NULL, vqw_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	w->running = true;
	return 0;
}

void vq_worker_wake(struct vq_worker *w)
{
	if (w->running)
		evfd_signal(w->wake_fd);
}

void vq_worker_stop(struct vq_worker *w)
{
	if (!w->running)
		return;
	/* Seen by a polling thread at once, the eventfd by a sleeping one. */
	atomic_store(&w->stop_req, true);
	evfd_signal(w->wake_fd);
	pthread_join(w->thread, NULL);
	w->running = false;
}

void vq_worker_destroy(struct vq_worker *w)
{
	assert(!w->running);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->epfd = w->wake_fd = -1;
}
