// SPDX-License-Identifier: Apache-2.0
/*
 * The x86_64 guest's final kernel command line (cmdline.h): the
 * configured one, plus a virtio_mmio.device= parameter per virtio-mmio
 * device when the guest is told to ignore ACPI. Pure string work; the
 * caller writes the result into guest memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmdline.h"

#define CMDLINE_ACPI_OFF "acpi=off"

/* Linux splits its command line at white space (isspace()). */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

/*
 * Length of the kernel's part of @s: everything before the word "--"
 * (Linux hands the words after it to init), its separating space
 * included in the rest.
 */
static size_t cmdline_kernel_len(const char *s)
{
	size_t i = 0, j;

	for (;;) {
		while (is_space(s[i]))
			i++;
		if (!s[i])
			return i;
		for (j = i; s[j] && !is_space(s[j]); j++)
			;
		if (j - i == 2 && s[i] == '-' && s[i + 1] == '-')
			return i;
		i = j;
	}
}

bool cmdline_has_word(const char *cmdline, const char *word)
{
	const char *s = cmdline ? cmdline : "";
	size_t end = cmdline_kernel_len(s), wlen = strlen(word), i = 0;

	if (!wlen)
		return false;
	while (i < end) {
		size_t j = i;

		while (j < end && !is_space(s[j]))
			j++;
		if (j - i == wlen && !memcmp(s + i, word, wlen))
			return true;
		i = j + 1;
	}
	return false;
}

/* Appends @len bytes of @s at *@at; false when @out has no room left. */
static bool put(char *out, size_t outlen, size_t *at, const char *s,
		size_t len)
{
	if (len >= outlen - *at)
		return false;
	memcpy(out + *at, s, len);
	*at += len;
	out[*at] = '\0';
	return true;
}

static bool put_dev(char *out, size_t outlen, size_t *at,
		    const struct cmdline_mmio *d)
{
	char one[96];
	int n;

	if (d->size && d->size % 1024 == 0)
		n = snprintf(one, sizeof(one),
			     " virtio_mmio.device=%" PRIu64 "K@0x%" PRIx64
			     ":%" PRIu32, d->size / 1024, d->base, d->gsi);
	else
		n = snprintf(one, sizeof(one),
			     " virtio_mmio.device=%" PRIu64 "@0x%" PRIx64
			     ":%" PRIu32, d->size, d->base, d->gsi);
	return n > 0 && (size_t)n < sizeof(one) &&
	       put(out, outlen, at, one, (size_t)n);
}

int cmdline_add_mmio(const char *cmdline, const struct cmdline_mmio *devs,
		     unsigned int n, char *out, size_t outlen)
{
	const char *s = cmdline ? cmdline : "";
	size_t klen = cmdline_kernel_len(s), at = 0;
	unsigned int i;

	if (!outlen)
		return -E2BIG;
	out[0] = '\0';
	if (!cmdline_has_word(s, CMDLINE_ACPI_OFF))
		n = 0;
	/* The devices go after the kernel's part, its trailing spaces cut. */
	while (n && klen && is_space(s[klen - 1]))
		klen--;
	if (!put(out, outlen, &at, s, klen))
		return -E2BIG;
	for (i = 0; i < n; i++) {
		if (!put_dev(out, outlen, &at, &devs[i]))
			return -E2BIG;
	}
	s += klen;
	if (!put(out, outlen, &at, s, strlen(s)) || at > INT32_MAX)
		return -E2BIG;
	return (int)at;
}
