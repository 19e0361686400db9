// SPDX-License-Identifier: Apache-2.0
/*
 * PL011 register model (PrimeCell UART r1p5 TRM, DDI 0183). Transmission
 * completes at once: the byte goes into a bounded host buffer drained by the
 * console output thread (util/outbuf.c), so the TX FIFO is always empty and
 * never busy, and a stalled reader never stalls a vCPU. One mutex
 * serialises vCPU accesses and host input; RIS is a set of latched events,
 * and the line level (RIS & IMSC) != 0 is reported, under the lock, only
 * when it moves.
 */
#include "devices/pl011.h"

#include <errno.h>
#include <string.h>

#include "devices/uart_host.h"
#include "snapshot/snap.h"
#include "util/le.h"

/* Register offsets (TRM table 3-1). */
#define REG_DR 0x000
#define REG_RSR_ECR 0x004
#define REG_FR 0x018
#define REG_ILPR 0x020
#define REG_IBRD 0x024
#define REG_FBRD 0x028
#define REG_LCR_H 0x02c
#define REG_CR 0x030
#define REG_IFLS 0x034
#define REG_IMSC 0x038
#define REG_RIS 0x03c
#define REG_MIS 0x040
#define REG_ICR 0x044
#define REG_DMACR 0x048
#define REG_PERIPH_ID0 0xfe0
#define REG_CELL_ID0 0xff0
#define REG_ID_END 0x1000

#define FR_CTS 0x001
#define FR_DSR 0x002
#define FR_DCD 0x004
#define FR_RXFE 0x010
#define FR_RXFF 0x040
#define FR_TXFE 0x080
#define FR_RI 0x100

#define LCR_H_FEN 0x10

#define CR_LBE 0x0080
#define CR_TXE 0x0100
#define CR_RXE 0x0200
#define CR_DTR 0x0400
#define CR_RTS 0x0800
#define CR_OUT1 0x1000
#define CR_OUT2 0x2000
#define CR_MASK 0xff87 /* bits 3-6 are reserved (SIREN/SIRLP: no IrDA) */

#define INT_RX 0x010
#define INT_TX 0x020
#define INT_RT 0x040
#define INT_OE 0x400
#define INT_MASK 0x7ff

#define RSR_OE 0x08

#define IFLS_RESET 0x12 /* RX and TX at half full */
#define IFLS_MASK 0x3f

/*
 * PL011 r1p5 as Linux's AMBA bus reads it: periph id 0x00341011 (part 0x011,
 * designer 0x41 ARM, revision 3 -> 32-byte FIFOs), then the PrimeCell id.
 */
static const uint8_t pl011_id[8] = { 0x11, 0x10, 0x34, 0x00,
				     0x0d, 0xf0, 0x05, 0xb1 };

/* FIFO depth: the FIFOs are one-byte holding registers while FEN is 0. */
static unsigned int pl011_depth_locked(const struct pl011 *u)
{
	return (u->lcr_h & LCR_H_FEN) ? PL011_FIFO_SIZE : 1;
}

/*
 * RX trigger level from IFLS bits 5:3: 1/8, 1/4, 1/2, 3/4, 7/8 of the FIFO;
 * the reserved codes 5-7 act as 7/8. With the FIFO off, one byte.
 */
static unsigned int pl011_rx_trigger_locked(const struct pl011 *u)
{
	static const unsigned int eighths[8] = { 1, 2, 4, 6, 7, 7, 7, 7 };

	if (!(u->lcr_h & LCR_H_FEN))
		return 1;
	return PL011_FIFO_SIZE * eighths[(u->ifls >> 3) & 7] / 8;
}

/*
 * RXRIS follows the FIFO level against the trigger. The receive timeout
 * (RTRIS) is "data waiting, no more arriving": host input comes in bursts
 * with no line timing, so it expires as soon as a byte is in, and clears
 * when the FIFO empties (or through ICR).
 */
static void pl011_rx_level_locked(struct pl011 *u)
{
	if (u->rx_count >= pl011_rx_trigger_locked(u))
		u->ris |= INT_RX;
	else
		u->ris &= ~INT_RX;
	if (!u->rx_count)
		u->ris &= ~INT_RT;
}

static void pl011_update_irq_locked(struct pl011 *u)
{
	int level = (u->ris & u->imsc) != 0;

	uart_host_irq_locked(&u->h, level);
}

static void pl011_room_check_locked(struct pl011 *u)
{
	uart_host_room_locked(&u->h, u->rx_count <= pl011_depth_locked(u) / 2);
}

