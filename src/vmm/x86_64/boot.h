/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86_64 kernel loader. It recognises a bzImage (Linux boot protocol,
 * 64-bit entry) or an ELF vmlinux with a PVH entry note, writes the kernel,
 * initrd, command line, zero page or PVH start_info, e820 map, GDT and
 * identity page tables into guest memory, and describes the boot vCPU's
 * initial registers. Pure code: no KVM, tests back guest_mem with malloc.
 */
#ifndef MICROVM_X86_BOOT_H
#define MICROVM_X86_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "boot_abi.h"

enum x86_boot_mode {
	X86_BOOT_LINUX64, /* bzImage, 64-bit boot protocol */
	X86_BOOT_PVH,     /* ELF vmlinux, 32-bit PVH entry */
};

struct x86_boot_cfg {
	const uint8_t *kernel;
	size_t kernel_len;
	const char *kernel_path; /* for messages only; may be NULL */
	const uint8_t *initrd;   /* NULL: no initrd */
	size_t initrd_len;
	const char *initrd_path; /* for messages only; may be NULL */
	const char *cmdline;     /* NULL or "" for none */
	uint64_t ram_size;       /* [0, min(ram, hole)) + [4G, 4G + rest) */
	uint64_t rsdp_gpa;       /* ACPI RSDP; 0 for none */
};

/*
 * One segment register as the GDT entry at its selector describes it, in
 * the shape of struct kvm_segment (limit in bytes, granularity applied).
 */
struct x86_boot_seg {
	uint64_t base;
	uint32_t limit;
	uint16_t selector;
	uint8_t type; /* descriptor type nibble, accessed bit set */
	uint8_t present, dpl, db, s, l, g;
};

/* Selectors of the GDT the loader writes at LAYOUT_GDT_ADDR. */
#define X86_BOOT_SEL_CODE32 0x08
#define X86_BOOT_SEL_CODE64 0x10 /* __BOOT_CS of the boot protocol */
#define X86_BOOT_SEL_DATA 0x18   /* __BOOT_DS */
#define X86_BOOT_GDT_ENTRIES 4

/* Control register and EFER bits the initial state uses. */
#define X86_CR0_PE 0x1ULL
#define X86_CR0_ET 0x10ULL
#define X86_CR0_PG 0x80000000ULL
#define X86_CR4_PAE 0x20ULL
#define X86_EFER_LME 0x100ULL
#define X86_EFER_LMA 0x400ULL
#define X86_RFLAGS_FIXED 0x2ULL

/* Identity page tables at LAYOUT_PML4_ADDR: PML4, PDPT, then 4 PDs. */
#define X86_BOOT_PT_PAGES 6
#define X86_BOOT_PT_MAPPED (4ULL << 30) /* 2 MiB pages over 0..4 GiB */

/* Initial boot vCPU state; the caller turns it into KVM regs/sregs. */
struct x86_boot_state {
	enum x86_boot_mode mode;
	uint64_t rip, rsp, rsi, rbx, rflags;
	uint64_t cr0, cr3, cr4, efer;
	uint64_t gdt_base;
	uint16_t gdt_limit;
	uint16_t cs_sel, ds_sel; /* ds_sel also for es, ss, fs, gs */
	bool cs_long;            /* CS.L: 64-bit code segment */
	struct x86_boot_seg cs, ds; /* the same, decoded from the GDT */
	/* What was loaded, for logs and tests. */
	uint16_t protocol;       /* bzImage boot protocol, e.g. 0x020f */
	uint64_t kernel_addr;    /* lowest guest address of the kernel */
	uint64_t kernel_end;     /* one past what the kernel may use */
	uint64_t initrd_addr;    /* 0 when there is no initrd */
};

/**
 * x86_boot_load() - load a kernel (and initrd) and describe how to enter it.
 * @gm: guest memory, laid out as @cfg->ram_size says (see x86_boot_e820())
 * @cfg: the images, command line, RAM size and RSDP address
 * @st: filled with the boot vCPU's initial state on success
 * @err: filled with one user-facing message naming the bad value on error
 * @errlen: size of @err
 *
 * Detects the format (bzImage with XLF_KERNEL_64, or ELF with a
 * XEN_ELFNOTE_PHYS32_ENTRY note), checks every offset and length read from
 * the untrusted images, then writes the kernel, initrd, command line at
 * LAYOUT_CMDLINE_ADDR, zero page or PVH start_info at
 * LAYOUT_BOOT_PARAMS_ADDR, e820 map, GDT at LAYOUT_GDT_ADDR and (bzImage)
 * identity page tables at LAYOUT_PML4_ADDR.
 *
 * Return: 0; -EINVAL for an unusable image, -ENOSPC when the kernel or
 * initrd does not fit in RAM, -E2BIG for an over-long command line, -EFAULT
 * when @gm does not back the RAM @cfg describes.
 * Context: setup only, before any vCPU runs.
 */
int x86_boot_load(struct guest_mem *gm, const struct x86_boot_cfg *cfg,
		  struct x86_boot_state *st, char *err, size_t errlen);

/**
 * x86_boot_e820() - the guest's e820 memory map for a RAM size.
 * @ram_size: total guest RAM in bytes
 * @out: entries, in ascending address order
 * @max: capacity of @out
 *
 * RAM below LAYOUT_EBDA_START, reserved up to 1 MiB (EBDA, ACPI tables,
 * BIOS area), RAM from 1 MiB to min(@ram_size, MMIO_HOLE_START), and the
 * rest of RAM from HIMEM_START.
 *
 * Return: number of entries written, or -ENOSPC when @max is too small.
 * Context: any.
 */
int x86_boot_e820(uint64_t ram_size, struct x86_e820_entry *out, int max);

#endif
