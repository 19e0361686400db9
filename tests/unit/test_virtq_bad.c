// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the split virtqueue (virtio 1.2 §2.7) against a hostile
 * guest: one table row per malformed chain or broken ring, each asserting
 * the error code and that the queue carries on (or stays broken), plus
 * virtq_start() with rings it must refuse.
 */
#include "virtq_driver.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

/* ---- malformed rings and chains: one row each ---- */

/* Each setup writes one bad request at descriptor 0 (head 0 unless the row
 * says otherwise); descriptors 8 and up stay free for a good request. */
static void bad_loop_two(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(1), 16, R | NEXT, 0);
	avail_add(0);
}

static void bad_loop_self(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, 0);
	avail_add(0);
}

static void bad_loop_zero_len(void)
{
	desc_set(DESC_GPA, 0, buf(0), 0, R | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(1), 0, R | NEXT, 0);
	avail_add(0);
}

static void bad_loop_indirect(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R | NEXT, 1);
	desc_set(IND_GPA, 1, buf(1), 16, R | NEXT, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 32, IND, 0);
	avail_add(0);
}

static void bad_next_range(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, QSIZE);
	avail_add(0);
}

static void bad_next_ffff(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, 0xffff);
	avail_add(0);
}

static void bad_next_range_indirect(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R | NEXT, 1);
	desc_set(IND_GPA, 1, buf(1), 16, W | NEXT, 2);
	desc_set(DESC_GPA, 0, IND_GPA, 32, IND, 0);
	avail_add(0);
}

static void bad_addr_zero(void)
{
	desc_set(DESC_GPA, 0, 0, 16, R, 0);
	avail_add(0);
}

static void bad_addr_below_ram(void)
{
	desc_set(DESC_GPA, 0, RAM_GPA - 8, 16, R, 0);
	avail_add(0);
}

static void bad_addr_ram_end(void)
{
	desc_set(DESC_GPA, 0, RAM_END, 1, W, 0);
	avail_add(0);
}

static void bad_addr_one_past_end(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, 1);
	desc_set(DESC_GPA, 1, RAM_END - 512, 513, W, 0);
	avail_add(0);
}

static void bad_addr_wrap(void)
{
	desc_set(DESC_GPA, 0, 0xffffffffffffff00ull, 0x200, W, 0);
	avail_add(0);
}

static void bad_len_huge(void)
{
	desc_set(DESC_GPA, 0, buf(0), 0xffffffff, W, 0);
	avail_add(0);
}

static void bad_zero_single(void)
{
	desc_set(DESC_GPA, 0, buf(0), 0, W, 0);
	avail_add(0);
}

static void bad_zero_chain(void)
{
	desc_set(DESC_GPA, 0, 0, 0, R | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(1), 0, W | NEXT, 2);
	desc_set(DESC_GPA, 2, buf(2), 0, W, 0);
	avail_add(0);
}

static void bad_zero_indirect(void)
{
	desc_set(IND_GPA, 0, buf(0), 0, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 16, IND, 0);
	avail_add(0);
}

/* An indirect table of one entry more than the queue size. */
static void bad_indirect_size_plus_one(void)
{
	unsigned int k;

	for (k = 0; k <= QSIZE; k++)
		desc_set(IND_GPA, k, buf(k), 1, R | (k < QSIZE ? NEXT : 0),
			 k + 1);
	desc_set(DESC_GPA, 0, IND_GPA, 16 * (QSIZE + 1), IND, 0);
	avail_add(0);
}

/* A one-entry chain in a table whose length claims size + 1 entries. */
static void bad_indirect_table_len_over_size(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 16 * (QSIZE + 1), IND, 0);
	avail_add(0);
}

/* Four direct buffers, then an indirect table of 13: 17 buffers. */
static void bad_direct_plus_indirect_too_long(void)
{
	unsigned int k;

	for (k = 0; k < 4; k++)
		desc_set(DESC_GPA, k, buf(k), 1, R | NEXT, k + 1);
	for (k = 0; k < QSIZE - 3; k++)
		desc_set(IND_GPA, k, buf(k), 1, W | (k < QSIZE - 4 ? NEXT : 0),
			 k + 1);
	desc_set(DESC_GPA, 4, IND_GPA, 16 * (QSIZE - 3), IND, 0);
	avail_add(0);
}

