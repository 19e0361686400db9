// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the arm64 kernel loader (src/vmm/aarch64/boot_image.c):
 * synthetic Image headers (one table row per parse error, and a check that
 * every error has a row), placement of kernel, initrd and device tree per
 * booting.rst in a malloc'd guest, gzip'd Images made here with zlib, and
 * the refusals: truncated or corrupt gzip, a gzip bomb larger than RAM,
 * an Image larger than RAM, a bzImage; and the hand-off to the device
 * tree (dtb.c), read back from guest RAM. When ARM64_TEST_KERNEL names a real
 * Image, Image.gz or vmlinuz-*-arm64 it is loaded too: CTest's
 * image.arm64_debian_kernel sets it to the arm64 tier's Debian kernel, and
 * there a missing file is a failure (unset, that row alone is left out).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfdt.h>
#include <zlib.h>

#include "boot_image.h"
#include "dtb.h"
#include "layout.h"
#include "test.h"

#define MIB (1ULL << 20)
#define RAM_SIZE (64 * MIB)
#define KPATH "/test/Image"
#define IMG_BODY (1 * MIB)          /* file bytes after the header */
#define IMG_SIZE (3 * MIB)          /* image_size: file + bss */
#define INITRD_LEN (300 * 1024 + 5) /* not page-sized on purpose */
#define BOMB_LEN (100 * MIB)        /* inflated size of the bomb */

static uint8_t *ram;
static struct guest_mem gm;
static uint8_t *img, *initrd;
static size_t img_len;

static void guest_reset(uint64_t size)
{
	memset(&gm, 0, sizeof(gm));
	memset(ram, 0xee, RAM_SIZE);
	if (guest_mem_add_region(&gm, ARM64_RAM_BASE, size, ram))
		abort();
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* An Image: header, then a pattern; @body bytes after the header. */
static size_t build_image(uint8_t *b, uint64_t text_offset,
			  uint64_t image_size, uint64_t flags, size_t body)
{
	size_t i;

	memset(b, 0, ARM64_IMAGE_HDR_SIZE);
	memcpy(b, "\x0f\x00\x00\x14", 4); /* b +0x3c, like code0 */
	put_le64(b + ARM64_IMAGE_TEXT_OFFSET_OFF, text_offset);
	put_le64(b + ARM64_IMAGE_SIZE_OFF, image_size);
	put_le64(b + ARM64_IMAGE_FLAGS_OFF, flags);
	memcpy(b + ARM64_IMAGE_MAGIC_OFF, ARM64_IMAGE_MAGIC, 4);
	for (i = 0; i < body; i++)
		b[ARM64_IMAGE_HDR_SIZE + i] = (uint8_t)(i * 13 + 7);
	return ARM64_IMAGE_HDR_SIZE + body;
}

/* gzip of @len bytes of @src, or of @zeros zero bytes after it. */
static uint8_t *gzip(const uint8_t *src, size_t len, size_t zeros,
		     size_t *out_len)
{
	static uint8_t zbuf[1 << 16];
	size_t cap = len + len / 8 + (zeros >> 9) + 4096, n = 0;
	uint8_t *out = malloc(cap);
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	memset(zbuf, 0, sizeof(zbuf));
	if (!out || deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9,
				 Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)len;
	for (;;) {
		int flush = zeros ? Z_NO_FLUSH : Z_FINISH;

		if (!zs.avail_in && zeros) {
			zs.next_in = zbuf;
			zs.avail_in = zeros > sizeof(zbuf) ? sizeof(zbuf)
							   : zeros;
			zeros -= zs.avail_in;
			flush = zeros ? Z_NO_FLUSH : Z_FINISH;
		}
		zs.next_out = out + n;
		zs.avail_out = (uInt)(cap - n);
		if (deflate(&zs, flush) == Z_STREAM_END) {
			n = cap - zs.avail_out;
			break;
		}
		n = cap - zs.avail_out;
		if (n == cap)
			abort();
	}
	deflateEnd(&zs);
	*out_len = n;
	return out;
}

static struct arm64_boot_cfg cfg_for(const uint8_t *k, size_t len,
				     bool with_initrd)
{
	struct arm64_boot_cfg cfg = {
		.kernel = k, .kernel_len = len, .kernel_path = KPATH,
		.initrd = with_initrd ? initrd : NULL,
		.initrd_len = with_initrd ? INITRD_LEN : 0,
		.initrd_path = "/test/initrd",
		.ram_base = ARM64_RAM_BASE, .ram_size = RAM_SIZE,
		.memory = RAM_SIZE,
	};

	return cfg;
}

static uint8_t *gpa(uint64_t a)
{
	return ram + (a - ARM64_RAM_BASE);
}

/* Kernel at base + text_offset, initrd under the top 2 MiB, DTB there. */
static void check_placement(const struct arm64_boot_state *st,
			    uint64_t text_offset, const uint8_t *k,
			    size_t klen)
{
	uint64_t dtb = ARM64_RAM_BASE + RAM_SIZE - 2 * MIB;

	CHECK_EQ(st->kernel_addr, ARM64_RAM_BASE + text_offset);
	CHECK_EQ(st->entry, st->kernel_addr);
	CHECK_EQ(st->kernel_len, klen);
	CHECK(!memcmp(gpa(st->kernel_addr), k, klen));
	CHECK_EQ(st->kernel_end, st->kernel_addr +
		 (IMG_SIZE > klen ? IMG_SIZE : klen));
	CHECK_EQ(st->dtb_addr, dtb);
	CHECK_EQ(st->dtb_addr % 8, 0);
	CHECK_EQ(st->dtb_max, DTB_MAX_SIZE);
	CHECK_EQ(st->initrd_size, INITRD_LEN);
	CHECK_EQ(st->initrd_addr % 4096, 0);
	CHECK(st->initrd_addr + INITRD_LEN <= dtb);
	CHECK(dtb - (st->initrd_addr + INITRD_LEN) < 4096);
	CHECK(st->initrd_addr >= st->kernel_end);
	CHECK(!memcmp(gpa(st->initrd_addr), initrd, INITRD_LEN));
}

static void test_plain(void)
{
	static const uint64_t offsets[] = { 0, 0x80000 };
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		img_len = build_image(img, offsets[i], IMG_SIZE, 0xa, IMG_BODY);
		guest_reset(RAM_SIZE);
		cfg = cfg_for(img, img_len, true);
		CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
		CHECK(!st.gzip);
		CHECK_EQ(st.info.page_kib, 4);
		check_placement(&st, offsets[i], img, img_len);
	}
	/* Before 3.17: image_size 0, text_offset taken as 0x80000. */
	img_len = build_image(img, 0x12345, 0, 0, IMG_BODY);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(img, img_len, false);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	CHECK_EQ(st.kernel_addr, ARM64_RAM_BASE + 0x80000);
	CHECK_EQ(st.kernel_end, st.kernel_addr + img_len);
	CHECK_EQ(st.initrd_addr, 0);
}

