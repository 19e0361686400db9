// SPDX-License-Identifier: Apache-2.0
/*
 * eventfd and epoll helpers: flags of a new doorbell, counting signals,
 * draining to zero, tags coming back from evloop_wait(), add/del errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "test.h"

#include <time.h>
#include "util/evloop.h"

static void test_evfd(void)
{
	static const int signals[] = { 0, 1, 3, 100 };
	size_t i;
	int fd, j;

	fd = evfd_new();
	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		for (j = 0; j < signals[i]; j++)
			CHECK_EQ(evfd_signal(fd), 0);
		CHECK_EQ(evfd_drain(fd), signals[i]);
		CHECK_EQ(evfd_drain(fd), 0); /* drained: would block, 0 */
	}
	close(fd);

	/* A closed fd reports the error instead of pretending. */
	CHECK_EQ(evfd_signal(fd), -EBADF);
	CHECK_EQ(evfd_drain(fd), 0);
}

/* A counter at its maximum: the write would block, which is still a ring. */
static void test_evfd_saturated(void)
{
	uint64_t max = 0xfffffffffffffffeULL;
	int fd = evfd_new();

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, &max, sizeof(max)), sizeof(max));
	CHECK_EQ(evfd_signal(fd), 0);
	CHECK(evfd_drain(fd) == max);
	close(fd);
}

static void test_epoll(void)
{
	uint64_t tags[4];
	int ep, a, b, n;

	ep = evloop_new();
	a = evfd_new();
	b = evfd_new();
	CHECK(ep >= 0 && a >= 0 && b >= 0);
	CHECK(fcntl(ep, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(evloop_add(ep, a, 0x1111222233334444ULL), 0);
	CHECK_EQ(evloop_add(ep, b, 7), 0);
	CHECK_EQ(evloop_add(ep, b, 8), -EEXIST);

	CHECK_EQ(evloop_wait(ep, tags, 4, 0), 0); /* nothing ready */
	evfd_signal(b);
	n = evloop_wait(ep, tags, 4, 1000);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && tags[0] == 7);
	n = evloop_wait(ep, tags, 4, 0); /* level-triggered: still ready */
	CHECK_EQ(n, 1);
	evfd_drain(b);

	evfd_signal(a);
	evfd_signal(b);
	n = evloop_wait(ep, tags, 4, 1000);
	CHECK_EQ(n, 2);
	CHECK(n == 2 && tags[0] + tags[1] == 0x1111222233334444ULL + 7);
	CHECK_EQ(evloop_wait(ep, tags, 1, 0), 1); /* honours max */
	CHECK_EQ(evloop_wait(ep, tags, 0, 0), -EINVAL);

	CHECK_EQ(evloop_del(ep, a), 0);
	CHECK_EQ(evloop_del(ep, a), -ENOENT);
	n = evloop_wait(ep, tags, 4, 0);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && tags[0] == 7);
	close(a);
	close(b);
	close(ep);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Nanosecond timeouts: the wait lasts at least the timeout, and a ready
 * fd ends it at once with its tag. */
static void test_wait_ns(void)
{
	uint64_t tags[2], t0, took;
	int ep = evloop_new(), a = evfd_new();

	CHECK(ep >= 0 && a >= 0);
	CHECK_EQ(evloop_add(ep, a, 42), 0);
	CHECK_EQ(evloop_wait_ns(ep, tags, 2, 0), 0);
	t0 = mono_ns();
	CHECK_EQ(evloop_wait_ns(ep, tags, 2, 1500000), 0); /* 1.5 ms */
	took = mono_ns() - t0;
	printf("a 1.5 ms wait took %llu us\n",
	       (unsigned long long)(took / 1000));
	CHECK(took >= 1500000);
	evfd_signal(a);
	t0 = mono_ns();
	CHECK_EQ(evloop_wait_ns(ep, tags, 2, 5000000000), 1);
	CHECK(mono_ns() - t0 < 4000000000u);
	CHECK_EQ(tags[0], 42);
	CHECK_EQ(evloop_wait_ns(ep, tags, 2, -1), 1); /* still ready */
	CHECK_EQ(evloop_wait_ns(ep, tags, 0, 0), -EINVAL);
	close(a);
	close(ep);
}

int main(void)
{
	test_evfd();
	test_evfd_saturated();
	test_epoll();
	test_wait_ns();
	return test_done();
}