static void bad_indirect_nested(void)
{
	desc_set(IND_GPA + IND_STRIDE, 0, buf(0), 16, R, 0);
	desc_set(IND_GPA, 0, IND_GPA + IND_STRIDE, 16, IND, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 16, IND, 0);
	avail_add(0);
}

static void bad_indirect_len_24(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 24, IND, 0);
	avail_add(0);
}

static void bad_indirect_len_0(void)
{
	desc_set(DESC_GPA, 0, IND_GPA, 0, IND, 0);
	avail_add(0);
}

static void bad_indirect_addr(void)
{
	desc_set(DESC_GPA, 0, RAM_END - 16, 32, IND, 0);
	avail_add(0);
}

static void bad_indirect_addr_zero(void)
{
	desc_set(DESC_GPA, 0, 0, 16, IND, 0);
	avail_add(0);
}

static void bad_indirect_plain(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 16, IND, 0);
	avail_add(0);
}

static void bad_indirect_next(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 16, IND | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(1), 16, W, 0);
	avail_add(0);
}

static void bad_indirect_after_writable_ok_then_order(void)
{
	desc_set(IND_GPA, 0, buf(0), 16, W | NEXT, 1);
	desc_set(IND_GPA, 1, buf(1), 16, R, 0);
	desc_set(DESC_GPA, 0, IND_GPA, 32, IND, 0);
	avail_add(0);
}

static void bad_order(void)
{
	desc_set(DESC_GPA, 0, buf(0), 16, R | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(1), 16, W | NEXT, 2);
	desc_set(DESC_GPA, 2, buf(2), 16, R, 0);
	avail_add(0);
}

static void bad_too_many_segs(void)
{
	unsigned int k;

	for (k = 0; k < 5; k++)
		desc_set(DESC_GPA, k, buf(k), 16, W | (k < 4 ? NEXT : 0),
			 k + 1);
	avail_add(0);
}

static void bad_head_later(void)
{
	desc_set(DESC_GPA, 7, buf(7), 16, R | NEXT, 7);
	avail_add(7);
}

static void broken_head_range(void)
{
	avail_add(QSIZE);
}

static void broken_head_ffff(void)
{
	avail_add(0xffff);
}

static void broken_avail_jump(void)
{
	add_simple(0);
	put16(AVAIL_GPA + 2, QSIZE + 1);
}

static void broken_avail_backwards(void)
{
	put16(AVAIL_GPA + 2, 0xffff);
}

struct bad_row {
	const char *name;
	uint64_t features;
	void (*setup)(void);
	int ret;
	enum virtq_error err;
	uint16_t head;     /* for -EBADMSG */
	uint16_t max_segs; /* 0: VIRTQ_MAX_SIZE */
};