/* Append one byte; false when the FIFO is full. */
static bool pl011_rx_push_locked(struct pl011 *u, uint8_t byte)
{
	if (u->rx_count >= pl011_depth_locked(u))
		return false;
	u->rx[(u->rx_head + u->rx_count) % PL011_FIFO_SIZE] = byte;
	u->rx_count++;
	u->ris |= INT_RT;
	pl011_rx_level_locked(u);
	return true;
}

static uint8_t pl011_rx_pop_locked(struct pl011 *u)
{
	uint8_t byte;

	if (!u->rx_count)
		return 0;
	byte = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % PL011_FIFO_SIZE;
	u->rx_count--;
	pl011_rx_level_locked(u);
	pl011_room_check_locked(u);
	return byte;
}

/*
 * Neither UARTEN nor TXE gates transmission: an early console (earlycon,
 * a boot loader) writes DR on the reset state without enabling the UART.
 */
static void pl011_tx_locked(struct pl011 *u, uint8_t byte)
{
	/*
	 * The byte leaves the FIFO at once, so the FIFO passes through its
	 * TX trigger level on every write: that is the event TXRIS latches.
	 * Like the hardware, enabling TXIM alone raises nothing; Linux primes
	 * the FIFO with data first.
	 */
	u->ris |= INT_TX;
	if (u->cr & CR_LBE) {
		if (!pl011_rx_push_locked(u, byte)) {
			u->rsr |= RSR_OE;
			u->ris |= INT_OE;
			u->rx_overruns++;
		}
		return;
	}
	uart_host_put_locked(&u->h, byte);
}

/*
 * Modem inputs: a host that is always listening (CTS, DSR, DCD), or in
 * loopback the outputs wired back (TRM 2.4.6: DTR->DSR, RTS->CTS,
 * OUT1->DCD, OUT2->RI). Modem status interrupts are not raised.
 */
static uint16_t pl011_fr_locked(const struct pl011 *u)
{
	uint16_t fr = FR_TXFE;

	if (!u->rx_count)
		fr |= FR_RXFE;
	if (u->rx_count >= pl011_depth_locked(u))
		fr |= FR_RXFF;
	if (!(u->cr & CR_LBE))
		return fr | FR_CTS | FR_DSR | FR_DCD;
	if (u->cr & CR_DTR)
		fr |= FR_DSR;
	if (u->cr & CR_RTS)
		fr |= FR_CTS;
	if (u->cr & CR_OUT1)
		fr |= FR_DCD;
	if (u->cr & CR_OUT2)
		fr |= FR_RI;
	return fr;
}

static void pl011_write_locked(struct pl011 *u, unsigned int reg,
			       uint32_t val)
{
	switch (reg) {
	case REG_DR:
		pl011_tx_locked(u, (uint8_t)val);
		break;
	case REG_RSR_ECR:
		u->rsr = 0; /* any write clears the errors */
		break;
	case REG_IBRD:
		u->ibrd = (uint16_t)val;
		break;
	case REG_FBRD:
		u->fbrd = val & 0x3f;
		break;
	case REG_LCR_H:
		u->lcr_h = (uint8_t)val;
		/* The depth and trigger may have moved under the FIFO. */
		pl011_rx_level_locked(u);
		pl011_room_check_locked(u);
		break;
	case REG_CR:
		u->cr = val & CR_MASK;
		break;
	case REG_IFLS:
		u->ifls = val & IFLS_MASK;
		pl011_rx_level_locked(u);
		break;
	case REG_IMSC:
		u->imsc = val & INT_MASK;
		break;
	case REG_ICR:
		u->ris &= ~(val & INT_MASK);
		break;
	default: /* FR, RIS, MIS, IDs read-only; ILPR and DMACR unmodelled */
		break;
	}
}

static uint32_t pl011_read_locked(struct pl011 *u, unsigned int reg)
{
	if (reg >= REG_PERIPH_ID0 && reg < REG_ID_END)
		return pl011_id[(reg - REG_PERIPH_ID0) / 4];
	switch (reg) {
	case REG_DR:
		return pl011_rx_pop_locked(u);
	case REG_RSR_ECR:
		return u->rsr;
	case REG_FR:
		return pl011_fr_locked(u);
	case REG_IBRD:
		return u->ibrd;
	case REG_FBRD:
		return u->fbrd;
	case REG_LCR_H:
		return u->lcr_h;
	case REG_CR:
		return u->cr;
	case REG_IFLS:
		return u->ifls;
	case REG_IMSC:
		return u->imsc;
	case REG_RIS:
		return u->ris;
	case REG_MIS:
		return u->ris & u->imsc;
	default: /* ICR is write-only; DMACR 0: no DMA */
		return 0;
	}
}

