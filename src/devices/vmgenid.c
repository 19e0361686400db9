// SPDX-License-Identifier: Apache-2.0
/* The VM generation ID's bytes and snapshot state (vmgenid.h). */
#include "devices/vmgenid.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "snapshot/snap.h"
#include "util/log.h"

int vmgenid_new_id(uint8_t id[VMGENID_SIZE], char *err, size_t errlen)
{
	int e;

	/* At most 256 bytes: whole, never interrupted (getrandom(2)). */
	if (getrandom(id, VMGENID_SIZE, 0) == VMGENID_SIZE)
		return 0;
	e = errno ? errno : EIO;
	snprintf(err, errlen, "VM generation ID: %s", strerror(e));
	return -e;
}

void vmgenid_save(struct snap_writer *w, bool on, uint32_t irq)
{
	snap_put_u8(w, on);
	snap_put_u32(w, irq);
}

int vmgenid_check(struct snap_reader *r, bool on, uint32_t irq,
		  const char *irq_kind, char *err, size_t errlen)
{
	bool saved_on = snap_get_u8(r) != 0;
	uint32_t saved_irq = snap_get_u32(r);

	if (r->bad || !snap_reader_done(r)) {
		snprintf(err, errlen, "VM generation ID: malformed state");
		return -EINVAL;
	}
	if (saved_on != on || (on && saved_irq != irq)) {
		snprintf(err, errlen, "VM generation ID: the snapshot's "
			 "event interrupt (%s %u) is not this machine's "
			 "(%s %u)", saved_on ? irq_kind : "none", saved_irq,
			 on ? irq_kind : "none", irq);
		return -EINVAL;
	}
	return 0;
}

int vmgenid_load(struct snap_reader *r, bool on, uint32_t irq,
		 const char *irq_kind, uint8_t id[VMGENID_SIZE],
		 irq_set_fn set_irq, void *opaque, char *err, size_t errlen)
{
	int ret = vmgenid_check(r, on, irq, irq_kind, err, errlen);

	if (ret || !on)
		return ret;
	ret = vmgenid_new_id(id, err, errlen);
	if (ret)
		return ret;
	set_irq(opaque, irq, 1);
	set_irq(opaque, irq, 0);
	log_debug("vmgenid: a new VM generation ID, announced on %s %u",
		  irq_kind, irq);
	return 0;
}
