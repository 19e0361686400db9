// SPDX-License-Identifier: Apache-2.0
/*
 * x86_64 snapshot state: each vCPU's registers (general, special, debug,
 * XSAVE or FPU, XCRs), local APIC, MSRs (kvmclock and TSC included),
 * pending events and MP state; the VM's in-kernel PIC, IOAPIC and PIT and
 * its clock; and the guest-visible CPUID a restore must find again. Every
 * KVM structure is stored with its size, so a build with another layout
 * is refused rather than misread.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "snapshot/snap.h"
#include "util/log.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

#define SNAP_MAX_MSRS 512u
#define SNAP_MAX_XSAVE (1u << 20)
#define SNAP_CPUID_MAX 256u

const uint32_t arch_snap_id = SNAP_ARCH_X86_64;

/* A KVM structure with its size in front. */
static void put_raw(struct snap_writer *w, const void *p, size_t n)
{
	snap_put_u32(w, (uint32_t)n);
	snap_put_bytes(w, p, n);
}

static int get_raw(struct snap_reader *r, void *p, size_t n, const char *what,
		   char *err, size_t errlen)
{
	uint32_t len = snap_get_u32(r);

	if (r->bad || len != n) {
		snprintf(err, errlen, "%s: %u bytes of state, this build "
			 "keeps %zu", what, len, n);
		return -EINVAL;
	}
	snap_get_bytes(r, p, n);
	if (r->bad) {
		snprintf(err, errlen, "%s: truncated", what);
		return -EINVAL;
	}
	return 0;
}

static int kvm_fail(char *err, size_t errlen, const char *what,
		    unsigned int index)
{
	int e = errno;

	snprintf(err, errlen, "vCPU %u: %s: %s", index, what, strerror(e));
	return -e;
}

/* ---- the MSRs worth saving: KVM's list, less those it cannot read ---- */

static uint32_t *msr_list;
static unsigned int nr_msr_list;

static int msr_read1(int fd, uint32_t index, uint64_t *val)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = index };

	if (ioctl(fd, KVM_GET_MSRS, &m) != 1)
		return -1;
	*val = m.e.data;
	return 0;
}

static int msr_list_init(struct vm *vm, int vcpu_fd, char *err,
			 size_t errlen)
{
	struct kvm_msr_list *l;
	unsigned int i;
	uint64_t v;

	if (msr_list)
		return 0;
	l = calloc(1, sizeof(*l) + SNAP_MAX_MSRS * sizeof(l->indices[0]));
	msr_list = calloc(SNAP_MAX_MSRS, sizeof(*msr_list));
	if (!l || !msr_list) {
		free(l);
		free(msr_list);
		msr_list = NULL;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	l->nmsrs = SNAP_MAX_MSRS;
	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		int e = errno;

		free(l);
		free(msr_list);
		msr_list = NULL;
		snprintf(err, errlen, "KVM_GET_MSR_INDEX_LIST: %s",
			 strerror(e));
		return -e;
	}
	for (i = 0; i < l->nmsrs && i < SNAP_MAX_MSRS; i++)
		if (!msr_read1(vcpu_fd, l->indices[i], &v))
			msr_list[nr_msr_list++] = l->indices[i];
	free(l);
	return 0;
}

static int msrs_save(struct vcpu *v, struct snap_writer *w, char *err,
		     size_t errlen)
{
	struct kvm_msrs *m;
	unsigned int i;
	int ret;

	ret = msr_list_init(v->vm, v->fd, err, errlen);
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m) + nr_msr_list * sizeof(m->entries[0]));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->nmsrs = nr_msr_list;
	for (i = 0; i < nr_msr_list; i++)
		m->entries[i].index = msr_list[i];
	ret = ioctl(v->fd, KVM_GET_MSRS, m);
	if (ret != (int)nr_msr_list) {
		snprintf(err, errlen, "vCPU %u: KVM_GET_MSRS read %d of %u "
			 "MSRs", v->index, ret, nr_msr_list);
		free(m);
		return -EIO;
	}
	snap_put_u32(w, nr_msr_list);
	for (i = 0; i < nr_msr_list; i++) {
		snap_put_u32(w, m->entries[i].index);
		snap_put_u64(w, m->entries[i].data);
	}
	free(m);
	return 0;
}