static const struct bad_row bad_rows[] = {
	{ "loop a->b->a", 0, bad_loop_two, -EBADMSG, VIRTQ_ERR_LOOP, 0, 0 },
	{ "self loop", 0, bad_loop_self, -EBADMSG, VIRTQ_ERR_LOOP, 0, 0 },
	{ "self loop, head 7", 0, bad_head_later, -EBADMSG, VIRTQ_ERR_LOOP,
	  7, 0 },
	{ "loop of zero-length descs", 0, bad_loop_zero_len, -EBADMSG,
	  VIRTQ_ERR_LOOP, 0, 0 },
	{ "loop in indirect table", F_INDIRECT, bad_loop_indirect, -EBADMSG,
	  VIRTQ_ERR_LOOP, 0, 0 },
	{ "next == size", 0, bad_next_range, -EBADMSG, VIRTQ_ERR_NEXT_RANGE,
	  0, 0 },
	{ "next 0xffff", 0, bad_next_ffff, -EBADMSG, VIRTQ_ERR_NEXT_RANGE, 0,
	  0 },
	{ "next past indirect table", F_INDIRECT, bad_next_range_indirect,
	  -EBADMSG, VIRTQ_ERR_NEXT_RANGE, 0, 0 },
	{ "addr 0 (below RAM)", 0, bad_addr_zero, -EBADMSG, VIRTQ_ERR_ADDR, 0,
	  0 },
	{ "addr straddles RAM start", 0, bad_addr_below_ram, -EBADMSG,
	  VIRTQ_ERR_ADDR, 0, 0 },
	{ "addr == RAM end", 0, bad_addr_ram_end, -EBADMSG, VIRTQ_ERR_ADDR,
	  0, 0 },
	{ "addr+len one byte past RAM end", 0, bad_addr_one_past_end,
	  -EBADMSG, VIRTQ_ERR_ADDR, 0, 0 },
	{ "addr+len wraps 2^64", 0, bad_addr_wrap, -EBADMSG, VIRTQ_ERR_ADDR,
	  0, 0 },
	{ "len 0xffffffff", 0, bad_len_huge, -EBADMSG, VIRTQ_ERR_ADDR, 0, 0 },
	{ "zero-length single desc", 0, bad_zero_single, -EBADMSG,
	  VIRTQ_ERR_ZERO_LEN, 0, 0 },
	{ "zero-length chain", 0, bad_zero_chain, -EBADMSG,
	  VIRTQ_ERR_ZERO_LEN, 0, 0 },
	{ "zero-length indirect chain", F_INDIRECT, bad_zero_indirect,
	  -EBADMSG, VIRTQ_ERR_ZERO_LEN, 0, 0 },
	{ "indirect table of size + 1", F_INDIRECT, bad_indirect_size_plus_one,
	  -EBADMSG, VIRTQ_ERR_CHAIN_TOO_LONG, 0, 0 },
	{ "indirect table len over size", F_INDIRECT,
	  bad_indirect_table_len_over_size, -EBADMSG,
	  VIRTQ_ERR_CHAIN_TOO_LONG, 0, 0 },
	{ "direct + indirect over size", F_INDIRECT,
	  bad_direct_plus_indirect_too_long, -EBADMSG,
	  VIRTQ_ERR_CHAIN_TOO_LONG, 0, 0 },
	{ "indirect inside indirect", F_INDIRECT, bad_indirect_nested,
	  -EBADMSG, VIRTQ_ERR_INDIRECT_NESTED, 0, 0 },
	{ "indirect len 24", F_INDIRECT, bad_indirect_len_24, -EBADMSG,
	  VIRTQ_ERR_INDIRECT_LEN, 0, 0 },
	{ "indirect len 0", F_INDIRECT, bad_indirect_len_0, -EBADMSG,
	  VIRTQ_ERR_INDIRECT_LEN, 0, 0 },
	{ "indirect table past RAM end", F_INDIRECT, bad_indirect_addr,
	  -EBADMSG, VIRTQ_ERR_INDIRECT_ADDR, 0, 0 },
	{ "indirect table at gpa 0", F_INDIRECT, bad_indirect_addr_zero,
	  -EBADMSG, VIRTQ_ERR_INDIRECT_ADDR, 0, 0 },
	{ "indirect without the feature", 0, bad_indirect_plain, -EBADMSG,
	  VIRTQ_ERR_INDIRECT_FEATURE, 0, 0 },
	{ "INDIRECT|NEXT", F_INDIRECT, bad_indirect_next, -EBADMSG,
	  VIRTQ_ERR_INDIRECT_NEXT, 0, 0 },
	{ "readable after writable", 0, bad_order, -EBADMSG, VIRTQ_ERR_ORDER,
	  0, 0 },
	{ "readable after writable, indirect", F_INDIRECT,
	  bad_indirect_after_writable_ok_then_order, -EBADMSG,
	  VIRTQ_ERR_ORDER, 0, 0 },
	{ "more segments than max_segs", 0, bad_too_many_segs, -EBADMSG,
	  VIRTQ_ERR_TOO_MANY_SEGS, 0, 4 },
	{ "head == size", 0, broken_head_range, -EIO, VIRTQ_ERR_HEAD_RANGE, 0,
	  0 },
	{ "head 0xffff", 0, broken_head_ffff, -EIO, VIRTQ_ERR_HEAD_RANGE, 0,
	  0 },
	{ "avail idx size + 1 ahead", 0, broken_avail_jump, -EIO,
	  VIRTQ_ERR_AVAIL_IDX, 0, 0 },
	{ "avail idx moved backwards", 0, broken_avail_backwards, -EIO,
	  VIRTQ_ERR_AVAIL_IDX, 0, 0 },
};

/* After a bad chain the queue goes on; after a broken ring it stays
 * broken until virtq_start(). */
