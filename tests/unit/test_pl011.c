// SPDX-License-Identifier: Apache-2.0
/*
 * PL011 model: the PrimeCell ID registers Linux's AMBA bus matches, reset
 * values, transmit to a pipe (and dropped, counted bytes once closed), RX
 * FIFO empty/full flags with and without FEN, the room eventfd, the RX and
 * receive-timeout interrupts against IFLS trigger levels with IMSC and ICR,
 * the TX interrupt, loopback with overrun, and hostile accesses: every
 * offset of the page and past it at every width, misaligned ones read 0 and
 * change nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "devices/pl011.h"
#include "irq_log.h"
#include "snap_roundtrip.h"
#include "test.h"
#include "util/evloop.h"

#define DR 0x000
#define RSR 0x004
#define FR 0x018
#define IBRD 0x024
#define FBRD 0x028
#define LCR_H 0x02c
#define CR 0x030
#define IFLS 0x034
#define IMSC 0x038
#define RIS 0x03c
#define MIS 0x040
#define ICR 0x044
#define DMACR 0x048

#define FR_RXFE 0x10
#define FR_RXFF 0x40
#define FR_TXFE 0x80
#define FR_TXFF 0x20
#define FR_BUSY 0x08
#define FEN 0x10
#define INT_RX 0x10
#define INT_TX 0x20
#define INT_RT 0x40
#define INT_OE 0x400
#define CR_LBE 0x80

static void wr(struct pl011 *u, unsigned int off, uint32_t val)
{
	uint8_t d[4] = { (uint8_t)val, (uint8_t)(val >> 8),
			 (uint8_t)(val >> 16), (uint8_t)(val >> 24) };

	pl011_access(u, off, d, 4, true);
}

static uint32_t rd(struct pl011 *u, unsigned int off)
{
	uint8_t d[4] = { 0xee, 0xee, 0xee, 0xee };

	pl011_access(u, off, d, 4, false);
	return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
	       (uint32_t)d[3] << 24;
}

/* Linux's readw_relaxed() path (UPIO_MEM): 16-bit accesses. */
static uint16_t rd16(struct pl011 *u, unsigned int off)
{
	uint8_t d[2] = { 0xee, 0xee };

	pl011_access(u, off, d, 2, false);
	return (uint16_t)(d[0] | d[1] << 8);
}

static void setup(struct pl011 *u, struct irq_log *l, int out_fd)
{
	memset(l, 0, sizeof(*l));
	CHECK_EQ(pl011_init(u, out_fd, fake_irq, l, 33), 0);
}

/* What amba_device_try_add() and pl011_probe() read first. */
static void test_ids_and_reset(void)
{
	static const uint8_t id[8] = { 0x11, 0x10, 0x34, 0x00,
				       0x0d, 0xf0, 0x05, 0xb1 };
	uint32_t periph = 0, cell = 0;
	struct irq_log l;
	struct pl011 u;
	unsigned int i;

	setup(&u, &l, -1);
	for (i = 0; i < 8; i++)
		CHECK_EQ(rd(&u, 0xfe0 + 4 * i), id[i]);
	for (i = 0; i < 4; i++) {
		periph |= (rd(&u, 0xfe0 + 4 * i) & 0xff) << (8 * i);
		cell |= (rd(&u, 0xff0 + 4 * i) & 0xff) << (8 * i);
	}
	CHECK_EQ(periph, 0x00341011); /* AMBA id Linux matches for pl011 */
	CHECK_EQ(cell, 0xb105f00d);   /* AMBA_CID */
	CHECK_EQ((periph >> 20) & 0xf, 3); /* revision 3: 32-byte FIFOs */
	wr(&u, 0xfe0, 0x55);               /* IDs are read-only */
	CHECK_EQ(rd(&u, 0xfe0), 0x11);

	CHECK_EQ(rd(&u, FR) & (FR_RXFE | FR_TXFE | FR_TXFF | FR_BUSY | FR_RXFF),
		 FR_RXFE | FR_TXFE);
	CHECK_EQ(rd(&u, FR) & 0x7, 0x7); /* CTS, DSR, DCD: host listening */
	CHECK_EQ(rd(&u, CR), 0x300);
	CHECK_EQ(rd(&u, IFLS), 0x12);
	CHECK_EQ(rd(&u, IMSC), 0);
	CHECK_EQ(rd(&u, RIS), 0);
	CHECK_EQ(rd(&u, DMACR), 0);
	CHECK_EQ(l.calls, 0);

	/* Baud and line registers keep what the driver writes, no more. */
	wr(&u, IBRD, 0x12345);
	CHECK_EQ(rd(&u, IBRD), 0x2345);
	wr(&u, FBRD, 0xff);
	CHECK_EQ(rd(&u, FBRD), 0x3f);
	wr(&u, LCR_H, 0x70);
	CHECK_EQ(rd16(&u, LCR_H), 0x70);
	wr(&u, DMACR, 7); /* no DMA: stays 0 */
	CHECK_EQ(rd(&u, DMACR), 0);
	pl011_destroy(&u);
}

