/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the UART models (8250 in serial.c, PL011 in pl011.c) share on the
 * host side of their registers: the lock that guards the UART, the
 * transmit side (an outbuf that a "console-out" thread drains to a host
 * fd; once closed, bytes are dropped and counted so the counters stay
 * whole), the eventfd that tells the input thread the RX FIFO has room
 * again, and the interrupt line, reported only when its level changes.
 *
 * Usage sketch (the UART embeds a struct uart_host h):
 *
 *	uart_host_init(&u->h, out_fd, BUF, irq, opaque, gsi);  // setup
 *	pthread_mutex_lock(&u->h.lock);                        // vCPU
 *	uart_host_put_locked(&u->h, byte);
 *	uart_host_irq_locked(&u->h, level);
 *	uart_host_room_locked(&u->h, fifo_level <= depth / 2);
 *	pthread_mutex_unlock(&u->h.lock);
 *	uart_host_destroy(&u->h, 1000);                         // teardown
 */
#ifndef MICROVM_UART_HOST_H
#define MICROVM_UART_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/irq.h"
#include "util/outbuf.h"

struct uart_host {
	pthread_mutex_t lock;       /* guards the whole UART */
	struct outbuf *out;         /* NULL: discarding, or closed */
	bool closed;                /* the output was closed */
	struct outbuf_stats final;  /* counters of the closed output */
	int room_fd;                /* eventfd: RX FIFO has room again */
	bool room_wanted;           /* input was turned away for want of room */
	irq_set_fn irq;
	void *irq_opaque;
	uint32_t gsi;
	int irq_level;              /* last level reported through irq() */
};

/**
 * uart_host_init() - create the lock, the output and the room eventfd.
 * @h: host side to set up (zeroed by the caller's reset)
 * @out_fd: host fd for transmitted bytes, or -1 to discard them
 *	(uncounted)
 * @buf_size: bytes held for a slow reader
 * @irq: callback for the interrupt line (may be NULL)
 * @irq_opaque: its first argument
 * @gsi: the line, passed to @irq
 *
 * Return: 0, or -errno with nothing left to undo. Context: setup.
 */
int uart_host_init(struct uart_host *h, int out_fd, size_t buf_size,
		   irq_set_fn irq, void *irq_opaque, uint32_t gsi);

/**
 * uart_host_put_locked() - transmit one byte without waiting for the
 * reader (a full buffer drops and counts).
 * Context: any thread, h->lock held.
 */
void uart_host_put_locked(struct uart_host *h, uint8_t byte);

/**
 * uart_host_irq_locked() - drive the interrupt line to @level; the
 * callback runs only when the level changes.
 * Context: any thread, h->lock held.
 */
void uart_host_irq_locked(struct uart_host *h, int level);

/**
 * uart_host_room_locked() - signal the room eventfd if input was turned
 * away and the FIFO now has @room (the UART's own threshold).
 * Context: any thread, h->lock held.
 */
void uart_host_room_locked(struct uart_host *h, bool room);

/**
 * uart_host_close_output() - flush for at most @timeout_ms and stop the
 * output thread; later bytes are dropped and counted. The outbuf is taken
 * out from under the lock first, so a vCPU transmitting meanwhile drops
 * instead of waiting for the flush.
 *
 * Safe to call more than once; the first call does the work.
 * Return: 0, -ETIMEDOUT or -EIO as outbuf_close().
 * Context: teardown, any thread, h->lock not held; vCPUs may still be
 * transmitting.
 */
int uart_host_close_output(struct uart_host *h, unsigned int timeout_ms);

/**
 * uart_host_stats() - bytes queued, written and dropped so far.
 * Context: any thread, h->lock not held.
 */
void uart_host_stats(struct uart_host *h, struct outbuf_stats *st);

/**
 * uart_host_destroy() - close the output (uart_host_close_output(),
 * @timeout_ms), then release the lock and the room eventfd.
 * Context: teardown, after the vCPUs and the input thread are gone.
 */
void uart_host_destroy(struct uart_host *h, unsigned int timeout_ms);

#endif
