/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The main thread's side of the API: the control thread (api/server.c)
 * speaks HTTP and hands each complete request to main, which owns the
 * machine and answers it (api/handlers.c) between its other work; the
 * control thread waits for the answer. So everything that changes the
 * machine runs on one thread, in one order, and the thread facing the
 * socket needs no right beyond its socket.
 *
 *	control_open(&c, cfg->api_sock, &ctx);    // bind, before seccomp
 *	control_start(c);                          // the control thread
 *	control_wait(c, fd, deadline_ms, tick..);  // main: serve until fd
 *	control_close(c);                          // stop, unlink the socket
 */
#ifndef MICROVM_VMM_CONTROL_H
#define MICROVM_VMM_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "api/handlers.h"

struct control;

/**
 * control_open() - make the API socket at @path (it must not exist).
 * Return: 0 or -errno with a message.  Context: main, startup.
 */
int control_open(struct control **out, const char *path,
		 struct api_ctx *ctx, char *err, size_t errlen);

/** control_listen_fd() - the API socket, for the control thread's filter. */
int control_listen_fd(const struct control *c);

/**
 * control_keep_socket() - from now on control_close() leaves the socket
 * file behind (main is about to confine itself: no unlink then), as
 * Firecracker does; a socket removed before boot is removed at close.
 */
void control_keep_socket(struct control *c);

/** control_start() - start the control thread. Return: 0 or -errno. */
int control_start(struct control *c);

/**
 * control_wait() - answer API requests until @fd is readable (it is not
 * read) or @deadline_ns (CLOCK_MONOTONIC, 0: none) passes; every
 * @tick_ms (0: never) call @tick(@opaque).
 * Return: 1 when @fd became readable, 0 at the deadline.
 * Context: main thread.
 */
int control_wait(struct control *c, int fd, uint64_t deadline_ns,
		 unsigned int tick_ms, void (*tick)(void *opaque),
		 void *opaque);

/**
 * control_close() - answer what still waits with a fault, stop the
 * control thread, remove the socket. NULL is ignored.
 * Context: main thread.
 */
void control_close(struct control *c);

#endif
