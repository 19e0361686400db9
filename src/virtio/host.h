/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hypervisor services a virtio transport needs, as a const ops table
 * the VMM fills in (KVM ioeventfd, irqfd and MSI routing). Transports stay
 * free of KVM headers, and unit tests pass a fake.
 */
#ifndef MICROVM_VIRTIO_HOST_H
#define MICROVM_VIRTIO_HOST_H

#include <stdbool.h>
#include <stdint.h>

struct virtio_host_ops {
	/*
	 * Route guest writes of @len bytes at @addr (port I/O when @pio) to
	 * eventfd @fd; with @match only writes of the value @data. @assign
	 * false removes the same registration. Return: 0 or -errno.
	 */
	int (*ioeventfd)(void *opaque, uint64_t addr, unsigned int len,
			 bool pio, bool match, uint64_t data, int fd,
			 bool assign);
	/* Signal interrupt @gsi whenever eventfd @fd is written. */
	int (*irqfd)(void *opaque, int fd, uint32_t gsi, bool assign);
	/* Allocate a GSI for an MSI route. Return: GSI or -errno. */
	int (*gsi_alloc)(void *opaque);
	/*
	 * Point @gsi at the MSI message (@addr, @data) from requester
	 * @devid (the PCI bus/device/function, (bus << 8) | (slot << 3) |
	 * function): an interrupt translation service (arm64's GICv3 ITS)
	 * needs it to translate the message; x86 ignores it.
	 */
	int (*msi_route)(void *opaque, uint32_t gsi, uint64_t addr,
			 uint32_t data, uint32_t devid);
};

struct virtio_host {
	const struct virtio_host_ops *ops;
	void *opaque;
};

#endif
