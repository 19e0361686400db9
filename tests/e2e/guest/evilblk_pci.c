// SPDX-License-Identifier: Apache-2.0
/*
 * evilblk's PCI-only cases: MSI-X vectors and table entries beyond the
 * table (virtio 1.2 §4.1.5.1.2), and BAR 0 moved through config space
 * while the device runs: onto guest RAM the program owns and onto another
 * virtio device's BAR (it goes back before the checks that follow), and
 * the VIRTIO_PCI_CAP_PCI_CFG access window (§4.1.4.9) pointed anywhere.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evilblk.h"

#define PCI_BAR0 0x10

static uint16_t qs_of(struct ev_ctx *c)
{
	return c->d->qmax < 16 ? c->d->qmax : 16;
}

/* MSI-X vectors and table entries beyond the table (§4.1.5.1.2). */
bool ev_msix_out_of_range(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint32_t tab = d->msix_table, sz = d->msix_size, e0, v;
	uint64_t qv, cv, pba, past;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	e0 = (uint32_t)ev_rd(d, tab + 8, 4);
	ev_queue_sel(d, 0);
	ev_wr(d, d->common + PCI_C_Q_MSIX, sz + 5, 2);
	qv = ev_rd(d, d->common + PCI_C_Q_MSIX, 2);
	ev_wr(d, d->common + PCI_C_MSIX, 0x7ff, 2);
	cv = ev_rd(d, d->common + PCI_C_MSIX, 2);
	for (v = sz; v < sz + 3 && (v + 1) * 16 <= 0x1000; v++) {
		ev_wr(d, tab + v * 16, 0xfee00000, 4);
		ev_wr(d, tab + v * 16 + 8, 0x4041, 4);
		ev_wr(d, tab + v * 16 + 12, 0, 4);
	}
	ev_wr(d, tab + 255 * 16 + 8, 0x1234, 4);
	past = ev_rd(d, tab + sz * 16 + 8, 4) | ev_rd(d, tab + 255 * 16 + 8, 4);
	ev_wr(d, d->msix_pba, ~0ULL, 8);
	pba = ev_rd(d, d->msix_pba, 8);
	if (qv != PCI_NO_VECTOR || cv != PCI_NO_VECTOR || past || pba ||
	    ev_rd(d, tab + 8, 4) != e0) {
		snprintf(why, n, "queue vector %#llx, config vector %#llx, "
			 "entries past the table %#llx, PBA %#llx",
			 (unsigned long long)qv, (unsigned long long)cv,
			 (unsigned long long)past, (unsigned long long)pba);
		return false;
	}
	if (!ev_roundtrip(c, 4024, 0x6f, why, n))
		return false;
	snprintf(why, n, "vectors read NO_VECTOR, entries past %u read 0, "
		 "PBA read-only", sz);
	return true;
}

/*
 * Move BAR 0 to @to for a while, poke at what is there now, move it
 * back. Return: false when config space could not be written.
 */
static bool bar_visit(struct ev_ctx *c, uint32_t to, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint32_t bar, v;
	bool ok;

	if (!ev_pci_cfg32(d, PCI_BAR0, &bar, false)) {
		snprintf(why, n, "cannot read BAR 0 through sysfs");
		return false;
	}
	v = to | (bar & 0xf);
	ok = ev_pci_cfg32(d, PCI_BAR0, &v, true);
	/* The old window: nothing decodes it now (reads must not hang). */
	(void)ev_rd(d, d->common + PCI_C_NUMQ, 2);
	ev_wr(d, d->notify, 0, 2);
	usleep(100000);
	if (!ev_pci_cfg32(d, PCI_BAR0, &bar, true) || !ok) {
		snprintf(why, n, "cannot write BAR 0 through sysfs");
		return false;
	}
	return true;
}