static int msrs_load(struct vcpu *v, struct snap_reader *r, char *err,
		     size_t errlen)
{
	uint32_t n = snap_get_u32(r);
	struct kvm_msrs *m;
	unsigned int i;
	int ret;

	if (r->bad || n > SNAP_MAX_MSRS || snap_reader_left(r) < n * 12ull) {
		snprintf(err, errlen, "vCPU %u: MSRs: %u entries", v->index, n);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m) + n * sizeof(m->entries[0]));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->nmsrs = n;
	for (i = 0; i < n; i++) {
		m->entries[i].index = snap_get_u32(r);
		m->entries[i].data = snap_get_u64(r);
	}
	ret = ioctl(v->fd, KVM_SET_MSRS, m);
	if (ret != (int)n) {
		snprintf(err, errlen, "vCPU %u: KVM refused MSR 0x%x (%d of "
			 "%u set)", v->index,
			 ret >= 0 && ret < (int)n ? m->entries[ret].index : 0,
			 ret, n);
		free(m);
		return -EINVAL;
	}
	free(m);
	return 0;
}

/* ---- XSAVE (or the legacy FPU state without it) ---- */

static int xsave_size(struct vm *vm)
{
	int n = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);

	if (n > (int)sizeof(struct kvm_xsave))
		return n;
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0)
		return sizeof(struct kvm_xsave);
	return 0;
}

static int fpu_save(struct vcpu *v, struct snap_writer *w, char *err,
		    size_t errlen)
{
	int size = xsave_size(v->vm);
	struct kvm_fpu fpu;
	void *x;

	if (!size) {
		if (ioctl(v->fd, KVM_GET_FPU, &fpu) < 0)
			return kvm_fail(err, errlen, "KVM_GET_FPU", v->index);
		snap_put_u32(w, 0);
		put_raw(w, &fpu, sizeof(fpu));
		return 0;
	}
	x = calloc(1, size);
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (ioctl(v->fd, size > (int)sizeof(struct kvm_xsave) ?
		  KVM_GET_XSAVE2 : KVM_GET_XSAVE, x) < 0) {
		free(x);
		return kvm_fail(err, errlen, "KVM_GET_XSAVE", v->index);
	}
	snap_put_u32(w, (uint32_t)size);
	snap_put_bytes(w, x, size);
	free(x);
	return 0;
}

static int fpu_load(struct vcpu *v, struct snap_reader *r, char *err,
		    size_t errlen)
{
	uint32_t size = snap_get_u32(r);
	int have = xsave_size(v->vm);
	struct kvm_fpu fpu;
	const uint8_t *x;
	void *buf;
	int ret;

	if (!size) {
		if (have) {
			snprintf(err, errlen, "vCPU %u: the snapshot has no "
				 "XSAVE state; this host uses XSAVE",
				 v->index);
			return -EINVAL;
		}
		ret = get_raw(r, &fpu, sizeof(fpu), "FPU", err, errlen);
		if (ret)
			return ret;
		if (ioctl(v->fd, KVM_SET_FPU, &fpu) < 0)
			return kvm_fail(err, errlen, "KVM_SET_FPU", v->index);
		return 0;
	}
	if (size > SNAP_MAX_XSAVE || (int)size > (have ? have : 0) ||
	    size < sizeof(struct kvm_xsave)) {
		snprintf(err, errlen, "vCPU %u: XSAVE area of %u bytes; this "
			 "host's is %d", v->index, size, have);
		return -EINVAL;
	}
	x = snap_get_ref(r, size);
	if (!x) {
		snprintf(err, errlen, "vCPU %u: XSAVE state truncated",
			 v->index);
		return -EINVAL;
	}
	/* A larger area of this host: the rest stays in its init state. */
	buf = calloc(1, have);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(buf, x, size);
	ret = ioctl(v->fd, KVM_SET_XSAVE, buf);
	free(buf);
	if (ret < 0)
		return kvm_fail(err, errlen, "KVM_SET_XSAVE", v->index);
	return 0;
}

/* ---- one vCPU ---- */

