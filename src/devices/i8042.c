// SPDX-License-Identifier: Apache-2.0
/*
 * The keyboard controller and its keyboard (i8042.h). Bytes for the guest
 * wait in a small queue; the oldest is the output buffer. While it holds
 * a byte and the command byte enables it, IRQ 1 is high; reading the byte
 * drops the line, and the next byte raises it again, so an edge-triggered
 * IOAPIC pin sees one edge per byte. One mutex serialises the vCPU
 * threads' port accesses and i8042_ctrl_alt_del(); the guest controls
 * every byte written, so each is taken as a value, never as a length.
 */
#include "devices/i8042.h"

#include <errno.h>
#include <string.h>

#include "snapshot/snap.h"

/* Keyboard commands (data port writes outside a controller command). */
#define KBD_SET_LEDS 0xed  /* + parameter */
#define KBD_ECHO 0xee
#define KBD_SCAN_SET 0xf0  /* + parameter; 0 asks which */
#define KBD_GET_ID 0xf2
#define KBD_TYPEMATIC 0xf3 /* + parameter */
#define KBD_ENABLE 0xf4
#define KBD_RESET_DIS 0xf5
#define KBD_DEFAULTS 0xf6
#define KBD_RESET 0xff

/* Keyboard answers. */
#define KBD_ACK 0xfa
#define KBD_RESEND 0xfe
#define KBD_BAT_OK 0xaa /* self-test passed, after a reset */
#define KBD_ID_1 0xab   /* an MF2 keyboard */
#define KBD_ID_2 0x83

#define AUX_TEST_NO_DEVICE 0x01 /* clock line stuck low: nothing there */
#define OUTP_DEFAULT 0x03       /* reset line high, A20 on */

/* Set 2: press Ctrl, Alt, Delete (E0-prefixed), release in reverse. */
static const uint8_t cad_codes[I8042_CAD_LEN] = {
	0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0, 0x71, 0xf0, 0x11, 0xf0, 0x14,
};

void i8042_init(struct i8042 *dev, i8042_reset_fn reset, void *opaque,
		irq_set_fn irq, void *irq_opaque, uint32_t gsi)
{
	memset(dev, 0, sizeof(*dev));
	dev->reset = reset;
	dev->opaque = opaque;
	dev->irq = irq;
	dev->irq_opaque = irq_opaque;
	dev->gsi = gsi;
	pthread_mutex_init(&dev->lock, NULL);
	dev->ctr = I8042_CTR_DEFAULT;
	dev->outp = OUTP_DEFAULT;
}

void i8042_destroy(struct i8042 *dev)
{
	pthread_mutex_destroy(&dev->lock);
}

static void i8042_set_level_locked(struct i8042 *dev, bool level)
{
	if (dev->level == level)
		return;
	dev->level = level;
	if (dev->irq)
		dev->irq(dev->irq_opaque, dev->gsi, level);
}

/* The line follows "output buffer full, keyboard interrupt enabled". */
static void i8042_update_irq_locked(struct i8042 *dev)
{
	i8042_set_level_locked(dev, dev->len &&
					    (dev->ctr & I8042_CTR_KBDINT));
}

/* Queue @n bytes, all or none. Return: whether they went in. */
static bool i8042_push_locked(struct i8042 *dev, const uint8_t *b,
			      unsigned int n)
{
	unsigned int i;

	if (n > I8042_QUEUE - dev->len)
		return false;
	for (i = 0; i < n; i++)
		dev->queue[(dev->head + dev->len++) % I8042_QUEUE] = b[i];
	i8042_update_irq_locked(dev);
	return true;
}

static void i8042_push1_locked(struct i8042 *dev, uint8_t b)
{
	i8042_push_locked(dev, &b, 1);
}

/* The guest reads the output buffer: the next byte, if any, takes its
 * place with an edge of its own. */
static uint8_t i8042_pop_locked(struct i8042 *dev)
{
	uint8_t b;

	if (!dev->len)
		return 0;
	b = dev->queue[dev->head];
	dev->head = (dev->head + 1) % I8042_QUEUE;
	dev->len--;
	i8042_set_level_locked(dev, false);
	i8042_update_irq_locked(dev);
	return b;
}

