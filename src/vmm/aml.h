/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small builder for ACPI Machine Language (ACPI 6.3 §20.2): enough to
 * emit a DSDT with scopes, devices, named objects, packages, a trivial
 * method and resource templates. The byte stream grows in a heap buffer;
 * the first failure (out of memory, a bad name or value) sticks in ->err
 * and turns every later call into a no-op, so callers check once at the end.
 *
 * A builder belongs to one thread; there is no global state.
 *
 * Usage:
 *	struct aml a;
 *	aml_init(&a);
 *	aml_definition_block_begin(&a, "DSDT", 2, "OEMID ", "TABLE ID", 1);
 *	aml_scope_begin(&a, "\\_SB");
 *	aml_device_begin(&a, "COM1");
 *	aml_name_eisaid(&a, "_HID", "PNP0501");
 *	aml_name(&a, "_CRS");
 *	aml_resource_template_begin(&a);
 *	aml_io(&a, 0x3f8, 0x3f8, 0, 8);
 *	aml_end(&a);		// resource template
 *	aml_end(&a);		// device
 *	aml_end(&a);		// scope
 *	aml_end(&a);		// definition block: length and checksum
 *	if (aml_finish(&a) == 0)
 *		use a.buf, a.len;
 *	aml_release(&a);
 */
#ifndef MICROVM_AML_H
#define MICROVM_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AML_MAX_DEPTH 16
#define AML_TABLE_HEADER_LEN 36
#define AML_PKGLENGTH_MAX 0x0fffffffu
#define AML_CREATOR_ID "MVMM"
#define AML_CREATOR_REVISION 1

/* Extended Interrupt descriptor flags (ACPI 6.3 §6.4.3.6). */
#define AML_INT_CONSUMER (1u << 0)
#define AML_INT_EDGE (1u << 1)
#define AML_INT_ACTIVE_LOW (1u << 2)
#define AML_INT_SHARED (1u << 3)

/* Address space descriptors: who decodes the range (ACPI 6.3 §6.4.3.5). */
enum aml_usage {
	AML_PRODUCER = 0, /* a bridge window forwarded to children */
	AML_CONSUMER = 1, /* a range the device itself decodes */
};

/* Memory attributes in the type-specific flags (ACPI 6.3 §6.4.3.5). */
enum aml_cache {
	AML_NON_CACHEABLE = 0,
	AML_CACHEABLE = 1,
	AML_WRITE_COMBINING = 2,
	AML_PREFETCHABLE = 3,
};

struct aml {
	uint8_t *buf;      /* the byte stream; read-only for callers */
	size_t len;        /* bytes in buf */
	size_t cap;        /* allocated bytes */
	int err;           /* first error, 0 if none */
	unsigned int depth; /* open constructs */
	size_t open[AML_MAX_DEPTH];  /* where each construct's body begins */
	uint8_t kind[AML_MAX_DEPTH]; /* what each open construct is */
};

/**
 * aml_init() - start an empty byte stream.
 * @a: builder to initialise
 * Context: any thread; one builder belongs to one thread.
 */
void aml_init(struct aml *a);

/**
 * aml_release() - free the buffer of @a and reset it to empty.
 * @a: builder
 */
void aml_release(struct aml *a);

/**
 * aml_finish() - report the outcome of a sequence of calls.
 * @a: builder
 *
 * Return: 0 when every call succeeded and every construct was closed,
 * the first error otherwise (-ENOMEM, -EINVAL), or -EINVAL when a
 * construct is still open.
 */
int aml_finish(const struct aml *a);

/**
 * aml_append() - emit raw bytes.
 * @a: builder
 * @data: bytes to copy
 * @len: number of bytes
 */
void aml_append(struct aml *a, const void *data, size_t len);

/**
 * aml_checksum() - the ACPI checksum byte for a table.
 * @data: the table with its checksum field zero
 * @len: table length
 *
 * Return: the byte that makes all bytes of the table sum to 0 mod 256.
 */
uint8_t aml_checksum(const uint8_t *data, size_t len);

/**
 * aml_pkglength_encode() - encode a PkgLength (ACPI 6.3 §20.2.4).
 * @value: the package length, counting the PkgLength bytes themselves
 * @out: receives 1 to 4 bytes
 *
 * Return: the number of bytes written (the shortest form for @value), or
 * 0 when @value exceeds AML_PKGLENGTH_MAX.
 */
