// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the split virtqueue (virtio 1.2 §2.7), legal traffic:
 * chains of every framing, direct and indirect, index wraparound, and both
 * directions of notification suppression. Malformed input is covered in
 * test_virtq_bad.c.
 */
#include "virtq_driver.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- legal chains ---- */

struct tbuf {
	uint32_t len;
	uint16_t flags; /* R or W */
};

struct layout_row {
	const char *name;
	struct tbuf bufs[16];
	unsigned int nr;
	uint16_t nr_out, nr_in;
	uint64_t out_len, in_len;
};

/* virtio 1.2 §2.7.4: the device may assume no particular framing. */
static const struct layout_row layouts[] = {
	{ "single readable", { { 512, R } }, 1, 1, 0, 512, 0 },
	{ "single writable", { { 512, W } }, 1, 0, 1, 0, 512 },
	{ "hdr/data/status (blk read)",
	  { { 16, R }, { 4096, W }, { 1, W } }, 3, 1, 2, 16, 4097 },
	{ "hdr/data/status (blk write)",
	  { { 16, R }, { 4096, R }, { 1, W } }, 3, 2, 1, 4112, 1 },
	{ "header split in two",
	  { { 8, R }, { 8, R }, { 512, W }, { 1, W } }, 4, 2, 2, 16, 513 },
	{ "data in eight segments",
	  { { 16, R }, { 512, W }, { 512, W }, { 512, W }, { 512, W },
	    { 512, W }, { 512, W }, { 512, W }, { 512, W }, { 1, W } },
	  10, 1, 9, 16, 4097 },
	{ "status merged with data", { { 16, R }, { 4097, W } }, 2, 1, 1, 16,
	  4097 },
	{ "header merged with data", { { 4112, R }, { 1, W } }, 2, 1, 1, 4112,
	  1 },
	{ "zero-length descriptors kept out of segs",
	  { { 0, R }, { 16, R }, { 0, R }, { 4096, W }, { 0, W }, { 1, W } },
	  6, 1, 2, 16, 4097 },
	{ "one-byte segments",
	  { { 1, R }, { 1, R }, { 1, R }, { 1, R }, { 1, W }, { 1, W } }, 6,
	  4, 2, 4, 2 },
	{ "queue-size chain",
	  { { 1, R }, { 1, R }, { 1, R }, { 1, R }, { 1, R }, { 1, R },
	    { 1, R }, { 1, R }, { 1, W }, { 1, W }, { 1, W }, { 1, W },
	    { 1, W }, { 1, W }, { 1, W }, { 1, W } },
	  16, 8, 8, 8, 8 },
};

enum placement { PLACE_DIRECT, PLACE_INDIRECT, PLACE_MIXED };

/*
 * Write @row as a chain and queue it. Direct descriptors sit at scattered
 * slots (3 + 7k mod 16) so next really is followed; PLACE_MIXED puts the
 * first half direct and the rest behind one indirect descriptor
 * (virtio 1.2 §2.7.5.3.2).
 */
static uint16_t place_chain(const struct layout_row *row, enum placement p)
{
	unsigned int k, nr_direct = 0;
	uint16_t slot[17];

	if (p == PLACE_DIRECT)
		nr_direct = row->nr;
	else if (p == PLACE_MIXED)
		nr_direct = row->nr / 2;
	for (k = 0; k <= nr_direct; k++)
		slot[k] = (3 + 7 * k) % QSIZE;
	for (k = 0; k < row->nr; k++) {
		uint16_t flags = row->bufs[k].flags;

		/* Every buffer but the last chains on; the last direct one
		 * chains to the indirect descriptor. */
		if (k + 1 < row->nr)
			flags |= NEXT;
		if (k < nr_direct)
			desc_set(DESC_GPA, slot[k], buf(k), row->bufs[k].len,
				 flags, slot[k + 1]);
		else
			desc_set(IND_GPA, k - nr_direct, buf(k),
				 row->bufs[k].len, flags, k - nr_direct + 1);
	}
	if (nr_direct < row->nr)
		desc_set(DESC_GPA, slot[nr_direct], IND_GPA,
			 16 * (row->nr - nr_direct), IND | W, 0);
	avail_add(slot[0]);
	return slot[0];
}

