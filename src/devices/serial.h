/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An 8250/16550A UART as Linux's 8250 driver probes and drives it: divisor
 * latch, interrupt identification with 16550 priorities, FIFO detection,
 * loopback, scratch register. Transmitted bytes go straight to a host fd;
 * received bytes come from the host through a 64-byte RX FIFO.
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

#define SERIAL_NR_REGS 8         /* bytes of port space the UART decodes */
#define SERIAL_RX_FIFO_SIZE 64   /* host-to-guest bytes held */

struct serial {
	pthread_mutex_t lock; /* guards everything below */
	int out_fd;           /* transmitted bytes go here; -1 drops them */
	int room_fd;          /* eventfd: RX FIFO has room again */
	irq_set_fn irq;
	void *irq_opaque;
	uint32_t gsi;
	int irq_level;        /* last level reported through irq() */

	uint8_t ier, lcr, mcr, fcr, scr, dll, dlm;
	uint8_t lsr_err;      /* latched LSR errors, cleared by reading LSR */
	uint8_t msr_delta;    /* MSR bits 0-3, cleared by reading MSR */
	bool thre_pending;    /* THR-empty interrupt not yet acknowledged */
	bool room_wanted;     /* serial_input() turned bytes away */

	uint8_t rx[SERIAL_RX_FIFO_SIZE];
	unsigned int rx_head;  /* index of the oldest byte */
	unsigned int rx_count; /* bytes held */
	uint64_t rx_overruns;  /* loopback bytes lost to a full FIFO */
};

/**
 * serial_init() - reset a UART and create its room eventfd.
 * @s: UART to set up
 * @out_fd: host fd for transmitted bytes (a blocking fd keeps every byte;
 *	on a non-blocking one bytes are dropped when it would block), or -1
 * @irq: called with the new level each time the interrupt line changes
 * @irq_opaque: first argument of @irq
 * @gsi: passed through to @irq
 *
 * @irq is called with @s->lock held, so it must not call back into this
 * UART; it runs on the thread that caused the change (a vCPU thread or the
 * thread calling serial_input()).
 *
 * Return: 0, or -errno when the eventfd or the mutex cannot be created.
 * Context: setup.
 */
int serial_init(struct serial *s, int out_fd, irq_set_fn irq,
		void *irq_opaque, uint32_t gsi);

/**
 * serial_destroy() - release what serial_init() created.
 * @s: UART, no longer reachable from any vCPU or input thread
 *
 * Does not close @out_fd, which the caller owns.
 * Context: teardown.
 */
void serial_destroy(struct serial *s);

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
