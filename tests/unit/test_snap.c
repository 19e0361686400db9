// SPDX-License-Identifier: Apache-2.0
/*
 * The snapshot state file (src/snapshot/snap.c): CRC-32 against its
 * known answer and a bitwise reference, a round trip of every put/get
 * type over several sections, one table row per refusal of
 * snap_file_parse() with its message, every truncation and every
 * single-byte change of a small file refused, reader overruns (bad,
 * zeros), snap_get_str()'s refusals and the writer's sticky errors.
 * Files under test sit in exact-size malloc'd buffers, so an ASan build
 * catches any byte read past the end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "snapshot/snap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define HOST SNAP_ARCH_X86_64

/* Little-endian bytes for the hand-made bodies. */
#define LE32(v)                                                              \
	(uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16),             \
		(uint8_t)((v) >> 24)
#define LE64(v) LE32((uint64_t)(v)), LE32((uint64_t)(v) >> 32)
#define SECT(tag, rsv, len) LE32(tag), LE32(rsv), LE64(len)

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* A copy of @n bytes in a buffer of exactly that size (1 when n is 0). */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (!d)
		abort();
	if (n)
		memcpy(d, p, n);
	return d;
}

/* @body wrapped in a correct header for @arch; *@len the file's size. */
static uint8_t *wrap_body(const uint8_t *body, size_t n, uint32_t arch,
			  size_t *len)
{
	uint8_t *f = malloc(SNAP_HEADER_LEN + n);

	if (!f)
		abort();
	memcpy(f, SNAP_MAGIC, SNAP_MAGIC_LEN);
	put_le(f + 16, SNAP_FORMAT_VERSION, 4);
	put_le(f + 20, arch, 4);
	put_le(f + 24, n, 8);
	put_le(f + 32, snap_crc32(0, body, n), 4);
	put_le(f + 36, 0, 4);
	if (n)
		memcpy(f + SNAP_HEADER_LEN, body, n);
	*len = SNAP_HEADER_LEN + n;
	return f;
}

/* A small valid file: an INFO and a VCPU section, 55 bytes of state. */
static uint8_t *small_file(size_t *len)
{
	struct snap_writer w;
	uint8_t *out;

	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_INFO);
	snap_put_u32(&w, 7);
	snap_put_str(&w, "microvm");
	snap_section_end(&w);
	snap_section_begin(&w, SNAP_TAG_VCPU);
	snap_put_u64(&w, 0x0123456789abcdefull);
	snap_section_end(&w);
	if (snap_writer_finish(&w, HOST, &out, len))
		abort();
	return out;
}

/* ---- CRC-32 ---- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1u) ? 0xedb88320u : 0u);
	}
	return ~c;
}

static void test_crc32(void)
{
	static const char kat[] = "123456789";
	uint8_t data[4096], b;
	uint32_t seed = 1;

	CHECK_EQ(snap_crc32(0, kat, 9), 0xcbf43926u);
	CHECK_EQ(snap_crc32(0, NULL, 0), 0);
	/* Continuing a CRC across two calls. */
	CHECK_EQ(snap_crc32(snap_crc32(0, kat, 4), kat + 4, 5), 0xcbf43926u);
	CHECK_EQ(snap_crc32(0, "a", 1), 0xe8b7be43u);
	/* Every table entry, through each byte value on its own. */
	for (unsigned int i = 0; i < 256; i++) {
		b = (uint8_t)i;
		if (snap_crc32(0, &b, 1) != crc_bitwise(&b, 1))
			CHECK_EQ(snap_crc32(0, &b, 1), crc_bitwise(&b, 1));
	}
	for (size_t i = 0; i < sizeof(data); i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (uint8_t)(seed >> 16);
	}
	CHECK_EQ(snap_crc32(0, data, sizeof(data)),
		 crc_bitwise(data, sizeof(data)));
}

/* ---- the round trip ---- */

struct regs {
	uint64_t rip, rsp;
	uint32_t flags;
	uint8_t pad[20];
};