static void check_segs(const struct layout_row *row,
		       const struct virtq_elem *e)
{
	unsigned int k, s = 0;

	for (k = 0; k < row->nr; k++) {
		if (!row->bufs[k].len)
			continue;
		CHECK(s < (unsigned int)(e->nr_out + e->nr_in));
		CHECK(e->segs[s].addr == host(buf(k)));
		CHECK_EQ(e->segs[s].len, row->bufs[k].len);
		s++;
	}
	CHECK_EQ(s, e->nr_out + e->nr_in);
}

static void test_layouts(void)
{
	static const char *const place_names[] = { "direct", "indirect",
						   "mixed" };
	unsigned int i, p;

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		const struct layout_row *row = &layouts[i];

		for (p = PLACE_DIRECT; p <= PLACE_MIXED; p++) {
			struct virtq_elem e;
			uint16_t head;
			ROW_CHECK_BEGIN();

			q_setup(QSIZE, F_INDIRECT);
			head = place_chain(row, p);
			CHECK_EQ(pop(&e), 1);
			CHECK_EQ(e.head, head);
			CHECK_EQ(e.nr_out, row->nr_out);
			CHECK_EQ(e.nr_in, row->nr_in);
			CHECK_EQ(e.out_len, row->out_len);
			CHECK_EQ(e.in_len, row->in_len);
			check_segs(row, &e);
			CHECK_EQ(pop(&e), 0);
			virtq_push(&vq, head, (uint32_t)row->in_len);
			CHECK_EQ(used_idx(), 1);
			CHECK_EQ(used_id(0), head);
			CHECK_EQ(used_len(0), row->in_len);
			CHECK_EQ(vq.pops, 1);
			CHECK_EQ(vq.pushes, 1);
			CHECK_EQ(vq.bad_chains, 0);
			ROW_CHECK_END(row->name);
			if (test_fail_count != row_fails_)
				fprintf(stderr, "  placement: %s\n",
					place_names[p]);
		}
	}
}

/* Direct and indirect requests queued together, completed out of order. */
static void test_mixed_requests(void)
{
	struct virtq_elem e;
	unsigned int k;

	q_setup(QSIZE, F_INDIRECT);
	for (k = 0; k < 4; k++) {
		uint64_t table = IND_GPA + IND_STRIDE * k;

		if (k % 2) {
			desc_set(table, 0, buf(2 * k), 16, R | NEXT, 1);
			desc_set(table, 1, buf(2 * k + 1), 100 + k, W, 0);
			desc_set(DESC_GPA, k, table, 32, IND, 0);
		} else {
			desc_set(DESC_GPA, k, buf(2 * k), 16, R | NEXT, k + 8);
			desc_set(DESC_GPA, k + 8, buf(2 * k + 1), 100 + k, W,
				 0);
		}
		avail_add(k);
	}
	for (k = 0; k < 4; k++) {
		CHECK_EQ(pop(&e), 1);
		CHECK_EQ(e.head, k);
		CHECK_EQ(e.nr_out, 1);
		CHECK_EQ(e.nr_in, 1);
		CHECK_EQ(e.in_len, 100 + k);
		CHECK(e.segs[1].addr == host(buf(2 * k + 1)));
	}
	CHECK_EQ(pop(&e), 0);
	for (k = 0; k < 4; k++)
		virtq_push(&vq, 3 - k, 1000 + k);
	CHECK_EQ(used_idx(), 4);
	for (k = 0; k < 4; k++) {
		CHECK_EQ(used_id(k), 3 - k);
		CHECK_EQ(used_len(k), 1000 + k);
	}
}

/* A full ring (size entries outstanding) is legal; buffers may end at the
 * very last byte of RAM. */
static void test_full_ring_and_ram_end(void)
{
	struct virtq_elem e;
	unsigned int k;

	q_setup(QSIZE, 0);
	for (k = 0; k < QSIZE; k++)
		add_simple(k);
	for (k = 0; k < QSIZE; k++) {
		CHECK_EQ(pop(&e), 1);
		CHECK_EQ(e.head, k);
	}
	CHECK_EQ(pop(&e), 0);
	CHECK(segs[0].addr == host(buf(15)));

	q_setup(QSIZE, 0);
	desc_set(DESC_GPA, 0, RAM_END - 512, 512, W, 0);
	avail_add(0);
	CHECK_EQ(pop(&e), 1);
	CHECK(e.segs[0].addr == host(RAM_END - 512));
	CHECK_EQ(e.in_len, 512);
}

