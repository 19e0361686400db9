/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arm64 guest physical memory map and interrupt assignments. Below
 * 256 MiB it follows QEMU's "virt" machine (hw/arm/virt.c), whose map every
 * arm64 distribution kernel boots on: GICv3 at 0x08000000, PL011 at
 * 0x09000000, PL031 beside it, RAM from 1 GiB. [3 GiB, 4 GiB) is the same
 * device hole as on x86_64 (src/vmm/x86_64/layout.h), so the guest sees the
 * virtio-mmio slots, the PCI windows and ECAM, and the exit and boot-time
 * registers at the same addresses on both architectures: README's
 * `devmem 0xf0100000 8 N` and the root image's init need no per-arch case.
 * RAM that does not fit below the hole continues at 4 GiB.
 */
#ifndef MICROVM_ARM64_LAYOUT_H
#define MICROVM_ARM64_LAYOUT_H

/*
 * vCPUs the map has redistributors for. KVM's GICv3 takes up to 512
 * (VGIC_V3_MAX_CPUS); 64 keeps the redistributor region inside QEMU's
 * 0x080a0000..0x09000000 slot (123 would fit) with room to spare.
 */
#define ARM64_MAX_CPUS 64

/* GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3, KVM_VGIC_V3_ADDR_TYPE_*). */
#define ARM64_GICD_BASE 0x08000000ULL      /* distributor */
#define ARM64_GICD_SIZE 0x10000ULL         /* KVM_VGIC_V3_DIST_SIZE */
#define ARM64_GIC_ITS_BASE 0x08080000ULL   /* KVM_DEV_TYPE_ARM_VGIC_ITS */
#define ARM64_GIC_ITS_SIZE 0x20000ULL      /* KVM_VGIC_V3_ITS_SIZE */
#define ARM64_GICR_BASE 0x080a0000ULL      /* one region, vCPU 0 first */
#define ARM64_GICR_STRIDE 0x20000ULL       /* RD + SGI frames per vCPU */
#define ARM64_GICR_SIZE (ARM64_MAX_CPUS * ARM64_GICR_STRIDE)

/* PrimeCell devices (ARM DDI 0183 PL011, DDI 0224 PL031): 4 KiB each. */
#define ARM64_PL011_BASE 0x09000000ULL
#define ARM64_PL011_SIZE 0x1000ULL
#define ARM64_PL031_BASE 0x09010000ULL
#define ARM64_PL031_SIZE 0x1000ULL
#define ARM64_APB_CLOCK_HZ 24000000        /* the fixed clock both name */

/* RAM: 2 MiB-aligned, so the kernel can sit at its base (booting.rst). */
#define ARM64_RAM_BASE 0x40000000ULL
#define ARM64_MMIO_HOLE_START 0xc0000000ULL
#define ARM64_HIMEM_START 0x100000000ULL
#define ARM64_RAM_LOW_MAX (ARM64_MMIO_HOLE_START - ARM64_RAM_BASE)

/* The device hole, as on x86_64. */
#define ARM64_PCI_MMIO32_BASE 0xc0000000ULL /* 32-bit BAR window */
#define ARM64_PCI_MMIO32_SIZE 0x20000000ULL
#define ARM64_PCI_ECAM_BASE 0xe0000000ULL   /* bus 0 only: 32 devices */
#define ARM64_PCI_ECAM_SIZE 0x100000ULL
#define ARM64_VIRTIO_MMIO_BASE 0xf0000000ULL /* 4 KiB slot per device */
#define ARM64_VIRTIO_MMIO_SLOT 0x1000ULL
#define ARM64_VIRTIO_MMIO_MAX_SLOTS 32
#define ARM64_EXIT_MMIO_ADDR 0xf0100000ULL  /* src/devices/exitdev.h */
#define ARM64_EXIT_MMIO_SIZE 0x1000ULL
#define ARM64_BOOT_TIME_MMIO_ADDR 0xf0101000ULL
/*
 * The VM generation ID (devices/vmgenid.h): its 16 bytes at the start of
 * a page of its own (vm_add_device_page()), 64 KiB-aligned so that a host
 * with 64 KiB pages can map it too, outside the RAM the device tree's
 * memory node names.
 */
