// SPDX-License-Identifier: Apache-2.0
/*
 * The machine's lifecycle: its states and the order in which it pauses
 * and resumes. vCPUs park first, so that no register write reaches a
 * device while it quiesces, then each device in the order it was
 * attached; resume runs the devices in reverse and lets the vCPUs go
 * last, so the guest finds every device serving when it runs again.
 */
#include <errno.h>
#include <stdio.h>

#include "devices/pci.h"
#include "util/log.h"
#include "virtio/virtio.h"
#include "vmm/machine.h"

/* How long vCPUs get to park before a pause is given up. */
#define MACHINE_PAUSE_LIMIT_MS 5000

int machine_add_dev(struct machine *m, const char *name,
		    const struct machine_dev_ops *ops, void *opaque)
{
	if (m->nr_devs >= MACHINE_MAX_DEVS)
		return -ENOSPC;
	m->devs[m->nr_devs++] = (struct machine_dev){ name, ops, opaque };
	return 0;
}

/* CONFIG_ADDRESS and the host bridge's config space in a snapshot. */
MACHINE_DEV_STATE_OPS(pci_host_ops, struct pci_bus, pci_bus_save,
		      pci_bus_load, "PCI host bridge");

int machine_set_pci(struct machine *m, struct pci_bus *b)
{
	m->pci = b;
	return machine_add_dev(m, "pci-host", &pci_host_ops, b);
}

static void virtio_pause(void *opaque)
{
	virtio_dev_pause(opaque);
}

static int virtio_resume(void *opaque)
{
	return virtio_dev_resume(opaque);
}

static int virtio_save(void *opaque, struct snap_writer *w, char *err,
		       size_t errlen)
{
	return virtio_dev_save(opaque, w, err, errlen);
}

static int virtio_load(void *opaque, struct snap_reader *r, char *err,
		       size_t errlen)
{
	return virtio_dev_load(opaque, r, err, errlen);
}

const struct machine_dev_ops machine_virtio_dev_ops = {
	.pause = virtio_pause,
	.resume = virtio_resume,
	.save = virtio_save,
	.load = virtio_load,
};

const char *machine_state_name(enum machine_state s)
{
	switch (s) {
	case MACHINE_NOT_STARTED:
		return "Not started";
	case MACHINE_RUNNING:
		return "Running";
	case MACHINE_PAUSED:
		return "Paused";
	case MACHINE_STOPPED:
		return "Stopped";
	}
	return "?";
}

int machine_pause(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	if (atomic_load(&m->state) != MACHINE_RUNNING) {
		snprintf(err, errlen, "cannot pause: the microVM is %s",
			 machine_state_name(atomic_load(&m->state)));
		return -EINVAL;
	}
	ret = vm_pause_vcpus(&m->vm, MACHINE_PAUSE_LIMIT_MS);
	if (ret) {
		snprintf(err, errlen, "cannot pause: %s",
			 ret == -ETIMEDOUT ? "a vCPU did not stop in time" :
					     "the microVM is ending");
		return ret;
	}
	for (i = 0; i < m->nr_devs; i++)
		if (m->devs[i].ops->pause)
			m->devs[i].ops->pause(m->devs[i].opaque);
	atomic_store(&m->state, MACHINE_PAUSED);
	log_info("paused: %u vCPUs, %u devices", m->vm.ncpus, m->nr_devs);
	return 0;
}

int machine_resume(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;

	if (atomic_load(&m->state) != MACHINE_PAUSED) {
		snprintf(err, errlen, "cannot resume: the microVM is %s",
			 machine_state_name(atomic_load(&m->state)));
		return -EINVAL;
	}
	for (i = m->nr_devs; i-- > 0;)
		if (m->devs[i].ops->resume &&
		    m->devs[i].ops->resume(m->devs[i].opaque))
			log_error("%s: did not resume; it reports "
				  "NEEDS_RESET to the guest", m->devs[i].name);
	vm_resume_vcpus(&m->vm);
	atomic_store(&m->state, MACHINE_RUNNING);
	log_info("resumed");
	return 0;
}