int arch_snapshot_vcpu_save(struct vcpu *v, struct snap_writer *w, char *err,
			    size_t errlen)
{
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dregs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	bool has_xcrs;
	int khz, ret;

	memset(&xcrs, 0, sizeof(xcrs));
	if (ioctl(v->fd, KVM_GET_MP_STATE, &mp) < 0)
		return kvm_fail(err, errlen, "KVM_GET_MP_STATE", v->index);
	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0)
		return kvm_fail(err, errlen, "KVM_GET_REGS", v->index);
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return kvm_fail(err, errlen, "KVM_GET_SREGS", v->index);
	has_xcrs = ioctl(v->vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0;
	if (has_xcrs && ioctl(v->fd, KVM_GET_XCRS, &xcrs) < 0)
		return kvm_fail(err, errlen, "KVM_GET_XCRS", v->index);
	if (ioctl(v->fd, KVM_GET_DEBUGREGS, &dregs) < 0)
		return kvm_fail(err, errlen, "KVM_GET_DEBUGREGS", v->index);
	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) < 0)
		return kvm_fail(err, errlen, "KVM_GET_LAPIC", v->index);
	khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
	if (khz < 0)
		khz = 0;
	snap_put_u32(w, v->index);
	snap_put_u32(w, mp.mp_state);
	put_raw(w, &regs, sizeof(regs));
	put_raw(w, &sregs, sizeof(sregs));
	ret = fpu_save(v, w, err, errlen);
	if (ret)
		return ret;
	snap_put_u8(w, has_xcrs);
	put_raw(w, &xcrs, sizeof(xcrs));
	put_raw(w, &dregs, sizeof(dregs));
	put_raw(w, &lapic, sizeof(lapic));
	snap_put_u32(w, (uint32_t)khz);
	ret = msrs_save(v, w, err, errlen);
	if (ret)
		return ret;
	/* Last: nothing above may inject or consume an event. */
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return kvm_fail(err, errlen, "KVM_GET_VCPU_EVENTS", v->index);
	put_raw(w, &ev, sizeof(ev));
	return 0;
}

/*
 * The same guest TSC rate: KVM scales it where the host's differs (a
 * failure is reported, the guest's clock would drift).
 */
static int tsc_khz_load(struct vcpu *v, uint32_t khz, char *err,
			size_t errlen)
{
	int here = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);

	if (!khz || here < 0 || (uint32_t)here == khz)
		return 0;
	if (ioctl(v->fd, KVM_SET_TSC_KHZ, (unsigned long)khz) < 0) {
		snprintf(err, errlen, "vCPU %u: the snapshot's TSC runs at "
			 "%u kHz, this host's at %d kHz, and KVM cannot scale "
			 "it: %s", v->index, khz, here, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

int arch_snapshot_vcpu_load(struct vcpu *v, struct snap_reader *r, char *err,
			    size_t errlen)
{
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dregs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	uint32_t index, khz;
	uint8_t has_xcrs;
	int ret;

	index = snap_get_u32(r);
	mp.mp_state = snap_get_u32(r);
	if (r->bad || index != v->index) {
		snprintf(err, errlen, "vCPU %u: the snapshot's state is for "
			 "vCPU %u", v->index, index);
		return -EINVAL;
	}
	ret = get_raw(r, &regs, sizeof(regs), "registers", err, errlen) ?:
	      get_raw(r, &sregs, sizeof(sregs), "special registers", err,
		      errlen);
	if (ret)
		return ret;
	/* Firecracker's order: MP state, registers, FPU, XCRs, debug
	 * registers, LAPIC, the TSC rate then the MSRs, events last. */
	if (ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)
		return kvm_fail(err, errlen, "KVM_SET_MP_STATE", v->index);
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		return kvm_fail(err, errlen, "KVM_SET_REGS", v->index);
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		return kvm_fail(err, errlen, "KVM_SET_SREGS", v->index);
	ret = fpu_load(v, r, err, errlen);
	if (ret)
		return ret;
	has_xcrs = snap_get_u8(r);
	ret = get_raw(r, &xcrs, sizeof(xcrs), "XCRs", err, errlen) ?:
	      get_raw(r, &dregs, sizeof(dregs), "debug registers", err,
		      errlen) ?:
	      get_raw(r, &lapic, sizeof(lapic), "local APIC", err, errlen);
	if (ret)
		return ret;
	if (has_xcrs && ioctl(v->fd, KVM_SET_XCRS, &xcrs) < 0)
		return kvm_fail(err, errlen, "KVM_SET_XCRS", v->index);
	if (ioctl(v->fd, KVM_SET_DEBUGREGS, &dregs) < 0)
		return kvm_fail(err, errlen, "KVM_SET_DEBUGREGS", v->index);
	if (ioctl(v->fd, KVM_SET_LAPIC, &lapic) < 0)
		return kvm_fail(err, errlen, "KVM_SET_LAPIC", v->index);
	khz = snap_get_u32(r);
	ret = tsc_khz_load(v, khz, err, errlen);
	if (ret)
		return ret;
	ret = msrs_load(v, r, err, errlen);
	if (ret)
		return ret;
	ret = get_raw(r, &ev, sizeof(ev), "pending events", err, errlen);
	if (ret)
		return ret;
	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return kvm_fail(err, errlen, "KVM_SET_VCPU_EVENTS", v->index);
	if (!snap_reader_done(r)) {
		snprintf(err, errlen, "vCPU %u: %zu bytes of state left over",
			 v->index, snap_reader_left(r));
		return -EINVAL;
	}
	return 0;
}

/* ---- the VM: PIC, IOAPIC, PIT, clock ---- */

int arch_snapshot_vm_save(struct vm *vm, struct snap_writer *w, char *err,
			  size_t errlen)
{
	struct kvm_irqchip chip;
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		memset(&chip, 0, sizeof(chip));
		chip.chip_id = i; /* PIC master, PIC slave, IOAPIC */
		if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &chip) < 0)
			goto fail_chip;
		put_raw(w, &chip, sizeof(chip));
	}
	if (ioctl(vm->vm_fd, KVM_GET_PIT2, &pit) < 0) {
		snprintf(err, errlen, "KVM_GET_PIT2: %s", strerror(errno));
		return -errno;
	}
	put_raw(w, &pit, sizeof(pit));
	memset(&clock, 0, sizeof(clock));
	if (ioctl(vm->vm_fd, KVM_GET_CLOCK, &clock) < 0) {
		snprintf(err, errlen, "KVM_GET_CLOCK: %s", strerror(errno));
		return -errno;
	}
	put_raw(w, &clock, sizeof(clock));
	return 0;