/* Bytes written to DR reach the fd in order; after close, counted drops. */
static void test_tx(void)
{
	static const char msg[] = "Booting Linux on physical CPU 0x0\n";
	struct outbuf_stats st;
	struct pollfd pfd;
	struct irq_log l;
	struct pl011 u;
	char got[64];
	size_t i, n = sizeof(msg) - 1, have = 0;
	ssize_t r;
	int p[2];

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	setup(&u, &l, p[1]);
	for (i = 0; i < n; i++) {
		CHECK_EQ(rd(&u, FR) & FR_TXFF, 0);
		wr(&u, DR, (uint8_t)msg[i]);
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	while (have < n && poll(&pfd, 1, 2000) == 1) {
		r = read(p[0], got + have, sizeof(got) - have);
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	CHECK_EQ(have, n);
	CHECK(!memcmp(got, msg, n));
	CHECK_EQ(pl011_close_output(&u, 1000), 0);
	wr(&u, DR, 'x');
	pl011_tx_stats(&u, &st);
	CHECK_EQ(st.queued, n);
	CHECK_EQ(st.written, n);
	CHECK_EQ(st.dropped, 1);
	pl011_destroy(&u);
	close(p[0]);
	close(p[1]);
}

/* FIFO flags, depth with and without FEN, and the room eventfd. */
static void test_rx_fifo(void)
{
	uint8_t buf[PL011_FIFO_SIZE + 8];
	struct pollfd pfd;
	struct irq_log l;
	struct pl011 u;
	unsigned int i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(0x40 + i);
	setup(&u, &l, -1);
	pfd.fd = pl011_room_fd(&u);
	pfd.events = POLLIN;

	/* Reset state: FEN is 0, the FIFO is a one-byte holding register. */
	CHECK_EQ(pl011_input(&u, buf, 3), 1);
	CHECK_EQ(rd(&u, FR) & (FR_RXFE | FR_RXFF), FR_RXFF);
	CHECK_EQ(rd(&u, DR), 0x40);
	CHECK_EQ(rd(&u, FR) & (FR_RXFE | FR_RXFF), FR_RXFE);
	CHECK_EQ(poll(&pfd, 1, 0), 1); /* turned bytes away, now empty */
	evfd_drain(pl011_room_fd(&u));

	wr(&u, LCR_H, FEN | 0x60); /* 8 bits, FIFOs on, as set_termios does */
	CHECK_EQ(pl011_input(&u, buf, sizeof(buf)), PL011_FIFO_SIZE);
	CHECK_EQ(rd(&u, FR) & (FR_RXFE | FR_RXFF), FR_RXFF);
	CHECK_EQ(pl011_input(&u, buf, 1), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	for (i = 0; i < PL011_FIFO_SIZE / 2 - 1; i++)
		CHECK_EQ(rd(&u, DR), 0x40 + i);
	CHECK_EQ(poll(&pfd, 1, 0), 0); /* still more than half full */
	CHECK_EQ(rd(&u, DR), 0x40 + i);
	CHECK_EQ(poll(&pfd, 1, 0), 1); /* half full: room */
	evfd_drain(pl011_room_fd(&u));
	for (i++; i < PL011_FIFO_SIZE; i++)
		CHECK_EQ(rd(&u, DR), 0x40 + i);
	CHECK_EQ(rd(&u, FR) & (FR_RXFE | FR_RXFF), FR_RXFE);
	CHECK_EQ(rd(&u, DR), 0); /* empty FIFO reads 0 */
	CHECK_EQ(poll(&pfd, 1, 0), 0); /* signalled once, not per read */
	pl011_destroy(&u);
}

/* RXIM at the IFLS trigger level, RTIM for anything below it, ICR. */
static void test_rx_irq(void)
{
	static const struct {
		uint32_t ifls;
		unsigned int trigger;
	} rows[] = {
		{ .ifls = 0 << 3, .trigger = 4 },  /* 1/8 */
		{ .ifls = 1 << 3, .trigger = 8 },  /* 1/4 */
		{ .ifls = 2 << 3, .trigger = 16 }, /* 1/2, reset value */
		{ .ifls = 3 << 3, .trigger = 24 }, /* 3/4 */
		{ .ifls = 4 << 3, .trigger = 28 }, /* 7/8 */
		{ .ifls = 7 << 3, .trigger = 28 }, /* reserved: as 7/8 */
	};
	uint8_t byte = 'a';
	struct irq_log l;
	struct pl011 u;
	unsigned int i, k;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		setup(&u, &l, -1);
		wr(&u, LCR_H, FEN | 0x60);
		wr(&u, IFLS, rows[i].ifls);
		wr(&u, IMSC, INT_RX);
		for (k = 1; k < rows[i].trigger; k++)
			pl011_input(&u, &byte, 1);
		CHECK_EQ(rd(&u, RIS) & INT_RX, 0);
		CHECK_EQ(l.level, 0);
		CHECK_EQ(rd(&u, RIS) & INT_RT, INT_RT); /* below: timeout */
		pl011_input(&u, &byte, 1);
		CHECK_EQ(rd(&u, MIS), INT_RX);
		CHECK_EQ(l.level, 1);
		CHECK_EQ(l.gsi, 33);
		rd(&u, DR); /* below the trigger again: RX drops */
		CHECK_EQ(rd(&u, RIS) & INT_RX, 0);
		CHECK_EQ(l.level, 0);
		pl011_input(&u, &byte, 1);
		CHECK_EQ(l.level, 1);
		wr(&u, ICR, INT_RX); /* ICR clears the latched event */
		CHECK_EQ(l.level, 0);
		CHECK_EQ(l.repeats, 0);
		pl011_destroy(&u);
	}

	/* Receive timeout: one byte under RTIM raises, emptying clears. */
	setup(&u, &l, -1);
	wr(&u, LCR_H, FEN);
	wr(&u, IMSC, INT_RT);
	pl011_input(&u, &byte, 1);
	CHECK_EQ(l.level, 1);
	CHECK_EQ(rd(&u, MIS), INT_RT);
	CHECK_EQ(rd(&u, DR), 'a');
	CHECK_EQ(l.level, 0);
	pl011_input(&u, &byte, 1);
	CHECK_EQ(l.level, 1);
	wr(&u, ICR, 0x7ff);
	CHECK_EQ(l.level, 0);
	CHECK_EQ(rd(&u, FR) & FR_RXFE, 0); /* the byte is still there */
	wr(&u, IMSC, 0);
	pl011_input(&u, &byte, 1);
	CHECK_EQ(l.level, 0); /* masked: RIS only */
	CHECK_EQ(rd(&u, RIS) & INT_RT, INT_RT);
	wr(&u, IMSC, INT_RT); /* unmasking a pending event raises at once */
	CHECK_EQ(l.level, 1);
	CHECK_EQ(l.repeats, 0);
	pl011_destroy(&u);
}

/* TXRIS latches when data leaves the FIFO; enabling TXIM alone does not. */
static void test_tx_irq(void)
{
	struct irq_log l;
	struct pl011 u;

	setup(&u, &l, -1);
	wr(&u, IMSC, INT_TX);
	CHECK_EQ(l.level, 0);
	CHECK_EQ(rd(&u, RIS), 0);
	wr(&u, DR, 'a');
	CHECK_EQ(rd(&u, MIS), INT_TX);
	CHECK_EQ(l.level, 1);
	wr(&u, ICR, INT_TX);
	CHECK_EQ(l.level, 0);
	wr(&u, DR, 'b');
	CHECK_EQ(l.level, 1);
	wr(&u, IMSC, 0); /* Linux's pl011_stop_tx() */
	CHECK_EQ(l.level, 0);
	CHECK_EQ(rd(&u, RIS) & INT_TX, INT_TX);
	CHECK_EQ(l.repeats, 0);
	pl011_destroy(&u);
}

/* CR.LBE: TX into our own RX FIFO, modem outputs looped, overrun. */
static void test_loopback(void)
{
	struct outbuf_stats st;
	struct irq_log l;
	struct pl011 u;
	unsigned int i;
	int p[2];

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	setup(&u, &l, p[1]);
	wr(&u, LCR_H, FEN);
	wr(&u, CR, 0x301 | CR_LBE);
	CHECK_EQ(rd(&u, FR) & 0x107, 0); /* nothing asserted */
	wr(&u, CR, 0x301 | CR_LBE | 0x0400); /* DTR -> DSR */
	CHECK_EQ(rd(&u, FR) & 0x107, 0x002);
	wr(&u, CR, 0x301 | CR_LBE | 0x0800); /* RTS -> CTS */
	CHECK_EQ(rd(&u, FR) & 0x107, 0x001);
	wr(&u, CR, 0x301 | CR_LBE | 0x3000); /* OUT1 -> DCD, OUT2 -> RI */
	CHECK_EQ(rd(&u, FR) & 0x107, 0x104);

	wr(&u, IMSC, INT_OE);
	for (i = 0; i < PL011_FIFO_SIZE + 2; i++)
		wr(&u, DR, 0x20 + i);
	CHECK_EQ(rd(&u, FR) & FR_RXFF, FR_RXFF);
	CHECK_EQ(rd(&u, RSR) & 0x8, 0x8); /* overrun */
	CHECK_EQ(l.level, 1);
	wr(&u, RSR, 0); /* ECR write clears */
	CHECK_EQ(rd(&u, RSR), 0);
	wr(&u, ICR, INT_OE);
	CHECK_EQ(l.level, 0);
	for (i = 0; i < PL011_FIFO_SIZE; i++)
		CHECK_EQ(rd(&u, DR), 0x20 + i);
	CHECK_EQ(u.rx_overruns, 2);

	wr(&u, CR, 0x301); /* loopback off: bytes leave again */
	wr(&u, DR, 'z');
	CHECK_EQ(pl011_close_output(&u, 1000), 0);
	pl011_tx_stats(&u, &st);
	CHECK_EQ(st.queued, 1); /* looped bytes never reached the host */
	pl011_destroy(&u);
	close(p[0]);
	close(p[1]);
}

/*
 * A hostile guest: every offset of the page and past it, every width 0-16,
 * reads and writes of all-ones. Nothing crashes, misaligned reads are 0,
 * nothing beyond @len is written, and the registers a driver relies on
 * keep working afterwards.
 */
static void test_bad_access(void)
{
	static const uint64_t far[] = { 0x1000, 0x1004, 0xffffffff,
					UINT64_MAX - 3, UINT64_MAX };
	uint8_t d[16];
	struct irq_log l;
	struct pl011 u;
	uint64_t off;
	unsigned int len, i, bad = 0;

	setup(&u, &l, -1);
	for (off = 0; off < PL011_MMIO_SIZE + 16; off++) {
		for (len = 0; len <= 16; len++) {
			memset(d, 0xee, sizeof(d));
			pl011_access(&u, off, d, len, false);
			for (i = len > 8 ? 8 : len; i < sizeof(d); i++)
				bad += d[i] != 0xee; /* wrote past len */
			if ((off & 3) || off >= PL011_MMIO_SIZE)
				for (i = 0; i < len && i < 8; i++)
					bad += d[i] != 0;
		}
	}
	CHECK_EQ(bad, 0);
	for (off = 0; off < PL011_MMIO_SIZE + 16; off++)
		if ((off & 3) || off >= PL011_MMIO_SIZE) {
			memset(d, 0xff, sizeof(d));
			pl011_access(&u, off, d, 8, true);
		}
	for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		memset(d, 0xff, sizeof(d));
		pl011_access(&u, far[i], d, 8, true);
		pl011_access(&u, far[i], d, 8, false);
		CHECK_EQ(d[0], 0);
	}
	/* Misaligned all-ones writes changed nothing. */
	CHECK_EQ(rd(&u, CR), 0x300);
	CHECK_EQ(rd(&u, IMSC), 0);
	CHECK_EQ(rd(&u, IFLS), 0x12);
	CHECK_EQ(l.calls, 0);

	/* An 8-byte read returns the register in the low 32 bits. */
	memset(d, 0xee, sizeof(d));
	pl011_access(&u, 0xfe8, d, 8, false);
	CHECK_EQ(d[0], 0x34);
	for (i = 1; i < 8; i++)
		CHECK_EQ(d[i], 0);
	/* Byte writes reach the register's low byte (IMSC = RTIM). */
	d[0] = INT_RT;
	pl011_access(&u, IMSC, d, 1, true);
	CHECK_EQ(rd(&u, IMSC), INT_RT);

	/* Every aligned offset written with all-ones at every width. */
	for (off = 0; off < PL011_MMIO_SIZE; off += 4)
		for (len = 1; len <= 8; len++) {
			memset(d, 0xff, sizeof(d));
			pl011_access(&u, off, d, len, true);
		}
	CHECK_EQ(rd(&u, CR) & ~0xff87u, 0);
	CHECK_EQ(rd(&u, IMSC) & ~0x7ffu, 0);
	CHECK_EQ(rd(&u, RIS) & ~0x7ffu, 0);
	CHECK_EQ(rd(&u, 0xffc), 0xb1);
	wr(&u, ICR, 0x7ff);
	wr(&u, IMSC, 0);
	CHECK_EQ(l.level, 0);
	CHECK_EQ(l.repeats, 0);
	pl011_destroy(&u);
}

static void save_fn(void *dev, struct snap_writer *w)
{
	pl011_save(dev, w);
}

/* A snapshot's state: the registers and the bytes not yet read, into a
 * fresh UART; the line follows; a short or oversized state is refused. */
static void test_save_load(void)
{
	static const uint8_t in[5] = { 'h', 'e', 'l', 'l', 'o' };
	struct irq_log l, l2;
	struct pl011 u, v;
	struct snap_rt rt;
	struct snap_reader r;
	unsigned int i;

	setup(&u, &l, -1);
	wr(&u, IBRD, 26);
	wr(&u, FBRD, 3);
	wr(&u, LCR_H, FEN | 0x60);
	wr(&u, IFLS, 0x00); /* RX at 1/8: 4 bytes raise RXRIS */
	wr(&u, IMSC, INT_RX);
	CHECK_EQ(pl011_input(&u, in, sizeof(in)), sizeof(in));
	CHECK_EQ(rd(&u, MIS), INT_RX);
	CHECK(snap_rt_make(&rt, save_fn, &u));

	setup(&v, &l2, -1);
	r = snap_rt_short(&rt);
	CHECK_EQ(pl011_load(&v, &r), -EINVAL);
	r = rt.r;
	CHECK_EQ(pl011_load(&v, &r), 0);
	CHECK_EQ(rd(&v, IBRD), 26);
	CHECK_EQ(rd(&v, FBRD), 3);
	CHECK_EQ(rd(&v, LCR_H), FEN | 0x60);
	CHECK_EQ(rd(&v, IMSC), INT_RX);
	CHECK_EQ(rd(&v, MIS), INT_RX);
	CHECK_EQ(l2.level, 1);
	for (i = 0; i < sizeof(in); i++)
		CHECK_EQ(rd(&v, DR), in[i]);
	CHECK_EQ(rd(&v, FR) & FR_RXFE, FR_RXFE);
	free(rt.buf);

	/* More bytes than the FIFO holds: refused, nothing taken. */
	{
		uint8_t bad[24] = { 0 };
		struct snap_reader br = { .p = bad, .len = sizeof(bad) };

		bad[12] = PL011_FIFO_SIZE + 1;
		CHECK_EQ(pl011_load(&v, &br), -EINVAL);
		CHECK_EQ(rd(&v, IBRD), 26);
	}
	pl011_destroy(&v);
	pl011_destroy(&u);
}

int main(void)
{
	test_save_load();
	test_ids_and_reset();
	test_tx();
	test_rx_fifo();
	test_rx_irq();
	test_tx_irq();
	test_loopback();
	test_bad_access();
	return test_done();
}