size_t aml_pkglength_encode(uint32_t value, uint8_t out[4]);

/**
 * aml_nameseg_encode() - turn a name of 1-4 characters into a NameSeg.
 * @name: leading character 'A'-'Z' or '_', then 'A'-'Z', '0'-'9' or '_'
 * @out: receives four characters, padded with '_'
 *
 * Return: 0, or -EINVAL for an empty, long or malformed name.
 */
int aml_nameseg_encode(const char *name, uint8_t out[4]);

/**
 * aml_eisaid_encode() - compress a PNP ID such as "PNP0A08".
 * @id: three letters 'A'-'Z' then four hexadecimal digits
 * @out: the 32-bit value EISAID() yields in ASL
 *
 * Return: 0, or -EINVAL when @id is not of that form.
 */
int aml_eisaid_encode(const char *id, uint32_t *out);

/**
 * aml_integer() - emit an integer constant in its shortest encoding:
 * ZeroOp, OneOp, then BytePrefix, WordPrefix, DWordPrefix or QWordPrefix.
 * @a: builder
 * @v: the value (a DefinitionBlock of revision 2 or more keeps 64 bits)
 */
void aml_integer(struct aml *a, uint64_t v);

/**
 * aml_string() - emit a String constant (StringPrefix, ASCII, NUL).
 * @a: builder
 * @s: characters 0x01-0x7f; anything else sets -EINVAL
 */
void aml_string(struct aml *a, const char *s);

/**
 * aml_eisaid() - emit the integer of aml_eisaid_encode(@id).
 * @a: builder
 * @id: PNP ID such as "PNP0501"
 */
void aml_eisaid(struct aml *a, const char *id);

/**
 * aml_namestring() - emit a NameString.
 * @a: builder
 * @path: optional '\' (root) or any number of '^' (parent), then zero or
 *	  more NameSegs of 1-4 characters separated by '.', e.g. "\\_SB.PCI0"
 */
void aml_namestring(struct aml *a, const char *path);

/**
 * aml_name() - begin Name(@name, ...): the caller emits the object next.
 * @a: builder
 * @name: NameString of the new object
 */
void aml_name(struct aml *a, const char *name);

/**
 * aml_name_integer() / aml_name_string() / aml_name_eisaid() - emit a
 * whole Name() holding an integer, a string or a compressed PNP ID.
 * @a: builder
 * @name: NameString of the new object
 * The value: as for aml_integer(), aml_string() or aml_eisaid().
 */
void aml_name_integer(struct aml *a, const char *name, uint64_t v);
void aml_name_string(struct aml *a, const char *name, const char *s);
void aml_name_eisaid(struct aml *a, const char *name, const char *id);

/**
 * aml_definition_block_begin() - emit an ACPI table header whose length
 * and checksum aml_end() fills in; the table is the rest of the stream.
 * @a: builder (normally empty)
 * @sig: four-character signature, e.g. "DSDT"
 * @revision: 2 or more for 64-bit integers
 * @oem_id: up to 6 characters, padded with spaces
 * @oem_table_id: up to 8 characters, padded with spaces
 * @oem_revision: OEM revision number
 *
 * The creator fields name this builder (AML_CREATOR_ID/_REVISION).
 */
void aml_definition_block_begin(struct aml *a, const char *sig,
				uint8_t revision, const char *oem_id,
				const char *oem_table_id,
				uint32_t oem_revision);

/**
 * aml_scope_begin() - open Scope(@path) { ... }.
 * @a: builder
 * @path: NameString of an existing scope, e.g. "\\_SB"
 */
void aml_scope_begin(struct aml *a, const char *path);

/**
 * aml_device_begin() - open Device(@name) { ... }.
 * @a: builder
 * @name: NameString of the new device
 */
void aml_device_begin(struct aml *a, const char *name);

/**
 * aml_method_begin() - open Method(@name, @nargs, ...) { ... }.
 * @a: builder
 * @name: NameString of the method
 * @nargs: 0-7 arguments
 * @serialized: true for Serialized, false for NotSerialized
 */
void aml_method_begin(struct aml *a, const char *name, unsigned int nargs,
		      bool serialized);

/**
 * aml_package_begin() - open Package(@count) { ... }.
 * @a: builder
 * @count: number of elements the caller emits next (at most 255)
 */
