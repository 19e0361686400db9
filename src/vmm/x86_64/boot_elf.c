// SPDX-License-Identifier: Apache-2.0
/*
 * ELF vmlinux loading through the PVH entry: find the Xen
 * XEN_ELFNOTE_PHYS32_ENTRY note, copy the PT_LOAD segments to their
 * physical addresses, write hvm_start_info with the memory map and initrd
 * module, and start the vCPU in flat 32-bit protected mode, paging off.
 * The file is untrusted: every offset and size is checked before use.
 */
#include "boot_priv.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "layout.h"

/* ELF32 and ELF64 headers reduced to what the loader uses. */
struct elf_file {
	bool is64;
	uint16_t type, machine; /* same offsets in ELF32 and ELF64 */
	uint64_t phoff, shoff;
	uint64_t phentsize, phnum, shentsize, shnum;
};

struct elf_seg {
	uint32_t type;
	uint64_t offset, paddr, filesz, memsz, align;
};

static const struct {
	uint16_t machine;
	const char *name;
} elf_machines[] = {
	{ EM_AARCH64, "aarch64" }, { EM_ARM, "arm" },
	{ EM_RISCV, "riscv" },     { EM_PPC64, "ppc64" },
	{ EM_S390, "s390" },       { EM_MIPS, "mips" },
};

static int elf_bad_machine(struct boot_ctx *c, uint16_t machine)
{
	unsigned int i;

	for (i = 0; i < sizeof(elf_machines) / sizeof(elf_machines[0]); i++)
		if (elf_machines[i].machine == machine)
			return boot_kfail(c, -EINVAL,
					  "ELF for %s, not an x86_64 kernel",
					  elf_machines[i].name);
	return boot_kfail(c, -EINVAL,
			  "ELF for machine %u, not an x86_64 kernel", machine);
}

static int elf_read_header(struct boot_ctx *c, struct elf_file *f)
{
	const uint8_t *k = c->cfg->kernel;
	size_t n = c->cfg->kernel_len;
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;

	if (n < EI_NIDENT || (k[EI_CLASS] != ELFCLASS32 &&
			      k[EI_CLASS] != ELFCLASS64))
		return boot_kfail(c, -EINVAL, "ELF of unknown class");
	f->is64 = k[EI_CLASS] == ELFCLASS64;
	if (n < (f->is64 ? sizeof(e64) : sizeof(e32)))
		return boot_kfail(c, -EINVAL,
				  "truncated (ELF header needs %zu bytes, file has %zu)",
				  f->is64 ? sizeof(e64) : sizeof(e32), n);
	if (k[EI_DATA] != ELFDATA2LSB)
		return boot_kfail(c, -EINVAL,
				  "big-endian ELF, not an x86_64 kernel");
	if (f->is64) {
		memcpy(&e64, k, sizeof(e64));
		f->type = e64.e_type;
		f->machine = e64.e_machine;
		f->phoff = e64.e_phoff;
		f->phentsize = e64.e_phentsize;
		f->phnum = e64.e_phnum;
		f->shoff = e64.e_shoff;
		f->shentsize = e64.e_shentsize;
		f->shnum = e64.e_shnum;
	} else {
		memcpy(&e32, k, sizeof(e32));
		f->type = e32.e_type;
		f->machine = e32.e_machine;
		f->phoff = e32.e_phoff;
		f->phentsize = e32.e_phentsize;
		f->phnum = e32.e_phnum;
		f->shoff = e32.e_shoff;
		f->shentsize = e32.e_shentsize;
		f->shnum = e32.e_shnum;
	}
	if (f->machine != EM_X86_64 && f->machine != EM_386)
		return elf_bad_machine(c, f->machine);
	if (f->type != ET_EXEC)
		return boot_kfail(c, -EINVAL,
				  "ELF type %u is not an executable (ET_EXEC)",
				  f->type);
	return 0;
}

/* Is the table of @num entries of @entsize bytes at @off inside the file? */
static bool elf_table_ok(size_t n, uint64_t off, uint64_t entsize,
			 uint64_t num)
{
	return off <= n && entsize * num <= n - off;
}

