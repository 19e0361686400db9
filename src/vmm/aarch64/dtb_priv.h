/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the two halves of the device tree builder: dtb.c (the tree)
 * and dtb_desc.c (defaults and the check of a description). Not for use
 * outside src/vmm/aarch64/dtb*.c.
 */
#ifndef MICROVM_ARM64_DTB_PRIV_H
#define MICROVM_ARM64_DTB_PRIV_H

#include <stddef.h>

#include "dtb.h"

/* Write a message to @err (if @errlen) and return @rc. */
int dtb_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* 0, or -EINVAL with a message naming what makes @d no machine. */
int dtb_check_desc(const struct dtb_desc *d, char *err, size_t errlen);

#endif