fail_chip:
	snprintf(err, errlen, "KVM_GET_IRQCHIP %u: %s", i, strerror(errno));
	return -errno;
}

int arch_snapshot_vm_load(struct vm *vm, struct snap_reader *r, char *err,
			  size_t errlen)
{
	struct kvm_irqchip chip[3];
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 3 && !ret; i++)
		ret = get_raw(r, &chip[i], sizeof(chip[i]), "interrupt "
			      "controller", err, errlen);
	if (!ret)
		ret = get_raw(r, &pit, sizeof(pit), "PIT", err, errlen);
	if (!ret)
		ret = get_raw(r, &clock, sizeof(clock), "clock", err, errlen);
	if (ret)
		return ret;
	if (!snap_reader_done(r)) {
		snprintf(err, errlen, "VM state: %zu bytes left over",
			 snap_reader_left(r));
		return -EINVAL;
	}
	for (i = 0; i < 3; i++) {
		if (chip[i].chip_id != i) {
			snprintf(err, errlen, "interrupt controller %u: the "
				 "state is for chip %u", i, chip[i].chip_id);
			return -EINVAL;
		}
		if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &chip[i]) < 0) {
			snprintf(err, errlen, "KVM_SET_IRQCHIP %u: %s", i,
				 strerror(errno));
			return -errno;
		}
	}
	if (ioctl(vm->vm_fd, KVM_SET_PIT2, &pit) < 0) {
		snprintf(err, errlen, "KVM_SET_PIT2: %s", strerror(errno));
		return -errno;
	}
	/*
	 * The guest's clock goes on from the value saved: no jump over the
	 * time the snapshot lay on disk (kvmclock stays monotonic). With
	 * clock_realtime (Firecracker's), KVM adds the wall time that passed
	 * since the save instead, where the save had the host's realtime.
	 */
	if (vm->clock_realtime && !(clock.flags & KVM_CLOCK_REALTIME)) {
		snprintf(err, errlen, "clock_realtime: the snapshot has no "
			 "host wall time (its kernel did not give one)");
		return -EINVAL;
	}
	clock.flags &= vm->clock_realtime ? KVM_CLOCK_REALTIME : 0;
	if (ioctl(vm->vm_fd, KVM_SET_CLOCK, &clock) < 0) {
		snprintf(err, errlen, "KVM_SET_CLOCK: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- the CPU a restore must find: the guest-visible CPUID ---- */

/* Leaves whose bits a guest may have acted on (features, XSAVE). */
static const uint32_t cpuid_checked[] = {
	0x0, 0x1, 0x7, 0xd, 0x80000001, 0x80000007, 0x80000008,
};

static bool cpuid_is_checked(uint32_t fn)
{
	size_t i;

	for (i = 0; i < sizeof(cpuid_checked) / sizeof(cpuid_checked[0]); i++)
		if (cpuid_checked[i] == fn)
			return true;
	return false;
}

static struct kvm_cpuid2 *cpuid_get(struct vcpu *v, char *err,
				    size_t errlen)
{
	struct kvm_cpuid2 *c;
	unsigned int n;

	c = calloc(1, sizeof(*c) + SNAP_CPUID_MAX * sizeof(c->entries[0]));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/*
	 * Linux 6.1 tells userspace the count neither on success nor on
	 * E2BIG: the entries KVM did not fill keep a function no CPU has.
	 */
	memset(c->entries, 0xff, SNAP_CPUID_MAX * sizeof(c->entries[0]));
	c->nent = SNAP_CPUID_MAX;
	if (ioctl(v->fd, KVM_GET_CPUID2, c) < 0) {
		snprintf(err, errlen, "KVM_GET_CPUID2: %s", strerror(errno));
		free(c);
		return NULL;
	}
	for (n = 0; n < c->nent && c->entries[n].function != 0xffffffffu; n++)
		;
	c->nent = n;
	return c;
}

int arch_snapshot_cpu_save(struct vm *vm, struct snap_writer *w, char *err,
			   size_t errlen)
{
	struct kvm_cpuid2 *c = cpuid_get(&vm->vcpus[0], err, errlen);
	unsigned int i, n = 0;

	if (!c)
		return -EIO;
	for (i = 0; i < c->nent; i++)
		n += cpuid_is_checked(c->entries[i].function);
	snap_put_u32(w, n);
	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (!cpuid_is_checked(e->function))
			continue;
		snap_put_u32(w, e->function);
		snap_put_u32(w, e->index);
		snap_put_u32(w, e->eax);
		snap_put_u32(w, e->ebx);
		snap_put_u32(w, e->ecx);
		snap_put_u32(w, e->edx);
	}
	snap_put_u32(w, (uint32_t)xsave_size(vm));
	free(c);
	return 0;
}

static const struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid2 *c,
						 uint32_t fn, uint32_t index)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn &&
		    (c->entries[i].index == index ||
		     !(c->entries[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX)))
			return &c->entries[i];
	return NULL;
}