static void test_gzip(void)
{
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];
	size_t zlen;
	uint8_t *z;

	img_len = build_image(img, 0, IMG_SIZE, 0xa, IMG_BODY);
	z = gzip(img, img_len, 0, &zlen);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(z, zlen, true);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	CHECK(st.gzip);
	check_placement(&st, 0, img, img_len);
	free(z);
}

/*
 * 100 MiB of zeros behind a header claiming 1 MiB: the loader stops at
 * the room below the initrd (60 MiB here) and leaves the initrd and the
 * device tree block alone.
 */
static void test_gzip_bomb(void)
{
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	uint64_t dtb = ARM64_RAM_BASE + RAM_SIZE - 2 * MIB, limit;
	char err[256];
	size_t zlen, i, bad = 0;
	uint8_t *z;

	build_image(img, 0, MIB, 0xa, 0);
	z = gzip(img, ARM64_IMAGE_HDR_SIZE, BOMB_LEN, &zlen);
	CHECK(zlen < BOMB_LEN / 100);
	guest_reset(RAM_SIZE);
	memset(initrd, 0x5a, INITRD_LEN);
	cfg = cfg_for(z, zlen, true);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "kernel " KPATH ": the gzip inflates past") != NULL);
	CHECK(strstr(err, "give --memory more") != NULL);
	/*
	 * The room was filled up to the initrd's place, not one byte
	 * further: the initrd slot and the DTB block are as they were.
	 */
	limit = (dtb - INITRD_LEN) & ~4095ULL;
	for (i = 0; i < ARM64_RAM_BASE + RAM_SIZE - limit; i++)
		bad += gpa(limit)[i] != 0xee;
	CHECK_EQ(bad, 0);
	CHECK_EQ(gpa(limit)[-1], 0);
	free(z);
}

