/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Guest exit register: a guest ends the VM with a status of its choice by
 * writing one byte, either to I/O port PORT_EXIT or to EXIT_MMIO_ADDR
 * (busybox: `devmem 0xf0100000 8 3` exits with status 3). The same handler
 * serves both buses.
 *
 *	exitdev_init(&exitdev, vm_request_exit, vm);
 *	bus_register(&pio, PORT_EXIT, EXITDEV_PIO_LEN, exitdev_access,
 *		     &exitdev);
 *	bus_register(&mmio, EXIT_MMIO_ADDR, EXITDEV_MMIO_LEN, exitdev_access,
 *		     &exitdev);
 */
#ifndef MICROVM_EXITDEV_H
#define MICROVM_EXITDEV_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Range lengths to register so that the widest access of each bus starting
 * at the register reaches the handler (the bus drops straddling accesses).
 */
#define EXITDEV_PIO_LEN 4
#define EXITDEV_MMIO_LEN 8

/* Called with the status byte (0..255); should stop the VM, not block. */
typedef void (*exitdev_exit_fn)(void *opaque, int status);

struct exitdev {
	exitdev_exit_fn exit_fn;
	void *opaque;
};

/**
 * exitdev_init() - set up the exit register.
 * @dev: device
 * @exit_fn: called on the vCPU thread for every write to the register
 * @opaque: argument of @exit_fn
 *
 * Context: setup.
 */
void exitdev_init(struct exitdev *dev, exitdev_exit_fn exit_fn, void *opaque);

/**
 * exitdev_access() - bus handler, for port I/O and MMIO alike.
 * @opaque: the struct exitdev
 * @off: offset into the registered range; only writes starting at 0 count
 * @data: guest data; a write of any width uses its low byte as the status
 * @len: access width
 * @is_write: direction; reads return 0
 *
 * Context: any vCPU thread.
 */
void exitdev_access(void *opaque, uint64_t off, uint8_t *data,
		    unsigned int len, bool is_write);

#endif