/* Program header @i; the table was checked against the file size. */
static void elf_get_phdr(struct boot_ctx *c, const struct elf_file *f,
			 unsigned int i, struct elf_seg *s)
{
	const uint8_t *p = c->cfg->kernel + f->phoff + i * f->phentsize;
	Elf64_Phdr p64;
	Elf32_Phdr p32;

	if (f->is64) {
		memcpy(&p64, p, sizeof(p64));
		*s = (struct elf_seg){ p64.p_type, p64.p_offset, p64.p_paddr,
				       p64.p_filesz, p64.p_memsz,
				       p64.p_align };
	} else {
		memcpy(&p32, p, sizeof(p32));
		*s = (struct elf_seg){ p32.p_type, p32.p_offset, p32.p_paddr,
				       p32.p_filesz, p32.p_memsz,
				       p32.p_align };
	}
}

/*
 * Walk the notes in [off, off + len) of the file (already bounds-checked).
 * Returns 1 with *entry set when the PVH note is found, 0 when absent.
 */
static int elf_scan_notes(struct boot_ctx *c, uint64_t off, uint64_t len,
			  uint64_t align, uint64_t *entry)
{
	const uint8_t *k = c->cfg->kernel;
	const uint64_t a = align == 8 ? 8 : 4;
	Elf64_Nhdr nh; /* same layout for ELF32 and ELF64 */

	while (len >= sizeof(nh)) {
		uint64_t name_len, desc_len;
		const uint8_t *name, *desc;

		memcpy(&nh, k + off, sizeof(nh));
		off += sizeof(nh);
		len -= sizeof(nh);
		name_len = ((uint64_t)nh.n_namesz + a - 1) & ~(a - 1);
		desc_len = ((uint64_t)nh.n_descsz + a - 1) & ~(a - 1);
		if (name_len > len || desc_len > len - name_len) {
			off -= sizeof(nh);
			return boot_kfail(c, -EINVAL,
					  "ELF note at 0x%llx overruns its section",
					  (unsigned long long)off);
		}
		name = k + off;
		desc = name + name_len;
		off += name_len + desc_len;
		len -= name_len + desc_len;
		if (nh.n_type != X86_PVH_NOTE_PHYS32_ENTRY ||
		    nh.n_namesz != sizeof(X86_PVH_NOTE_NAME) ||
		    memcmp(name, X86_PVH_NOTE_NAME, nh.n_namesz))
			continue;
		if (nh.n_descsz == 4) {
			uint32_t e32;

			memcpy(&e32, desc, 4);
			*entry = e32;
		} else if (nh.n_descsz == 8) {
			memcpy(entry, desc, 8);
		} else {
			return boot_kfail(c, -EINVAL,
					  "PVH entry note has a %u-byte value (need 4 or 8)",
					  nh.n_descsz);
		}
		return 1;
	}
	return 0;
}

/* Scan SHT_NOTE sections; a missing or malformed table is skipped. */
static int elf_scan_note_sections(struct boot_ctx *c,
				  const struct elf_file *f, uint64_t *entry)
{
	size_t n = c->cfg->kernel_len;
	unsigned int i;
	int rc;

	if (!f->shnum || f->shentsize < (f->is64 ? sizeof(Elf64_Shdr) :
					 sizeof(Elf32_Shdr)) ||
	    !elf_table_ok(n, f->shoff, f->shentsize, f->shnum))
		return 0;
	for (i = 0; i < f->shnum; i++) {
		const uint8_t *p = c->cfg->kernel + f->shoff +
				   i * f->shentsize;
		Elf64_Shdr s64;
		Elf32_Shdr s32;

		if (f->is64) {
			memcpy(&s64, p, sizeof(s64));
		} else {
			memcpy(&s32, p, sizeof(s32));
			s64.sh_type = s32.sh_type;
			s64.sh_offset = s32.sh_offset;
			s64.sh_size = s32.sh_size;
			s64.sh_addralign = s32.sh_addralign;
		}
		if (s64.sh_type != SHT_NOTE ||
		    !elf_table_ok(n, s64.sh_offset, 1, s64.sh_size))
			continue;
		rc = elf_scan_notes(c, s64.sh_offset, s64.sh_size,
				    s64.sh_addralign, entry);
		if (rc)
			return rc;
	}
	return 0;
}

