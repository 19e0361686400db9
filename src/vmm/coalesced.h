/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Coalesced writes: for a register range registered with
 * KVM_REGISTER_COALESCED_MMIO, KVM stores a guest's write in a ring it
 * shares with the VMM (the page at KVM_COALESCED_MMIO_PAGE_OFFSET of every
 * vCPU's kvm_run mapping) and re-enters the guest without an exit to the
 * VMM. The VMM replays the writes, in order, to the bus handlers before it
 * handles any other exit and whenever it must see the device's state (a
 * pause, the end). Only for writes that may take effect late: a UART's
 * transmit register, whose effects are output and a THR-empty interrupt.
 *
 * The ring's indices are KVM's and the VMM's; the entries' contents
 * (address, length, data) are the guest's and are checked here.
 */
#ifndef MICROVM_COALESCED_H
#define MICROVM_COALESCED_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/bus.h"

/**
 * coalesced_ring_entries() - how many entries a ring of one @page_size
 * page holds (KVM's KVM_COALESCED_MMIO_MAX).
 */
static inline uint32_t coalesced_ring_entries(long page_size)
{
	return (uint32_t)(((unsigned long)page_size -
			   sizeof(struct kvm_coalesced_mmio_ring)) /
			  sizeof(struct kvm_coalesced_mmio));
}

/**
 * coalesced_drain() - replay the queued writes to the buses, oldest first.
 * @ring: the shared ring
 * @entries: its size in entries (coalesced_ring_entries())
 * @pio: the port I/O bus (entries with pio set)
 * @mmio: the MMIO bus
 *
 * Handles at most @entries writes, those queued when it started; each
 * slot is handed back to KVM once it was replayed, so a reader that finds
 * the ring empty knows that every write it held has taken effect. An entry whose
 * length is 0 or over 8 bytes is dropped. Indices out of range (never
 * written so by KVM) leave the ring as it is.
 * Return: the number of entries consumed.
 * Context: one caller at a time per ring (the caller's lock).
 */
unsigned int coalesced_drain(struct kvm_coalesced_mmio_ring *ring,
			     uint32_t entries, const struct bus *pio,
			     const struct bus *mmio);

#endif
