// SPDX-License-Identifier: Apache-2.0
/*
 * Thin wrappers over eventfd(2) and epoll(7) that fold the errno dance
 * (EINTR retries, EAGAIN meaning "nothing to do") into one place.
 */
#include "util/evloop.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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

int evloop_wait(int epfd, uint64_t *tags, int max, int timeout_ms)
{
	struct epoll_event evs[EVLOOP_MAX_EVENTS];
	int i, n;

	if (max < 1)
		return -EINVAL;
	if (max > EVLOOP_MAX_EVENTS)
		max = EVLOOP_MAX_EVENTS;
	n = epoll_wait(epfd, evs, max, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++)
		tags[i] = evs[i].data.u64;
	return n;
}
