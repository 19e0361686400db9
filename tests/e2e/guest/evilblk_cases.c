// SPDX-License-Identifier: Apache-2.0
/*
 * evilblk's cases against the data disk: malformed descriptor chains
 * (virtio 1.2 §2.7.5-§2.7.7) and requests beyond the capacity (§5.2.6),
 * and the table of every data-disk case (the others are in
 * evilblk_queue.c and evilblk_pci.c). Each returns whether the device
 * behaved; evilblk.c checks memory and a clean request afterwards.
 */
#include <stdio.h>
#include <string.h>

#include "evilblk.h"


static uint16_t qs_of(struct ev_ctx *c)
{
	return c->d->qmax < 16 ? c->d->qmax : 16;
}

/* A device-writable data buffer of @slot the device may fill. */
static uint64_t rbuf(struct ev_ctx *c, unsigned int slot, uint32_t len)
{
	size_t off = A_BUF + (size_t)slot * A_BUF_STRIDE;

	ev_allow(c, off, len < A_BUF_LEN ? len : A_BUF_LEN);
	return ev_pa(c, off);
}

static uint64_t itable(struct ev_ctx *c, unsigned int t)
{
	return ev_pa(c, A_IND + t * A_IND_STRIDE);
}

/* Post chain @head, kick, and expect it refused (status slot @slot). */
static bool refused1(struct ev_ctx *c, uint16_t head, unsigned int slot,
		     char *why, size_t n)
{
	struct ev_out o;

	ev_post(c, head);
	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	return ev_refused(c, &o, head, slot, why, n);
}

/* hdr -> data -> status, each field given: the base of most cases. */
static void chain3(struct ev_ctx *c, uint64_t data, uint32_t dlen,
		   uint16_t dflags, uint32_t slen, uint16_t snext_flags,
		   uint16_t snext)
{
	ev_desc(c, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_desc(c, 1, data, dlen, dflags, 2);
	ev_desc(c, 2, ev_st(c, 0), slen, VD_WRITE | snext_flags, snext);
}

static bool loop_direct(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 1, VD_NEXT, 0);
	return refused1(c, 0, 0, why, n);
}

static bool loop_indirect(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_idesc(c, 0, 1, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 2);
	ev_idesc(c, 0, 2, ev_st(c, 0), 1, VD_NEXT | VD_WRITE, 0);
	ev_desc(c, 0, itable(c, 0), 48, VD_INDIRECT, 0);
	return refused1(c, 0, 0, why, n);
}

static bool next_out_of_range(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 1, 0, 0);
	ev_desc(c, 1, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE,
		(uint16_t)(c->qs + 7));
	return refused1(c, 0, 0, why, n);
}

static bool indirect_next_out_of_range(struct ev_ctx *c, char *why,
				       size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_idesc(c, 0, 1, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 9);
	ev_idesc(c, 0, 2, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_desc(c, 0, itable(c, 0), 48, VD_INDIRECT, 0);
	return refused1(c, 0, 0, why, n);
}

/* A device-writable buffer at @pa: must never be written. */
static bool bad_buffer(struct ev_ctx *c, uint64_t pa, uint32_t len,
		       char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, pa, len, VD_NEXT | VD_WRITE, 1, 0, 0);
	return refused1(c, 0, 0, why, n);
}

static bool addr_beyond_ram(struct ev_ctx *c, char *why, size_t n)
{
	return bad_buffer(c, c->ram_end - 256, 512, why, n);
}

static bool addr_mmio_hole(struct ev_ctx *c, char *why, size_t n)
{
	return bad_buffer(c, c->d->regs_pa, 4096, why, n);
}

static bool addr_wrap(struct ev_ctx *c, char *why, size_t n)
{
	return bad_buffer(c, 0xfffffffffffff000ULL, 0x2000, why, n);
}

static bool len_huge(struct ev_ctx *c, char *why, size_t n)
{
	return bad_buffer(c, rbuf(c, 0, A_BUF_LEN), 0xfffffe00u, why, n);
}

