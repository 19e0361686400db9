/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86_64 machine pieces main wires up: the ACPI power-management ports and
 * the boot of the configured kernel (firmware tables, loader, BSP state).
 */
#ifndef MICROVM_X86_PLATFORM_H
#define MICROVM_X86_PLATFORM_H

struct vm;
struct guest_mem;

/**
 * x86_platform_register_pm() - claim the FADT's sleep/reset ports.
 * Return: 0 or -errno.  Context: startup.
 */
int x86_platform_register_pm(struct vm *vm);

/**
 * x86_platform_write_reset_stub() - put the reset-vector stub in guest RAM
 * (a BIOS-style restart then reaches the ACPI reset register).
 * Return: 0 or -EFAULT.  Context: startup.
 */
int x86_platform_write_reset_stub(struct guest_mem *gm);

#endif