static void i8042_put(uint8_t *data, unsigned int len, uint8_t val)
{
	if (!len)
		return;
	memset(data, 0, len > 8 ? 8 : len);
	data[0] = val;
}

/* A byte written to the keyboard (no controller command pending). */
static void i8042_kbd_write_locked(struct i8042 *dev, uint8_t b)
{
	static const uint8_t id[] = { KBD_ACK, KBD_ID_1, KBD_ID_2 };
	static const uint8_t reset[] = { KBD_ACK, KBD_BAT_OK };
	static const uint8_t set2[] = { KBD_ACK, 2 };

	if (dev->kbd_want) {
		/* The parameter of LEDs, typematic rate or scan set. */
		if (dev->kbd_want == KBD_SCAN_SET && b == 0)
			i8042_push_locked(dev, set2, sizeof(set2));
		else
			i8042_push1_locked(dev, KBD_ACK);
		dev->kbd_want = 0;
		return;
	}
	switch (b) {
	case KBD_SET_LEDS:
	case KBD_SCAN_SET:
	case KBD_TYPEMATIC:
		dev->kbd_want = b;
		i8042_push1_locked(dev, KBD_ACK);
		break;
	case KBD_ECHO:
		i8042_push1_locked(dev, KBD_ECHO);
		break;
	case KBD_GET_ID:
		i8042_push_locked(dev, id, sizeof(id));
		break;
	case KBD_ENABLE:
	case KBD_RESET_DIS:
	case KBD_DEFAULTS:
		i8042_push1_locked(dev, KBD_ACK);
		break;
	case KBD_RESET:
		i8042_push_locked(dev, reset, sizeof(reset));
		break;
	default:
		i8042_push1_locked(dev, KBD_RESEND);
		break;
	}
}

/* The data byte of the controller command @cmd. */
static void i8042_cmd_data_locked(struct i8042 *dev, uint8_t cmd, uint8_t b)
{
	switch (cmd) {
	case I8042_CMD_WRITE_CTR:
		dev->ctr = b;
		i8042_update_irq_locked(dev);
		break;
	case I8042_CMD_WRITE_OUTP:
		dev->outp = b;
		break;
	case I8042_CMD_WRITE_KBD_OUT:
	case I8042_CMD_WRITE_AUX_OUT:
		/* Back as keyboard data: no auxiliary port loops it. */
		i8042_push1_locked(dev, b);
		break;
	default:
		/* I8042_CMD_WRITE_AUX: no mouse listens. 0x61-0x7f:
		 * controller RAM nobody reads back. */
		break;
	}
}

void i8042_data_access(void *opaque, uint64_t off, uint8_t *data,
		       unsigned int len, bool is_write)
{
	struct i8042 *dev = opaque;
	uint8_t cmd;

	if (off != 0 || !len)
		return;
	pthread_mutex_lock(&dev->lock);
	if (!is_write) {
		i8042_put(data, len, i8042_pop_locked(dev));
	} else {
		dev->status_cmd = 0;
		cmd = dev->want;
		dev->want = 0;
		if (cmd)
			i8042_cmd_data_locked(dev, cmd, data[0]);
		else
			i8042_kbd_write_locked(dev, data[0]);
	}
	pthread_mutex_unlock(&dev->lock);
}

