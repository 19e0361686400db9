/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VM generation ID (Microsoft's "Virtual Machine Generation ID"):
 * 16 random bytes in guest memory, new at boot and at every restore, and
 * an edge interrupt that tells the guest they changed. Linux's vmgenid
 * driver then mixes them into its random pool and reseeds ("crng reseeded
 * due to virtual machine fork"), so clones of one snapshot stop sharing
 * one random state. The guest finds the bytes and the interrupt through
 * ACPI on x86_64 (acpi.c: _CID VM_GEN_COUNTER and a generic event
 * device) and through the device tree on arm64 (dtb.c: compatible
 * "microsoft,vmgenid", Linux 6.10 and later).
 *
 * The machine owns where the bytes live; this file makes them and keeps
 * the device's place in a snapshot: whether the machine has it and which
 * interrupt it raises, so that a restore into a machine that would
 * announce the new ID elsewhere is refused.
 */
#ifndef MICROVM_VMGENID_H
#define MICROVM_VMGENID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/irq.h"

struct snap_reader;
struct snap_writer;

#define VMGENID_SIZE 16

/**
 * vmgenid_new_id() - 16 fresh random bytes (getrandom(2)) into @id.
 * Return: 0, or -errno with "VM generation ID: ..." in @err.
 * Context: any thread.
 */
int vmgenid_new_id(uint8_t id[VMGENID_SIZE], char *err, size_t errlen);

/**
 * vmgenid_save() - the device's snapshot state: @on (the machine has it)
 * and @irq (the GSI or SPI it raises).
 */
void vmgenid_save(struct snap_writer *w, bool on, uint32_t irq);

/**
 * vmgenid_check() - read what vmgenid_save() wrote and compare it with
 * this machine's @on and @irq (@irq_kind names it: "GSI", "SPI").
 * Return: 0, or -EINVAL with a message naming both in @err.
 */
int vmgenid_check(struct snap_reader *r, bool on, uint32_t irq,
		  const char *irq_kind, char *err, size_t errlen);

/**
 * vmgenid_load() - a restore: vmgenid_check(), then, when the machine
 * has the device, a new ID into @id and one edge on @irq through
 * @set_irq(@opaque): the event that makes the guest read the ID again.
 * Called after the restore's irqchip state, where the edge stays
 * pending until a vCPU runs. The caller marks @id's page dirty where
 * it tracks the VMM's writes.
 * Return: 0, or -errno with a message in @err.
 */
int vmgenid_load(struct snap_reader *r, bool on, uint32_t irq,
		 const char *irq_kind, uint8_t id[VMGENID_SIZE],
		 irq_set_fn set_irq, void *opaque, char *err, size_t errlen);

#endif
