/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The racing driver of fuzz_virtq.c: src/virtio/virtq.c is compiled in
 * here with memcpy (desc_read() is its only one) and __atomic_load_n (its
 * ring index loads) routed through a hook. At guest read number k of a
 * pop the hook performs a store the input scheduled, as a driver on
 * another vCPU could between two reads of the device; it also logs every
 * descriptor the device copied, so the target can check that a chain is
 * made of exactly what was read, and that each read lies inside the table
 * the walk is in. Include once, from fuzz_virtq.c, which defines
 * fuzz_host().
 */
#ifndef MICROVM_FUZZ_VIRTQ_HOOK_H
#define MICROVM_FUZZ_VIRTQ_HOOK_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/guest_mem.h"
#include "virtio/virtq.h"

#define FUZZ_MAX_RACES 16
#define FUZZ_LOG 4096 /* guest reads logged per pop */

/* Harness code the fuzzer need not steer by: no coverage callbacks. */
#if defined(__clang__)
#define FUZZ_HARNESS __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_HARNESS
#endif

/* ---- guest read hook ---- */

/* A scheduled driver write: at guest read number @at of the next pops. */
struct fuzz_race {
	uint32_t at;
	uint64_t gpa;
	uint64_t value;
	unsigned int width;
	bool armed;
};

/* A descriptor as the device copied it. */
struct fuzz_desc_read {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
};

struct fuzz_hook {
	bool in_pop;      /* races fire only inside virtq_pop() */
	const uint8_t *table;  /* the descriptor table being walked */
	uint64_t table_len;
	bool off;         /* bulk runs: no races, no log */
	unsigned int armed; /* races waiting */
	uint32_t reads;   /* guest reads since the pop began */
	uint32_t nr_desc; /* descriptors logged */
	struct fuzz_desc_read desc[FUZZ_LOG];
	struct fuzz_race race[FUZZ_MAX_RACES];
};

static struct fuzz_hook hook;
static struct guest_mem fuzz_gm;

FUZZ_HARNESS static uint8_t *fuzz_host(uint64_t gpa, uint64_t len);

/* Store @width bytes of @value at @gpa if it is RAM (the racing driver). */
FUZZ_HARNESS static void fuzz_guest_store(uint64_t gpa, uint64_t value, unsigned int width)
{
	uint8_t *p = fuzz_host(gpa, width);
	uint64_t le = htole64(value);

	if (p)
		memcpy(p, &le, width);
}

FUZZ_HARNESS static void fuzz_hook_read(void)
{
	unsigned int i;

	hook.reads++;
	if (!hook.in_pop || !hook.armed)
		return;
	for (i = 0; i < FUZZ_MAX_RACES; i++) {
		struct fuzz_race *r = &hook.race[i];

		if (r->armed && r->at == hook.reads - 1) {
			fuzz_guest_store(r->gpa, r->value, r->width);
			r->armed = false;
			hook.armed--;
		}
	}
}

/* virtq.c's descriptor copies land here (desc_read() is its only memcpy). */
FUZZ_HARNESS static void *fuzz_guest_copy(void *dst, const void *src,
					 size_t n)
{
	fuzz_hook_read();
	/* Each descriptor read lies inside the table the walk is in. */
	if (n == 16 && hook.in_pop &&
	    ((const uint8_t *)src < hook.table ||
	     (uint64_t)((const uint8_t *)src - hook.table) > hook.table_len - 16))
		abort();
	memcpy(dst, src, n);
	if (n == 16 && !hook.off && hook.nr_desc < FUZZ_LOG) {
		struct fuzz_desc_read *d = &hook.desc[hook.nr_desc++];
		const uint8_t *s = dst;
		uint64_t a;
		uint32_t l;
		uint16_t f;

		memcpy(&a, s, 8);
		memcpy(&l, s + 8, 4);
		memcpy(&f, s + 12, 2);
		d->addr = le64toh(a);
		d->len = le32toh(l);
		d->flags = le16toh(f);
	}
	if (n == 16 && hook.in_pop) {
		uint64_t a;
		uint32_t l;
		uint16_t f;

		memcpy(&a, dst, 8);
		memcpy(&l, (const uint8_t *)dst + 8, 4);
		memcpy(&f, (const uint8_t *)dst + 12, 2);
		/* An INDIRECT descriptor moves the walk to its table. */
		if (le16toh(f) & VIRTQ_DESC_F_INDIRECT) {
			hook.table = fuzz_host(le64toh(a), le32toh(l));
			hook.table_len = le32toh(l);
		}
	}
	return dst;
}

/* ... and its ring index loads here. */
FUZZ_HARNESS static uint16_t fuzz_guest_load16(const uint16_t *p,
						int order)
{
	fuzz_hook_read();
	return __atomic_load_n(p, order);
}

#define memcpy(d, s, n) fuzz_guest_copy((d), (s), (n))
#define __atomic_load_n(p, order) fuzz_guest_load16((p), (order))
#include "virtio/virtq.c"
#undef __atomic_load_n
#undef memcpy

#endif