struct bad_row {
	const char *name;
	size_t (*make)(uint8_t *b); /* returns the file length */
	bool gzip_it;
	int rc;
	const char *msg;
};

static size_t too_short(uint8_t *b)
{
	build_image(b, 0, IMG_SIZE, 0xa, 0);
	return 40;
}

static size_t bad_magic(uint8_t *b)
{
	size_t n = build_image(b, 0, IMG_SIZE, 0xa, 4096);

	b[ARM64_IMAGE_MAGIC_OFF + 3] = 0x32;
	return n;
}

static size_t big_endian(uint8_t *b)
{
	return build_image(b, 0, IMG_SIZE, 0xb, 4096);
}

/* The x86 boot sector signature and the setup header's "HdrS". */
static size_t bzimage(uint8_t *b)
{
	memset(b, 0, 8192);
	b[0x1fe] = 0x55;
	b[0x1ff] = 0xaa;
	memcpy(b + 0x202, "HdrS", 4);
	return 8192;
}

static size_t elf(uint8_t *b)
{
	memset(b, 0, 4096);
	memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
	return 4096;
}

static size_t too_big(uint8_t *b)
{
	return build_image(b, 0, 200 * MIB, 0xa, 4096);
}

static size_t far_text_offset(uint8_t *b)
{
	return build_image(b, 1ULL << 40, IMG_SIZE, 0xa, 4096);
}

static size_t empty(uint8_t *b)
{
	(void)b;
	return 0;
}

static void test_bad_images(void)
{
	static const struct bad_row rows[] = {
		{ "empty", empty, false, -EINVAL, "empty file" },
		{ "truncated", too_short, false, -EINVAL, "truncated" },
		{ "bad magic", bad_magic, false, -EINVAL, "no \"ARM\\x64\" magic" },
		{ "big-endian", big_endian, false, -EINVAL, "big-endian" },
		{ "bzImage", bzimage, false, -EINVAL, "an x86 bzImage" },
		{ "ELF", elf, false, -EINVAL, "an ELF file" },
		{ "larger than RAM", too_big, false, -ENOSPC,
		  "the Image needs 200M" },
		{ "text_offset past RAM", far_text_offset, false, -ENOSPC,
		  "text_offset 0x10000000000" },
		{ "gzip'd bzImage", bzimage, true, -EINVAL,
		  "inflated data: an x86 bzImage" },
		{ "gzip'd truncated", too_short, true, -EINVAL,
		  "inflated data: truncated" },
		{ "gzip'd larger than RAM", too_big, true, -ENOSPC,
		  "the Image needs 200M" },
	};
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];
	unsigned int i;
	size_t n, zlen;
	uint8_t *z = NULL;
	int ret;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = rows[i].make(img);
		if (rows[i].gzip_it)
			z = gzip(img, n, 0, &zlen);
		guest_reset(RAM_SIZE);
		cfg = cfg_for(z && rows[i].gzip_it ? z : img,
			      rows[i].gzip_it ? zlen : n, true);
		ret = arm64_boot_load(&gm, &cfg, &st, err, sizeof(err));
		if (ret != rows[i].rc || !strstr(err, rows[i].msg))
			fprintf(stderr, "row '%s': %d '%s'\n", rows[i].name,
				ret, err);
		CHECK_EQ(ret, rows[i].rc);
		CHECK(strstr(err, rows[i].msg) != NULL);
		CHECK(!strncmp(err, "kernel " KPATH ": ", 8 + strlen(KPATH)));
		free(z);
		z = NULL;
	}
}

/* A truncated and a corrupted gzip of a good Image. */
static void test_bad_gzip(void)
{
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];
	size_t zlen;
	uint8_t *z;

	img_len = build_image(img, 0, IMG_SIZE, 0xa, IMG_BODY);
	z = gzip(img, img_len, 0, &zlen);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(z, zlen / 2, false);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "gzip data ends early") != NULL);
	memset(z + 20, 0xff, 64);
	cfg = cfg_for(z, zlen, false);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "gzip data does not inflate") != NULL);
	/* Only the two magic bytes: a gzip with no header at all. */
	cfg = cfg_for((const uint8_t *)"\x1f\x8b", 2, false);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "gzip data ends early") != NULL);
	free(z);
}

