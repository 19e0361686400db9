// SPDX-License-Identifier: Apache-2.0
/*
 * The snapshot state file (snap.h has the layout and a usage sketch): a
 * writer that builds header and sections in one growing buffer, with
 * sticky errors so that a run of puts is checked once at the end; the
 * CRC-32 of the body; and a reader that refuses a file whose header,
 * length, checksum or section framing is wrong before any section is
 * handed out. Every read is bounds-checked in a form that cannot
 * overflow (`n > len - off`); the file is input, like a guest's rings.
 */
#include "snapshot/snap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first allocation; the buffer doubles from there. */
#define SNAP_INITIAL_CAP 4096u

/* ---- CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320) ---- */

/*
 * The CRC is linear over GF(2): the table entry of byte i is the XOR of
 * the entries of its set bits, so eight well-known values (byte 1 << k
 * run through eight shift-and-XOR steps) give all 256 at compile time.
 * No initialisation at run time, nothing to race on.
 */
#define CRC_T(i)                                                             \
	((((i) & 0x01u) ? 0x77073096u : 0u) ^                                \
	 (((i) & 0x02u) ? 0xee0e612cu : 0u) ^                                \
	 (((i) & 0x04u) ? 0x076dc419u : 0u) ^                                \
	 (((i) & 0x08u) ? 0x0edb8832u : 0u) ^                                \
	 (((i) & 0x10u) ? 0x1db71064u : 0u) ^                                \
	 (((i) & 0x20u) ? 0x3b6e20c8u : 0u) ^                                \
	 (((i) & 0x40u) ? 0x76dc4190u : 0u) ^                                \
	 (((i) & 0x80u) ? 0xedb88320u : 0u))
#define CRC_T4(i) CRC_T(i), CRC_T((i) + 1u), CRC_T((i) + 2u), CRC_T((i) + 3u)
#define CRC_T16(i)                                                           \
	CRC_T4(i), CRC_T4((i) + 4u), CRC_T4((i) + 8u), CRC_T4((i) + 12u)
#define CRC_T64(i)                                                           \
	CRC_T16(i), CRC_T16((i) + 16u), CRC_T16((i) + 32u),                  \
		CRC_T16((i) + 48u)

static const uint32_t crc_table[256] = {
	CRC_T64(0u), CRC_T64(64u), CRC_T64(128u), CRC_T64(192u),
};

uint32_t snap_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *b++) & 0xffu] ^ (crc >> 8);
	return ~crc;
}

/* ---- little-endian fields ---- */

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

const char *snap_arch_name(uint32_t arch)
{
	switch (arch) {
	case SNAP_ARCH_X86_64:
		return "x86_64";
	case SNAP_ARCH_AARCH64:
		return "aarch64";
	default:
		return "unknown";
	}
}

static bool arch_known(uint32_t arch)
{
	return arch == SNAP_ARCH_X86_64 || arch == SNAP_ARCH_AARCH64;
}

/* ---- writing ---- */

/*
 * Room for @n more bytes at the end: a pointer to them (len advanced),
 * or NULL with the writer's error set (sticky).
 */
static uint8_t *writer_room(struct snap_writer *w, size_t n)
{
	size_t cap = w->cap;
	uint8_t *p;

	if (w->err)
		return NULL;
	if (n > SNAP_MAX_FILE - w->len) {
		w->err = -EFBIG;
		return NULL;
	}
	if (n > cap - w->len) {
		if (!cap)
			cap = SNAP_INITIAL_CAP;
		while (n > cap - w->len)
			cap = cap > SNAP_MAX_FILE / 2 ? SNAP_MAX_FILE : 2 * cap;
		p = realloc(w->buf, cap);
		if (!p) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = p;
		w->cap = cap;
	}
	p = w->buf + w->len;
	w->len += n;
	return p;
}

void snap_writer_init(struct snap_writer *w)
{
	uint8_t *h;

	memset(w, 0, sizeof(*w));
	h = writer_room(w, SNAP_HEADER_LEN);
	if (h)
		memset(h, 0, SNAP_HEADER_LEN);
}

void snap_section_begin(struct snap_writer *w, uint32_t tag)
{
	size_t start = w->len;
	uint8_t *h;

	if (w->err)
		return;
	/* Nested, an unknown tag, or a writer not (re)initialised. */
	if (w->sect_start || tag == 0 || tag > SNAP_TAG_MAX ||
	    w->len < SNAP_HEADER_LEN) {
		w->err = -EINVAL;
		return;
	}
	if (w->nr_sections >= SNAP_MAX_SECTIONS) {
		w->err = -E2BIG;
		return;
	}
	h = writer_room(w, SNAP_SECTION_HEADER_LEN);
	if (!h)
		return;
	put_le(h, tag, 4);
	put_le(h + 4, 0, 4);
	put_le(h + 8, 0, 8); /* the length, filled in at the end */
	w->sect_start = start;
	w->nr_sections++;
}

