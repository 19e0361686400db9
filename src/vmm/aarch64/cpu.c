// SPDX-License-Identifier: Apache-2.0
/*
 * Per-vCPU arm64 state. Each vCPU is initialised for the target KVM
 * prefers on this host, with PSCI 0.2 so that the guest brings its
 * secondaries up with CPU_ON (handled inside KVM) and powers off with
 * SYSTEM_OFF (a KVM_EXIT_SYSTEM_EVENT). Once the last vCPU exists the
 * vGIC is initialised, so that irqfds can be attached (main creates the
 * vCPUs before the disks on arm64). Registers go through
 * KVM_{GET,SET}_ONE_REG, the only register interface arm64 KVM has.
 */
#include "cpu.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/log.h"
#include "vgic.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

#define ARM64_CORE_REG(x) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | \
			   KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(x))
/* MPIDR_EL1 is op0 3, op1 0, CRn 0, CRm 0, op2 5 (ARM DDI 0487 D19.2). */
#define ARM64_REG_MPIDR ARM64_SYS_REG(3, 0, 0, 0, 5)

/* PSTATE: EL1 using SP_EL1, and the D, A, I, F exception masks set. */
#define ARM64_PSTATE_EL1H 0x5ULL
#define ARM64_PSTATE_DAIF (0xfULL << 6)

int arm64_one_reg(struct vcpu *v, uint64_t id, void *val, bool set)
{
	struct kvm_one_reg r = { .id = id, .addr = (uintptr_t)val };

	return ioctl(v->fd, set ? KVM_SET_ONE_REG : KVM_GET_ONE_REG, &r) < 0 ?
		       -errno :
		       0;
}

static int reg_set(struct vcpu *v, uint64_t id, uint64_t val)
{
	return arm64_one_reg(v, id, &val, true);
}

static int reg_get(struct vcpu *v, uint64_t id, uint64_t *val)
{
	return arm64_one_reg(v, id, val, false);
}

int arm64_preferred_target(struct vm *vm, struct kvm_vcpu_init *init)
{
	memset(init, 0, sizeof(*init));
	return ioctl(vm->vm_fd, KVM_ARM_PREFERRED_TARGET, init) < 0 ? -errno :
								       0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *v, char *err, size_t errlen)
{
	struct kvm_vcpu_init init;
	int ret;

	ret = arm64_preferred_target(vm, &init);
	if (ret) {
		snprintf(err, errlen, "KVM_ARM_PREFERRED_TARGET: %s",
			 strerror(-ret));
		return ret;
	}
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	/* Only vCPU 0 runs from the start; the guest starts the others. */
	if (v->index)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	if (ioctl(v->fd, KVM_ARM_VCPU_INIT, &init) < 0) {
		snprintf(err, errlen, "vCPU %u: KVM_ARM_VCPU_INIT: %s",
			 v->index, strerror(errno));
		return -errno;
	}
	/* With the last vCPU the GIC can be finished (vgic.h). */
	if (v->index + 1 == vm->ncpus)
		return arm64_vgic_init(vm, err, errlen);
	return 0;
}

int arm64_cpu_set_boot_state(struct vcpu *v, uint64_t entry,
			     uint64_t dtb_addr, char *err, size_t errlen)
{
	const struct {
		uint64_t id;
		uint64_t val;
	} regs[] = {
		{ ARM64_CORE_REG(regs.pstate),
		  ARM64_PSTATE_EL1H | ARM64_PSTATE_DAIF },
		{ ARM64_CORE_REG(regs.regs[0]), dtb_addr },
		{ ARM64_CORE_REG(regs.regs[1]), 0 },
		{ ARM64_CORE_REG(regs.regs[2]), 0 },
		{ ARM64_CORE_REG(regs.regs[3]), 0 },
		{ ARM64_CORE_REG(regs.pc), entry },
	};
	size_t i;
	int ret;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		ret = reg_set(v, regs[i].id, regs[i].val);
		if (ret) {
			snprintf(err, errlen,
				 "vCPU %u: setting boot register %zu: %s",
				 v->index, i, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int arm64_cpu_mpidrs(struct vm *vm, uint64_t *mpidr, char *err,
		     size_t errlen)
{
	unsigned int i;
	int ret;

	for (i = 0; i < vm->ncpus; i++) {
		ret = reg_get(&vm->vcpus[i], ARM64_REG_MPIDR, &mpidr[i]);
		if (ret) {
			snprintf(err, errlen, "vCPU %u: reading MPIDR_EL1: %s",
				 i, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

void arch_vcpu_dump(struct vcpu *v)
{
	uint64_t pc, sp, sp_el1, pstate, lr;

	if (reg_get(v, ARM64_CORE_REG(regs.pc), &pc) ||
	    reg_get(v, ARM64_CORE_REG(regs.sp), &sp) ||
	    reg_get(v, ARM64_CORE_REG(sp_el1), &sp_el1) ||
	    reg_get(v, ARM64_CORE_REG(regs.pstate), &pstate) ||
	    reg_get(v, ARM64_CORE_REG(regs.regs[30]), &lr))
		return;
	log_msg(LOG_ERROR,
		"vCPU %u: pc %llx lr %llx sp_el0 %llx sp_el1 %llx pstate %llx",
		v->index, (unsigned long long)pc, (unsigned long long)lr,
		(unsigned long long)sp, (unsigned long long)sp_el1,
		(unsigned long long)pstate);
}
