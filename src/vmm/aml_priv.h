/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals shared by aml.c and aml_resource.c, the two halves of the AML
 * builder. Nothing outside the builder includes this.
 */
#ifndef MICROVM_AML_PRIV_H
#define MICROVM_AML_PRIV_H

#include <stdint.h>

#include "vmm/aml.h"

/* What an entry of struct aml's stack of open constructs is. */
enum aml_kind {
	AML_KIND_TABLE,
	AML_KIND_PKG,      /* scope, device, method, package */
	AML_KIND_TEMPLATE, /* resource template buffer */
};

/**
 * aml_fail() - record @err as the builder's error unless one is recorded.
 * @a: builder
 * @err: negative errno
 */
void aml_fail(struct aml *a, int err);

/**
 * aml_put_byte() / aml_put_le() - emit one byte, or @n bytes of @v in
 * little-endian order (@n at most 8).
 */
void aml_put_byte(struct aml *a, uint8_t b);
void aml_put_le(struct aml *a, uint64_t v, unsigned int n);

#endif
