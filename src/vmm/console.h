/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host side of the guest console: puts a terminal on stdin into raw
 * mode (restored on every exit path) and pumps stdin bytes into the
 * emulated UART from a thread of its own.
 */
#ifndef MICROVM_CONSOLE_H
#define MICROVM_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Feed bytes to the guest; returns how many were taken. A short count
 * means the device is full: the pump waits a little and offers the rest.
 */
typedef size_t (*console_input_fn)(void *opaque, const uint8_t *buf,
				   size_t n);

/**
 * console_start() - raw mode on a terminal stdin, and start the pump.
 * Return: 0 or -errno.  Context: main thread, once.
 */
int console_start(console_input_fn fn, void *opaque);

/**
 * console_restore() - put the terminal back as it was; safe to call more
 * than once and from a signal handler.
 */
void console_restore(void);

#endif
