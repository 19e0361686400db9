// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the x86_64 loader: synthetic bzImages and PVH ELF kernels
 * built in memory are loaded into a malloc'd guest, then the zero page /
 * start_info, e820 map, GDT, page tables and initial registers are checked.
 * One table row per rejected image. A real kernel (Debian's cloud bzImage)
 * is loaded too when MICROVM_TEST_BZIMAGE names it: CTest's
 * image.x86_debian_kernel sets it to the nested harness's kernel
 * (tests/e2e/prepare.sh), and there a missing file is a failure.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "layout.h"
#include "test.h"

#define MIB (1ULL << 20)
#define GUEST_RAM (64 * MIB) /* largest RAM a row uses */
#define KPATH "/test/vmlinuz"
#define IPATH "/test/initrd.img"
#define RSDP LAYOUT_ACPI_ADDR
#define SCRATCH (64 * 1024)

/* Synthetic bzImage: 4 setup sectors + BZ_BODY bytes of kernel. */
#define BZ_SETUP_SECTS 4
#define BZ_SETUP_LEN ((BZ_SETUP_SECTS + 1) * 512)
#define BZ_BODY 8192
#define BZ_INIT_SIZE (8 * MIB)
#define BZ_PREF (16 * MIB)

/* Synthetic ELF: one PT_LOAD at ELF_PADDR, entry inside it. */
#define ELF_PADDR (16 * MIB)
#define ELF_FILESZ 0x3000
#define ELF_MEMSZ 0x5000
#define ELF_DATA_OFF 0x1000
#define ELF_NOTE_OFF 0x100
#define ELF_ENTRY (ELF_PADDR + 0x100)

static uint8_t *ram;
static struct guest_mem gm;

/* Guest memory with @size bytes of low RAM, cleared to @fill. */
static void guest_reset(uint64_t size, int fill)
{
	memset(&gm, 0, sizeof(gm));
	memset(ram, fill, size);
	if (guest_mem_add_region(&gm, 0, size, ram))
		abort();
}

static uint8_t body_byte(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static size_t build_bz(uint8_t *b)
{
	struct x86_setup_header h = {
		.setup_sects = BZ_SETUP_SECTS,
		.syssize = BZ_BODY / 16,
		.boot_flag = X86_BOOT_FLAG,
		.jump = 0x6aeb, /* jmp short to 0x26c */
		.header = X86_HDRS_MAGIC,
		.version = 0x020f,
		.loadflags = X86_LOADED_HIGH,
		.initrd_addr_max = 0x7fffffff,
		.kernel_alignment = 0x200000,
		.relocatable_kernel = 1,
		.xloadflags = X86_XLF_KERNEL_64 |
			      X86_XLF_CAN_BE_LOADED_ABOVE_4G,
		.cmdline_size = 2047,
		.pref_address = BZ_PREF,
		.init_size = BZ_INIT_SIZE,
	};
	size_t i;

	memset(b, 0, BZ_SETUP_LEN);
	memcpy(b + X86_SETUP_HDR_OFF, &h, sizeof(h));
	for (i = 0; i < BZ_BODY; i++)
		b[BZ_SETUP_LEN + i] = body_byte(i);
	return BZ_SETUP_LEN + BZ_BODY;
}

static struct x86_setup_header *bz_hdr(uint8_t *b)
{
	return (struct x86_setup_header *)(b + X86_SETUP_HDR_OFF);
}

struct elf_opts {
	int is64;
	int note;            /* 0 none, 1 PT_NOTE, 2 SHT_NOTE only */
	unsigned int descsz; /* 4 or 8 */
};

static size_t put_note(uint8_t *p, const char *name, uint32_t type,
		       uint64_t val, uint32_t descsz)
{
	Elf64_Nhdr nh = { (uint32_t)strlen(name) + 1, descsz, type };
	size_t name_pad = (nh.n_namesz + 3) & ~3U;

	memcpy(p, &nh, sizeof(nh));
	memset(p + sizeof(nh), 0, name_pad);
	memcpy(p + sizeof(nh), name, nh.n_namesz);
	memcpy(p + sizeof(nh) + name_pad, &val, descsz);
	return sizeof(nh) + name_pad + ((descsz + 3) & ~3U);
}

/* Notes: a GNU build id first (skipped), then the PVH entry. */
static size_t put_notes(uint8_t *p, unsigned int descsz)
{
	size_t n = put_note(p, "GNU", NT_GNU_BUILD_ID, 0x1122334455667788ULL,
			    8);

	return n + put_note(p + n, "Xen", 18, ELF_ENTRY, descsz);
}

static void put_phdr(uint8_t *b, int is64, size_t off, uint32_t type,
		     uint64_t foff, uint64_t paddr, uint64_t filesz,
		     uint64_t memsz)
{
	if (is64) {
		Elf64_Phdr p = { .p_type = type, .p_offset = foff,
				 .p_vaddr = paddr, .p_paddr = paddr,
				 .p_filesz = filesz, .p_memsz = memsz,
				 .p_align = 4 };
		memcpy(b + off, &p, sizeof(p));
	} else {
		Elf32_Phdr p = { .p_type = type, .p_offset = foff,
				 .p_vaddr = paddr, .p_paddr = paddr,
				 .p_filesz = filesz, .p_memsz = memsz,
				 .p_align = 4 };
		memcpy(b + off, &p, sizeof(p));
	}
}

/* Section headers at the end: a null one and the note section. */
static size_t put_shdrs(uint8_t *b, int is64, size_t off, size_t note_len)
{
	if (is64) {
		Elf64_Shdr s[2] = { { 0 }, { .sh_type = SHT_NOTE,
					     .sh_offset = ELF_NOTE_OFF,
					     .sh_size = note_len,
					     .sh_addralign = 4 } };
		memcpy(b + off, s, sizeof(s));
		return sizeof(s);
	} else {
		Elf32_Shdr s[2] = { { 0 }, { .sh_type = SHT_NOTE,
					     .sh_offset = ELF_NOTE_OFF,
					     .sh_size = note_len,
					     .sh_addralign = 4 } };
		memcpy(b + off, s, sizeof(s));
		return sizeof(s);
	}
}

static size_t build_elf_opts(uint8_t *b, const struct elf_opts *o)
{
	size_t ehsz = o->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsz = o->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t note_len = 0, len = ELF_DATA_OFF + ELF_FILESZ, i;
	unsigned int phnum = o->note == 1 ? 2 : 1;

	memset(b, 0, len);
	if (o->note)
		note_len = put_notes(b + ELF_NOTE_OFF, o->descsz);
	put_phdr(b, o->is64, ehsz, PT_LOAD, ELF_DATA_OFF, ELF_PADDR,
		 ELF_FILESZ, ELF_MEMSZ);
	if (o->note == 1)
		put_phdr(b, o->is64, ehsz + phsz, PT_NOTE, ELF_NOTE_OFF, 0,
			 note_len, 0);
	for (i = 0; i < ELF_FILESZ; i++)
		b[ELF_DATA_OFF + i] = body_byte(i);
	if (o->is64) {
		Elf64_Ehdr e = { .e_type = ET_EXEC, .e_machine = EM_X86_64,
				 .e_version = EV_CURRENT,
				 .e_entry = 0xffffffff81000000ULL,
				 .e_phoff = ehsz, .e_ehsize = ehsz,
				 .e_phentsize = phsz, .e_phnum = phnum };
		if (o->note == 2) {
			e.e_shoff = len;
			e.e_shentsize = sizeof(Elf64_Shdr);
			e.e_shnum = 2;
		}
		memcpy(e.e_ident, ELFMAG, SELFMAG);
		e.e_ident[EI_CLASS] = ELFCLASS64;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		memcpy(b, &e, sizeof(e));
	} else {
		Elf32_Ehdr e = { .e_type = ET_EXEC, .e_machine = EM_386,
				 .e_version = EV_CURRENT,
				 .e_entry = 0xc1000000U,
				 .e_phoff = ehsz, .e_ehsize = ehsz,
				 .e_phentsize = phsz, .e_phnum = phnum };
		if (o->note == 2) {
			e.e_shoff = len;
			e.e_shentsize = sizeof(Elf32_Shdr);
			e.e_shnum = 2;
		}
		memcpy(e.e_ident, ELFMAG, SELFMAG);
		e.e_ident[EI_CLASS] = ELFCLASS32;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		memcpy(b, &e, sizeof(e));
	}
	if (o->note == 2)
		len += put_shdrs(b, o->is64, len, note_len);
	return len;
}

static size_t build_elf(uint8_t *b)
{
	const struct elf_opts o = { .is64 = 1, .note = 1, .descsz = 4 };

	return build_elf_opts(b, &o);
}

/* The PT_LOAD program header of build_elf()'s 64-bit image. */
static Elf64_Phdr *elf_load_phdr(uint8_t *b)
{
	return (Elf64_Phdr *)(b + sizeof(Elf64_Ehdr));
}

static int load(const uint8_t *k, size_t klen, const uint8_t *initrd,
		size_t ilen, const char *cmdline, uint64_t ram_size,
		struct x86_boot_state *st, char *err, size_t errlen)
{
	struct x86_boot_cfg cfg = {
		.kernel = k, .kernel_len = klen, .kernel_path = KPATH,
		.initrd = initrd, .initrd_len = ilen,
		.initrd_path = initrd ? IPATH : NULL,
		.cmdline = cmdline, .ram_size = ram_size, .rsdp_gpa = RSDP,
	};

	return x86_boot_load(&gm, &cfg, st, err, errlen);
}

/* Translate @va through the 4-level tables at @cr3; -1 if unmapped. */
static int64_t walk(uint64_t cr3, uint64_t va)
{
	static const unsigned int shift[] = { 39, 30, 21 };
	uint64_t table = cr3 & ~0xfffULL, e = 0;
	unsigned int lvl;

	for (lvl = 0; lvl < 3; lvl++) {
		uint64_t idx = (va >> shift[lvl]) & 511;

		if (table + idx * 8 + 8 > GUEST_RAM)
			return -1;
		memcpy(&e, ram + table + idx * 8, 8);
		if ((e & 3) != 3) /* present and writable */
			return -1;
		if (lvl < 2 && (e & 0x80))
			return -1;
		table = e & 0x000ffffffffff000ULL;
	}
	if (!(e & 0x80))
		return -1;
	return (int64_t)((e & 0x000fffffffe00000ULL) | (va & 0x1fffff));
}

static uint64_t gdt_entry(const struct x86_boot_state *st, uint16_t sel)
{
	uint64_t d;

	memcpy(&d, ram + st->gdt_base + sel, 8);
	return d;
}

static void check_e820(const struct x86_e820_entry *t, int n, uint64_t size)
{
	struct x86_e820_entry want[8];
	int i, m = x86_boot_e820(size, want, 8);

	CHECK_EQ(n, m);
	for (i = 0; i < n && i < m; i++) {
		CHECK_EQ(t[i].addr, want[i].addr);
		CHECK_EQ(t[i].size, want[i].size);
		CHECK_EQ(t[i].type, want[i].type);
	}
}

static void test_bzimage_ok(void)
{
	static const char cmd[] = "console=ttyS0 root=/dev/vda rw";
	uint8_t *k = malloc(SCRATCH), *initrd = malloc(3 * MIB + 123);
	size_t klen = build_bz(k), ilen = 3 * MIB + 123, i;
	struct x86_boot_state st;
	struct x86_boot_params *bp;
	char err[256];
	uint64_t va;
	int rc, bad;

	for (i = 0; i < ilen; i++)
		initrd[i] = (uint8_t)(i ^ (i >> 9));
	guest_reset(GUEST_RAM, 0x5a);
	rc = load(k, klen, initrd, ilen, cmd, GUEST_RAM, &st, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(err[0], '\0');
	bp = (struct x86_boot_params *)(ram + LAYOUT_BOOT_PARAMS_ADDR);

	/* Zero page: the header copied, loader fields set (boot.rst). */
	CHECK_EQ(bp->sentinel, 0);
	CHECK_EQ(bp->screen_info[0], 0);
	CHECK_EQ(bp->hdr.header, X86_HDRS_MAGIC);
	CHECK_EQ(bp->hdr.version, 0x020f);
	CHECK_EQ(bp->hdr.setup_sects, BZ_SETUP_SECTS);
	CHECK_EQ(bp->hdr.init_size, BZ_INIT_SIZE);
	CHECK_EQ(bp->hdr.type_of_loader, 0xff);
	CHECK(bp->hdr.loadflags & X86_CAN_USE_HEAP);
	CHECK(bp->hdr.loadflags & X86_LOADED_HIGH);
	CHECK_EQ(bp->hdr.heap_end_ptr, 0xfe00);
	CHECK_EQ(bp->hdr.cmd_line_ptr, LAYOUT_CMDLINE_ADDR);
	CHECK_EQ(bp->ext_cmd_line_ptr, 0);
	CHECK(!memcmp(ram + LAYOUT_CMDLINE_ADDR, cmd, sizeof(cmd)));
	CHECK_EQ(bp->acpi_rsdp_addr, RSDP);
	CHECK_EQ(bp->e820_entries, 4);
	check_e820(bp->e820_table, bp->e820_entries, GUEST_RAM);

	/* Initrd: page-aligned, inside RAM, above the kernel's init_size. */
	CHECK_EQ(bp->hdr.ramdisk_size, ilen);
	CHECK_EQ(bp->ext_ramdisk_image, 0);
	CHECK_EQ(bp->ext_ramdisk_size, 0);
	CHECK_EQ(bp->hdr.ramdisk_image % 4096, 0);
	CHECK_EQ(bp->hdr.ramdisk_image, st.initrd_addr);
	CHECK(bp->hdr.ramdisk_image + ilen <= GUEST_RAM);
	CHECK(GUEST_RAM - (bp->hdr.ramdisk_image + ilen) < 4096);
	CHECK(bp->hdr.ramdisk_image >= BZ_PREF + BZ_INIT_SIZE);
	CHECK(bp->hdr.ramdisk_image + ilen <= GUEST_RAM &&
	      !memcmp(ram + bp->hdr.ramdisk_image, initrd, ilen));

	/* The protected-mode kernel at 1 MiB. */
	CHECK_EQ(st.kernel_addr, LAYOUT_HIMEM_START);
	CHECK_EQ(st.kernel_end, BZ_PREF + BZ_INIT_SIZE);
	CHECK_EQ(st.protocol, 0x020f);
	CHECK(!memcmp(ram + LAYOUT_HIMEM_START, k + BZ_SETUP_LEN, BZ_BODY));

	/* 64-bit entry state. */
	CHECK_EQ(st.mode, X86_BOOT_LINUX64);
	CHECK_EQ(st.rip, LAYOUT_HIMEM_START + 0x200);
	CHECK_EQ(st.rsi, LAYOUT_BOOT_PARAMS_ADDR);
	CHECK_EQ(st.rsp, LAYOUT_BOOT_STACK);
	CHECK_EQ(st.rflags, 2);
	CHECK_EQ(st.cr0, X86_CR0_PE | X86_CR0_ET | X86_CR0_PG);
	CHECK_EQ(st.cr3, LAYOUT_PML4_ADDR);
	CHECK_EQ(st.cr4, X86_CR4_PAE);
	CHECK_EQ(st.efer, X86_EFER_LME | X86_EFER_LMA);
	CHECK_EQ(st.cs_sel, 0x10);
	CHECK_EQ(st.ds_sel, 0x18);
	CHECK(st.cs_long);
	CHECK_EQ(st.cs.selector, 0x10);
	CHECK(st.cs.l && !st.cs.db && st.cs.present && st.cs.s && st.cs.g);
	CHECK_EQ(st.cs.type, 0xb);
	CHECK_EQ(st.ds.type, 0x3);
	CHECK_EQ(st.ds.limit, 0xffffffff);
	CHECK_EQ(st.gdt_base, LAYOUT_GDT_ADDR);
	CHECK_EQ(st.gdt_limit, 4 * 8 - 1);
	CHECK_EQ(gdt_entry(&st, 0), 0);
	CHECK_EQ(gdt_entry(&st, 0x08), 0x00cf9b000000ffffULL);
	CHECK_EQ(gdt_entry(&st, 0x10), 0x00af9b000000ffffULL);
	CHECK_EQ(gdt_entry(&st, 0x18), 0x00cf93000000ffffULL);

	/* Identity map of 0..4 GiB in 2 MiB pages; nothing above. */
	bad = 0;
	for (va = 0; va < X86_BOOT_PT_MAPPED; va += 2 * MIB)
		if (walk(st.cr3, va + 0x1234) != (int64_t)(va + 0x1234))
			bad++;
	CHECK_EQ(bad, 0);
	CHECK_EQ(walk(st.cr3, 0xffffffffULL), 0xffffffffLL);
	CHECK_EQ(walk(st.cr3, X86_BOOT_PT_MAPPED), -1);
	CHECK_EQ(walk(st.cr3, 1ULL << 39), -1);
	free(initrd);
	free(k);
}

/* Variants of a good bzImage: no initrd, empty cmdline, older protocol. */
static void test_bzimage_variants(void)
{
	uint8_t *k = malloc(SCRATCH);
	size_t klen = build_bz(k);
	struct x86_boot_state st;
	struct x86_boot_params *bp =
		(struct x86_boot_params *)(ram + LAYOUT_BOOT_PARAMS_ADDR);
	char err[256];

	guest_reset(GUEST_RAM, 0x5a);
	CHECK_EQ(load(k, klen, NULL, 0, NULL, 32 * MIB, &st, err,
		      sizeof(err)), 0);
	CHECK_EQ(bp->hdr.ramdisk_image, 0);
	CHECK_EQ(bp->hdr.ramdisk_size, 0);
	CHECK_EQ(st.initrd_addr, 0);
	CHECK_EQ(ram[LAYOUT_CMDLINE_ADDR], '\0');
	CHECK_EQ(bp->e820_entries, 4);
	check_e820(bp->e820_table, bp->e820_entries, 32 * MIB);

	/* acpi_rsdp_addr exists from protocol 2.14 only. */
	bz_hdr(k)->version = 0x020d;
	guest_reset(GUEST_RAM, 0x5a);
	CHECK_EQ(load(k, klen, NULL, 0, "x", 32 * MIB, &st, err,
		      sizeof(err)), 0);
	CHECK_EQ(bp->acpi_rsdp_addr, 0);
	CHECK_EQ(st.protocol, 0x020d);

	/* setup_sects 0 means 4. */
	bz_hdr(k)->setup_sects = 0;
	guest_reset(GUEST_RAM, 0x5a);
	CHECK_EQ(load(k, klen, NULL, 0, "x", 32 * MIB, &st, err,
		      sizeof(err)), 0);
	CHECK(!memcmp(ram + LAYOUT_HIMEM_START, k + BZ_SETUP_LEN, BZ_BODY));

	/* Exactly the cmdline_size limit is accepted. */
	bz_hdr(k)->cmdline_size = 5;
	guest_reset(GUEST_RAM, 0x5a);
	CHECK_EQ(load(k, klen, NULL, 0, "12345", 32 * MIB, &st, err,
		      sizeof(err)), 0);
	CHECK(!memcmp(ram + LAYOUT_CMDLINE_ADDR, "12345", 6));
	free(k);
}

static void test_e820(void)
{
	static const struct {
		uint64_t ram;
		int n;
		uint64_t low_end;  /* end of the RAM entry from 1 MiB */
		uint64_t high_len; /* RAM from 4 GiB, 0 for none */
	} rows[] = {
		{ 512 * MIB, 4, 512 * MIB, 0 },
		{ 3ULL << 30, 4, 3ULL << 30, 0 },
		{ 4ULL << 30, 5, 3ULL << 30, 1ULL << 30 },
		{ 8ULL << 30, 5, 3ULL << 30, 5ULL << 30 },
	};
	struct x86_e820_entry t[8];
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int n = x86_boot_e820(rows[i].ram, t, 8);

		CHECK_EQ(n, rows[i].n);
		CHECK_EQ(t[0].addr, 0);
		CHECK_EQ(t[0].size, LAYOUT_EBDA_START);
		CHECK_EQ(t[0].type, X86_E820_RAM);
		CHECK_EQ(t[1].addr, LAYOUT_EBDA_START);
		CHECK_EQ(t[1].addr + t[1].size, LAYOUT_HIMEM_START);
		CHECK_EQ(t[1].type, X86_E820_RESERVED);
		CHECK_EQ(t[2].addr, LAYOUT_HIMEM_START);
		CHECK_EQ(t[2].addr + t[2].size, rows[i].low_end);
		CHECK_EQ(t[2].type, X86_E820_RAM);
		/* The ECAM window is reserved (PCI firmware spec 3.2). */
		CHECK_EQ(t[3].addr, PCI_ECAM_BASE);
		CHECK_EQ(t[3].size, PCI_ECAM_SIZE);
		CHECK_EQ(t[3].type, X86_E820_RESERVED);
		if (rows[i].high_len) {
			CHECK_EQ(t[4].addr, HIMEM_START);
			CHECK_EQ(t[4].size, rows[i].high_len);
			CHECK_EQ(t[4].type, X86_E820_RAM);
		}
	}
	CHECK_EQ(x86_boot_e820(8ULL << 30, t, 4), -ENOSPC);
}

/* Bad images: each row builds a kernel, loads it, expects rc and words. */
static size_t bad_random(uint8_t *b)
{
	uint32_t x = 12345;
	size_t i;

	for (i = 0; i < 4096; i++) {
		x = x * 1103515245 + 12345;
		b[i] = (uint8_t)(x >> 16);
	}
	return 4096;
}

static size_t bad_empty(uint8_t *b)
{
	(void)b;
	return 0;
}

static size_t bad_hdr_cut(uint8_t *b)
{
	build_bz(b);
	return 0x204;
}

static size_t bad_hdr_fields_cut(uint8_t *b)
{
	build_bz(b);
	return 0x240;
}

static size_t bad_setup_cut(uint8_t *b)
{
	build_bz(b);
	bz_hdr(b)->setup_sects = 31;
	return 4000;
}

static size_t bad_body_cut(uint8_t *b)
{
	return build_bz(b) - 100;
}

static size_t bad_no_body(uint8_t *b)
{
	build_bz(b);
	bz_hdr(b)->syssize = 0;
	return BZ_SETUP_LEN;
}

/* A body that ends before startup_64 at +0x200 (found by fuzz_boot). */
static size_t bad_short_body(uint8_t *b)
{
	build_bz(b);
	bz_hdr(b)->syssize = 0x100 / 16;
	bz_hdr(b)->init_size = 0;
	return BZ_SETUP_LEN + 0x100;
}

static size_t bad_proto_205(uint8_t *b)
{
	size_t n = build_bz(b);

	bz_hdr(b)->version = 0x0205;
	return n;
}

static size_t bad_proto_210(uint8_t *b)
{
	size_t n = build_bz(b);

	bz_hdr(b)->version = 0x020a;
	return n;
}

static size_t bad_no_xlf64(uint8_t *b)
{
	size_t n = build_bz(b);

	bz_hdr(b)->xloadflags = X86_XLF_CAN_BE_LOADED_ABOVE_4G;
	return n;
}

static size_t bad_short_hdr(uint8_t *b)
{
	size_t n = build_bz(b);

	b[0x201] = 0x40; /* header ends at 0x242, before init_size */
	return n;
}

static size_t bad_zimage(uint8_t *b)
{
	size_t n = build_bz(b);

	bz_hdr(b)->loadflags = 0;
	return n;
}

static size_t bad_align(uint8_t *b)
{
	size_t n = build_bz(b);

	bz_hdr(b)->kernel_alignment = 0x300000;
	return n;
}

static size_t bad_arm64(uint8_t *b)
{
	memset(b, 0, 0x1000);
	b[0] = 'M';
	b[1] = 'Z';
	memcpy(b + 0x38, "ARM\x64", 4);
	return 0x1000;
}

static size_t bad_gzip(uint8_t *b)
{
	memset(b, 0, 0x1000);
	b[0] = 0x1f;
	b[1] = 0x8b;
	b[2] = 8;
	return 0x1000;
}

static size_t bad_elf_aarch64(uint8_t *b)
{
	size_t n = build_elf(b);

	((Elf64_Ehdr *)b)->e_machine = EM_AARCH64;
	return n;
}

static size_t bad_elf_be(uint8_t *b)
{
	size_t n = build_elf(b);

	b[EI_DATA] = ELFDATA2MSB;
	return n;
}

static size_t bad_elf_dyn(uint8_t *b)
{
	size_t n = build_elf(b);

	((Elf64_Ehdr *)b)->e_type = ET_DYN;
	return n;
}

static size_t bad_elf_cut(uint8_t *b)
{
	build_elf(b);
	return 40;
}

static size_t bad_elf_no_note(uint8_t *b)
{
	const struct elf_opts o = { .is64 = 1, .note = 0 };

	return build_elf_opts(b, &o);
}

static size_t bad_elf_note_size(uint8_t *b)
{
	const struct elf_opts o = { .is64 = 1, .note = 1, .descsz = 2 };

	return build_elf_opts(b, &o);
}

static size_t bad_elf_note_overrun(uint8_t *b)
{
	size_t n = build_elf(b);
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(b + ELF_NOTE_OFF);

	nh->n_descsz = 0x10000;
	return n;
}

static size_t bad_elf_phdrs_cut(uint8_t *b)
{
	size_t n = build_elf(b);

	((Elf64_Ehdr *)b)->e_phoff = n - 8;
	return n;
}

static size_t bad_elf_outside(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_paddr = 0xd0000000ULL;
	return n;
}

static size_t bad_elf_wrap(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_memsz = UINT64_MAX - 0x1000;
	return n;
}

static size_t bad_elf_low(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_paddr = 0x8000;
	return n;
}

static size_t bad_elf_seg_cut(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_offset = UINT64_MAX - 0x100;
	return n;
}

static size_t bad_elf_filesz(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_filesz = ELF_MEMSZ + 1;
	return n;
}

static size_t bad_elf_entry(uint8_t *b)
{
	size_t n = build_elf(b);

	elf_load_phdr(b)->p_paddr = 32 * MIB;
	return n;
}

enum who { KERNEL, INITRD };

static const struct bad_row {
	const char *name;
	size_t (*build)(uint8_t *b);
	uint64_t ram;
	size_t initrd_len; /* 0: none */
	size_t cmdline_len;
	int rc;
	enum who who;      /* whose path the message names */
	const char *word;
} bad_rows[] = {
	{ "random bytes", bad_random, 0, 0, 0, -EINVAL, KERNEL,
	  "not a bzImage or x86_64 ELF kernel" },
	{ "empty", bad_empty, 0, 0, 0, -EINVAL, KERNEL, "empty file" },
	{ "header cut", bad_hdr_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "not a bzImage" },
	{ "header fields cut", bad_hdr_fields_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "truncated (setup header ends at 0x26c" },
	{ "setup cut", bad_setup_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "truncated (setup_sects 31 needs 16384 bytes, file has 4000)" },
	{ "body cut", bad_body_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "truncated (syssize needs 8192 bytes" },
	{ "no body", bad_no_body, 0, 0, 0, -EINVAL, KERNEL, "truncated" },
	{ "body ends before the 64-bit entry", bad_short_body, 0, 0, 0,
	  -EINVAL, KERNEL, "64-bit entry at +0x200 is past the 256-byte" },
	{ "protocol 2.05", bad_proto_205, 0, 0, 0, -EINVAL, KERNEL,
	  "boot protocol 2.05 too old (need 2.06 or newer)" },
	{ "protocol 2.10", bad_proto_210, 0, 0, 0, -EINVAL, KERNEL,
	  "XLF_KERNEL_64" },
	{ "no XLF_KERNEL_64", bad_no_xlf64, 0, 0, 0, -EINVAL, KERNEL,
	  "no 64-bit entry point (XLF_KERNEL_64" },
	{ "short header", bad_short_hdr, 0, 0, 0, -EINVAL, KERNEL,
	  "too short for protocol 2.15" },
	{ "zImage", bad_zimage, 0, 0, 0, -EINVAL, KERNEL, "zImage" },
	{ "alignment", bad_align, 0, 0, 0, -EINVAL, KERNEL,
	  "kernel_alignment 0x300000" },
	{ "arm64 Image", bad_arm64, 0, 0, 0, -EINVAL, KERNEL,
	  "arm64 Image, not an x86_64 kernel; this microvm runs x86_64 guests: give a bzImage" },
	{ "gzip", bad_gzip, 0, 0, 0, -EINVAL, KERNEL,
	  "gzip-compressed file (an arm64 vmlinuz?), not a bzImage or x86_64 ELF kernel; give a bzImage or Debian's vmlinuz-*-amd64" },
	{ "ELF aarch64", bad_elf_aarch64, 0, 0, 0, -EINVAL, KERNEL,
	  "ELF for aarch64, not an x86_64 kernel" },
	{ "ELF big-endian", bad_elf_be, 0, 0, 0, -EINVAL, KERNEL,
	  "big-endian" },
	{ "ELF ET_DYN", bad_elf_dyn, 0, 0, 0, -EINVAL, KERNEL, "ET_EXEC" },
	{ "ELF header cut", bad_elf_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "truncated (ELF header" },
	{ "ELF no PVH note", bad_elf_no_note, 0, 0, 0, -EINVAL, KERNEL,
	  "ELF has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)" },
	{ "ELF note size", bad_elf_note_size, 0, 0, 0, -EINVAL, KERNEL,
	  "2-byte value" },
	{ "ELF note overrun", bad_elf_note_overrun, 0, 0, 0, -EINVAL, KERNEL,
	  "overruns" },
	{ "ELF phdrs cut", bad_elf_phdrs_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "program headers" },
	{ "ELF segment outside RAM", bad_elf_outside, 0, 0, 0, -EINVAL,
	  KERNEL, "ELF segment 0 [0xd0000000, +0x5000) is outside guest RAM" },
	{ "ELF segment wraps", bad_elf_wrap, 0, 0, 0, -EINVAL, KERNEL,
	  "outside guest RAM" },
	{ "ELF segment below 1M", bad_elf_low, 0, 0, 0, -EINVAL, KERNEL,
	  "below 1 MiB" },
	{ "ELF segment past file", bad_elf_seg_cut, 0, 0, 0, -EINVAL, KERNEL,
	  "truncated (ELF segment 0" },
	{ "ELF filesz > memsz", bad_elf_filesz, 0, 0, 0, -EINVAL, KERNEL,
	  "p_filesz 0x5001 exceeds p_memsz 0x5000" },
	{ "ELF entry outside", bad_elf_entry, 0, 0, 0, -EINVAL, KERNEL,
	  "PVH entry 0x1000100 is not inside a loaded segment" },
	{ "ELF RAM too small", build_elf, 16 * MIB, 0, 0, -ENOSPC, KERNEL,
	  "--memory 16M is too small for kernel" },
	{ "bzImage RAM too small", build_bz, 16 * MIB, 0, 0, -ENOSPC, KERNEL,
	  "--memory 16M is too small for kernel " KPATH
	  " (needs at least 24M)" },
	{ "initrd too big", build_bz, 0, 48 * MIB, 0, -ENOSPC, INITRD,
	  "initrd " IPATH " (48M) does not fit" },
	{ "PVH initrd too big", build_elf, 0, 60 * MIB, 0, -ENOSPC, INITRD,
	  "with --memory 64M" },
	{ "empty initrd", build_bz, 0, 0, 0, -EINVAL, INITRD, "empty file" },
	{ "cmdline too long", build_bz, 0, 0, 2048, -E2BIG, KERNEL,
	  "command line is 2048 bytes, longer than the 2047" },
	{ "PVH cmdline too long", build_elf, 0, 0, LAYOUT_CMDLINE_MAX, -E2BIG,
	  KERNEL, "command line is 65536 bytes" },
};

static void test_bad(void)
{
	uint8_t *k = malloc(SCRATCH), *initrd = calloc(1, 60 * MIB);
	char *cmd = malloc(LAYOUT_CMDLINE_MAX + 1);
	unsigned int i;

	for (i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		uint64_t ram_size = r->ram ? r->ram : GUEST_RAM;
		struct x86_boot_cfg cfg = {
			.kernel = k, .kernel_path = KPATH,
			.initrd_path = IPATH, .cmdline = cmd,
			.ram_size = ram_size, .rsdp_gpa = RSDP,
		};
		const char *path = r->who == KERNEL ? KPATH : IPATH;
		struct x86_boot_state st;
		char err[256];
		int rc;

		memset(cmd, 'a', r->cmdline_len);
		cmd[r->cmdline_len] = '\0';
		cfg.kernel_len = r->build(k);
		if (r->initrd_len) {
			cfg.initrd = initrd;
			cfg.initrd_len = r->initrd_len;
		} else if (r->who != INITRD) {
			cfg.initrd_path = NULL;
		}
		guest_reset(ram_size, 0);
		memset(err, 'x', sizeof(err));
		rc = x86_boot_load(&gm, &cfg, &st, err, sizeof(err));
		CHECK_EQ(rc, r->rc);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		CHECK(strstr(err, path) != NULL);
		CHECK(strstr(err, r->word) != NULL);
		if (rc != r->rc || !strstr(err, path) || !strstr(err, r->word))
			fprintf(stderr, "row \"%s\": rc %d, \"%s\"\n", r->name,
				rc, err);
	}
	free(cmd);
	free(initrd);
	free(k);
}

/* A too-small error buffer still gets a terminated (cut) message. */
static void test_small_err(void)
{
	uint8_t b[16] = { 0 };
	struct x86_boot_state st;
	char err[8];

	CHECK_EQ(load(b, sizeof(b), NULL, 0, NULL, GUEST_RAM, &st, err,
		      sizeof(err)), -EINVAL);
	CHECK_EQ(strlen(err), sizeof(err) - 1);
	CHECK_EQ(load(b, sizeof(b), NULL, 0, NULL, GUEST_RAM, &st, NULL, 0),
		 -EINVAL);
}

static void check_start_info(const struct x86_boot_state *st,
			     const char *cmd, size_t ilen)
{
	struct x86_pvh_start_info si;
	struct x86_pvh_module mod;
	struct x86_pvh_memmap_entry m;
	struct x86_e820_entry want[8];
	uint32_t i;
	int n = x86_boot_e820(GUEST_RAM, want, 8);

	memcpy(&si, ram + LAYOUT_BOOT_PARAMS_ADDR, sizeof(si));
	CHECK_EQ(si.magic, 0x336ec578);
	CHECK_EQ(si.version, 1);
	CHECK_EQ(si.flags, 0);
	CHECK_EQ(si.rsdp_paddr, RSDP);
	CHECK_EQ(si.cmdline_paddr, LAYOUT_CMDLINE_ADDR);
	CHECK(si.cmdline_paddr == LAYOUT_CMDLINE_ADDR &&
	      !strcmp((char *)ram + si.cmdline_paddr, cmd));
	CHECK_EQ(si.nr_modules, 1);
	CHECK(si.modlist_paddr >= LAYOUT_BOOT_PARAMS_ADDR + sizeof(si));
	memcpy(&mod, ram + si.modlist_paddr, sizeof(mod));
	CHECK_EQ(mod.paddr, st->initrd_addr);
	CHECK_EQ(mod.size, ilen);
	CHECK_EQ(mod.paddr % 4096, 0);
	CHECK(mod.paddr >= ELF_PADDR + ELF_MEMSZ);
	CHECK(mod.paddr + ilen <= GUEST_RAM && ram[mod.paddr] == 0xc3 &&
	      ram[mod.paddr + ilen - 1] == 0xc3);
	CHECK_EQ(si.memmap_entries, n);
	for (i = 0; i < si.memmap_entries && (int)i < n; i++) {
		memcpy(&m, ram + si.memmap_paddr + i * sizeof(m), sizeof(m));
		CHECK_EQ(m.addr, want[i].addr);
		CHECK_EQ(m.size, want[i].size);
		CHECK_EQ(m.type, want[i].type);
		CHECK_EQ(m.reserved, 0);
	}
	CHECK(si.memmap_paddr + n * sizeof(m) <=
	      LAYOUT_BOOT_PARAMS_ADDR + X86_ZERO_PAGE_SIZE);
}

static void test_elf_ok(void)
{
	static const struct {
		const char *name;
		struct elf_opts o;
	} rows[] = {
		{ "ELF64, PT_NOTE", { 1, 1, 4 } },
		{ "ELF64, 8-byte entry", { 1, 1, 8 } },
		{ "ELF64, SHT_NOTE only", { 1, 2, 4 } },
		{ "ELF32, PT_NOTE", { 0, 1, 4 } },
		{ "ELF32, SHT_NOTE only", { 0, 2, 4 } },
	};
	static const char cmd[] = "console=hvc0 pvh";
	uint8_t *k = malloc(SCRATCH), *initrd = malloc(5000);
	unsigned int i;
	size_t j;

	memset(initrd, 0xc3, 5000);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t klen = build_elf_opts(k, &rows[i].o);
		struct x86_boot_state st;
		char err[256];
		int rc, bss_ok = 1;

		guest_reset(GUEST_RAM, 0xaa);
		rc = load(k, klen, initrd, 5000, cmd, GUEST_RAM, &st, err,
			  sizeof(err));
		CHECK_EQ(rc, 0);
		if (rc)
			fprintf(stderr, "row \"%s\": %s\n", rows[i].name, err);
		CHECK_EQ(st.mode, X86_BOOT_PVH);
		CHECK_EQ(st.rip, ELF_ENTRY);
		CHECK_EQ(st.rbx, LAYOUT_BOOT_PARAMS_ADDR);
		CHECK_EQ(st.rflags, 2);
		CHECK(st.cr0 & X86_CR0_PE);
		CHECK(!(st.cr0 & X86_CR0_PG));
		CHECK_EQ(st.cr4, 0);
		CHECK_EQ(st.efer, 0);
		CHECK_EQ(st.cs_sel, 0x08);
		CHECK_EQ(st.ds_sel, 0x18);
		CHECK(!st.cs_long);
		CHECK(st.cs.db && !st.cs.l && st.cs.limit == 0xffffffff);
		CHECK_EQ(gdt_entry(&st, 0x08), 0x00cf9b000000ffffULL);
		CHECK_EQ(gdt_entry(&st, 0x18), 0x00cf93000000ffffULL);
		CHECK_EQ(st.kernel_addr, ELF_PADDR);
		CHECK_EQ(st.kernel_end, ELF_PADDR + ELF_MEMSZ);
		CHECK(!memcmp(ram + ELF_PADDR, k + ELF_DATA_OFF, ELF_FILESZ));
		for (j = ELF_FILESZ; j < ELF_MEMSZ; j++)
			if (ram[ELF_PADDR + j])
				bss_ok = 0;
		CHECK(bss_ok);
		CHECK_EQ(ram[ELF_PADDR + ELF_MEMSZ], 0xaa);
		check_start_info(&st, cmd, 5000);
	}
	free(initrd);
	free(k);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

/* Debian's linux-image-cloud-amd64 bzImage, from MICROVM_TEST_BZIMAGE. */
static void test_debian_kernel(void)
{
	const char *path = getenv("MICROVM_TEST_BZIMAGE");
	const uint64_t size = 256 * MIB;
	uint8_t *k, *big;
	size_t klen = 0, setup;
	struct x86_boot_state st;
	struct guest_mem saved = gm;
	char err[256];
	int rc;

	if (!path || !*path) {
		printf("real-kernel row not run here: MICROVM_TEST_BZIMAGE"
		       " unset (CTest's image.x86_debian_kernel runs it)\n");
		return;
	}
	k = read_file(path, &klen);
	CHECK(k != NULL);
	if (!k) {
		fprintf(stderr, "MICROVM_TEST_BZIMAGE '%s' unreadable\n",
			path);
		return;
	}
	big = calloc(1, size);
	CHECK(big != NULL);
	memset(&gm, 0, sizeof(gm));
	if (!big || guest_mem_add_region(&gm, 0, size, big))
		goto out;
	rc = x86_boot_load(&gm, &(struct x86_boot_cfg){
				   .kernel = k, .kernel_len = klen,
				   .kernel_path = path,
				   .cmdline = "console=ttyS0",
				   .ram_size = size, .rsdp_gpa = RSDP },
			   &st, err, sizeof(err));
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "debian kernel: %s\n", err);
	CHECK(st.protocol >= 0x020e);
	CHECK_EQ(st.kernel_addr, LAYOUT_HIMEM_START);
	CHECK_EQ(st.rip, LAYOUT_HIMEM_START + 0x200);
	setup = ((size_t)(k[0x1f1] ? k[0x1f1] : 4) + 1) * 512;
	CHECK(!memcmp(big + LAYOUT_HIMEM_START, k + setup, 4096));
	CHECK_EQ(((struct x86_boot_params *)(big + LAYOUT_BOOT_PARAMS_ADDR))
			 ->acpi_rsdp_addr, RSDP);
	printf("debian kernel: protocol %x, kernel end 0x%llx\n", st.protocol,
	       (unsigned long long)st.kernel_end);
out:
	gm = saved;
	free(big);
	free(k);
}

/*
 * --memory claims more RAM than guest memory backs: the bzImage's
 * init_size reaches past the backed part, which the loader never writes,
 * so only an explicit check refuses it (a fuzzer found this).
 */
static void test_unbacked(void)
{
	uint8_t *k = malloc(SCRATCH);
	struct x86_boot_state st;
	char err[256];
	int rc;

	CHECK(k != NULL);
	if (!k)
		return;
	guest_reset(BZ_PREF + BZ_INIT_SIZE / 2, 0);
	rc = x86_boot_load(&gm, &(struct x86_boot_cfg){
				   .kernel = k, .kernel_len = build_bz(k),
				   .kernel_path = KPATH, .cmdline = "",
				   .ram_size = GUEST_RAM, .rsdp_gpa = RSDP },
			   &st, err, sizeof(err));
	CHECK_EQ(rc, -EFAULT);
	CHECK(strstr(err, "guest memory ends at 0x1400000") != NULL);
	/* Backed to the kernel's end exactly: accepted. */
	guest_reset(BZ_PREF + BZ_INIT_SIZE, 0);
	rc = x86_boot_load(&gm, &(struct x86_boot_cfg){
				   .kernel = k, .kernel_len = build_bz(k),
				   .kernel_path = KPATH, .cmdline = "",
				   .ram_size = GUEST_RAM, .rsdp_gpa = RSDP },
			   &st, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(st.kernel_end, BZ_PREF + BZ_INIT_SIZE);
	free(k);
}

int main(void)
{
	ram = malloc(GUEST_RAM);
	if (!ram)
		return 1;
	test_e820();
	test_bzimage_ok();
	test_bzimage_variants();
	test_bad();
	test_small_err();
	test_unbacked();
	test_elf_ok();
	test_debian_kernel();
	free(ram);
	return test_done();
}
