// SPDX-License-Identifier: Apache-2.0
/*
 * bzImage loading through the Linux x86 boot protocol's 64-bit entry
 * (Documentation/arch/x86/boot.rst): validate the setup header, copy the
 * protected-mode kernel to 1 MiB, fill the zero page, and start the vCPU
 * in long mode with identity paging at the kernel's startup_64.
 */
#include "boot_priv.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "layout.h"

#define BZ_SECTOR 512
#define BZ_DEFAULT_SETUP_SECTS 4
#define BZ_ENTRY64_OFFSET 0x200   /* startup_64 from the load address */
#define BZ_HEAP_END 0xfe00        /* heap_end_ptr, relative to setup */
#define BZ_LOADER_UNDEFINED 0xff  /* type_of_loader: no assigned id */
#define BZ_PROTO(maj, min) ((maj) << 8 | (min))
#define BZ_HDR_FIELD_END(f) \
	(X86_SETUP_HDR_OFF + offsetof(struct x86_setup_header, f) + \
	 sizeof(((struct x86_setup_header *)0)->f))

/* What the header says about where the kernel goes. */
struct bz_image {
	struct x86_setup_header h;
	size_t hdr_end;     /* file offset one past the setup header */
	size_t setup_len;   /* real-mode part, skipped */
	size_t body_len;    /* protected-mode kernel, copied to load_addr */
	uint64_t load_addr;
	uint64_t end;       /* one past the memory the kernel may claim */
};

static int bz_check_header(struct boot_ctx *c, struct bz_image *bz)
{
	const uint8_t *k = c->cfg->kernel;
	size_t n = c->cfg->kernel_len;
	struct x86_setup_header *h = &bz->h;
	size_t copy;

	/* The jump at 0x200 skips the header: its target ends it. */
	bz->hdr_end = 0x202 + k[0x201];
	if (bz->hdr_end > n)
		return boot_kfail(c, -EINVAL,
				  "truncated (setup header ends at 0x%zx, file has %zu bytes)",
				  bz->hdr_end, n);
	copy = bz->hdr_end < X86_SETUP_HDR_OFF + sizeof(*h) ?
		bz->hdr_end - X86_SETUP_HDR_OFF : sizeof(*h);
	memset(h, 0, sizeof(*h));
	memcpy(h, k + X86_SETUP_HDR_OFF, copy);
	if (h->version < BZ_PROTO(2, 6))
		return boot_kfail(c, -EINVAL,
				  "boot protocol %u.%02u too old (need 2.06 or newer)",
				  h->version >> 8, h->version & 0xff);
	if (h->version < BZ_PROTO(2, 12) ||
	    !(h->xloadflags & X86_XLF_KERNEL_64))
		return boot_kfail(c, -EINVAL,
				  "no 64-bit entry point (XLF_KERNEL_64 not set in xloadflags, protocol %u.%02u; a 32-bit kernel?)",
				  h->version >> 8, h->version & 0xff);
	if (bz->hdr_end < BZ_HDR_FIELD_END(init_size))
		return boot_kfail(c, -EINVAL,
				  "setup header ends at 0x%zx, too short for protocol %u.%02u",
				  bz->hdr_end, h->version >> 8,
				  h->version & 0xff);
	if (!(h->loadflags & X86_LOADED_HIGH))
		return boot_kfail(c, -EINVAL,
				  "zImage (LOADED_HIGH not set in loadflags); only bzImage is supported");
	return 0;
}

static int bz_check_size(struct boot_ctx *c, struct bz_image *bz)
{
	size_t n = c->cfg->kernel_len;
	unsigned int sects = bz->h.setup_sects;
	uint64_t sys = (uint64_t)bz->h.syssize * 16;

	if (!sects)
		sects = BZ_DEFAULT_SETUP_SECTS;
	bz->setup_len = (sects + 1) * (size_t)BZ_SECTOR;
	if (bz->setup_len > n)
		return boot_kfail(c, -EINVAL,
				  "truncated (setup_sects %u needs %zu bytes, file has %zu)",
				  sects, bz->setup_len, n);
	bz->body_len = n - bz->setup_len;
	if (!bz->body_len || sys > bz->body_len)
		return boot_kfail(c, -EINVAL,
				  "truncated (syssize needs %llu bytes after the %zu-byte setup, file has %zu)",
				  (unsigned long long)sys, bz->setup_len,
				  bz->body_len);
	/* startup_64 is part of the image, not whatever RAM follows it. */
	if (bz->body_len <= BZ_ENTRY64_OFFSET)
		return boot_kfail(c, -EINVAL,
				  "truncated (the 64-bit entry at +0x%x is past the %zu-byte kernel)",
				  BZ_ENTRY64_OFFSET, bz->body_len);
	return 0;
}

/*
 * The decompressor runs the kernel at pref_address (LOAD_PHYSICAL_ADDR) or,
 * when relocatable, at the load address rounded up to kernel_alignment if
 * that is higher; it then needs init_size bytes from there.
 */
