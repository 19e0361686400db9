// SPDX-License-Identifier: Apache-2.0
/*
 * 16550A register model. Transmission completes at once, so THR and the
 * transmitter are always empty (LSR.THRE and LSR.TEMT stay set): the byte
 * goes into a bounded host buffer that the console output thread drains
 * (util/outbuf.c), and is dropped and counted when that is full, so a
 * stalled reader never stalls a vCPU. One mutex serialises vCPU accesses
 * and host input; the interrupt level is recomputed after every change and
 * reported, under the lock, only when it moves.
 */
#include "devices/serial.h"

#include <errno.h>
#include <string.h>

#include "devices/uart_host.h"
#include "snapshot/snap.h"
#include "util/log.h"

/* Register offsets (DLAB is LCR bit 7). */
#define REG_RBR_THR_DLL 0
#define REG_IER_DLM 1
#define REG_IIR_FCR 2
#define REG_LCR 3
#define REG_MCR 4
#define REG_LSR 5
#define REG_MSR 6
#define REG_SCR 7

#define IER_RDI 0x01  /* received data available */
#define IER_THRI 0x02 /* transmitter holding register empty */
#define IER_RLSI 0x04 /* receiver line status */
#define IER_MSI 0x08  /* modem status */
#define IER_MASK 0x0f

#define IIR_NO_INT 0x01
#define IIR_MSI 0x00
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_RLSI 0x06
#define IIR_FIFO_ENABLED 0xc0

#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define FCR_CLEAR_TX 0x04
#define FCR_KEEP 0xc9 /* enable, DMA mode, RX trigger level */

#define LCR_DLAB 0x80

#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10
#define MCR_MASK 0x1f

#define LSR_DR 0x01
#define LSR_OE 0x02
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

#define MSR_DCTS 0x01
#define MSR_DDSR 0x02
#define MSR_TERI 0x04
#define MSR_DDCD 0x08
#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80

