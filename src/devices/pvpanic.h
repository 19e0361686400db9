/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pvpanic: the guest's kernel tells the VMM that it panicked by writing
 * an event byte to one I/O port (QEMU's ISA pvpanic, ACPI _HID
 * "QEMU0001", port PORT_PVPANIC). A read returns the events the device
 * supports; Linux's driver reads it once at probe and from then on sends
 * only those. Events are bits, handled independently:
 *	PVPANIC_PANICKED (bit 0)     the guest panicked: panicked_fn runs,
 *	                             which ends the VM with
 *	                             VM_EXIT_GUEST_PANIC
 *	PVPANIC_CRASH_LOADED (bit 1) the guest panicked with a crash kernel
 *	                             loaded (kdump): logged once, the guest
 *	                             runs on into that kernel
 * Any other bit is counted and logged at a limited rate, nothing more.
 *
 *	pvpanic_init(&pp, vm_panicked, vm);
 *	bus_register(&pio, PORT_PVPANIC, PVPANIC_PIO_LEN, pvpanic_access,
 *		     &pp);
 */
#ifndef MICROVM_PVPANIC_H
#define MICROVM_PVPANIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/log.h"

/* One byte, as QEMU decodes it; a wider access never reaches the device. */
#define PVPANIC_PIO_LEN 1

/* Event bits (Linux include/uapi/misc/pvpanic.h). */
#define PVPANIC_PANICKED (1u << 0)
#define PVPANIC_CRASH_LOADED (1u << 1)
/* What a read returns: the events this device acts on. */
#define PVPANIC_CAPABILITY (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED)

/* Called on the vCPU thread for each PANICKED write; must not block. */
typedef void (*pvpanic_panicked_fn)(void *opaque);

struct pvpanic_stats {
	uint64_t panicked;     /* writes with PVPANIC_PANICKED */
	uint64_t crash_loaded; /* writes with PVPANIC_CRASH_LOADED */
	uint64_t ignored;      /* writes with any other bit, or none */
};

struct pvpanic {
	pvpanic_panicked_fn panicked_fn;
	void *opaque;
	/* Written by any vCPU thread at once, hence atomic. */
	atomic_ullong panicked, crash_loaded, ignored;
	struct log_ratelimit ignored_rl;
};

/**
 * pvpanic_init() - set up the device.
 * @pp: device
 * @panicked_fn: called for every write with PVPANIC_PANICKED set
 * @opaque: argument of @panicked_fn
 *
 * Context: setup.
 */
void pvpanic_init(struct pvpanic *pp, pvpanic_panicked_fn panicked_fn,
		  void *opaque);

/**
 * pvpanic_access() - the bus handler of the event port.
 * @opaque: the struct pvpanic
 * @off: offset into the registered range; only offset 0 is the register
 * @data: guest data; a write's low byte is the event
 * @len: access width (the bus sends at most PVPANIC_PIO_LEN bytes)
 * @is_write: direction; a read returns PVPANIC_CAPABILITY at offset 0
 *	and changes nothing
 *
 * Context: any vCPU thread.
 */
void pvpanic_access(void *opaque, uint64_t off, uint8_t *data,
		    unsigned int len, bool is_write);

/** pvpanic_get_stats() - the counters so far.  Context: any thread. */
void pvpanic_get_stats(struct pvpanic *pp, struct pvpanic_stats *out);

#endif