static void write_all(struct snap_writer *w, const char *long_str,
		      const struct regs *regs)
{
	static const uint8_t ram_layout[5] = { 1, 2, 3, 4, 5 };

	snap_writer_init(w);
	snap_section_begin(w, SNAP_TAG_INFO);
	snap_put_u8(w, 0);
	snap_put_u8(w, 0xff);
	snap_put_u16(w, 0xbeef);
	snap_put_u32(w, 0xdeadbeefu);
	snap_put_u64(w, UINT64_MAX);
	snap_put_u64(w, 0x0102030405060708ull);
	snap_put_str(w, "microvm 1.0");
	snap_put_str(w, NULL);
	snap_put_str(w, "");
	snap_section_end(w);
	snap_section_begin(w, SNAP_TAG_CONFIG);
	snap_put_str(w, long_str);
	snap_section_end(w);
	for (uint32_t i = 0; i < 3; i++) {
		snap_section_begin(w, SNAP_TAG_VCPU);
		snap_put_u32(w, i);
		snap_put_bytes(w, &regs[i], sizeof(regs[i]));
		snap_section_end(w);
	}
	snap_section_begin(w, SNAP_TAG_DEVICE); /* empty */
	snap_section_end(w);
	snap_section_begin(w, SNAP_TAG_MEMORY);
	snap_put_bytes(w, ram_layout, sizeof(ram_layout));
	snap_put_bytes(w, NULL, 0);
	snap_section_end(w);
}

static void check_info(struct snap_reader *r)
{
	char s[32];

	CHECK_EQ(snap_get_u8(r), 0);
	CHECK_EQ(snap_get_u8(r), 0xff);
	CHECK_EQ(snap_get_u16(r), 0xbeef);
	CHECK_EQ(snap_get_u32(r), 0xdeadbeefu);
	CHECK(snap_get_u64(r) == UINT64_MAX);
	CHECK(snap_get_u64(r) == 0x0102030405060708ull);
	CHECK(snap_get_str(r, s, sizeof(s)) && !strcmp(s, "microvm 1.0"));
	CHECK(snap_get_str(r, s, sizeof(s)) && !strcmp(s, ""));
	CHECK(snap_get_str(r, s, 1) && !strcmp(s, ""));
}

/* Section @n of write_all()'s file, read back. */
static void check_section(unsigned int n, struct snap_reader *r,
			  const char *long_str, const struct regs *regs)
{
	static char got[SNAP_MAX_STR + 1];
	const uint8_t *ref;
	struct regs back;

	if (n == 0) {
		check_info(r);
	} else if (n == 1) {
		CHECK(snap_get_str(r, got, sizeof(got)));
		CHECK(!strcmp(got, long_str));
	} else if (n <= 4) {
		CHECK_EQ(snap_get_u32(r), n - 2);
		snap_get_bytes(r, &back, sizeof(back));
		CHECK(!memcmp(&back, &regs[n - 2], sizeof(back)));
	} else if (n == 5) {
		CHECK_EQ(r->len, 0);
	} else {
		CHECK_EQ(snap_reader_left(r), 5);
		ref = snap_get_ref(r, 5);
		CHECK(ref && ref[0] == 1 && ref[4] == 5);
		CHECK(snap_get_ref(r, 0) != NULL);
	}
	CHECK(snap_reader_done(r));
}