/* The PVH entry from a PT_NOTE segment, else from a SHT_NOTE section. */
static int elf_find_entry(struct boot_ctx *c, const struct elf_file *f,
			  uint64_t *entry)
{
	size_t n = c->cfg->kernel_len;
	struct elf_seg s;
	unsigned int i;
	int rc;

	for (i = 0; i < f->phnum; i++) {
		elf_get_phdr(c, f, i, &s);
		if (s.type != PT_NOTE)
			continue;
		if (!elf_table_ok(n, s.offset, 1, s.filesz))
			return boot_kfail(c, -EINVAL,
					  "truncated (ELF note segment %u past the end of the file)",
					  i);
		rc = elf_scan_notes(c, s.offset, s.filesz, s.align, entry);
		if (rc)
			return rc;
	}
	rc = elf_scan_note_sections(c, f, entry);
	if (rc)
		return rc;
	return boot_kfail(c, -EINVAL,
			  "ELF has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build with CONFIG_PVH=y or use the bzImage");
}

static int elf_check_seg(struct boot_ctx *c, unsigned int i,
			 const struct elf_seg *s)
{
	size_t n = c->cfg->kernel_len;

	if (s->filesz > s->memsz)
		return boot_kfail(c, -EINVAL,
				  "ELF segment %u: p_filesz 0x%llx exceeds p_memsz 0x%llx",
				  i, (unsigned long long)s->filesz,
				  (unsigned long long)s->memsz);
	if (!elf_table_ok(n, s->offset, 1, s->filesz))
		return boot_kfail(c, -EINVAL,
				  "truncated (ELF segment %u needs bytes 0x%llx+0x%llx, file has %zu)",
				  i, (unsigned long long)s->offset,
				  (unsigned long long)s->filesz, n);
	if (s->paddr < LAYOUT_HIMEM_START)
		return boot_kfail(c, -EINVAL,
				  "ELF segment %u at 0x%llx overlaps the boot area below 1 MiB",
				  i, (unsigned long long)s->paddr);
	if (s->paddr >= MMIO_HOLE_START ||
	    s->memsz > MMIO_HOLE_START - s->paddr)
		return boot_kfail(c, -EINVAL,
				  "ELF segment %u [0x%llx, +0x%llx) is outside guest RAM below 0x%llx",
				  i, (unsigned long long)s->paddr,
				  (unsigned long long)s->memsz,
				  (unsigned long long)MMIO_HOLE_START);
	return boot_check_ram(c, s->paddr + s->memsz);
}

/* Validate every PT_LOAD and the entry; report the kernel's extent. */
static int elf_check_segs(struct boot_ctx *c, const struct elf_file *f,
			  uint64_t entry, uint64_t *lo, uint64_t *hi)
{
	bool entry_ok = false;
	struct elf_seg s;
	unsigned int i;
	int rc;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < f->phnum; i++) {
		elf_get_phdr(c, f, i, &s);
		if (s.type != PT_LOAD || !s.memsz)
			continue;
		rc = elf_check_seg(c, i, &s);
		if (rc)
			return rc;
		if (s.paddr < *lo)
			*lo = s.paddr;
		if (s.paddr + s.memsz > *hi)
			*hi = s.paddr + s.memsz;
		if (entry >= s.paddr && entry - s.paddr < s.filesz)
			entry_ok = true;
	}
	if (!*hi)
		return boot_kfail(c, -EINVAL, "ELF has no PT_LOAD segment");
	if (!entry_ok)
		return boot_kfail(c, -EINVAL,
				  "PVH entry 0x%llx is not inside a loaded segment",
				  (unsigned long long)entry);
	return 0;
}

