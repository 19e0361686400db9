/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What each architecture provides to the generic VM code. One directory per
 * architecture (src/vmm/x86_64, later src/vmm/aarch64) implements these.
 */
#ifndef MICROVM_ARCH_H
#define MICROVM_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct vm;
struct vcpu;
struct vm_config;
struct kvm_run;

struct arch_ram_range {
	uint64_t gpa;
	uint64_t size;
};

/**
 * arch_ram_layout() - where @ram_size bytes of RAM go in the guest
 * physical address space.  Return: number of ranges written to @out.
 */
int arch_ram_layout(uint64_t ram_size, struct arch_ram_range *out, int max);

/**
 * arch_ram_max() - the most guest RAM the machine's memory map holds.
 * Return: bytes; UINT64_MAX where the map sets no bound of its own (the
 * host's RAM still does).
 * Context: any thread; pure.
 */
uint64_t arch_ram_max(void);

/**
 * arch_vm_init() - per-VM KVM setup before vCPUs exist (interrupt
 * controller, timers).  Return: 0 or -errno with a message in @err.
 */
int arch_vm_init(struct vm *vm, char *err, size_t errlen);

/**
 * arch_vcpu_init() - per-vCPU setup (CPUID, MSRs, local APIC).
 * Return: 0 or -errno with a message in @err.
 */
int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu, char *err,
		   size_t errlen);

/**
 * arch_handle_exit() - handle an exit reason the generic loop does not
 * know.  Return: 0 to re-enter the guest, or -1 when the VM must end (the
 * handler has called vm_request_exit()).
 */
int arch_handle_exit(struct vcpu *vcpu, struct kvm_run *run);

/**
 * arch_irq_routes() - the interrupt-controller routes every VM starts
 * with, as struct kvm_irq_routing_entry records written to @entries.
 * @first_msi_gsi: set to the first GSI free for MSI routes
 * Return: number of entries.
 */
int arch_irq_routes(void *entries, int max, uint32_t *first_msi_gsi);

/**
 * arch_msi_route() - fill the MSI part of route @entry (a struct
 * kvm_irq_routing_entry of type KVM_IRQ_ROUTING_MSI) for the message
 * (@addr, @data) from PCI requester @devid (where the interrupt
 * controller needs it: arm64's ITS; x86 leaves it out).
 * Context: any thread, under the VM's route lock.
 */
void arch_msi_route(void *entry, uint64_t addr, uint32_t data,
		    uint32_t devid);

/**
 * arch_irq_line() - KVM_IRQ_LINE's irq field for platform line @line
 * (the GSI on x86; type and INTID on arm64).
 */
uint32_t arch_irq_line(uint32_t line);

/**
 * arch_vcpu_dump() - log @vcpu's main registers (for --verbose after
 * a failure); nothing when they cannot be read.
 * Context: after the vCPU threads have stopped.
 */
void arch_vcpu_dump(struct vcpu *vcpu);

struct snap_writer;
struct snap_reader;

/* The snapshot architecture id (enum snap_arch) this build writes. */
extern const uint32_t arch_snap_id;

/**
 * arch_snapshot_cpu_save() / arch_snapshot_cpu_check() - the guest-visible
 * CPU (x86: CPUID feature leaves and the XSAVE size), and the check that
 * this host gives a guest the same: another is refused with a message
 * naming the first difference.
 * Return: 0 or -errno with a message in @err.  Context: main thread.
 */
int arch_snapshot_cpu_save(struct vm *vm, struct snap_writer *w, char *err,
			   size_t errlen);
int arch_snapshot_cpu_check(struct vm *vm, struct snap_reader *r, char *err,
			    size_t errlen);

/**
 * arch_snapshot_vm_save() / arch_snapshot_vm_load() - the VM's in-kernel
 * state (x86: PIC, IOAPIC, PIT, clock).
 * Return: 0 or -errno with a message in @err.  Context: main thread,
 * vCPUs parked (save) or not started (load).
 */
int arch_snapshot_vm_save(struct vm *vm, struct snap_writer *w, char *err,
			  size_t errlen);
int arch_snapshot_vm_load(struct vm *vm, struct snap_reader *r, char *err,
			  size_t errlen);

/**
 * arch_snapshot_vcpu_save() / arch_snapshot_vcpu_load() - one vCPU's
 * whole state (registers, FPU, LAPIC, MSRs, events, MP state).
 * Return: 0 or -errno with a message in @err.  Context: as above.
 */
int arch_snapshot_vcpu_save(struct vcpu *vcpu, struct snap_writer *w,
			    char *err, size_t errlen);
int arch_snapshot_vcpu_load(struct vcpu *vcpu, struct snap_reader *r,
			    char *err, size_t errlen);

#endif
