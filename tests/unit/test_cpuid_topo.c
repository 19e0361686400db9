// SPDX-License-Identifier: Apache-2.0
/*
 * The CPUID topology of x86_cpuid_topology(), read back the way a Linux
 * guest reads it (arch/x86/kernel/cpu: amd.c, topology.c, cacheinfo.c):
 * from tables shaped like KVM_GET_SUPPORTED_CPUID's on an AMD host (with
 * and without TOPOEXT) and an Intel host, whose host values describe
 * another machine. For 1 to 255 vCPUs every vCPU must come out in
 * package 0 with a core of its own, one thread per core, and the same
 * last-level cache ID; the caches below it private. With SMT (1 or an
 * even count), vCPUs 2k and 2k + 1 are the two threads of core k and
 * share the caches below the last level; an AMD table without
 * TopologyExtensions gets the feature and its leaf 0x8000001e.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpuid_topo.h"
#include "test.h"

#define MAX_ENT 64

struct table {
	struct kvm_cpuid2 c;
	struct kvm_cpuid_entry2 e[MAX_ENT];
};

static void put(struct table *t, unsigned int fn, unsigned int index,
		unsigned int eax, unsigned int ebx, unsigned int ecx,
		unsigned int edx)
{
	struct kvm_cpuid_entry2 *e = &t->c.entries[t->c.nent++];

	memset(e, 0, sizeof(*e));
	e->function = fn;
	e->index = index;
	e->eax = eax;
	e->ebx = ebx;
	e->ecx = ecx;
	e->edx = edx;
}

static const struct kvm_cpuid_entry2 *get(const struct table *t,
					  unsigned int fn, unsigned int index)
{
	unsigned int i;

	for (i = 0; i < t->c.nent; i++)
		if (t->c.entries[i].function == fn &&
		    t->c.entries[i].index == index)
			return &t->c.entries[i];
	return NULL;
}

/* A cache subleaf: type (1 data, 2 code, 3 unified), level, sharing. */
static unsigned int cache_eax(unsigned int type, unsigned int level,
			      unsigned int sharing)
{
	return type | (level << 5) | ((sharing - 1) << 14);
}

/* An AMD host of 64 cores (its 0x80000008 and cache sharing), as KVM
 * hands it on: 0xb and 0x8000001e zeroed. */
static void amd_host(struct table *t, bool topoext)
{
	memset(t, 0, sizeof(*t));
	put(t, 0, 0, 0x10, 0x68747541, 0x444d4163, 0x69746e65);
	put(t, 1, 0, 0x00a00f11, 0x00400800, 0, 0);
	put(t, 0xb, 0, 0, 0, 0, 0);
	put(t, 0x80000000, 0, 0x80000021, 0, 0, 0);
	put(t, 0x80000001, 0, 0, 0, topoext ? 1u << 22 : 0, 0);
	put(t, 0x80000008, 0, 0x3030, 0, 0x703f, 0);
	if (topoext) {
		put(t, 0x8000001d, 0, cache_eax(1, 1, 2), 0, 0, 0);
		put(t, 0x8000001d, 1, cache_eax(2, 1, 2), 0, 0, 0);
		put(t, 0x8000001d, 2, cache_eax(3, 2, 2), 0, 0, 0);
		put(t, 0x8000001d, 3, cache_eax(3, 3, 16), 0, 0, 0);
		put(t, 0x8000001d, 4, 0, 0, 0, 0);
		put(t, 0x8000001e, 0, 0, 0, 0, 0);
	}
}

/* An Intel host of 2 threads per core, 28 cores (leaf 4's view). */
static void intel_host(struct table *t)
{
	memset(t, 0, sizeof(*t));
	put(t, 0, 0, 0x1f, 0x756e6547, 0x6c65746e, 0x49656e69);
	put(t, 1, 0, 0x000606a6, 0x00400800, 0, 0);
	put(t, 4, 0, cache_eax(1, 1, 2) | (31u << 26), 0, 0, 0);
	put(t, 4, 1, cache_eax(2, 1, 2) | (31u << 26), 0, 0, 0);
	put(t, 4, 2, cache_eax(3, 2, 2) | (31u << 26), 0, 0, 0);
	put(t, 4, 3, cache_eax(3, 3, 64) | (31u << 26), 0, 0, 0);
	put(t, 4, 4, 0, 0, 0, 0);
	put(t, 0xb, 0, 0, 0, 0, 0);
	put(t, 0x1f, 0, 0, 0, 0, 0);
	put(t, 0x80000008, 0, 0x3030, 0, 0, 0);
}

