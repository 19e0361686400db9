// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the platform devices behind the PIO and MMIO buses
 * (src/vmm/bus.c, src/devices/serial.c, i8042.c, exitdev.c, boottime.c,
 * pvpanic.c),
 * laid out as
 * the x86_64 machine registers them, plus extra ranges the input asks
 * bus_register() for. Every range's handler is wrapped in a recorder, so
 * each access is checked against a linear model of the table: dispatched
 * to exactly the one range that wholly holds it, at the right offset.
 * The UART's receive FIFO (host input and loopback) is shadowed, reads
 * never write past the access width, the interrupt line only reports
 * changes, and the reset and exit callbacks fire for exactly the writes
 * that mean them. The boot-time register counts exactly the mark writes,
 * takes their time from the clock, and logs no more than its limit. The
 * pvpanic port reads as its capability byte and counts each event bit
 * of a write, calling back for exactly the PANICKED ones.
 * abort() on any broken promise.
 *
 * Input: a stream of FUZZ_OP_SIZE-byte operations (see fuzz_op()).
 */
#include "devices/boottime.h"
#include "devices/exitdev.h"
#include "devices/i8042.h"
#include "devices/pvpanic.h"
#include "devices/serial.h"
#include "util/le.h"
#include "util/log.h"
#include "vmm/bus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The machine's layout (src/vmm/x86_64/layout.h). */
#define FUZZ_PORT_COM1 0x3f8
#define FUZZ_PORT_I8042_DATA 0x60
#define FUZZ_PORT_I8042_CMD 0x64
#define FUZZ_PORT_EXIT 0xf4
#define FUZZ_EXIT_MMIO 0xf0100000ULL
#define FUZZ_PORT_BOOT_TIME 0xf8
#define FUZZ_BOOT_TIME_MMIO 0xf0101000ULL
#define FUZZ_PORT_PVPANIC 0x505
#define FUZZ_GSI_COM1 4
#define FUZZ_GSI_KBD 1

#define FUZZ_OP_SIZE 12
#define FUZZ_MAX_OPS 2048
#define FUZZ_BUF 16 /* access buffer: 8 data bytes + canary */
#define FUZZ_CANARY 0x5a

/* Serial registers and bits the shadow model follows. */
#define UART_RBR 0
#define UART_IIR_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_LCR_DLAB 0x80
#define UART_MCR_LOOP 0x10
#define UART_FCR_CLEAR_RX 0x02
#define UART_LSR_DR 0x01
#define UART_LSR_TX_EMPTY 0x60

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum fuzz_dev {
	DEV_SERIAL, DEV_KBD_DATA, DEV_KBD_CMD, DEV_EXIT, DEV_BOOT_TIME,
	DEV_PVPANIC, DEV_EXTRA
};

/* A registered range, as the bus should see it. */
struct fuzz_range {
	struct bus *bus;
	uint64_t base, len;
	enum fuzz_dev dev;
	bus_access_fn fn;
	void *opaque;
};

struct fuzz_state {
	struct bus pio, mmio;
	struct serial com1;
	struct i8042 kbd;
	struct exitdev exitdev;
	struct boottime boottime;
	struct pvpanic pvpanic;
	uint64_t bt_clock;     /* the boot-time clock: +1 per reading */
	unsigned int bt_lines; /* boot-time log lines */
	struct fuzz_range ranges[2 * BUS_MAX_RANGES];
	unsigned int nr_ranges;
	/* What the last access reached. */
	const struct fuzz_range *hit;
	uint64_t hit_off;
	unsigned int hits;
	/* Callbacks. */
	int irq_level;
	int kbd_irq_level;
	unsigned int resets, exits, panics;
	int exit_status;
	/* Shadow of the UART's RX FIFO. */
	uint8_t rx[SERIAL_RX_FIFO_SIZE];
	unsigned int rx_head, rx_count;
};

static struct fuzz_state st;
static int null_fd = -1;