/* Indices wrap at 65536 (virtio 1.2 §2.7.13.3): start at 0xfff0, run 64
 * requests in batches of 8, half direct, half indirect. */
static void test_wraparound(void)
{
	unsigned int batch, k;

	q_setup(QSIZE, F_INDIRECT);
	q_set_idx(0xfff0);
	for (batch = 0; batch < 8; batch++) {
		uint16_t first = 0xfff0 + 8 * batch;
		struct virtq_elem e;

		for (k = 0; k < 8; k++) {
			uint16_t head = (batch + k) % QSIZE;
			uint64_t table = IND_GPA + IND_STRIDE * (k / 2);

			if (k % 2) {
				desc_set(table, 0, buf(k), 8 + k, W, 0);
				desc_set(DESC_GPA, head, table, 16, IND, 0);
			} else {
				desc_set(DESC_GPA, head, buf(k), 8 + k, W, 0);
			}
			avail_add(head);
		}
		for (k = 0; k < 8; k++) {
			CHECK_EQ(pop(&e), 1);
			CHECK_EQ(e.head, (batch + k) % QSIZE);
			CHECK_EQ(e.in_len, 8 + k);
			virtq_push(&vq, e.head, (uint32_t)e.in_len);
		}
		CHECK_EQ(pop(&e), 0);
		CHECK_EQ(used_idx(), (uint16_t)(first + 8));
		for (k = 0; k < 8; k++) {
			CHECK_EQ(used_id(first + k), (batch + k) % QSIZE);
			CHECK_EQ(used_len(first + k), 8 + k);
		}
	}
	CHECK_EQ(used_idx(), 0x0030);
	CHECK_EQ(vq.last_avail_idx, 0x0030);
	CHECK_EQ(vq.pops, 64);
	CHECK(!vq.broken);
}

/* The same without touching any index by hand: 70000 round trips through
 * a 4-entry ring. */
static void test_natural_wrap(void)
{
	struct virtq_elem e;
	unsigned int n;

	q_setup(4, 0);
	for (n = 0; n < 70000; n++) {
		add_simple(n % 4);
		if (pop(&e) != 1 || e.head != n % 4)
			break;
		virtq_push(&vq, e.head, n);
	}
	CHECK_EQ(n, 70000);
	CHECK_EQ(used_idx(), 70000 & 0xffff);
	CHECK_EQ(used_len((uint16_t)(70000 - 1)), 69999);
	CHECK_EQ(vq.pops, 70000);
	CHECK_EQ(vq.pushes, 70000);
}

/* ---- notification suppression ---- */

struct irq_row {
	const char *name;
	uint64_t features;
	uint16_t start;      /* used idx before the batch */
	uint16_t pushes;     /* batch size */
	uint16_t used_event; /* EVENT_IDX only */
	uint16_t flags;      /* avail->flags */
	bool expect;
};

/* virtio 1.2 §2.7.7.2: with EVENT_IDX notify iff the batch wrote entry
 * used_event; otherwise iff the batch is non-empty and flags allow it. */
static const struct irq_row irq_rows[] = {
	{ "event: first entry is used_event 0", F_EVENT_IDX, 0, 1, 0, 0, true },
	{ "event: used_event not reached", F_EVENT_IDX, 0, 1, 1, 0, false },
	{ "event: batch crosses used_event", F_EVENT_IDX, 0, 3, 1, 0, true },
	{ "event: last entry is used_event", F_EVENT_IDX, 0, 3, 2, 0, true },
	{ "event: used_event one past batch", F_EVENT_IDX, 0, 3, 3, 0,
	  false },
	{ "event: used_event behind batch", F_EVENT_IDX, 10, 3, 5, 0, false },
	{ "event: flags bit ignored", F_EVENT_IDX, 0, 1, 0,
	  VIRTQ_AVAIL_F_NO_INTERRUPT, true },
	{ "event: empty batch", F_EVENT_IDX, 0, 0, 0, 0, false },
	{ "event wrap: used_event 0xfffe", F_EVENT_IDX, 0xfffe, 4, 0xfffe, 0,
	  true },
	{ "event wrap: used_event 0xffff", F_EVENT_IDX, 0xfffe, 4, 0xffff, 0,
	  true },
	{ "event wrap: used_event 0", F_EVENT_IDX, 0xfffe, 4, 0, 0, true },
	{ "event wrap: used_event 1", F_EVENT_IDX, 0xfffe, 4, 1, 0, true },
	{ "event wrap: used_event 2", F_EVENT_IDX, 0xfffe, 4, 2, 0, false },
	{ "event wrap: used_event 0xfffd", F_EVENT_IDX, 0xfffe, 4, 0xfffd, 0,
	  false },
	{ "event wrap: batch ends at 0", F_EVENT_IDX, 0xfffc, 4, 0, 0, false },
	{ "event wrap: batch ends at 0, event 0xffff", F_EVENT_IDX, 0xfffc, 4,
	  0xffff, 0, true },
	{ "flags: interrupts on", 0, 0, 1, 0, 0, true },
	{ "flags: NO_INTERRUPT", 0, 0, 2, 0, VIRTQ_AVAIL_F_NO_INTERRUPT,
	  false },
	{ "flags: used_event ignored", 0, 0, 1, 7, 0, true },
	{ "flags: empty batch", 0, 0, 0, 0, 0, false },
	{ "flags: after wrap", 0, 0xffff, 2, 0, 0, true },
};

