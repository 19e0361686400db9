/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A device state through a whole state file, as a snapshot carries it:
 * written into one section by the device's save function, the file
 * finished and parsed again, and a reader over that section handed back
 * for the device's load function (and a truncated copy of it).
 */
#ifndef MICROVM_TEST_SNAP_ROUNDTRIP_H
#define MICROVM_TEST_SNAP_ROUNDTRIP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "snapshot/snap.h"

struct snap_rt {
	uint8_t *buf;           /* the state file; free() it */
	struct snap_reader r;   /* the section's payload */
};

/* @save(@dev, writer) into one device section; false if the file fails. */
static inline bool snap_rt_make(struct snap_rt *rt,
				void (*save)(void *dev, struct snap_writer *w),
				void *dev)
{
	struct snap_writer w;
	struct snap_file f;
	size_t len, cur = 0;
	uint32_t tag;
	char err[128];

	snap_writer_init(&w);
	snap_section_begin(&w, SNAP_TAG_DEVICE);
	save(dev, &w);
	snap_section_end(&w);
	if (snap_writer_finish(&w, SNAP_ARCH_AARCH64, &rt->buf, &len))
		return false;
	if (snap_file_parse(rt->buf, len, SNAP_ARCH_AARCH64, &f, err,
			    sizeof(err)) ||
	    snap_next_section(&f, &cur, &tag, &rt->r) != 1 ||
	    tag != SNAP_TAG_DEVICE) {
		free(rt->buf);
		return false;
	}
	return true;
}

/* The same payload less its last byte. */
static inline struct snap_reader snap_rt_short(const struct snap_rt *rt)
{
	struct snap_reader r = rt->r;

	r.len = r.len ? r.len - 1 : 0;
	return r;
}

#endif
