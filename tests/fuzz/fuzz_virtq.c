// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the split virtqueue (src/virtio/virtq.c): the input
 * is a driver program that lays out rings of any size up to 1024 in three
 * RAM regions, writes descriptors and avail entries, moves indices, and
 * races the device: virtq.c is compiled into this file with its guest
 * reads (descriptor copies, index loads) routed through a hook that
 * rewrites guest memory at read number k of a pop, as a driver on another
 * vCPU could. The device pops, checks and pushes; bulk runs carry the
 * indices through the 16-bit wrap; notification suppression is checked
 * against a model, with EVENT_IDX on and off. abort() on a broken promise.
 *
 * Guest memory: region A [0, 32K) and region B [32K, 48K) are adjacent in
 * guest physical space but separate host allocations, so a buffer that
 * straddles them must be refused (ASan sees it otherwise); region C
 * [64K, 84K) sits after a hole, at an odd host address.
 *
 * Input: FUZZ_HEADER bytes (see fuzz_setup()), then FUZZ_OP_SIZE-byte
 * operations (see fuzz_op()).
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/guest_mem.h"
#include "virtio/virtq.h"

#define FUZZ_A_GPA 0x0ull
#define FUZZ_A_SIZE 0x8000u
#define FUZZ_B_GPA 0x8000ull
#define FUZZ_B_SIZE 0x4000u
#define FUZZ_C_GPA 0x10000ull
#define FUZZ_C_SIZE 0x5000u
#define FUZZ_SPAN 0x15000u /* guest addresses the program aims at */
#define FUZZ_NR_REGIONS 3

#define FUZZ_HEADER 12
#define FUZZ_OP_SIZE 20
#define FUZZ_MAX_OPS 1000
#define FUZZ_LONG_BULK 70000u /* chains per input in bulk runs: a wrap */
#define FUZZ_SHORT_BULK 256u   /* ... unless the header asks for one */
#define FUZZ_SEG_MAX_CHOICES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "fuzz_virtq_hook.h"

/* ---- the driver ---- */

struct fuzz_region {
	uint64_t gpa;
	uint32_t size;
	uint8_t *alloc; /* what to free */
	uint8_t *host;
};

struct fuzz_driver {
	struct fuzz_region regions[FUZZ_NR_REGIONS];
	struct virtq vq;
	uint16_t qsize;
	uint64_t desc, avail, used;
	uint16_t avail_idx;  /* next avail idx the driver publishes */
	uint16_t consumed;   /* avail entries the device took, model */
	uint16_t used_model; /* used idx, model */
	uint16_t signalled;  /* used idx at the last notify decision */
	uint32_t bulk;       /* chains in bulk runs so far */
	uint32_t max_bulk;
	struct virtq_elem elem;
	struct virtq_seg segs[VIRTQ_MAX_SIZE];
	uint16_t inflight[VIRTQ_MAX_SIZE];
	uint32_t written[VIRTQ_MAX_SIZE];
	unsigned int first_inflight; /* a ring: oldest at first_inflight */
	unsigned int nr_inflight;
};

static struct fuzz_driver drv;

/* The harness's own translation, kept apart from guest_mem_ptr(). */
FUZZ_HARNESS static uint8_t *fuzz_host(uint64_t gpa, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < FUZZ_NR_REGIONS; i++) {
		const struct fuzz_region *r = &drv.regions[i];

		if (gpa >= r->gpa && gpa - r->gpa < r->size)
			return len <= r->size - (gpa - r->gpa)
				       ? r->host + (gpa - r->gpa)
				       : NULL;
	}
	return NULL;
}

FUZZ_HARNESS static void fuzz_put16(uint64_t gpa, uint16_t v)
{
	fuzz_guest_store(gpa, v, 2);
}

FUZZ_HARNESS static uint16_t fuzz_get16(uint64_t gpa)
{
	const uint8_t *p = fuzz_host(gpa, 2);
	uint16_t v;

	if (!p)
		abort(); /* the rings were checked to be RAM */
	memcpy(&v, p, 2);
	return le16toh(v);
}

/* Is [p, p + len) wholly inside one region's host allocation? */
FUZZ_HARNESS static bool fuzz_in_ram(const void *p, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < FUZZ_NR_REGIONS; i++) {
		const struct fuzz_region *r = &drv.regions[i];
		uintptr_t off = (uintptr_t)p - (uintptr_t)r->host;

		if ((uintptr_t)p >= (uintptr_t)r->host && off < r->size)
			return len <= r->size - off;
	}
	return false;
}

