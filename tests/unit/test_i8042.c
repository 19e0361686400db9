// SPDX-License-Identifier: Apache-2.0
/*
 * i8042: only command 0xfe resets; the controller answers the commands
 * Linux's i8042 driver sends at probe time and the keyboard the ones
 * atkbd sends; Ctrl-Alt-Del reaches the guest as the set 2 bytes of
 * three presses and three releases, one IRQ 1 edge per byte, whole or
 * not at all, also while another thread reads the data port.
 */
#include "devices/i8042.h"
#include "irq_log.h"
#include "test.h"

#include <pthread.h>

#define GSI_KBD 1

struct reset_log {
	int count;
	void *opaque;
};

static void fake_reset(void *opaque)
{
	struct reset_log *l = opaque;

	l->count++;
	l->opaque = opaque;
}

static uint8_t status(struct i8042 *dev)
{
	uint8_t b = 0xff;

	i8042_cmd_access(dev, 0, &b, 1, false);
	return b;
}

static uint8_t data_read(struct i8042 *dev)
{
	uint8_t b = 0xff;

	i8042_data_access(dev, 0, &b, 1, false);
	return b;
}

static void cmd(struct i8042 *dev, uint8_t c)
{
	i8042_cmd_access(dev, 0, &c, 1, true);
}

static void data_write(struct i8042 *dev, uint8_t b)
{
	i8042_data_access(dev, 0, &b, 1, true);
}

/* Only 0xfe resets; wide writes use their low byte. */
static void test_reset(void)
{
	static const uint8_t others[] = { 0x20, 0xaa, 0xad, 0xf0, 0xfc,
					  0xff, 0x00, 0xa9, 0xd0 };
	struct reset_log l = { 0 };
	struct i8042 dev;
	uint8_t data[4];
	size_t i;

	i8042_init(&dev, fake_reset, &l, NULL, NULL, 0);
	for (i = 0; i < sizeof(others); i++) {
		cmd(&dev, others[i]);
		data_write(&dev, 0xfe); /* never a reset on the data port */
	}
	CHECK_EQ(l.count, 0);
	cmd(&dev, 0xfe);
	CHECK_EQ(l.count, 1);
	CHECK(l.opaque == &l);
	data[0] = 0xfe;
	data[1] = 0x12;
	i8042_cmd_access(&dev, 0, data, 2, true);
	CHECK_EQ(l.count, 2);
	data[0] = 0x12;
	data[1] = 0xfe;
	i8042_cmd_access(&dev, 0, data, 2, true);
	CHECK_EQ(l.count, 2);
	i8042_destroy(&dev);
	/* No callback: 0xfe is harmless. */
	i8042_init(&dev, NULL, NULL, NULL, NULL, 0);
	cmd(&dev, 0xfe);
	i8042_destroy(&dev);
}

/* Idle: status "nothing to read, self-test passed", data 0, any width. */
static void test_idle_reads(void)
{
	static const unsigned int lens[] = { 1, 2, 4 };
	struct i8042 dev;
	uint8_t data[4];
	size_t i;

	i8042_init(&dev, NULL, NULL, NULL, NULL, 0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(data, 0xff, sizeof(data));
		i8042_cmd_access(&dev, 0, data, lens[i], false);
		CHECK_EQ(data[0] & I8042_STATUS_OBF, 0);
		CHECK_EQ(data[0] & 0x02, 0); /* input buffer empty */
		CHECK(data[0] & I8042_STATUS_SYS);
		CHECK(data[0] != 0xff); /* Linux: 0xff means no controller */
		CHECK_EQ(data[lens[i] - 1], lens[i] == 1 ? data[0] : 0);
		memset(data, 0xff, sizeof(data));
		i8042_data_access(&dev, 0, data, lens[i], false);
		CHECK_EQ(data[0], 0);
		CHECK_EQ(data[lens[i] - 1], 0);
	}
	i8042_destroy(&dev);
}

/* What Linux's i8042 probe and atkbd's probe send, and the answers. */
static void test_probe_answers(void)
{
	static const struct {
		const char *what;
		bool is_cmd;
		uint8_t byte;
		uint8_t answer[3];
		unsigned int n;
	} rows[] = {
		{ "read command byte", true, 0x20, { I8042_CTR_DEFAULT }, 1 },
		{ "write command byte", true, 0x60, { 0 }, 0 },
		{ "... its data", false, 0x45, { 0 }, 0 },
		{ "read it back", true, 0x20, { 0x45 }, 1 },
		{ "controller self-test", true, 0xaa, { 0x55 }, 1 },
		{ "keyboard interface test", true, 0xab, { 0x00 }, 1 },
		{ "aux loop", true, 0xd3, { 0 }, 0 },
		{ "... its byte, not as aux", false, 0x5a, { 0x5a }, 1 },
		{ "aux test: no device", true, 0xa9, { 0x01 }, 1 },
		{ "disable aux", true, 0xa7, { 0 }, 0 },
		{ "command byte has AUXDIS", true, 0x20, { 0x65 }, 1 },
		{ "enable aux", true, 0xa8, { 0 }, 0 },
		{ "command byte without", true, 0x20, { 0x45 }, 1 },
		{ "keyboard get id", false, 0xf2, { 0xfa, 0xab, 0x83 }, 3 },
		{ "keyboard set leds", false, 0xed, { 0xfa }, 1 },
		{ "... their value", false, 0x02, { 0xfa }, 1 },
		{ "keyboard which scan set", false, 0xf0, { 0xfa }, 1 },
		{ "... 0: ask", false, 0x00, { 0xfa, 0x02 }, 2 },
		{ "keyboard reset, disable", false, 0xf5, { 0xfa }, 1 },
		{ "keyboard enable", false, 0xf4, { 0xfa }, 1 },
		{ "keyboard reset", false, 0xff, { 0xfa, 0xaa }, 2 },
		{ "keyboard echo", false, 0xee, { 0xee }, 1 },
		{ "keyboard unknown", false, 0x01, { 0xfe }, 1 },
		{ "read output port", true, 0xd0, { 0x03 }, 1 },
		{ "a RAM byte", true, 0x21, { 0x00 }, 1 },
	};
	struct i8042 dev;
	size_t i, k;

	i8042_init(&dev, NULL, NULL, NULL, NULL, 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].is_cmd)
			cmd(&dev, rows[i].byte);
		else
			data_write(&dev, rows[i].byte);
		CHECK_EQ(!!(status(&dev) & I8042_STATUS_CMD), rows[i].is_cmd);
		for (k = 0; k < rows[i].n; k++) {
			if (!(status(&dev) & I8042_STATUS_OBF))
				fprintf(stderr, "row %zu (%s): answer short\n",
					i, rows[i].what);
			CHECK(status(&dev) & I8042_STATUS_OBF);
			CHECK_EQ(data_read(&dev), rows[i].answer[k]);
		}
		if (status(&dev) & I8042_STATUS_OBF)
			fprintf(stderr, "row %zu (%s): answer long\n", i,
				rows[i].what);
		CHECK_EQ(status(&dev) & I8042_STATUS_OBF, 0);
	}
	i8042_destroy(&dev);
}