/* A controller command. Return: whether it asks for a reset. */
static bool i8042_command_locked(struct i8042 *dev, uint8_t cmd)
{
	dev->want = 0;
	switch (cmd) {
	case I8042_CMD_READ_CTR:
		i8042_push1_locked(dev, dev->ctr);
		break;
	case I8042_CMD_AUX_DISABLE:
	case I8042_CMD_AUX_ENABLE:
		dev->ctr = cmd == I8042_CMD_AUX_DISABLE ?
				   dev->ctr | I8042_CTR_AUXDIS :
				   dev->ctr & ~I8042_CTR_AUXDIS;
		break;
	case I8042_CMD_AUX_TEST:
		i8042_push1_locked(dev, AUX_TEST_NO_DEVICE);
		break;
	case I8042_CMD_SELF_TEST:
		i8042_push1_locked(dev, 0x55);
		break;
	case I8042_CMD_KBD_TEST:
		i8042_push1_locked(dev, 0x00);
		break;
	case I8042_CMD_KBD_DISABLE:
	case I8042_CMD_KBD_ENABLE:
		dev->ctr = cmd == I8042_CMD_KBD_DISABLE ?
				   dev->ctr | I8042_CTR_KBDDIS :
				   dev->ctr & ~I8042_CTR_KBDDIS;
		break;
	case I8042_CMD_READ_OUTP:
		i8042_push1_locked(dev, dev->outp);
		break;
	case I8042_CMD_RESET:
		dev->stats.resets++;
		return true;
	default:
		/* Commands with a data byte: 0x60-0x7f (controller RAM,
		 * 0x60 the command byte), 0xd1-0xd4. Reads of RAM bytes
		 * other than the command byte (0x21-0x3f) answer 0. */
		if ((cmd >= I8042_CMD_WRITE_CTR && cmd <= 0x7f) ||
		    (cmd >= I8042_CMD_WRITE_OUTP && cmd <= I8042_CMD_WRITE_AUX))
			dev->want = cmd;
		else if (cmd > I8042_CMD_READ_CTR && cmd <= 0x3f)
			i8042_push1_locked(dev, 0);
		break;
	}
	return false;
}

void i8042_cmd_access(void *opaque, uint64_t off, uint8_t *data,
		      unsigned int len, bool is_write)
{
	struct i8042 *dev = opaque;
	bool reset = false;

	if (off != 0 || !len)
		return;
	pthread_mutex_lock(&dev->lock);
	if (!is_write) {
		i8042_put(data, len, (uint8_t)(I8042_STATUS_SYS |
					       I8042_STATUS_UNLOCK |
					       dev->status_cmd |
					       (dev->len ? I8042_STATUS_OBF :
							   0)));
	} else {
		dev->status_cmd = I8042_STATUS_CMD;
		reset = i8042_command_locked(dev, data[0]);
	}
	pthread_mutex_unlock(&dev->lock);
	/* Outside the lock: the callback stops the VM. */
	if (reset && dev->reset)
		dev->reset(dev->opaque);
}

void i8042_ctrl_alt_del(struct i8042 *dev)
{
	pthread_mutex_lock(&dev->lock);
	if (i8042_push_locked(dev, cad_codes, sizeof(cad_codes)))
		dev->stats.cad_sent++;
	else
		dev->stats.cad_dropped++;
	pthread_mutex_unlock(&dev->lock);
}

void i8042_get_stats(struct i8042 *dev, struct i8042_stats *out)
{
	pthread_mutex_lock(&dev->lock);
	*out = dev->stats;
	pthread_mutex_unlock(&dev->lock);
}

void i8042_save(struct i8042 *dev, struct snap_writer *w)
{
	unsigned int i;

	pthread_mutex_lock(&dev->lock);
	snap_put_u8(w, dev->ctr);
	snap_put_u8(w, dev->outp);
	snap_put_u8(w, dev->status_cmd);
	snap_put_u8(w, dev->want);
	snap_put_u8(w, dev->kbd_want);
	snap_put_u32(w, dev->len);
	for (i = 0; i < dev->len; i++)
		snap_put_u8(w, dev->queue[(dev->head + i) % I8042_QUEUE]);
	pthread_mutex_unlock(&dev->lock);
}

int i8042_load(struct i8042 *dev, struct snap_reader *r)
{
	uint8_t regs[5], q[I8042_QUEUE];
	uint32_t n;

	snap_get_bytes(r, regs, sizeof(regs));
	n = snap_get_u32(r);
	if (r->bad || n > I8042_QUEUE)
		return -EINVAL;
	snap_get_bytes(r, q, n);
	if (r->bad || !snap_reader_done(r))
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	dev->ctr = regs[0];
	dev->outp = regs[1];
	dev->status_cmd = regs[2] ? I8042_STATUS_CMD : 0;
	dev->want = regs[3];
	dev->kbd_want = regs[4];
	memcpy(dev->queue, q, n);
	dev->head = 0;
	dev->len = n;
	i8042_update_irq_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}