static void test_need_notify(void)
{
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(irq_rows); i++) {
		const struct irq_row *row = &irq_rows[i];
		struct virtq_elem e;
		ROW_CHECK_BEGIN();

		q_setup(QSIZE, row->features);
		q_set_idx(row->start);
		set_used_event(row->used_event);
		put16(AVAIL_GPA, row->flags);
		for (k = 0; k < row->pushes; k++) {
			add_simple(k);
			CHECK_EQ(pop(&e), 1);
			virtq_push(&vq, e.head, 0);
		}
		CHECK_EQ(used_idx(), (uint16_t)(row->start + row->pushes));
		CHECK_EQ(virtq_need_notify(&vq), row->expect);
		/* Nothing pushed since: never a second interrupt. */
		CHECK_EQ(virtq_need_notify(&vq), false);
		ROW_CHECK_END(row->name);
	}
}

/* Successive batches: each call judges only what was pushed since the
 * previous one (the driver moves used_event on as it consumes). */
static void test_need_notify_batches(void)
{
	struct virtq_elem e;

	q_setup(QSIZE, F_EVENT_IDX);
	set_used_event(3);
	add_simple(0);
	add_simple(1);
	CHECK_EQ(pop(&e), 1);
	virtq_push(&vq, e.head, 0);
	CHECK(!virtq_need_notify(&vq)); /* entry 0 only */
	CHECK_EQ(pop(&e), 1);
	virtq_push(&vq, e.head, 0);
	CHECK(!virtq_need_notify(&vq)); /* entry 1 only */
	add_simple(2);
	add_simple(3);
	CHECK_EQ(pop(&e), 1);
	virtq_push(&vq, e.head, 0);
	CHECK_EQ(pop(&e), 1);
	virtq_push(&vq, e.head, 0);
	CHECK(virtq_need_notify(&vq)); /* entries 2 and 3, 3 is the event */
	set_used_event(4);
	add_simple(4);
	CHECK_EQ(pop(&e), 1);
	virtq_push(&vq, e.head, 0);
	CHECK(virtq_need_notify(&vq));
}

/* Available buffer notification suppression (virtio 1.2 §2.7.10). */
static void test_kick_suppression_flags(void)
{
	struct virtq_elem e;

	q_setup(QSIZE, 0);
	CHECK_EQ(get16(USED_GPA), 0);
	virtq_notify_disable(&vq);
	CHECK_EQ(get16(USED_GPA), VIRTQ_USED_F_NO_NOTIFY);
	CHECK(!virtq_notify_enable(&vq));
	CHECK_EQ(get16(USED_GPA), 0);

	/* A buffer that raced in while kicks were off is reported. */
	virtq_notify_disable(&vq);
	add_simple(0);
	CHECK(virtq_has_avail(&vq));
	CHECK(virtq_notify_enable(&vq));
	CHECK_EQ(get16(USED_GPA), 0);
	CHECK_EQ(pop(&e), 1);
	CHECK(!virtq_has_avail(&vq));
	CHECK(!virtq_notify_enable(&vq));
}

/* Whether a driver publishing indices @old .. @new - 1 kicks (§2.7.10.1). */
static bool driver_kicks(uint16_t old, uint16_t new)
{
	return (uint16_t)(new - avail_event() - 1) < (uint16_t)(new - old);
}