void aml_package_begin(struct aml *a, unsigned int count);

/**
 * aml_resource_template_begin() - open a ResourceTemplate(): a Buffer whose
 * contents are resource descriptors; aml_end() appends the EndTag (with a
 * zero checksum, which ACPI 6.3 §6.4.2.9 defines as valid) and the size.
 * @a: builder
 */
void aml_resource_template_begin(struct aml *a);

/**
 * aml_end() - close the innermost open construct, filling in its length
 * (and for a definition block, its checksum).
 * @a: builder
 */
void aml_end(struct aml *a);

/**
 * aml_return() - emit ReturnOp; the caller emits the operand next.
 * @a: builder
 */
void aml_return(struct aml *a);

/**
 * aml_notify() - emit Notify(@path, @value), ACPI 6.3 §19.6.92.
 * @a: builder
 * @path: NameString of the device to notify, e.g. "\\_SB.VGEN"
 * @value: the notification value (0x80 and up: device specific)
 */
void aml_notify(struct aml *a, const char *path, uint64_t value);

/**
 * aml_arg() - emit ArgN (0-6) as an operand.
 * @a: builder
 * @n: argument number
 */
void aml_arg(struct aml *a, unsigned int n);

/*
 * Resource descriptors (ACPI 6.3 §6.4, implemented in aml_resource.c):
 * each is valid only directly inside an open resource template; anywhere
 * else, or with a bad argument, it sets -EINVAL.
 */

/**
 * aml_io() - IO(Decode16, @min, @max, @align, @len), §6.4.2.5.
 * @a: builder
 * @min: lowest base port, not above @max
 * @max: highest base port
 * @align: base alignment
 * @len: number of ports
 */
void aml_io(struct aml *a, uint16_t min, uint16_t max, uint8_t align,
	    uint8_t len);

/**
 * aml_irq_noflags() - IRQNoFlags() { @irq }: an ISA interrupt, edge,
 * active-high, exclusive, §6.4.2.1.
 * @a: builder
 * @irq: 0-15
 */
void aml_irq_noflags(struct aml *a, unsigned int irq);

/**
 * aml_memory32_fixed() - Memory32Fixed(ReadWrite or ReadOnly, @base,
 * @size), §6.4.3.4.
 * @a: builder
 * @writable: ReadWrite rather than ReadOnly
 * @base: first byte
 * @size: length in bytes
 */
void aml_memory32_fixed(struct aml *a, bool writable, uint32_t base,
			uint32_t size);

/**
 * aml_interrupt() - Interrupt(...) { @gsi }: an Extended Interrupt
 * descriptor with one interrupt, §6.4.3.6.
 * @a: builder
 * @flags: AML_INT_CONSUMER | AML_INT_EDGE | AML_INT_ACTIVE_LOW |
 *	   AML_INT_SHARED as wanted (absent: producer, level, high, exclusive)
 * @gsi: the interrupt number
 */
void aml_interrupt(struct aml *a, unsigned int flags, uint32_t gsi);

/**
 * aml_word_bus_number() - WordBusNumber(ResourceProducer, MinFixed,
 * MaxFixed, PosDecode, 0, @min, @max, 0, @max - @min + 1), §6.4.3.5.3.
 * @a: builder
 * @min: first bus number, not above @max
 * @max: last bus number
 */
void aml_word_bus_number(struct aml *a, uint16_t min, uint16_t max);

/**
 * aml_dword_memory() / aml_qword_memory() - DWordMemory / QWordMemory
 * (@usage, PosDecode, MinFixed, MaxFixed, @cache, ReadWrite, 0, @min,
 * @max, 0, @max - @min + 1), §6.4.3.5.2 and §6.4.3.5.1.
 * @a: builder
 * @usage: AML_PRODUCER for a bridge window, AML_CONSUMER otherwise
 * @cache: memory attribute
 * @min: first byte, not above @max
 * @max: last byte; the length @max - @min + 1 must fit the field too
 */
void aml_dword_memory(struct aml *a, enum aml_usage usage,
		      enum aml_cache cache, uint32_t min, uint32_t max);
void aml_qword_memory(struct aml *a, enum aml_usage usage,
		      enum aml_cache cache, uint64_t min, uint64_t max);

#endif
