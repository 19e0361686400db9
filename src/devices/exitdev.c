// SPDX-License-Identifier: Apache-2.0
/*
 * One write-only byte register that hands its value to the VMM as the exit
 * status. Stateless, so there is no lock.
 */
#include "devices/exitdev.h"

#include <string.h>

void exitdev_init(struct exitdev *dev, exitdev_exit_fn exit_fn, void *opaque)
{
	dev->exit_fn = exit_fn;
	dev->opaque = opaque;
}

void exitdev_access(void *opaque, uint64_t off, uint8_t *data,
		    unsigned int len, bool is_write)
{
	struct exitdev *dev = opaque;

	if (!len)
		return;
	if (!is_write) {
		memset(data, 0, len > 8 ? 8 : len);
		return;
	}
	if (off == 0 && dev->exit_fn)
		dev->exit_fn(dev->opaque, data[0]);
}