static void test_round_trip(void)
{
	static char long_str[SNAP_MAX_STR + 1];
	static const uint32_t want_tags[] = {
		SNAP_TAG_INFO, SNAP_TAG_CONFIG, SNAP_TAG_VCPU, SNAP_TAG_VCPU,
		SNAP_TAG_VCPU, SNAP_TAG_DEVICE, SNAP_TAG_MEMORY,
	};
	struct regs regs[3];
	struct snap_writer w;
	struct snap_reader r;
	struct snap_file f;
	uint8_t *buf, *file;
	size_t len, cur = 0;
	unsigned int n = 0;
	uint32_t tag;
	char err[256];

	memset(long_str, 'j', SNAP_MAX_STR);
	memset(regs, 0, sizeof(regs));
	for (int i = 0; i < 3; i++) {
		regs[i].rip = 0xffffffff81000000ull + (uint64_t)i;
		regs[i].rsp = 0x8000u * (uint64_t)(i + 1);
		regs[i].flags = 0x202;
		regs[i].pad[19] = (uint8_t)(0x10 + i);
	}
	write_all(&w, long_str, regs);
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.nr_sections, 7);
	CHECK_EQ(snap_writer_finish(&w, HOST, &buf, &len), 0);
	CHECK(w.buf == NULL && w.len == 0 && w.err == 0);
	if (!buf)
		return;
	file = dup_exact(buf, len);
	free(buf);
	/* The header, field by field. */
	CHECK(!memcmp(file, "MICROVM-SNAPSHOT", 16));
	CHECK_EQ(get_le(file + 16, 4), SNAP_FORMAT_VERSION);
	CHECK_EQ(get_le(file + 20, 4), HOST);
	CHECK_EQ(get_le(file + 24, 8), len - SNAP_HEADER_LEN);
	CHECK_EQ(get_le(file + 32, 4),
		 crc_bitwise(file + SNAP_HEADER_LEN, len - SNAP_HEADER_LEN));
	CHECK_EQ(get_le(file + 36, 4), 0);
	/* The first section's header, its length back-patched. */
	CHECK_EQ(get_le(file + 40, 4), SNAP_TAG_INFO);
	CHECK_EQ(get_le(file + 44, 4), 0);
	CHECK_EQ(get_le(file + 48, 8), 1 + 1 + 2 + 4 + 8 + 8 + 15 + 4 + 4);

	CHECK_EQ(snap_file_parse(file, len, HOST, &f, err, sizeof(err)), 0);
	CHECK_EQ(f.version, SNAP_FORMAT_VERSION);
	CHECK_EQ(f.arch, HOST);
	CHECK_EQ(f.nr_sections, 7);
	CHECK(f.body == file + SNAP_HEADER_LEN);
	CHECK_EQ(f.body_len, len - SNAP_HEADER_LEN);
	while (snap_next_section(&f, &cur, &tag, &r) == 1) {
		CHECK(n < ARRAY_SIZE(want_tags) && tag == want_tags[n]);
		check_section(n++, &r, long_str, regs);
	}
	CHECK_EQ(n, 7);
	CHECK_EQ(cur, f.body_len);
	CHECK_EQ(snap_next_section(&f, &cur, &tag, &r), 0);
	free(file);
}

/* ---- snap_file_parse()'s refusals ---- */