static const uint8_t cad[I8042_CAD_LEN] = {
	0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0, 0x71, 0xf0, 0x11, 0xf0, 0x14,
};

/*
 * Ctrl-Alt-Del: the set 2 bytes in order, IRQ 1 raised for each (an
 * edge per byte: the line drops as each byte is read); with the
 * interrupt disabled in the command byte, the same bytes by polling.
 */
static void test_ctrl_alt_del(void)
{
	struct irq_log irq = { 0 };
	struct i8042_stats st;
	struct i8042 dev;
	unsigned int k;

	i8042_init(&dev, NULL, NULL, fake_irq, &irq, GSI_KBD);
	i8042_ctrl_alt_del(&dev);
	for (k = 0; k < I8042_CAD_LEN; k++) {
		CHECK_EQ(irq.level, 1);
		CHECK(status(&dev) & I8042_STATUS_OBF);
		CHECK_EQ(data_read(&dev), cad[k]);
	}
	CHECK_EQ(irq.level, 0);
	CHECK_EQ(irq.gsi, GSI_KBD);
	CHECK_EQ(irq.calls, 2 * I8042_CAD_LEN); /* up and down per byte */
	CHECK_EQ(irq.repeats, 0);
	CHECK_EQ(status(&dev) & I8042_STATUS_OBF, 0);

	/* Interrupt off (command byte 0x44): no edge, bytes by polling. */
	cmd(&dev, 0x60);
	data_write(&dev, 0x44);
	irq.calls = 0;
	i8042_ctrl_alt_del(&dev);
	for (k = 0; k < I8042_CAD_LEN; k++)
		CHECK_EQ(data_read(&dev), cad[k]);
	CHECK_EQ(irq.calls, 0);
	/* Turned on with a byte waiting: the line goes up then. */
	i8042_ctrl_alt_del(&dev);
	cmd(&dev, 0x60);
	data_write(&dev, 0x45);
	CHECK_EQ(irq.level, 1);

	/* Full: a second sequence finds no room and is dropped whole. */
	i8042_ctrl_alt_del(&dev);
	for (k = 0; k < I8042_CAD_LEN; k++)
		CHECK_EQ(data_read(&dev), cad[k]);
	CHECK_EQ(status(&dev) & I8042_STATUS_OBF, 0);
	i8042_get_stats(&dev, &st);
	CHECK_EQ(st.cad_sent, 3);
	CHECK_EQ(st.cad_dropped, 1);
	i8042_destroy(&dev);
}

#define RACE_ROUNDS 2000

static void *press_thread(void *arg)
{
	unsigned int i;

	for (i = 0; i < RACE_ROUNDS; i++)
		i8042_ctrl_alt_del(arg);
	return NULL;
}

/* Another thread presses while this one (a vCPU) reads: the bytes read
 * are whole sequences, never interleaved or cut. */
static void test_race(void)
{
	struct i8042_stats st;
	struct i8042 dev;
	pthread_t t;
	uint64_t got = 0;
	bool done = false, ok = true;

	i8042_init(&dev, NULL, NULL, NULL, NULL, 0);
	CHECK_EQ(pthread_create(&t, NULL, press_thread, &dev), 0);
	while (!done) {
		i8042_get_stats(&dev, &st);
		done = st.cad_sent + st.cad_dropped == RACE_ROUNDS;
		while (status(&dev) & I8042_STATUS_OBF) {
			if (data_read(&dev) != cad[got % I8042_CAD_LEN])
				ok = false;
			got++;
		}
	}
	pthread_join(t, NULL);
	while (status(&dev) & I8042_STATUS_OBF) {
		ok &= data_read(&dev) == cad[got % I8042_CAD_LEN];
		got++;
	}
	i8042_get_stats(&dev, &st);
	CHECK(ok);
	CHECK_EQ(got, st.cad_sent * I8042_CAD_LEN);
	CHECK(st.cad_sent >= 1);
	i8042_destroy(&dev);
}

int main(void)
{
	test_reset();
	test_idle_reads();
	test_probe_answers();
	test_ctrl_alt_del();
	test_race();
	return test_done();
}
