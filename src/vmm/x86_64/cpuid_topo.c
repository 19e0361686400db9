// SPDX-License-Identifier: Apache-2.0
/*
 * CPUID topology of a vCPU (cpuid_topo.h). APIC IDs are the vCPU indices
 * 0 .. ncpus - 1 (x86_apic_id()): the low order(threads) bits the thread,
 * the core ID above them within order(ncpus) bits, so every package-ID
 * (APIC ID shifted right by that) is 0.
 *
 * What each leaf says, per the Intel SDM and AMD APM:
 * - 1: EBX[23:16] addressable logical processors per package.
 * - 4 (Intel): EAX[31:26] addressable cores per package - 1, EAX[25:14]
 *   logical processors sharing the cache - 1.
 * - 0xb, 0x1f (x2APIC topology): one subleaf per level, SMT then core,
 *   each with the shift to the next level's ID, the processors at that
 *   level and the level type; a subleaf of type 0 ends the list.
 * - 0x80000000: EAX the highest extended leaf.
 * - 0x80000001 (AMD): ECX[1] CmpLegacy, cores rather than threads;
 *   ECX[22] TopologyExtensions, leaves 0x8000001d and 0x8000001e valid.
 * - 0x80000008 (AMD): ECX[15:12] the APIC ID width, ECX[7:0] logical
 *   processors - 1.
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

#define LEAF_EXT_MAX 0x80000000u
#define LEAF_AMD_EXT_APIC 0x8000001eu
#define LEAF_EXT_TOPO 0xbu
#define LEAF_EXT_TOPO_V2 0x1fu
#define TOPO_TYPE_SMT 1u
#define TOPO_TYPE_CORE 2u

#define CACHE_TYPE(eax) ((eax) & 0x1fu)
#define CACHE_LEVEL(eax) (((eax) >> 5) & 0x7u)
#define CACHE_SHARING_MASK (0xfffu << 14)
#define CACHE_CORES_MASK (0x3fu << 26)

#define AMD_CMP_LEGACY (1u << 1)
#define AMD_TOPOEXT (1u << 22)
#define AMD_CORES_MASK 0xf0ffu /* 0x80000008 ECX: width [15:12], NC [7:0] */

/* One vCPU's place: its APIC ID, the thread and core-plus-thread ID
 * widths, the vCPUs and the IDs they span. */
struct topo {
	unsigned int id, ncpus, threads;
	unsigned int tbits; /* order(threads): the thread ID's width */
	unsigned int bits;  /* order(ncpus): the core and thread IDs' width */
	unsigned int span;  /* 1 << bits */
};

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

/* A cache subleaf: the last level shared by all IDs, the others by the
 * threads of one core. */
static void cache_sharing(struct kvm_cpuid_entry2 *e, unsigned int top,
			  const struct topo *t)
{
	unsigned int share = CACHE_LEVEL(e->eax) == top ? t->span : t->threads;

	e->eax = (e->eax & ~CACHE_SHARING_MASK) | ((share - 1) << 14);
}

/* Subleaf @index of @fn: the table's, or a new one (with @flags) while
 * there is room. */
static struct kvm_cpuid_entry2 *subleaf(struct kvm_cpuid2 *c,
					unsigned int max, unsigned int fn,
					unsigned int index, unsigned int flags)
{
	struct kvm_cpuid_entry2 *e = find(c, fn, index);

	if (e || c->nent >= max)
		return e;
	e = &c->entries[c->nent++];
	memset(e, 0, sizeof(*e));
	e->function = fn;
	e->index = index;
	e->flags = flags;
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

/* Leaf 0xb or 0x1f, when KVM lists it: SMT (the threads of a core),
 * core (all vCPUs), end. */
static void ext_topology(struct kvm_cpuid2 *c, unsigned int max,
			 unsigned int fn, const struct topo *t)
{
	const unsigned int flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;

	if (!find(c, fn, 0))
		return;
	set_regs(subleaf(c, max, fn, 0, flags), t->tbits, t->threads,
		 TOPO_TYPE_SMT << 8, t->id);
	set_regs(subleaf(c, max, fn, 1, flags), t->bits, t->ncpus,
		 (TOPO_TYPE_CORE << 8) | 1, t->id);
	set_regs(subleaf(c, max, fn, 2, flags), 0, 0, 2, t->id);
}

/*
 * SMT on an AMD table without TopologyExtensions (QEMU's emulated CPUs
 * lack it): Linux then counts one thread per core whatever leaf 0xb
 * says, so offer the feature with its leaf 0x8000001e (written by the
 * caller) and the extended range up to it. A leaf 0x8000001d the table
 * lacks reads as zeros, "no more caches", which is what the guest saw of
 * its caches without the feature too. No room for the leaf: nothing.
 */
static void amd_topoext(struct kvm_cpuid2 *c, unsigned int max)
{
	struct kvm_cpuid_entry2 *ext = find(c, LEAF_EXT_MAX, 0);
	struct kvm_cpuid_entry2 *e1 = find(c, 0x80000001, 0);

	if (!ext || !e1 || (e1->ecx & AMD_TOPOEXT) ||
	    !subleaf(c, max, LEAF_AMD_EXT_APIC, 0, 0))
		return;
	e1->ecx |= AMD_TOPOEXT;
	if (ext->eax < LEAF_AMD_EXT_APIC)
		ext->eax = LEAF_AMD_EXT_APIC;
}

void x86_cpuid_topology(struct kvm_cpuid2 *c, unsigned int max,
			unsigned int id, unsigned int ncpus, bool smt)
{
	unsigned int threads = smt && ncpus > 1 ? X86_SMT_THREADS : 1;
	const struct topo t = {
		.id = id, .ncpus = ncpus, .threads = threads,
		.tbits = order(threads), .bits = order(ncpus),
		.span = 1u << order(ncpus),
	};
	unsigned int top4 = last_level(c, 4);
	unsigned int top1d = last_level(c, 0x8000001d);
	bool amd = vendor_amd(c);
	unsigned int i, cores;

	if (amd && threads > 1)
		amd_topoext(c, max);

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & ~0xff0000u) |
				 ((t.span > 0xff ? 0xffu : t.span) << 16);
			break;
		case 4:
			if (!CACHE_TYPE(e->eax))
				break;
			cores = t.span >> t.tbits;
			e->eax = (e->eax & ~CACHE_CORES_MASK) |
				 (((cores > 64 ? 64 : cores) - 1) << 26);
			cache_sharing(e, top4, &t);
			break;
		case 0x8000001d:
			if (amd && CACHE_TYPE(e->eax))
				cache_sharing(e, top1d, &t);
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
					 (t.bits << 12) | (ncpus - 1);
			break;
		case 0x8000001e:
			if (amd)
				set_regs(e, id, ((id >> t.tbits) & 0xff) |
					 ((threads - 1) << 8), 0, 0);
			break;
		default:
			break;
		}
	}
	ext_topology(c, max, LEAF_EXT_TOPO, &t);
	ext_topology(c, max, LEAF_EXT_TOPO_V2, &t);
}