static const uint8_t body_hdr_short[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
static const uint8_t body_hdr2_short[] = { SECT(1, 0, 0), 6, 0, 0, 0, 0 };
static const uint8_t body_len_past[] = { SECT(1, 0, 5), 1, 2, 3, 4 };
static const uint8_t body_len_max[] = { SECT(1, 0, UINT64_MAX), 1 };
static const uint8_t body_len_wraps[] = { SECT(2, 0, 0xfffffffffffffff0ull) };
static const uint8_t body_tag0[] = { SECT(0, 0, 0) };
static const uint8_t body_tag8[] = { SECT(8, 0, 0) };
static const uint8_t body_tag_max[] = { SECT(0xffffffffu, 0, 0) };
static const uint8_t body_rsv[] = { SECT(1, 5, 0) };
static const uint8_t body_second_bad[] = { SECT(2, 0, 1), 0xaa,
					   SECT(9, 0, 0) };

struct parse_row {
	const char *name;
	const uint8_t *body; /* wrapped in a correct header; NULL: small_file */
	size_t body_len;
	size_t xor_off;      /* XOR xor_val into xor_width bytes here */
	uint64_t xor_val;
	unsigned int xor_width;
	int64_t len_delta;   /* added to the header's body length */
	size_t extra;        /* zero bytes appended */
	size_t cut;          /* bytes cut off the end */
	uint32_t arch;       /* expected; 0: HOST */
	const char *want;
};

#define BODY(b) .body = (b), .body_len = sizeof(b)

static const struct parse_row parse_rows[] = {
	{ "bad magic, first byte", .xor_off = 0, .xor_val = 0x20,
	  .xor_width = 1, .want = "not a microvm snapshot (bad magic)" },
	{ "bad magic, last byte", .xor_off = 15, .xor_val = 1,
	  .xor_width = 1, .want = "not a microvm snapshot (bad magic)" },
	{ "format version 2", .xor_off = 16, .xor_val = 3, .xor_width = 4,
	  .want = "snapshot format version 2; this microvm reads version 1" },
	{ "format version 0", .xor_off = 16, .xor_val = 1, .xor_width = 4,
	  .want = "snapshot format version 0; this microvm reads version 1" },
	{ "file for aarch64", .xor_off = 20, .xor_val = 3, .xor_width = 4,
	  .want = "snapshot is for aarch64; this host is x86_64" },
	{ "file for an unknown arch", .xor_off = 20, .xor_val = 1,
	  .xor_width = 4, .want = "snapshot is for unknown; this host is x86_64" },
	{ "host is aarch64", .arch = SNAP_ARCH_AARCH64,
	  .want = "snapshot is for x86_64; this host is aarch64" },
	{ "host arch unknown", .arch = 9,
	  .want = "snapshot is for x86_64; this host is unknown" },
	{ "file and host arch the same unknown one", .xor_off = 20,
	  .xor_val = 1 ^ 9, .xor_width = 4, .arch = 9,
	  .want = "snapshot is for unknown; this host is unknown" },
	{ "reserved header field", .xor_off = 36, .xor_val = 1,
	  .xor_width = 4, .want = "reserved header field is 0x1, not 0" },
	{ "body length one more", .len_delta = 1,
	  .want = "truncated: the header says 56 bytes of state, the file has 55" },
	{ "body length 2^64-1", .xor_off = 24, .xor_val = ~(uint64_t)55,
	  .xor_width = 8,
	  .want = "truncated: the header says 18446744073709551615 bytes of state, the file has 55" },
	{ "last byte cut", .cut = 1,
	  .want = "truncated: the header says 55 bytes of state, the file has 54" },
	{ "whole body cut", .cut = 55,
	  .want = "truncated: the header says 55 bytes of state, the file has 0" },
	{ "body length one less", .len_delta = -1,
	  .want = "1 bytes of trailing data" },
	{ "3 bytes appended", .extra = 3, .want = "3 bytes of trailing data" },
	{ "checksum field changed", .xor_off = 32, .xor_val = 0xffffffffu,
	  .xor_width = 4, .want = "checksum mismatch: the file is corrupt (crc " },
	{ "body byte changed", .xor_off = 70, .xor_val = 0x40, .xor_width = 1,
	  .want = "checksum mismatch: the file is corrupt (crc " },
	{ "section header past the state", BODY(body_hdr_short),
	  .want = "section 0 at state offset 0: its header runs past the end of the state (10 bytes left)" },
	{ "second section header past the state", BODY(body_hdr2_short),
	  .want = "section 1 at state offset 16: its header runs past the end of the state (5 bytes left)" },
	{ "section length past the state", BODY(body_len_past),
	  .want = "section 0 at state offset 0: its length 5 runs past the end of the state" },
	{ "section length 2^64-1", BODY(body_len_max),
	  .want = "its length 18446744073709551615 runs past the end of the state" },
	{ "section length that wraps the offset", BODY(body_len_wraps),
	  .want = "its length 18446744073709551600 runs past the end of the state" },
	{ "tag 0", BODY(body_tag0), .want = "section 0 at state offset 0: unknown tag 0" },
	{ "tag SNAP_TAG_MAX + 1", BODY(body_tag8), .want = "unknown tag 8" },
	{ "tag 2^32-1", BODY(body_tag_max), .want = "unknown tag 4294967295" },
	{ "reserved section word", BODY(body_rsv),
	  .want = "section 0 at state offset 0: reserved word 0x5, not 0" },
	{ "second section's tag", BODY(body_second_bad),
	  .want = "section 1 at state offset 17: unknown tag 9" },
};

static void parse_row_file(const struct parse_row *row, uint8_t **file,
			   size_t *len)
{
	uint8_t *b, *d;
	size_t n;

	b = row->body ? wrap_body(row->body, row->body_len, HOST, &n)
		      : small_file(&n);
	if (row->xor_width)
		put_le(b + row->xor_off,
		       get_le(b + row->xor_off, row->xor_width) ^ row->xor_val,
		       row->xor_width);
	put_le(b + 24, get_le(b + 24, 8) + (uint64_t)row->len_delta, 8);
	*len = n + row->extra - row->cut;
	d = calloc(1, *len ? *len : 1);
	if (!d)
		abort();
	memcpy(d, b, n - row->cut);
	free(b);
	*file = d;
}

static void test_parse_rows(void)
{
	struct snap_file f;
	uint8_t *file;
	char err[256];
	size_t len;
	int ret;

	/* The small file itself parses: the rows start from a good file. */
	file = small_file(&len);
	CHECK_EQ(len, SNAP_HEADER_LEN + 55);
	CHECK_EQ(snap_file_parse(file, len, HOST, &f, err, sizeof(err)), 0);
	CHECK_EQ(f.nr_sections, 2);
	free(file);
	for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
		const struct parse_row *row = &parse_rows[i];

		parse_row_file(row, &file, &len);
		memset(&f, 0xa5, sizeof(f));
		strcpy(err, "(none)");
		ret = snap_file_parse(file, len, row->arch ? row->arch : HOST,
				      &f, err, sizeof(err));
		CHECK_EQ(ret, -EINVAL);
		CHECK(strstr(err, row->want) != NULL);
		CHECK(strchr(err, '\n') == NULL);
		CHECK(f.body == NULL && f.nr_sections == 0);
		if (ret != -EINVAL || !strstr(err, row->want))
			fprintf(stderr, "  row \"%s\": rc %d, \"%s\"\n",
				row->name, ret, err);
		/* No message buffer: the same verdict. */
		CHECK_EQ(snap_file_parse(file, len, row->arch ? row->arch : HOST,
					 &f, NULL, 0), -EINVAL);
		free(file);
	}
}

