// SPDX-License-Identifier: Apache-2.0
/*
 * evilblk's cases on the ring indices and the transport registers: avail
 * idx and heads out of range (virtio 1.2 §2.7.13), queue set-up the
 * driver must not do (§4.2.2.2, §4.1.4.3), rings the device cannot use,
 * unoffered features (§3.1.1), config writes, stray notifies and register
 * accesses of the wrong width or alignment.
 */
#include <stdio.h>
#include <string.h>

#include "evilblk.h"

static uint16_t qs_of(struct ev_ctx *c)
{
	return c->d->qmax < 16 ? c->d->qmax : 16;
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

bool evq_avail_idx_jump(struct ev_ctx *c, char *why, size_t n)
{
	volatile uint16_t *av = (uint16_t *)(c->base + A_AVAIL);

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_rw(c, 0, 0, BLK_T_IN, 0, 512);
	av[1] = (uint16_t)(c->qs + 3);
	return expect_reset(c, why, n);
}

bool evq_avail_head_out_of_range(struct ev_ctx *c, char *why, size_t n)
{
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_post(c, (uint16_t)(c->qs + 3));
	return expect_reset(c, why, n);
}

/* One head in the avail ring twice: whatever the device does, it lives. */
bool evq_same_head_twice(struct ev_ctx *c, char *why, size_t n)
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
bool evq_queue_regs_after_driver_ok(struct ev_ctx *c, char *why,
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

bool evq_queue_size_zero(struct ev_ctx *c, char *why, size_t n)
{
	return queue_size(c, 0, why, n);
}

bool evq_queue_size_not_pow2(struct ev_ctx *c, char *why, size_t n)
{
	return queue_size(c, c->d->qmax - 3u, why, n);
}

bool evq_queue_size_above_max(struct ev_ctx *c, char *why, size_t n)
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

bool evq_ring_outside_ram(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, c->ram_end - 64, ev_pa(c, A_AVAIL),
			 ev_pa(c, A_USED), why, n);
}

bool evq_ring_misaligned(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC) + 8, ev_pa(c, A_AVAIL),
			 ev_pa(c, A_USED), why, n);
}

/* The used ring on the device's own registers, the avail ring past RAM. */
bool evq_used_ring_on_registers(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC), ev_pa(c, A_AVAIL),
			 c->d->regs_pa, why, n);
}

bool evq_avail_ring_beyond_ram(struct ev_ctx *c, char *why, size_t n)
{
	return bad_rings(c, ev_pa(c, A_DESC), c->ram_end - 2,
			 ev_pa(c, A_USED), why, n);
}

/* FEATURES_OK for features never offered, DRIVER_OK without it (§3.1.1). */
bool evq_features_not_offered(struct ev_ctx *c, char *why, size_t n)
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
bool evq_config_write(struct ev_ctx *c, char *why, size_t n)
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
bool evq_notify_missing_queue(struct ev_ctx *c, char *why, size_t n)
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
bool evq_odd_width_access(struct ev_ctx *c, char *why, size_t n)
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