static void test_small_ram(void)
{
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];

	img_len = build_image(img, 0, IMG_SIZE, 0xa, IMG_BODY);
	guest_reset(4 * MIB);
	cfg = cfg_for(img, img_len, false);
	cfg.ram_size = cfg.memory = 4 * MIB - 1;
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "--memory 4M is too small") != NULL);
	/* The kernel fits, the initrd does not, beside it. */
	guest_reset(8 * MIB);
	cfg = cfg_for(img, img_len, true);
	cfg.ram_size = cfg.memory = 5 * MIB;
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "the Image needs 3M at 0x40000000, --memory 5M leaves 1M there") != NULL);
	CHECK(strstr(err, "give --memory 6M or more") != NULL);
	/* The memory it names is enough. */
	cfg.ram_size = cfg.memory = 6 * MIB;
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	cfg.ram_base += 4096;
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not 2M-aligned") != NULL);
}

static void test_put_dtb(void)
{
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	static uint8_t blob[DTB_MAX_SIZE + 1];
	char err[256];

	img_len = build_image(img, 0, IMG_SIZE, 0xa, IMG_BODY);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(img, img_len, false);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	memset(blob, 0x3c, sizeof(blob));
	CHECK_EQ(arm64_boot_put_dtb(&gm, &st, blob, DTB_MAX_SIZE + 1, err,
				    sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "at most 2097152") != NULL);
	CHECK_EQ(arm64_boot_put_dtb(&gm, &st, blob, 4096, err, sizeof(err)),
		 0);
	CHECK(!memcmp(gpa(st.dtb_addr), blob, 4096));
	CHECK_EQ(gpa(st.dtb_addr)[4096], 0xee);
}

/*
 * The whole boot hand-off: load kernel and initrd, describe the machine
 * from what was placed, build the tree and put it where the loader said;
 * read back from guest RAM, /chosen names the initrd that is there and
 * the memory node covers kernel, initrd and the tree.
 */
static void test_handoff(void)
{
	static uint8_t blob[64 * 1024];
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	uint64_t mpidr = 1ULL << 31, start, end, base, size;
	struct dtb_desc d;
	const fdt32_t *p;
	const void *fdt;
	char err[256];
	size_t len;
	int node, plen;

	img_len = build_image(img, 0, IMG_SIZE, 0xa, IMG_BODY);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(img, img_len, true);
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	dtb_desc_init(&d);
	d.ram[0] = (struct dtb_range){ cfg.ram_base, cfg.ram_size };
	d.nr_ram = 1;
	d.mpidr = &mpidr;
	d.nr_cpus = 1;
	d.cmdline = "console=ttyAMA0";
	d.initrd_start = st.initrd_addr;
	d.initrd_size = st.initrd_size;
	CHECK_EQ(dtb_build(&d, blob, st.dtb_max < sizeof(blob) ?
			   st.dtb_max : sizeof(blob), &len, err, sizeof(err)),
		 0);
	CHECK_EQ(arm64_boot_put_dtb(&gm, &st, blob, len, err, sizeof(err)), 0);
	fdt = gpa(st.dtb_addr);
	CHECK_EQ(fdt_check_header(fdt), 0);
	if (fdt_check_header(fdt))
		return; /* nothing to read back */
	node = fdt_path_offset(fdt, "/chosen");
	p = fdt_getprop(fdt, node, "linux,initrd-start", &plen);
	start = p && plen == 8 ? (uint64_t)fdt32_to_cpu(p[0]) << 32 |
				 fdt32_to_cpu(p[1]) : 0;
	p = fdt_getprop(fdt, node, "linux,initrd-end", &plen);
	end = p && plen == 8 ? (uint64_t)fdt32_to_cpu(p[0]) << 32 |
			       fdt32_to_cpu(p[1]) : 0;
	CHECK_EQ(start, st.initrd_addr);
	CHECK_EQ(end - start, INITRD_LEN);
	CHECK(!memcmp(gpa(start), initrd, INITRD_LEN));
	node = fdt_path_offset(fdt, "/memory@40000000");
	p = fdt_getprop(fdt, node, "reg", &plen);
	CHECK(p && plen == 16);
	base = p ? (uint64_t)fdt32_to_cpu(p[0]) << 32 | fdt32_to_cpu(p[1]) : 0;
	size = p ? (uint64_t)fdt32_to_cpu(p[2]) << 32 | fdt32_to_cpu(p[3]) : 0;
	CHECK(base <= st.kernel_addr && st.kernel_end <= end &&
	      end <= st.dtb_addr && st.dtb_addr + len <= base + size);
}

