/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Binary layouts the x86_64 loader shares with the guest kernel: the Linux
 * boot protocol's setup header and zero page (Documentation/arch/x86/boot.rst
 * and zero-page.rst), the e820 entry, and the PVH start_info block with its
 * module and memory map tables (Xen's arch-x86/hvm/start_info.h). All fields
 * are little-endian; offsets are checked at compile time in boot.c.
 */
#ifndef MICROVM_X86_BOOT_ABI_H
#define MICROVM_X86_BOOT_ABI_H

#include <stdint.h>

/* e820 / PVH memory map entry types. */
#define X86_E820_RAM 1
#define X86_E820_RESERVED 2

struct x86_e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
} __attribute__((packed));

#define X86_ZERO_PAGE_SIZE 0x1000
#define X86_E820_MAX 128          /* slots in boot_params.e820_table */
#define X86_SETUP_HDR_OFF 0x1f1   /* setup header offset in image and page */
#define X86_SETUP_HDR_END 0x290   /* first byte past the header area */

/* Setup header (boot protocol), bytes 0x1f1..0x26b of the image. */
#define X86_BOOT_FLAG 0xaa55
#define X86_HDRS_MAGIC 0x53726448 /* "HdrS" */
#define X86_LOADED_HIGH 0x01      /* loadflags */
#define X86_CAN_USE_HEAP 0x80
#define X86_XLF_KERNEL_64 0x0001  /* xloadflags: 64-bit entry at +0x200 */
#define X86_XLF_CAN_BE_LOADED_ABOVE_4G 0x0002

struct x86_setup_header {
	uint8_t setup_sects;
	uint16_t root_flags;
	uint32_t syssize;
	uint16_t ram_size;
	uint16_t vid_mode;
	uint16_t root_dev;
	uint16_t boot_flag;
	uint16_t jump;
	uint32_t header;
	uint16_t version;
	uint32_t realmode_swtch;
	uint16_t start_sys_seg;
	uint16_t kernel_version;
	uint8_t type_of_loader;
	uint8_t loadflags;
	uint16_t setup_move_size;
	uint32_t code32_start;
	uint32_t ramdisk_image;
	uint32_t ramdisk_size;
	uint32_t bootsect_kludge;
	uint16_t heap_end_ptr;
	uint8_t ext_loader_ver;
	uint8_t ext_loader_type;
	uint32_t cmd_line_ptr;
	uint32_t initrd_addr_max;
	uint32_t kernel_alignment;
	uint8_t relocatable_kernel;
	uint8_t min_alignment;
	uint16_t xloadflags;
	uint32_t cmdline_size;
	uint32_t hardware_subarch;
	uint64_t hardware_subarch_data;
	uint32_t payload_offset;
	uint32_t payload_length;
	uint64_t setup_data;
	uint64_t pref_address;
	uint32_t init_size;
	uint32_t handover_offset;
	uint32_t kernel_info_offset;
} __attribute__((packed));

/* The zero page ("struct boot_params"), only the fields the loader sets. */
struct x86_boot_params {
	uint8_t screen_info[0x40];
	uint8_t apm_bios_info[0x14];
	uint8_t pad1[4];
	uint64_t tboot_addr;
	uint8_t ist_info[0x10];
	uint64_t acpi_rsdp_addr;            /* 0x070, protocol 2.14+ */
	uint8_t pad2[8];
	uint8_t hd_info[0x20];
	uint8_t sys_desc_table[0x10];
	uint8_t olpc_ofw_header[0x10];
	uint32_t ext_ramdisk_image;         /* 0x0c0 */
	uint32_t ext_ramdisk_size;
	uint32_t ext_cmd_line_ptr;
	uint8_t pad3[0x1e8 - 0xcc];
	uint8_t e820_entries;               /* 0x1e8 */
	uint8_t eddbuf_entries;
	uint8_t edd_mbr_sig_buf_entries;
	uint8_t kbd_status;
	uint8_t secure_boot;
	uint8_t pad4[2];
	uint8_t sentinel;                   /* 0x1ef */
	uint8_t pad5[1];
	struct x86_setup_header hdr;        /* 0x1f1 */
	uint8_t pad6[X86_SETUP_HDR_END - 0x26c];
	uint32_t edd_mbr_sig_buffer[16];    /* 0x290 */
	struct x86_e820_entry e820_table[X86_E820_MAX]; /* 0x2d0 */
	uint8_t pad7[X86_ZERO_PAGE_SIZE - 0xcd0];
} __attribute__((packed));

/* PVH boot (XEN_ELFNOTE_PHYS32_ENTRY entry, hvm_start_info in %ebx). */
#define X86_PVH_NOTE_NAME "Xen"
#define X86_PVH_NOTE_PHYS32_ENTRY 18
#define X86_PVH_START_MAGIC 0x336ec578
#define X86_PVH_START_VERSION 1

struct x86_pvh_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;              /* version 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
} __attribute__((packed));

struct x86_pvh_module {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
} __attribute__((packed));

struct x86_pvh_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;                      /* X86_E820_RAM / _RESERVED */
	uint32_t reserved;
} __attribute__((packed));

#endif
