/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ARM PL011 (PrimeCell UART r1p5) as Linux's amba-pl011 driver probes and
 * drives it: PrimeCell ID registers, flag register, baud and line control,
 * FIFO trigger levels, interrupt mask/raw/masked/clear registers, loopback.
 * The console contract is the 8250's (devices/serial.h): transmitted bytes
 * go to a host fd through a bounded outbuf of PL011_TX_BUF_SIZE bytes (full:
 * dropped and counted), received bytes come from the host through a 32-byte
 * RX FIFO with a "room" eventfd, and the interrupt is one level line reported
 * through irq_set_fn whenever (RIS & IMSC) != 0 changes.
 *
 * Usage sketch:
 *
 *	pl011_init(&uart, STDOUT_FILENO, vm_irq_set, vm, SPI_UART);
 *	bus_register(&mmio, UART_BASE, PL011_MMIO_SIZE, pl011_access, &uart);
 *
 *	// stdin thread: push input, wait for room when the FIFO is full
 *	while (off < n) {
 *		off += pl011_input(&uart, buf + off, n - off);
 *		if (off < n)
 *			poll pl011_room_fd(&uart) and a stop fd,
 *			then evfd_drain(pl011_room_fd(&uart));
 *	}
 */
#ifndef MICROVM_PL011_H
#define MICROVM_PL011_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/irq.h"
#include "devices/uart_host.h"
#include "util/outbuf.h"

#define PL011_MMIO_SIZE 0x1000 /* one 4 KiB PrimeCell register page */
#define PL011_FIFO_SIZE 32     /* r1p5 FIFO depth (Linux: revision >= 3) */
/* Same reasoning as SERIAL_TX_BUF_SIZE: seconds of a real line. */
#define PL011_TX_BUF_SIZE 65536
#define PL011_TX_FLUSH_MS 1000 /* pl011_destroy() waits this long at most */

struct pl011 {
	struct uart_host h;   /* lock (guards all below), output, room, irq */

	uint16_t cr;          /* UARTCR */
	uint16_t imsc;        /* UARTIMSC: which RIS bits reach the line */
	uint16_t ris;         /* UARTRIS: latched interrupt events */
	uint16_t ibrd;        /* integer baud divisor */
	uint8_t fbrd;         /* fractional baud divisor, 6 bits */
	uint8_t lcr_h;        /* line control; FEN turns the FIFOs on */
	uint8_t ifls;         /* FIFO interrupt trigger levels */
	uint8_t rsr;          /* receive errors (only overrun happens) */

	uint8_t rx[PL011_FIFO_SIZE];
	unsigned int rx_head;  /* index of the oldest byte */
	unsigned int rx_count; /* bytes held */
	uint64_t rx_overruns;  /* loopback bytes lost to a full FIFO */
};

/**
 * pl011_init() - reset a PL011 and create its room eventfd.
 * @u: UART to set up
 * @out_fd: host fd for transmitted bytes, or -1 to discard them; a thread
 *	named "console-out" writes them there (outbuf_new())
 * @irq: called with the new level each time the interrupt line changes
 * @irq_opaque: first argument of @irq
 * @gsi: passed through to @irq
 *
 * @irq is called with @u->lock held, so it must not call back into this
 * UART; it runs on the thread that caused the change (a vCPU thread or the
 * thread calling pl011_input()).
 *
 * Return: 0, or -errno when the eventfd, the mutex or the output thread
 * cannot be created.
 * Context: setup.
 */
int pl011_init(struct pl011 *u, int out_fd, irq_set_fn irq, void *irq_opaque,
	       uint32_t gsi);

/**
 * pl011_close_output() - flush the output for at most @timeout_ms and stop
 * the output thread; later output is dropped (and counted).
 * @u: UART
 * @timeout_ms: bound on the wait for a slow or stalled reader
 *
 * Safe to call more than once; the first call does the work.
 * Return: 0, -ETIMEDOUT when bytes were still queued at the deadline, or
 * -EIO after a write error (see outbuf_close()).
 * Context: teardown, any thread; vCPUs may still be running.
 */
int pl011_close_output(struct pl011 *u, unsigned int timeout_ms);

/**
 * pl011_tx_stats() - output counters: bytes queued, written, dropped.
 * Context: any thread.
 */
void pl011_tx_stats(struct pl011 *u, struct outbuf_stats *st);

/**
 * pl011_destroy() - release what pl011_init() created.
 * @u: UART, no longer reachable from any vCPU or input thread
 *
 * Closes the output first (pl011_close_output(), PL011_TX_FLUSH_MS).
 * Does not close @out_fd, which the caller owns.
 * Context: teardown.
 */
void pl011_destroy(struct pl011 *u);

/**
 * pl011_access() - bus handler for the UART's 4 KiB register page.
 * @opaque: the struct pl011
 * @off: offset in the page; registers sit at multiples of 4, and an access
 *	at any other offset, or past PL011_MMIO_SIZE, reads 0 and writes
 *	nothing
 * @data: guest data, little endian
 * @len: access width, 1 to 8; a register's value fills the low bytes (a
 *	1-byte read gets its low 8 bits, an 8-byte read zeroes above bit 31)
 *	and a write takes the low @len bytes (at most 32 bits)
 * @is_write: direction
 *
 * Context: any vCPU thread.
 */
void pl011_access(void *opaque, uint64_t off, uint8_t *data, unsigned int len,
		  bool is_write);

/**
 * pl011_input() - queue host bytes for the guest to receive.
 * @u: UART
 * @buf: bytes
 * @n: number of bytes
 *
 * Takes as many bytes as fit in the RX FIFO (PL011_FIFO_SIZE, or 1 while
 * the guest has the FIFOs off in LCR_H). When it takes fewer than @n,
 * pl011_room_fd() becomes readable once the guest has drained the FIFO to
 * half full (or cleared it); the caller then drains the eventfd and retries.
 *
 * Return: number of bytes accepted, 0 to @n.
 * Context: any thread (normally the stdin thread).
 */
size_t pl011_input(struct pl011 *u, const uint8_t *buf, size_t n);

/**
 * pl011_room_fd() - eventfd that signals room in the RX FIFO.
 * @u: UART
 *
 * Signalled only after pl011_input() turned bytes away; read it with
 * evfd_drain() before retrying.
 *
 * Return: the eventfd, owned by @u.
 * Context: any thread.
 */
int pl011_room_fd(const struct pl011 *u);

struct snap_writer;
struct snap_reader;

/**
 * pl011_save() - the UART's registers and received bytes not yet read,
 * for a snapshot. Context: any thread, the guest paused.
 */
void pl011_save(struct pl011 *u, struct snap_writer *w);

/**
 * pl011_load() - pl011_save()'s state back; register values are masked
 * to the bits the UART has, and the interrupt line follows them.
 * Return: 0, or -EINVAL for a truncated or oversized state.
 * Context: startup of a restore, before the vCPUs run.
 */
int pl011_load(struct pl011 *u, struct snap_reader *r);

#endif