static unsigned int order(unsigned int n)
{
	unsigned int b = 0;

	while ((1u << b) < n)
		b++;
	return b;
}

/* What a guest derives for one vCPU. */
struct view {
	unsigned int pkg, core, threads_per_core, llc;
	unsigned int private_share; /* largest sharing below the LLC; 0:
				     * no cache leaf */
	bool ok;
};

/* The LLC ID and the lower levels' sharing from a cache leaf. */
static void caches(const struct table *t, unsigned int fn, unsigned int apic,
		   struct view *v)
{
	unsigned int i, top = 0, llc_share = 0;
	const struct kvm_cpuid_entry2 *e;

	for (i = 0; (e = get(t, fn, i)) && (e->eax & 0x1f); i++)
		if (((e->eax >> 5) & 7) > top)
			top = (e->eax >> 5) & 7;
	for (i = 0; (e = get(t, fn, i)) && (e->eax & 0x1f); i++) {
		unsigned int share = ((e->eax >> 14) & 0xfff) + 1;

		if (((e->eax >> 5) & 7) == top)
			llc_share = share;
		else if (share > v->private_share)
			v->private_share = share;
	}
	CHECK(llc_share > 0);
	v->llc = apic >> order(llc_share);
}

/* AMD without TOPOEXT: CmpLegacy and 0x80000008 (amd_detect_cmp()). */
static struct view amd_view(const struct table *t, unsigned int apic,
			    unsigned int ncpus)
{
	const struct kvm_cpuid_entry2 *e1 = get(t, 0x80000001, 0);
	const struct kvm_cpuid_entry2 *e8 = get(t, 0x80000008, 0);
	struct view v = { .ok = e1 && e8 };
	unsigned int bits, cores;

	if (!v.ok)
		return v;
	CHECK_EQ(!!(e1->ecx & 2), ncpus > 1);
	cores = (e8->ecx & 0xff) + 1;
	bits = (e8->ecx >> 12) & 0xf;
	if (!bits)
		bits = order(cores);
	CHECK_EQ(cores, ncpus);
	v.core = apic & ((1u << bits) - 1);
	v.pkg = apic >> bits;
	v.llc = v.pkg;
	v.threads_per_core = 1;
	return v;
}

/* Leaf 0xb as Linux's detect_extended_topology() reads it (Intel, and
 * AMD with TOPOEXT): threads per core and the core ID. */
static void ext_view(const struct table *t, unsigned int fn,
		     unsigned int apic, struct view *v)
{
	const struct kvm_cpuid_entry2 *s0 = get(t, fn, 0), *s1 = get(t, fn, 1),
				      *s2 = get(t, fn, 2);

	v->ok = s0 && s1 && s2;
	if (!v->ok)
		return;
	CHECK_EQ((s0->ecx >> 8) & 0xff, 1); /* SMT */
	CHECK_EQ((s1->ecx >> 8) & 0xff, 2); /* core */
	CHECK_EQ((s2->ecx >> 8) & 0xff, 0); /* the end */
	CHECK(s0->ebx != 0);
	CHECK_EQ(s0->edx, apic);
	CHECK_EQ(s1->edx, apic);
	CHECK((1u << (s0->eax & 0x1f)) >= (s0->ebx & 0xffff));
	CHECK((s1->eax & 0x1f) >= (s0->eax & 0x1f));
	v->threads_per_core = s0->ebx & 0xffff;
	v->core = (apic & ((1u << (s1->eax & 0x1f)) - 1)) >> (s0->eax & 0x1f);
	v->pkg = apic >> (s1->eax & 0x1f);
}

/* AMD with TOPOEXT: 0x8000001e and 0x8000001d (amd_get_topology());
 * family 0x17 on takes the core ID from 0x8000001e, earlier ones from
 * leaf 0xb: both must agree. */
