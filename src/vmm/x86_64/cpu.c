// SPDX-License-Identifier: Apache-2.0
/*
 * Per-vCPU x86 state. CPUID starts from what KVM supports and gets each
 * vCPU's APIC ID in every leaf that reports one (1, 0xb, 0x1f,
 * 0x8000001e) so the topology the guest reads matches the MADT, and
 * microvm's own topology (cpuid_topo.c) in place of the host's. The local
 * APIC gets LINT0 = ExtINT and LINT1 = NMI, as firmware would leave it.
 */
#include "cpu.h"

#include <cpuid.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "boot.h"
#include "cpuid_topo.h"
#include "util/log.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

#define CPUID_MAX_ENTRIES 256
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_MODE_NMI 0x4
#define APIC_MODE_EXTINT 0x7

/*
 * QEMU's TCG emulator, when it provides AMD SVM to a KVM host, does not
 * intercept a nested guest's XSETBV: KVM never learns the guest's XCR0,
 * sizes CPUID 0xd for x87|SSE (the guest then warns "XSAVE consistency
 * problem") and loads its own stale XCR0 before each entry, so VEX
 * (AVX) code in the guest faults or loses state. On such a host the
 * guest gets no XSAVE and no VEX-encoded extensions; the legacy
 * FXSAVE/SSE path works.
 */
bool x86_host_is_tcg(void)
{
	unsigned int a, b, c, d;
	char sig[13];

	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	return !strcmp(sig, "TCGTCGTCGTCG");
}

#define CPUID1_ECX_NO_XSAVE ((1u << 12) | (1u << 26) | (1u << 27) | \
			     (1u << 28) | (1u << 29))      /* FMA XSAVE OSXSAVE AVX F16C */
#define CPUID7_EBX_NO_XSAVE ((1u << 5) | (1u << 16) | (1u << 17) | \
			     (1u << 21) | (1u << 26) | (1u << 27) | \
			     (1u << 28) | (1u << 30) | (1u << 31))
				/* AVX2, AVX-512 F DQ IFMA PF ER CD BW VL */
#define CPUID7_ECX_NO_XSAVE ((1u << 1) | (1u << 3) | (1u << 4) | (1u << 6) | \
			     (1u << 9) | (1u << 10) | (1u << 11) | \
			     (1u << 12) | (1u << 14))
				/* VBMI PKU OSPKE VBMI2 VAES VPCLMULQDQ VNNI
				 * BITALG VPOPCNTDQ */
#define CPUID81_ECX_NO_XSAVE ((1u << 11) | (1u << 16)) /* XOP FMA4 */

static void cpuid_drop_xsave(struct kvm_cpuid_entry2 *e)
{
	switch (e->function) {
	case 1:
		e->ecx &= ~CPUID1_ECX_NO_XSAVE;
		break;
	case 7:
		if (e->index == 0) {
			e->ebx &= ~CPUID7_EBX_NO_XSAVE;
			e->ecx &= ~CPUID7_ECX_NO_XSAVE;
		}
		break;
	case 0xd:
		e->eax = e->ebx = e->ecx = e->edx = 0;
		break;
	case 0x80000001:
		e->ecx &= ~CPUID81_ECX_NO_XSAVE;
		break;
	default:
		break;
	}
}

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID1_ECX_VMX (1u << 5)
#define CPUID81_ECX_SVM (1u << 2)
#define CPUID_SVM_LEAF 0x8000000au
#define CPUID_BRAND_FIRST 0x80000002u
#define CPUID_BRAND_LAST 0x80000004u

/*
 * KVM reports no processor brand string (leaves 0x80000002-4), so the
 * guest would name its CPU after the family ("AMD Hammer"); give it the
 * host's, as "-cpu host" in other VMMs does. Leaves KVM did not list are
 * added when the extended range reaches them.
 */
static void cpuid_brand(struct kvm_cpuid2 *c, unsigned int max)
{
	unsigned int ext_max = 0, leaf, i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == 0x80000000)
			ext_max = c->entries[i].eax;
	for (leaf = CPUID_BRAND_FIRST; leaf <= CPUID_BRAND_LAST; leaf++) {
		struct kvm_cpuid_entry2 *e = NULL;

		if (ext_max < leaf)
			return;
		for (i = 0; i < c->nent; i++)
			if (c->entries[i].function == leaf)
				e = &c->entries[i];
		if (!e) {
			if (c->nent >= max)
				return;
			e = &c->entries[c->nent++];
			memset(e, 0, sizeof(*e));
			e->function = leaf;
		}
		__cpuid(leaf, e->eax, e->ebx, e->ecx, e->edx);
	}
}

