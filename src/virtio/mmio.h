/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-mmio transport, version 2 (virtio 1.2 §4.2): a 4 KiB register
 * window per device with one interrupt line. QueueNotify writes reach the
 * queue threads through one ioeventfd per queue (datamatch = queue index)
 * and never the vCPU thread; interrupts leave through one irqfd.
 */
#ifndef MICROVM_VIRTIO_MMIO_H
#define MICROVM_VIRTIO_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/host.h"
#include "virtio/virtio.h"

#define VIRTIO_MMIO_WINDOW 0x1000
#define VIRTIO_MMIO_MAGIC 0x74726976 /* "virt" */
#define VIRTIO_MMIO_VENDOR 0x4d564d4d /* "MMVM" */

struct virtio_mmio {
	struct virtio_dev *vdev;
	struct virtio_host host;
	uint64_t base;
	uint32_t gsi;
	int irq_fd;
	/* No new interrupt while InterruptStatus still has the used-buffer
	 * bit (default, set by virtio_mmio_init()); false: one per notify. */
	bool coalesce;
	/* Queues whose completions an outside signaller (vhost) raises on
	 * irq_fd itself (tops->direct_irq); InterruptStatus then always
	 * shows the used-buffer bit. Under vdev->lock. */
	uint64_t direct;
	/* While any queue is direct, an InterruptACK of the used-buffer bit
	 * alone changes nothing the device keeps, so KVM takes it without
	 * an exit to the VMM (an ioeventfd matching that value, on ack_fd,
	 * which nothing reads). Under vdev->lock. */
	int ack_fd;
	bool ack_in_kernel;
	uint32_t device_features_sel;
	uint32_t driver_features_sel;
	uint32_t queue_sel;
};

/**
 * virtio_mmio_init() - attach @vdev to a register window at @base with
 * interrupt @gsi: creates the kick eventfds and wires the ioeventfds and
 * the irqfd through @host.
 * Return: 0 or -errno.  Context: startup.
 */
int virtio_mmio_init(struct virtio_mmio *t, struct virtio_dev *vdev,
		     const struct virtio_host *host, uint64_t base,
		     uint32_t gsi);

/** virtio_mmio_destroy() - reset the device and undo virtio_mmio_init(). */
void virtio_mmio_destroy(struct virtio_mmio *t);

/**
 * virtio_mmio_access() - bus handler for the register window.
 * Context: vCPU thread.
 */
void virtio_mmio_access(void *opaque, uint64_t off, uint8_t *data,
			unsigned int len, bool is_write);

#endif