/* One row per parse result, and every result has its row. */
static void test_parse_table(void)
{
	static const struct {
		size_t (*make)(uint8_t *b);
		enum arm64_image_err e;
	} rows[] = {
		{ bad_magic, ARM64_IMAGE_BAD_MAGIC },
		{ too_short, ARM64_IMAGE_TOO_SHORT },
		{ bzimage, ARM64_IMAGE_BZIMAGE },
		{ elf, ARM64_IMAGE_ELF },
		{ big_endian, ARM64_IMAGE_BIG_ENDIAN },
		{ too_big, ARM64_IMAGE_OK },
	};
	bool seen[ARM64_IMAGE_ERR_COUNT] = { false };
	struct arm64_image_info info;
	unsigned int i;
	size_t n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = rows[i].make(img);
		CHECK_EQ(arm64_image_parse(img, n, &info), rows[i].e);
		seen[rows[i].e] = true;
		CHECK(strlen(arm64_image_strerror(rows[i].e)) > 10);
	}
	for (i = 0; i < ARM64_IMAGE_ERR_COUNT; i++)
		CHECK(seen[i]);
	/* Page size field: 1 4K, 2 16K, 3 64K, 0 unspecified. */
	for (i = 0; i < 4; i++) {
		build_image(img, 0, IMG_SIZE, i << 1, 0);
		CHECK_EQ(arm64_image_parse(img, 64, &info), ARM64_IMAGE_OK);
		CHECK_EQ(info.page_kib, i ? 4u << (2 * (i - 1)) : 0);
	}
}

/*
 * A real kernel, when one is given: Debian 12's vmlinuz-*-arm64 (a plain
 * Image), or a gzip of it.
 */
static int test_real_kernel(void)
{
	const char *path = getenv("ARM64_TEST_KERNEL");
	struct arm64_boot_cfg cfg;
	struct arm64_boot_state st;
	char err[256];
	uint8_t *k;
	long len;
	FILE *f;

	if (!path || !*path)
		return 77;
	f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f) {
		fprintf(stderr, "ARM64_TEST_KERNEL '%s' unreadable\n", path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	k = malloc(len > 0 ? len : 1);
	CHECK(k && fread(k, 1, len, f) == (size_t)len);
	fclose(f);
	guest_reset(RAM_SIZE);
	cfg = cfg_for(k, len, false);
	cfg.kernel_path = path;
	CHECK_EQ(arm64_boot_load(&gm, &cfg, &st, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "%s\n", err);
	printf("%s: %s Image, %llu bytes, image_size %llu, text_offset 0x%llx, flags 0x%llx\n",
	       path, st.gzip ? "gzip'd" : "plain",
	       (unsigned long long)st.kernel_len,
	       (unsigned long long)st.info.image_size,
	       (unsigned long long)st.info.text_offset,
	       (unsigned long long)st.info.flags);
	CHECK(st.kernel_len > MIB);
	CHECK_EQ(st.info.page_kib, 4);
	free(k);
	return 0;
}

int main(void)
{
	ram = malloc(RAM_SIZE);
	img = malloc(IMG_SIZE + 8192);
	initrd = malloc(INITRD_LEN);
	if (!ram || !img || !initrd)
		return 1;
	memset(initrd, 0x5a, INITRD_LEN);
	test_parse_table();
	test_plain();
	test_gzip();
	test_gzip_bomb();
	test_bad_images();
	test_bad_gzip();
	test_small_ram();
	test_put_dtb();
	test_handoff();
	if (test_real_kernel() == 77)
		printf("real-kernel row not run here: ARM64_TEST_KERNEL unset"
		       " (CTest's image.arm64_debian_kernel runs it)\n");
	free(initrd);
	free(img);
	free(ram);
	return test_done();
}
