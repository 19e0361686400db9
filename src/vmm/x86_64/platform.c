// SPDX-License-Identifier: Apache-2.0
/*
 * The x86_64 machine: RAM layout around the 32-bit device hole, the
 * in-kernel IOAPIC/PIC/PIT, and the ACPI fixed-hardware registers of a
 * hardware-reduced platform (sleep control for poweroff, the reset
 * register for reboot), which end the VM.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "layout.h"
#include "platform.h"
#include "util/log.h"
#include "vmm/machine.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

#define KVM_TSS_ADDR 0xfffbd000ULL
#define KVM_IDENTITY_MAP_ADDR 0xfffbc000ULL
#define ACPI_SLP_EN (1u << 5)
#define ACPI_SLP_TYP(v) (((v) >> 2) & 0x7)

int arch_ram_layout(uint64_t ram_size, struct arch_ram_range *out, int max)
{
	int n = 0;

	if (max < 2)
		return 0;
	out[n].gpa = 0;
	out[n].size = ram_size < MMIO_HOLE_START ? ram_size : MMIO_HOLE_START;
	n++;
	if (ram_size > MMIO_HOLE_START) {
		out[n].gpa = HIMEM_START;
		out[n].size = ram_size - MMIO_HOLE_START;
		n++;
	}
	return n;
}

/* RAM above the hole goes on at 4 GiB; the host's RAM is the bound. */
uint64_t arch_ram_max(void)
{
	return UINT64_MAX;
}

int arch_vm_init(struct vm *vm, char *err, size_t errlen)
{
	struct kvm_pit_config pit = { .flags = 0 };
	uint64_t idmap = KVM_IDENTITY_MAP_ADDR;
	const char *what;

	what = "KVM_SET_TSS_ADDR";
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)KVM_TSS_ADDR) < 0)
		goto fail;
	what = "KVM_SET_IDENTITY_MAP_ADDR";
	if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0)
		goto fail;
	what = "KVM_CREATE_IRQCHIP";
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		goto fail;
	what = "KVM_CREATE_PIT2";
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", what, strerror(errno));
	return -errno;
}

int arch_handle_exit(struct vcpu *v, struct kvm_run *run)
{
	switch (run->exit_reason) {
	case KVM_EXIT_HLT:
		return 0;
	case KVM_EXIT_SYSTEM_EVENT:
		if (run->system_event.type == KVM_SYSTEM_EVENT_RESET) {
			vm_request_exit(v->vm, VM_EXIT_OK, "reset");
		} else if (run->system_event.type ==
			   KVM_SYSTEM_EVENT_SHUTDOWN) {
			vm_request_exit(v->vm, VM_EXIT_OK, "shutdown");
		} else {
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

/*
 * Ports PORT_ACPI_SLEEP_CTL, _STS and PORT_ACPI_RESET, as the FADT
 * describes them. Sleep control with SLP_EN and the _S5 type powers off.
 */
static void acpi_pm_access(void *opaque, uint64_t off, uint8_t *data,
			   unsigned int len, bool is_write)
{
	struct vm *vm = opaque;
	uint8_t v = data[0];

	(void)len;
	if (!is_write) {
		data[0] = 0;
		return;
	}
	switch (PORT_ACPI_SLEEP_CTL + off) {
	case PORT_ACPI_SLEEP_CTL:
		if ((v & ACPI_SLP_EN) && ACPI_SLP_TYP(v) == ACPI_S5_SLP_TYP)
			vm_request_exit(vm, VM_EXIT_OK, "ACPI poweroff");
		break;
	case PORT_ACPI_RESET:
		if (v == ACPI_RESET_VALUE)
			vm_request_exit(vm, VM_EXIT_OK, "ACPI reset");
		break;
	default:
		break;
	}
}

/*
 * Real-mode code at the reset vector. Linux on a hardware-reduced ACPI
 * platform without EFI reboots through its BIOS fallback: it drops to
 * real mode and jumps to f000:fff0. There is no BIOS, so this stub writes
 * the FADT reset value to the reset register, which ends the VM:
 *   mov dx, PORT_ACPI_RESET; mov al, ACPI_RESET_VALUE; out dx, al;
 *   1: hlt; jmp 1b
 */
static const uint8_t reset_stub[] = {
	0xba, PORT_ACPI_RESET & 0xff, PORT_ACPI_RESET >> 8,
	0xb0, ACPI_RESET_VALUE,
	0xee,
	0xf4,
	0xeb, 0xfd,
};

int x86_platform_write_reset_stub(struct guest_mem *gm)
{
	return guest_mem_write(gm, LAYOUT_RESET_VECTOR, reset_stub,
			       sizeof(reset_stub));
}

int x86_platform_register_pm(struct vm *vm)
{
	return bus_register(&vm->pio, PORT_ACPI_SLEEP_CTL,
			    PORT_ACPI_RESET - PORT_ACPI_SLEEP_CTL + 1,
			    acpi_pm_access, vm);
}

/*
 * PIC on GSIs 0-15 and IOAPIC on 0-23, except that the PIT's GSI 0 feeds
 * IOAPIC pin 2, as the MADT's interrupt source override (IRQ 0 -> GSI 2)
 * tells the guest.
 */
int arch_irq_routes(void *entries, int max, uint32_t *first_msi_gsi)
{
	struct kvm_irq_routing_entry *e = entries;
	int n = 0;
	uint32_t i;

	for (i = 0; i < 16 && n < max; i++, n++) {
		e[n] = (struct kvm_irq_routing_entry){
			.gsi = i,
			.type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip.irqchip = i < 8 ? KVM_IRQCHIP_PIC_MASTER :
						     KVM_IRQCHIP_PIC_SLAVE,
			.u.irqchip.pin = i % 8,
		};
	}
	for (i = 0; i < IOAPIC_NR_PINS && n < max; i++) {
		if (i == 2)
			continue;
		e[n++] = (struct kvm_irq_routing_entry){
			.gsi = i,
			.type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC,
			.u.irqchip.pin = i == 0 ? 2 : i,
		};
	}
	*first_msi_gsi = IOAPIC_NR_PINS;
	return n;
}

/* The IOAPIC's (and PIC's) inputs are the GSIs themselves. */
uint32_t arch_irq_line(uint32_t line)
{
	return line;
}

/* x86 MSIs carry no requester id: the LAPIC address and data say it all. */
void arch_msi_route(void *entry, uint64_t addr, uint32_t data,
		    uint32_t devid)
{
	struct kvm_irq_routing_entry *e = entry;

	(void)devid;
	e->flags = 0;
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
}

/* GSIs of slots 8.. (layout.h). */
static const uint8_t mmio_isa_gsi[] = IRQ_VIRTIO_MMIO_ISA;
_Static_assert(sizeof(mmio_isa_gsi) == IRQ_VIRTIO_MMIO_ISA_COUNT,
	       "IRQ_VIRTIO_MMIO_ISA_COUNT");
_Static_assert(X86_MMIO_SLOTS <= VIRTIO_MMIO_MAX_SLOTS,
	       "a register window per slot");

int arch_mmio_slot(unsigned int n, uint64_t *base, uint32_t *gsi)
{
	if (n >= X86_MMIO_SLOTS)
		return -ENOSPC;
	*base = VIRTIO_MMIO_BASE + n * VIRTIO_MMIO_SLOT;
	if (n < IRQ_VIRTIO_MMIO_COUNT)
		*gsi = IRQ_VIRTIO_MMIO_FIRST + n;
	else
		*gsi = mmio_isa_gsi[n - IRQ_VIRTIO_MMIO_COUNT];
	return 0;
}
