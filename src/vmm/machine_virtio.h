/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A virtio device on one of the machine's buses: the part every device
 * type (blk, vsock, net) shares between its creation and the guest
 * seeing it. The device's create function initialises @mv->vdev; then
 * machine_vdev_attach() puts it on virtio-mmio (a slot, its MMIO window,
 * the firmware tables' entry) or virtio-pci (a function on bus 0) and
 * registers it with the machine's lifecycle (pause, resume); detach
 * undoes the transport, and the device's destroy function comes after.
 *
 *	blk_dev_create(&b, &mv->vdev, ...);
 *	machine_vdev_attach(m, mv, "disk", err, errlen);
 *	...
 *	machine_vdev_detach(mv);
 *	blk_dev_destroy(b);
 */
#ifndef MICROVM_MACHINE_VIRTIO_H
#define MICROVM_MACHINE_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>

#include "virtio/mmio.h"
#include "virtio/pci.h"
#include "virtio/virtio.h"
#include "vmm/machine.h"

struct machine_vdev {
	struct virtio_dev vdev;
	enum disk_transport transport;
	bool coalesce_off; /* irq-coalesce=off (mmio only) */
	struct virtio_mmio mmio;
	struct virtio_pci pci;
	bool attached;
};

/**
 * machine_vdev_attach() - put @mv's device on its transport's bus and
 * in the machine's device list.
 * @m: the machine, its buses set up
 * @mv: transport and coalesce_off chosen, vdev initialised by its device
 * @what: the device type for messages ("disk", "vsock")
 * @err/@errlen: one message naming the device and what failed
 * Return: 0, or -errno (-ENOSPC: no virtio-mmio slot or device entry
 * left, -ENOTSUP: no PCI bus); what succeeded stays for
 * machine_vdev_detach(). Context: startup, main thread.
 */
int machine_vdev_attach(struct machine *m, struct machine_vdev *mv,
			const char *what, char *err, size_t errlen);

/**
 * machine_vdev_detach() - take @mv's device off its transport (stopping
 * it); nothing happens unless attached.
 * Context: teardown, main thread, the vCPUs stopped.
 */
void machine_vdev_detach(struct machine_vdev *mv);

#endif