static void test_kick_suppression_event_idx(void)
{
	struct virtq_elem e;
	unsigned int k;

	/* virtq_start() asks for the first kick whatever the ring held. */
	q_setup(QSIZE, F_EVENT_IDX);
	put16(USED_GPA, VIRTQ_USED_F_NO_NOTIFY);
	put16(USED_GPA + 4 + 8ull * QSIZE, 0x1234);
	CHECK_EQ(virtq_start(&vq, &gm, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA,
			     F_EVENT_IDX), 0);
	CHECK_EQ(avail_event(), 0);
	CHECK_EQ(get16(USED_GPA), 0);

	CHECK(driver_kicks(0, 1)); /* enabled: the first buffer kicks */
	virtq_notify_disable(&vq);
	CHECK_EQ(get16(USED_GPA), 0); /* flags stay 0 with EVENT_IDX */
	CHECK_EQ(avail_event(), 0xffff); /* behind: no kick, the first too */
	CHECK(!driver_kicks(0, 1));
	for (k = 0; k < 3; k++)
		add_simple(k);
	CHECK(!driver_kicks(0, 3));
	for (k = 0; k < 3; k++)
		CHECK_EQ(pop(&e), 1);
	CHECK_EQ(avail_event(), 0xffff); /* not moved while disabled */
	CHECK(!virtq_notify_enable(&vq));
	CHECK_EQ(avail_event(), 3);
	CHECK(driver_kicks(3, 4));

	virtq_notify_disable(&vq);
	CHECK_EQ(avail_event(), 2);
	add_simple(3);
	CHECK(!driver_kicks(3, 4));
	/* However many it publishes (a whole ring's worth): none. */
	CHECK(!driver_kicks(3, (uint16_t)(3 + QSIZE)));
	CHECK(virtq_notify_enable(&vq));
	CHECK_EQ(avail_event(), 3);
	CHECK_EQ(pop(&e), 1);
	CHECK(!virtq_notify_enable(&vq));
	CHECK_EQ(avail_event(), 4);
	CHECK_EQ(get16(USED_GPA), 0);

	/* Across the wrap avail_event follows the 16-bit index. */
	q_set_idx(0xffff);
	add_simple(0);
	CHECK_EQ(pop(&e), 1);
	CHECK(!virtq_notify_enable(&vq));
	CHECK_EQ(avail_event(), 0);
}

/*
 * Save and restore: the queue goes on where it stood (no replay, no
 * skip), guest memory is not written (used flags and avail_event keep
 * what the device last set), and states or rings virtq_start() would
 * refuse are refused.
 */
static void test_save_restore(void)
{
	struct virtq_state st, bad;
	struct virtq_elem e;
	uint8_t before[0x6000];
	unsigned int k;

	q_setup(QSIZE, F_EVENT_IDX);
	q_set_idx(0x7ffe);
	for (k = 0; k < 3; k++)
		add_simple((uint16_t)k);
	for (k = 0; k < 3; k++) {
		CHECK_EQ(pop(&e), 1);
		virtq_push(&vq, e.head, 0);
	}
	virtq_notify_disable(&vq);
	add_simple(3);
	virtq_save(&vq, &st);
	CHECK_EQ(st.last_avail_idx, 0x8001);
	CHECK_EQ(st.used_idx, 0x8001);
	memcpy(before, host(DESC_GPA), sizeof(before));
	memset(&vq, 0xa5, sizeof(vq));
	CHECK_EQ(virtq_restore(&vq, &gm, QSIZE, DESC_GPA, AVAIL_GPA,
			       USED_GPA, F_EVENT_IDX, &st), 0);
	CHECK(!memcmp(before, host(DESC_GPA), sizeof(before)));
	CHECK(vq.ready && !vq.broken);
	CHECK_EQ(pop(&e), 1); /* the one added before the save, once */
	CHECK_EQ(e.head, 3);
	virtq_push(&vq, e.head, 0);
	CHECK_EQ(pop(&e), 0);
	CHECK_EQ(used_idx(), 0x8002);
	/* Used index more than a ring behind: not a state we saved. */
	bad = st;
	bad.used_idx = (uint16_t)(st.last_avail_idx - QSIZE - 1);
	CHECK_EQ(virtq_restore(&vq, &gm, QSIZE, DESC_GPA, AVAIL_GPA,
			       USED_GPA, 0, &bad), -EINVAL);
	CHECK(!vq.ready);
	CHECK_EQ(pop(&e), 0);
	/* Rings outside RAM or misaligned, as virtq_start() refuses. */
	CHECK_EQ(virtq_restore(&vq, &gm, QSIZE, RAM_END - 16, AVAIL_GPA,
			       USED_GPA, 0, &st), -EINVAL);
	CHECK_EQ(virtq_restore(&vq, &gm, QSIZE, DESC_GPA, AVAIL_GPA + 1,
			       USED_GPA, 0, &st), -EINVAL);
	CHECK_EQ(virtq_restore(&vq, &gm, 12, DESC_GPA, AVAIL_GPA,
			       USED_GPA, 0, &st), -EINVAL);
}

