/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU topology a guest reads from CPUID: one package, one die, one
 * core per vCPU, one thread per core, the last cache level shared by all
 * vCPUs and the levels below it private to each. KVM reports no topology
 * of its own (leaves 0xb, 0x1f and 0x8000001e zeroed) and passes on the
 * host's core counts and cache sharing (leaves 4, 0x8000001d, 0x80000008),
 * which describe the host, not this VM: a guest then builds a topology
 * that matches neither (on a one-CPU host, say, its vCPUs become threads
 * of one core on different dies that share no cache), and its scheduler
 * and block layer act on it (blk-mq completes a request on the CPU that
 * submitted it, by IPI, when the two share no cache).
 */
#ifndef MICROVM_X86_CPUID_TOPO_H
#define MICROVM_X86_CPUID_TOPO_H

#include <linux/kvm.h>

/**
 * x86_cpuid_topology() - write microvm's topology into vCPU @id's CPUID.
 * @c: the table from KVM_GET_SUPPORTED_CPUID, adjusted in place
 * @max: entries @c has room for; leaf 0xb and 0x1f subleaves are added
 *       while there is room
 * @id: the vCPU's index, which is its APIC ID
 * @ncpus: vCPUs of the VM, 1 .. 255
 *
 * Leaves the table's vendor decides: the AMD leaves (0x80000001's
 * CmpLegacy, 0x80000008's core count, 0x8000001d/e) only on AMD and
 * Hygon. Leaves KVM did not list stay absent, except the subleaves of a
 * listed 0xb or 0x1f.
 * Context: vCPU setup.
 */
void x86_cpuid_topology(struct kvm_cpuid2 *c, unsigned int max,
			unsigned int id, unsigned int ncpus);

#endif