static void fuzz_irq(void *opaque, uint32_t gsi, int level)
{
	struct fuzz_state *s = opaque;

	/* Only changes are reported, on the UART's own line. */
	if (gsi != FUZZ_GSI_COM1 || (level != 0 && level != 1) ||
	    level == s->irq_level)
		abort();
	s->irq_level = level;
}

/* The keyboard controller's line: only changes, on its own GSI. */
static void fuzz_kbd_irq(void *opaque, uint32_t gsi, int level)
{
	struct fuzz_state *s = opaque;

	if (gsi != FUZZ_GSI_KBD || (level != 0 && level != 1) ||
	    level == s->kbd_irq_level)
		abort();
	s->kbd_irq_level = level;
}

static void fuzz_reset(void *opaque)
{
	((struct fuzz_state *)opaque)->resets++;
}

static void fuzz_exit(void *opaque, int status)
{
	struct fuzz_state *s = opaque;

	s->exits++;
	s->exit_status = status;
}

static void fuzz_panicked(void *opaque)
{
	((struct fuzz_state *)opaque)->panics++;
}

/* A pvpanic access: each event bit of a write counted, reads inert. */
static void fuzz_pvpanic_check(uint64_t off, const uint8_t *data,
			       unsigned int len, bool is_write,
			       const struct pvpanic_stats *before)
{
	struct pvpanic_stats now;
	bool ev = is_write && off == 0;
	uint8_t v = data[0];
	unsigned int i;

	pvpanic_get_stats(&st.pvpanic, &now);
	if (now.panicked != before->panicked + (ev && (v & PVPANIC_PANICKED)) ||
	    now.crash_loaded != before->crash_loaded +
				    (ev && (v & PVPANIC_CRASH_LOADED)) ||
	    now.ignored != before->ignored +
			   (ev && (!v || (v & ~PVPANIC_CAPABILITY))) ||
	    now.panicked != st.panics)
		abort();
	if (is_write)
		return;
	for (i = 0; i < len; i++)
		if (data[i] != (off == 0 && i == 0 ? PVPANIC_CAPABILITY : 0))
			abort();
}

static uint64_t fuzz_bt_clock(void *opaque)
{
	return ++((struct fuzz_state *)opaque)->bt_clock;
}

static void fuzz_bt_log(void *opaque, const char *line)
{
	struct fuzz_state *s = opaque;

	if (strncmp(line, "boot-time: ", 11) ||
	    ++s->bt_lines > BOOT_TIME_LOG_MAX + 1)
		abort();
}

/* A boot-time access: a mark is counted, timed and logged within limits. */
static void fuzz_bt_check(uint64_t off, const uint8_t *data,
			  unsigned int len, bool is_write,
			  const struct boottime_stats *before)
{
	struct boottime_stats now;
	char label[BOOT_TIME_LABEL_LEN];
	bool mark = is_write && off == 0 &&
		    boottime_label(data[0], label, sizeof(label));
	bool other = is_write && off == 0 && !mark;
	unsigned int i;

	boottime_get_stats(&st.boottime, &now);
	if (now.marks != before->marks + mark ||
	    now.ignored != before->ignored + other ||
	    now.marks != st.bt_clock ||
	    now.unlogged != (now.marks > BOOT_TIME_LOG_MAX ?
				     now.marks - BOOT_TIME_LOG_MAX : 0))
		abort();
	if (mark && (now.last.value != data[0] || now.last.ns != st.bt_clock ||
		     (now.marks == 1 && now.first.ns != now.last.ns)))
		abort();
	if (!is_write && off == 0)
		for (i = 0; i < len; i++)
			if (data[i])
				abort();
}

static void fuzz_extra(void *opaque, uint64_t off, uint8_t *data,
		       unsigned int len, bool is_write)
{
	(void)opaque;
	(void)off;
	if (!is_write)
		memset(data, 0x11, len);
}

/* Every handler goes through here: record what the bus routed. */
static void fuzz_recorder(void *opaque, uint64_t off, uint8_t *data,
			  unsigned int len, bool is_write)
{
	const struct fuzz_range *r = opaque;

	st.hit = r;
	st.hit_off = off;
	st.hits++;
	r->fn(r->opaque, off, data, len, is_write);
}

