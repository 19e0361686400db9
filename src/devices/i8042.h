/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PC keyboard controller with a keyboard behind it, enough for Linux's
 * i8042 and atkbd drivers to bind, and for two things: the guest resets
 * the machine through the controller (command 0xfe), and the VMM presses
 * Ctrl-Alt-Del (i8042_ctrl_alt_del(), Firecracker's SendCtrlAltDel), which
 * Linux turns into ctrl_alt_del(): a reboot, or SIGINT to init. There is
 * no mouse (the auxiliary port reports itself absent) and no translation:
 * the command byte's XLATE bit is clear, so Linux reads the keyboard's
 * scan code set 2 as it is. x86 only: arm64 machines have no i8042 (the
 * API answers SendCtrlAltDel there with an error).
 *
 *	i8042_init(&kbc, vm_request_reset, vm, vm_irq_line, vm, 1);
 *	bus_register(&pio, PORT_I8042_DATA, 1, i8042_data_access, &kbc);
 *	bus_register(&pio, PORT_I8042_CMD, 1, i8042_cmd_access, &kbc);
 *	i8042_ctrl_alt_del(&kbc);            // any thread
 */
#ifndef MICROVM_I8042_H
#define MICROVM_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/irq.h"

/* Controller commands (port 0x64) this model answers. */
#define I8042_CMD_READ_CTR 0x20  /* command byte -> output buffer */
#define I8042_CMD_WRITE_CTR 0x60 /* next data byte -> command byte */
#define I8042_CMD_AUX_DISABLE 0xa7
#define I8042_CMD_AUX_ENABLE 0xa8
#define I8042_CMD_AUX_TEST 0xa9  /* answers 0x01: no auxiliary device */
#define I8042_CMD_SELF_TEST 0xaa /* answers 0x55 */
#define I8042_CMD_KBD_TEST 0xab  /* answers 0x00 */
#define I8042_CMD_KBD_DISABLE 0xad
#define I8042_CMD_KBD_ENABLE 0xae
#define I8042_CMD_READ_OUTP 0xd0
#define I8042_CMD_WRITE_OUTP 0xd1
#define I8042_CMD_WRITE_KBD_OUT 0xd2 /* next data byte, as if keyed */
#define I8042_CMD_WRITE_AUX_OUT 0xd3 /* next data byte back, not as aux */
#define I8042_CMD_WRITE_AUX 0xd4     /* next data byte to no mouse */
#define I8042_CMD_RESET 0xfe         /* pulse output line 0: CPU reset */

/* Status register (port 0x64 reads). */
#define I8042_STATUS_OBF 0x01    /* the output buffer holds a byte */
#define I8042_STATUS_SYS 0x04    /* system flag: self-test passed */
#define I8042_STATUS_CMD 0x08    /* the last write was a command */
#define I8042_STATUS_UNLOCK 0x10 /* keyboard not inhibited */

/* Command byte bits. */
#define I8042_CTR_KBDINT 0x01 /* IRQ 1 while the output buffer is full */
#define I8042_CTR_SYS 0x04
#define I8042_CTR_KBDDIS 0x10
#define I8042_CTR_AUXDIS 0x20
#define I8042_CTR_XLATE 0x40
#define I8042_CTR_DEFAULT (I8042_CTR_KBDINT | I8042_CTR_SYS)

/* Bytes the controller holds for the guest to read. */
#define I8042_QUEUE 16

/* Ctrl-Alt-Del in scan code set 2: three presses, three releases. */
#define I8042_CAD_LEN 11

/* Called when the guest asks for a reset; it should stop the VM, not block. */
typedef void (*i8042_reset_fn)(void *opaque);

/* Counters, for metrics and tests. */
struct i8042_stats {
	uint64_t cad_sent;    /* Ctrl-Alt-Del sequences queued */
	uint64_t cad_dropped; /* not queued: the guest left no room */
	uint64_t resets;      /* reset commands */
};

struct i8042 {
	i8042_reset_fn reset;
	void *opaque;
	irq_set_fn irq;
	void *irq_opaque;
	uint32_t gsi;
	/* Everything below: vCPU threads and i8042_ctrl_alt_del(). */
	pthread_mutex_t lock;
	uint8_t ctr;        /* command byte */
	uint8_t outp;       /* output port */
	uint8_t status_cmd; /* I8042_STATUS_CMD or 0 */
	uint8_t want;       /* command awaiting its data byte, or 0 */
	uint8_t kbd_want;   /* keyboard command awaiting its parameter */
	uint8_t queue[I8042_QUEUE];
	unsigned int head, len;
	bool level;         /* IRQ line as last reported */
	struct i8042_stats stats;
};

/**
 * i8042_init() - set up the controller.
 * @dev: controller
 * @reset: called (on the vCPU thread, no lock held) each time the guest
 *	writes 0xfe to the command port; may be NULL
 * @opaque: argument of @reset
 * @irq: reports the keyboard interrupt's level (called with the
 *	controller's lock held: it must not call back into it); may be NULL
 * @irq_opaque: first argument of @irq
 * @gsi: passed to @irq
 *
 * Context: setup.
 */
void i8042_init(struct i8042 *dev, i8042_reset_fn reset, void *opaque,
		irq_set_fn irq, void *irq_opaque, uint32_t gsi);

/** i8042_destroy() - free what i8042_init() made. */
void i8042_destroy(struct i8042 *dev);

struct snap_writer;
struct snap_reader;

/**
 * i8042_save() - the controller's command byte, output port, pending
 * command and queued bytes, for a snapshot. Context: the guest paused.
 */
void i8042_save(struct i8042 *dev, struct snap_writer *w);

/**
 * i8042_load() - i8042_save()'s state back; the IRQ line follows it.
 * Return: 0, or -EINVAL for a truncated or oversized state.
 * Context: startup of a restore, before the vCPUs run.
 */
int i8042_load(struct i8042 *dev, struct snap_reader *r);

/**
 * i8042_data_access() - bus handler for the data port (0x60).
 * @opaque: the struct i8042
 * @off: offset into the registered range; only 0 is decoded
 * @data: guest data; a read takes the oldest byte held (0 when none)
 * @len: access width; a write's low byte is used
 * @is_write: direction; a write is a command's data byte or goes to the
 *	keyboard, which answers (0xfa acknowledges)
 *
 * Context: any vCPU thread.
 */
void i8042_data_access(void *opaque, uint64_t off, uint8_t *data,
		       unsigned int len, bool is_write);

/**
 * i8042_cmd_access() - bus handler for the status/command port (0x64).
 * @opaque: the struct i8042
 * @off: offset into the registered range; only 0 is decoded
 * @data: guest data; reads return the status, a write's low byte is the
 *	command
 * @len: access width
 * @is_write: direction
 *
 * Context: any vCPU thread.
 */
void i8042_cmd_access(void *opaque, uint64_t off, uint8_t *data,
		      unsigned int len, bool is_write);

/**
 * i8042_ctrl_alt_del() - press and release Ctrl, Alt and Delete: the
 * eleven set 2 bytes are queued together, each raising IRQ 1 in turn
 * while the guest enables the keyboard interrupt, or none of them when
 * the queue has no room (counted in stats.cad_dropped).
 * Context: any thread.
 */
void i8042_ctrl_alt_del(struct i8042 *dev);

/** i8042_get_stats() - a copy of the counters.  Context: any thread. */
void i8042_get_stats(struct i8042 *dev, struct i8042_stats *out);

#endif
