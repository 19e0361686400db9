// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the AML builder: PkgLength, integer, NameSeg/NameString
 * and EISAID encodings against ACPI 6.3 §20.2, resource descriptors against
 * the byte layouts of §6.4 (cross-checked with iasl output when written),
 * and the builder's error handling.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "vmm/aml.h"

static void check_bytes(const char *what, const uint8_t *got, size_t got_len,
			const uint8_t *want, size_t want_len)
{
	bool same = got_len == want_len && !memcmp(got, want, want_len);
	size_t i;

	CHECK(same);
	if (same)
		return;
	fprintf(stderr, "%s:\n  got ", what);
	for (i = 0; i < got_len; i++)
		fprintf(stderr, " %02x", got[i]);
	fprintf(stderr, "\n  want");
	for (i = 0; i < want_len; i++)
		fprintf(stderr, " %02x", want[i]);
	fprintf(stderr, "\n");
}

static void check_aml(const char *what, struct aml *a, const uint8_t *want,
		      size_t want_len)
{
	CHECK_EQ(aml_finish(a), 0);
	check_bytes(what, a->buf, a->len, want, want_len);
	aml_release(a);
}

/* ACPI 6.3 §20.2.4: the boundaries of the 1-, 2-, 3- and 4-byte forms. */
static void test_pkglength_encode(void)
{
	static const struct {
		uint32_t value;
		size_t n;
		uint8_t bytes[4];
	} rows[] = {
		{ 0, 1, { 0x00 } },
		{ 63, 1, { 0x3f } },
		{ 64, 2, { 0x40, 0x04 } },
		{ 4095, 2, { 0x4f, 0xff } },
		{ 4096, 3, { 0x80, 0x00, 0x01 } },
		{ 1048575, 3, { 0x8f, 0xff, 0xff } },
		{ 1048576, 4, { 0xc0, 0x00, 0x00, 0x01 } },
		{ 0x0fffffff, 4, { 0xcf, 0xff, 0xff, 0xff } },
		{ 0x10000000, 0, { 0 } },
	};
	uint8_t out[4];
	size_t i, n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(out, 0xaa, sizeof(out));
		n = aml_pkglength_encode(rows[i].value, out);
		CHECK_EQ(n, rows[i].n);
		if (n == rows[i].n)
			check_bytes("pkglength", out, n, rows[i].bytes, n);
	}
}

/* Decode a PkgLength; returns its byte count. */
static size_t decode_pkglength(const uint8_t *p, uint32_t *value)
{
	size_t n = (p[0] >> 6) + 1, i;

	if (n == 1) {
		*value = p[0] & 0x3f;
		return 1;
	}
	*value = p[0] & 0x0f;
	for (i = 1; i < n; i++)
		*value |= (uint32_t)p[i] << (4 + 8 * (i - 1));
	return n;
}

/*
 * aml_end() picks the shortest PkgLength for the body, where the length
 * counts its own bytes: a body of 62 still fits one byte, 63 needs two.
 */
static void test_pkglength_close(void)
{
	static const struct {
		size_t body;
		size_t n;
	} rows[] = {
		{ 4, 1 }, { 62, 1 }, { 63, 2 }, { 4093, 2 }, { 4094, 3 },
		{ 1048572, 3 }, { 1048573, 4 },
	};
	static uint8_t filler[1048576];
	struct aml a;
	uint32_t value;
	size_t i, n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		aml_init(&a);
		aml_scope_begin(&a, "_SB");
		aml_append(&a, filler, rows[i].body - 4); /* after the name */
		aml_end(&a);
		CHECK_EQ(aml_finish(&a), 0);
		CHECK_EQ(a.buf[0], 0x10);
		n = decode_pkglength(a.buf + 1, &value);
		CHECK_EQ(n, rows[i].n);
		CHECK_EQ(value, rows[i].body + rows[i].n);
		CHECK_EQ(a.len, 1 + n + rows[i].body);
		CHECK(!memcmp(a.buf + 1 + n, "_SB_", 4));
		aml_release(&a);
	}
}