static int elf_load_segs(struct boot_ctx *c, const struct elf_file *f)
{
	struct elf_seg s;
	unsigned int i;
	int rc = 0;

	for (i = 0; !rc && i < f->phnum; i++) {
		elf_get_phdr(c, f, i, &s);
		if (s.type != PT_LOAD || !s.memsz)
			continue;
		rc = boot_write(c, s.paddr, c->cfg->kernel + s.offset,
				s.filesz, "an ELF segment");
		if (!rc)
			rc = boot_zero(c, s.paddr + s.filesz,
				       s.memsz - s.filesz, "an ELF segment");
	}
	return rc;
}

static int elf_put_start_info(struct boot_ctx *c, uint64_t initrd)
{
	struct x86_e820_entry e820[BOOT_PVH_MEMMAP_MAX];
	uint8_t page[X86_ZERO_PAGE_SIZE];
	struct x86_pvh_start_info si = {
		.magic = X86_PVH_START_MAGIC,
		.version = X86_PVH_START_VERSION,
		.cmdline_paddr = LAYOUT_CMDLINE_ADDR,
		.rsdp_paddr = c->cfg->rsdp_gpa,
		.memmap_paddr = LAYOUT_BOOT_PARAMS_ADDR + BOOT_PVH_MEMMAP_OFF,
	};
	int i, n;

	memset(page, 0, sizeof(page));
	if (initrd) {
		struct x86_pvh_module mod = {
			.paddr = initrd, .size = c->cfg->initrd_len,
		};

		si.nr_modules = 1;
		si.modlist_paddr = LAYOUT_BOOT_PARAMS_ADDR +
				   BOOT_PVH_MODLIST_OFF;
		memcpy(page + BOOT_PVH_MODLIST_OFF, &mod, sizeof(mod));
	}
	n = x86_boot_e820(c->cfg->ram_size, e820, BOOT_PVH_MEMMAP_MAX);
	if (n < 0)
		return boot_fail(c, n, "memory map does not fit start_info");
	for (i = 0; i < n; i++) {
		struct x86_pvh_memmap_entry m = {
			.addr = e820[i].addr, .size = e820[i].size,
			.type = e820[i].type,
		};

		memcpy(page + BOOT_PVH_MEMMAP_OFF + i * sizeof(m), &m,
		       sizeof(m));
	}
	si.memmap_entries = n;
	memcpy(page, &si, sizeof(si));
	return boot_write(c, LAYOUT_BOOT_PARAMS_ADDR, page, sizeof(page),
			  "the PVH start_info");
}

int boot_elf_load(struct boot_ctx *c, struct x86_boot_state *st)
{
	uint64_t entry = 0, lo = 0, hi = 0, initrd = 0;
	struct elf_file f = { 0 };
	int rc;

	rc = elf_read_header(c, &f);
	if (rc)
		return rc;
	if (!f.phnum || f.phentsize < (f.is64 ? sizeof(Elf64_Phdr) :
				       sizeof(Elf32_Phdr)))
		return boot_kfail(c, -EINVAL, "ELF has no usable program headers");
	if (!elf_table_ok(c->cfg->kernel_len, f.phoff, f.phentsize, f.phnum))
		return boot_kfail(c, -EINVAL,
				  "truncated (ELF program headers past the end of the file)");
	rc = elf_find_entry(c, &f, &entry);
	if (rc < 0)
		return rc;
	rc = elf_check_segs(c, &f, entry, &lo, &hi);
	if (!rc)
		rc = boot_put_cmdline(c, LAYOUT_CMDLINE_MAX - 1);
	if (!rc)
		rc = boot_put_initrd(c, hi, MMIO_HOLE_START, &initrd);
	if (!rc)
		rc = elf_load_segs(c, &f);
	if (!rc)
		rc = elf_put_start_info(c, initrd);
	if (!rc)
		rc = boot_put_gdt(c, st, X86_BOOT_SEL_CODE32);
	if (rc)
		return rc;
	st->mode = X86_BOOT_PVH;
	st->rip = entry;
	st->rbx = LAYOUT_BOOT_PARAMS_ADDR;
	st->rsp = LAYOUT_BOOT_STACK;
	st->rflags = X86_RFLAGS_FIXED;
	st->cr0 = X86_CR0_PE | X86_CR0_ET;
	st->kernel_addr = lo;
	st->kernel_end = hi;
	st->initrd_addr = initrd;
	return 0;
}
