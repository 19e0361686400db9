// SPDX-License-Identifier: Apache-2.0
/*
 * arm64 Image loading per Documentation/arch/arm64/booting.rst: the header
 * check, the placement (kernel text_offset above the base of RAM, the
 * device tree in the top 2 MiB block, the initrd just below it), and the
 * inflation of gzip'd Images straight into guest RAM with zlib, bounded by
 * the room the placement leaves. Nothing here trusts a size the file gives
 * beyond using it to refuse what cannot fit.
 */
#include "boot_image.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "dtb.h"

#define MIB (1ULL << 20)
/* zlib counts in uInt: feed and drain it in pieces of at most this. */
#define INFLATE_CHUNK (1u << 30)
/* Inflated before the header is parsed: past a bzImage's "HdrS". */
#define GZIP_PROBE_LEN 1024

/* x86 boot protocol signatures (Documentation/arch/x86/boot.rst). */
#define BZ_BOOT_FLAG_OFF 0x1fe
#define BZ_HDRS_OFF 0x202

/* One load in progress. */
struct a64_ctx {
	struct guest_mem *gm;
	const struct arm64_boot_cfg *cfg;
	struct arm64_boot_state *st;
	uint64_t limit; /* one past the last byte the kernel may use */
	char *err;
	size_t errlen;
};

static const char *const image_errs[ARM64_IMAGE_ERR_COUNT] = {
	[ARM64_IMAGE_OK] = "a valid arm64 Image",
	[ARM64_IMAGE_TOO_SHORT] =
		"truncated: shorter than the 64-byte arm64 Image header; give the whole arch/arm64/boot/Image",
	[ARM64_IMAGE_BZIMAGE] =
		"an x86 bzImage, not an arm64 Image; give an arm64 Image or Debian's vmlinuz-*-arm64",
	[ARM64_IMAGE_ELF] =
		"an ELF file (vmlinux?), not an arm64 Image; give arch/arm64/boot/Image (or Image.gz)",
	[ARM64_IMAGE_BAD_MAGIC] =
		"not an arm64 Image (no \"ARM\\x64\" magic at 0x38); give arch/arm64/boot/Image or Debian's vmlinuz-*-arm64",
	[ARM64_IMAGE_BIG_ENDIAN] =
		"a big-endian arm64 Image; microvm's devices speak little-endian only: build the kernel without CONFIG_CPU_BIG_ENDIAN",
};

