// SPDX-License-Identifier: Apache-2.0
/*
 * Thin wrappers over eventfd(2) and epoll(7) that fold the errno dance
 * (EINTR retries, EAGAIN meaning "nothing to do") into one place.
 */
#include "util/evloop.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EVLOOP_MAX_EVENTS 64

int evfd_new(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

int evfd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n;

	do {
		n = write(fd, &one, sizeof(one));
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(one))
		return 0;
	if (n < 0 && errno == EAGAIN)
		return 0;
	return n < 0 ? -errno : -EIO;
}

uint64_t evfd_drain(int fd)
{
	uint64_t v;
	ssize_t n;

	do {
		n = read(fd, &v, sizeof(v));
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(v) ? v : 0;
}

int evloop_new(void)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int evloop_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int evloop_del(int epfd, int fd)
{
	return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL) ? -errno : 0;
}

/* Hand back the tags of @n ready events (or -errno, EINTR as none). */
static int evloop_tags(const struct epoll_event *evs, int n, uint64_t *tags)
{
	int i;

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++)
		tags[i] = evs[i].data.u64;
	return n;
}

int evloop_wait(int epfd, uint64_t *tags, int max, int timeout_ms)
{
	struct epoll_event evs[EVLOOP_MAX_EVENTS];

	if (max < 1)
		return -EINVAL;
	if (max > EVLOOP_MAX_EVENTS)
		max = EVLOOP_MAX_EVENTS;
	return evloop_tags(evs, epoll_wait(epfd, evs, max, timeout_ms), tags);
}

/* Cleared once epoll_pwait2() is found missing (ENOSYS). */
static atomic_bool evloop_have_pwait2 = true;

int evloop_wait_ns(int epfd, uint64_t *tags, int max, int64_t timeout_ns)
{
	struct epoll_event evs[EVLOOP_MAX_EVENTS];
	struct timespec ts;
	long n;

	if (max < 1)
		return -EINVAL;
	if (max > EVLOOP_MAX_EVENTS)
		max = EVLOOP_MAX_EVENTS;
	if (timeout_ns < 0)
		return evloop_wait(epfd, tags, max, -1);
	if (atomic_load_explicit(&evloop_have_pwait2, memory_order_relaxed)) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		n = syscall(SYS_epoll_pwait2, epfd, evs, max, &ts, NULL, 0);
		if (n >= 0 || errno != ENOSYS)
			return evloop_tags(evs, (int)n, tags);
		atomic_store_explicit(&evloop_have_pwait2, false,
				      memory_order_relaxed);
	}
	return evloop_wait(epfd, tags, max,
			   timeout_ns > (int64_t)INT_MAX * 1000000 ? INT_MAX :
			   (int)((timeout_ns + 999999) / 1000000));
}
