// SPDX-License-Identifier: Apache-2.0
/*
 * i8042: status reads "nothing to read, ready for input", data reads 0, and
 * only command 0xfe on the command port resets; every other command and
 * every data-port write is ignored.
 */
#include "devices/i8042.h"
#include "test.h"

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

static void test_commands(void)
{
	static const struct {
		uint8_t cmd;
		int resets;
	} rows[] = {
		{ 0xfe, 1 }, /* pulse reset line */
		{ 0x20, 0 }, /* read command byte */
		{ 0x60, 0 }, /* write command byte */
		{ 0xaa, 0 }, /* self-test */
		{ 0xad, 0 }, /* disable keyboard */
		{ 0xd1, 0 }, /* write output port */
		{ 0xf0, 0 },
		{ 0xfc, 0 },
		{ 0xff, 0 }, /* pulse nothing */
		{ 0x00, 0 },
	};
	struct reset_log l = { 0 };
	struct i8042 dev;
	uint8_t data[4];
	size_t i;

	i8042_init(&dev, fake_reset, &l);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		l.count = 0;
		data[0] = rows[i].cmd;
		i8042_cmd_access(&dev, 0, data, 1, true);
		CHECK_EQ(l.count, rows[i].resets);
		/* The same byte on the data port never resets. */
		i8042_data_access(&dev, 0, data, 1, true);
		CHECK_EQ(l.count, rows[i].resets);
	}
	CHECK(l.opaque == &l);

	/* A wide write uses its low byte. */
	l.count = 0;
	data[0] = 0xfe;
	data[1] = 0x12;
	i8042_cmd_access(&dev, 0, data, 2, true);
	CHECK_EQ(l.count, 1);
	data[0] = 0x12;
	data[1] = 0xfe;
	i8042_cmd_access(&dev, 0, data, 2, true);
	CHECK_EQ(l.count, 1);

	/* No callback: 0xfe is harmless. */
	i8042_init(&dev, NULL, NULL);
	data[0] = 0xfe;
	i8042_cmd_access(&dev, 0, data, 1, true);
}

static void test_reads(void)
{
	static const unsigned int lens[] = { 1, 2, 4 };
	struct reset_log l = { 0 };
	struct i8042 dev;
	uint8_t data[4];
	size_t i;

	i8042_init(&dev, fake_reset, &l);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(data, 0xff, sizeof(data));
		i8042_cmd_access(&dev, 0, data, lens[i], false);
		CHECK_EQ(data[0] & 0x01, 0); /* output buffer empty */
		CHECK_EQ(data[0] & 0x02, 0); /* input buffer empty */
		CHECK_EQ(data[0], I8042_STATUS_SYS);
		CHECK_EQ(data[lens[i] - 1],
			 lens[i] == 1 ? I8042_STATUS_SYS : 0);

		memset(data, 0xff, sizeof(data));
		i8042_data_access(&dev, 0, data, lens[i], false);
		CHECK_EQ(data[0], 0);
		CHECK_EQ(data[lens[i] - 1], 0);
	}
	CHECK_EQ(l.count, 0);
}

int main(void)
{
	test_commands();
	test_reads();
	return test_done();
}
