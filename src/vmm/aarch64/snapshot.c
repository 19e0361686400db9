// SPDX-License-Identifier: Apache-2.0
/*
 * arm64 snapshot state, through KVM's one-register and device-attribute
 * interfaces (Documentation/virt/kvm/api.rst, devices/arm-vgic-v3.rst,
 * devices/arm-vgic-its.rst):
 *   CPU   the ID registers a guest reads (MIDR_EL1, ID_AA64*_EL1) from
 *         vCPU 0 and KVM's preferred target: a restore where this host
 *         gives other values is refused, naming the register.
 *   VM    the GICv3: distributor registers of every SPI and their line
 *         levels; per vCPU its redistributor (LPI tables' bases and
 *         enable, the SGI/PPI frame) and its CPU interface (ICC_*
 *         registers KVM has); the ITS registers. The LPI pending tables
 *         and the ITS's device, collection and translation tables are
 *         guest RAM: KVM writes them there here, before RAM is saved,
 *         and reads them back on restore.
 *   vCPU  every register KVM_GET_REG_LIST names (core, FP/SIMD, system,
 *         timer with its counter, firmware pseudo-registers), its MP
 *         state (a secondary powered off or not) and pending events.
 * Every list is rebuilt on restore and read back in the same order, so
 * a state file only supplies values: the registers touched are always
 * the ones this code names.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cpu.h"
#include "layout.h"
#include "snapshot/snap.h"
#include "vgic.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

const uint32_t arch_snap_id = SNAP_ARCH_AARCH64;

/* Registers one vCPU may list: 6.1 lists about 250 without SVE. */
#define SNAP_ARM64_MAX_REGS 2048
/* The widest register without SVE is 128 bits; SVE's are 2048. */
#define SNAP_ARM64_MAX_REG_BYTES 256

/* ---- one-register access ---- */

static unsigned int reg_bytes(uint64_t id)
{
	return 1u << ((id & KVM_REG_SIZE_MASK) >> KVM_REG_SIZE_SHIFT);
}

/* ---- CPU: what the guest can see of the host's CPU ---- */

#define ID_REG(op2, crm) ARM64_SYS_REG(3, 0, 0, crm, op2)

static const struct {
	const char *name;
	uint64_t id;
} id_regs[] = {
	{ "MIDR_EL1", ID_REG(0, 0) },
	{ "ID_AA64PFR0_EL1", ID_REG(0, 4) },
	{ "ID_AA64PFR1_EL1", ID_REG(1, 4) },
	{ "ID_AA64ZFR0_EL1", ID_REG(4, 4) },
	{ "ID_AA64DFR0_EL1", ID_REG(0, 5) },
	{ "ID_AA64DFR1_EL1", ID_REG(1, 5) },
	{ "ID_AA64ISAR0_EL1", ID_REG(0, 6) },
	{ "ID_AA64ISAR1_EL1", ID_REG(1, 6) },
	{ "ID_AA64ISAR2_EL1", ID_REG(2, 6) },
	{ "ID_AA64MMFR0_EL1", ID_REG(0, 7) },
	{ "ID_AA64MMFR1_EL1", ID_REG(1, 7) },
	{ "ID_AA64MMFR2_EL1", ID_REG(2, 7) },
};
#define NR_ID_REGS (sizeof(id_regs) / sizeof(id_regs[0]))

static uint32_t preferred_target(struct vm *vm)
{
	struct kvm_vcpu_init init;

	return arm64_preferred_target(vm, &init) ? UINT32_MAX : init.target;
}

int arch_snapshot_cpu_save(struct vm *vm, struct snap_writer *w, char *err,
			   size_t errlen)
{
	unsigned int i;

	if (!vm->ncpus || !vm->vcpus) {
		snprintf(err, errlen, "no vCPU to read the CPU's ID from");
		return -EINVAL;
	}
	snap_put_u32(w, preferred_target(vm));
	snap_put_u32(w, NR_ID_REGS);
	for (i = 0; i < NR_ID_REGS; i++) {
		uint64_t val = 0;
		bool have = !arm64_one_reg(&vm->vcpus[0], id_regs[i].id, &val,
					   false);

		snap_put_u8(w, have);
		snap_put_u64(w, have ? val : 0);
	}
	return 0;
}