/* SNAP_MAX_SECTIONS empty sections parse; one more is refused. */
static void test_parse_max_sections(void)
{
	size_t n = (SNAP_MAX_SECTIONS + 1) * SNAP_SECTION_HEADER_LEN, len;
	uint8_t *body = calloc(1, n), *file;
	struct snap_file f;
	char err[256] = "";

	if (!body)
		abort();
	for (size_t off = 0; off < n; off += SNAP_SECTION_HEADER_LEN)
		put_le(body + off, SNAP_TAG_DEVICE, 4);
	file = wrap_body(body, n - SNAP_SECTION_HEADER_LEN, HOST, &len);
	CHECK_EQ(snap_file_parse(file, len, HOST, &f, err, sizeof(err)), 0);
	CHECK_EQ(f.nr_sections, SNAP_MAX_SECTIONS);
	free(file);
	file = wrap_body(body, n, HOST, &len);
	CHECK_EQ(snap_file_parse(file, len, HOST, &f, err, sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, "more than 1024 sections") != NULL);
	free(file);
	free(body);
}

/* A file of exactly SNAP_MAX_FILE bytes parses; one byte more does not. */
static void test_parse_max_file(void)
{
	size_t body = SNAP_MAX_FILE - SNAP_HEADER_LEN - SNAP_SECTION_HEADER_LEN;
	uint8_t *buf, *big;
	struct snap_writer w;
	struct snap_file f;
	char err[256] = "";
	size_t len;

	big = calloc(1, body + 1);
	if (!big)
		abort();
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_MEMORY);
	snap_put_bytes(&w, big, body);
	CHECK_EQ(w.err, 0);
	snap_section_end(&w);
	CHECK_EQ(snap_writer_finish(&w, HOST, &buf, &len), 0);
	CHECK_EQ(len, SNAP_MAX_FILE);
	if (buf) {
		CHECK_EQ(snap_file_parse(buf, len, HOST, &f, err, sizeof(err)),
			 0);
		free(buf);
	}
	/* One byte more: the writer says -EFBIG, the reader refuses. */
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_MEMORY);
	snap_put_bytes(&w, big, body + 1);
	CHECK_EQ(w.err, -EFBIG);
	CHECK_EQ(snap_writer_finish(&w, HOST, &buf, &len), -EFBIG);
	CHECK(buf == NULL);
	free(big);
	buf = wrap_body(NULL, 0, HOST, &len);
	put_le(buf + 24, SNAP_MAX_FILE + 1 - SNAP_HEADER_LEN, 8);
	CHECK_EQ(snap_file_parse(buf, SNAP_MAX_FILE + 1u, HOST, &f, err,
				 sizeof(err)), -EINVAL);
	CHECK(strstr(err, "the state file is 67108865 bytes, over the limit of 67108864"));
	free(buf);
}