#define ARM64_VMGENID_ADDR 0xf0110000ULL

/*
 * 64-bit PCI window: QEMU virt's high MMIO, 512 GiB at 512 GiB. It ends at
 * 1 TiB, the 40-bit IPA space every KVM VM gets without
 * KVM_CAP_ARM_VM_IPA_SIZE, which also bounds RAM to what lies below it.
 */
#define ARM64_PCI_MMIO64_BASE 0x8000000000ULL
#define ARM64_PCI_MMIO64_SIZE 0x8000000000ULL
#define ARM64_RAM_MAX (ARM64_PCI_MMIO64_BASE - ARM64_HIMEM_START + \
		       ARM64_RAM_LOW_MAX)

/*
 * Interrupts. SPI n is GIC INTID 32 + n, written <0 n flags> in the device
 * tree and KVM_ARM_IRQ_TYPE_SPI with INTID 32 + n in KVM_IRQ_LINE. The
 * numbers of the UART and RTC are QEMU virt's; virtio-mmio slot i has SPI
 * ARM64_SPI_VIRTIO_MMIO_FIRST + i (QEMU also starts at 16). virtio-pci uses
 * MSI-X through the ITS and takes no SPI.
 */
#define ARM64_SPI_PL011 1
#define ARM64_SPI_PL031 2
#define ARM64_SPI_VMGENID 3  /* QEMU virt's first PCI INTx: ours has none */
#define ARM64_SPI_VIRTIO_MMIO_FIRST 16
#define ARM64_SPI_COUNT (ARM64_SPI_VIRTIO_MMIO_FIRST + \
			 ARM64_VIRTIO_MMIO_MAX_SLOTS)
/* KVM_DEV_ARM_VGIC_GRP_NR_IRQS: 32 private INTIDs + 64 SPIs (>= the 48
 * above); KVM wants a multiple of 32. */
#define ARM64_GIC_NR_IRQS 96

/*
 * Architected timer PPIs (PPI n is INTID 16 + n), as the Server Base
 * System Architecture assigns them and KVM's vtimer/ptimer default to.
 */
#define ARM64_PPI_TIMER_SEC 13   /* secure physical, CNTPS */
#define ARM64_PPI_TIMER_PHYS 14  /* non-secure physical, CNTP */
#define ARM64_PPI_TIMER_VIRT 11  /* virtual, CNTV */
#define ARM64_PPI_TIMER_HYP 10   /* EL2 physical, CNTHP */
#define ARM64_PPI_GIC_MAINT 9    /* vGIC maintenance (guest EL2 only) */

/*
 * The names shared code and the root image's tools use on both
 * architectures (src/vmm/x86_64/layout.h has the same ones).
 */
#define PCI_MMIO32_BASE ARM64_PCI_MMIO32_BASE
#define PCI_MMIO32_SIZE ARM64_PCI_MMIO32_SIZE
#define PCI_ECAM_BASE ARM64_PCI_ECAM_BASE
#define PCI_ECAM_SIZE ARM64_PCI_ECAM_SIZE
#define VIRTIO_MMIO_BASE ARM64_VIRTIO_MMIO_BASE
#define VIRTIO_MMIO_SLOT ARM64_VIRTIO_MMIO_SLOT
#define VIRTIO_MMIO_MAX_SLOTS ARM64_VIRTIO_MMIO_MAX_SLOTS
#define EXIT_MMIO_ADDR ARM64_EXIT_MMIO_ADDR
#define BOOT_TIME_MMIO_ADDR ARM64_BOOT_TIME_MMIO_ADDR

#endif