const char *arm64_image_strerror(enum arm64_image_err e)
{
	if ((unsigned int)e >= ARM64_IMAGE_ERR_COUNT)
		return "unknown arm64 Image error";
	return image_errs[e];
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

enum arm64_image_err arm64_image_parse(const uint8_t *buf, size_t len,
				       struct arm64_image_info *info)
{
	uint64_t page;

	memset(info, 0, sizeof(*info));
	/* A bzImage is much longer than 64 bytes: name it before length. */
	if (len >= BZ_HDRS_OFF + 4 && buf[BZ_BOOT_FLAG_OFF] == 0x55 &&
	    buf[BZ_BOOT_FLAG_OFF + 1] == 0xaa &&
	    !memcmp(buf + BZ_HDRS_OFF, "HdrS", 4))
		return ARM64_IMAGE_BZIMAGE;
	if (len >= 4 && !memcmp(buf, "\x7f" "ELF", 4))
		return ARM64_IMAGE_ELF;
	if (len < ARM64_IMAGE_HDR_SIZE)
		return ARM64_IMAGE_TOO_SHORT;
	if (memcmp(buf + ARM64_IMAGE_MAGIC_OFF, ARM64_IMAGE_MAGIC, 4))
		return ARM64_IMAGE_BAD_MAGIC;
	info->flags = get_le64(buf + ARM64_IMAGE_FLAGS_OFF);
	info->image_size = get_le64(buf + ARM64_IMAGE_SIZE_OFF);
	/*
	 * "Where image_size is zero, text_offset can be assumed to be
	 * 0x80000" (its endianness was unspecified then); flags came with
	 * image_size in 3.17, so an old header has none to read either.
	 */
	if (!info->image_size) {
		info->text_offset = ARM64_IMAGE_OLD_TEXT_OFFSET;
		info->flags = 0;
		return ARM64_IMAGE_OK;
	}
	info->text_offset = get_le64(buf + ARM64_IMAGE_TEXT_OFFSET_OFF);
	if (info->flags & ARM64_IMAGE_FLAG_BE)
		return ARM64_IMAGE_BIG_ENDIAN;
	page = info->flags >> ARM64_IMAGE_PAGE_SHIFT & ARM64_IMAGE_PAGE_MASK;
	info->page_kib = page ? 4u << (2 * (page - 1)) : 0;
	return ARM64_IMAGE_OK;
}

static int a64_fail(struct a64_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "kernel PATH: " and the message. */
static int a64_fail(struct a64_ctx *c, int rc, const char *fmt, ...)
{
	const char *path = c->cfg->kernel_path;
	va_list ap;
	int n;

	if (!c->errlen)
		return rc;
	n = snprintf(c->err, c->errlen, "kernel%s%s: ", path ? " " : "",
		     path ? path : "");
	if (n < 0 || (size_t)n >= c->errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return rc;
}

static uint64_t mib_up(uint64_t bytes)
{
	return (bytes + MIB - 1) / MIB;
}

/*
 * The kernel needs [kernel_addr, kernel_addr + @need) below c->limit;
 * otherwise say how much --memory would hold it.
 */
static int a64_check_fit(struct a64_ctx *c, uint64_t need, const char *what)
{
	const struct arm64_boot_cfg *cfg = c->cfg;
	uint64_t room = c->limit - c->st->kernel_addr;
	uint64_t want;

	if (need <= room)
		return 0;
	/*
	 * RAM the same placement needs: base to kernel end, then the
	 * initrd, up to a 2 MiB boundary, then the DTB block.
	 */
	want = c->st->kernel_addr - cfg->ram_base + need +
	       ((c->st->initrd_size + ARM64_INITRD_ALIGN - 1) &
		~(ARM64_INITRD_ALIGN - 1));
	want = ((want + ARM64_DTB_BLOCK - 1) & ~(ARM64_DTB_BLOCK - 1)) +
	       ARM64_DTB_BLOCK;
	return a64_fail(c, -ENOSPC,
			"%s needs %lluM at 0x%llx, --memory %lluM leaves %lluM there; give --memory %lluM or more",
			what, (unsigned long long)mib_up(need),
			(unsigned long long)c->st->kernel_addr,
			(unsigned long long)mib_up(cfg->memory),
			(unsigned long long)(room / MIB),
			(unsigned long long)mib_up(want + cfg->memory -
						   cfg->ram_size));
}

/* Header checks shared by the plain and gzip paths; sets the address. */
static int a64_header(struct a64_ctx *c, const uint8_t *hdr, size_t len,
		      uint64_t file_len)
{
	struct arm64_boot_state *st = c->st;
	enum arm64_image_err e;

	e = arm64_image_parse(hdr, len, &st->info);
	if (e)
		return a64_fail(c, -EINVAL, "%s%s",
				st->gzip ? "inflated data: " : "",
				arm64_image_strerror(e));
	if (st->info.text_offset >= c->limit - c->cfg->ram_base)
		return a64_fail(c, -ENOSPC,
				"text_offset 0x%llx is beyond the %lluM of RAM below the initrd",
				(unsigned long long)st->info.text_offset,
				(unsigned long long)((c->limit -
						      c->cfg->ram_base) / MIB));
	st->kernel_addr = c->cfg->ram_base + st->info.text_offset;
	st->entry = st->kernel_addr;
	return a64_check_fit(c, st->info.image_size > file_len ?
			     st->info.image_size : file_len, "the Image");
}

static int a64_load_plain(struct a64_ctx *c)
{
	const struct arm64_boot_cfg *cfg = c->cfg;
	uint8_t *dst;
	int ret;

	ret = a64_header(c, cfg->kernel, cfg->kernel_len, cfg->kernel_len);
	if (ret)
		return ret;
	dst = guest_mem_ptr(c->gm, c->st->kernel_addr, cfg->kernel_len);
	if (!dst)
		return a64_fail(c, -EFAULT, "0x%llx is not guest RAM",
				(unsigned long long)c->st->kernel_addr);
	memcpy(dst, cfg->kernel, cfg->kernel_len);
	c->st->kernel_len = cfg->kernel_len;
	return 0;
}

/*
 * Inflate into [out, out + room). Return: 0 when the stream ended there,
 * 1 when @room filled first (the rest would not fit), or -EINVAL for data
 * that does not inflate or ends early. *got: bytes written.
 */
static int a64_inflate(struct a64_ctx *c, z_stream *zs, uint8_t *out,
		       uint64_t room, uint64_t *got)
{
	uint64_t in_left = c->cfg->kernel_len - zs->total_in - zs->avail_in;
	uint64_t out_left = room;
	int zret;

	zs->next_out = out;
	zs->avail_out = 0;
	for (;;) {
		if (!zs->avail_in && in_left) {
			zs->avail_in = in_left > INFLATE_CHUNK ? INFLATE_CHUNK
							       : in_left;
			in_left -= zs->avail_in;
		}
		if (!zs->avail_out && out_left) {
			zs->avail_out = out_left > INFLATE_CHUNK ?
					INFLATE_CHUNK : out_left;
			out_left -= zs->avail_out;
		}
		*got = (uint64_t)(zs->next_out - out);
		if (!zs->avail_out)
			return 1;
		zret = inflate(zs, Z_NO_FLUSH);
		*got = (uint64_t)(zs->next_out - out);
		if (zret == Z_STREAM_END)
			return 0;
		if (zret != Z_OK && zret != Z_BUF_ERROR)
			return a64_fail(c, -EINVAL,
					"gzip data does not inflate (%s at compressed byte %lu); copy the file again",
					zs->msg ? zs->msg : "zlib error",
					zs->total_in);
		/* Room left, input gone, no end of stream: cut short. */
		if (!zs->avail_in && !in_left && zs->avail_out)
			return a64_fail(c, -EINVAL,
					"gzip data ends early (truncated after %lu inflated bytes); copy the file again",
					zs->total_out);
	}
}

static int a64_gunzip(struct a64_ctx *c, z_stream *zs)
{
	struct arm64_boot_state *st = c->st;
	uint8_t probe[GZIP_PROBE_LEN], *dst;
	uint64_t hlen, blen = 0, room;
	int more, ret;

	/* Enough to tell a bzImage too; the address comes from the header. */
	more = a64_inflate(c, zs, probe, sizeof(probe), &hlen);
	if (more < 0)
		return more;
	/* An Image that ends inside its header fails the parse. */
	ret = a64_header(c, probe, hlen, hlen);
	if (ret)
		return ret;
	room = c->limit - st->kernel_addr;
	if (hlen > room)
		return a64_check_fit(c, hlen, "the inflated Image");
	dst = guest_mem_ptr(c->gm, st->kernel_addr, room);
	if (!dst)
		return a64_fail(c, -EFAULT, "0x%llx is not guest RAM",
				(unsigned long long)st->kernel_addr);
	memcpy(dst, probe, hlen);
	ret = more ? a64_inflate(c, zs, dst + hlen, room - hlen, &blen) : 0;
	if (ret < 0)
		return ret;
	st->kernel_len = hlen + blen;
	if (ret > 0)
		return a64_fail(c, -ENOSPC,
				"the gzip inflates past the %lluM of RAM left for the Image at 0x%llx (whatever its trailer claims); give --memory more, or this is not a kernel",
				(unsigned long long)(room / MIB),
				(unsigned long long)st->kernel_addr);
	return a64_check_fit(c, st->kernel_len > st->info.image_size ?
			     st->kernel_len : st->info.image_size,
			     "the inflated Image");
}

static int a64_load_gzip(struct a64_ctx *c)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	zs.next_in = (Bytef *)c->cfg->kernel;
	/* 16 + MAX_WBITS: a gzip wrapper, not zlib's own. */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return a64_fail(c, -ENOMEM, "zlib: %s",
				zs.msg ? zs.msg : "inflateInit2 failed");
	c->st->gzip = true;
	ret = a64_gunzip(c, &zs);
	inflateEnd(&zs);
	return ret;
}

/* Initrd page-aligned right below the DTB block; sets c->limit. */
static int a64_place_initrd(struct a64_ctx *c)
{
	const struct arm64_boot_cfg *cfg = c->cfg;
	struct arm64_boot_state *st = c->st;

	c->limit = st->dtb_addr;
	if (!cfg->initrd || !cfg->initrd_len)
		return 0;
	if (cfg->initrd_len > st->dtb_addr - cfg->ram_base)
		return a64_fail(c, -ENOSPC,
				"initrd %s (%lluM) does not fit --memory %lluM; give more memory",
				cfg->initrd_path ? cfg->initrd_path : "",
				(unsigned long long)mib_up(cfg->initrd_len),
				(unsigned long long)mib_up(cfg->memory));
	st->initrd_addr = (st->dtb_addr - cfg->initrd_len) &
			  ~(ARM64_INITRD_ALIGN - 1);
	st->initrd_size = cfg->initrd_len;
	c->limit = st->initrd_addr;
	return 0;
}

/*
 * booting.rst: the initrd must lie in a 1 GiB-aligned window of at most
 * 32 GiB that also covers the kernel.
 */
static int a64_check_window(struct a64_ctx *c)
{
	struct arm64_boot_state *st = c->st;
	uint64_t win = st->kernel_addr & ~((1ULL << 30) - 1);

	if (!st->initrd_size ||
	    st->initrd_addr + st->initrd_size - win <= (32ULL << 30))
		return 0;
	return a64_fail(c, -EINVAL,
			"initrd at 0x%llx is more than 32G above the kernel's 1G window",
			(unsigned long long)st->initrd_addr);
}

int arm64_boot_load(struct guest_mem *gm, const struct arm64_boot_cfg *cfg,
		    struct arm64_boot_state *st, char *err, size_t errlen)
{
	struct a64_ctx c = { .gm = gm, .cfg = cfg, .st = st, .err = err,
			     .errlen = errlen };
	uint64_t ram_end = cfg->ram_base + cfg->ram_size;
	uint8_t *initrd;
	int ret;

	memset(st, 0, sizeof(*st));
	if (errlen)
		err[0] = '\0';
	if (cfg->ram_base & (ARM64_KERNEL_ALIGN - 1) ||
	    ram_end < cfg->ram_base)
		return a64_fail(&c, -EINVAL, "RAM at 0x%llx is not 2M-aligned",
				(unsigned long long)cfg->ram_base);
	if (!cfg->kernel || !cfg->kernel_len)
		return a64_fail(&c, -EINVAL,
				"empty file, not an arm64 Image; give arch/arm64/boot/Image or Debian's vmlinuz-*-arm64");
	/*
	 * The top whole 2 MiB block, so that no other use shares the block
	 * mapping the kernel gives it; the kernel's own block below it.
	 */
	if ((ram_end & ~(ARM64_DTB_BLOCK - 1)) <
	    cfg->ram_base + 2 * ARM64_DTB_BLOCK)
		return a64_fail(&c, -ENOSPC,
				"--memory %lluM is too small for an arm64 kernel and its device tree",
				(unsigned long long)mib_up(cfg->memory));
	st->dtb_addr = (ram_end & ~(ARM64_DTB_BLOCK - 1)) - ARM64_DTB_BLOCK;
	st->dtb_max = DTB_MAX_SIZE;
	ret = a64_place_initrd(&c);
	if (!ret)
		ret = cfg->kernel_len >= 2 && cfg->kernel[0] == 0x1f &&
		      cfg->kernel[1] == 0x8b ? a64_load_gzip(&c)
					     : a64_load_plain(&c);
	if (!ret)
		ret = a64_check_window(&c);
	if (ret)
		return ret;
	st->kernel_end = st->kernel_addr +
			 (st->kernel_len > st->info.image_size ?
			  st->kernel_len : st->info.image_size);
	if (!st->initrd_size)
		return 0;
	initrd = guest_mem_ptr(gm, st->initrd_addr, st->initrd_size);
	if (!initrd)
		return a64_fail(&c, -EFAULT, "initrd: 0x%llx is not guest RAM",
				(unsigned long long)st->initrd_addr);
	memcpy(initrd, cfg->initrd, st->initrd_size);
	return 0;
}

int arm64_boot_put_dtb(struct guest_mem *gm,
		       const struct arm64_boot_state *st, const void *dtb,
		       size_t len, char *err, size_t errlen)
{
	if (len > st->dtb_max) {
		if (errlen)
			snprintf(err, errlen,
				 "device tree: %zu bytes, at most %llu fit its block at 0x%llx",
				 len, (unsigned long long)st->dtb_max,
				 (unsigned long long)st->dtb_addr);
		return -ENOSPC;
	}
	if (guest_mem_write(gm, st->dtb_addr, dtb, len)) {
		if (errlen)
			snprintf(err, errlen,
				 "device tree: 0x%llx is not guest RAM",
				 (unsigned long long)st->dtb_addr);
		return -EFAULT;
	}
	return 0;
}