static int bz_place(struct boot_ctx *c, struct bz_image *bz)
{
	const struct x86_setup_header *h = &bz->h;
	uint64_t align = h->kernel_alignment, run;

	bz->load_addr = LAYOUT_HIMEM_START;
	run = h->pref_address ? h->pref_address : bz->load_addr;
	if (h->relocatable_kernel) {
		uint64_t up;

		if (!align || (align & (align - 1)))
			return boot_kfail(c, -EINVAL,
					  "kernel_alignment 0x%llx is not a power of two",
					  (unsigned long long)align);
		up = (bz->load_addr + align - 1) & ~(align - 1);
		if (up > run)
			run = up;
	}
	bz->end = bz->load_addr + bz->body_len;
	if (run > UINT64_MAX - h->init_size)
		return boot_kfail(c, -EINVAL, "pref_address 0x%llx is invalid",
				  (unsigned long long)h->pref_address);
	if (run + h->init_size > bz->end)
		bz->end = run + h->init_size;
	return boot_check_ram(c, bz->end);
}

static int bz_put_zero_page(struct boot_ctx *c, const struct bz_image *bz,
			    uint64_t initrd)
{
	struct x86_boot_params bp;
	size_t hdr_end = bz->hdr_end;
	int n;

	memset(&bp, 0, sizeof(bp));
	if (hdr_end > X86_SETUP_HDR_END)
		hdr_end = X86_SETUP_HDR_END;
	memcpy((uint8_t *)&bp + X86_SETUP_HDR_OFF,
	       c->cfg->kernel + X86_SETUP_HDR_OFF, hdr_end - X86_SETUP_HDR_OFF);
	bp.hdr.type_of_loader = BZ_LOADER_UNDEFINED;
	bp.hdr.loadflags |= X86_CAN_USE_HEAP;
	bp.hdr.heap_end_ptr = BZ_HEAP_END;
	bp.hdr.cmd_line_ptr = (uint32_t)LAYOUT_CMDLINE_ADDR;
	bp.ext_cmd_line_ptr = (uint32_t)(LAYOUT_CMDLINE_ADDR >> 32);
	if (initrd) {
		bp.hdr.ramdisk_image = (uint32_t)initrd;
		bp.ext_ramdisk_image = (uint32_t)(initrd >> 32);
		bp.hdr.ramdisk_size = (uint32_t)c->cfg->initrd_len;
		bp.ext_ramdisk_size = (uint32_t)((uint64_t)c->cfg->initrd_len >>
						 32);
	}
	if (bz->h.version >= BZ_PROTO(2, 14))
		bp.acpi_rsdp_addr = c->cfg->rsdp_gpa;
	n = x86_boot_e820(c->cfg->ram_size, bp.e820_table, X86_E820_MAX);
	if (n < 0)
		return boot_fail(c, n, "e820 map does not fit the zero page");
	bp.e820_entries = (uint8_t)n;
	return boot_write(c, LAYOUT_BOOT_PARAMS_ADDR, &bp, sizeof(bp),
			  "the zero page");
}

static void bz_set_state(const struct bz_image *bz, struct x86_boot_state *st)
{
	st->mode = X86_BOOT_LINUX64;
	st->rip = bz->load_addr + BZ_ENTRY64_OFFSET;
	st->rsi = LAYOUT_BOOT_PARAMS_ADDR;
	st->rsp = LAYOUT_BOOT_STACK;
	st->rflags = X86_RFLAGS_FIXED;
	st->cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_PG;
	st->cr3 = LAYOUT_PML4_ADDR;
	st->cr4 = X86_CR4_PAE;
	st->efer = X86_EFER_LME | X86_EFER_LMA;
	st->protocol = bz->h.version;
	st->kernel_addr = bz->load_addr;
	st->kernel_end = bz->end;
}

int boot_bzimage_load(struct boot_ctx *c, struct x86_boot_state *st)
{
	struct bz_image bz = { 0 };
	uint64_t initrd = 0;
	int rc;

	rc = bz_check_header(c, &bz);
	if (!rc)
		rc = bz_check_size(c, &bz);
	if (!rc)
		rc = bz_place(c, &bz);
	if (!rc)
		rc = boot_put_cmdline(c, bz.h.cmdline_size);
	if (!rc)
		rc = boot_put_initrd(c, bz.end,
				     (uint64_t)bz.h.initrd_addr_max + 1,
				     &initrd);
	if (rc)
		return rc;
	rc = boot_write(c, bz.load_addr, c->cfg->kernel + bz.setup_len,
			bz.body_len, "the kernel");
	if (!rc)
		rc = bz_put_zero_page(c, &bz, initrd);
	if (!rc)
		rc = boot_put_gdt(c, st, X86_BOOT_SEL_CODE64);
	if (!rc)
		rc = boot_put_page_tables(c);
	if (rc)
		return rc;
	bz_set_state(&bz, st);
	st->initrd_addr = initrd;
	return 0;
}
