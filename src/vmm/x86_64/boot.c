// SPDX-License-Identifier: Apache-2.0
/*
 * x86_64 loader core: recognises the kernel format and hands it to
 * boot_bzimage.c or boot_elf.c, and provides what both need: messages, the
 * e820 map, command line and initrd placement, the GDT and the identity
 * page tables. Guest ABI structures are written little-endian as laid out
 * in boot_abi.h (the host is x86_64, see CMakeLists.txt).
 */
#include "boot_priv.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

/* Offsets fixed by the boot protocol (zero-page.rst) and the PVH ABI. */
_Static_assert(sizeof(struct x86_e820_entry) == 20, "e820 entry");
_Static_assert(sizeof(struct x86_setup_header) == 0x26c - 0x1f1, "hdr");
_Static_assert(offsetof(struct x86_boot_params, acpi_rsdp_addr) == 0x070,
	       "acpi_rsdp_addr");
_Static_assert(offsetof(struct x86_boot_params, ext_ramdisk_image) == 0x0c0,
	       "ext_ramdisk_image");
_Static_assert(offsetof(struct x86_boot_params, e820_entries) == 0x1e8,
	       "e820_entries");
_Static_assert(offsetof(struct x86_boot_params, sentinel) == 0x1ef,
	       "sentinel");
_Static_assert(offsetof(struct x86_boot_params, hdr) == 0x1f1, "hdr");
_Static_assert(offsetof(struct x86_boot_params, hdr.version) == 0x206,
	       "version");
_Static_assert(offsetof(struct x86_boot_params, hdr.cmd_line_ptr) == 0x228,
	       "cmd_line_ptr");
_Static_assert(offsetof(struct x86_boot_params, hdr.init_size) == 0x260,
	       "init_size");
_Static_assert(offsetof(struct x86_boot_params, e820_table) == 0x2d0,
	       "e820_table");
_Static_assert(sizeof(struct x86_boot_params) == X86_ZERO_PAGE_SIZE, "page");
_Static_assert(sizeof(struct x86_pvh_start_info) == 56, "start_info");
_Static_assert(sizeof(struct x86_pvh_module) == 32, "modlist entry");
_Static_assert(sizeof(struct x86_pvh_memmap_entry) == 24, "memmap entry");
_Static_assert(BOOT_PVH_MODLIST_OFF >= sizeof(struct x86_pvh_start_info),
	       "modlist after start_info");
_Static_assert(LAYOUT_PML4_ADDR + X86_BOOT_PT_PAGES * BOOT_PAGE_SIZE <=
	       LAYOUT_CMDLINE_ADDR, "page tables below the command line");

static void __attribute__((format(printf, 3, 0)))
boot_vfail(struct boot_ctx *c, const char *prefix, const char *fmt,
	   va_list ap)
{
	int n;

	if (!c->errlen)
		return;
	n = snprintf(c->err, c->errlen, "%s", prefix);
	if (n < 0 || (size_t)n >= c->errlen)
		return;
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
}

int boot_fail(struct boot_ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	boot_vfail(c, "", fmt, ap);
	va_end(ap);
	return rc;
}

int boot_kfail(struct boot_ctx *c, int rc, const char *fmt, ...)
{
	const char *path = c->cfg->kernel_path;
	char prefix[512];
	va_list ap;

	if (path)
		snprintf(prefix, sizeof(prefix), "kernel %s: ", path);
	else
		snprintf(prefix, sizeof(prefix), "kernel: ");
	va_start(ap, fmt);
	boot_vfail(c, prefix, fmt, ap);
	va_end(ap);
	return rc;
}

void boot_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	const uint64_t mib = 1ULL << 20, gib = 1ULL << 30;

	if (bytes && !(bytes % gib))
		snprintf(buf, len, "%lluG", (unsigned long long)(bytes / gib));
	else if (bytes && !(bytes % mib))
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes / mib));
	else if (bytes >= mib)
		snprintf(buf, len, "%llu.%lluM",
			 (unsigned long long)(bytes / mib),
			 (unsigned long long)(bytes % mib * 10 / mib));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