static struct view amd_topoext_view(const struct table *t, unsigned int apic,
				    unsigned int ncpus)
{
	const struct kvm_cpuid_entry2 *e = get(t, 0x8000001e, 0);
	const struct kvm_cpuid_entry2 *x = get(t, 0x80000000, 0);
	const struct kvm_cpuid_entry2 *e1 = get(t, 0x80000001, 0);
	struct view v = amd_view(t, apic, ncpus), vb = { 0 };

	CHECK(e != NULL && x != NULL && e1 != NULL);
	if (!e || !x || !e1)
		return v;
	CHECK(e1->ecx & (1u << 22));
	CHECK(x->eax >= 0x8000001e);
	CHECK_EQ(e->eax, apic);
	v.core = e->ebx & 0xff;
	v.threads_per_core = ((e->ebx >> 8) & 0xff) + 1;
	CHECK_EQ(e->ecx & 0x7ff, 0); /* node 0 of 1 */
	if (get(t, 0x8000001d, 0))
		caches(t, 0x8000001d, apic, &v);
	ext_view(t, 0xb, apic, &vb);
	if (vb.ok) {
		CHECK_EQ(vb.core, v.core);
		CHECK_EQ(vb.threads_per_core, v.threads_per_core);
		CHECK_EQ(vb.pkg, v.pkg);
	}
	return v;
}

/* Intel: leaf 0xb (or 0x1f) and leaf 4 (topology.c, cacheinfo.c). */
static struct view intel_view(const struct table *t, unsigned int fn,
			      unsigned int apic)
{
	struct view v = { 0 };
	unsigned int cores;

	ext_view(t, fn, apic, &v);
	if (!v.ok)
		return v;
	caches(t, 4, apic, &v);
	cores = (get(t, 4, 0)->eax >> 26) + 1;
	CHECK(cores * v.threads_per_core >= (1u << order(get(t, fn, 1)->ebx)) ||
	      cores == 64);
	return v;
}

/* Every vCPU: package 0, one LLC; without SMT its own core and caches,
 * with it vCPUs 2k and 2k + 1 core k's two threads sharing its caches. */
static void check_views(const char *what, const struct view *v,
			unsigned int ncpus, unsigned int threads)
{
	unsigned int i, bad = 0;

	for (i = 0; i < ncpus; i++) {
		if (!v[i].ok || v[i].pkg != 0 || v[i].core != i / threads ||
		    v[i].threads_per_core != threads || v[i].llc != v[0].llc ||
		    (v[i].private_share && v[i].private_share != threads))
			bad++;
	}
	if (bad)
		printf("%s, %u vCPUs, %u per core: %u vCPUs wrong (vCPU %u: "
		       "pkg %u core %u threads %u llc %u)\n", what, ncpus,
		       threads, bad, ncpus - 1, v[ncpus - 1].pkg,
		       v[ncpus - 1].core, v[ncpus - 1].threads_per_core,
		       v[ncpus - 1].llc);
	CHECK_EQ(bad, 0);
}

/* The four tables for every vCPU of @ncpus, each read as Linux reads it. */
static void test_counts(unsigned int ncpus, bool smt)
{
	unsigned int threads = smt && ncpus > 1 ? 2 : 1;
	struct view *va = calloc(ncpus, sizeof(*va));
	struct view *vx = calloc(ncpus, sizeof(*vx));
	struct view *vi = calloc(ncpus, sizeof(*vi));
	struct view *v2 = calloc(ncpus, sizeof(*v2));
	struct table t;
	unsigned int i;

	for (i = 0; i < ncpus; i++) {
		unsigned int id = x86_apic_id(i);
		const struct kvm_cpuid_entry2 *e1;

		CHECK_EQ(id, i); /* the MADT's and the MP table's too */
		amd_host(&t, false);
		x86_cpuid_topology(&t.c, MAX_ENT, id, ncpus, smt);
		/* SMT needs TOPOEXT, which is then offered. */
		va[i] = threads > 1 ? amd_topoext_view(&t, id, ncpus) :
				      amd_view(&t, id, ncpus);
		CHECK_EQ(!!get(&t, 0x8000001e, 0), threads > 1);
		e1 = get(&t, 1, 0);
		CHECK(((e1->ebx >> 16) & 0xff) >= (ncpus > 0xff ? 0xff : ncpus));

		amd_host(&t, true);
		x86_cpuid_topology(&t.c, MAX_ENT, id, ncpus, smt);
		vx[i] = amd_topoext_view(&t, id, ncpus);

		intel_host(&t);
		x86_cpuid_topology(&t.c, MAX_ENT, id, ncpus, smt);
		vi[i] = intel_view(&t, 0xb, id);
		v2[i] = intel_view(&t, 0x1f, id);
		/* Intel's 0x80000008 ECX is reserved: left alone. */
		CHECK_EQ(get(&t, 0x80000008, 0)->ecx, 0);
		CHECK(get(&t, 0x8000001e, 0) == NULL);
	}
	check_views("AMD", va, ncpus, threads);
	check_views("AMD TOPOEXT", vx, ncpus, threads);
	check_views("Intel 0xb", vi, ncpus, threads);
	check_views("Intel 0x1f", v2, ncpus, threads);
	free(va);
	free(vx);
	free(vi);
	free(v2);
}