/*
 * A popped chain must be exactly the buffers the device read: each
 * non-indirect descriptor with a length, in order, readable ones first,
 * at the translation of the address it copied (no second fetch).
 */
FUZZ_HARNESS static void fuzz_check_chain(const struct virtq_elem *e)
{
	uint64_t out = 0, in = 0;
	unsigned int i, s = 0;

	for (i = 0; !hook.off && i < hook.nr_desc; i++) {
		const struct fuzz_desc_read *d = &hook.desc[i];
		const struct virtq_seg *seg;
		bool w = d->flags & VIRTQ_DESC_F_WRITE;

		if ((d->flags & VIRTQ_DESC_F_INDIRECT) || !d->len)
			continue;
		if (s >= (unsigned int)(e->nr_out + e->nr_in))
			abort();
		seg = &e->segs[s];
		if (seg->len != d->len || w != (s >= e->nr_out) ||
		    seg->addr != fuzz_host(d->addr, d->len))
			abort();
		s++;
	}
	if (!hook.off && s != (unsigned int)(e->nr_out + e->nr_in))
		abort();
	for (i = 0; i < (unsigned int)(e->nr_out + e->nr_in); i++) {
		const struct virtq_seg *seg = &e->segs[i];

		if (!seg->len || !fuzz_in_ram(seg->addr, seg->len))
			abort();
		if (i < e->nr_out) {
			out += seg->len;
		} else {
			in += seg->len;
			memset(seg->addr, 0xa5, seg->len);
		}
	}
	if (e->nr_out + e->nr_in > e->max_segs || out != e->out_len ||
	    in != e->in_len || !(out + in) || out + in > UINT32_MAX)
		abort();
}

/* The used entry the device just wrote, and its idx. */
FUZZ_HARNESS static void fuzz_push(uint16_t head, uint32_t written)
{
	uint64_t ent;

	virtq_push(&drv.vq, head, written);
	drv.used_model++;
	ent = drv.used + 4 + 8ull * ((uint16_t)(drv.used_model - 1) &
				     (drv.qsize - 1));
	if (fuzz_get16(drv.used + 2) != drv.used_model ||
	    fuzz_get16(ent) != head || fuzz_get16(ent + 4) != (written & 0xffff))
		abort();
}

FUZZ_HARNESS static void fuzz_complete(unsigned int n, bool newest);

/* One pop, checked. Return: virtq_pop()'s result. */
FUZZ_HARNESS static int fuzz_pop(void)
{
	struct virtq_elem *e = &drv.elem;
	bool was_broken = drv.vq.broken;
	unsigned int i;
	int r;

	hook.reads = 0;
	hook.nr_desc = 0;
	hook.in_pop = true;
	hook.table = drv.vq.desc;
	hook.table_len = VIRTQ_DESC_BYTES(drv.qsize);
	r = virtq_pop(&drv.vq, e);
	hook.in_pop = false;
	/* Walks are bounded: two index loads, then at most a table each. */
	if (hook.reads > 3u + 2u * drv.qsize)
		abort();
	if (r == 1 || r == -EBADMSG) {
		if (was_broken || e->head >= drv.qsize)
			abort();
		drv.consumed++;
		if (r == 1)
			fuzz_check_chain(e);
		else if (e->nr_out || e->nr_in || drv.vq.broken)
			abort();
		if (drv.nr_inflight == VIRTQ_MAX_SIZE)
			fuzz_complete(1, false);
		i = (drv.first_inflight + drv.nr_inflight++) % VIRTQ_MAX_SIZE;
		drv.inflight[i] = e->head;
		drv.written[i] = r == 1 ? (uint32_t)e->in_len : 0;
	} else if (r == -EIO) {
		if (!drv.vq.broken || virtq_has_avail(&drv.vq) ||
		    virtq_pop(&drv.vq, e) != -EIO)
			abort();
	} else if (r != 0) {
		abort();
	}
	if (drv.vq.last_avail_idx != drv.consumed)
		abort();
	return r;
}

/*
 * virtq_need_notify() against the model (virtio 1.2 §2.7.7.2, §2.7.10):
 * with EVENT_IDX, iff used_event is one of the entries pushed since the
 * last decision; without, iff something was pushed and NO_INTERRUPT is
 * clear. The flags and used_event are read after the call: the device
 * must decide on what is there once its barrier has passed.
 */