/* ACPI 6.3 §20.2.3: ZeroOp, OneOp and the shortest prefixed form. */
static void test_integer(void)
{
	static const struct {
		uint64_t v;
		size_t n;
		uint8_t bytes[9];
	} rows[] = {
		{ 0, 1, { 0x00 } },
		{ 1, 1, { 0x01 } },
		{ 2, 2, { 0x0a, 0x02 } },
		{ 0xff, 2, { 0x0a, 0xff } },
		{ 0x100, 3, { 0x0b, 0x00, 0x01 } },
		{ 0xffff, 3, { 0x0b, 0xff, 0xff } },
		{ 0x10000, 5, { 0x0c, 0x00, 0x00, 0x01, 0x00 } },
		{ 0xffffffff, 5, { 0x0c, 0xff, 0xff, 0xff, 0xff } },
		{ 0x100000000ULL, 9, { 0x0e, 0, 0, 0, 0, 1, 0, 0, 0 } },
		{ UINT64_MAX, 9,
		  { 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	};
	struct aml a;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		aml_init(&a);
		aml_integer(&a, rows[i].v);
		check_aml("integer", &a, rows[i].bytes, rows[i].n);
	}
}

static void test_eisaid(void)
{
	static const struct {
		const char *id;
		int ret;
		uint32_t v;
	} rows[] = {
		{ "PNP0A08", 0, 0x080ad041 },
		{ "PNP0A03", 0, 0x030ad041 },
		{ "PNP0501", 0, 0x0105d041 },
		{ "PNP0C02", 0, 0x020cd041 },
		{ "pnp0a08", -EINVAL, 0 },
		{ "PNP0A0", -EINVAL, 0 },
		{ "PNP0A080", -EINVAL, 0 },
		{ "PNP0A0G", -EINVAL, 0 },
		{ "PN10A08", -EINVAL, 0 },
	};
	static const uint8_t dword[] = { 0x0c, 0x41, 0xd0, 0x0a, 0x08 };
	struct aml a;
	uint32_t v;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		v = 0;
		CHECK_EQ(aml_eisaid_encode(rows[i].id, &v), rows[i].ret);
		if (!rows[i].ret)
			CHECK_EQ(v, rows[i].v);
	}
	aml_init(&a);
	aml_eisaid(&a, "PNP0A08");
	check_aml("EisaId(PNP0A08)", &a, dword, sizeof(dword));
	aml_init(&a);
	aml_eisaid(&a, "PNP0A0");
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
}

static void test_nameseg(void)
{
	static const struct {
		const char *name;
		int ret;
		const char *seg;
	} rows[] = {
		{ "_SB", 0, "_SB_" },
		{ "_S5", 0, "_S5_" },
		{ "A", 0, "A___" },
		{ "PCI0", 0, "PCI0" },
		{ "VR0A", 0, "VR0A" },
		{ "", -EINVAL, NULL },
		{ "ABCDE", -EINVAL, NULL },
		{ "0ABC", -EINVAL, NULL },
		{ "pci0", -EINVAL, NULL },
		{ "A-B", -EINVAL, NULL },
	};
	uint8_t out[4];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CHECK_EQ(aml_nameseg_encode(rows[i].name, out), rows[i].ret);
		if (!rows[i].ret)
			CHECK(!memcmp(out, rows[i].seg, 4));
	}
}

/* ACPI 6.3 §20.2.2: prefixes, DualNamePath, MultiNamePath, NullName. */
static void test_namestring(void)
{
	static const struct {
		const char *path;
		int ret;
		size_t n;
		const char *bytes;
	} rows[] = {
		{ "_SB", 0, 4, "_SB_" },
		{ "\\_SB", 0, 5, "\\_SB_" },
		{ "_SB.PCI0", 0, 9, "\x2e_SB_PCI0" },
		{ "\\_SB.PCI0.RES0", 0, 15, "\\\x2f\x03_SB_PCI0RES0" },
		{ "^^FOO", 0, 6, "^^FOO_" },
		{ "\\", 0, 2, "\\\x00" },
		{ "_SB..X", -EINVAL, 0, NULL },
		{ "_SB.", -EINVAL, 0, NULL },
		{ "\\^A", -EINVAL, 0, NULL },
		{ "_SB.TOOLONG", -EINVAL, 0, NULL },
	};
	struct aml a;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		aml_init(&a);
		aml_namestring(&a, rows[i].path);
		if (rows[i].ret) {
			CHECK_EQ(aml_finish(&a), rows[i].ret);
			aml_release(&a);
			continue;
		}
		check_aml(rows[i].path, &a, (const uint8_t *)rows[i].bytes,
			  rows[i].n);
	}
}

