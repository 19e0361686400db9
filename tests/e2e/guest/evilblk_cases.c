// SPDX-License-Identifier: Apache-2.0
/*
 * evilblk's cases against the data disk: malformed descriptor chains
 * (virtio 1.2 §2.7.5-§2.7.7), broken ring indices (§2.7.13), queue set-up
 * the driver must not do (§4.2.2.2, §4.1.4.3), stray notifies, register
 * accesses of the wrong width, MSI-X vectors out of range (§4.1.5.1.2)
 * and requests beyond the capacity (§5.2.6). Each returns whether the
 * device behaved; evilblk.c checks memory and a clean request afterwards.
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

/* The ring itself is broken: only NEEDS_RESET is right. */
static bool expect_reset(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_out o;

	ev_kick(c);
	ev_wait(c, 1, WAIT_MS, &o);
	if (o.needs_reset) {
		snprintf(why, n, "NEEDS_RESET");
		return true;
	}
	snprintf(why, n, "no NEEDS_RESET (%d used entries)", o.nused);
	return false;
}

static bool avail_idx_jump(struct ev_ctx *c, char *why, size_t n)
{
	volatile uint16_t *av = (uint16_t *)(c->base + A_AVAIL);

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_rw(c, 0, 0, BLK_T_IN, 0, 512);
	av[1] = (uint16_t)(c->qs + 3);
	return expect_reset(c, why, n);
}

static bool avail_head_out_of_range(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_post(c, (uint16_t)(c->qs + 3));
	return expect_reset(c, why, n);
}

/* One head in the avail ring twice: whatever the device does, it lives. */
static bool same_head_twice(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_out o;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_post(c, ev_rw(c, 0, 0, BLK_T_IN, 8, 4096));
	ev_post(c, 0);
	ev_kick(c);
	ev_wait(c, 2, SHORT_MS, &o);
	snprintf(why, n, "%d used entries, status %#x%s", o.nused,
		 ev_stbyte(c, 0), o.needs_reset ? ", NEEDS_RESET" : "");
	return o.needs_reset || o.nused >= 1;
}

/* Queue registers written after DRIVER_OK are ignored (§4.2.2.2). */
static bool queue_regs_after_driver_ok(struct ev_ctx *c, char *why,
				       size_t n)
{
	struct ev_dev *d = c->d;
	uint16_t q;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	for (q = 0; q <= 7; q += 7) {
		ev_queue_sel(d, q);
		ev_queue_size(d, 2);
		ev_queue_addrs(d, ev_pa(c, C_WRITE), ev_pa(c, C_WRITE + 4096),
			       ev_pa(c, C_WRITE + 8192));
		ev_queue_enable(d, 0);
	}
	ev_queue_sel(d, 0);
	if (d->t == EV_PCI &&
	    ev_rd(d, d->common + PCI_C_Q_DESC, 4) != (uint32_t)ev_pa(c, A_DESC)) {
		snprintf(why, n, "queue_desc changed after DRIVER_OK");
		return false;
	}
	if (!ev_roundtrip(c, 4000, 0x3c, why, n))
		return false;
	snprintf(why, n, "ignored; the original rings still serve");
	return true;
}

/* Queue size @size at DRIVER_OK: refused, or the queue stays unused. */
static bool queue_size(struct ev_ctx *c, uint32_t size, char *why, size_t n)
{
	struct ev_out o;
	uint8_t s;

	s = ev_setup_raw(c, size, ev_pa(c, A_DESC), ev_pa(c, A_AVAIL),
			 ev_pa(c, A_USED));
	if (s & EV_S_NEEDS_RESET) {
		snprintf(why, n, "size %u: NEEDS_RESET at DRIVER_OK", size);
		return true;
	}
	if (!(s & EV_S_DRIVER_OK) || !ev_queue_ready(c->d)) {
		snprintf(why, n, "size %u: queue not started (status %#x)",
			 size, s);
		return true;
	}
	ev_post(c, ev_rw(c, 0, 0, BLK_T_IN, 0, 512));
	ev_kick(c);
	ev_wait(c, 1, SHORT_MS, &o);
	if (o.needs_reset) {
		snprintf(why, n, "size %u: NEEDS_RESET at the first request",
			 size);
		return true;
	}
	snprintf(why, n, "size %u (QueueNumMax %u) ACCEPTED: %d request(s) "
		 "served", size, c->d->qmax, o.nused);
	return false;
}