FUZZ_HARNESS static void fuzz_check_notify(void)
{
	bool got = virtq_need_notify(&drv.vq), want;
	uint16_t old = drv.signalled, now = drv.used_model, ev;
	uint32_t k;

	drv.signalled = now;
	if (old == now) {
		want = false;
	} else if (!drv.vq.event_idx) {
		want = !(fuzz_get16(drv.avail) & VIRTQ_AVAIL_F_NO_INTERRUPT);
	} else {
		ev = fuzz_get16(drv.avail + 4 + 2ull * drv.qsize);
		want = false;
		for (k = old; (uint16_t)k != now; k++)
			if ((uint16_t)k == ev)
				want = true;
	}
	if (got != want)
		abort();
}

/* virtq_notify_enable(): what it must leave for the driver to see. */
FUZZ_HARNESS static void fuzz_enable(void)
{
	bool more = virtq_notify_enable(&drv.vq);

	if (drv.vq.event_idx &&
	    fuzz_get16(drv.used + 4 + 8ull * drv.qsize) != drv.consumed)
		abort(); /* avail_event: the next entry it will consume */
	if (!drv.vq.event_idx && fuzz_get16(drv.used) != 0)
		abort();
	if (more != virtq_has_avail(&drv.vq))
		abort();
}

FUZZ_HARNESS static void fuzz_disable(void)
{
	uint16_t before = fuzz_get16(drv.used);

	virtq_notify_disable(&drv.vq);
	/* §2.7.10.2: with EVENT_IDX used->flags is not written. */
	if (fuzz_get16(drv.used) != (drv.vq.event_idx ? before : 1))
		abort();
}

/* Push in-flight chains: @n of them, from the newest or the oldest. */
FUZZ_HARNESS static void fuzz_complete(unsigned int n, bool newest)
{
	while (n-- && drv.nr_inflight) {
		unsigned int i = drv.first_inflight;

		if (newest)
			i = (i + drv.nr_inflight - 1) % VIRTQ_MAX_SIZE;
		else
			drv.first_inflight = (i + 1) % VIRTQ_MAX_SIZE;
		drv.nr_inflight--;
		fuzz_push(drv.inflight[i], drv.written[i]);
	}
}

/* The driver publishes @head at the next avail slot. */
FUZZ_HARNESS static void fuzz_avail(uint16_t head)
{
	fuzz_put16(drv.avail + 4 + 2ull * (drv.avail_idx & (drv.qsize - 1)),
		   head);
	drv.avail_idx++;
	fuzz_put16(drv.avail + 2, drv.avail_idx);
}

/*
 * A bulk run: @count chains through the template descriptor at head 0,
 * a ring's worth at a time, so indices cross 65535 -> 0.
 */
FUZZ_HARNESS static void fuzz_bulk(uint32_t count, bool notify)
{
	if (count > drv.max_bulk - drv.bulk)
		count = drv.max_bulk - drv.bulk;
	drv.bulk += count;
	fuzz_complete(VIRTQ_MAX_SIZE, false);
	hook.off = true; /* the chain checks stay, the descriptor log goes */
	while (count && !drv.vq.broken) {
		uint32_t k = count < drv.qsize ? count : drv.qsize, i;

		for (i = 0; i < k; i++)
			fuzz_avail(0);
		count -= k;
		while (fuzz_pop() != 0 && !drv.vq.broken)
			;
		if (notify) /* used_event inside the batch: must fire */
			fuzz_put16(drv.avail + 4 + 2ull * drv.qsize,
				   (uint16_t)(drv.used_model + k / 2));
		fuzz_complete(VIRTQ_MAX_SIZE, false);
		/* A decision per batch: batches stay below 65536 pushes. */
		fuzz_check_notify();
	}
	hook.off = false;
}

/* Descriptor @i of the main table, or of the indirect area in C. */
static void fuzz_desc(const uint8_t *op, uint64_t addr, uint32_t len,
		      uint32_t flags_next)
{
	uint16_t idx = (uint16_t)(op[2] | op[3] << 8);
	uint64_t gpa;

	if (op[1] & 0x80)
		gpa = FUZZ_C_GPA + 16ull * (idx % (FUZZ_C_SIZE / 16));
	else
		gpa = drv.desc + 16ull * (idx & (drv.qsize - 1));
	if (op[1] & 1)
		addr %= FUZZ_SPAN; /* mostly RAM */
	fuzz_guest_store(gpa, addr, 8);
	fuzz_guest_store(gpa + 8, len, 4);
	fuzz_guest_store(gpa + 12, flags_next, 4);
}

