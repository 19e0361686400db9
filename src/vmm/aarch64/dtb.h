/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arm64 guest's device tree, built with libfdt from a plain description
 * of the machine: RAM, CPUs (by MPIDR), /chosen, GICv3 and its ITS, the
 * architected timer, PSCI, PL011, PL031, virtio-mmio slots, a generic ECAM
 * PCI host whose MSIs go to the ITS, and the guest exit register. Pure code,
 * no KVM: it builds and is tested on any host.
 *
 *	struct dtb_desc d;
 *
 *	dtb_desc_init(&d);               // the fixed map of layout.h
 *	d.ram[0] = ...; d.nr_ram = 1;    // then what varies per VM
 *	d.mpidr = mpidrs; d.nr_cpus = n; // read from KVM per vCPU
 *	ret = dtb_build(&d, buf, DTB_MAX_SIZE, &len, err, sizeof(err));
 *
 * The header is named dtb.h, not fdt.h: libfdt.h includes <fdt.h>, which a
 * -I of this directory would otherwise shadow.
 */
#ifndef MICROVM_ARM64_DTB_H
#define MICROVM_ARM64_DTB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Documentation/arch/arm64/booting.rst: "must not exceed 2 megabytes". */
#define DTB_MAX_SIZE (2u << 20)
#define DTB_MAX_RAM_RANGES 4
#define DTB_MAX_CPUS 512          /* KVM's VGIC_V3_MAX_CPUS */
#define DTB_MAX_VIRTIO_MMIO 32
/* MPIDR_EL1 affinity fields (Aff3 at 39:32, Aff2..0 at 23:0), the only
 * bits a cpu node's reg holds. */
#define DTB_MPIDR_AFF_MASK 0xff00ffffffULL

/* Phandles the tree gives the nodes others point at. */
enum dtb_phandle {
	DTB_PHANDLE_GIC = 1,
	DTB_PHANDLE_ITS,
	DTB_PHANDLE_APB_CLK,
};

struct dtb_range {
	uint64_t base;
	uint64_t size;
};

/* A device at @base, @size bytes, raising SPI @spi (INTID 32 + @spi). */
struct dtb_dev {
	uint64_t base;
	uint64_t size; /* 0: the machine has no such device */
	uint32_t spi;
};

/*
 * Generic ECAM host (Documentation/devicetree/bindings/pci/
 * host-generic-pci.yaml). Bus addresses equal CPU addresses in both
 * windows. MSIs: requester IDs [0, 256 * buses) map 1:1 to ITS device IDs.
 */
struct dtb_pci {
	uint64_t ecam_base;
	uint64_t ecam_size;    /* 1 MiB per bus, buses from bus_first */
	uint32_t bus_first;
	uint32_t bus_last;
	struct dtb_range mmio32; /* below 4 GiB; size 0: none */
	struct dtb_range mmio64; /* size 0: none */
};

struct dtb_desc {
	struct dtb_range ram[DTB_MAX_RAM_RANGES];
	unsigned int nr_ram;
	const uint64_t *mpidr;   /* MPIDR_EL1 of vCPU 0..nr_cpus-1 */
	unsigned int nr_cpus;
	const char *cmdline;     /* NULL: none */
	uint64_t initrd_start;
	uint64_t initrd_size;    /* 0: no initrd */

	struct dtb_range gicd;   /* GICv3 distributor */
	struct dtb_range gicr;   /* one redistributor region, all vCPUs */
	struct dtb_range its;    /* size 0: no ITS (then no PCI MSIs) */
	uint32_t gicr_stride;    /* bytes per vCPU in @gicr */
	/* PPIs of the secure, non-secure physical, virtual, hyp timers. */
	uint32_t timer_ppi[4];

	uint32_t apb_clock_hz;   /* the clock PL011 and PL031 name */
	struct dtb_dev uart;     /* PL011, the console; size 0: none */
	struct dtb_dev rtc;      /* PL031; size 0: none */
	/*
	 * The PL031's interrupt (its alarm) in the tree; false: none, and
	 * Linux's rtc-pl031 then offers no alarm (the wall clock only).
	 */
	bool rtc_irq;
	const struct dtb_dev *virtio_mmio;
	unsigned int nr_virtio_mmio;
	const struct dtb_pci *pci; /* NULL: no PCI host */
	struct dtb_range exit;   /* guest exit register; size 0: none */
	/*
	 * The VM generation ID (compatible "microsoft,vmgenid": its 16
	 * bytes, its edge SPI); size 0: none. dtb_desc_init() leaves it
	 * out: only a machine that maps its page names it.
	 */
	struct dtb_dev vmgenid;
};

/**
 * dtb_desc_init() - fill the parts of a description that the arm64 memory
 * map (layout.h) fixes: GIC, ITS, timers, PL011, PL031 and the exit
 * register. RAM, CPUs, /chosen, virtio-mmio and PCI stay empty.
 * @d: description to overwrite
 *
 * Context: any.
 */
void dtb_desc_init(struct dtb_desc *d);

/**
 * dtb_desc_init_pci() - the PCI host of the memory map (ECAM bus 0, both
 * windows), for @d->pci.
 * @pci: overwritten
 *
 * Context: any.
 */
void dtb_desc_init_pci(struct dtb_pci *pci);

/**
 * dtb_build() - write the flattened device tree @d describes.
 * @d: the machine
 * @buf: output buffer
 * @bufsize: its size; a tree that does not fit fails, nothing is written
 *	past @bufsize (at most DTB_MAX_SIZE of it is used)
 * @len: set to the size of the finished blob (fdt_totalsize())
 * @err: set to one message naming the bad value or the libfdt error
 * @errlen: size of @err
 *
 * Return: 0; -EINVAL for a description that is not a machine (no RAM or
 * CPUs, more CPUs than the redistributor region holds, a range that wraps,
 * an SPI out of range); -ENOSPC when the tree does not fit @bufsize; -EIO
 * for any other libfdt error.
 * Context: any; pure function of @d.
 */
int dtb_build(const struct dtb_desc *d, void *buf, size_t bufsize,
	      size_t *len, char *err, size_t errlen);

#endif