static bool indirect_addr_beyond_ram(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_desc(c, 0, c->ram_end - 16, 48, VD_INDIRECT, 0);
	return refused1(c, 0, 0, why, n);
}

/* An empty data descriptor: refused, or a no-op read that moves nothing. */
static bool len_zero_data(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_out o;
	uint8_t st;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, rbuf(c, 0, 0), 0, VD_NEXT | VD_WRITE, 1, 0, 0);
	ev_post(c, 0);
	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	st = ev_stbyte(c, 0);
	if (o.nused == 1 && o.id[0] == 0 && st == BLK_S_OK && o.len[0] == 1) {
		snprintf(why, n, "no-op read: status OK, used len 1");
		return true;
	}
	return ev_refused(c, &o, 0, 0, why, n);
}

/*
 * A zero-length status descriptor adds no byte, so the last writable byte
 * is the data buffer's last: the device may report through it (511 data
 * bytes then fail the 512-byte multiple check), or refuse the chain.
 */
static bool len_zero_status(struct ev_ctx *c, char *why, size_t n)
{
	volatile uint8_t *last = c->base + A_BUF + 511;
	struct ev_out o;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 0, 0, 0);
	ev_post(c, 0);
	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	if (o.nused == 1 && o.id[0] == 0 && o.len[0] == 1 &&
	    ev_stbyte(c, 0) == EV_CANARY &&
	    (*last == BLK_S_IOERR || *last == BLK_S_UNSUPP)) {
		snprintf(why, n, "status %#x in the data buffer's last byte",
			 *last);
		return true;
	}
	return ev_refused(c, &o, 0, 0, why, n);
}

static bool len_zero_all(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	chain3(c, rbuf(c, 0, 0), 0, VD_NEXT | VD_WRITE, 0, 0, 0);
	ev_desc(c, 0, ev_hdr(c, 0, BLK_T_IN, 0), 0, VD_NEXT, 1);
	return refused1(c, 0, 0, why, n);
}

/* A write of nearly all of RAM: far beyond the disk's capacity. */
static bool len_ram_sized_write(struct ev_ctx *c, char *why, size_t n)
{
	uint32_t len = (uint32_t)((c->ram_end - 0x200000) & ~511ULL);

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_desc(c, 0, ev_hdr(c, 0, BLK_T_OUT, 0), 16, VD_NEXT, 1);
	ev_desc(c, 1, 0x100000, len, VD_NEXT, 2);
	ev_desc(c, 2, ev_st(c, 0), 1, VD_WRITE, 0);
	return refused1(c, 0, 0, why, n);
}

static bool indirect_nested(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 1, 0, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 1);
	ev_idesc(c, 1, 1, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_idesc(c, 0, 1, itable(c, 1), 32, VD_INDIRECT, 0);
	ev_desc(c, 0, itable(c, 0), 32, VD_INDIRECT, 0);
	return refused1(c, 0, 0, why, n);
}