int boot_write(struct boot_ctx *c, uint64_t gpa, const void *src,
	       uint64_t len, const char *what)
{
	void *p = guest_mem_ptr(c->gm, gpa, len);

	if (!p)
		return boot_fail(c, -EFAULT,
				 "guest memory does not back %s at 0x%llx (+0x%llx)",
				 what, (unsigned long long)gpa,
				 (unsigned long long)len);
	memcpy(p, src, len);
	return 0;
}

int boot_zero(struct boot_ctx *c, uint64_t gpa, uint64_t len,
	      const char *what)
{
	void *p = guest_mem_ptr(c->gm, gpa, len);

	if (!p)
		return boot_fail(c, -EFAULT,
				 "guest memory does not back %s at 0x%llx (+0x%llx)",
				 what, (unsigned long long)gpa,
				 (unsigned long long)len);
	memset(p, 0, len);
	return 0;
}

int boot_check_ram(struct boot_ctx *c, uint64_t end)
{
	const char *path = c->cfg->kernel_path ? c->cfg->kernel_path : "";
	const uint64_t mib = 1ULL << 20;
	char have[32], need[32];

	/*
	 * The kernel may claim up to end (init_size, p_memsz) without the
	 * loader writing it, so check that guest memory really backs it
	 * from 1 MiB, not only that --memory says it should.
	 */
	if (end <= c->low_end &&
	    guest_mem_ptr(c->gm, LAYOUT_HIMEM_START,
			  end > LAYOUT_HIMEM_START ? end - LAYOUT_HIMEM_START
						   : 0))
		return 0;
	if (end <= c->low_end)
		return boot_kfail(c, -EFAULT,
				  "needs RAM up to 0x%llx, but guest memory ends at 0x%llx",
				  (unsigned long long)end,
				  (unsigned long long)guest_mem_end(c->gm));
	boot_fmt_size(c->cfg->ram_size, have, sizeof(have));
	if (end > MMIO_HOLE_START)
		return boot_kfail(c, -ENOSPC,
				  "needs RAM up to 0x%llx, beyond the 0x%llx bytes below the MMIO hole",
				  (unsigned long long)end,
				  (unsigned long long)MMIO_HOLE_START);
	boot_fmt_size((end + mib - 1) / mib * mib, need, sizeof(need));
	return boot_fail(c, -ENOSPC,
			 "--memory %s is too small for kernel %s (needs at least %s)",
			 have, path, need);
}

int boot_put_cmdline(struct boot_ctx *c, uint64_t max)
{
	const char *s = c->cfg->cmdline ? c->cfg->cmdline : "";
	size_t len = strlen(s);

	if (max > LAYOUT_CMDLINE_MAX - 1)
		max = LAYOUT_CMDLINE_MAX - 1;
	if (len > max)
		return boot_kfail(c, -E2BIG,
				  "command line is %zu bytes, longer than the %llu bytes it accepts",
				  len, (unsigned long long)max);
	return boot_write(c, LAYOUT_CMDLINE_ADDR, s, len + 1, "the command line");
}

int boot_put_initrd(struct boot_ctx *c, uint64_t floor, uint64_t limit,
		    uint64_t *addr)
{
	const struct x86_boot_cfg *cfg = c->cfg;
	const char *path = cfg->initrd_path ? cfg->initrd_path : "";
	char size[32], ram[32];
	uint64_t top, at;

	*addr = 0;
	if (!cfg->initrd && !cfg->initrd_len && !cfg->initrd_path)
		return 0;
	if (!cfg->initrd_len)
		return boot_fail(c, -EINVAL, "initrd %s: empty file", path);
	if (!cfg->initrd)
		return boot_fail(c, -EINVAL, "initrd %s: no data", path);
	top = limit < c->low_end ? limit : c->low_end;
	floor = (floor + BOOT_PAGE_SIZE - 1) & ~(BOOT_PAGE_SIZE - 1);
	at = cfg->initrd_len <= top ?
		(top - cfg->initrd_len) & ~(BOOT_PAGE_SIZE - 1) : 0;
	if (cfg->initrd_len > top || at < floor) {
		boot_fmt_size(cfg->initrd_len, size, sizeof(size));
		boot_fmt_size(cfg->ram_size, ram, sizeof(ram));
		return boot_fail(c, -ENOSPC,
				 "initrd %s (%s) does not fit between the kernel's end 0x%llx and 0x%llx with --memory %s",
				 path, size, (unsigned long long)floor,
				 (unsigned long long)top, ram);
	}
	*addr = at;
	return boot_write(c, at, cfg->initrd, cfg->initrd_len, "the initrd");
}