/* Modem status lines (MSR bits 4-7) as the guest would see them now. */
static uint8_t serial_msr_lines_locked(const struct serial *s)
{
	uint8_t m = 0;

	if (!(s->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS; /* the host is listening */
	if (s->mcr & MCR_DTR)
		m |= MSR_DSR;
	if (s->mcr & MCR_RTS)
		m |= MSR_CTS;
	if (s->mcr & MCR_OUT1)
		m |= MSR_RI;
	if (s->mcr & MCR_OUT2)
		m |= MSR_DCD;
	return m;
}

/* Highest-priority pending interrupt, as IIR bits 0-3. */
static uint8_t serial_iid_locked(const struct serial *s)
{
	if ((s->ier & IER_RLSI) && s->lsr_err)
		return IIR_RLSI;
	if ((s->ier & IER_RDI) && s->rx_count)
		return IIR_RDI;
	if ((s->ier & IER_THRI) && s->thre_pending)
		return IIR_THRI;
	if ((s->ier & IER_MSI) && s->msr_delta)
		return IIR_MSI;
	return IIR_NO_INT;
}

/* PC wiring: OUT2 gates the UART's interrupt output onto the ISA line. */
static void serial_update_irq_locked(struct serial *s)
{
	int level = serial_iid_locked(s) != IIR_NO_INT && (s->mcr & MCR_OUT2);

	uart_host_irq_locked(&s->h, level);
}

static void serial_room_check_locked(struct serial *s)
{
	uart_host_room_locked(&s->h, s->rx_count <= SERIAL_RX_FIFO_SIZE / 2);
}

/* Append one byte; false when the FIFO is full. */
static bool serial_rx_push_locked(struct serial *s, uint8_t byte)
{
	if (s->rx_count == SERIAL_RX_FIFO_SIZE)
		return false;
	s->rx[(s->rx_head + s->rx_count) % SERIAL_RX_FIFO_SIZE] = byte;
	s->rx_count++;
	return true;
}

static uint8_t serial_rx_pop_locked(struct serial *s)
{
	uint8_t byte;

	if (!s->rx_count)
		return 0;
	byte = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % SERIAL_RX_FIFO_SIZE;
	s->rx_count--;
	serial_room_check_locked(s);
	return byte;
}

static void serial_tx_locked(struct serial *s, uint8_t byte)
{
	if (s->mcr & MCR_LOOP) {
		if (!serial_rx_push_locked(s, byte)) {
			s->lsr_err |= LSR_OE;
			s->rx_overruns++;
		}
		return;
	}
	uart_host_put_locked(&s->h, byte);
}

static void serial_set_mcr_locked(struct serial *s, uint8_t val)
{
	uint8_t old = serial_msr_lines_locked(s), now, changed;

	s->mcr = val & MCR_MASK;
	now = serial_msr_lines_locked(s);
	changed = old ^ now;
	if (changed & MSR_CTS)
		s->msr_delta |= MSR_DCTS;
	if (changed & MSR_DSR)
		s->msr_delta |= MSR_DDSR;
	if ((old & MSR_RI) && !(now & MSR_RI))
		s->msr_delta |= MSR_TERI; /* trailing edge only */
	if (changed & MSR_DCD)
		s->msr_delta |= MSR_DDCD;
}

static void serial_set_fcr_locked(struct serial *s, uint8_t val)
{
	s->fcr = val & FCR_KEEP;
	if (val & FCR_CLEAR_RX) {
		s->rx_head = 0;
		s->rx_count = 0;
		serial_room_check_locked(s);
	}
	/* FCR_CLEAR_TX: nothing is ever queued for transmission. */
}

static void serial_write_locked(struct serial *s, unsigned int reg,
				uint8_t val)
{
	bool dlab = s->lcr & LCR_DLAB;
	uint8_t old;

	switch (reg) {
	case REG_RBR_THR_DLL:
		if (dlab) {
			s->dll = val;
			break;
		}
		serial_tx_locked(s, val);
		s->thre_pending = true; /* THR is empty again at once */
		break;
	case REG_IER_DLM:
		if (dlab) {
			s->dlm = val;
			break;
		}
		old = s->ier;
		s->ier = val & IER_MASK;
		/* Enabling THRI while THR is empty raises it (16550). */
		if (!(old & IER_THRI) && (s->ier & IER_THRI))
			s->thre_pending = true;
		break;
	case REG_IIR_FCR:
		serial_set_fcr_locked(s, val);
		break;
	case REG_LCR:
		s->lcr = val;
		break;
	case REG_MCR:
		serial_set_mcr_locked(s, val);
		break;
	case REG_SCR:
		s->scr = val;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

static uint8_t serial_read_locked(struct serial *s, unsigned int reg)
{
	bool dlab = s->lcr & LCR_DLAB;
	uint8_t val;

	switch (reg) {
	case REG_RBR_THR_DLL:
		return dlab ? s->dll : serial_rx_pop_locked(s);
	case REG_IER_DLM:
		return dlab ? s->dlm : s->ier;
	case REG_IIR_FCR:
		val = serial_iid_locked(s);
		if (val == IIR_THRI)
			s->thre_pending = false; /* reading IIR acknowledges */
		if (s->fcr & FCR_ENABLE)
			val |= IIR_FIFO_ENABLED;
		return val;
	case REG_LCR:
		return s->lcr;
	case REG_MCR:
		return s->mcr;
	case REG_LSR:
		val = LSR_THRE | LSR_TEMT | s->lsr_err;
		if (s->rx_count)
			val |= LSR_DR;
		s->lsr_err = 0;
		return val;
	case REG_MSR:
		val = serial_msr_lines_locked(s) | s->msr_delta;
		s->msr_delta = 0;
		return val;
	case REG_SCR:
		return s->scr;
	default:
		return 0;
	}
}

void serial_access(void *opaque, uint64_t off, uint8_t *data,
		   unsigned int len, bool is_write)
{
	struct serial *s = opaque;
	uint8_t val;

	if (off >= SERIAL_NR_REGS || !len)
		return;
	pthread_mutex_lock(&s->h.lock);
	if (is_write) {
		serial_write_locked(s, (unsigned int)off, data[0]);
	} else {
		val = serial_read_locked(s, (unsigned int)off);
		memset(data, 0, len > 8 ? 8 : len);
		data[0] = val;
	}
	serial_update_irq_locked(s);
	pthread_mutex_unlock(&s->h.lock);
}

size_t serial_input(struct serial *s, const uint8_t *buf, size_t n)
{
	size_t i;

	pthread_mutex_lock(&s->h.lock);
	for (i = 0; i < n; i++)
		if (!serial_rx_push_locked(s, buf[i]))
			break;
	if (i < n)
		s->h.room_wanted = true;
	serial_update_irq_locked(s);
	pthread_mutex_unlock(&s->h.lock);
	return i;
}

int serial_room_fd(const struct serial *s)
{
	return s->h.room_fd;
}

int serial_init(struct serial *s, int out_fd, irq_set_fn irq,
		void *irq_opaque, uint32_t gsi)
{
	memset(s, 0, sizeof(*s));
	s->dll = 12; /* 9600 baud, the BIOS default */
	s->lcr = 0x03; /* 8N1 */
	return uart_host_init(&s->h, out_fd, SERIAL_TX_BUF_SIZE, irq,
			      irq_opaque, gsi);
}

int serial_close_output(struct serial *s, unsigned int timeout_ms)
{
	return uart_host_close_output(&s->h, timeout_ms);
}

void serial_tx_stats(struct serial *s, struct outbuf_stats *st)
{
	uart_host_stats(&s->h, st);
}

void serial_destroy(struct serial *s)
{
	uart_host_destroy(&s->h, SERIAL_TX_FLUSH_MS);
}

void serial_save(struct serial *s, struct snap_writer *w)
{
	unsigned int i;

	pthread_mutex_lock(&s->h.lock);
	snap_put_u8(w, s->ier);
	snap_put_u8(w, s->lcr);
	snap_put_u8(w, s->mcr);
	snap_put_u8(w, s->fcr);
	snap_put_u8(w, s->scr);
	snap_put_u8(w, s->dll);
	snap_put_u8(w, s->dlm);
	snap_put_u8(w, s->lsr_err);
	snap_put_u8(w, s->msr_delta);
	snap_put_u8(w, s->thre_pending);
	snap_put_u32(w, s->rx_count);
	for (i = 0; i < s->rx_count; i++)
		snap_put_u8(w, s->rx[(s->rx_head + i) % SERIAL_RX_FIFO_SIZE]);
	pthread_mutex_unlock(&s->h.lock);
}

int serial_load(struct serial *s, struct snap_reader *r)
{
	uint8_t regs[10], rx[SERIAL_RX_FIFO_SIZE];
	uint32_t n, i;

	snap_get_bytes(r, regs, sizeof(regs));
	n = snap_get_u32(r);
	if (r->bad || n > SERIAL_RX_FIFO_SIZE)
		return -EINVAL;
	snap_get_bytes(r, rx, n);
	if (r->bad || !snap_reader_done(r))
		return -EINVAL;
	pthread_mutex_lock(&s->h.lock);
	s->ier = regs[0] & 0x0f;
	s->lcr = regs[1];
	s->mcr = regs[2] & 0x1f;
	s->fcr = regs[3] & FCR_KEEP;
	s->scr = regs[4];
	s->dll = regs[5];
	s->dlm = regs[6];
	s->lsr_err = regs[7] & LSR_OE;
	s->msr_delta = regs[8] & 0x0f;
	s->thre_pending = regs[9] != 0;
	s->rx_head = 0;
	s->rx_count = n;
	for (i = 0; i < n; i++)
		s->rx[i] = rx[i];
	serial_room_check_locked(s);
	serial_update_irq_locked(s);
	pthread_mutex_unlock(&s->h.lock);
	return 0;
}