/* BAR 0 over owned RAM (page C): RAM stays RAM, the device comes back. */
bool ev_bar_into_ram(struct ev_ctx *c, char *why, size_t n)
{
	volatile uint8_t *p = c->base + C_WRITE;

	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_snap(c);
	if (!bar_visit(c, (uint32_t)ev_pa(c, C_WRITE), why, n))
		return false;
	if (p[0x3000] != EV_CANARY) {
		snprintf(why, n, "owned RAM under the moved BAR changed");
		return false;
	}
	if (!ev_alive(c->d) || !ev_roundtrip(c, 4040, 0x8b, why, n)) {
		snprintf(why + strlen(why), n - strlen(why),
			 " (device lost after the BAR came back)");
		return false;
	}
	snprintf(why, n, "BAR 0 at %#llx and back: RAM unchanged, device "
		 "serves", (unsigned long long)ev_pa(c, C_WRITE));
	return true;
}

/* BAR 0 onto another virtio-blk device's BAR 0: both survive. */
bool ev_bar_onto_other(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *peer = c->peer;

	if (!peer || peer->t != EV_PCI) {
		snprintf(why, n, "no second virtio-pci device");
		return false;
	}
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	ev_snap(c);
	if (!bar_visit(c, (uint32_t)peer->regs_pa, why, n))
		return false;
	if (!ev_alive(peer)) {
		snprintf(why, n, "the other device no longer answers");
		return false;
	}
	if (!ev_alive(c->d) || !ev_roundtrip(c, 4048, 0x9c, why, n)) {
		snprintf(why + strlen(why), n - strlen(why),
			 " (device lost after the BAR came back)");
		return false;
	}
	snprintf(why, n, "BAR 0 over %s's and back: both answer, device "
		 "serves", peer->name);
	return true;
}

/* One access through the PCI_CFG window: bar, offset, length, data. */
static uint32_t window(struct ev_dev *d, uint32_t bar, uint32_t off,
		       uint32_t len, uint32_t data, bool write)
{
	unsigned int cap = d->cfg_cap;
	uint32_t v = 0;

	ev_pci_cfg32(d, cap + 4, &bar, true);
	ev_pci_cfg32(d, cap + 8, &off, true);
	ev_pci_cfg32(d, cap + 12, &len, true);
	if (write)
		ev_pci_cfg32(d, cap + 16, &data, true);
	else
		ev_pci_cfg32(d, cap + 16, &v, false);
	return v;
}

/*
 * The window on another BAR, past BAR 0's end, straddling it, with
 * lengths 0, 3 and 8: reads 0. Pointed at num_queues it reads it, and a
 * status write of 0 through it resets the device.
 */
bool ev_cfg_window(struct ev_ctx *c, char *why, size_t n)
{
	struct ev_dev *d = c->d;
	uint32_t bad = 0, nq;

	if (!d->cfg_cap) {
		snprintf(why, n, "no VIRTIO_PCI_CAP_PCI_CFG capability");
		return false;
	}
	if (!ev_setup(c, qs_of(c), why, n))
		return false;
	bad |= window(d, 5, d->common, 4, 0, false);
	bad |= window(d, 0, 0xffffffffu, 4, 0, false);
	bad |= window(d, 0, (uint32_t)d->regs_len - 2, 4, 0, false);
	bad |= window(d, 0, d->common, 0, 0, false);
	bad |= window(d, 0, d->common, 3, 0, false);
	bad |= window(d, 0, d->common, 8, 0, false);
	window(d, 0, (uint32_t)d->regs_len - 2, 4, 0, true);
	window(d, 0, d->notify + 0xffc, 4, 0xffff, true);
	nq = window(d, 0, d->common + PCI_C_NUMQ, 2, 0, false);
	if (bad || nq != d->num_queues ||
	    (ev_status(d) & (EV_S_DRIVER_OK | EV_S_NEEDS_RESET)) !=
		    EV_S_DRIVER_OK) {
		snprintf(why, n, "bad windows read %#x, num_queues through it "
			 "%u, status %#x", bad, nq, ev_status(d));
		return false;
	}
	window(d, 0, d->common + PCI_C_STATUS, 1, 0, true);
	if (ev_status(d) != 0) {
		snprintf(why, n, "status write of 0 through the window: "
			 "status %#x", ev_status(d));
		return false;
	}
	snprintf(why, n, "bad windows read 0; num_queues %u and a reset "
		 "through it", nq);
	return true;
}
