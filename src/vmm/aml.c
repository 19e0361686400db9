// SPDX-License-Identifier: Apache-2.0
/*
 * The AML byte-code builder. Constructs with a PkgLength (scopes, devices,
 * methods, packages, buffers) record where their body starts; aml_end()
 * measures the body and inserts the shortest PkgLength in front of it, so
 * nothing is reserved or patched in place. Opcodes: ACPI 6.3 §20.2.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/aml.h"
#include "vmm/aml_priv.h"

#define AML_ZERO_OP 0x00
#define AML_ONE_OP 0x01
#define AML_NAME_OP 0x08
#define AML_BYTE_PREFIX 0x0a
#define AML_WORD_PREFIX 0x0b
#define AML_DWORD_PREFIX 0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_QWORD_PREFIX 0x0e
#define AML_SCOPE_OP 0x10
#define AML_BUFFER_OP 0x11
#define AML_PACKAGE_OP 0x12
#define AML_METHOD_OP 0x14
#define AML_DUAL_NAME_PREFIX 0x2e
#define AML_MULTI_NAME_PREFIX 0x2f
#define AML_EXT_OP_PREFIX 0x5b
#define AML_DEVICE_OP 0x82 /* after AML_EXT_OP_PREFIX */
#define AML_ROOT_CHAR 0x5c
#define AML_PARENT_PREFIX_CHAR 0x5e
#define AML_ARG0_OP 0x68
#define AML_RETURN_OP 0xa4
#define AML_NOTIFY_OP 0x86
#define AML_RES_END_TAG 0x79 /* ACPI 6.3 §6.4.2.9 */

void aml_init(struct aml *a)
{
	memset(a, 0, sizeof(*a));
}

void aml_release(struct aml *a)
{
	free(a->buf);
	aml_init(a);
}

int aml_finish(const struct aml *a)
{
	if (a->err)
		return a->err;
	return a->depth ? -EINVAL : 0;
}

void aml_fail(struct aml *a, int err)
{
	if (!a->err)
		a->err = err;
}

static bool aml_reserve(struct aml *a, size_t extra)
{
	size_t cap;
	uint8_t *p;

	if (a->err)
		return false;
	if (extra <= a->cap - a->len)
		return true;
	if (extra > SIZE_MAX / 2 - a->len) {
		aml_fail(a, -ENOMEM);
		return false;
	}
	cap = a->cap ? a->cap : 256;
	while (cap - a->len < extra)
		cap *= 2;
	p = realloc(a->buf, cap);
	if (!p) {
		aml_fail(a, -ENOMEM);
		return false;
	}
	a->buf = p;
	a->cap = cap;
	return true;
}

void aml_append(struct aml *a, const void *data, size_t len)
{
	if (!len || !aml_reserve(a, len))
		return;
	memcpy(a->buf + a->len, data, len);
	a->len += len;
}

void aml_put_byte(struct aml *a, uint8_t b)
{
	aml_append(a, &b, 1);
}

void aml_put_le(struct aml *a, uint64_t v, unsigned int n)
{
	uint8_t b[8];
	unsigned int i;

	assert(n <= sizeof(b));
	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	aml_append(a, b, n);
}

static void aml_insert(struct aml *a, size_t off, const uint8_t *data,
		       size_t len)
{
	if (!aml_reserve(a, len))
		return;
	memmove(a->buf + off + len, a->buf + off, a->len - off);
	memcpy(a->buf + off, data, len);
	a->len += len;
}

uint8_t aml_checksum(const uint8_t *data, size_t len)
{
	uint8_t sum = 0;
	size_t i;

	for (i = 0; i < len; i++)
		sum = (uint8_t)(sum + data[i]);
	return (uint8_t)(0x100 - sum);
}

size_t aml_pkglength_encode(uint32_t value, uint8_t out[4])
{
	size_t n, i;

	if (value <= 0x3f) {
		out[0] = (uint8_t)value;
		return 1;
	}
	if (value <= 0xfff)
		n = 2;
	else if (value <= 0xfffff)
		n = 3;
	else if (value <= AML_PKGLENGTH_MAX)
		n = 4;
	else
		return 0;
	/* Lead byte: count of following bytes in bits 7-6, low nibble. */
	out[0] = (uint8_t)(((n - 1) << 6) | (value & 0xf));
	for (i = 1; i < n; i++)
		out[i] = (uint8_t)(value >> (4 + 8 * (i - 1)));
	return n;
}

static bool aml_lead_char(char c)
{
	return (c >= 'A' && c <= 'Z') || c == '_';
}

static bool aml_name_char(char c)
{
	return aml_lead_char(c) || (c >= '0' && c <= '9');
}

/* One NameSeg from the first @len characters of @name. */
static int aml_nameseg_n(const char *name, size_t len, uint8_t out[4])
{
	size_t i;

	if (len < 1 || len > 4 || !aml_lead_char(name[0]))
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (i >= len) {
			out[i] = '_';
			continue;
		}
		if (!aml_name_char(name[i]))
			return -EINVAL;
		out[i] = (uint8_t)name[i];
	}
	return 0;
}

