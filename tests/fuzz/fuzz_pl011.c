// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the PL011 model (src/devices/pl011.c) as a hostile
 * guest and host input drive it: accesses at any offset (in the page, just
 * past it, anywhere in 64 bits) and any width 0-16, and bursts of host
 * input. A shadow RX FIFO follows every byte in (host input, loopback) and
 * out (DR reads), so each DR read must return the shadow's oldest byte and
 * FR's RXFE/RXFF must match its count. Reads never write past the access
 * width, misaligned or outside ones read 0, the interrupt callback reports
 * only changes, and the line always equals (RIS & IMSC) != 0.
 * abort() on any broken promise.
 *
 * Input: a stream of FUZZ_OP_SIZE-byte operations (see fuzz_op()).
 */
#include "devices/pl011.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_OP_SIZE 12
#define FUZZ_MAX_OPS 2048
#define FUZZ_BUF 16 /* access buffer: 8 data bytes + canary */
#define FUZZ_CANARY 0x5a
#define FUZZ_GSI 33

/* Registers and bits the shadow model reads (PL011 TRM table 3-1). */
#define UART_DR 0x000
#define UART_FR 0x018
#define UART_LCR_H 0x02c
#define UART_CR 0x030
#define UART_IMSC 0x038
#define UART_RIS 0x03c
#define UART_FR_RXFE 0x10
#define UART_FR_RXFF 0x40
#define UART_LCR_H_FEN 0x10
#define UART_CR_LBE 0x80

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
	struct pl011 uart;
	int level;   /* last level reported */
	int reports; /* irq() calls */
	uint8_t rx[PL011_FIFO_SIZE];
	unsigned int rx_head, rx_count;
} st;
static int null_fd = -1;

static void fuzz_irq(void *opaque, uint32_t gsi, int level)
{
	(void)opaque;
	if (gsi != FUZZ_GSI || (level != 0 && level != 1))
		abort();
	if (st.reports && level == st.level)
		abort(); /* only changes are reported */
	st.level = level;
	st.reports++;
}

/* A side-effect-free register read (not DR, not a clear-on-read one). */
static uint32_t reg(unsigned int off)
{
	uint8_t d[4];

	pl011_access(&st.uart, off, d, 4, false);
	return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
	       (uint32_t)d[3] << 24;
}

static unsigned int depth(void)
{
	return (reg(UART_LCR_H) & UART_LCR_H_FEN) ? PL011_FIFO_SIZE : 1;
}

static void shadow_push(uint8_t byte)
{
	if (st.rx_count >= depth())
		return; /* overrun: the model drops it too */
	st.rx[(st.rx_head + st.rx_count) % PL011_FIFO_SIZE] = byte;
	st.rx_count++;
}

static void fuzz_access(uint64_t off, unsigned int len, bool is_write,
			const uint8_t *val)
{
	bool decoded = off < PL011_MMIO_SIZE && !(off & 3) && len;
	unsigned int n = len > 8 ? 8 : len, i;
	uint8_t buf[FUZZ_BUF], expect = 0;
	bool loop = reg(UART_CR) & UART_CR_LBE;

	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write) {
		memcpy(buf, val, 8);
		if (decoded && off == UART_DR && loop)
			shadow_push(val[0]);
		pl011_access(&st.uart, off, buf, len, true);
		return;
	}
	if (decoded && off == UART_DR && st.rx_count) {
		expect = st.rx[st.rx_head];
		st.rx_head = (st.rx_head + 1) % PL011_FIFO_SIZE;
		st.rx_count--;
	}
	pl011_access(&st.uart, off, buf, len, false);
	for (i = n; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort(); /* wrote past the access width */
	if (!decoded)
		for (i = 0; i < n; i++)
			if (buf[i])
				abort();
	if (decoded && off == UART_DR && buf[0] != expect)
		abort(); /* a byte lost, invented or reordered */
}

static void fuzz_check(void)
{
	uint32_t fr = reg(UART_FR);

	if (!!(fr & UART_FR_RXFE) != (st.rx_count == 0))
		abort();
	if (!!(fr & UART_FR_RXFF) != (st.rx_count >= depth()))
		abort();
	if (st.level != ((reg(UART_RIS) & reg(UART_IMSC)) != 0))
		abort();
}

/*
 * One operation: byte 0 picks the kind (low 2 bits) and the width (bits
 * 2-6, 0-31 taken modulo 17), bytes 4-11 are the value. Kinds: 0 an
 * access to register (byte 1 % 20) * 4, the decoded ones from DR to
 * DMACR, read or write by byte 3 bit 0; 1 the same at the IDs, 0xfe0 +
 * (byte 1 % 8) * 4; 2 host input of (byte 1 % 48) bytes; 3 an access at
 * any offset: bytes 1-2 (13 bits: the page and past it), or with byte 3
 * bit 1 the 64-bit offset in bytes 4-11.
 */
static void fuzz_op(const uint8_t *op)
{
	unsigned int len = ((op[0] >> 2) & 31) % 17, i;
	bool is_write = op[3] & 1;
	uint8_t in[48];
	size_t took, n;
	uint64_t off;

	switch (op[0] & 3) {
	case 0:
		fuzz_access((op[1] % 20) * 4, len, is_write, op + 4);
		break;
	case 1:
		fuzz_access(0xfe0 + (op[1] % 8) * 4, len, is_write, op + 4);
		break;
	case 2:
		n = op[1] % sizeof(in);
		for (i = 0; i < n; i++)
			in[i] = (uint8_t)(op[4 + i % 8] + i);
		took = pl011_input(&st.uart, in, n);
		if (took > n)
			abort();
		for (i = 0; i < took; i++)
			shadow_push(in[i]);
		break;
	default:
		off = (uint64_t)op[1] | (uint64_t)(op[2] & 0x1f) << 8;
		if (op[3] & 2)
			memcpy(&off, op + 4, sizeof(off));
		fuzz_access(off, len, is_write, op + 4);
		break;
	}
	fuzz_check();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, n = size / FUZZ_OP_SIZE;

	if (null_fd < 0) {
		/* Transmitted bytes go somewhere that never blocks. */
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd < 0)
			abort();
	}
	memset(&st, 0, sizeof(st));
	if (pl011_init(&st.uart, null_fd, fuzz_irq, NULL, FUZZ_GSI))
		return 0;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + i * FUZZ_OP_SIZE);
	pl011_destroy(&st.uart);
	return 0;
}
