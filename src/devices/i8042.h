/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Just enough of the PC keyboard controller for a guest to reboot: the
 * status port reads "no data, input buffer empty, self-test passed" and the
 * pulse-reset command (0xfe) calls the VMM's reset callback. There is no
 * keyboard: every other command is accepted and ignored, data reads 0.
 *
 *	i8042_init(&kbc, vm_request_reset, vm);
 *	bus_register(&pio, PORT_I8042_DATA, 1, i8042_data_access, &kbc);
 *	bus_register(&pio, PORT_I8042_CMD, 1, i8042_cmd_access, &kbc);
 */
#ifndef MICROVM_I8042_H
#define MICROVM_I8042_H

#include <stdbool.h>
#include <stdint.h>

#define I8042_CMD_RESET 0xfe  /* pulse output line 0: CPU reset */
#define I8042_STATUS_SYS 0x04 /* system flag: self-test passed */

/* Called when the guest asks for a reset; it should stop the VM, not block. */
typedef void (*i8042_reset_fn)(void *opaque);

struct i8042 {
	i8042_reset_fn reset;
	void *opaque;
};

/**
 * i8042_init() - set up the controller.
 * @dev: controller
 * @reset: called (on the vCPU thread) each time the guest writes 0xfe to
 *	the command port; may be NULL
 * @opaque: argument of @reset
 *
 * Context: setup.
 */
void i8042_init(struct i8042 *dev, i8042_reset_fn reset, void *opaque);

/**
 * i8042_data_access() - bus handler for the data port (0x60).
 * @opaque: the struct i8042
 * @off: offset into the registered range; only 0 is decoded
 * @data: guest data; reads return 0
 * @len: access width
 * @is_write: direction; writes are ignored
 *
 * Context: any vCPU thread.
 */
void i8042_data_access(void *opaque, uint64_t off, uint8_t *data,
		       unsigned int len, bool is_write);

/**
 * i8042_cmd_access() - bus handler for the status/command port (0x64).
 * @opaque: the struct i8042
 * @off: offset into the registered range; only 0 is decoded
 * @data: guest data; reads return I8042_STATUS_SYS, a write's low byte is
 *	the command
 * @len: access width
 * @is_write: direction
 *
 * Context: any vCPU thread.
 */
void i8042_cmd_access(void *opaque, uint64_t off, uint8_t *data,
		      unsigned int len, bool is_write);

#endif
