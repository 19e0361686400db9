// SPDX-License-Identifier: Apache-2.0
/*
 * Bounds-checked translation of guest physical addresses. The checks are
 * written so that no sum can overflow: a range is inside a region when
 * gpa >= base, gpa - base <= size and len <= size - (gpa - base).
 */
#include "util/guest_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int guest_mem_add_region(struct guest_mem *gm, uint64_t gpa, uint64_t size,
			 void *host)
{
	unsigned int i;

	if (!size || gpa + size < gpa || !host)
		return -EINVAL;
	if (gm->nr_regions >= GUEST_MEM_MAX_REGIONS)
		return -ENOSPC;
	for (i = 0; i < gm->nr_regions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];

		if (gpa < r->gpa + r->size && r->gpa < gpa + size)
			return -EINVAL;
	}
	gm->regions[gm->nr_regions].gpa = gpa;
	gm->regions[gm->nr_regions].size = size;
	gm->regions[gm->nr_regions].host = host;
	gm->nr_regions++;
	return 0;
}

void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < gm->nr_regions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];
		uint64_t off;

		if (gpa < r->gpa)
			continue;
		off = gpa - r->gpa;
		if (off >= r->size)
			continue;
		if (len > r->size - off)
			return NULL;
		return r->host + off;
	}
	return NULL;
}

int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *buf,
		   size_t len)
{
	void *p = guest_mem_ptr(gm, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *buf,
		    size_t len)
{
	void *p = guest_mem_ptr(gm, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(p, buf, len);
	guest_mem_mark_dirty(gm, gpa, len);
	return 0;
}

static size_t dirty_words(const struct guest_mem_region *r)
{
	uint64_t pages = (r->size + GUEST_MEM_PAGE - 1) / GUEST_MEM_PAGE;

	return (size_t)((pages + 63) / 64);
}

int guest_mem_track_dirty(struct guest_mem *gm)
{
	unsigned int i;

	for (i = 0; i < gm->nr_regions; i++) {
		struct guest_mem_region *r = &gm->regions[i];

		if (r->dirty)
			continue;
		r->dirty = calloc(dirty_words(r), sizeof(*r->dirty));
		if (!r->dirty) {
			guest_mem_untrack(gm);
			return -ENOMEM;
		}
	}
	gm->tracking = true;
	return 0;
}

void guest_mem_untrack(struct guest_mem *gm)
{
	unsigned int i;

	gm->tracking = false;
	for (i = 0; i < gm->nr_regions; i++) {
		free(gm->regions[i].dirty);
		gm->regions[i].dirty = NULL;
	}
}

void guest_mem_mark_dirty_range(const struct guest_mem *gm, uint64_t gpa,
				uint64_t len)
{
	unsigned int i;

	if (!len)
		return;
	for (i = 0; i < gm->nr_regions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];
		uint64_t off, first, last, p;

		if (gpa < r->gpa || gpa - r->gpa >= r->size || !r->dirty)
			continue;
		off = gpa - r->gpa;
		if (len > r->size - off)
			len = r->size - off;
		first = off / GUEST_MEM_PAGE;
		last = (off + len - 1) / GUEST_MEM_PAGE;
		/* Whole words at once: a buffer as large as RAM (a guest may
		 * post one) costs a word per 64 pages, not an op per page. */
		for (p = first; p <= last;) {
			if (!(p % 64) && last - p >= 63) {
				__atomic_store_n(&r->dirty[p / 64], ~0ull,
						 __ATOMIC_RELAXED);
				p += 64;
				continue;
			}
			__atomic_fetch_or(&r->dirty[p / 64], 1ull << (p % 64),
					  __ATOMIC_RELAXED);
			p++;
		}
		return;
	}
}

void guest_mem_dirty_take(const struct guest_mem *gm, unsigned int ri,
			  uint64_t *bits)
{
	const struct guest_mem_region *r;
	size_t w, n;

	if (ri >= gm->nr_regions || !gm->regions[ri].dirty)
		return;
	r = &gm->regions[ri];
	n = dirty_words(r);
	for (w = 0; w < n; w++)
		bits[w] |= __atomic_exchange_n(&r->dirty[w], 0,
					       __ATOMIC_RELAXED);
}

uint64_t guest_mem_end(const struct guest_mem *gm)
{
	uint64_t end = 0;
	unsigned int i;

	for (i = 0; i < gm->nr_regions; i++) {
		uint64_t e = gm->regions[i].gpa + gm->regions[i].size;

		if (e > end)
			end = e;
	}
	return end;
}
