// SPDX-License-Identifier: Apache-2.0
/*
 * The arm64 VM: the in-kernel GICv3 with its ITS (vgic.c), interrupt
 * lines and routes in GIC terms, and the exits PSCI makes. SPI n is route
 * GSI n (pin n of irqchip 0, as KVM's default routing has it), so irqfds
 * of virtio-mmio devices name their SPI; MSI routes carry the PCI
 * requester ID as the ITS device ID.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "util/log.h"
#include "vgic.h"
#include "vmm/arch.h"
#include "vmm/machine.h"
#include "vmm/vm.h"

/* SPIs the GIC has: ARM64_GIC_NR_IRQS less the 32 private INTIDs. */
#define ARM64_NR_SPIS (ARM64_GIC_NR_IRQS - 32)
/* INTID of SPI 0 (GICv3 architecture: SPIs are INTIDs 32-1019). */
#define ARM64_SPI_BASE 32
/* GITS_TRANSLATER, the ITS register a device writes its MSI to. */
#define ARM64_GITS_TRANSLATER 0x10040ULL

int arch_vm_init(struct vm *vm, char *err, size_t errlen)
{
	return arm64_vgic_create(vm, err, errlen);
}

int arch_handle_exit(struct vcpu *v, struct kvm_run *run)
{
	switch (run->exit_reason) {
	case KVM_EXIT_SYSTEM_EVENT:
		/* PSCI SYSTEM_OFF and SYSTEM_RESET (KVM answers the rest). */
		if (run->system_event.type == KVM_SYSTEM_EVENT_RESET) {
			vm_request_exit(v->vm, VM_EXIT_OK, "PSCI reset");
		} else if (run->system_event.type ==
			   KVM_SYSTEM_EVENT_SHUTDOWN) {
			vm_request_exit(v->vm, VM_EXIT_OK, "PSCI poweroff");
		} else {
			log_error("vCPU %u: system event %u", v->index,
				  run->system_event.type);
			vm_request_exit(v->vm, VM_EXIT_GUEST_CRASH,
					"system event");
		}
		return -1;
	default:
		log_error("vCPU %u: unexpected KVM exit %u", v->index,
			  run->exit_reason);
		vm_request_exit(v->vm, VM_EXIT_INTERNAL, "unexpected exit");
		return -1;
	}
}

int arch_irq_routes(void *entries, int max, uint32_t *first_msi_gsi)
{
	struct kvm_irq_routing_entry *e = entries;
	int n;

	for (n = 0; n < ARM64_NR_SPIS && n < max; n++) {
		e[n] = (struct kvm_irq_routing_entry){
			.gsi = (uint32_t)n,
			.type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip.irqchip = 0,
			.u.irqchip.pin = (uint32_t)n,
		};
	}
	*first_msi_gsi = ARM64_NR_SPIS;
	return n;
}

/* KVM_IRQ_LINE (api.rst, arm64): type in bits 24-27, INTID in 0-15. */
uint32_t arch_irq_line(uint32_t line)
{
	return ((uint32_t)KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) |
	       ((ARM64_SPI_BASE + line) & KVM_ARM_IRQ_NUM_MASK);
}

void arch_msi_route(void *entry, uint64_t addr, uint32_t data,
		    uint32_t devid)
{
	struct kvm_irq_routing_entry *e = entry;

	/*
	 * Until the driver programs the vector, the route points at the
	 * ITS with event 0 of device 0: the ITS drops an untranslated one.
	 */
	if (!addr)
		addr = ARM64_GIC_ITS_BASE + ARM64_GITS_TRANSLATER;
	e->flags = KVM_MSI_VALID_DEVID;
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
	e->u.msi.devid = devid;
}

int arch_mmio_slot(unsigned int n, uint64_t *base, uint32_t *gsi)
{
	if (n >= ARM64_VIRTIO_MMIO_MAX_SLOTS ||
	    ARM64_SPI_VIRTIO_MMIO_FIRST + n >= ARM64_NR_SPIS)
		return -ENOSPC;
	*base = ARM64_VIRTIO_MMIO_BASE + n * ARM64_VIRTIO_MMIO_SLOT;
	*gsi = ARM64_SPI_VIRTIO_MMIO_FIRST + n;
	return 0;
}
