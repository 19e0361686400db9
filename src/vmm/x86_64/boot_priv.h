/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the x86_64 loader's parts: boot.c (format detection,
 * command line, initrd, GDT, page tables), boot_bzimage.c and boot_elf.c.
 * Not for use outside src/vmm/x86_64/boot*.c.
 */
#ifndef MICROVM_X86_BOOT_PRIV_H
#define MICROVM_X86_BOOT_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "boot.h"

/* PVH tables inside the zero-page slot at LAYOUT_BOOT_PARAMS_ADDR. */
#define BOOT_PVH_MODLIST_OFF 0x40
#define BOOT_PVH_MEMMAP_OFF 0x80
#define BOOT_PVH_MEMMAP_MAX \
	((X86_ZERO_PAGE_SIZE - BOOT_PVH_MEMMAP_OFF) / \
	 sizeof(struct x86_pvh_memmap_entry))

#define BOOT_PAGE_SIZE 0x1000ULL

/* One load in progress. */
struct boot_ctx {
	struct guest_mem *gm;
	const struct x86_boot_cfg *cfg;
	uint64_t low_end; /* end of RAM below the MMIO hole */
	char *err;
	size_t errlen;
};

/* Write a message to c->err and return @rc. */
int boot_fail(struct boot_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, with "kernel <path>: " in front. */
int boot_kfail(struct boot_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "512M", "3G", "1.5M", "4000 bytes": for messages. */
void boot_fmt_size(uint64_t bytes, char *buf, size_t len);

/* Copy into guest memory; -EFAULT with a message when @gm lacks the range. */
int boot_write(struct boot_ctx *c, uint64_t gpa, const void *src,
	       uint64_t len, const char *what);
/* Zero a guest range, same failure. */
int boot_zero(struct boot_ctx *c, uint64_t gpa, uint64_t len,
	      const char *what);

/* -ENOSPC "--memory X is too small" unless [0, @end) is low RAM. */
int boot_check_ram(struct boot_ctx *c, uint64_t end);

/* Command line at LAYOUT_CMDLINE_ADDR; @max excludes the NUL. */
int boot_put_cmdline(struct boot_ctx *c, uint64_t max);

/*
 * Place the initrd page-aligned as high as possible below @limit (and low
 * RAM's end), at or above @floor. Sets *addr (0 with no initrd).
 */
int boot_put_initrd(struct boot_ctx *c, uint64_t floor, uint64_t limit,
		    uint64_t *addr);

/* GDT at LAYOUT_GDT_ADDR; fills the selector and segment fields of @st. */
int boot_put_gdt(struct boot_ctx *c, struct x86_boot_state *st,
		 uint16_t cs_sel);

/* Identity map of 0..4 GiB with 2 MiB pages at LAYOUT_PML4_ADDR. */
int boot_put_page_tables(struct boot_ctx *c);

int boot_bzimage_load(struct boot_ctx *c, struct x86_boot_state *st);
int boot_elf_load(struct boot_ctx *c, struct x86_boot_state *st);

#endif
