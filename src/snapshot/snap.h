/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot state file: a versioned, checksummed container of typed
 * sections (the machine's configuration, the host CPU it ran on, each
 * vCPU, the VM's in-kernel devices, each device). Guest RAM goes to a
 * separate memory file. The writer builds the file in memory; the reader
 * checks the header and the checksum and walks the sections with bounds
 * checks on every field, so a truncated or corrupt file is refused before
 * anything is restored.
 *
 * Usage sketch:
 *
 *	struct snap_writer w;
 *	snap_writer_init(&w);
 *	snap_section_begin(&w, SNAP_TAG_VCPU);
 *	snap_put_u32(&w, index); snap_put_bytes(&w, &regs, sizeof(regs));
 *	snap_section_end(&w);
 *	ret = snap_writer_finish(&w, SNAP_ARCH_X86_64, &buf, &len);
 *	...
 *	struct snap_file f;  struct snap_reader r;  size_t cur = 0;
 *	snap_file_parse(buf, len, &f, err, sizeof(err));
 *	while (snap_next_section(&f, &cur, &tag, &r) == 1) {
 *		idx = snap_get_u32(&r); snap_get_bytes(&r, &regs, sizeof(regs));
 *		if (!snap_reader_done(&r)) -> refuse (short or trailing bytes)
 *	}
 *
 * Layout (all integers little-endian):
 *	header (SNAP_HEADER_LEN bytes):
 *	  0  magic "MICROVM-SNAPSHOT" (16 bytes, no NUL)
 *	 16  u32 format version (SNAP_FORMAT_VERSION)
 *	 20  u32 architecture (enum snap_arch)
 *	 24  u64 body length in bytes
 *	 32  u32 CRC-32 (IEEE 802.3, as zlib's crc32()) of the body
 *	 36  u32 reserved, 0
 *	body: sections, each
 *	  u32 tag (enum snap_tag), u32 reserved 0, u64 length, then length
 *	  bytes of payload.
 */
#ifndef MICROVM_SNAP_H
#define MICROVM_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SNAP_MAGIC "MICROVM-SNAPSHOT"
#define SNAP_MAGIC_LEN 16
#define SNAP_FORMAT_VERSION 1u
#define SNAP_HEADER_LEN 40u
#define SNAP_SECTION_HEADER_LEN 16u
/* The largest state file read or written (the state, not guest RAM). */
#define SNAP_MAX_FILE (64u << 20)
/* The most sections one file holds. */
#define SNAP_MAX_SECTIONS 1024u
/* The longest string snap_put_str() writes / snap_get_str() takes. */
#define SNAP_MAX_STR 4096u

enum snap_arch {
	SNAP_ARCH_X86_64 = 1,
	SNAP_ARCH_AARCH64 = 2,
};

enum snap_tag {
	SNAP_TAG_INFO = 1,   /* the writer: microvm's version, snapshot type */
	SNAP_TAG_CONFIG = 2, /* the machine's configuration (JSON text) */
	SNAP_TAG_CPU = 3,    /* the host CPU's features (arch-defined) */
	SNAP_TAG_MEMORY = 4, /* guest RAM: size, memory file layout */
	SNAP_TAG_VM = 5,     /* in-kernel VM state (irqchip, PIT, clock) */
	SNAP_TAG_VCPU = 6,   /* one per vCPU, in index order */
	SNAP_TAG_DEVICE = 7, /* one per device: its name, then its state */
	SNAP_TAG_MAX = 7,
};

/* ---- writing ---- */
/* Context (writer and reader alike): any thread; one writer or reader
 * is one thread's at a time. */

/*
 * A growing in-memory state file. Errors (out of memory, a section left
 * open, a section or file past the limits) are sticky: every later put is
 * ignored and snap_writer_finish() reports the first one. -EINVAL: a
 * nested section, a put or an end outside a section, an unknown tag;
 * -E2BIG: more than SNAP_MAX_SECTIONS; -EFBIG: past SNAP_MAX_FILE;
 * -ENAMETOOLONG: a string past SNAP_MAX_STR; -ENOMEM.
 */
struct snap_writer {
	uint8_t *buf;
	size_t len;
	size_t cap;
	int err;           /* 0 or the first -errno */
	size_t sect_start; /* offset of the open section's header; 0: none */
	unsigned int nr_sections;
};

/** snap_writer_init() - an empty writer (the header is reserved). */
void snap_writer_init(struct snap_writer *w);

/**
 * snap_section_begin() - open a section of @tag; sections do not nest
 * (opening one while one is open is an error, -EINVAL).
 */
void snap_section_begin(struct snap_writer *w, uint32_t tag);

/** snap_section_end() - close the open section, its length filled in. */
void snap_section_end(struct snap_writer *w);

void snap_put_u8(struct snap_writer *w, uint8_t v);
void snap_put_u16(struct snap_writer *w, uint16_t v);
void snap_put_u32(struct snap_writer *w, uint32_t v);
void snap_put_u64(struct snap_writer *w, uint64_t v);
/** snap_put_bytes() - @n raw bytes (a KVM structure as the kernel gave it). */
void snap_put_bytes(struct snap_writer *w, const void *p, size_t n);
/** snap_put_str() - u32 length then the bytes, no NUL; NULL as length 0. */
void snap_put_str(struct snap_writer *w, const char *s);

/**
 * snap_writer_finish() - fill the header (version, @arch, body length,
 * CRC) and hand the buffer over.
 * Return: 0 with *@out (free() it) and *@len, or the writer's -errno
 * (-EINVAL: a section left open, or @arch not an enum snap_arch), with
 * *@out NULL; the writer is then empty either way (snap_writer_init()
 * it again to reuse it).
 */
int snap_writer_finish(struct snap_writer *w, uint32_t arch, uint8_t **out,
		       size_t *len);

/** snap_writer_free() - drop what the writer holds (after an error). */
void snap_writer_free(struct snap_writer *w);

/* ---- reading ---- */

/*
 * A bounded cursor over one section's payload. A get past the end sets
 * bad and returns zeros; check snap_reader_done() (or bad) once after a
 * run of gets.
 */
struct snap_reader {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool bad;
};

uint8_t snap_get_u8(struct snap_reader *r);
uint16_t snap_get_u16(struct snap_reader *r);
uint32_t snap_get_u32(struct snap_reader *r);
uint64_t snap_get_u64(struct snap_reader *r);
/** snap_get_bytes() - copy @n bytes to @dst (zeroed when short). */
void snap_get_bytes(struct snap_reader *r, void *dst, size_t n);
/**
 * snap_get_str() - a snap_put_str() string into @out (NUL-terminated).
 * Return: false (bad set) when short, longer than @max - 1 or holding a
 * NUL byte.
 */
bool snap_get_str(struct snap_reader *r, char *out, size_t max);
/**
 * snap_get_ref() - @n bytes in place (valid while the file buffer is).
 * The pointer may be unaligned: memcpy() from it, never cast it to a
 * structure.
 * Return: a pointer, or NULL (bad set) when short.
 */
const uint8_t *snap_get_ref(struct snap_reader *r, size_t n);
/** snap_reader_left() - bytes not read yet. */
size_t snap_reader_left(const struct snap_reader *r);
/** snap_reader_done() - every byte read and none past the end. */
bool snap_reader_done(const struct snap_reader *r);

/* A parsed, checked state file (pointing into the caller's buffer). */
struct snap_file {
	uint32_t version;
	uint32_t arch;
	const uint8_t *body;
	size_t body_len;
	unsigned int nr_sections;
};

/**
 * snap_file_parse() - check a whole state file: the magic, the format
 * version (SNAP_FORMAT_VERSION only), the length (header plus body,
 * nothing after it, at most SNAP_MAX_FILE in all), the CRC, and the
 * framing of every section (each within the body, a known tag, its
 * reserved word 0, at most SNAP_MAX_SECTIONS), in that order.
 * @arch: the architecture expected (enum snap_arch); another is refused
 * Return: 0 with @f filled, or -EINVAL with one line in @err that says
 * what is wrong ("not a microvm snapshot", "format version 7; this
 * microvm reads version 1", "truncated: ...", "checksum mismatch", ...).
 * Context: any thread; pure.
 */
int snap_file_parse(const uint8_t *buf, size_t len, uint32_t arch,
		    struct snap_file *f, char *err, size_t errlen);

/**
 * snap_next_section() - the section at *@cursor (start at 0).
 * Return: 1 with @tag and @r set and *@cursor advanced, 0 at the end.
 * Context: after snap_file_parse() succeeded on @f.
 */
int snap_next_section(const struct snap_file *f, size_t *cursor,
		      uint32_t *tag, struct snap_reader *r);

/** snap_crc32() - CRC-32 (IEEE, zlib's) of @n bytes, continuing @crc. */
uint32_t snap_crc32(uint32_t crc, const void *p, size_t n);

/**
 * snap_pwrite_all() - all @n bytes of @p to @fd at @off (pwrite(),
 * again after a short write or EINTR).
 * Return: 0 or -errno (-EIO for a write of nothing). Context: any thread.
 */
int snap_pwrite_all(int fd, const void *p, size_t n, off_t off);

/**
 * snap_rebase() - a Diff snapshot's memory file @diff written over its
 * base @base: each extent of data in @diff (SEEK_DATA / SEEK_HOLE) to the
 * same offset of @base, then @base synced. Both must be regular files of
 * the same size, and not the same file.
 * Return: 0 with *@copied the bytes copied, or -errno with one line in
 * @err naming the file. Context: any thread.
 */
int snap_rebase(const char *base, const char *diff, uint64_t *copied,
		char *err, size_t errlen);

/** snap_arch_name() - "x86_64", "aarch64" or "unknown". */
const char *snap_arch_name(uint32_t arch);

#endif