static bool queue_size_zero(struct ev_ctx *c, char *why, size_t n)
{
	return queue_size(c, 0, why, n);
}

static bool queue_size_not_pow2(struct ev_ctx *c, char *why, size_t n)
{
	return queue_size(c, c->d->qmax - 3u, why, n);
}

static bool queue_size_above_max(struct ev_ctx *c, char *why, size_t n)
{
	return queue_size(c, 2u * c->d->qmax, why, n);
}

/* Rings the device cannot use: refused at DRIVER_OK. */
static bool bad_rings(struct ev_ctx *c, uint64_t desc, uint64_t avail,
		      uint64_t used, char *why, size_t n)
{
	uint8_t s = ev_setup_raw(c, qs_of(c), desc, avail, used);

	if (s & EV_S_NEEDS_RESET) {
		snprintf(why, n, "NEEDS_RESET at DRIVER_OK");
		return true;
	}
	ev_post(c, ev_rw(c, 0, 0, BLK_T_IN, 0, 512));
	return expect_reset(c, why, n);
}

static bool ring_outside_ram(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, c->ram_end - 64, ev_pa(c, A_AVAIL),
			 ev_pa(c, A_USED), why, n);
}

static bool ring_misaligned(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC) + 8, ev_pa(c, A_AVAIL),
			 ev_pa(c, A_USED), why, n);
}

/* The used ring on the device's own registers, the avail ring past RAM. */
static bool used_ring_on_registers(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC), ev_pa(c, A_AVAIL),
			 c->d->regs_pa, why, n);
}

static bool avail_ring_beyond_ram(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC), c->ram_end - 2,
			 ev_pa(c, A_USED), why, n);
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

/* FEATURES_OK for features never offered, DRIVER_OK without it (§3.1.1). */
static bool features_not_offered(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint8_t s1, s2;

	ev_reset(d);
	ev_set_status(d, EV_S_ACK | EV_S_DRIVER);
	ev_set_features(d, ~0ULL);
	ev_set_status(d, EV_S_ACK | EV_S_DRIVER | EV_S_FEATURES_OK);
	s1 = ev_status(d);
	ev_set_status(d, EV_S_ACK | EV_S_DRIVER | EV_S_DRIVER_OK);
	s2 = ev_status(d);
	snprintf(why, n, "status %#x after FEATURES_OK, %#x after DRIVER_OK",
		 s1, s2);
	return !(s1 & EV_S_FEATURES_OK) && !(s2 & EV_S_DRIVER_OK);
}

/* The read-only configuration fields ignore writes (§5.2.4). */
static bool config_write(struct ev_ctx *c, char *why, size_t n)
{
	uint64_t cap;
	uint32_t off;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	for (off = 0; off < 0x40; off += 4)
		ev_cfg_wr(c->d, off, 0xffffffff, 4);
	ev_cfg_wr(c->d, 0, 0, 8);
	ev_cfg_wr(c->d, 0x3ff, 0xff, 1);
	cap = ev_cfg_rd(c->d, 0, 4) | ev_cfg_rd(c->d, 4, 4) << 32;
	if (cap != c->d->capacity) {
		snprintf(why, n, "capacity now reads %llu",
			 (unsigned long long)cap);
		return false;
	}
	snprintf(why, n, "capacity still %llu", (unsigned long long)cap);
	return ev_roundtrip(c, 4032, 0x7a, why + strlen(why), n - strlen(why));
}