void pl011_access(void *opaque, uint64_t off, uint8_t *data, unsigned int len,
		  bool is_write)
{
	struct pl011 *u = opaque;
	unsigned int n = len > 8 ? 8 : len;

	if (!is_write)
		memset(data, 0, n);
	if (off >= PL011_MMIO_SIZE || (off & 3) || !n)
		return;
	pthread_mutex_lock(&u->h.lock);
	if (is_write)
		pl011_write_locked(u, (unsigned int)off,
				   (uint32_t)le_get(data, n > 4 ? 4 : n));
	else
		le_put(data, n > 4 ? 4 : n,
		       pl011_read_locked(u, (unsigned int)off));
	pl011_update_irq_locked(u);
	pthread_mutex_unlock(&u->h.lock);
}

size_t pl011_input(struct pl011 *u, const uint8_t *buf, size_t n)
{
	size_t i;

	pthread_mutex_lock(&u->h.lock);
	for (i = 0; i < n; i++)
		if (!pl011_rx_push_locked(u, buf[i]))
			break;
	if (i < n)
		u->h.room_wanted = true;
	pl011_update_irq_locked(u);
	pthread_mutex_unlock(&u->h.lock);
	return i;
}

int pl011_room_fd(const struct pl011 *u)
{
	return u->h.room_fd;
}

int pl011_init(struct pl011 *u, int out_fd, irq_set_fn irq, void *irq_opaque,
	       uint32_t gsi)
{
	memset(u, 0, sizeof(*u));
	u->cr = CR_TXE | CR_RXE; /* TRM reset value 0x300 */
	u->ifls = IFLS_RESET;
	return uart_host_init(&u->h, out_fd, PL011_TX_BUF_SIZE, irq,
			      irq_opaque, gsi);
}

int pl011_close_output(struct pl011 *u, unsigned int timeout_ms)
{
	return uart_host_close_output(&u->h, timeout_ms);
}

void pl011_tx_stats(struct pl011 *u, struct outbuf_stats *st)
{
	uart_host_stats(&u->h, st);
}

void pl011_destroy(struct pl011 *u)
{
	uart_host_destroy(&u->h, PL011_TX_FLUSH_MS);
}

void pl011_save(struct pl011 *u, struct snap_writer *w)
{
	unsigned int i;

	pthread_mutex_lock(&u->h.lock);
	snap_put_u16(w, u->cr);
	snap_put_u16(w, u->imsc);
	snap_put_u16(w, u->ris);
	snap_put_u16(w, u->ibrd);
	snap_put_u8(w, u->fbrd);
	snap_put_u8(w, u->lcr_h);
	snap_put_u8(w, u->ifls);
	snap_put_u8(w, u->rsr);
	snap_put_u32(w, u->rx_count);
	for (i = 0; i < u->rx_count; i++)
		snap_put_u8(w, u->rx[(u->rx_head + i) % PL011_FIFO_SIZE]);
	pthread_mutex_unlock(&u->h.lock);
}

int pl011_load(struct pl011 *u, struct snap_reader *r)
{
	uint16_t cr, imsc, ris, ibrd;
	uint8_t b[4], rx[PL011_FIFO_SIZE];
	uint32_t n, i;

	cr = snap_get_u16(r);
	imsc = snap_get_u16(r);
	ris = snap_get_u16(r);
	ibrd = snap_get_u16(r);
	snap_get_bytes(r, b, sizeof(b));
	n = snap_get_u32(r);
	if (r->bad || n > PL011_FIFO_SIZE)
		return -EINVAL;
	snap_get_bytes(r, rx, n);
	if (r->bad || !snap_reader_done(r))
		return -EINVAL;
	pthread_mutex_lock(&u->h.lock);
	u->cr = cr & CR_MASK;
	u->imsc = imsc & INT_MASK;
	u->ris = ris & INT_MASK;
	u->ibrd = ibrd;
	u->fbrd = b[0] & 0x3f;
	u->lcr_h = b[1];
	u->ifls = b[2] & IFLS_MASK;
	u->rsr = b[3] & RSR_OE;
	u->rx_head = 0;
	u->rx_count = n;
	for (i = 0; i < n; i++)
		u->rx[i] = rx[i];
	pl011_room_check_locked(u);
	pl011_update_irq_locked(u);
	pthread_mutex_unlock(&u->h.lock);
	return 0;
}