int aml_nameseg_encode(const char *name, uint8_t out[4])
{
	return aml_nameseg_n(name, strlen(name), out);
}

static int aml_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int aml_eisaid_encode(const char *id, uint32_t *out)
{
	uint32_t v = 0;
	int i, d;

	if (strlen(id) != 7)
		return -EINVAL;
	/* Three 5-bit letters ('A' = 1), then 16 bits of product ID. */
	for (i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z')
			return -EINVAL;
		v = (v << 5) | (uint32_t)(id[i] - 0x40);
	}
	for (i = 3; i < 7; i++) {
		d = aml_hex_digit(id[i]);
		if (d < 0)
			return -EINVAL;
		v = (v << 4) | (uint32_t)d;
	}
	/* The ID is big-endian in memory; AML integers are little-endian. */
	*out = ((v >> 24) & 0xff) | ((v >> 8) & 0xff00) |
	       ((v << 8) & 0xff0000) | ((v << 24) & 0xff000000u);
	return 0;
}

void aml_integer(struct aml *a, uint64_t v)
{
	if (v == 0) {
		aml_put_byte(a, AML_ZERO_OP);
	} else if (v == 1) {
		aml_put_byte(a, AML_ONE_OP);
	} else if (v <= UINT8_MAX) {
		aml_put_byte(a, AML_BYTE_PREFIX);
		aml_put_le(a, v, 1);
	} else if (v <= UINT16_MAX) {
		aml_put_byte(a, AML_WORD_PREFIX);
		aml_put_le(a, v, 2);
	} else if (v <= UINT32_MAX) {
		aml_put_byte(a, AML_DWORD_PREFIX);
		aml_put_le(a, v, 4);
	} else {
		aml_put_byte(a, AML_QWORD_PREFIX);
		aml_put_le(a, v, 8);
	}
}

void aml_string(struct aml *a, const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		if ((unsigned char)*p > 0x7f) {
			aml_fail(a, -EINVAL);
			return;
		}
	}
	aml_put_byte(a, AML_STRING_PREFIX);
	aml_append(a, s, strlen(s) + 1);
}

void aml_eisaid(struct aml *a, const char *id)
{
	uint32_t v;

	if (aml_eisaid_encode(id, &v)) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_integer(a, v);
}

/* NameString grammar: ACPI 6.3 §20.2.2. */
void aml_namestring(struct aml *a, const char *path)
{
	uint8_t segs[255][4];
	const char *p = path, *dot;
	size_t nsegs = 0;

	if (*p == '\\') {
		aml_put_byte(a, AML_ROOT_CHAR);
		p++;
	} else {
		for (; *p == '^'; p++)
			aml_put_byte(a, AML_PARENT_PREFIX_CHAR);
	}
	while (*p) {
		dot = strchr(p, '.');
		if (!dot)
			dot = p + strlen(p);
		if (nsegs == 255 ||
		    aml_nameseg_n(p, (size_t)(dot - p), segs[nsegs])) {
			aml_fail(a, -EINVAL);
			return;
		}
		nsegs++;
		p = *dot ? dot + 1 : dot;
		if (*dot && !*p) {
			aml_fail(a, -EINVAL); /* trailing '.' */
			return;
		}
	}
	if (nsegs == 0) {
		aml_put_byte(a, AML_ZERO_OP); /* NullName */
		return;
	}
	if (nsegs == 2) {
		aml_put_byte(a, AML_DUAL_NAME_PREFIX);
	} else if (nsegs > 2) {
		aml_put_byte(a, AML_MULTI_NAME_PREFIX);
		aml_put_byte(a, (uint8_t)nsegs);
	}
	aml_append(a, segs, nsegs * 4);
}

void aml_name(struct aml *a, const char *name)
{
	aml_put_byte(a, AML_NAME_OP);
	aml_namestring(a, name);
}

void aml_name_integer(struct aml *a, const char *name, uint64_t v)
{
	aml_name(a, name);
	aml_integer(a, v);
}

void aml_name_string(struct aml *a, const char *name, const char *s)
{
	aml_name(a, name);
	aml_string(a, s);
}

void aml_name_eisaid(struct aml *a, const char *name, const char *id)
{
	aml_name(a, name);
	aml_eisaid(a, id);
}

static void aml_push(struct aml *a, enum aml_kind kind, size_t start)
{
	if (a->err)
		return;
	if (a->depth == AML_MAX_DEPTH) {
		aml_fail(a, -EINVAL);
		return;
	}
	a->open[a->depth] = start;
	a->kind[a->depth] = (uint8_t)kind;
	a->depth++;
}