void snap_section_end(struct snap_writer *w)
{
	if (w->err)
		return;
	if (!w->sect_start) {
		w->err = -EINVAL;
		return;
	}
	put_le(w->buf + w->sect_start + 8,
	       w->len - w->sect_start - SNAP_SECTION_HEADER_LEN, 8);
	w->sect_start = 0;
}

/* Room for a put of @n bytes inside the open section, or NULL (sticky). */
static uint8_t *put_room(struct snap_writer *w, size_t n)
{
	if (w->err)
		return NULL;
	if (!w->sect_start) {
		w->err = -EINVAL;
		return NULL;
	}
	return writer_room(w, n);
}

static void put_int(struct snap_writer *w, uint64_t v, size_t n)
{
	uint8_t *p = put_room(w, n);

	if (p)
		put_le(p, v, n);
}

void snap_put_u8(struct snap_writer *w, uint8_t v)
{
	put_int(w, v, 1);
}

void snap_put_u16(struct snap_writer *w, uint16_t v)
{
	put_int(w, v, 2);
}

void snap_put_u32(struct snap_writer *w, uint32_t v)
{
	put_int(w, v, 4);
}

void snap_put_u64(struct snap_writer *w, uint64_t v)
{
	put_int(w, v, 8);
}

void snap_put_bytes(struct snap_writer *w, const void *p, size_t n)
{
	uint8_t *d = put_room(w, n);

	if (d && n)
		memcpy(d, p, n);
}

void snap_put_str(struct snap_writer *w, const char *s)
{
	size_t n = s ? strnlen(s, SNAP_MAX_STR + 1) : 0;

	if (w->err)
		return;
	if (n > SNAP_MAX_STR) {
		w->err = -ENAMETOOLONG;
		return;
	}
	snap_put_u32(w, (uint32_t)n);
	snap_put_bytes(w, s, n);
}

