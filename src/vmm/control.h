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
 *	while (control_wait(c, fd, deadline, &tick) == 2)  // main serves
 *		;                                   // until fd or deadline
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

/** control_set_max_body() - the largest request body (--http-api-max-payload-size). */
void control_set_max_body(struct control *c, size_t bytes);

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

/* A periodic call on main's loop (the metrics line, the coalesced-write
 * flush). */
struct control_tick {
	unsigned int period_ms; /* 0: none */
	void (*fn)(void *opaque);
	void *opaque;
	uint64_t next_ns;       /* CLOCK_MONOTONIC; 0: a period from now */
};

/**
 * control_wait() - wait until @fd is readable (it is not read), the
 * deadline @deadline_ns (CLOCK_MONOTONIC, 0: none) passes, or one API
 * request was answered; calls the function of each of the @nt ticks at
 * @t when it is due (@t may be NULL when @nt is 0). @c may be NULL (no
 * API): then only @fd and the deadline count.
 * Return: 1 when @fd became readable, 0 at the deadline, 2 after an
 * API request (the caller looks at the machine's state and waits again).
 * Context: main thread.
 */
int control_wait(struct control *c, int fd, uint64_t deadline_ns,
		 struct control_tick *t, unsigned int nt);

/**
 * control_close() - answer what still waits with a fault, stop the
 * control thread, remove the socket. NULL is ignored.
 * Context: main thread.
 */
void control_close(struct control *c);

#endif