/* A full table gets no subleaves added, and nothing is written past it;
 * an AMD one then gets no TOPOEXT either (no 0x8000001e to go with it). */
static void test_no_room(void)
{
	struct table t;
	unsigned int n;

	intel_host(&t);
	n = t.c.nent;
	x86_cpuid_topology(&t.c, n, 3, 4, false);
	CHECK_EQ(t.c.nent, n);
	CHECK_EQ(get(&t, 0xb, 0)->edx, 3);
	CHECK_EQ(get(&t, 0xb, 0)->ebx, 1);
	CHECK(get(&t, 0xb, 1) == NULL);

	amd_host(&t, false);
	n = t.c.nent;
	x86_cpuid_topology(&t.c, n, 3, 4, true);
	CHECK_EQ(t.c.nent, n);
	CHECK(get(&t, 0x8000001e, 0) == NULL);
	CHECK_EQ(get(&t, 0x80000001, 0)->ecx & (1u << 22), 0);
	CHECK_EQ(get(&t, 0x80000000, 0)->eax, 0x80000021);
}

/* A leaf KVM did not list stays absent; with SMT, an extended range that
 * ends below 0x8000001e is raised to it, a longer one kept. */
static void test_absent(void)
{
	struct kvm_cpuid_entry2 *x;
	struct table t;

	amd_host(&t, false);
	x86_cpuid_topology(&t.c, MAX_ENT, 1, 2, false);
	CHECK(get(&t, 0x1f, 0) == NULL);
	CHECK(get(&t, 0x8000001e, 0) == NULL);
	CHECK(get(&t, 4, 0) == NULL);
	CHECK_EQ(get(&t, 0x80000001, 0)->ecx & (1u << 22), 0);

	amd_host(&t, false);
	x = (struct kvm_cpuid_entry2 *)get(&t, 0x80000000, 0);
	x->eax = 0x8000000a;
	x86_cpuid_topology(&t.c, MAX_ENT, 1, 2, true);
	CHECK_EQ(get(&t, 0x80000000, 0)->eax, 0x8000001e);
	CHECK(get(&t, 0x8000001d, 0) == NULL);
}

/* One vCPU with SMT is one thread of one core, as Firecracker has it. */
static void test_smt_one(void)
{
	struct table t;

	intel_host(&t);
	x86_cpuid_topology(&t.c, MAX_ENT, 0, 1, true);
	CHECK_EQ(get(&t, 0xb, 0)->ebx, 1);
	CHECK_EQ(get(&t, 0xb, 0)->eax, 0);
	amd_host(&t, false);
	x86_cpuid_topology(&t.c, MAX_ENT, 0, 1, true);
	CHECK(get(&t, 0x8000001e, 0) == NULL);
}

int main(void)
{
	static const unsigned int counts[] = { 1, 2, 3, 4, 7, 8, 64, 100,
					       128, 129, 254, 255 };
	static const unsigned int smt_counts[] = { 1, 2, 4, 8, 64, 100, 128,
						   254 };
	unsigned int i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		test_counts(counts[i], false);
	for (i = 0; i < sizeof(smt_counts) / sizeof(smt_counts[0]); i++)
		test_counts(smt_counts[i], true);
	test_no_room();
	test_absent();
	test_smt_one();
	return test_done();
}