/* Notifies for queues that do not exist change nothing. */
static bool notify_missing_queue(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint32_t nq = d->num_queues;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_snap(c);
	if (d->t == EV_MMIO) {
		ev_wr(d, MMIO_QUEUE_NOTIFY, nq, 4);
		ev_wr(d, MMIO_QUEUE_NOTIFY, 0xffff, 4);
		ev_wr(d, MMIO_QUEUE_NOTIFY, 0x80000000u, 4);
	} else {
		ev_wr(d, d->notify + nq * d->notify_mult, nq, 2);
		ev_wr(d, d->notify + 0xffc, 0xffff, 4);
		ev_wr(d, d->notify + 1, 0, 2);
	}
	if (ev_status(d) & EV_S_NEEDS_RESET) {
		snprintf(why, n, "NEEDS_RESET after a stray notify");
		return false;
	}
	if (!ev_roundtrip(c, 4008, 0x4d, why, n))
		return false;
	snprintf(why, n, "ignored");
	return true;
}

/* Accesses the transport does not define: reads 0, writes dropped. */
static bool odd_width_access(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint64_t bad = 0;
	uint8_t s;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	if (d->t == EV_MMIO) {
		ev_wr(d, MMIO_STATUS, 0, 1);
		ev_wr(d, MMIO_STATUS, 0, 2);
		ev_wr(d, MMIO_STATUS + 1, 0, 4);
		ev_wr(d, MMIO_QUEUE_SEL, 0x0101010101010101ULL, 8);
		bad |= ev_rd(d, MMIO_MAGIC, 1) | ev_rd(d, MMIO_MAGIC, 2) |
		       ev_rd(d, MMIO_MAGIC + 1, 4) | ev_rd(d, MMIO_MAGIC, 8);
		ev_rd(d, 0xffc, 4);
		ev_wr(d, 0xffc, 0xffffffff, 4);
	} else {
		ev_wr(d, d->common + PCI_C_STATUS, 0, 2);
		ev_wr(d, d->common + PCI_C_STATUS - 1, 0, 4);
		ev_wr(d, d->common + 0x04, 0, 8);
		bad |= ev_rd(d, d->common + 0x04, 8) |
		       ev_rd(d, d->common + 0x13, 4) |
		       ev_rd(d, d->common + 0x36, 4);
		ev_wr(d, d->isr, 0xff, 1);
		ev_rd(d, d->isr + 0xffe, 4);
		ev_wr(d, d->devcfg + 0xffe, 0xffffffff, 4);
	}
	s = ev_status(d);
	if (bad || (s & (EV_S_DRIVER_OK | EV_S_NEEDS_RESET)) != EV_S_DRIVER_OK) {
		snprintf(why, n, "undefined accesses read %#llx, status %#x",
			 (unsigned long long)bad, s);
		return false;
	}
	if (ev_queue_ready(d) != 1 || !ev_roundtrip(c, 4016, 0x5e, why, n)) {
		snprintf(why + strlen(why), n - strlen(why), " (queue lost)");
		return false;
	}
	snprintf(why, n, "reads 0, writes dropped, status %#x", s);
	return true;
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
	{ "avail_idx_jump", avail_idx_jump, false },
	{ "avail_head_out_of_range", avail_head_out_of_range, false },
	{ "same_head_twice", same_head_twice, false },
	{ "queue_regs_after_driver_ok", queue_regs_after_driver_ok, false },
	{ "queue_size_zero", queue_size_zero, false },
	{ "queue_size_not_pow2", queue_size_not_pow2, false },
	{ "queue_size_above_max", queue_size_above_max, false },
	{ "ring_outside_ram", ring_outside_ram, false },
	{ "ring_misaligned", ring_misaligned, false },
	{ "notify_missing_queue", notify_missing_queue, false },
	{ "odd_width_access", odd_width_access, false },
	{ "used_ring_on_registers", used_ring_on_registers, false },
	{ "avail_ring_beyond_ram", avail_ring_beyond_ram, false },
	{ "indirect_too_long", indirect_too_long, false },
	{ "features_not_offered", features_not_offered, false },
	{ "config_write", config_write, false },
	{ "msix_out_of_range", ev_msix_out_of_range, true },
	{ "bar_into_ram", ev_bar_into_ram, true },
	{ "bar_onto_other_device", ev_bar_onto_other, true },
	{ "sector_beyond_capacity", sector_beyond_capacity, false },
};
const unsigned int ev_nr_cases = sizeof(ev_cases) / sizeof(ev_cases[0]);