static void check_after_bad(const struct bad_row *row,
			    const struct virtq_elem *e)
{
	struct virtq_elem good;

	if (row->ret == -EBADMSG) {
		CHECK_EQ(e->head, row->head);
		CHECK_EQ(e->nr_out + e->nr_in, 0);
		CHECK_EQ(e->out_len + e->in_len, 0);
		CHECK_EQ(vq.bad_chains, 1);
		CHECK(!vq.broken);
		virtq_push(&vq, e->head, 0);
		CHECK_EQ(used_idx(), 1);
		CHECK_EQ(used_id(0), row->head);
		add_simple(8);
		CHECK_EQ(pop(&good), 1);
		CHECK_EQ(good.head, 8);
		CHECK_EQ(vq.last_error, VIRTQ_ERR_NONE);
		return;
	}
	CHECK(vq.broken);
	CHECK_EQ(vq.bad_chains, 0);
	put16(AVAIL_GPA + 2, drv_avail_idx);
	add_simple(8);
	CHECK(!virtq_has_avail(&vq));
	CHECK(!virtq_notify_enable(&vq));
	CHECK_EQ(pop(&good), -EIO);
	CHECK_EQ(vq.last_error, row->err);
	CHECK_EQ(vq.pops, 0);
}

static void test_bad_rows(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_rows); i++) {
		const struct bad_row *row = &bad_rows[i];
		struct virtq_elem e;
		ROW_CHECK_BEGIN();

		q_setup(QSIZE, row->features);
		row->setup();
		memset(&e, 0x5a, sizeof(e));
		e.segs = segs;
		e.max_segs = row->max_segs ? row->max_segs : VIRTQ_MAX_SIZE;
		CHECK_EQ(virtq_pop(&vq, &e), row->ret);
		CHECK_EQ(vq.last_error, row->err);
		CHECK(strcmp(virtq_error_str(vq.last_error), "unknown"));
		check_after_bad(row, &e);
		ROW_CHECK_END(row->name);
	}
	CHECK(!strcmp(virtq_error_str(VIRTQ_ERR_COUNT), "unknown"));
}

/* ---- virtq_start() ---- */

struct start_row {
	const char *name;
	uint16_t size;
	uint64_t desc, avail, used;
	int ret;
};

static const struct start_row start_rows[] = {
	{ "good", QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA, 0 },
	{ "good, size 1", 1, DESC_GPA, AVAIL_GPA, USED_GPA, 0 },
	{ "good, size max", VIRTQ_MAX_SIZE, DESC_GPA, AVAIL_GPA, USED_GPA, 0 },
	{ "good, minimal alignment", QSIZE, DESC_GPA + 16, AVAIL_GPA + 2,
	  USED_GPA + 4, 0 },
	{ "good, used ring ends at RAM end", QSIZE, DESC_GPA, AVAIL_GPA,
	  RAM_END - VIRTQ_USED_BYTES(QSIZE) - 2, 0 },
	{ "size 0", 0, DESC_GPA, AVAIL_GPA, USED_GPA, -EINVAL },
	{ "size 3", 3, DESC_GPA, AVAIL_GPA, USED_GPA, -EINVAL },
	{ "size 24", 24, DESC_GPA, AVAIL_GPA, USED_GPA, -EINVAL },
	{ "size max + 1", VIRTQ_MAX_SIZE + 1, DESC_GPA, AVAIL_GPA, USED_GPA,
	  -EINVAL },
	{ "size 2 * max", 2 * VIRTQ_MAX_SIZE, DESC_GPA, AVAIL_GPA, USED_GPA,
	  -EINVAL },
	{ "size 32768", 32768, DESC_GPA, AVAIL_GPA, USED_GPA, -EINVAL },
	{ "desc misaligned", QSIZE, DESC_GPA + 8, AVAIL_GPA, USED_GPA,
	  -EINVAL },
	{ "avail misaligned", QSIZE, DESC_GPA, AVAIL_GPA + 1, USED_GPA,
	  -EINVAL },
	{ "used misaligned", QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA + 2,
	  -EINVAL },
	{ "desc at gpa 0", QSIZE, 0, AVAIL_GPA, USED_GPA, -EINVAL },
	{ "desc past RAM end", QSIZE, RAM_END - 16 * QSIZE + 16, AVAIL_GPA,
	  USED_GPA, -EINVAL },
	{ "avail used_event past RAM end", QSIZE, DESC_GPA,
	  RAM_END - VIRTQ_AVAIL_BYTES(QSIZE) + 2, USED_GPA, -EINVAL },
	{ "used avail_event past RAM end", QSIZE, DESC_GPA, AVAIL_GPA,
	  RAM_END - VIRTQ_USED_BYTES(QSIZE) + 2, -EINVAL },
	{ "desc wraps 2^64", QSIZE, 0xfffffffffffffff0ull, AVAIL_GPA,
	  USED_GPA, -EINVAL },
	{ "used beyond RAM", QSIZE, DESC_GPA, AVAIL_GPA, 0x100000000ull,
	  -EINVAL },
};