/*
 * ResourceTemplate() {
 *	Memory32Fixed(ReadWrite, 0xF0000000, 0x1000)
 *	Interrupt(ResourceConsumer, Edge, ActiveHigh, Exclusive) { 16 }
 *	IO(Decode16, 0x3F8, 0x3F8, 0x00, 0x08)
 * }
 * Bytes from §6.4.3.4 (tag 0x86, length 9, info bit 0 = writable),
 * §6.4.3.6 (tag 0x89, length 6, flags consumer|edge, one 32-bit number),
 * §6.4.2.5 (tag 0x47, Decode16) and the EndTag of §6.4.2.9; the Buffer
 * holds BufferSize 0x1f and PkgLength 0x22.
 */
static void test_resource_template(void)
{
	static const uint8_t want[] = {
		0x11, 0x22, 0x0a, 0x1f,
		0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0x00, 0xf0,
		0x00, 0x10, 0x00, 0x00,
		0x89, 0x06, 0x00, 0x03, 0x01, 0x10, 0x00, 0x00, 0x00,
		0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x00, 0x08,
		0x79, 0x00,
	};
	struct aml a;

	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_memory32_fixed(&a, true, 0xf0000000, 0x1000);
	aml_interrupt(&a, AML_INT_CONSUMER | AML_INT_EDGE, 16);
	aml_io(&a, 0x3f8, 0x3f8, 0, 8);
	aml_end(&a);
	check_aml("Memory32Fixed/Interrupt/IO", &a, want, sizeof(want));
}

/*
 * IRQNoFlags() {4}; WordBusNumber(ResourceProducer, MinFixed, MaxFixed,
 * PosDecode, 0, 0, 0xFF, 0, 0x100); DWordMemory(ResourceProducer, ...,
 * NonCacheable, ReadWrite, 0, 0xC0000000, 0xDFFFFFFF, 0, 0x20000000);
 * QWordMemory(ResourceConsumer, ..., Cacheable, ReadWrite, 0,
 * 0x8000000000, 0xFFFFFFFFFF, 0, 0x8000000000); Interrupt(ResourceConsumer,
 * Level, ActiveLow, Shared) {5}. 106 bytes: a two-byte PkgLength.
 */
static void test_resource_template_spaces(void)
{
	static const uint8_t want[] = {
		0x11, 0x4a, 0x06, 0x0a, 0x66,
		0x22, 0x10, 0x00,
		0x88, 0x0d, 0x00, 0x02, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xff, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x87, 0x17, 0x00, 0x00, 0x0c, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xdf, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x20,
		0x8a, 0x2b, 0x00, 0x00, 0x0d, 0x03,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,
		0x89, 0x06, 0x00, 0x0d, 0x01, 0x05, 0x00, 0x00, 0x00,
		0x79, 0x00,
	};
	struct aml a;

	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_irq_noflags(&a, 4);
	aml_word_bus_number(&a, 0, 0xff);
	aml_dword_memory(&a, AML_PRODUCER, AML_NON_CACHEABLE, 0xc0000000,
			 0xdfffffff);
	aml_qword_memory(&a, AML_CONSUMER, AML_CACHEABLE, 0x8000000000ULL,
			 0xffffffffffULL);
	aml_interrupt(&a, AML_INT_CONSUMER | AML_INT_ACTIVE_LOW |
		      AML_INT_SHARED, 5);
	aml_end(&a);
	check_aml("IRQNoFlags/Word/DWord/QWord/Interrupt", &a, want,
		  sizeof(want));
}

