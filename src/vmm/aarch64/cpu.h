/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64 vCPU setup: KVM_ARM_VCPU_INIT with PSCI 0.2 (secondaries start
 * powered off and wait for PSCI CPU_ON), the boot vCPU's entry registers
 * (booting.rst: x0 = device tree, EL1h, DAIF masked) and MPIDR_EL1, which
 * the device tree's cpu nodes name.
 */
#ifndef MICROVM_ARM64_CPU_H
#define MICROVM_ARM64_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_vcpu_init;
struct vcpu;
struct vm;

/**
 * arm64_one_reg() - KVM_GET_ONE_REG (@set false) or KVM_SET_ONE_REG of
 * register @id through @val, which holds the register's size in bytes.
 * Return: 0 or -errno.
 */
int arm64_one_reg(struct vcpu *vcpu, uint64_t id, void *val, bool set);

/**
 * arm64_preferred_target() - KVM's preferred vCPU target and features for
 * this host into @init (zeroed first).
 * Return: 0 or -errno.
 */
int arm64_preferred_target(struct vm *vm, struct kvm_vcpu_init *init);

/**
 * arm64_cpu_set_boot_state() - put @vcpu at @entry with x0 = @dtb_addr,
 * x1..x3 = 0, PSTATE EL1h with D, A, I and F masked.
 * Return: 0 or -errno with a message in @err.  Context: startup.
 */
int arm64_cpu_set_boot_state(struct vcpu *vcpu, uint64_t entry,
			     uint64_t dtb_addr, char *err, size_t errlen);

/**
 * arm64_cpu_mpidrs() - every vCPU's MPIDR_EL1 into @mpidr (@vm->ncpus).
 * Return: 0 or -errno with a message naming the vCPU in @err.
 */
int arm64_cpu_mpidrs(struct vm *vm, uint64_t *mpidr, char *err,
		     size_t errlen);

#endif
