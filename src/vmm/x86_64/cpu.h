/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86_64 vCPU setup: CPUID with per-vCPU APIC IDs, local APIC LINT pins,
 * and the boot processor's initial registers from the kernel loader.
 */
#ifndef MICROVM_X86_CPU_H
#define MICROVM_X86_CPU_H

#include <stdbool.h>
#include <stddef.h>

struct vcpu;
struct x86_boot_state;

/**
 * x86_cpu_set_boot_state() - load the loader's entry state into @vcpu.
 * Return: 0 or -errno with a message in @err.  Context: startup.
 */
int x86_cpu_set_boot_state(struct vcpu *vcpu, const struct x86_boot_state *st,
			   char *err, size_t errlen);

/**
 * x86_host_is_tcg() - whether the CPU microvm runs on is QEMU's TCG
 * emulator (a KVM nested under emulation), whose quirks some choices
 * avoid (no XSAVE for the guest; no coalesced console writes).
 */
bool x86_host_is_tcg(void);

#endif