static void cpuid_fixup(struct kvm_cpuid2 *c, unsigned int id, bool no_xsave,
			bool tsc_deadline)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (no_xsave)
			cpuid_drop_xsave(e);
		switch (e->function) {
		case 1:
			/* Initial APIC ID; the logical processor count is
			 * x86_cpuid_topology()'s. */
			e->ebx = (e->ebx & 0xffffff) | (id << 24);
			e->edx |= 1u << 28; /* HTT: the count field is valid */
			e->ecx |= 1u << 31; /* running under a hypervisor */
			/*
			 * KVM emulates the TSC-deadline mode of the local APIC
			 * timer but leaves the bit for the VMM to offer: one
			 * MSR write per timer instead of the count registers.
			 */
			if (tsc_deadline)
				e->ecx |= CPUID1_ECX_TSC_DEADLINE;
			e->ecx &= ~CPUID1_ECX_VMX;
			break;
		/*
		 * No nested virtualization: KVM offers it when the host's
		 * module allows, but a snapshot does not carry a nested
		 * guest's state, and a guest hypervisor (Debian's udev loads
		 * kvm_amd where SVM shows) only costs the guest. So no SVM
		 * or VMX: the guest cannot set EFER.SVME or enter VMX.
		 */
		case 0x80000001:
			e->ecx &= ~CPUID81_ECX_SVM;
			break;
		case CPUID_SVM_LEAF:
			e->eax = e->ebx = e->ecx = e->edx = 0;
			break;
		default:
			break;
		}
	}
}

static int lapic_init(struct vcpu *v)
{
	struct kvm_lapic_state lapic;
	uint32_t *lint0, *lint1;

	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) < 0)
		return -errno;
	lint0 = (uint32_t *)&lapic.regs[APIC_LVT_LINT0];
	lint1 = (uint32_t *)&lapic.regs[APIC_LVT_LINT1];
	*lint0 = (*lint0 & ~0x700u) | (APIC_MODE_EXTINT << 8);
	*lint1 = (*lint1 & ~0x700u) | (APIC_MODE_NMI << 8);
	if (ioctl(v->fd, KVM_SET_LAPIC, &lapic) < 0)
		return -errno;
	return 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *v, char *err, size_t errlen)
{
	bool tcg = x86_host_is_tcg();
	struct kvm_cpuid2 *c;
	int ret;

	c = calloc(1, sizeof(*c) +
			      CPUID_MAX_ENTRIES * sizeof(c->entries[0]));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
		ret = -errno;
		snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s",
			 strerror(-ret));
		goto out;
	}
	if (!v->index && tcg)
		log_info("host CPU is QEMU TCG: no XSAVE/AVX for the guest");
	cpuid_brand(c, CPUID_MAX_ENTRIES);
	cpuid_fixup(c, x86_apic_id(v->index), tcg,
		    ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			  KVM_CAP_TSC_DEADLINE_TIMER) > 0);
	x86_cpuid_topology(c, CPUID_MAX_ENTRIES, x86_apic_id(v->index),
			   vm->ncpus, vm->smt);
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0) {
		ret = -errno;
		snprintf(err, errlen, "vCPU %u: KVM_SET_CPUID2: %s", v->index,
			 strerror(-ret));
		goto out;
	}
	ret = lapic_init(v);
	if (ret)
		snprintf(err, errlen, "vCPU %u: local APIC setup: %s",
			 v->index, strerror(-ret));
out:
	free(c);
	return ret;
}

static void seg_flat(struct kvm_segment *s, uint16_t sel, uint8_t type,
		     bool code64)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code64;
	s->db = !code64;
}

int x86_cpu_set_boot_state(struct vcpu *v, const struct x86_boot_state *st,
			   char *err, size_t errlen)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		goto fail;
	seg_flat(&sregs.cs, st->cs_sel, 0xb, st->cs_long);
	seg_flat(&sregs.ds, st->ds_sel, 0x3, false);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.type = 0xb; /* busy 32/64-bit TSS */
	sregs.tr.present = 1;
	sregs.tr.limit = 0x67;
	sregs.gdt.base = st->gdt_base;
	sregs.gdt.limit = st->gdt_limit;
	sregs.cr0 = st->cr0;
	sregs.cr3 = st->cr3;
	sregs.cr4 = st->cr4;
	sregs.efer = st->efer;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		goto fail;

	memset(&regs, 0, sizeof(regs));
	regs.rip = st->rip;
	regs.rsp = st->rsp;
	regs.rsi = st->rsi;
	regs.rbx = st->rbx;
	regs.rflags = st->rflags ? st->rflags : 2;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "vCPU %u: setting boot registers: %s", v->index,
		 strerror(errno));
	return -errno;
}