int arch_snapshot_cpu_check(struct vm *vm, struct snap_reader *r, char *err,
			    size_t errlen)
{
	uint32_t target = snap_get_u32(r), n = snap_get_u32(r), here;
	unsigned int i;

	if (r->bad || n != NR_ID_REGS) {
		snprintf(err, errlen, "malformed CPU section");
		return -EINVAL;
	}
	here = preferred_target(vm);
	if (target != here) {
		snprintf(err, errlen, "the snapshot's host was KVM CPU target "
			 "%u; this one is %u: another CPU model", target, here);
		return -EINVAL;
	}
	for (i = 0; i < NR_ID_REGS; i++) {
		bool had = snap_get_u8(r) != 0, have;
		uint64_t was = snap_get_u64(r), is = 0;

		if (r->bad)
			break;
		have = !arm64_one_reg(&vm->vcpus[0], id_regs[i].id, &is,
				      false);
		if (had != have || was != is) {
			snprintf(err, errlen, "the snapshot's host gave guests "
				 "%s %#llx%s; this one gives %#llx%s: another "
				 "CPU (or KVM) with other features",
				 id_regs[i].name, (unsigned long long)was,
				 had ? "" : " (unreadable)",
				 (unsigned long long)is,
				 have ? "" : " (unreadable)");
			return -EINVAL;
		}
	}
	if (r->bad || !snap_reader_done(r)) {
		snprintf(err, errlen, "malformed CPU section");
		return -EINVAL;
	}
	return 0;
}

/* ---- VM: the GICv3 and its ITS ---- */

/* Distributor and redistributor offsets (GICv3 architecture). */
#define GICD_CTLR 0x0000
#define GICD_IGROUPR 0x0080
#define GICD_ISENABLER 0x0100
#define GICD_ISPENDR 0x0200
#define GICD_ISACTIVER 0x0300
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR 0x0c00
#define GICD_IROUTER 0x6000
#define GICR_CTLR 0x0000
#define GICR_PROPBASER 0x0070
#define GICR_PENDBASER 0x0078
#define GICR_SGI 0x10000 /* the SGI and PPI frame */
#define GITS_CTLR 0x0000
#define GITS_IIDR 0x0004
#define GITS_CBASER 0x0080
#define GITS_CWRITER 0x0088
#define GITS_CREADR 0x0090
#define GITS_BASER 0x0100
#define GITS_NR_BASER 8

#define SPI_FIRST 32

/* One GIC attribute: its group and attr word, 32 or 64 bits wide. */
struct gic_reg {
	uint32_t group;
	uint64_t attr;
	bool wide;
};

/* The redistributor's and CPU interface's "mpidr" field: Aff3.2.1.0. */
static uint64_t gic_mpidr(uint64_t mpidr)
{
	return ((mpidr >> 32 & 0xff) << 24 | (mpidr & 0xffffff))
	       << KVM_DEV_ARM_VGIC_V3_MPIDR_SHIFT;
}

#define ICC(op1, crn, crm, op2)                                              \
	(ARM64_SYS_REG(3, op1, crn, crm, op2) &                              \
	 KVM_DEV_ARM_VGIC_SYSREG_INSTR_MASK)

/*
 * The CPU interface in restore order: SRE and CTLR (which fix the
 * priority and preemption bits) before what they size.
 */
static const uint64_t icc_regs[] = {
	ICC(0, 12, 12, 5), /* ICC_SRE_EL1 */
	ICC(0, 12, 12, 4), /* ICC_CTLR_EL1 */
	ICC(0, 12, 12, 6), /* ICC_IGRPEN0_EL1 */
	ICC(0, 12, 12, 7), /* ICC_IGRPEN1_EL1 */
	ICC(0, 4, 6, 0),   /* ICC_PMR_EL1 */
	ICC(0, 12, 8, 3),  /* ICC_BPR0_EL1 */
	ICC(0, 12, 12, 3), /* ICC_BPR1_EL1 */
	ICC(0, 12, 8, 4), ICC(0, 12, 8, 5), ICC(0, 12, 8, 6),
	ICC(0, 12, 8, 7),  /* ICC_AP0R0-3_EL1 */
	ICC(0, 12, 9, 0), ICC(0, 12, 9, 1), ICC(0, 12, 9, 2),
	ICC(0, 12, 9, 3),  /* ICC_AP1R0-3_EL1 */
};
#define NR_ICC (sizeof(icc_regs) / sizeof(icc_regs[0]))

