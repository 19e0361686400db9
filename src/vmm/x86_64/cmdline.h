/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86_64 guest's final kernel command line: with acpi=off there is no
 * DSDT to describe the virtio-mmio devices, so each one is named on the
 * command line (Linux's virtio_mmio.device=SIZE@BASE:IRQ, which a kernel
 * built with CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES reads).
 */
#ifndef MICROVM_X86_CMDLINE_H
#define MICROVM_X86_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One virtio-mmio device as the command line names it. */
struct cmdline_mmio {
	uint64_t base;
	uint64_t size;
	uint32_t gsi;
};

/**
 * cmdline_has_word() - whether @word is one of the kernel's parameters.
 * @cmdline: the command line; NULL reads as ""
 * @word: a whole space-separated word, e.g. "acpi=off"
 *
 * Only the kernel's part counts: words after a " -- " separator go to
 * init.  Return: true when found.  Context: any thread.
 */
bool cmdline_has_word(const char *cmdline, const char *word);

/**
 * cmdline_add_mmio() - the command line with the virtio-mmio devices named.
 * @cmdline: the configured command line; NULL reads as ""
 * @devs: @n devices, in slot order
 * @n: number of devices
 * @out: where the result goes, NUL-terminated
 * @outlen: bytes in @out, the NUL included
 *
 * When @cmdline has the word acpi=off, appends one
 * " virtio_mmio.device=<size>@0x<base>:<gsi>" per device (size in K when
 * it is a whole number of KiB), before the " -- " that starts init's
 * arguments if there is one; otherwise copies @cmdline unchanged (the
 * DSDT describes the devices, and a second description would make Linux
 * probe each one twice).
 *
 * Return: the length of the result, or -E2BIG when it does not fit in
 * @outlen.  Context: any thread.
 */
int cmdline_add_mmio(const char *cmdline, const struct cmdline_mmio *devs,
		     unsigned int n, char *out, size_t outlen);

#endif
