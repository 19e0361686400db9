// SPDX-License-Identifier: Apache-2.0
/*
 * The transport half of every virtio device of the machine
 * (machine_virtio.h): a virtio-mmio slot and window, or a virtio-pci
 * function, and the device's entry in the machine's lifecycle list.
 */
#include "vmm/machine_virtio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* How many virtio-mmio slots the machine has (arch_mmio_slot()). */
static unsigned int mmio_slot_count(void)
{
	unsigned int n = 0;
	uint64_t base;
	uint32_t gsi;

	while (n < MACHINE_MAX_MMIO_DEVS && !arch_mmio_slot(n, &base, &gsi))
		n++;
	return n;
}

static int vdev_attach_mmio(struct machine *m, struct machine_vdev *mv,
			    const char *what, char *err, size_t errlen)
{
	struct virtio_host host = { &vm_virtio_host_ops, &m->vm };
	struct machine_mmio_dev *slot;
	uint64_t base;
	uint32_t gsi;
	int ret;

	ret = m->nr_mmio_devs < MACHINE_MAX_MMIO_DEVS ?
		arch_mmio_slot(m->nr_mmio_devs, &base, &gsi) : -ENOSPC;
	if (ret) {
		snprintf(err, errlen,
			 "%s %s: no virtio-mmio slot left (the machine has %u; use transport=pci for more %ss)",
			 what, mv->vdev.name, mmio_slot_count(), what);
		return ret;
	}
	ret = virtio_mmio_init(&mv->mmio, &mv->vdev, &host, base, gsi);
	if (ret) {
		snprintf(err, errlen, "%s %s: virtio-mmio setup: %s", what,
			 mv->vdev.name, strerror(-ret));
		return ret;
	}
	mv->mmio.coalesce = !mv->coalesce_off;
	ret = bus_register(&m->vm.mmio, base, VIRTIO_MMIO_WINDOW,
			   virtio_mmio_access, &mv->mmio);
	if (ret) {
		virtio_mmio_destroy(&mv->mmio);
		snprintf(err, errlen, "%s %s: MMIO window: %s", what,
			 mv->vdev.name, strerror(-ret));
		return ret;
	}
	slot = &m->mmio_devs[m->nr_mmio_devs++];
	slot->base = base;
	slot->size = VIRTIO_MMIO_WINDOW;
	slot->gsi = gsi;
	mv->attached = true;
	return 0;
}

static int vdev_attach_pci(struct machine *m, struct machine_vdev *mv,
			   const char *what, char *err, size_t errlen)
{
	struct virtio_host host = { &vm_virtio_host_ops, &m->vm };
	int ret;

	if (!m->pci) {
		snprintf(err, errlen, "%s %s: this machine has no PCI bus",
			 what, mv->vdev.name);
		return -ENOTSUP;
	}
	ret = virtio_pci_init(&mv->pci, &mv->vdev, &host, m->pci);
	if (ret) {
		snprintf(err, errlen, "%s %s: virtio-pci setup: %s", what,
			 mv->vdev.name, strerror(-ret));
		return ret;
	}
	mv->attached = true;
	return 0;
}

int machine_vdev_attach(struct machine *m, struct machine_vdev *mv,
			const char *what, char *err, size_t errlen)
{
	int ret = -EINVAL;

	switch (mv->transport) {
	case DISK_TRANSPORT_MMIO:
		ret = vdev_attach_mmio(m, mv, what, err, errlen);
		break;
	case DISK_TRANSPORT_PCI:
		ret = vdev_attach_pci(m, mv, what, err, errlen);
		break;
	}
	/* The machine pauses and resumes it from now on. */
	if (!ret && machine_add_dev(m, mv->vdev.name, &machine_virtio_dev_ops,
				    &mv->vdev)) {
		snprintf(err, errlen, "%s %s: too many devices", what,
			 mv->vdev.name);
		ret = -ENOSPC;
	}
	return ret;
}

void machine_vdev_detach(struct machine_vdev *mv)
{
	if (mv->attached && mv->transport == DISK_TRANSPORT_MMIO)
		virtio_mmio_destroy(&mv->mmio);
	else if (mv->attached)
		virtio_pci_destroy(&mv->pci);
	mv->attached = false;
}