/* The SGI/PPI frame of a redistributor, 32-bit registers. */
static const uint32_t gicr_sgi_regs[] = {
	GICR_SGI + GICD_IGROUPR,
	GICR_SGI + GICD_ICFGR, GICR_SGI + GICD_ICFGR + 4,
	GICR_SGI + GICD_IPRIORITYR + 0x00, GICR_SGI + GICD_IPRIORITYR + 0x04,
	GICR_SGI + GICD_IPRIORITYR + 0x08, GICR_SGI + GICD_IPRIORITYR + 0x0c,
	GICR_SGI + GICD_IPRIORITYR + 0x10, GICR_SGI + GICD_IPRIORITYR + 0x14,
	GICR_SGI + GICD_IPRIORITYR + 0x18, GICR_SGI + GICD_IPRIORITYR + 0x1c,
	GICR_SGI + GICD_ISENABLER, GICR_SGI + GICD_ISPENDR,
	GICR_SGI + GICD_ISACTIVER,
};
#define NR_GICR_SGI (sizeof(gicr_sgi_regs) / sizeof(gicr_sgi_regs[0]))

/*
 * Every GIC register the state holds, in restore order, for @ncpus vCPUs
 * of MPIDRs @mpidr. Configuration before state: groups, routes, trigger
 * modes and priorities, then line levels, pending, active and enabled
 * bits; a redistributor's LPI table bases before its enable bit.
 * Return: how many (at most @max).
 */
static size_t gic_regs(struct gic_reg *out, size_t max, const uint64_t *mpidr,
		       unsigned int ncpus)
{
	const uint32_t per_irq_bit[] = { GICD_ISPENDR, GICD_ISACTIVER,
					 GICD_ISENABLER };
	size_t n = 0;
	unsigned int c, i, k;

#define PUT(g, a, w)                                                         \
	do {                                                                 \
		if (n < max)                                                 \
			out[n] = (struct gic_reg){ (g), (a), (w) };          \
		n++;                                                         \
	} while (0)

	PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_CTLR, false);
	for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i += 32)
		PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IGROUPR + i / 8,
		    false);
	for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i++) {
		PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IROUTER + i * 8,
		    false);
		PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IROUTER + i * 8 + 4,
		    false);
	}
	for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i += 16)
		PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_ICFGR + i / 4, false);
	for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i += 4)
		PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IPRIORITYR + i, false);
	for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i += 32)
		PUT(KVM_DEV_ARM_VGIC_GRP_LEVEL_INFO,
		    (uint64_t)VGIC_LEVEL_INFO_LINE_LEVEL
				    << KVM_DEV_ARM_VGIC_LINE_LEVEL_INFO_SHIFT |
			    i,
		    false);
	for (k = 0; k < 3; k++)
		for (i = SPI_FIRST; i < ARM64_GIC_NR_IRQS; i += 32)
			PUT(KVM_DEV_ARM_VGIC_GRP_DIST_REGS,
			    per_irq_bit[k] + i / 8, false);
	for (c = 0; c < ncpus; c++) {
		uint64_t m = gic_mpidr(mpidr[c]);

		PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS, m | GICR_PROPBASER,
		    false);
		PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS, m | (GICR_PROPBASER + 4),
		    false);
		PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS, m | GICR_PENDBASER,
		    false);
		PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS, m | (GICR_PENDBASER + 4),
		    false);
		for (i = 0; i < NR_GICR_SGI; i++)
			PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS,
			    m | gicr_sgi_regs[i], false);
		PUT(KVM_DEV_ARM_VGIC_GRP_REDIST_REGS, m | GICR_CTLR, false);
		for (i = 0; i < NR_ICC; i++)
			PUT(KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS, m | icc_regs[i],
			    true);
	}
#undef PUT
	return n;
}

/* The ITS registers in restore order; GITS_CTLR (the enable) last. */
static const uint64_t its_regs[] = {
	GITS_IIDR,	   GITS_CBASER,	       GITS_CREADR,
	GITS_CWRITER,	   GITS_BASER,	       GITS_BASER + 0x08,
	GITS_BASER + 0x10, GITS_BASER + 0x18,  GITS_BASER + 0x20,
	GITS_BASER + 0x28, GITS_BASER + 0x30,  GITS_BASER + 0x38,
};
#define NR_ITS (sizeof(its_regs) / sizeof(its_regs[0]))