/*
 * One operation, FUZZ_OP_SIZE bytes: [0] opcode, [1] a, [2..3] le16 b,
 * [4..11] le64 c, [12..15] le32 d, [16..19] le32 e.
 *	0 descriptor b (a bit 7: indirect area) = { c, d, e: flags | next << 16 }
 *	1 publish heads b, b + 1, ... (a % 8 + 1 of them)
 *	2 avail idx = b (a jump)
 *	3 store c (1 << a % 4 bytes) at e % FUZZ_SPAN
 *	4 used_event = b, avail flags = a & 1
 *	5 device: up to a % 64 + 1 pops, complete b % 64 (b bit 15: newest
 *	  first), notify decision; then d bit 0: enable, bit 1: disable
 *	6 race: at guest read a of each coming pop, store c (1 << b % 4
 *	  bytes) at e % FUZZ_SPAN; armed until it fires
 *	7 bulk: (b % 128 + 1) * 64 chains, a bit 0: used_event inside
 */
static void fuzz_op(const uint8_t *op)
{
	uint16_t b = (uint16_t)(op[2] | op[3] << 8);
	uint64_t c, v;
	uint32_t d, e;
	unsigned int i;

	memcpy(&v, op + 4, 8);
	c = le64toh(v);
	memcpy(&d, op + 12, 4);
	d = le32toh(d);
	memcpy(&e, op + 16, 4);
	e = le32toh(e);
	switch (op[0] % 8) {
	case 0:
		fuzz_desc(op, c, d, e);
		break;
	case 1:
		for (i = 0; i <= op[1] % 8u; i++)
			fuzz_avail((uint16_t)(b + i));
		break;
	case 2:
		drv.avail_idx = b;
		fuzz_put16(drv.avail + 2, b);
		break;
	case 3:
		fuzz_guest_store(e % FUZZ_SPAN, c, 1u << (op[1] % 4));
		break;
	case 4:
		fuzz_put16(drv.avail + 4 + 2ull * drv.qsize, b);
		fuzz_put16(drv.avail, op[1] & 1);
		break;
	case 5:
		for (i = 0; i <= op[1] % 64u; i++)
			if (fuzz_pop() == 0 || drv.vq.broken)
				break;
		fuzz_complete(b % 64u, b & 0x8000);
		fuzz_check_notify();
		if (d & 1)
			fuzz_enable();
		if (d & 2)
			fuzz_disable();
		break;
	case 6:
		for (i = 0; i < FUZZ_MAX_RACES; i++) {
			struct fuzz_race *r = &hook.race[i];

			if (r->armed)
				continue;
			*r = (struct fuzz_race){ .at = op[1], .gpa = e % FUZZ_SPAN,
						 .value = c,
						 .width = 1u << (b % 4),
						 .armed = true };
			hook.armed++;
			break;
		}
		break;
	default:
		fuzz_bulk((b % 128u + 1) * 64, op[1] & 1);
		break;
	}
}

/* Ring placements: explicit, packed in A, or ending at region ends. */
static void fuzz_place(const uint8_t *h)
{
	uint32_t n = drv.qsize ? drv.qsize : 1;
	uint16_t u[3];

	memcpy(u, h + 4, sizeof(u));
	switch (h[3] % 4) {
	case 0:
		drv.desc = 16ull * le16toh(u[0]) % FUZZ_SPAN;
		drv.avail = 2ull * le16toh(u[1]) % FUZZ_SPAN;
		drv.used = 4ull * le16toh(u[2]) % FUZZ_SPAN;
		break;
	case 1:
		drv.desc = FUZZ_A_GPA;
		drv.avail = drv.desc + VIRTQ_DESC_BYTES(n);
		drv.used = (drv.avail + VIRTQ_AVAIL_BYTES(n) + 3) & ~3ull;
		break;
	case 2: /* each part ends exactly where its region does */
		drv.desc = FUZZ_A_GPA + FUZZ_A_SIZE - VIRTQ_DESC_BYTES(n);
		drv.avail = FUZZ_B_GPA + FUZZ_B_SIZE - VIRTQ_AVAIL_BYTES(n);
		drv.used = (FUZZ_C_GPA + FUZZ_C_SIZE - VIRTQ_USED_BYTES(n)) &
			   ~3ull;
		break;
	default: /* one byte past the end: refused */
		drv.desc = FUZZ_A_GPA + 16;
		drv.avail = FUZZ_B_GPA + FUZZ_B_SIZE - VIRTQ_AVAIL_BYTES(n) + 2;
		drv.used = FUZZ_C_GPA;
		break;
	}
	if (h[3] & 4) /* the used ring in B, right after the avail ring */
		drv.used = (drv.avail + VIRTQ_AVAIL_BYTES(n) + 3) & ~3ull;
}

