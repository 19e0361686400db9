// SPDX-License-Identifier: Apache-2.0
/*
 * CPUID topology of a vCPU (cpuid_topo.h). APIC IDs are the vCPU indices
 * 0 .. ncpus - 1, so a core-ID field of order(ncpus) bits covers them and
 * every package-ID (APIC ID shifted right by it) is 0.
 *
 * What each leaf says, per the Intel SDM and AMD APM:
 * - 1: EBX[23:16] addressable logical processors per package.
 * - 4 (Intel): EAX[31:26] addressable cores per package - 1, EAX[25:14]
 *   logical processors sharing the cache - 1.
 * - 0xb, 0x1f (x2APIC topology): one subleaf per level, SMT then core,
 *   each with the shift to the next level's ID, the processors at that
 *   level and the level type; a subleaf of type 0 ends the list.
 * - 0x80000001 (AMD): ECX[1] CmpLegacy, cores rather than threads.
 * - 0x80000008 (AMD): ECX[15:12] the core-ID width, ECX[7:0] cores - 1.
 * - 0x8000001d (AMD, TOPOEXT): EAX[25:14] as leaf 4's.
 * - 0x8000001e (AMD, TOPOEXT): extended APIC ID; EBX core ID and threads
 *   per core - 1; ECX node ID and nodes per package - 1.
 */
#include "cpuid_topo.h"

#include <stdbool.h>
#include <string.h>

/* Leaf 0's vendor words (EBX, EDX, ECX). */
#define VENDOR_AMD_EBX 0x68747541u   /* "Auth" */
#define VENDOR_HYGON_EBX 0x6f677948u /* "Hygo" */

#define LEAF_EXT_TOPO 0xbu
#define LEAF_EXT_TOPO_V2 0x1fu
#define TOPO_TYPE_SMT 1u
#define TOPO_TYPE_CORE 2u

#define CACHE_TYPE(eax) ((eax) & 0x1fu)
#define CACHE_LEVEL(eax) (((eax) >> 5) & 0x7u)
#define CACHE_SHARING_MASK (0xfffu << 14)
#define CACHE_CORES_MASK (0x3fu << 26)

#define AMD_CMP_LEGACY (1u << 1)
#define AMD_CORES_MASK 0xf0ffu /* 0x80000008 ECX: width [15:12], NC [7:0] */

/* Bits to number @n IDs. */
static unsigned int order(unsigned int n)
{
	unsigned int b = 0;

	while ((1u << b) < n)
		b++;
	return b;
}

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, unsigned int fn,
				     unsigned int index)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn &&
		    c->entries[i].index == index)
			return &c->entries[i];
	return NULL;
}

static bool vendor_amd(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *e = find(c, 0, 0);

	return e && (e->ebx == VENDOR_AMD_EBX || e->ebx == VENDOR_HYGON_EBX);
}

/* The highest cache level leaf @fn lists (4 or 0x8000001d); 0: none. */
static unsigned int last_level(struct kvm_cpuid2 *c, unsigned int fn)
{
	unsigned int i, top = 0;

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == fn && CACHE_TYPE(e->eax) &&
		    CACHE_LEVEL(e->eax) > top)
			top = CACHE_LEVEL(e->eax);
	}
	return top;
}

/* A cache subleaf: the last level shared by all @span IDs, others by one
 * core (one thread). */
static void cache_sharing(struct kvm_cpuid_entry2 *e, unsigned int top,
			  unsigned int span)
{
	unsigned int share = CACHE_LEVEL(e->eax) == top ? span : 1;

	e->eax = (e->eax & ~CACHE_SHARING_MASK) | ((share - 1) << 14);
}

/* Subleaf @index of @fn: the table's, or a new one while there is room. */
static struct kvm_cpuid_entry2 *subleaf(struct kvm_cpuid2 *c,
					unsigned int max, unsigned int fn,
					unsigned int index)
{
	struct kvm_cpuid_entry2 *e = find(c, fn, index);

	if (e || c->nent >= max)
		return e;
	e = &c->entries[c->nent++];
	memset(e, 0, sizeof(*e));
	e->function = fn;
	e->index = index;
	e->flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
	return e;
}

static void set_regs(struct kvm_cpuid_entry2 *e, unsigned int eax,
		     unsigned int ebx, unsigned int ecx, unsigned int edx)
{
	if (!e)
		return;
	e->eax = eax;
	e->ebx = ebx;
	e->ecx = ecx;
	e->edx = edx;
}

/* Leaf 0xb or 0x1f, when KVM lists it: SMT (one thread), core, end. */
static void ext_topology(struct kvm_cpuid2 *c, unsigned int max,
			 unsigned int fn, unsigned int id, unsigned int bits,
			 unsigned int ncpus)
{
	if (!find(c, fn, 0))
		return;
	set_regs(subleaf(c, max, fn, 0), 0, 1, TOPO_TYPE_SMT << 8, id);
	set_regs(subleaf(c, max, fn, 1), bits, ncpus,
		 (TOPO_TYPE_CORE << 8) | 1, id);
	set_regs(subleaf(c, max, fn, 2), 0, 0, 2, id);
}

void x86_cpuid_topology(struct kvm_cpuid2 *c, unsigned int max,
			unsigned int id, unsigned int ncpus)
{
	unsigned int bits = order(ncpus), span = 1u << bits;
	unsigned int top4 = last_level(c, 4);
	unsigned int top1d = last_level(c, 0x8000001d);
	bool amd = vendor_amd(c);
	unsigned int i;

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & ~0xff0000u) |
				 ((span > 0xff ? 0xffu : span) << 16);
			break;
		case 4:
			if (!CACHE_TYPE(e->eax))
				break;
			e->eax = (e->eax & ~CACHE_CORES_MASK) |
				 (((span > 64 ? 64 : span) - 1) << 26);
			cache_sharing(e, top4, span);
			break;
		case 0x8000001d:
			if (amd && CACHE_TYPE(e->eax))
				cache_sharing(e, top1d, span);
			break;
		case 0x80000001:
			if (!amd)
				break;
			if (ncpus > 1)
				e->ecx |= AMD_CMP_LEGACY;
			else
				e->ecx &= ~AMD_CMP_LEGACY;
			break;
		case 0x80000008:
			if (amd)
				e->ecx = (e->ecx & ~AMD_CORES_MASK) |
					 (bits << 12) | (ncpus - 1);
			break;
		case 0x8000001e:
			if (amd)
				set_regs(e, id, id & 0xff, 0, 0);
			break;
		default:
			break;
		}
	}
	ext_topology(c, max, LEAF_EXT_TOPO, id, bits, ncpus);
	ext_topology(c, max, LEAF_EXT_TOPO_V2, id, bits, ncpus);
}
