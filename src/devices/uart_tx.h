/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The transmit side the UART models share (8250 in serial.c, PL011 in
 * pl011.c): transmitted bytes go into an outbuf (util/outbuf.h) that a
 * "console-out" thread drains to a host fd, and after the output is closed
 * they are dropped and counted, so the counters stay whole. The UART's own
 * mutex guards the struct; closing waits for the fd without holding it.
 *
 * Usage sketch:
 *
 *	uart_tx_init(&u->tx, out_fd);              // setup
 *	uart_tx_put_locked(&u->tx, byte);          // vCPU, u->lock held
 *	uart_tx_close(&u->tx, &u->lock, 1000);     // teardown, lock not held
 */
#ifndef MICROVM_UART_TX_H
#define MICROVM_UART_TX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/outbuf.h"

struct uart_tx {
	struct outbuf *out;         /* NULL: discarding, or closed */
	bool closed;                /* uart_tx_close() ran */
	struct outbuf_stats final;  /* counters of the closed output */
};

/**
 * uart_tx_init() - start the output of a UART.
 * @t: transmit side to set up
 * @fd: host fd for the bytes, or -1 to discard them (uncounted)
 * @buf_size: bytes held for a slow reader
 *
 * Return: 0, or -errno when the outbuf or its thread cannot be created.
 * Context: setup.
 */
int uart_tx_init(struct uart_tx *t, int fd, size_t buf_size);

/**
 * uart_tx_put_locked() - transmit one byte without waiting for the reader.
 * @t: transmit side
 * @byte: the byte
 *
 * Context: any thread, with the mutex that guards @t held.
 */
void uart_tx_put_locked(struct uart_tx *t, uint8_t byte);

/**
 * uart_tx_close() - flush for at most @timeout_ms and stop the output
 * thread; later bytes are dropped and counted.
 * @t: transmit side
 * @lock: the mutex that guards @t, not held by the caller
 * @timeout_ms: bound on the wait for a slow or stalled reader
 *
 * Safe to call more than once; the first call does the work.
 * Return: 0, -ETIMEDOUT or -EIO as outbuf_close().
 * Context: teardown, any thread; vCPUs may still be transmitting.
 */
int uart_tx_close(struct uart_tx *t, pthread_mutex_t *lock,
		  unsigned int timeout_ms);

/**
 * uart_tx_stats() - bytes queued, written and dropped so far.
 * @t: transmit side
 * @lock: the mutex that guards @t, not held by the caller
 * @st: filled in
 *
 * Context: any thread.
 */
void uart_tx_stats(struct uart_tx *t, pthread_mutex_t *lock,
		   struct outbuf_stats *st);

#endif