#define MSR_IA32_TSC 0x10
#define MSR_IA32_TSC_DEADLINE 0x6e0
#define APIC_PPR 0xa0
#define APIC_ISR 0x100
#define APIC_IRR 0x200
#define APIC_LVTT 0x320
#define APIC_LVT_MASKED (1u << 16)
#define APIC_LVTT_TSC_DEADLINE (2u << 17)
#define APIC_LVTT_MODE (3u << 17)
#define RFLAGS_IF (1u << 9)

static const char *mp_state_name(uint32_t st)
{
	switch (st) {
	case KVM_MP_STATE_RUNNABLE: return "runnable";
	case KVM_MP_STATE_UNINITIALIZED: return "waiting-for-init";
	case KVM_MP_STATE_INIT_RECEIVED: return "init-received";
	case KVM_MP_STATE_HALTED: return "halted";
	case KVM_MP_STATE_SIPI_RECEIVED: return "sipi-received";
	default: return "?";
	}
}

/* The highest vector set in the 256-bit LAPIC register at @off, or -1. */
static int lapic_top_vector(const struct kvm_lapic_state *l, unsigned int off)
{
	int i;

	for (i = 7; i >= 0; i--) {
		uint32_t w;

		memcpy(&w, &l->regs[off + 16 * i], 4);
		if (w)
			return i * 32 + 31 - __builtin_clz(w);
	}
	return -1;
}

/*
 * The timer part of the dump: "timer overdue N ms" names a vCPU whose
 * own TSC-deadline timer should have fired and been delivered by KVM long
 * ago (KVM clears the deadline when it fires), which no VMM action can
 * cause or cure; tests/e2e/lib.sh reads it.
 */
static void timer_state(struct vcpu *v, const struct kvm_lapic_state *l,
			char *buf, size_t len)
{
	struct {
		struct kvm_msrs h;
		struct kvm_msr_entry e[2];
	} m = { .h.nmsrs = 2,
		.e = { { .index = MSR_IA32_TSC },
		       { .index = MSR_IA32_TSC_DEADLINE } } };
	uint32_t lvtt;
	long khz;

	memcpy(&lvtt, &l->regs[APIC_LVTT], 4);
	if ((lvtt & APIC_LVTT_MODE) != APIC_LVTT_TSC_DEADLINE) {
		snprintf(buf, len, "timer lvtt %x (not TSC-deadline)", lvtt);
		return;
	}
	khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
	if (ioctl(v->fd, KVM_GET_MSRS, &m) != 2 || khz <= 0) {
		snprintf(buf, len, "timer ?");
		return;
	}
	if (lvtt & APIC_LVT_MASKED)
		snprintf(buf, len, "timer masked");
	else if (!m.e[1].data)
		snprintf(buf, len, "timer idle");
	else if (m.e[1].data > m.e[0].data)
		snprintf(buf, len, "timer due in %llu ms",
			 (unsigned long long)((m.e[1].data - m.e[0].data) /
					      (unsigned long long)khz));
	else
		snprintf(buf, len, "timer overdue %llu ms",
			 (unsigned long long)((m.e[0].data - m.e[1].data) /
					      (unsigned long long)khz));
}

void arch_vcpu_dump(struct vcpu *v)
{
	struct kvm_mp_state mp = { .mp_state = ~0u };
	struct kvm_lapic_state lapic;
	char timer[64] = "timer ?";
	struct kvm_regs r;
	struct kvm_sregs s;
	int irr = -1, isr = -1, ppr = -1;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 ||
	    ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return;
	log_msg(LOG_ERROR,
		"vCPU %u: rip %llx rsp %llx rflags %llx cr0 %llx cr3 %llx "
		"cr4 %llx efer %llx cs %x/%llx",
		v->index, (unsigned long long)r.rip,
		(unsigned long long)r.rsp, (unsigned long long)r.rflags,
		(unsigned long long)s.cr0, (unsigned long long)s.cr3,
		(unsigned long long)s.cr4, (unsigned long long)s.efer,
		s.cs.selector, (unsigned long long)s.cs.base);
	ioctl(v->fd, KVM_GET_MP_STATE, &mp);
	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) == 0) {
		uint32_t p;

		irr = lapic_top_vector(&lapic, APIC_IRR);
		isr = lapic_top_vector(&lapic, APIC_ISR);
		memcpy(&p, &lapic.regs[APIC_PPR], 4);
		ppr = (int)(p & 0xff);
		timer_state(v, &lapic, timer, sizeof(timer));
	}
	log_msg(LOG_ERROR,
		"vCPU %u: %s, interrupts %s, %s, irr top %d isr top %d ppr %d",
		v->index, mp_state_name(mp.mp_state),
		r.rflags & RFLAGS_IF ? "on" : "off", timer, irr, isr, ppr);
}