/* Fixed-width, space-padded text field of a table header. */
static void aml_header_text(struct aml *a, const char *s, size_t width)
{
	uint8_t field[8];
	size_t n = strlen(s);

	if (n > width || width > sizeof(field)) {
		aml_fail(a, -EINVAL);
		return;
	}
	memset(field, ' ', width);
	memcpy(field, s, n);
	aml_append(a, field, width);
}

void aml_definition_block_begin(struct aml *a, const char *sig,
				uint8_t revision, const char *oem_id,
				const char *oem_table_id,
				uint32_t oem_revision)
{
	size_t start = a->len;

	if (strlen(sig) != 4) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_append(a, sig, 4);
	aml_put_le(a, 0, 4); /* length, set by aml_end() */
	aml_put_byte(a, revision);
	aml_put_byte(a, 0);  /* checksum, set by aml_end() */
	aml_header_text(a, oem_id, 6);
	aml_header_text(a, oem_table_id, 8);
	aml_put_le(a, oem_revision, 4);
	aml_header_text(a, AML_CREATOR_ID, 4);
	aml_put_le(a, AML_CREATOR_REVISION, 4);
	aml_push(a, AML_KIND_TABLE, start);
}

void aml_scope_begin(struct aml *a, const char *path)
{
	aml_put_byte(a, AML_SCOPE_OP);
	aml_push(a, AML_KIND_PKG, a->len);
	aml_namestring(a, path);
}

void aml_device_begin(struct aml *a, const char *name)
{
	aml_put_byte(a, AML_EXT_OP_PREFIX);
	aml_put_byte(a, AML_DEVICE_OP);
	aml_push(a, AML_KIND_PKG, a->len);
	aml_namestring(a, name);
}

void aml_method_begin(struct aml *a, const char *name, unsigned int nargs,
		      bool serialized)
{
	if (nargs > 7) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, AML_METHOD_OP);
	aml_push(a, AML_KIND_PKG, a->len);
	aml_namestring(a, name);
	/* MethodFlags: ArgCount in bits 2-0, SerializeFlag bit 3. */
	aml_put_byte(a, (uint8_t)(nargs | (serialized ? 0x08 : 0)));
}

void aml_package_begin(struct aml *a, unsigned int count)
{
	if (count > UINT8_MAX) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, AML_PACKAGE_OP);
	aml_push(a, AML_KIND_PKG, a->len);
	aml_put_byte(a, (uint8_t)count); /* NumElements */
}

void aml_resource_template_begin(struct aml *a)
{
	aml_put_byte(a, AML_BUFFER_OP);
	aml_push(a, AML_KIND_TEMPLATE, a->len);
}

/* Put PkgLength in front of the body that starts at @start. */
static void aml_close_pkg(struct aml *a, size_t start)
{
	size_t body = a->len - start, n;
	uint8_t enc[4];

	for (n = 1; n <= 4; n++) {
		if (body <= AML_PKGLENGTH_MAX - n &&
		    aml_pkglength_encode((uint32_t)(body + n), enc) == n)
			break;
	}
	if (n > 4) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_insert(a, start, enc, n);
}

/* EndTag, then BufferSize before the descriptors (ACPI 6.3 §19.6.10). */
static void aml_close_template(struct aml *a, size_t start)
{
	static const uint8_t end_tag[2] = { AML_RES_END_TAG, 0 };
	struct aml size;

	aml_append(a, end_tag, sizeof(end_tag));
	if (a->err)
		return;
	aml_init(&size);
	aml_integer(&size, a->len - start);
	if (size.err)
		aml_fail(a, size.err);
	else
		aml_insert(a, start, size.buf, size.len);
	aml_release(&size);
	aml_close_pkg(a, start);
}

static void aml_close_table(struct aml *a, size_t start)
{
	size_t len = a->len - start;
	uint8_t *t = a->buf + start;
	unsigned int i;

	if (len > UINT32_MAX) {
		aml_fail(a, -EINVAL);
		return;
	}
	for (i = 0; i < 4; i++)
		t[4 + i] = (uint8_t)(len >> (8 * i));
	t[9] = 0;
	t[9] = aml_checksum(t, len);
}

void aml_end(struct aml *a)
{
	size_t start;

	if (a->err)
		return;
	if (a->depth == 0) {
		aml_fail(a, -EINVAL);
		return;
	}
	a->depth--;
	start = a->open[a->depth];
	switch (a->kind[a->depth]) {
	case AML_KIND_TABLE:
		aml_close_table(a, start);
		break;
	case AML_KIND_TEMPLATE:
		aml_close_template(a, start);
		break;
	default:
		aml_close_pkg(a, start);
		break;
	}
}

void aml_return(struct aml *a)
{
	aml_put_byte(a, AML_RETURN_OP);
}

void aml_notify(struct aml *a, const char *path, uint64_t value)
{
	aml_put_byte(a, AML_NOTIFY_OP);
	aml_namestring(a, path);
	aml_integer(a, value);
}

void aml_arg(struct aml *a, unsigned int n)
{
	if (n > 6) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_put_byte(a, (uint8_t)(AML_ARG0_OP + n));
}
