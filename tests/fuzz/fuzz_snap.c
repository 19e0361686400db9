// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the snapshot state file (src/snapshot/snap.c), a
 * file a user hands to a restore and so input like a guest's rings.
 * Input layout: byte 0 'F' makes the rest a body, wrapped here in a
 * correct header and CRC (so the section framing and the readers get
 * fuzzed, not only the CRC); any other input is a whole file as given.
 * Each file is parsed for both architectures; on success every section
 * is walked and read with gets chosen by the payload's own bytes (op
 * byte % 8: u8, u16, u32, u64, bytes, str, ref, an overflowing ref).
 * The model (abort() when broken):
 * - a wrapped body parses for x86_64 or is refused for its framing (never
 *   for the header, length or CRC), and is refused for aarch64; a raw
 *   file parses for at most one architecture; a refusal has a message;
 * - the walk yields f.nr_sections sections, each payload inside the
 *   body, each tag known, and ends exactly at the end of the body;
 * - a reader's off + left is its length until it goes bad, then every
 *   get returns zeros, left is 0 and done is false; a short get_bytes
 *   zeroes its buffer; a string read has no NUL and fits its buffer;
 * - writing the sections back with the writer gives the same file.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap.h"

#define OPS_MAX 4096 /* gets per section; each takes a byte or fails */
#define STR_BUF 300

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reader(const struct snap_reader *r)
{
	if (r->bad) {
		if (snap_reader_left(r) != 0 || snap_reader_done(r))
			abort();
	} else if (r->off > r->len ||
		   snap_reader_left(r) != r->len - r->off) {
		abort();
	}
}

/* One get chosen by @op; aborts when a promise breaks. */
static void do_op(struct snap_reader *r, uint8_t op, const uint8_t *body,
		  size_t body_len)
{
	uint8_t buf[256], z[256] = { 0 };
	char s[STR_BUF];
	const uint8_t *p;
	bool was_bad = r->bad;
	uint64_t v = 0;
	size_t n;

	switch (op % 8) {
	case 0:
		v = snap_get_u8(r);
		break;
	case 1:
		v = snap_get_u16(r);
		break;
	case 2:
		v = snap_get_u32(r);
		break;
	case 3:
		v = snap_get_u64(r);
		break;
	case 4:
		n = snap_get_u8(r);
		memset(buf, 0xa5, sizeof(buf));
		snap_get_bytes(r, buf, n);
		if (r->bad && memcmp(buf, z, n))
			abort();
		break;
	case 5:
		n = snap_get_u8(r) + 1u; /* a buffer of 1 to 256 bytes */
		if (snap_get_str(r, s, n)) {
			if (r->bad || strlen(s) >= n)
				abort();
		} else if (!r->bad || s[0]) {
			abort();
		}
		break;
	case 6:
		n = snap_get_u16(r);
		p = snap_get_ref(r, n);
		if (p && (p < body || n > body_len ||
			  (size_t)(p - body) > body_len - n))
			abort();
		if (!p != r->bad)
			abort();
		for (size_t i = 0; p && i < n; i++)
			v += p[i]; /* ASan checks each byte is there */
		break;
	default:
		if (snap_get_ref(r, SIZE_MAX - (op >> 3)) || !r->bad)
			abort();
		break;
	}
	if (was_bad && v)
		abort();
	check_reader(r);
}

/* Walk @f, read every section and write it back into @w. */
static void walk(const struct snap_file *f, struct snap_writer *w)
{
	struct snap_reader r, rr;
	unsigned int nr = 0;
	size_t cur = 0;
	uint32_t tag;

	snap_writer_init(w);
	while (snap_next_section(f, &cur, &tag, &r) == 1) {
		if (++nr > f->nr_sections || tag == 0 || tag > SNAP_TAG_MAX ||
		    r.off || r.bad || r.p < f->body ||
		    r.len > f->body_len ||
		    (size_t)(r.p - f->body) > f->body_len - r.len ||
		    cur > f->body_len)
			abort();
		snap_section_begin(w, tag);
		snap_put_bytes(w, r.p, r.len);
		snap_section_end(w);
		rr = r;
		for (unsigned int k = 0; k < OPS_MAX && !rr.bad; k++)
			do_op(&rr, snap_get_u8(&rr), f->body, f->body_len);
		/* A few more on the bad reader: zeros, no reads. */
		for (uint8_t op = 0; op < 8; op++)
			do_op(&rr, op, f->body, f->body_len);
	}
	if (nr != f->nr_sections || cur != f->body_len)
		abort();
}

/* Parse @buf for @arch; on success walk it and write it back. */
static int parse_walk(const uint8_t *buf, size_t len, uint32_t arch)
{
	struct snap_writer w;
	struct snap_file f;
	uint8_t *out;
	size_t out_len;
	char err[256];

	err[0] = '\0';
	if (snap_file_parse(buf, len, arch, &f, err, sizeof(err))) {
		if (!err[0] || f.body)
			abort();
		return -1;
	}
	if (f.arch != arch || f.version != SNAP_FORMAT_VERSION ||
	    f.body != buf + SNAP_HEADER_LEN ||
	    f.body_len != len - SNAP_HEADER_LEN)
		abort();
	walk(&f, &w);
	if (snap_writer_finish(&w, arch, &out, &out_len) ||
	    out_len != len || memcmp(out, buf, len))
		abort();
	free(out);
	return 0;
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *file;
	size_t n;
	char err[256];
	struct snap_file f;
	int x86, arm;

	if (size && data[0] == 'F') {
		n = size - 1;
		file = malloc(SNAP_HEADER_LEN + n);
		if (!file)
			return 0;
		memcpy(file, SNAP_MAGIC, SNAP_MAGIC_LEN);
		put_le(file + 16, SNAP_FORMAT_VERSION, 4);
		put_le(file + 20, SNAP_ARCH_X86_64, 4);
		put_le(file + 24, n, 8);
		put_le(file + 32, snap_crc32(0, data + 1, n), 4);
		put_le(file + 36, 0, 4);
		memcpy(file + SNAP_HEADER_LEN, data + 1, n);
		if (parse_walk(file, SNAP_HEADER_LEN + n, SNAP_ARCH_X86_64)) {
			/* Refused: only for its framing. */
			snap_file_parse(file, SNAP_HEADER_LEN + n,
					SNAP_ARCH_X86_64, &f, err, sizeof(err));
			if (strncmp(err, "section ", 8) &&
			    strncmp(err, "more than ", 10))
				abort();
		}
		if (!parse_walk(file, SNAP_HEADER_LEN + n, SNAP_ARCH_AARCH64))
			abort();
		free(file);
		return 0;
	}
	/* As given, in a buffer of its exact size (libFuzzer's is). */
	x86 = parse_walk(data, size, SNAP_ARCH_X86_64);
	arm = parse_walk(data, size, SNAP_ARCH_AARCH64);
	if (!x86 && !arm)
		abort();
	return 0;
}
