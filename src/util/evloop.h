/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small eventfd and epoll helpers shared by the I/O threads, the vCPU code
 * and the devices: non-blocking, close-on-exec eventfds used as doorbells,
 * and an epoll wrapper that hands back one 64-bit tag per ready fd.
 */
#ifndef MICROVM_EVLOOP_H
#define MICROVM_EVLOOP_H

#include <stdint.h>

/**
 * evfd_new() - create a doorbell eventfd.
 *
 * The fd is EFD_CLOEXEC | EFD_NONBLOCK with a counter of 0.
 *
 * Return: the fd, or -errno.
 * Context: any thread.
 */
int evfd_new(void);

/**
 * evfd_signal() - ring a doorbell (add 1 to its counter).
 * @fd: eventfd from evfd_new()
 *
 * Retries on EINTR. A counter that is already at its maximum (EAGAIN) still
 * counts as signalled: the reader will wake up either way.
 *
 * Return: 0, or -errno for any other write failure.
 * Context: any thread; async-signal-safe.
 */
int evfd_signal(int fd);

/**
 * evfd_drain() - read and reset a doorbell's counter.
 * @fd: eventfd from evfd_new()
 *
 * Return: the counter value before the reset, or 0 when nothing was pending
 * (or the read failed).
 * Context: any thread.
 */
uint64_t evfd_drain(int fd);

/**
 * evloop_new() - create an epoll instance.
 *
 * Return: the epoll fd (close-on-exec), or -errno.
 * Context: any thread.
 */
int evloop_new(void);

/**
 * evloop_add() - watch @fd for readability.
 * @epfd: epoll fd from evloop_new()
 * @fd: fd to watch (level-triggered, EPOLLIN)
 * @tag: value evloop_wait() reports when @fd is readable
 *
 * Return: 0, or -errno (-EEXIST when @fd is already watched).
 * Context: any thread.
 */
int evloop_add(int epfd, int fd, uint64_t tag);

/**
 * evloop_del() - stop watching @fd.
 * @epfd: epoll fd from evloop_new()
 * @fd: fd given to evloop_add()
 *
 * Return: 0, or -errno (-ENOENT when @fd was not watched).
 * Context: any thread.
 */
int evloop_del(int epfd, int fd);

/**
 * evloop_wait() - wait for watched fds to become readable.
 * @epfd: epoll fd from evloop_new()
 * @tags: filled with the tags of the ready fds
 * @max: capacity of @tags (at least 1)
 * @timeout_ms: as for epoll_wait(): -1 waits forever, 0 polls
 *
 * An interrupted wait (EINTR) returns 0, like a timeout, so callers simply
 * loop.
 *
 * Return: the number of tags stored (0 on timeout), or -errno.
 * Context: any thread.
 */
int evloop_wait(int epfd, uint64_t *tags, int max, int timeout_ms);

/**
 * evloop_wait_ns() - evloop_wait() with a timeout in nanoseconds.
 * @epfd: epoll fd from evloop_new()
 * @tags: filled with the tags of the ready fds
 * @max: capacity of @tags (at least 1)
 * @timeout_ns: -1 waits forever, 0 polls, else the longest wait
 *
 * Uses epoll_pwait2(2); on a kernel without it (before 5.11) the timeout
 * is rounded up to whole milliseconds.
 *
 * Return: as evloop_wait().
 * Context: any thread.
 */
int evloop_wait_ns(int epfd, uint64_t *tags, int max, int64_t timeout_ns);

#endif