/* Every prefix of a file, from 0 bytes, is refused as truncated. */
static void test_parse_truncated(void)
{
	uint8_t *whole, *part;
	struct snap_file f;
	char err[256], want[64];
	size_t len, bad = 0;

	whole = small_file(&len);
	for (size_t n = 0; n < len; n++) {
		part = dup_exact(whole, n);
		strcpy(err, "");
		if (n < SNAP_HEADER_LEN)
			snprintf(want, sizeof(want),
				 "truncated: %zu bytes, a snapshot header is 40",
				 n);
		else
			snprintf(want, sizeof(want), "the file has %zu",
				 n - SNAP_HEADER_LEN);
		if (snap_file_parse(part, n, HOST, &f, err, sizeof(err)) !=
			    -EINVAL ||
		    !strstr(err, want)) {
			fprintf(stderr, "  %zu bytes: \"%s\"\n", n, err);
			bad++;
		}
		free(part);
	}
	CHECK_EQ(bad, 0);
	free(whole);
}

/* Any change of any one byte is refused (header checks or the CRC). */
static void test_parse_flips(void)
{
	uint8_t *file;
	struct snap_file f;
	char err[256];
	size_t len, bad = 0;

	file = small_file(&len);
	for (size_t i = 0; i < len; i++) {
		for (unsigned int x = 1; x < 256; x++) {
			file[i] ^= (uint8_t)x;
			err[0] = '\0';
			if (snap_file_parse(file, len, HOST, &f, err,
					    sizeof(err)) != -EINVAL ||
			    !err[0]) {
				if (bad++ < 5)
					fprintf(stderr,
						"  byte %zu ^ %#x accepted\n",
						i, x);
			}
			file[i] ^= (uint8_t)x;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(snap_file_parse(file, len, HOST, &f, err, sizeof(err)), 0);
	free(file);
}

/* ---- the reader ---- */

static void test_reader_overrun(void)
{
	static const uint8_t p[11] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	struct snap_reader r = { .p = p, .len = 3 };
	uint8_t dst[8];

	CHECK_EQ(snap_get_u16(&r), 0x0201);
	CHECK_EQ(snap_reader_left(&r), 1);
	CHECK(!r.bad && !snap_reader_done(&r));
	CHECK_EQ(snap_get_u32(&r), 0); /* 1 byte left: short */
	CHECK(r.bad);
	/* Sticky: the byte that is there is not handed out either. */
	CHECK_EQ(snap_get_u8(&r), 0);
	CHECK_EQ(snap_reader_left(&r), 0);
	CHECK(!snap_reader_done(&r));

	r = (struct snap_reader){ .p = p, .len = 7 };
	CHECK(snap_get_u64(&r) == 0 && r.bad);
	r = (struct snap_reader){ .p = p, .len = 11 };
	CHECK(snap_get_u64(&r) == 0x0807060504030201ull);
	memset(dst, 0xaa, sizeof(dst));
	snap_get_bytes(&r, dst, 4); /* 3 left */
	CHECK(r.bad);
	CHECK(dst[0] == 0 && dst[3] == 0 && dst[4] == 0xaa);
	r = (struct snap_reader){ .p = p, .len = 11, .off = 10 };
	CHECK(snap_get_ref(&r, 2) == NULL && r.bad);
	/* Lengths that would overflow an `off + n > len` check. */
	r = (struct snap_reader){ .p = p, .len = 11, .off = 4 };
	CHECK(snap_get_ref(&r, SIZE_MAX) == NULL && r.bad);
	r = (struct snap_reader){ .p = p, .len = 11, .off = 4 };
	CHECK(snap_get_ref(&r, SIZE_MAX - 2) == NULL && r.bad);
	r = (struct snap_reader){ .p = p, .len = 11, .off = 4 };
	CHECK(snap_get_ref(&r, 7) == p + 4 && snap_reader_done(&r));
	CHECK(snap_get_ref(&r, 0) == p + 11 && snap_reader_done(&r));
	/* An empty reader: done at once, any get is short. */
	r = (struct snap_reader){ .p = p, .len = 0 };
	CHECK(snap_reader_done(&r));
	CHECK_EQ(snap_get_u8(&r), 0);
	CHECK(r.bad && !snap_reader_done(&r));
}

/* A section payload of @n bytes in an exact-size buffer. */
static struct snap_reader reader_of(uint8_t **keep, const uint8_t *p,
				    size_t n)
{
	*keep = dup_exact(p, n);
	return (struct snap_reader){ .p = *keep, .len = n };
}

static void test_get_str(void)
{
	static const uint8_t hello[] = { LE32(5), 'h', 'e', 'l', 'l', 'o' };
	static const uint8_t nul[] = { LE32(3), 'a', 0, 'b' };
	static const uint8_t short_[] = { LE32(10), 'a', 'b', 'c' };
	static const uint8_t len_max[] = { LE32(UINT32_MAX), 'a' };
	static char big[4 + SNAP_MAX_STR + 1], out[SNAP_MAX_STR + 8];
	struct snap_reader r;
	uint8_t *keep;

	r = reader_of(&keep, hello, sizeof(hello));
	CHECK(snap_get_str(&r, out, 6) && !strcmp(out, "hello"));
	CHECK(snap_reader_done(&r));
	free(keep);
	/* Longer than @max - 1: refused, out empty. */
	r = reader_of(&keep, hello, sizeof(hello));
	strcpy(out, "x");
	CHECK(!snap_get_str(&r, out, 5) && r.bad && out[0] == '\0');
	free(keep);
	r = reader_of(&keep, hello, sizeof(hello));
	CHECK(!snap_get_str(&r, out, 0) && r.bad);
	free(keep);
	r = reader_of(&keep, nul, sizeof(nul));
	CHECK(!snap_get_str(&r, out, sizeof(out)) && r.bad && !out[0]);
	free(keep);
	r = reader_of(&keep, short_, sizeof(short_));
	CHECK(!snap_get_str(&r, out, sizeof(out)) && r.bad && !out[0]);
	free(keep);
	r = reader_of(&keep, len_max, sizeof(len_max));
	CHECK(!snap_get_str(&r, out, sizeof(out)) && r.bad);
	free(keep);
	r = reader_of(&keep, hello, 2); /* not even the length */
	CHECK(!snap_get_str(&r, out, sizeof(out)) && r.bad);
	free(keep);
	/* SNAP_MAX_STR + 1 bytes, all there, room in @out: still refused. */
	put_le((uint8_t *)big, SNAP_MAX_STR + 1, 4);
	memset(big + 4, 's', SNAP_MAX_STR + 1);
	r = reader_of(&keep, (const uint8_t *)big, sizeof(big));
	CHECK(!snap_get_str(&r, out, sizeof(out)) && r.bad);
	free(keep);
	put_le((uint8_t *)big, SNAP_MAX_STR, 4);
	r = reader_of(&keep, (const uint8_t *)big, sizeof(big) - 1);
	CHECK(snap_get_str(&r, out, sizeof(out)) &&
	      strlen(out) == SNAP_MAX_STR && snap_reader_done(&r));
	free(keep);
}

/* ---- the writer's errors ---- */

/* finish() on a writer in error: that error, no buffer, writer empty. */
static void check_finish_fails(struct snap_writer *w, int want)
{
	uint8_t *out = (uint8_t *)&out;
	size_t len = 1;

	CHECK_EQ(snap_writer_finish(w, HOST, &out, &len), want);
	CHECK(out == NULL && len == 0);
	CHECK(w->buf == NULL && w->len == 0 && w->err == 0);
}

static void test_writer_misuse(void)
{
	struct snap_writer w;
	uint8_t *out;
	size_t len;

	/* Nested sections. */
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_VCPU);
	snap_section_begin(&w, SNAP_TAG_VCPU);
	CHECK_EQ(w.err, -EINVAL);
	check_finish_fails(&w, -EINVAL);
	/* A put outside a section, before any and after one. */
	snap_writer_init(&w);
	snap_put_u32(&w, 1);
	CHECK_EQ(w.err, -EINVAL);
	snap_writer_free(&w);
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_INFO);
	snap_section_end(&w);
	snap_put_str(&w, "x");
	CHECK_EQ(w.err, -EINVAL);
	check_finish_fails(&w, -EINVAL);
	/* An end without a begin; a section left open. */
	snap_writer_init(&w);
	snap_section_end(&w);
	CHECK_EQ(w.err, -EINVAL);
	snap_writer_free(&w);
	CHECK(w.buf == NULL);
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_CPU);
	CHECK_EQ(w.err, 0);
	check_finish_fails(&w, -EINVAL);
	/* Unknown tags and an unknown architecture. */
	snap_writer_init(&w);
	snap_section_begin(&w, 0);
	CHECK_EQ(w.err, -EINVAL);
	snap_writer_free(&w);
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_MAX + 1);
	CHECK_EQ(w.err, -EINVAL);
	snap_writer_free(&w);
	snap_writer_init(&w);
	CHECK_EQ(snap_writer_finish(&w, 0, &out, &len), -EINVAL);
}

