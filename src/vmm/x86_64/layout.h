/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86_64 guest physical memory map and legacy resource assignments.
 * RAM starts at 0; what does not fit below MMIO_HOLE_START continues at
 * 4 GiB. Everything between MMIO_HOLE_START and 4 GiB is device space.
 */
#ifndef MICROVM_X86_LAYOUT_H
#define MICROVM_X86_LAYOUT_H

/* Low memory used by the boot path (all inside the first MiB). */
#define LAYOUT_GDT_ADDR 0x500ULL
#define LAYOUT_BOOT_PARAMS_ADDR 0x7000ULL  /* zero page / PVH start_info */
#define LAYOUT_PML4_ADDR 0x9000ULL         /* PML4, PDPT, then 4 PDs */
#define LAYOUT_CMDLINE_ADDR 0x20000ULL
#define LAYOUT_CMDLINE_MAX 0x10000ULL      /* incl. terminating NUL */
#define LAYOUT_EBDA_START 0x9fc00ULL       /* e820: RAM below, reserved */
#define LAYOUT_ACPI_ADDR 0xe0000ULL        /* RSDP first, then tables */
#define LAYOUT_ACPI_SIZE 0xf000ULL         /* up to the VM generation ID */
#define LAYOUT_VMGENID_ADDR 0xef000ULL     /* 16-byte VM generation ID */
#define LAYOUT_VMGENID_SIZE 16
#define LAYOUT_MPTABLE_ADDR 0xf0000ULL     /* MP floating pointer, table */
#define LAYOUT_MPTABLE_SIZE 0xfff0ULL      /* up to the reset stub */
#define LAYOUT_RESET_VECTOR 0xffff0ULL     /* f000:fff0, reset stub */
#define LAYOUT_HIMEM_START 0x100000ULL     /* kernel loaded here */
#define LAYOUT_BOOT_STACK 0x8ff0ULL

/* The 32-bit device hole. */
#define MMIO_HOLE_START 0xc0000000ULL
#define PCI_MMIO32_BASE 0xc0000000ULL      /* BAR window */
#define PCI_MMIO32_SIZE 0x20000000ULL
#define PCI_ECAM_BASE 0xe0000000ULL        /* bus 0 only */
#define PCI_ECAM_SIZE 0x100000ULL
#define VIRTIO_MMIO_BASE 0xf0000000ULL     /* 4 KiB slot per device */
#define VIRTIO_MMIO_SLOT 0x1000ULL
#define VIRTIO_MMIO_MAX_SLOTS 32
#define EXIT_MMIO_ADDR 0xf0100000ULL       /* 1-byte guest exit register */
#define BOOT_TIME_MMIO_ADDR 0xf0101000ULL  /* 1-byte boot-time mark register */
#define IOAPIC_ADDR 0xfec00000ULL
#define LAPIC_ADDR 0xfee00000ULL
#define HIMEM_START 0x100000000ULL

/* I/O ports. */
#define PORT_COM1 0x3f8
#define PORT_I8042_DATA 0x60
#define PORT_I8042_CMD 0x64
#define PORT_ACPI_SLEEP_CTL 0x600          /* FADT X_SLEEP_CONTROL_REG */
#define PORT_ACPI_SLEEP_STS 0x601          /* FADT X_SLEEP_STATUS_REG */
#define PORT_ACPI_RESET 0x602              /* FADT RESET_REG */
#define ACPI_RESET_VALUE 0x1
#define ACPI_S5_SLP_TYP 5                  /* _S5 package value */
#define PORT_EXIT 0xf4                     /* 1-byte guest exit port */
#define PORT_BOOT_TIME 0xf8                /* 1-byte boot-time mark port */
#define PORT_PVPANIC 0x505                 /* 1-byte pvpanic event port (QEMU's) */
#define PORT_PCI_CONFIG_ADDR 0xcf8
#define PORT_PCI_CONFIG_DATA 0xcfc

/* Interrupts: GSIs on the in-kernel IOAPIC (24 pins). */
#define IRQ_COM1 4
#define IRQ_I8042_KBD 1                    /* the keyboard's ISA IRQ */
#define IRQ_RTC 8                          /* the CMOS RTC's ISA IRQ */
#define IOAPIC_NR_PINS 24
#define IOAPIC_ID 0                        /* in the MADT and MP table */
/*
 * virtio-mmio slots, one GSI each (edge-triggered, active high): slots
 * 0-7 on GSIs 16..23, then slots 8.. on the ISA lines no platform device
 * uses, in the order IRQ_VIRTIO_MMIO_ISA lists them: never 0 (the PIT,
 * on pin 2), 1 (i8042), 2, 4 (COM1) or 8 (RTC). arch_mmio_slot() hands
 * them out.
 */
#define IRQ_VIRTIO_MMIO_FIRST 16
#define IRQ_VIRTIO_MMIO_COUNT 8
#define IRQ_VIRTIO_MMIO_ISA { 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 3 }
#define IRQ_VIRTIO_MMIO_ISA_COUNT 11
#define X86_MMIO_SLOTS (IRQ_VIRTIO_MMIO_COUNT + IRQ_VIRTIO_MMIO_ISA_COUNT)

#endif