/* bus_register() through the recorder, checked against the model. */
static void fuzz_register(struct bus *bus, uint64_t base, uint64_t len,
			  enum fuzz_dev dev, bus_access_fn fn, void *opaque)
{
	struct fuzz_range *r = &st.ranges[st.nr_ranges];
	unsigned int i, n = 0;
	int want = 0, ret;

	for (i = 0; i < st.nr_ranges; i++) {
		const struct fuzz_range *o = &st.ranges[i];

		if (o->bus != bus)
			continue;
		n++;
		if (len && base + len >= base && base < o->base + o->len &&
		    o->base < base + len)
			want = -EEXIST;
	}
	if (!len || base + len < base)
		want = -EINVAL;
	else if (n >= BUS_MAX_RANGES)
		want = -ENOSPC;
	*r = (struct fuzz_range){ bus, base, len, dev, fn, opaque };
	ret = bus_register(bus, base, len, fuzz_recorder, r);
	if (ret != want)
		abort();
	if (!ret)
		st.nr_ranges++;
}

/* The range that wholly holds [addr, addr + len), per the model. */
static const struct fuzz_range *fuzz_lookup(const struct bus *bus,
					    uint64_t addr, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < st.nr_ranges; i++) {
		const struct fuzz_range *r = &st.ranges[i];

		if (r->bus == bus && addr >= r->base &&
		    addr - r->base < r->len)
			return len <= r->len - (addr - r->base) ? r : NULL;
	}
	return NULL;
}

static void fuzz_rx_push(uint8_t byte)
{
	if (st.rx_count == SERIAL_RX_FIFO_SIZE)
		return;
	st.rx[(st.rx_head + st.rx_count) % SERIAL_RX_FIFO_SIZE] = byte;
	st.rx_count++;
}

/* Check a UART access against the shadow and update it. */
static void fuzz_serial_check(uint64_t off, const uint8_t *data,
			      unsigned int len, bool is_write, uint8_t lcr,
			      uint8_t mcr)
{
	unsigned int i;
	uint8_t want;

	if (is_write) {
		if (off == UART_RBR && !(lcr & UART_LCR_DLAB) &&
		    (mcr & UART_MCR_LOOP))
			fuzz_rx_push(data[0]);
		if (off == UART_IIR_FCR && (data[0] & UART_FCR_CLEAR_RX))
			st.rx_head = st.rx_count = 0;
		return;
	}
	for (i = 1; i < len; i++)
		if (data[i])
			abort(); /* the register sits in the low byte */
	if (off == UART_RBR && !(lcr & UART_LCR_DLAB)) {
		want = 0;
		if (st.rx_count) {
			want = st.rx[st.rx_head];
			st.rx_head = (st.rx_head + 1) % SERIAL_RX_FIFO_SIZE;
			st.rx_count--;
		}
		if (data[0] != want)
			abort();
	} else if (off == UART_LSR) {
		if ((data[0] & UART_LSR_TX_EMPTY) != UART_LSR_TX_EMPTY ||
		    !(data[0] & UART_LSR_DR) != !st.rx_count)
			abort();
	} else if (off == UART_IIR_FCR) {
		want = data[0] & 0x0f;
		if (want != 1 && want != 0 && want != 2 && want != 4 &&
		    want != 6)
			abort();
	}
}

/* What the device behind @r must have done with this access. */
static void fuzz_dev_check(const struct fuzz_range *r, uint64_t off,
			   const uint8_t *data, unsigned int len,
			   bool is_write, unsigned int resets,
			   unsigned int exits, uint8_t lcr, uint8_t mcr)
{
	bool reset = r->dev == DEV_KBD_CMD && is_write && off == 0 &&
		     data[0] == I8042_CMD_RESET;
	bool exit = r->dev == DEV_EXIT && is_write && off == 0;
	unsigned int i;

	if (st.resets != resets + reset || st.exits != exits + exit ||
	    (exit && st.exit_status != data[0]))
		abort();
	if (r->dev == DEV_SERIAL && off < SERIAL_NR_REGS)
		fuzz_serial_check(off, data, len, is_write, lcr, mcr);
	/* The exit device reads 0; the keyboard controller's data port
	 * its next byte (or 0), its status port "self-test passed": each
	 * in the access's first byte only. */
	if (!is_write && (r->dev == DEV_KBD_DATA || r->dev == DEV_EXIT ||
			  r->dev == DEV_KBD_CMD) && off == 0)
		for (i = r->dev == DEV_EXIT ? 0 : 1; i < len; i++)
			if (data[i])
				abort();
	if (!is_write && r->dev == DEV_KBD_CMD && off == 0 &&
	    !(data[0] & I8042_STATUS_SYS))
		abort();
}