/* Is the page of @gpa set in a bitmap of region 0 taken from gm? */
static bool bit_of(const uint64_t *bits, uint64_t gpa)
{
	uint64_t p = (gpa - RAM_GPA) / GUEST_MEM_PAGE;

	return bits[p / 64] & (1ull << (p % 64));
}

/*
 * Dirty tracking for diff snapshots: a popped chain's device-writable
 * buffers (each page they span) and the used ring are marked, read-only
 * buffers are not; a take clears; without tracking nothing is kept.
 */
static void test_dirty_tracking(void)
{
	uint64_t bits[(RAM_SIZE / GUEST_MEM_PAGE + 63) / 64];
	struct virtq_elem e;

	q_setup(QSIZE, 0);
	CHECK_EQ(guest_mem_track_dirty(&gm), 0);
	memset(bits, 0, sizeof(bits));
	/* A readable buffer, then a writable one across a page boundary. */
	desc_set(DESC_GPA, 0, buf(0), 64, R | NEXT, 1);
	desc_set(DESC_GPA, 1, buf(2) + GUEST_MEM_PAGE - 8, 16, W, 0);
	avail_add(0);
	CHECK_EQ(pop(&e), 1);
	guest_mem_dirty_take(&gm, 0, bits);
	CHECK(!bit_of(bits, buf(0)));
	CHECK(bit_of(bits, buf(2)));
	CHECK(bit_of(bits, buf(2) + GUEST_MEM_PAGE));
	CHECK(!bit_of(bits, USED_GPA));
	memset(bits, 0, sizeof(bits));
	virtq_push(&vq, e.head, 16);
	guest_mem_dirty_take(&gm, 0, bits);
	CHECK(bit_of(bits, USED_GPA));
	CHECK(!bit_of(bits, buf(2)));  /* taken before: cleared */
	memset(bits, 0, sizeof(bits));
	CHECK_EQ(guest_mem_write(&gm, buf(5), "x", 1), 0);
	guest_mem_mark_dirty(&gm, RAM_END - 1, 100); /* clipped to RAM */
	guest_mem_mark_dirty(&gm, RAM_END, 100);     /* outside: nothing */
	guest_mem_dirty_take(&gm, 0, bits);
	CHECK(bit_of(bits, buf(5)));
	CHECK(bit_of(bits, RAM_END - 1));
	/* A range over whole words and ragged ends: every page, no more. */
	memset(bits, 0, sizeof(bits));
	guest_mem_mark_dirty(&gm, RAM_GPA + 3 * GUEST_MEM_PAGE,
			     150 * GUEST_MEM_PAGE);
	guest_mem_dirty_take(&gm, 0, bits);
	{
		uint64_t pg;

		for (pg = 0; pg < RAM_SIZE / GUEST_MEM_PAGE; pg++)
			CHECK_EQ(bit_of(bits, RAM_GPA + pg * GUEST_MEM_PAGE),
				 pg >= 3 && pg < 153);
	}
	guest_mem_untrack(&gm);
	memset(bits, 0, sizeof(bits));
	CHECK_EQ(guest_mem_write(&gm, buf(6), "x", 1), 0);
	guest_mem_dirty_take(&gm, 0, bits);
	CHECK(!bit_of(bits, buf(6)));
}

int main(void)
{
	if (driver_init())
		return 1;
	test_layouts();
	test_mixed_requests();
	test_full_ring_and_ram_end();
	test_wraparound();
	test_natural_wrap();
	test_need_notify();
	test_need_notify_batches();
	test_kick_suppression_flags();
	test_kick_suppression_event_idx();
	test_save_restore();
	test_dirty_tracking();
	free(ram);
	return test_done();
}
