/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Guest physical memory as the host sees it: a list of RAM regions, each a
 * range of guest physical addresses backed by host memory. Every access a
 * guest can influence goes through guest_mem_ptr(), which returns NULL
 * unless [gpa, gpa + len) lies wholly inside one region. Nothing here knows
 * about KVM, so unit tests back a guest_mem with a malloc'd buffer.
 */
#ifndef MICROVM_GUEST_MEM_H
#define MICROVM_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_MEM_MAX_REGIONS 4

struct guest_mem_region {
	uint64_t gpa;  /* first guest physical address */
	uint64_t size; /* bytes */
	uint8_t *host; /* host address of gpa */
	/* With tracking: a bit per 4 KiB page the VMM wrote (atomic ORs
	 * from any thread); NULL without. */
	uint64_t *dirty;
};

#define GUEST_MEM_PAGE 4096u

struct guest_mem {
	struct guest_mem_region regions[GUEST_MEM_MAX_REGIONS];
	unsigned int nr_regions;
	bool tracking; /* guest_mem_track_dirty() ran: the bitmaps exist */
};

/**
 * guest_mem_track_dirty() - from now on, remember every page the VMM
 * writes (guest_mem_mark_dirty(), guest_mem_write()): what KVM's dirty
 * log cannot see, for diff snapshots.
 * Return: 0 or -ENOMEM.  Context: startup, after the regions.
 */
int guest_mem_track_dirty(struct guest_mem *gm);

/** guest_mem_untrack() - free the bitmaps. Context: teardown. */
void guest_mem_untrack(struct guest_mem *gm);

/* guest_mem_mark_dirty()'s work once tracking is on. */
void guest_mem_mark_dirty_range(const struct guest_mem *gm, uint64_t gpa,
				uint64_t len);

/**
 * guest_mem_mark_dirty() - the VMM writes (or may write) [@gpa, @gpa +
 * @len): its pages go into the bitmap; nothing without tracking (one
 * inline test: it sits on every virtqueue pop and push) or for a range
 * outside RAM.  Context: any thread.
 */
static inline void guest_mem_mark_dirty(const struct guest_mem *gm,
					uint64_t gpa, uint64_t len)
{
	if (gm->tracking)
		guest_mem_mark_dirty_range(gm, gpa, len);
}

/**
 * guest_mem_dirty_take() - region @ri's bitmap ORed into @bits (a bit per
 * page from the region's start, at least size / GUEST_MEM_PAGE bits) and
 * cleared, word by word atomically.  Context: any thread.
 */
void guest_mem_dirty_take(const struct guest_mem *gm, unsigned int ri,
			  uint64_t *bits);

/**
 * guest_mem_add_region() - describe one RAM region.
 * @gm: memory map to extend
 * @gpa: guest physical base
 * @size: length in bytes (non-zero)
 * @host: host mapping of the region
 *
 * Return: 0, -EINVAL for a zero size, an overflowing range or an overlap,
 * -ENOSPC when the table is full.
 * Context: setup only, before any other thread reads @gm.
 */
int guest_mem_add_region(struct guest_mem *gm, uint64_t gpa, uint64_t size,
			 void *host);

/**
 * guest_mem_ptr() - translate a guest range to a host pointer.
 * @gm: memory map
 * @gpa: first guest physical address of the range
 * @len: length of the range; 0 is allowed and means "gpa itself is RAM"
 *
 * Return: host pointer for @gpa, or NULL when any byte of the range lies
 * outside guest RAM or the range wraps around the address space.
 * Context: any thread; @gm is read-only after setup.
 */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/**
 * guest_mem_read() / guest_mem_write() - bounds-checked copies.
 * Return: 0, or -EFAULT when the range is not wholly guest RAM.
 */
int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *buf,
		   size_t len);
int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *buf,
		    size_t len);

/**
 * guest_mem_end() - one past the highest guest RAM address.
 */
uint64_t guest_mem_end(const struct guest_mem *gm);

#endif