static bool dev_has_attr(int fd, uint32_t group, uint64_t attr)
{
	struct kvm_device_attr a = { .group = group, .attr = attr };

	return ioctl(fd, KVM_HAS_DEVICE_ATTR, &a) == 0;
}

/* The vCPUs' MPIDRs and the list of GIC registers; free() *@regs. */
static int gic_list(struct vm *vm, struct gic_reg **regs, size_t *n,
		    char *err, size_t errlen)
{
	uint64_t *mpidr = calloc(vm->ncpus ? vm->ncpus : 1, sizeof(*mpidr));
	size_t need;
	int ret;

	*regs = NULL;
	if (!mpidr)
		goto oom;
	ret = arm64_cpu_mpidrs(vm, mpidr, err, errlen);
	if (ret) {
		free(mpidr);
		return ret;
	}
	need = gic_regs(NULL, 0, mpidr, vm->ncpus);
	*regs = calloc(need, sizeof(**regs));
	if (!*regs) {
		free(mpidr);
		goto oom;
	}
	*n = gic_regs(*regs, need, mpidr, vm->ncpus);
	free(mpidr);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static const char *gic_group_name(uint32_t group)
{
	switch (group) {
	case KVM_DEV_ARM_VGIC_GRP_DIST_REGS:
		return "distributor register";
	case KVM_DEV_ARM_VGIC_GRP_REDIST_REGS:
		return "redistributor register";
	case KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS:
		return "CPU interface register";
	case KVM_DEV_ARM_VGIC_GRP_LEVEL_INFO:
		return "line levels";
	default:
		return "register";
	}
}

int arch_snapshot_vm_save(struct vm *vm, struct snap_writer *w, char *err,
			  size_t errlen)
{
	int gic = vm->dev_fds[ARM64_VGIC_FD];
	bool its = arm64_vgic_has_its(vm);
	struct gic_reg *regs;
	size_t n, i;
	int ret;

	/* LPIs pending into their tables, the ITS's tables into RAM. */
	ret = arm64_dev_attr(gic, KVM_DEV_ARM_VGIC_GRP_CTRL,
			     KVM_DEV_ARM_VGIC_SAVE_PENDING_TABLES, NULL, true);
	if (ret) {
		snprintf(err, errlen, "GICv3: saving the LPI pending tables: "
			 "%s", strerror(-ret));
		return ret;
	}
	if (its) {
		ret = arm64_dev_attr(vm->dev_fds[ARM64_ITS_FD],
				     KVM_DEV_ARM_VGIC_GRP_CTRL,
				     KVM_DEV_ARM_ITS_SAVE_TABLES, NULL, true);
		if (ret) {
			snprintf(err, errlen, "ITS: saving its tables: %s",
				 strerror(-ret));
			return ret;
		}
	}
	ret = gic_list(vm, &regs, &n, err, errlen);
	if (ret)
		return ret;
	snap_put_u32(w, ARM64_GIC_NR_IRQS);
	snap_put_u32(w, (uint32_t)n);
	for (i = 0; i < n; i++) {
		uint64_t v64 = 0;
		uint32_t v32 = 0;
		bool have;

		if (regs[i].wide) {
			have = dev_has_attr(gic, regs[i].group, regs[i].attr) &&
			       !arm64_dev_attr(gic, regs[i].group,
					       regs[i].attr, &v64, false);
		} else {
			ret = arm64_dev_attr(gic, regs[i].group, regs[i].attr,
					     &v32, false);
			if (ret) {
				snprintf(err, errlen,
					 "GICv3: reading %s %#llx: %s",
					 gic_group_name(regs[i].group),
					 (unsigned long long)regs[i].attr,
					 strerror(-ret));
				free(regs);
				return ret;
			}
			have = true;
			v64 = v32;
		}
		snap_put_u8(w, have);
		snap_put_u64(w, v64);
	}
	free(regs);
	snap_put_u8(w, its);
	if (!its)
		return 0;
	for (i = 0; i <= NR_ITS; i++) {
		uint64_t attr = i < NR_ITS ? its_regs[i] : GITS_CTLR, val = 0;

		ret = arm64_dev_attr(vm->dev_fds[ARM64_ITS_FD],
				     KVM_DEV_ARM_VGIC_GRP_ITS_REGS, attr, &val,
				     false);
		if (ret) {
			snprintf(err, errlen, "ITS: reading register %#llx: %s",
				 (unsigned long long)attr, strerror(-ret));
			return ret;
		}
		snap_put_u64(w, val);
	}
	return 0;
}

int arch_snapshot_vm_load(struct vm *vm, struct snap_reader *r, char *err,
			  size_t errlen)
{
	int gic = vm->dev_fds[ARM64_VGIC_FD];
	uint32_t nr_irqs = snap_get_u32(r), count = snap_get_u32(r);
	struct gic_reg *regs;
	bool its_saved;
	size_t n, i;
	int ret;

	/* The virtual counter goes on from its saved value (the vCPUs'
	 * KVM_REG_ARM_TIMER_CNT); moving it on by the wall time is x86's. */
	if (vm->clock_realtime) {
		snprintf(err, errlen, "clock_realtime is not supported on "
			 "arm64: the guest's counter goes on from the "
			 "snapshot's value");
		return -EOPNOTSUPP;
	}
	if (r->bad || nr_irqs != ARM64_GIC_NR_IRQS) {
		snprintf(err, errlen, "the snapshot's GIC has %u interrupts; "
			 "this microvm's %u", nr_irqs, ARM64_GIC_NR_IRQS);
		return -EINVAL;
	}
	ret = gic_list(vm, &regs, &n, err, errlen);
	if (ret)
		return ret;
	if (count != n) {
		snprintf(err, errlen, "the snapshot holds %u GIC registers; "
			 "this machine has %zu", count, n);
		free(regs);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		bool have = snap_get_u8(r) != 0;
		uint64_t v64 = snap_get_u64(r);
		uint32_t v32 = (uint32_t)v64;

		if (r->bad)
			break;
		if (!have)
			continue;
		ret = arm64_dev_attr(gic, regs[i].group, regs[i].attr,
				     regs[i].wide ? (void *)&v64 : (void *)&v32,
				     true);
		if (ret) {
			snprintf(err, errlen, "GICv3: setting %s %#llx to "
				 "%#llx: %s", gic_group_name(regs[i].group),
				 (unsigned long long)regs[i].attr,
				 (unsigned long long)v64, strerror(-ret));
			free(regs);
			return ret;
		}
	}
	free(regs);
	its_saved = snap_get_u8(r) != 0;
	if (r->bad)
		goto malformed;
	if (its_saved != arm64_vgic_has_its(vm)) {
		snprintf(err, errlen, "the snapshot's machine had %s ITS; this "
			 "one has %s", its_saved ? "an" : "no",
			 its_saved ? "none" : "one");
		return -EINVAL;
	}
	if (arm64_vgic_has_its(vm)) {
		int its = vm->dev_fds[ARM64_ITS_FD];
		uint64_t vals[NR_ITS + 1];

		for (i = 0; i <= NR_ITS; i++)
			vals[i] = snap_get_u64(r);
		if (r->bad || !snap_reader_done(r))
			goto malformed;
		for (i = 0; i < NR_ITS; i++) {
			ret = arm64_dev_attr(its, KVM_DEV_ARM_VGIC_GRP_ITS_REGS,
					     its_regs[i], &vals[i], true);
			if (ret) {
				snprintf(err, errlen, "ITS: setting register "
					 "%#llx: %s",
					 (unsigned long long)its_regs[i],
					 strerror(-ret));
				return ret;
			}
		}
		/* Its tables back from guest RAM, then the enable bit. */
		ret = arm64_dev_attr(its, KVM_DEV_ARM_VGIC_GRP_CTRL,
				     KVM_DEV_ARM_ITS_RESTORE_TABLES, NULL,
				     true);
		if (!ret)
			ret = arm64_dev_attr(its, KVM_DEV_ARM_VGIC_GRP_ITS_REGS,
					     GITS_CTLR, &vals[NR_ITS], true);
		if (ret) {
			snprintf(err, errlen, "ITS: restoring its tables from "
				 "guest RAM: %s", strerror(-ret));
			return ret;
		}
		return 0;
	}
	if (!snap_reader_done(r))
		goto malformed;
	return 0;
malformed:
	snprintf(err, errlen, "malformed VM section");
	return -EINVAL;
}

/* ---- one vCPU ---- */

/* KVM_GET_REG_LIST, sized by a first call; free() the list. */
static struct kvm_reg_list *reg_list(struct vcpu *v, char *err,
				     size_t errlen)
{
	struct kvm_reg_list probe = { .n = 0 }, *l;

	if (ioctl(v->fd, KVM_GET_REG_LIST, &probe) == 0 || errno != E2BIG ||
	    probe.n > SNAP_ARM64_MAX_REGS) {
		snprintf(err, errlen, "KVM_GET_REG_LIST: %s",
			 probe.n > SNAP_ARM64_MAX_REGS ? "too many registers" :
							 strerror(errno));
		return NULL;
	}
	l = calloc(1, sizeof(*l) + probe.n * sizeof(l->reg[0]));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->n = probe.n;
	if (ioctl(v->fd, KVM_GET_REG_LIST, l) < 0) {
		snprintf(err, errlen, "KVM_GET_REG_LIST: %s", strerror(errno));
		free(l);
		return NULL;
	}
	return l;
}

int arch_snapshot_vcpu_save(struct vcpu *v, struct snap_writer *w,
			    char *err, size_t errlen)
{
	struct kvm_reg_list *l = reg_list(v, err, errlen);
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;
	uint8_t val[SNAP_ARM64_MAX_REG_BYTES];
	uint64_t i;
	int ret;

	if (!l)
		return -EIO;
	snap_put_u32(w, v->index);
	snap_put_u32(w, (uint32_t)l->n);
	for (i = 0; i < l->n; i++) {
		uint64_t id = l->reg[i];
		unsigned int len = reg_bytes(id);

		if (len > sizeof(val)) {
			snprintf(err, errlen, "register %#llx is %u bytes",
				 (unsigned long long)id, len);
			free(l);
			return -EINVAL;
		}
		ret = arm64_one_reg(v, id, val, false);
		if (ret) {
			snprintf(err, errlen, "reading register %#llx: %s",
				 (unsigned long long)id, strerror(-ret));
			free(l);
			return ret;
		}
		snap_put_u64(w, id);
		snap_put_bytes(w, val, len);
	}
	free(l);
	if (ioctl(v->fd, KVM_GET_MP_STATE, &mp) < 0 ||
	    ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0) {
		ret = -errno;
		snprintf(err, errlen, "reading MP state and events: %s",
			 strerror(-ret));
		return ret;
	}
	snap_put_u32(w, mp.mp_state);
	snap_put_bytes(w, &ev, sizeof(ev));
	return 0;
}

int arch_snapshot_vcpu_load(struct vcpu *v, struct snap_reader *r,
			    char *err, size_t errlen)
{
	struct kvm_reg_list *l = reg_list(v, err, errlen);
	uint32_t index, n, i;
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;
	int ret;

	if (!l)
		return -EIO;
	index = snap_get_u32(r);
	n = snap_get_u32(r);
	if (r->bad || index != v->index || n != l->n) {
		snprintf(err, errlen, "the snapshot holds %u registers for "
			 "vCPU %u; KVM lists %llu here", n, index,
			 (unsigned long long)l->n);
		free(l);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		uint64_t id = snap_get_u64(r);
		unsigned int len = reg_bytes(id);
		const uint8_t *p;
		uint8_t val[SNAP_ARM64_MAX_REG_BYTES];

		/* The same registers in the same order as KVM lists them. */
		if (r->bad || id != l->reg[i] || len > sizeof(val)) {
			snprintf(err, errlen, "register %u: the snapshot has "
				 "%#llx where KVM lists %#llx", i,
				 (unsigned long long)id,
				 (unsigned long long)l->reg[i]);
			free(l);
			return -EINVAL;
		}
		p = snap_get_ref(r, len);
		if (!p)
			break;
		memcpy(val, p, len);
		ret = arm64_one_reg(v, id, val, true);
		if (ret) {
			snprintf(err, errlen, "setting register %#llx: %s",
				 (unsigned long long)id, strerror(-ret));
			free(l);
			return ret;
		}
	}
	free(l);
	mp.mp_state = snap_get_u32(r);
	snap_get_bytes(r, &ev, sizeof(ev));
	if (r->bad || !snap_reader_done(r)) {
		snprintf(err, errlen, "malformed vCPU section");
		return -EINVAL;
	}
	if (ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0 ||
	    ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0) {
		ret = -errno;
		snprintf(err, errlen, "setting MP state %u and events: %s",
			 mp.mp_state, strerror(-ret));
		return ret;
	}
	return 0;
}
