/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-test virtio driver shared by the virtq unit tests: a malloc'd buffer
 * is the guest's RAM, at RAM_GPA so that gpa 0 lies outside it, and these
 * helpers write descriptor tables, avail entries and indirect tables into
 * it and read the used ring back. One queue, `vq`, per test program.
 */
#ifndef MICROVM_TEST_VIRTQ_DRIVER_H
#define MICROVM_TEST_VIRTQ_DRIVER_H

#include "test.h"
#include "virtio/virtq.h"

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

/* Guest memory map of the tests. */
#define RAM_GPA 0x10000ull
#define RAM_SIZE 0x100000ull
#define RAM_END (RAM_GPA + RAM_SIZE)
#define DESC_GPA 0x10000ull  /* room for 1024 descriptors */
#define AVAIL_GPA 0x14000ull /* room for a 1024-entry avail ring */
#define USED_GPA 0x15000ull  /* room for a 1024-entry used ring */
#define IND_GPA 0x18000ull   /* indirect tables, IND_STRIDE apart */
#define IND_STRIDE 0x4000ull
#define BUF_GPA 0x40000ull   /* data buffers, BUF_STRIDE apart */
#define BUF_STRIDE 0x2000ull

#define QSIZE 16
#define F_INDIRECT (1ull << VIRTQ_F_INDIRECT_DESC)
#define F_EVENT_IDX (1ull << VIRTQ_F_EVENT_IDX)
#define R 0
#define W VIRTQ_DESC_F_WRITE
#define NEXT VIRTQ_DESC_F_NEXT
#define IND VIRTQ_DESC_F_INDIRECT
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t *ram;
static struct guest_mem gm;
static struct virtq vq;
static struct virtq_seg segs[VIRTQ_MAX_SIZE];
static uint16_t qsize;
static uint16_t drv_avail_idx; /* the driver's next avail idx */

/* ---- the in-test driver ---- */

static inline void *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static inline void put16(uint64_t gpa, uint16_t v)
{
	v = htole16(v);
	memcpy(host(gpa), &v, sizeof(v));
}

static inline uint16_t get16(uint64_t gpa)
{
	uint16_t v;

	memcpy(&v, host(gpa), sizeof(v));
	return le16toh(v);
}

static inline uint32_t get32(uint64_t gpa)
{
	uint32_t v;

	memcpy(&v, host(gpa), sizeof(v));
	return le32toh(v);
}

static inline void desc_set(uint64_t table, uint16_t i, uint64_t addr,
			    uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *d = host(table + 16ull * i);
	uint64_t a = htole64(addr);
	uint32_t l = htole32(len);
	uint16_t f = htole16(flags), n = htole16(next);

	memcpy(d, &a, 8);
	memcpy(d + 8, &l, 4);
	memcpy(d + 12, &f, 2);
	memcpy(d + 14, &n, 2);
}

static inline void avail_add(uint16_t head)
{
	put16(AVAIL_GPA + 4 + 2ull * (drv_avail_idx % qsize), head);
	drv_avail_idx++;
	put16(AVAIL_GPA + 2, drv_avail_idx);
}

static inline uint16_t used_idx(void)
{
	return get16(USED_GPA + 2);
}

static inline uint32_t used_id(uint16_t i)
{
	return get32(USED_GPA + 4 + 8ull * (i % qsize));
}

static inline uint32_t used_len(uint16_t i)
{
	return get32(USED_GPA + 8 + 8ull * (i % qsize));
}

static inline void set_used_event(uint16_t v)
{
	put16(AVAIL_GPA + 4 + 2ull * qsize, v);
}

static inline uint16_t avail_event(void)
{
	return get16(USED_GPA + 4 + 8ull * qsize);
}

static inline uint64_t buf(unsigned int k)
{
	return BUF_GPA + BUF_STRIDE * k;
}

static inline void q_setup(uint16_t size, uint64_t features)
{
	memset(ram, 0, RAM_SIZE);
	qsize = size;
	drv_avail_idx = 0;
	CHECK_EQ(virtq_start(&vq, &gm, size, DESC_GPA, AVAIL_GPA, USED_GPA,
			     features), 0);
}

/* Move both sides' indices to @idx, as after @idx requests. */
static inline void q_set_idx(uint16_t idx)
{
	vq.last_avail_idx = idx;
	vq.used_idx = idx;
	vq.signalled_used = idx;
	drv_avail_idx = idx;
	put16(AVAIL_GPA + 2, idx);
	put16(USED_GPA + 2, idx);
}

static inline int pop(struct virtq_elem *e)
{
	memset(e, 0x5a, sizeof(*e));
	e->segs = segs;
	e->max_segs = VIRTQ_MAX_SIZE;
	return virtq_pop(&vq, e);
}

/* A one-descriptor readable request at descriptor @i. */
static inline void add_simple(uint16_t i)
{
	desc_set(DESC_GPA, i, buf(i % 64), 64, R, 0);
	avail_add(i);
}

#define ROW_CHECK_BEGIN() int row_fails_ = test_fail_count
#define ROW_CHECK_END(name)                                                  \
	do {                                                                 \
		if (test_fail_count != row_fails_)                           \
			fprintf(stderr, "  in row: %s\n", name);             \
	} while (0)

/* Allocate the fake RAM and describe it; 0 or -1. */
static inline int driver_init(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram) {
		fprintf(stderr, "out of memory\n");
		return -1;
	}
	if (guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram)) {
		fprintf(stderr, "guest_mem_add_region failed\n");
		return -1;
	}
	return 0;
}

#endif