/* The boot GDT, in selector order; every segment is flat 0..4 GiB. */
static const struct {
	uint16_t sel;
	uint8_t type; /* accessed bit set so the CPU never writes the GDT */
	uint8_t l, db;
} boot_gdt[] = {
	{ X86_BOOT_SEL_CODE32, 0xb, 0, 1 }, /* execute/read */
	{ X86_BOOT_SEL_CODE64, 0xb, 1, 0 },
	{ X86_BOOT_SEL_DATA, 0x3, 0, 1 },   /* read/write */
};

static struct x86_boot_seg boot_gdt_seg(unsigned int i)
{
	struct x86_boot_seg s = {
		.base = 0, .limit = 0xffffffff, .selector = boot_gdt[i].sel,
		.type = boot_gdt[i].type, .present = 1, .dpl = 0,
		.db = boot_gdt[i].db, .s = 1, .l = boot_gdt[i].l, .g = 1,
	};

	return s;
}

/* Descriptor layout: Intel SDM vol. 3 §3.4.5. Limit 0xfffff pages. */
static uint64_t boot_gdt_encode(const struct x86_boot_seg *s)
{
	uint64_t limit = s->g ? s->limit >> 12 : s->limit;

	return (limit & 0xffff) | (s->base & 0xffffff) << 16 |
	       (uint64_t)s->type << 40 | (uint64_t)s->s << 44 |
	       (uint64_t)s->dpl << 45 | (uint64_t)s->present << 47 |
	       ((limit >> 16) & 0xf) << 48 | (uint64_t)s->l << 53 |
	       (uint64_t)s->db << 54 | (uint64_t)s->g << 55 |
	       ((s->base >> 24) & 0xff) << 56;
}

int boot_put_gdt(struct boot_ctx *c, struct x86_boot_state *st,
		 uint16_t cs_sel)
{
	uint64_t gdt[X86_BOOT_GDT_ENTRIES] = { 0 };
	unsigned int i;

	for (i = 0; i < sizeof(boot_gdt) / sizeof(boot_gdt[0]); i++) {
		struct x86_boot_seg s = boot_gdt_seg(i);

		gdt[s.selector / 8] = boot_gdt_encode(&s);
		if (s.selector == cs_sel)
			st->cs = s;
		if (s.selector == X86_BOOT_SEL_DATA)
			st->ds = s;
	}
	st->gdt_base = LAYOUT_GDT_ADDR;
	st->gdt_limit = sizeof(gdt) - 1;
	st->cs_sel = st->cs.selector;
	st->ds_sel = st->ds.selector;
	st->cs_long = st->cs.l;
	return boot_write(c, LAYOUT_GDT_ADDR, gdt, sizeof(gdt), "the GDT");
}

int boot_put_page_tables(struct boot_ctx *c)
{
	const uint64_t pml4 = LAYOUT_PML4_ADDR;
	const uint64_t pdpt = pml4 + BOOT_PAGE_SIZE, pd = pdpt + BOOT_PAGE_SIZE;
	const uint64_t present_rw = 0x3, large = 0x80;
	uint64_t e;
	unsigned int i;
	int rc;

	rc = boot_zero(c, pml4, X86_BOOT_PT_PAGES * BOOT_PAGE_SIZE,
		       "the page tables");
	if (rc)
		return rc;
	e = pdpt | present_rw;
	rc = boot_write(c, pml4, &e, sizeof(e), "the PML4");
	for (i = 0; !rc && i < 4; i++) {
		e = (pd + i * BOOT_PAGE_SIZE) | present_rw;
		rc = boot_write(c, pdpt + i * 8, &e, sizeof(e), "the PDPT");
	}
	/* The four PDs are contiguous: entry i maps [i * 2 MiB, +2 MiB). */
	for (i = 0; !rc && i < 4 * 512; i++) {
		e = ((uint64_t)i << 21) | present_rw | large;
		rc = boot_write(c, pd + i * 8ULL, &e, sizeof(e), "a PD");
	}
	return rc;
}

