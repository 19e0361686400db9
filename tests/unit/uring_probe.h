/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uring_works(): can this kernel (or sandbox) run the io_uring disk
 * engine? Opens a read-only disk on our own binary with the engine and a
 * 4-entry queue. Shared by the unit tests' blk harness (blk_driver.h) and
 * microvm-bench, which skip their io_uring runs when it says no.
 */
#ifndef MICROVM_TEST_URING_PROBE_H
#define MICROVM_TEST_URING_PROBE_H

#include <stdbool.h>

#include "virtio/disk.h"

static inline bool uring_works(void)
{
	struct disk_opts o = {
		.path = "/proc/self/exe",
		.readonly = true,
		.cache = DISK_CACHE_WRITEBACK,
		.engine = DISK_ENGINE_URING,
	};
	struct disk_queue *q;
	struct disk d;
	char err[256];
	bool ok;

	if (disk_open(&d, &o, err, sizeof(err)))
		return false;
	ok = !disk_queue_open(&d, 4, &q);
	if (ok)
		disk_queue_close(q);
	disk_close(&d);
	return ok;
}

#endif
