/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An 8250/16550A UART as Linux's 8250 driver probes and drives it: divisor
 * latch, interrupt identification with 16550 priorities, FIFO detection,
 * loopback, scratch register. Transmitted bytes go to a host fd through a
 * bounded buffer of SERIAL_TX_BUF_SIZE bytes that a console output thread
 * drains, so a vCPU never waits for the fd's reader; bytes that find the
 * buffer full are dropped and counted (serial_tx_stats()). Received bytes
 * come from the host through a 64-byte RX FIFO.
 *
 * Usage sketch:
 *
 *	serial_init(&com1, STDOUT_FILENO, vm_irq_set, vm, IRQ_COM1);
 *	bus_register(&pio, PORT_COM1, SERIAL_NR_REGS, serial_access, &com1);
 *
 *	// stdin thread: push input, wait for room when the FIFO is full
 *	while (off < n) {
 *		off += serial_input(&com1, buf + off, n - off);
 *		if (off < n)
 *			poll serial_room_fd(&com1) and a stop fd,
 *			then evfd_drain(serial_room_fd(&com1));
 *	}
 */
#ifndef MICROVM_SERIAL_H
#define MICROVM_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/irq.h"
#include "devices/uart_host.h"
#include "util/outbuf.h"

#define SERIAL_NR_REGS 8         /* bytes of port space the UART decodes */
#define SERIAL_RX_FIFO_SIZE 64   /* host-to-guest bytes held */
/*
 * Guest-to-host bytes held for a slow reader: 64 KiB is several seconds
 * of a real 115200-baud line, and more than a boot log's bursts.
 */
#define SERIAL_TX_BUF_SIZE 65536
#define SERIAL_TX_FLUSH_MS 1000  /* serial_destroy() waits this long at most */

struct serial {
	struct uart_host h;   /* lock (guards all below), output, room, irq */

	uint8_t ier, lcr, mcr, fcr, scr, dll, dlm;
	uint8_t lsr_err;      /* latched LSR errors, cleared by reading LSR */
	uint8_t msr_delta;    /* MSR bits 0-3, cleared by reading MSR */
	bool thre_pending;    /* THR-empty interrupt not yet acknowledged */

	uint8_t rx[SERIAL_RX_FIFO_SIZE];
	unsigned int rx_head;  /* index of the oldest byte */
	unsigned int rx_count; /* bytes held */
	uint64_t rx_overruns;  /* loopback bytes lost to a full FIFO */
};

/**
 * serial_init() - reset a UART and create its room eventfd.
 * @s: UART to set up
 * @out_fd: host fd for transmitted bytes, or -1 to discard them; a thread
 *	named "console-out" writes them there (outbuf_new())
 * @irq: called with the new level each time the interrupt line changes
 * @irq_opaque: first argument of @irq
 * @gsi: passed through to @irq
 *
 * @irq is called with @s->lock held, so it must not call back into this
 * UART; it runs on the thread that caused the change (a vCPU thread or the
 * thread calling serial_input()).
 *
 * Return: 0, or -errno when the eventfd, the mutex or the output thread
 * cannot be created.
 * Context: setup.
 */
int serial_init(struct serial *s, int out_fd, irq_set_fn irq,
		void *irq_opaque, uint32_t gsi);

/**
 * serial_close_output() - flush the output for at most @timeout_ms and
 * stop the output thread; later output is dropped (and counted).
 * @s: UART
 * @timeout_ms: bound on the wait for a slow or stalled reader
 *
 * Safe to call more than once; the first call does the work.
 * Return: 0, -ETIMEDOUT when bytes were still queued at the deadline, or
 * -EIO after a write error (see outbuf_close()).
 * Context: teardown, any thread; vCPUs may still be running.
 */
int serial_close_output(struct serial *s, unsigned int timeout_ms);

/**
 * serial_tx_stats() - output counters: bytes queued, written, dropped.
 * Context: any thread.
 */
void serial_tx_stats(struct serial *s, struct outbuf_stats *st);

/**
 * serial_destroy() - release what serial_init() created.
 * @s: UART, no longer reachable from any vCPU or input thread
 *
 * Closes the output first (serial_close_output(), SERIAL_TX_FLUSH_MS).
 * Does not close @out_fd, which the caller owns.
 * Context: teardown.
 */
void serial_destroy(struct serial *s);

struct snap_writer;
struct snap_reader;

/**
 * serial_save() - the UART's registers and received bytes not yet read,
 * for a snapshot. Context: any thread, the guest paused.
 */
void serial_save(struct serial *s, struct snap_writer *w);

/**
 * serial_load() - serial_save()'s state back; register values are masked
 * to the bits the UART has, and the interrupt line follows them.
 * Return: 0, or -EINVAL for a truncated or oversized state.
 * Context: startup of a restore, before the vCPUs run.
 */
int serial_load(struct serial *s, struct snap_reader *r);

/**
 * serial_access() - bus handler for the UART's eight registers.
 * @opaque: the struct serial
 * @off: register offset, 0-7 (others are ignored)
 * @data: guest data, little endian
 * @len: access width; only the low byte is used, wider reads return the
 *	register in the low byte and zeroes above it
 * @is_write: direction
 *
 * Context: any vCPU thread.
 */
void serial_access(void *opaque, uint64_t off, uint8_t *data,
		   unsigned int len, bool is_write);

/**
 * serial_input() - queue host bytes for the guest to receive.
 * @s: UART
 * @buf: bytes
 * @n: number of bytes
 *
 * Takes as many bytes as fit in the RX FIFO. When it takes fewer than @n,
 * serial_room_fd() becomes readable once the guest has drained the FIFO to
 * half full (or cleared it); the caller then drains the eventfd and retries.
 *
 * Return: number of bytes accepted, 0 to @n.
 * Context: any thread (normally the stdin thread).
 */
size_t serial_input(struct serial *s, const uint8_t *buf, size_t n);

/**
 * serial_room_fd() - eventfd that signals room in the RX FIFO.
 * @s: UART
 *
 * Signalled only after serial_input() turned bytes away; read it with
 * evfd_drain() before retrying.
 *
 * Return: the eventfd, owned by @s.
 * Context: any thread.
 */
int serial_room_fd(const struct serial *s);

#endif