static void test_start_rows(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(start_rows); i++) {
		const struct start_row *row = &start_rows[i];
		struct virtq_elem e;
		ROW_CHECK_BEGIN();

		memset(ram, 0, RAM_SIZE);
		CHECK_EQ(virtq_start(&vq, &gm, row->size, row->desc,
				     row->avail, row->used,
				     F_INDIRECT | F_EVENT_IDX), row->ret);
		CHECK_EQ(vq.ready, row->ret == 0);
		if (row->ret) {
			/* Not started: empty, inert, and touches nothing. */
			put16(AVAIL_GPA + 2, 1);
			CHECK_EQ(pop(&e), 0);
			CHECK(!virtq_has_avail(&vq));
			CHECK(!virtq_notify_enable(&vq));
			virtq_notify_disable(&vq);
			virtq_push(&vq, 0, 0);
			CHECK(!virtq_need_notify(&vq));
			CHECK_EQ(get16(USED_GPA + 2), 0);
		}
		ROW_CHECK_END(row->name);
	}
}

/* Guest alignment and host alignment are both required: a region whose
 * host mapping is offset by 2 bytes turns one into the other. */
static void test_start_host_alignment(void)
{
	struct guest_mem odd = { .nr_regions = 0 };

	CHECK_EQ(guest_mem_add_region(&odd, RAM_GPA, RAM_SIZE - 16, ram + 2),
		 0);
	CHECK_EQ(virtq_start(&vq, &odd, QSIZE, DESC_GPA, AVAIL_GPA,
			     USED_GPA + 2, 0), -EINVAL);
	CHECK_EQ(virtq_start(&vq, &odd, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA,
			     0), -EINVAL);
	CHECK(!vq.ready);

	/* Offset by 4 both alignments hold again. */
	odd.nr_regions = 0;
	CHECK_EQ(guest_mem_add_region(&odd, RAM_GPA, RAM_SIZE - 16, ram + 4),
		 0);
	CHECK_EQ(virtq_start(&vq, &odd, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA,
			     0), 0);
	CHECK(vq.ready);
}

/* Chains over UINT32_MAX bytes are refused (virtio 1.2 §2.7.5.2 caps them
 * at 2^32). The large region is address space only: virtq never touches
 * buffer contents. */
#define BIG_GPA 0x100000000ull
#define BIG_SIZE 0x80000000ull

static void test_chain_too_big(void)
{
	struct guest_mem saved = gm;
	struct virtq_elem e;
	void *big;

	big = mmap(NULL, BIG_SIZE, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (big == MAP_FAILED) {
		fprintf(stderr, "chain_too_big: no address space, skipped\n");
		return;
	}
	CHECK_EQ(guest_mem_add_region(&gm, BIG_GPA, BIG_SIZE, big), 0);

	q_setup(QSIZE, 0);
	desc_set(DESC_GPA, 0, BIG_GPA, 0x80000000u, R | NEXT, 1);
	desc_set(DESC_GPA, 1, BIG_GPA, 0x7fffffffu, W, 0);
	avail_add(0);
	CHECK_EQ(pop(&e), 1);
	CHECK_EQ(e.out_len + e.in_len, UINT32_MAX);

	desc_set(DESC_GPA, 2, BIG_GPA, 0x80000000u, R | NEXT, 3);
	desc_set(DESC_GPA, 3, BIG_GPA, 0x80000000u, W, 0);
	avail_add(2);
	CHECK_EQ(pop(&e), -EBADMSG);
	CHECK_EQ(vq.last_error, VIRTQ_ERR_TOO_BIG);
	CHECK_EQ(e.head, 2);

	munmap(big, BIG_SIZE);
	gm = saved;
}

int main(void)
{
	if (driver_init())
		return 1;
	test_bad_rows();
	test_start_rows();
	test_start_host_alignment();
	test_chain_too_big();
	free(ram);
	return test_done();
}
