// SPDX-License-Identifier: Apache-2.0
/*
 * The pvpanic event port. A guest's kernel writes it from its panic
 * notifier, maybe on several vCPUs at once and with the other vCPUs in
 * any state, so the handler takes no lock and never blocks: counters are
 * atomic, the one-time kdump line is claimed by the first counter
 * increment, and the callback only requests the VM's exit.
 */
#include "devices/pvpanic.h"

#include <string.h>

void pvpanic_init(struct pvpanic *pp, pvpanic_panicked_fn panicked_fn,
		  void *opaque)
{
	memset(pp, 0, sizeof(*pp));
	pp->panicked_fn = panicked_fn;
	pp->opaque = opaque;
}

static void pvpanic_event(struct pvpanic *pp, uint8_t ev)
{
	if (ev & PVPANIC_CRASH_LOADED &&
	    atomic_fetch_add(&pp->crash_loaded, 1) == 0)
		log_warn("guest panicked with a crash kernel loaded "
			 "(pvpanic): it keeps running (kdump)");
	if (ev & ~PVPANIC_CAPABILITY || !ev) {
		atomic_fetch_add(&pp->ignored, 1);
		log_ratelimited(&pp->ignored_rl, LOG_WARN,
				"pvpanic: ignored event 0x%02x", ev);
	}
	/* Last: the callback may start tearing the VM down. */
	if (ev & PVPANIC_PANICKED) {
		atomic_fetch_add(&pp->panicked, 1);
		if (pp->panicked_fn)
			pp->panicked_fn(pp->opaque);
	}
}

void pvpanic_access(void *opaque, uint64_t off, uint8_t *data,
		    unsigned int len, bool is_write)
{
	struct pvpanic *pp = opaque;

	if (!len)
		return;
	if (!is_write) {
		memset(data, 0, len > 8 ? 8 : len);
		if (off == 0)
			data[0] = PVPANIC_CAPABILITY;
		return;
	}
	if (off == 0)
		pvpanic_event(pp, data[0]);
}

void pvpanic_get_stats(struct pvpanic *pp, struct pvpanic_stats *out)
{
	out->panicked = atomic_load(&pp->panicked);
	out->crash_loaded = atomic_load(&pp->crash_loaded);
	out->ignored = atomic_load(&pp->ignored);
}
