// SPDX-License-Identifier: Apache-2.0
/*
 * The keyboard controller reduced to its reset line. The controller holds
 * no state a guest can change, so the handlers need no lock.
 */
#include "devices/i8042.h"

#include <string.h>

void i8042_init(struct i8042 *dev, i8042_reset_fn reset, void *opaque)
{
	dev->reset = reset;
	dev->opaque = opaque;
}

static void i8042_put(uint8_t *data, unsigned int len, uint8_t val)
{
	if (!len)
		return;
	memset(data, 0, len > 8 ? 8 : len);
	data[0] = val;
}

void i8042_data_access(void *opaque, uint64_t off, uint8_t *data,
		       unsigned int len, bool is_write)
{
	(void)opaque;
	if (off == 0 && !is_write)
		i8042_put(data, len, 0); /* no keyboard, no data */
}

void i8042_cmd_access(void *opaque, uint64_t off, uint8_t *data,
		      unsigned int len, bool is_write)
{
	struct i8042 *dev = opaque;

	if (off != 0 || !len)
		return;
	if (!is_write) {
		/* Output buffer empty, input buffer empty, self-test passed. */
		i8042_put(data, len, I8042_STATUS_SYS);
		return;
	}
	if (data[0] == I8042_CMD_RESET && dev->reset)
		dev->reset(dev->opaque);
}