static bool indirect_bad_len(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_out o;
	char w2[96];
	bool ok;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_idesc(c, 0, 1, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_desc(c, 0, itable(c, 0), 24, VD_INDIRECT, 0);
	ev_desc(c, 1, itable(c, 0), 0, VD_INDIRECT, 0);
	ev_post(c, 0);
	ev_post(c, 1);
	ev_kick(c);
	ev_wait(c, 2, WAIT_MS, &o);
	ok = ev_refused(c, &o, 0, 0, why, n);
	ok &= ev_refused(c, &o, 1, 0, w2, sizeof(w2));
	strncat(why, "; len 0: ", n - strlen(why) - 1);
	strncat(why, w2, n - strlen(why) - 1);
	return ok;
}

static bool indirect_with_next(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	ev_idesc(c, 0, 1, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE, 2);
	ev_idesc(c, 0, 2, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_desc(c, 0, itable(c, 0), 48, VD_INDIRECT | VD_NEXT, 1);
	ev_desc(c, 1, ev_st(c, 1), 1, VD_WRITE, 0);
	return refused1(c, 0, 0, why, n);
}

/* Device-readable data after the writable status (§2.7.4.2). */
static bool readable_after_writable(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_desc(c, 0, ev_hdr(c, 0, BLK_T_OUT, 0), 16, VD_NEXT, 1);
	ev_desc(c, 1, ev_st(c, 0), 1, VD_NEXT | VD_WRITE, 2);
	ev_desc(c, 2, ev_pa(c, A_BUF), 512, 0, 0);
	return refused1(c, 0, 0, why, n);
}

/* More descriptors in one indirect table than the queue size (§2.7.5.3.1). */
static bool indirect_too_long(struct ev_ctx *c, char *why, size_t n)
{
	uint16_t i, last = (uint16_t)(2 * qs_of(c) + 1);

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_idesc(c, 0, 0, ev_hdr(c, 0, BLK_T_IN, 0), 16, VD_NEXT, 1);
	for (i = 1; i < last; i++)
		ev_idesc(c, 0, i, rbuf(c, 0, 512), 512, VD_NEXT | VD_WRITE,
			 (uint16_t)(i + 1));
	ev_idesc(c, 0, last, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_desc(c, 0, itable(c, 0), 16u * (last + 1u), VD_INDIRECT, 0);
	return refused1(c, 0, 0, why, n);
}

/* A legal request framed oddly: split header, data in uneven pieces. */
static bool odd_framing(struct ev_ctx *c, char *why, size_t n)
{
	uint8_t *w = c->base + A_BUF, *r = c->base + A_BUF + A_BUF_STRIDE;
	uint64_t h = ev_hdr(c, 0, BLK_T_OUT, 4056), st = ev_st(c, 0);
	uint64_t wp = ev_pa(c, A_BUF);
	struct ev_out o;
	unsigned int i;
	int used;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	for (i = 0; i < 4096; i++)
		w[i] = (uint8_t)(i * 7 + 3);
	ev_desc(c, 0, h, 8, VD_NEXT, 1);
	ev_desc(c, 1, h + 8, 8, VD_NEXT, 2);
	ev_desc(c, 2, wp, 1000, VD_NEXT, 3);
	ev_desc(c, 3, wp + 1000, 0, VD_NEXT, 4);
	ev_desc(c, 4, wp + 1000, 3000, VD_NEXT, 5);
	ev_desc(c, 5, wp + 4000, 96, VD_NEXT, 6);
	ev_desc(c, 6, st, 1, VD_WRITE, 0);
	ev_post(c, 0);
	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	used = o.nused;
	/* Requests in flight together have no order (§5.2.6.4): wait. */
	ev_post(c, ev_rw(c, 7, 1, BLK_T_IN, 4056, 4096));
	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	used += o.nused;
	for (i = 0; i < 4096 && w[i] == r[i]; i++)
		;
	if (used != 2 || ev_stbyte(c, 0) != BLK_S_OK ||
	    ev_stbyte(c, 1) != BLK_S_OK || i < 4096) {
		snprintf(why, n, "%d used, status %#x/%#x, data %s at %u",
			 used, ev_stbyte(c, 0), ev_stbyte(c, 1),
			 i < 4096 ? "differs" : "matches", i);
		return false;
	}
	snprintf(why, n, "split header and 1000+0+3000+96 data bytes: "
		 "written and read back");
	return true;
}

/* A read whose buffer is the descriptor table and avail ring themselves. */
static bool read_into_rings(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_out o;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_allow(c, A_DESC, A_USED - A_DESC);
	ev_desc(c, 0, ev_hdr(c, 0, BLK_T_IN, 64), 16, VD_NEXT, 1);
	ev_desc(c, 1, ev_pa(c, A_DESC), A_USED - A_DESC, VD_NEXT | VD_WRITE,
		2);
	ev_desc(c, 2, ev_st(c, 0), 1, VD_WRITE, 0);
	ev_post(c, 0);
	ev_kick(c);
	ev_wait(c, 1, SHORT_MS, &o);
	snprintf(why, n, "%d used, status %#x%s", o.nused, ev_stbyte(c, 0),
		 o.needs_reset ? ", NEEDS_RESET" : "");
	return o.nused >= 1 || o.needs_reset;
}

/* Past the end, straddling it, and at 2^64-1; the last sector is fine. */
static bool sector_beyond_capacity(struct ev_ctx *c, char *why, size_t n)
{
	uint64_t cap = c->d->capacity;
	struct ev_out o;
	bool ok = true;
	char w[64];
	unsigned int i;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_post(c, ev_rw(c, 0, 0, BLK_T_IN, cap, 512));
	ev_post(c, ev_rw(c, 3, 1, BLK_T_IN, cap - 1, 1024));
	ev_post(c, ev_rw(c, 6, 2, BLK_T_IN, ~0ULL, 512));
	ev_post(c, ev_rw(c, 9, 3, BLK_T_IN, cap - 1, 512));
	ev_kick(c);
	ev_wait(c, 4, WAIT_MS, &o);
	why[0] = 0;
	for (i = 0; i < 3; i++) {
		ok &= ev_refused(c, &o, (uint16_t)(3 * i), i, w, sizeof(w));
		snprintf(why + strlen(why), n - strlen(why), "%s%s",
			 i ? ", " : "", w);
	}
	if (ev_stbyte(c, 3) != BLK_S_OK) {
		snprintf(why + strlen(why), n - strlen(why),
			 "; the last sector failed (%#x)", ev_stbyte(c, 3));
		ok = false;
	}
	return ok;
}

const struct ev_case ev_cases[] = {
	{ "desc_loop_direct", loop_direct, false },
	{ "desc_loop_indirect", loop_indirect, false },
	{ "desc_next_out_of_range", next_out_of_range, false },
	{ "indirect_next_out_of_range", indirect_next_out_of_range, false },
	{ "addr_beyond_ram", addr_beyond_ram, false },
	{ "addr_mmio_hole", addr_mmio_hole, false },
	{ "addr_wrap", addr_wrap, false },
	{ "indirect_addr_beyond_ram", indirect_addr_beyond_ram, false },
	{ "len_zero_data", len_zero_data, false },
	{ "len_zero_status", len_zero_status, false },
	{ "len_zero_all", len_zero_all, false },
	{ "len_huge", len_huge, false },
	{ "len_ram_sized_write", len_ram_sized_write, false },
	{ "indirect_nested", indirect_nested, false },
	{ "indirect_bad_len", indirect_bad_len, false },
	{ "indirect_with_next", indirect_with_next, false },
	{ "readable_after_writable", readable_after_writable, false },
	{ "avail_idx_jump", evq_avail_idx_jump, false },
	{ "avail_head_out_of_range", evq_avail_head_out_of_range, false },
	{ "same_head_twice", evq_same_head_twice, false },
	{ "queue_regs_after_driver_ok", evq_queue_regs_after_driver_ok, false },
	{ "queue_size_zero", evq_queue_size_zero, false },
	{ "queue_size_not_pow2", evq_queue_size_not_pow2, false },
	{ "queue_size_above_max", evq_queue_size_above_max, false },
	{ "ring_outside_ram", evq_ring_outside_ram, false },
	{ "ring_misaligned", evq_ring_misaligned, false },
	{ "notify_missing_queue", evq_notify_missing_queue, false },
	{ "odd_width_access", evq_odd_width_access, false },
	{ "used_ring_on_registers", evq_used_ring_on_registers, false },
	{ "avail_ring_beyond_ram", evq_avail_ring_beyond_ram, false },
	{ "indirect_too_long", indirect_too_long, false },
	{ "features_not_offered", evq_features_not_offered, false },
	{ "config_write", evq_config_write, false },
	{ "msix_out_of_range", ev_msix_out_of_range, true },
	{ "bar_into_ram", ev_bar_into_ram, true },
	{ "bar_onto_other_device", ev_bar_onto_other, true },
	{ "sector_beyond_capacity", sector_beyond_capacity, false },
	{ "odd_framing", odd_framing, false },
	{ "read_into_rings", read_into_rings, false },
	{ "cfg_window", ev_cfg_window, true },
};
const unsigned int ev_nr_cases = sizeof(ev_cases) / sizeof(ev_cases[0]);
