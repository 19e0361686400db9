/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arm64 kernel loader (Documentation/arch/arm64/booting.rst): it takes
 * an Image (Debian 12's vmlinuz-*-arm64 is one) or a gzip of one (Image.gz,
 * vmlinuz of other distributions), places it
 * text_offset bytes above the 2 MiB-aligned base of RAM, puts the initrd
 * below a 2 MiB block at the top of that RAM range and keeps the block for
 * the device tree. Pure code, no KVM: tests back guest_mem with malloc.
 *
 *	arm64_boot_load(gm, &cfg, &st, err, len);  // kernel, initrd
 *	d.initrd_start = st.initrd_addr; ...       // dtb.h, then dtb_build()
 *	arm64_boot_put_dtb(gm, &st, dtb, dtb_len, err, len);
 *	// boot vCPU: pc = st.entry, x0 = st.dtb_addr, x1..x3 = 0
 */
#ifndef MICROVM_ARM64_BOOT_IMAGE_H
#define MICROVM_ARM64_BOOT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/guest_mem.h"

/* The 64-byte Image header (booting.rst §4), little-endian fields. */
#define ARM64_IMAGE_HDR_SIZE 64
#define ARM64_IMAGE_TEXT_OFFSET_OFF 0x08
#define ARM64_IMAGE_SIZE_OFF 0x10
#define ARM64_IMAGE_FLAGS_OFF 0x18
#define ARM64_IMAGE_MAGIC_OFF 0x38
#define ARM64_IMAGE_MAGIC "ARM\x64"
#define ARM64_IMAGE_FLAG_BE 0x1ULL        /* bit 0: big-endian kernel */
#define ARM64_IMAGE_PAGE_SHIFT 1          /* bits 1-2: page size */
#define ARM64_IMAGE_PAGE_MASK 0x3ULL
#define ARM64_IMAGE_FLAG_ANYWHERE 0x8ULL  /* bit 3: base anywhere in RAM */
/* Pre-3.17 kernels: image_size 0, text_offset to be taken as this. */
#define ARM64_IMAGE_OLD_TEXT_OFFSET 0x80000ULL

#define ARM64_KERNEL_ALIGN (2ULL << 20)   /* the Image's base alignment */
#define ARM64_DTB_BLOCK (2ULL << 20)      /* DTB's own 2 MiB block */
#define ARM64_INITRD_ALIGN 0x1000ULL

/* What arm64_image_parse() finds wrong; one code per failure. */
enum arm64_image_err {
	ARM64_IMAGE_OK = 0,
	ARM64_IMAGE_TOO_SHORT,  /* fewer than 64 bytes */
	ARM64_IMAGE_BZIMAGE,    /* an x86 bzImage */
	ARM64_IMAGE_ELF,        /* an ELF file (vmlinux) */
	ARM64_IMAGE_BAD_MAGIC,  /* no "ARM\x64" at 0x38 */
	ARM64_IMAGE_BIG_ENDIAN, /* flags bit 0 */
	ARM64_IMAGE_ERR_COUNT,
};

struct arm64_image_info {
	uint64_t text_offset; /* ARM64_IMAGE_OLD_TEXT_OFFSET for old kernels */
	uint64_t image_size;  /* 0: not given (pre-3.17) */
	uint64_t flags;
	unsigned int page_kib; /* 4, 16, 64; 0 unspecified */
};

/**
 * arm64_image_parse() - check and decode an Image header.
 * @buf: the first bytes of the (decompressed) kernel
 * @len: how many; at least ARM64_IMAGE_HDR_SIZE to succeed
 * @info: filled on success
 *
 * Return: ARM64_IMAGE_OK or the first failure found.
 * Context: any; pure.
 */
enum arm64_image_err arm64_image_parse(const uint8_t *buf, size_t len,
				       struct arm64_image_info *info);

/**
 * arm64_image_strerror() - a user-facing sentence for @e, with the fix.
 */
const char *arm64_image_strerror(enum arm64_image_err e);

struct arm64_boot_cfg {
	const uint8_t *kernel;   /* Image or gzip of one */
	size_t kernel_len;
	const char *kernel_path; /* for messages only; may be NULL */
	const uint8_t *initrd;   /* NULL: no initrd */
	size_t initrd_len;
	const char *initrd_path; /* for messages only; may be NULL */
	uint64_t ram_base;       /* the RAM range that takes it all: */
	uint64_t ram_size;       /* 2 MiB-aligned base, one guest_mem region */
	uint64_t memory;         /* --memory as a whole, for messages */
};

struct arm64_boot_state {
	uint64_t entry;       /* the boot vCPU's pc: the Image's first byte */
	uint64_t kernel_addr; /* == entry */
	uint64_t kernel_end;  /* one past max(image_size, Image length) */
	uint64_t kernel_len;  /* bytes of Image written (decompressed) */
	bool gzip;            /* the file was gzip-compressed */
	struct arm64_image_info info;
	uint64_t initrd_addr; /* 0 with no initrd */
	uint64_t initrd_size;
	uint64_t dtb_addr;    /* x0; a 2 MiB block of its own */
	uint64_t dtb_max;     /* bytes free there (<= DTB_MAX_SIZE) */
};

/**
 * arm64_boot_load() - write the kernel and the initrd into guest RAM and
 * choose where the device tree goes.
 * @gm: guest memory holding [@cfg->ram_base, + @cfg->ram_size)
 * @cfg: files and RAM
 * @st: filled on success
 * @err: one message naming the file and the fix, on failure
 * @errlen: size of @err
 *
 * A gzip is inflated straight into guest RAM, bounded by the room below
 * the initrd: never by what the file claims (header or gzip trailer).
 *
 * Return: 0; -EINVAL for a file that is not an arm64 Image (a bzImage,
 * an ELF, bad magic, big-endian, truncated, a gzip that does not
 * inflate); -ENOSPC when kernel, initrd and device tree do not fit RAM.
 * Context: setup, before vCPUs run.
 */
int arm64_boot_load(struct guest_mem *gm, const struct arm64_boot_cfg *cfg,
		    struct arm64_boot_state *st, char *err, size_t errlen);

/**
 * arm64_boot_put_dtb() - copy the finished device tree to st->dtb_addr.
 * @gm: guest memory
 * @st: from arm64_boot_load()
 * @dtb: the blob (dtb_build())
 * @len: its size; at most st->dtb_max
 * @err: message on failure
 * @errlen: size of @err
 *
 * Return: 0, -ENOSPC for a blob larger than st->dtb_max, -EFAULT when
 * the block is not guest RAM.
 * Context: setup.
 */
int arm64_boot_put_dtb(struct guest_mem *gm,
		       const struct arm64_boot_state *st, const void *dtb,
		       size_t len, char *err, size_t errlen);

#endif
