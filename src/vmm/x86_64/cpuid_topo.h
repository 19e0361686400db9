/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU topology a guest reads from CPUID: one package, one die, one
 * core per vCPU with one thread each, or with SMT (Firecracker's
 * machine-config "smt") two threads per core; the last cache level
 * shared by all vCPUs and the levels below it private to each core. KVM
 * reports no topology of its own (leaves 0xb, 0x1f and 0x8000001e
 * zeroed) and passes on the host's core counts and cache sharing (leaves
 * 4, 0x8000001d, 0x80000008), which describe the host, not this VM: a
 * guest then builds a topology that matches neither (on a one-CPU host,
 * say, its vCPUs become threads of one core on different dies that share
 * no cache), and its scheduler and block layer act on it (blk-mq
 * completes a request on the CPU that submitted it, by IPI, when the two
 * share no cache).
 */
#ifndef MICROVM_X86_CPUID_TOPO_H
#define MICROVM_X86_CPUID_TOPO_H

#include <stdbool.h>

#include <linux/kvm.h>

#define X86_SMT_THREADS 2 /* threads per core with SMT */

/**
 * x86_apic_id() - the APIC ID of vCPU @index; every table that names a
 * vCPU by APIC ID (CPUID, the MADT, the MP table) takes it from here.
 * @index: the vCPU's index, 0 .. ncpus - 1
 *
 * The ID is core << thread bits | thread. vCPUs fill cores in order:
 * without SMT vCPU i is core i (no thread bits), with SMT thread i % 2 of
 * core i / 2 (one thread bit), so siblings are i and i ^ 1. In both
 * layouts that makes the ID @index itself, which is also the vcpu_id
 * vm_create_vcpus() passes to KVM_CREATE_VCPU and KVM takes as the
 * vCPU's initial APIC ID.
 * Return: the APIC ID. Context: any thread; pure.
 */
static inline unsigned int x86_apic_id(unsigned int index)
{
	return index;
}

/**
 * x86_cpuid_topology() - write microvm's topology into vCPU @id's CPUID.
 * @c: the table from KVM_GET_SUPPORTED_CPUID, adjusted in place
 * @max: entries @c has room for; leaf 0xb and 0x1f subleaves (and with
 *       SMT on AMD leaf 0x8000001e) are added while there is room
 * @id: the vCPU's APIC ID (x86_apic_id())
 * @ncpus: vCPUs of the VM, 1 .. 255
 * @smt: two threads per core (X86_SMT_THREADS); @ncpus is then 1 or
 *       even, and one vCPU alone is one thread of its core
 *
 * Leaves the table's vendor decides: the AMD leaves (0x80000001's
 * CmpLegacy, 0x80000008's core count, 0x8000001d/e) only on AMD and
 * Hygon. Leaves KVM did not list stay absent, except the subleaves of a
 * listed 0xb or 0x1f and, with SMT on an AMD table that lacks
 * TopologyExtensions, leaf 0x8000001e: Linux finds an AMD CPU's threads
 * per core only through that leaf, so the feature bit is then set and
 * the extended leaf range made to reach it.
 * Context: vCPU setup.
 */
void x86_cpuid_topology(struct kvm_cpuid2 *c, unsigned int max,
			unsigned int id, unsigned int ncpus, bool smt);

#endif