static void fuzz_access(struct bus *bus, uint64_t addr, unsigned int len,
			bool is_write, uint64_t value)
{
	const struct fuzz_range *want = fuzz_lookup(bus, addr, len);
	unsigned int resets = st.resets, exits = st.exits, hits = st.hits;
	unsigned int panics = st.panics;
	struct pvpanic_stats pp;
	struct boottime_stats bt;
	uint8_t buf[FUZZ_BUF], lcr = st.com1.lcr, mcr = st.com1.mcr;
	unsigned int i;
	bool took;

	boottime_get_stats(&st.boottime, &bt);
	pvpanic_get_stats(&st.pvpanic, &pp);
	memset(buf, FUZZ_CANARY, sizeof(buf));
	if (is_write)
		le_put(buf, len, value);
	else
		memset(buf, 0xff, len);
	took = bus_dispatch(bus, addr, buf, len, is_write);
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != FUZZ_CANARY)
			abort();
	if (took != !!want || st.hits != hits + took)
		abort();
	if (!want) {
		if (st.resets != resets || st.exits != exits ||
		    st.panics != panics)
			abort();
		return;
	}
	if (st.hit != want || st.hit_off != addr - want->base)
		abort();
	fuzz_dev_check(want, addr - want->base, buf, len, is_write, resets,
		       exits, lcr, mcr);
	if (want->dev == DEV_BOOT_TIME)
		fuzz_bt_check(addr - want->base, buf, len, is_write, &bt);
	if (want->dev == DEV_PVPANIC)
		fuzz_pvpanic_check(addr - want->base, buf, len, is_write, &pp);
	else if (st.panics != panics)
		abort();
	if (st.com1.rx_count != st.rx_count ||
	    st.com1.h.irq_level != st.irq_level)
		abort();
}

static void fuzz_input(const uint8_t *bytes, size_t n)
{
	size_t room = SERIAL_RX_FIFO_SIZE - st.rx_count, i, took;

	took = serial_input(&st.com1, bytes, n);
	if (took != (n < room ? n : room))
		abort();
	for (i = 0; i < took; i++)
		fuzz_rx_push(bytes[i]);
	if (st.com1.h.irq_level != st.irq_level)
		abort();
}

static const uint64_t pio_targets[] = {
	FUZZ_PORT_COM1, FUZZ_PORT_I8042_DATA, FUZZ_PORT_I8042_CMD,
	FUZZ_PORT_EXIT, FUZZ_PORT_BOOT_TIME, FUZZ_PORT_PVPANIC,
};
static const unsigned int pio_lens[] = { 1, 2, 4, 3 };
static const unsigned int mmio_lens[] = { 1, 2, 4, 8 };

/*
 * One operation: [0] kind, [1] selector, [2..3] le16 offset, [4..11]
 * le64 value.
 *	kind bits 0-1: 0 PIO near a device, 1 PIO anywhere, 2 MMIO near
 *	the exit register (offset bit 15 clear) or the boot-time register
 *	(set), or anywhere (bit 7), 3 host input / new range
 *	kind bit 2: write; bits 3-4: width
 */
