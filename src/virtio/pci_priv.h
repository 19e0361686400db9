/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal interface between the virtio-pci register model (pci.c) and its
 * MSI-X half (pci_msix.c): the vector table, the PBA, Message Control and
 * the transport's notify operations.
 */
#ifndef MICROVM_VIRTIO_PCI_PRIV_H
#define MICROVM_VIRTIO_PCI_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/pci.h"

/* notify/notify_config: signal through MSI-X (pci_msix.c). */
extern const struct virtio_transport_ops virtio_pci_transport_ops;

/**
 * virtio_pci_msix_init() - mask every entry, allocate a GSI and an irqfd
 * per vector (t->nr_vectors set by the caller).
 * Return: 0 or -errno (nothing left to undo).  Context: startup.
 */
int virtio_pci_msix_init(struct virtio_pci *t);

/** virtio_pci_msix_destroy() - detach and close the irqfds. */
void virtio_pci_msix_destroy(struct virtio_pci *t);

/**
 * virtio_pci_msix_access() - table or PBA access at BAR offset @off.
 * Dword and aligned qword accesses only; others are dropped (reads left
 * as the caller zeroed them).  Context: vCPU thread.
 */
void virtio_pci_msix_access(struct virtio_pci *t, uint64_t off,
			    uint8_t *data, unsigned int len, bool is_write);

/**
 * virtio_pci_msix_control() - the guest wrote Message Control: apply
 * Enable and Function Mask, deliver what became unmasked.
 * Context: vCPU thread, bus lock held.
 */
void virtio_pci_msix_control(struct virtio_pci *t, uint16_t ctrl);

/**
 * virtio_pci_vector_check() - @v if the table has it, else NO_VECTOR
 * (virtio 1.2 §4.1.5.1.2: a vector the device cannot use reads back
 * VIRTIO_MSI_NO_VECTOR).
 */
uint16_t virtio_pci_vector_check(const struct virtio_pci *t, uint16_t v);

/**
 * virtio_pci_msix_vector_changed() - the driver wrote a queue's
 * msix_vector: re-point the queues signalled from outside the VMM.
 * Context: vCPU thread, vdev->lock held.
 */
void virtio_pci_msix_vector_changed(struct virtio_pci *t);

struct snap_writer;
struct snap_reader;

/**
 * virtio_pci_msix_save() / virtio_pci_msix_load() - the MSI-X table, the
 * PBA and the config vector in a snapshot, and back (pci_msix.c): each
 * unmasked entry's route is set again; Message Control (enable, function
 * mask) comes back with the config space afterwards.
 * Context: the machine's lifecycle thread, vdev->lock held.
 */
void virtio_pci_msix_save(struct virtio_pci *t, struct snap_writer *w);
int virtio_pci_msix_load(struct virtio_pci *t, struct snap_reader *r,
			 char *err, size_t errlen);

/**
 * virtio_pci_save() / virtio_pci_load() - the transport's snapshot state
 * (pci.c): config space, selectors, then MSI-X. A load checks that the
 * read-only part of config space is this device's and replays the
 * writable part as the driver wrote it (BARs, then Command, then MSI-X
 * Message Control), so BAR decoding, notify ioeventfds and interrupt
 * delivery follow as they did.
 * Context: as virtio_pci_msix_save().
 */
int virtio_pci_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen);
int virtio_pci_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen);

/** virtio_pci_set_config_vector() / virtio_pci_config_vector(). */
void virtio_pci_set_config_vector(struct virtio_pci *t, uint16_t v);
uint16_t virtio_pci_config_vector(struct virtio_pci *t);

#endif