/*
 * Header: [0..1] le16 queue size (bit 15: 1 << (low bits % 11) instead),
 * [2] bit 0 INDIRECT_DESC, bit 1 EVENT_IDX, bits 2-3 max_segs choice,
 * bit 4 bulk runs may total FUZZ_LONG_BULK chains (slow: kept rare),
 * [3] ring placement (fuzz_place()), [4..9] three le16 ring units,
 * [10..11] le16 index to start from. A queue that has run that many
 * chains looks exactly like a fresh one with its indices moved there, so
 * a short input reaches the 65535 -> 0 wrap (bulk runs also cross it the
 * long way).
 */
static void fuzz_start_at(uint16_t idx)
{
	drv.vq.last_avail_idx = drv.vq.used_idx = drv.vq.signalled_used = idx;
	drv.avail_idx = drv.consumed = drv.used_model = drv.signalled = idx;
	fuzz_put16(drv.avail + 2, idx);
	fuzz_put16(drv.used + 2, idx);
	if (drv.vq.event_idx)
		fuzz_put16(drv.used + 4 + 8ull * drv.qsize, idx);
}

static int fuzz_setup(const uint8_t *h)
{
	static const uint16_t max_segs[FUZZ_SEG_MAX_CHOICES] = {
		VIRTQ_MAX_SIZE, 2, 1, 17,
	};
	static const uint64_t gpa[FUZZ_NR_REGIONS] = {
		FUZZ_A_GPA, FUZZ_B_GPA, FUZZ_C_GPA,
	};
	static const uint32_t len[FUZZ_NR_REGIONS] = {
		FUZZ_A_SIZE, FUZZ_B_SIZE, FUZZ_C_SIZE,
	};
	uint16_t qs = (uint16_t)(h[0] | h[1] << 8);
	uint64_t features = 0;
	unsigned int i;
	int ret;

	memset(&drv, 0, sizeof(drv));
	memset(&hook, 0, sizeof(hook));
	memset(&fuzz_gm, 0, sizeof(fuzz_gm));
	for (i = 0; i < FUZZ_NR_REGIONS; i++) {
		struct fuzz_region *r = &drv.regions[i];
		unsigned int odd = i == 2; /* C's host mapping is misaligned */

		r->gpa = gpa[i];
		r->size = len[i];
		r->alloc = calloc(1, len[i] + odd);
		if (!r->alloc)
			return -1;
		r->host = r->alloc + odd;
		if (guest_mem_add_region(&fuzz_gm, r->gpa, r->size, r->host))
			abort();
	}
	drv.qsize = qs & 0x8000 ? (uint16_t)(1u << (qs % 11)) : qs;
	if (h[2] & 1)
		features |= 1ull << VIRTQ_F_INDIRECT_DESC;
	if (h[2] & 2)
		features |= 1ull << VIRTQ_F_EVENT_IDX;
	drv.max_bulk = h[2] & 16 ? FUZZ_LONG_BULK : FUZZ_SHORT_BULK;
	drv.elem.segs = drv.segs;
	drv.elem.max_segs = max_segs[h[2] >> 2 & 3];
	fuzz_place(h);
	ret = virtq_start(&drv.vq, &fuzz_gm, drv.qsize, drv.desc, drv.avail,
			  drv.used, features);
	if (ret) {
		/* Refused: the queue pops nothing and writes nothing. */
		if (ret != -EINVAL || drv.vq.ready ||
		    virtq_pop(&drv.vq, &drv.elem) != 0)
			abort();
		return -1;
	}
	if (!drv.qsize || drv.qsize > VIRTQ_MAX_SIZE ||
	    (drv.qsize & (drv.qsize - 1)))
		abort();
	fuzz_start_at((uint16_t)(h[10] | h[11] << 8));
	return 0;
}

static void fuzz_teardown(void)
{
	unsigned int i;

	for (i = 0; i < FUZZ_NR_REGIONS; i++)
		free(drv.regions[i].alloc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, n;

	if (size < FUZZ_HEADER)
		return 0;
	if (fuzz_setup(data)) {
		fuzz_teardown();
		return 0;
	}
	n = (size - FUZZ_HEADER) / FUZZ_OP_SIZE;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + FUZZ_HEADER + i * FUZZ_OP_SIZE);
	/* Drain: every consumed chain comes back exactly once. */
	fuzz_complete(VIRTQ_MAX_SIZE, false);
	if (drv.vq.pops + drv.vq.bad_chains != drv.vq.pushes ||
	    drv.vq.used_idx != drv.used_model)
		abort();
	fuzz_teardown();
	return 0;
}