int x86_boot_e820(uint64_t ram_size, struct x86_e820_entry *out, int max)
{
	struct x86_e820_entry e[5];
	uint64_t low = ram_size < MMIO_HOLE_START ? ram_size : MMIO_HOLE_START;
	int n = 0;

	e[n++] = (struct x86_e820_entry){
		0, low < LAYOUT_EBDA_START ? low : LAYOUT_EBDA_START,
		X86_E820_RAM };
	e[n++] = (struct x86_e820_entry){
		LAYOUT_EBDA_START, LAYOUT_HIMEM_START - LAYOUT_EBDA_START,
		X86_E820_RESERVED };
	if (low > LAYOUT_HIMEM_START)
		e[n++] = (struct x86_e820_entry){
			LAYOUT_HIMEM_START, low - LAYOUT_HIMEM_START,
			X86_E820_RAM };
	/* The PCI ECAM window, so the guest trusts MCFG from the start. */
	e[n++] = (struct x86_e820_entry){ PCI_ECAM_BASE, PCI_ECAM_SIZE,
					  X86_E820_RESERVED };
	if (ram_size > MMIO_HOLE_START)
		e[n++] = (struct x86_e820_entry){
			HIMEM_START, ram_size - MMIO_HOLE_START, X86_E820_RAM };
	if (n > max)
		return -ENOSPC;
	memcpy(out, e, n * sizeof(e[0]));
	return n;
}

static bool boot_is_bzimage(const uint8_t *k, size_t n)
{
	struct x86_setup_header h;

	if (n < offsetof(struct x86_setup_header, version) + X86_SETUP_HDR_OFF)
		return false;
	memcpy(&h, k + X86_SETUP_HDR_OFF,
	       offsetof(struct x86_setup_header, version));
	return h.boot_flag == X86_BOOT_FLAG && h.header == X86_HDRS_MAGIC;
}

int x86_boot_load(struct guest_mem *gm, const struct x86_boot_cfg *cfg,
		  struct x86_boot_state *st, char *err, size_t errlen)
{
	struct boot_ctx c = {
		.gm = gm, .cfg = cfg, .err = err, .errlen = errlen,
		.low_end = cfg->ram_size < MMIO_HOLE_START ?
			cfg->ram_size : MMIO_HOLE_START,
	};
	const uint8_t *k = cfg->kernel;
	size_t n = cfg->kernel_len;

	memset(st, 0, sizeof(*st));
	if (errlen)
		err[0] = '\0';
	if (!n)
		return boot_kfail(&c, -EINVAL,
				  "empty file, not a bzImage or x86_64 ELF kernel");
	if (!k)
		return boot_kfail(&c, -EINVAL, "no data");
	if (n >= SELFMAG && !memcmp(k, ELFMAG, SELFMAG))
		return boot_elf_load(&c, st);
	if (n >= 0x3c && !memcmp(k + 0x38, "ARM\x64", 4))
		return boot_kfail(&c, -EINVAL,
				  "arm64 Image, not an x86_64 kernel; this microvm runs x86_64 guests: give a bzImage (arch/x86/boot/bzImage) or Debian's vmlinuz-*-amd64");
	if (n >= 2 && k[0] == 0x1f && k[1] == 0x8b)
		return boot_kfail(&c, -EINVAL,
				  "gzip-compressed file (an arm64 vmlinuz?), not a bzImage or x86_64 ELF kernel; give a bzImage or Debian's vmlinuz-*-amd64");
	if (boot_is_bzimage(k, n))
		return boot_bzimage_load(&c, st);
	return boot_kfail(&c, -EINVAL,
			  "not a bzImage or x86_64 ELF kernel (%zu bytes, no boot signature)",
			  n);
}