/* Device, Name with a string, Method returning Arg3, Package. */
static void test_objects(void)
{
	static const uint8_t device[] = {
		0x5b, 0x82, 0x14, 'V', 'R', '0', '0',
		0x08, '_', 'H', 'I', 'D',
		0x0d, 'L', 'N', 'R', 'O', '0', '0', '0', '5', 0x00,
	};
	static const uint8_t method[] = {
		0x14, 0x08, '_', 'O', 'S', 'C', 0x04, 0xa4, 0x6b,
	};
	static const uint8_t package[] = {
		0x08, '_', 'S', '5', '_',
		0x12, 0x07, 0x04, 0x0a, 0x05, 0x00, 0x00, 0x00,
	};
	struct aml a;

	aml_init(&a);
	aml_device_begin(&a, "VR00");
	aml_name_string(&a, "_HID", "LNRO0005");
	aml_end(&a);
	check_aml("Device", &a, device, sizeof(device));

	aml_init(&a);
	aml_method_begin(&a, "_OSC", 4, false);
	aml_return(&a);
	aml_arg(&a, 3);
	aml_end(&a);
	check_aml("Method", &a, method, sizeof(method));

	aml_init(&a);
	aml_name(&a, "_S5");
	aml_package_begin(&a, 4);
	aml_integer(&a, 5);
	aml_integer(&a, 0);
	aml_integer(&a, 0);
	aml_integer(&a, 0);
	aml_end(&a);
	check_aml("Package", &a, package, sizeof(package));
}

/* ACPI 6.3 §5.2.6: header fields, length and checksum filled at the end. */
static void test_definition_block(void)
{
	struct aml a;
	uint8_t sum = 0;
	size_t i;

	aml_init(&a);
	aml_definition_block_begin(&a, "DSDT", 2, "OEM", "TABLE", 7);
	aml_name_integer(&a, "_UID", 0x1234);
	aml_end(&a);
	CHECK_EQ(aml_finish(&a), 0);
	CHECK_EQ(a.len, AML_TABLE_HEADER_LEN + 8);
	CHECK(!memcmp(a.buf, "DSDT", 4));
	CHECK_EQ(a.buf[4] | a.buf[5] << 8 | a.buf[6] << 16 |
		 (uint32_t)a.buf[7] << 24, a.len);
	CHECK_EQ(a.buf[8], 2);
	CHECK(!memcmp(a.buf + 10, "OEM   ", 6));
	CHECK(!memcmp(a.buf + 16, "TABLE   ", 8));
	CHECK_EQ(a.buf[24], 7);
	CHECK(!memcmp(a.buf + 28, AML_CREATOR_ID, 4));
	for (i = 0; i < a.len; i++)
		sum = (uint8_t)(sum + a.buf[i]);
	CHECK_EQ(sum, 0);
	aml_release(&a);

	aml_init(&a);
	aml_definition_block_begin(&a, "DSDT", 2, "TOOLONGOEM", "T", 1);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
}

static void test_errors(void)
{
	struct aml a;
	size_t len;
	int i;

	/* A descriptor outside a resource template. */
	aml_init(&a);
	aml_io(&a, 0x3f8, 0x3f8, 0, 8);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);

	/* More ends than begins; a construct left open. */
	aml_init(&a);
	aml_end(&a);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_scope_begin(&a, "_SB");
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);

	/* Nesting deeper than AML_MAX_DEPTH. */
	aml_init(&a);
	for (i = 0; i <= AML_MAX_DEPTH; i++)
		aml_device_begin(&a, "DEV0");
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);

	/* Errors stick: later calls emit nothing. */
	aml_init(&a);
	aml_name_integer(&a, "bad", 1);
	len = a.len;
	aml_integer(&a, 5);
	aml_string(&a, "x");
	CHECK_EQ(a.len, len);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);

	/* Bad arguments. */
	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_irq_noflags(&a, 16);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_dword_memory(&a, AML_PRODUCER, AML_NON_CACHEABLE, 0, 0xffffffff);
	CHECK_EQ(aml_finish(&a), -EINVAL); /* length 2^32 does not fit */
	aml_release(&a);
	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_io(&a, 0xcf8, 0xcf7, 1, 8);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_resource_template_begin(&a);
	aml_word_bus_number(&a, 5, 4);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_method_begin(&a, "_OSC", 8, false);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_package_begin(&a, 256);
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
	aml_init(&a);
	aml_string(&a, "\xc3\xa9");
	CHECK_EQ(aml_finish(&a), -EINVAL);
	aml_release(&a);
}

int main(void)
{
	test_pkglength_encode();
	test_pkglength_close();
	test_integer();
	test_eisaid();
	test_nameseg();
	test_namestring();
	test_resource_template();
	test_resource_template_spaces();
	test_objects();
	test_definition_block();
	test_errors();
	return test_done();
}
