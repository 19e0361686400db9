/* SPDX-License-Identifier: Apache-2.0 */
/*
 * KVM's in-kernel GICv3 and its ITS at the addresses of layout.h. The
 * distributor, redistributors and ITS are created with the VM; the GIC is
 * initialised (KVM_DEV_ARM_VGIC_CTRL_INIT) once every vCPU exists, since
 * KVM sizes the redistributors by the vCPUs it has then.
 *
 *	arm64_vgic_create(vm, ...);   // arch_vm_init(), before vCPUs
 *	vm_create_vcpus(...);         // its last arch_vcpu_init() calls
 *	arm64_vgic_init(vm, ...);     // before any irqfd (KVM: -EAGAIN)
 */
#ifndef MICROVM_ARM64_VGIC_H
#define MICROVM_ARM64_VGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/* Where the device fds sit in vm->dev_fds. */
#define ARM64_VGIC_FD 0
#define ARM64_ITS_FD 1

/**
 * arm64_vgic_create() - create the GICv3 (ARM64_GIC_NR_IRQS interrupts,
 * distributor at ARM64_GICD_BASE, redistributors from ARM64_GICR_BASE)
 * and the ITS at ARM64_GIC_ITS_BASE; their fds go to @vm->dev_fds.
 * Return: 0 or -errno with a message in @err.  Context: startup, before
 * vCPUs are created.
 */
int arm64_vgic_create(struct vm *vm, char *err, size_t errlen);

/**
 * arm64_vgic_init() - finish the GIC once all vCPUs exist.
 * Return: 0 or -errno with a message.  Context: startup, vCPUs created,
 * none run yet.
 */
int arm64_vgic_init(struct vm *vm, char *err, size_t errlen);

/**
 * arm64_dev_attr() - KVM_GET_DEVICE_ATTR (@set false) or
 * KVM_SET_DEVICE_ATTR of (@group, @attr) on the device @fd through @val.
 * Return: 0 or -errno.
 */
int arm64_dev_attr(int fd, uint32_t group, uint64_t attr, void *val,
		   bool set);

/** arm64_vgic_has_its() - whether the ITS (PCI MSIs) exists. */
bool arm64_vgic_has_its(const struct vm *vm);

#endif