static void test_writer_limits(void)
{
	static char long_str[SNAP_MAX_STR + 2];
	struct snap_writer w;
	struct snap_file f;
	uint8_t *out;
	size_t len;
	char err[256];

	/* A string one byte too long; sticky past a later error. */
	memset(long_str, 'l', SNAP_MAX_STR + 1);
	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_CONFIG);
	snap_put_str(&w, long_str);
	CHECK_EQ(w.err, -ENAMETOOLONG);
	snap_section_begin(&w, SNAP_TAG_CONFIG); /* nested: ignored */
	snap_section_end(&w);
	snap_put_u8(&w, 1);
	CHECK_EQ(w.err, -ENAMETOOLONG);
	check_finish_fails(&w, -ENAMETOOLONG);
	/* SNAP_MAX_SECTIONS sections are fine, one more is -E2BIG. */
	snap_writer_init(&w);
	for (unsigned int i = 0; i < SNAP_MAX_SECTIONS; i++) {
		snap_section_begin(&w, SNAP_TAG_DEVICE);
		snap_put_u8(&w, (uint8_t)i);
		snap_section_end(&w);
	}
	CHECK_EQ(w.err, 0);
	snap_section_begin(&w, SNAP_TAG_DEVICE);
	CHECK_EQ(w.err, -E2BIG);
	check_finish_fails(&w, -E2BIG);
	snap_writer_init(&w);
	for (unsigned int i = 0; i < SNAP_MAX_SECTIONS; i++) {
		snap_section_begin(&w, SNAP_TAG_DEVICE);
		snap_section_end(&w);
	}
	CHECK_EQ(snap_writer_finish(&w, SNAP_ARCH_AARCH64, &out, &len), 0);
	CHECK_EQ(snap_file_parse(out, len, SNAP_ARCH_AARCH64, &f, err,
				 sizeof(err)), 0);
	CHECK_EQ(f.nr_sections, SNAP_MAX_SECTIONS);
	free(out);
	/* After finish the writer is empty: a put is an error, not a crash. */
	snap_section_begin(&w, SNAP_TAG_INFO);
	CHECK_EQ(w.err, -EINVAL);
	snap_writer_free(&w);
}

static void test_arch_name(void)
{
	CHECK(!strcmp(snap_arch_name(SNAP_ARCH_X86_64), "x86_64"));
	CHECK(!strcmp(snap_arch_name(SNAP_ARCH_AARCH64), "aarch64"));
	CHECK(!strcmp(snap_arch_name(0), "unknown"));
	CHECK(!strcmp(snap_arch_name(3), "unknown"));
}

int main(void)
{
	test_crc32();
	test_round_trip();
	test_parse_rows();
	test_parse_max_sections();
	test_parse_max_file();
	test_parse_truncated();
	test_parse_flips();
	test_reader_overrun();
	test_get_str();
	test_writer_misuse();
	test_writer_limits();
	test_arch_name();
	return test_done();
}