int arch_snapshot_cpu_check(struct vm *vm, struct snap_reader *r, char *err,
			    size_t errlen)
{
	struct kvm_cpuid2 *c;
	uint32_t n, i, xsave;
	int ret = 0;

	n = snap_get_u32(r);
	if (r->bad || n > SNAP_CPUID_MAX) {
		snprintf(err, errlen, "CPU features: %u CPUID entries", n);
		return -EINVAL;
	}
	c = cpuid_get(&vm->vcpus[0], err, errlen);
	if (!c)
		return -EIO;
	for (i = 0; i < n && !ret; i++) {
		uint32_t fn = snap_get_u32(r), index = snap_get_u32(r);
		uint32_t saved[4], *here;
		const struct kvm_cpuid_entry2 *e;
		static const char *const reg[] = { "eax", "ebx", "ecx",
						   "edx" };
		unsigned int k;

		for (k = 0; k < 4; k++)
			saved[k] = snap_get_u32(r);
		if (r->bad)
			break;
		e = cpuid_find(c, fn, index);
		if (!e) {
			snprintf(err, errlen, "the snapshot was taken on a "
				 "CPU with CPUID leaf 0x%x.%u; this host's "
				 "guests have none", fn, index);
			ret = -EINVAL;
			break;
		}
		here = (uint32_t *)&e->eax;
		for (k = 0; k < 4; k++) {
			/* Leaf 1 ebx holds the APIC ID and CLFLUSH size. */
			if (fn == 1 && k == 1)
				continue;
			if (saved[k] == here[k])
				continue;
			snprintf(err, errlen, "the snapshot was taken on "
				 "another CPU: CPUID leaf 0x%x.%u %s is "
				 "0x%08x there, 0x%08x here", fn, index,
				 reg[k], saved[k], here[k]);
			ret = -EINVAL;
			break;
		}
	}
	free(c);
	if (ret)
		return ret;
	xsave = snap_get_u32(r);
	if (r->bad || !snap_reader_done(r)) {
		snprintf(err, errlen, "CPU features: malformed section");
		return -EINVAL;
	}
	if ((int)xsave > xsave_size(vm)) {
		snprintf(err, errlen, "the snapshot's XSAVE area is %u bytes; "
			 "this host's is %d", xsave, xsave_size(vm));
		return -EINVAL;
	}
	return 0;
}