void snap_writer_free(struct snap_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

int snap_writer_finish(struct snap_writer *w, uint32_t arch, uint8_t **out,
		       size_t *len)
{
	size_t body;
	int ret;

	*out = NULL;
	*len = 0;
	if (!w->err && (w->sect_start || !arch_known(arch) ||
			!w->buf || w->len < SNAP_HEADER_LEN))
		w->err = -EINVAL;
	ret = w->err;
	if (ret) {
		snap_writer_free(w);
		return ret;
	}
	body = w->len - SNAP_HEADER_LEN;
	memcpy(w->buf, SNAP_MAGIC, SNAP_MAGIC_LEN);
	put_le(w->buf + 16, SNAP_FORMAT_VERSION, 4);
	put_le(w->buf + 20, arch, 4);
	put_le(w->buf + 24, body, 8);
	put_le(w->buf + 32,
	       snap_crc32(0, w->buf + SNAP_HEADER_LEN, body), 4);
	put_le(w->buf + 36, 0, 4);
	*out = w->buf;
	*len = w->len;
	memset(w, 0, sizeof(*w));
	return 0;
}

/* ---- reading a section ---- */

/* @n bytes at the cursor, or NULL with bad set (sticky). */
static const uint8_t *take(struct snap_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || r->off > r->len || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static uint64_t get_int(struct snap_reader *r, size_t n)
{
	const uint8_t *p = take(r, n);

	return p ? get_le(p, n) : 0;
}

uint8_t snap_get_u8(struct snap_reader *r)
{
	return (uint8_t)get_int(r, 1);
}

uint16_t snap_get_u16(struct snap_reader *r)
{
	return (uint16_t)get_int(r, 2);
}

uint32_t snap_get_u32(struct snap_reader *r)
{
	return (uint32_t)get_int(r, 4);
}

uint64_t snap_get_u64(struct snap_reader *r)
{
	return get_int(r, 8);
}

void snap_get_bytes(struct snap_reader *r, void *dst, size_t n)
{
	const uint8_t *p = take(r, n);

	if (!n)
		return;
	if (p)
		memcpy(dst, p, n);
	else
		memset(dst, 0, n);
}

bool snap_get_str(struct snap_reader *r, char *out, size_t max)
{
	uint32_t n = snap_get_u32(r);
	const uint8_t *p = NULL;

	if (!r->bad && (n > SNAP_MAX_STR || max == 0 || n > max - 1))
		r->bad = true;
	if (!r->bad)
		p = take(r, n);
	if (p && memchr(p, 0, n)) {
		r->bad = true;
		p = NULL;
	}
	if (!p) {
		if (max)
			out[0] = '\0';
		return false;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

const uint8_t *snap_get_ref(struct snap_reader *r, size_t n)
{
	return take(r, n);
}

size_t snap_reader_left(const struct snap_reader *r)
{
	return r->bad || r->off > r->len ? 0 : r->len - r->off;
}

bool snap_reader_done(const struct snap_reader *r)
{
	return !r->bad && r->off == r->len;
}

/* ---- reading the file ---- */

__attribute__((format(printf, 3, 4)))
static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * The section header at @off of a body of @body_len bytes: 0 with @tag,
 * @rsv and @len read (the payload lies within the body), or -1 when the
 * header or the payload runs past the body.
 */
static int section_at(const uint8_t *body, size_t body_len, size_t off,
		      uint32_t *tag, uint32_t *rsv, uint64_t *len)
{
	size_t left;

	if (off > body_len || body_len - off < SNAP_SECTION_HEADER_LEN)
		return -1;
	left = body_len - off - SNAP_SECTION_HEADER_LEN;
	*tag = (uint32_t)get_le(body + off, 4);
	*rsv = (uint32_t)get_le(body + off + 4, 4);
	*len = get_le(body + off + 8, 8);
	return *len > left ? -1 : 0;
}

/* Every section's framing; the section count, or -EINVAL. */
static int check_sections(const uint8_t *body, size_t body_len, char *err,
			  size_t errlen)
{
	unsigned int nr = 0;
	uint32_t tag, rsv;
	uint64_t len;
	size_t off = 0;

	while (off < body_len) {
		if (nr >= SNAP_MAX_SECTIONS)
			return refuse(err, errlen,
				      "more than %u sections (the limit)",
				      SNAP_MAX_SECTIONS);
		if (body_len - off < SNAP_SECTION_HEADER_LEN)
			return refuse(err, errlen,
				      "section %u at state offset %zu: its header runs past the end of the state (%zu bytes left)",
				      nr, off, body_len - off);
		if (section_at(body, body_len, off, &tag, &rsv, &len))
			return refuse(err, errlen,
				      "section %u at state offset %zu: its length %llu runs past the end of the state",
				      nr, off, (unsigned long long)len);
		if (tag == 0 || tag > SNAP_TAG_MAX)
			return refuse(err, errlen,
				      "section %u at state offset %zu: unknown tag %u",
				      nr, off, tag);
		if (rsv)
			return refuse(err, errlen,
				      "section %u at state offset %zu: reserved word %#x, not 0",
				      nr, off, rsv);
		off += SNAP_SECTION_HEADER_LEN + (size_t)len;
		nr++;
	}
	return (int)nr;
}

int snap_file_parse(const uint8_t *buf, size_t len, uint32_t arch,
		    struct snap_file *f, char *err, size_t errlen)
{
	uint32_t version, farch, crc, want_crc, rsv;
	uint64_t body_len;
	size_t have;
	int nr;

	memset(f, 0, sizeof(*f));
	if (err && errlen)
		err[0] = '\0';
	if (len < SNAP_HEADER_LEN)
		return refuse(err, errlen,
			      "truncated: %zu bytes, a snapshot header is %u",
			      len, SNAP_HEADER_LEN);
	if (memcmp(buf, SNAP_MAGIC, SNAP_MAGIC_LEN))
		return refuse(err, errlen,
			      "not a microvm snapshot (bad magic)");
	version = (uint32_t)get_le(buf + 16, 4);
	if (version != SNAP_FORMAT_VERSION)
		return refuse(err, errlen,
			      "snapshot format version %u; this microvm reads version %u",
			      version, SNAP_FORMAT_VERSION);
	farch = (uint32_t)get_le(buf + 20, 4);
	if (farch != arch || !arch_known(farch))
		return refuse(err, errlen,
			      "snapshot is for %s; this host is %s",
			      snap_arch_name(farch), snap_arch_name(arch));
	rsv = (uint32_t)get_le(buf + 36, 4);
	if (rsv)
		return refuse(err, errlen,
			      "reserved header field is %#x, not 0", rsv);
	if (len > SNAP_MAX_FILE)
		return refuse(err, errlen,
			      "the state file is %zu bytes, over the limit of %u",
			      len, SNAP_MAX_FILE);
	body_len = get_le(buf + 24, 8);
	have = len - SNAP_HEADER_LEN;
	if (body_len > have)
		return refuse(err, errlen,
			      "truncated: the header says %llu bytes of state, the file has %zu",
			      (unsigned long long)body_len, have);
	if (body_len < have)
		return refuse(err, errlen,
			      "%zu bytes of trailing data after the state",
			      have - (size_t)body_len);
	want_crc = (uint32_t)get_le(buf + 32, 4);
	crc = snap_crc32(0, buf + SNAP_HEADER_LEN, have);
	if (crc != want_crc)
		return refuse(err, errlen,
			      "checksum mismatch: the file is corrupt (crc %08x, header says %08x)",
			      crc, want_crc);
	nr = check_sections(buf + SNAP_HEADER_LEN, have, err, errlen);
	if (nr < 0)
		return nr;
	f->version = version;
	f->arch = farch;
	f->body = buf + SNAP_HEADER_LEN;
	f->body_len = have;
	f->nr_sections = (unsigned int)nr;
	return 0;
}

int snap_next_section(const struct snap_file *f, size_t *cursor,
		      uint32_t *tag, struct snap_reader *r)
{
	uint32_t rsv;
	uint64_t len;

	if (*cursor >= f->body_len ||
	    section_at(f->body, f->body_len, *cursor, tag, &rsv, &len))
		return 0;
	r->p = f->body + *cursor + SNAP_SECTION_HEADER_LEN;
	r->len = (size_t)len;
	r->off = 0;
	r->bad = false;
	*cursor += SNAP_SECTION_HEADER_LEN + (size_t)len;
	return 1;
}