static void fuzz_op(const uint8_t *op)
{
	unsigned int kind = op[0] & 3, w = op[0] >> 3 & 3;
	bool is_write = op[0] & 4;
	uint16_t off16 = (uint16_t)le_get(op + 2, 2);
	uint64_t value = le_get(op + 4, 8), addr;

	switch (kind) {
	case 0:
		addr = pio_targets[op[1] % 6] + (off16 & 15) - 4;
		fuzz_access(&st.pio, addr & 0xffff, pio_lens[w], is_write,
			    value);
		break;
	case 1:
		fuzz_access(&st.pio, off16, pio_lens[w], is_write, value);
		break;
	case 2:
		addr = off16 & 0x8000 ? FUZZ_BOOT_TIME_MMIO : FUZZ_EXIT_MMIO;
		addr = op[0] & 0x80 ? value : addr + (off16 & 31) - 16;
		fuzz_access(&st.mmio, addr, mmio_lens[w], is_write,
			    (uint64_t)op[1] * 0x0101010101010101ULL);
		break;
	default:
		if (!is_write) {
			fuzz_input(op + 4, op[1] % 9);
			break;
		}
		/* An extra range: the bus refuses overlaps and wraps. */
		addr = op[0] & 0x80 ? value : off16;
		fuzz_register(op[0] & 0x40 ? &st.mmio : &st.pio, addr,
			      op[1] & 0x80 ? UINT64_MAX - (op[1] & 0x7f)
					   : op[1] % 17,
			      DEV_EXTRA, fuzz_extra, NULL);
		break;
	}
}

static int fuzz_setup(void)
{
	memset(&st, 0, sizeof(st));
	st.pio.name = "pio";
	st.mmio.name = "mmio";
	if (serial_init(&st.com1, null_fd, fuzz_irq, &st, FUZZ_GSI_COM1))
		return -1;
	i8042_init(&st.kbd, fuzz_reset, &st, fuzz_kbd_irq, &st, FUZZ_GSI_KBD);
	exitdev_init(&st.exitdev, fuzz_exit, &st);
	pvpanic_init(&st.pvpanic, fuzz_panicked, &st);
	if (boottime_init(&st.boottime, fuzz_bt_clock, &st, fuzz_bt_log, &st))
		return -1;
	fuzz_register(&st.pio, FUZZ_PORT_COM1, SERIAL_NR_REGS, DEV_SERIAL,
		      serial_access, &st.com1);
	fuzz_register(&st.pio, FUZZ_PORT_I8042_DATA, 1, DEV_KBD_DATA,
		      i8042_data_access, &st.kbd);
	fuzz_register(&st.pio, FUZZ_PORT_I8042_CMD, 1, DEV_KBD_CMD,
		      i8042_cmd_access, &st.kbd);
	fuzz_register(&st.pio, FUZZ_PORT_EXIT, EXITDEV_PIO_LEN, DEV_EXIT,
		      exitdev_access, &st.exitdev);
	fuzz_register(&st.mmio, FUZZ_EXIT_MMIO, EXITDEV_MMIO_LEN, DEV_EXIT,
		      exitdev_access, &st.exitdev);
	fuzz_register(&st.pio, FUZZ_PORT_BOOT_TIME, BOOT_TIME_PIO_LEN,
		      DEV_BOOT_TIME, boottime_access, &st.boottime);
	fuzz_register(&st.mmio, FUZZ_BOOT_TIME_MMIO, BOOT_TIME_MMIO_LEN,
		      DEV_BOOT_TIME, boottime_access, &st.boottime);
	fuzz_register(&st.pio, FUZZ_PORT_PVPANIC, PVPANIC_PIO_LEN,
		      DEV_PVPANIC, pvpanic_access, &st.pvpanic);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, n = size / FUZZ_OP_SIZE;

	if (null_fd < 0) {
		/* Transmitted bytes go somewhere that never blocks. */
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd < 0)
			abort();
		/*
		 * pvpanic's warnings (one kdump line and a burst of ignored
		 * events per input, as each input is a fresh device) would
		 * flood a long run; its counters are what is checked.
		 */
		log_set_level(LOG_ERROR);
	}
	if (fuzz_setup())
		return 0;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + i * FUZZ_OP_SIZE);
	serial_destroy(&st.com1);
	i8042_destroy(&st.kbd);
	boottime_destroy(&st.boottime);
	return 0;
}
