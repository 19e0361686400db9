/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-pci modern transport (virtio 1.2 §4.1): device 1af4:1040+id with
 * one 64-bit memory BAR holding the common, ISR, device and notify
 * structures and the MSI-X table and PBA, located through vendor-specific
 * capabilities. Notifications reach the queue threads through one
 * ioeventfd per queue; each MSI-X vector leaves through its own irqfd.
 *
 * Usage sketch:
 *
 *	virtio_dev_init(&vdev, &blk_ops, blk, gm, 1, 256, features, "vda");
 *	virtio_pci_init(&vpci, &vdev, &host, &pci_bus);  // slot + BAR
 *	... run vCPUs ...
 *	virtio_pci_destroy(&vpci);   // device reset, then fds released
 *	virtio_dev_destroy(&vdev);
 */
#ifndef MICROVM_VIRTIO_PCI_H
#define MICROVM_VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/pci.h"
#include "util/log.h"
#include "virtio/host.h"
#include "virtio/virtio.h"

#define VIRTIO_PCI_VENDOR 0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040 /* + virtio device id */
#define VIRTIO_PCI_REVISION 1

/* BAR 0 layout. */
#define VIRTIO_PCI_BAR 0
#define VIRTIO_PCI_BAR_SIZE 0x8000
#define VIRTIO_PCI_COMMON_OFF 0x0000
#define VIRTIO_PCI_COMMON_LEN 0x38
#define VIRTIO_PCI_ISR_OFF 0x1000
#define VIRTIO_PCI_ISR_LEN 1
#define VIRTIO_PCI_DEVICE_OFF 0x2000
#define VIRTIO_PCI_DEVICE_LEN 0x1000
#define VIRTIO_PCI_NOTIFY_OFF 0x3000
#define VIRTIO_PCI_NOTIFY_MULT 4      /* queue i kicks at NOTIFY_OFF + 4 i */
#define VIRTIO_PCI_MSIX_TABLE_OFF 0x4000
#define VIRTIO_PCI_MSIX_PBA_OFF 0x5000
#define VIRTIO_PCI_REGION_SIZE 0x1000 /* each structure's 4 KiB slot */

/* One vector per queue plus one for configuration changes. */
#define VIRTIO_PCI_MAX_VECTORS (VIRTIO_MAX_QUEUES + 1)
#define VIRTIO_PCI_PBA_WORDS ((VIRTIO_PCI_MAX_VECTORS + 63) / 64)

/* struct virtio_pci_cap cfg_type (virtio 1.2 §4.1.4). */
#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define VIRTIO_PCI_CAP_ISR_CFG 3
#define VIRTIO_PCI_CAP_DEVICE_CFG 4
#define VIRTIO_PCI_CAP_PCI_CFG 5

/* struct virtio_pci_cap field offsets, from the capability ID byte. */
#define VIRTIO_PCI_CAP_LEN 2
#define VIRTIO_PCI_CAP_CFG_TYPE 3
#define VIRTIO_PCI_CAP_BAR 4
#define VIRTIO_PCI_CAP_OFFSET 8
#define VIRTIO_PCI_CAP_LENGTH 12
#define VIRTIO_PCI_CAP_NOTIFY_MULT 16 /* notify cap only */
#define VIRTIO_PCI_CAP_PCI_CFG_DATA 16 /* pci_cfg cap only */

/* Common configuration structure (virtio 1.2 §4.1.4.3). */
#define VIRTIO_PCI_COMMON_DFSELECT 0x00
#define VIRTIO_PCI_COMMON_DF 0x04
#define VIRTIO_PCI_COMMON_GFSELECT 0x08
#define VIRTIO_PCI_COMMON_GF 0x0c
#define VIRTIO_PCI_COMMON_MSIX 0x10
#define VIRTIO_PCI_COMMON_NUMQ 0x12
#define VIRTIO_PCI_COMMON_STATUS 0x14
#define VIRTIO_PCI_COMMON_CFGGENERATION 0x15
#define VIRTIO_PCI_COMMON_Q_SELECT 0x16
#define VIRTIO_PCI_COMMON_Q_SIZE 0x18
#define VIRTIO_PCI_COMMON_Q_MSIX 0x1a
#define VIRTIO_PCI_COMMON_Q_ENABLE 0x1c
#define VIRTIO_PCI_COMMON_Q_NOFF 0x1e
#define VIRTIO_PCI_COMMON_Q_DESC 0x20
#define VIRTIO_PCI_COMMON_Q_AVAIL 0x28
#define VIRTIO_PCI_COMMON_Q_USED 0x30

struct virtio_pci_msix_entry {
	uint32_t addr_lo;
	uint32_t addr_hi;
	uint32_t data;
	uint32_t ctrl;
};

struct virtio_pci {
	struct pci_dev pci;
	struct virtio_dev *vdev;
	struct virtio_host host;
	struct pci_bus *bus;
	unsigned int msix_cap;  /* config offsets of our capabilities */
	unsigned int cfg_cap;   /* the VIRTIO_PCI_CAP_PCI_CFG window */

	/* Common configuration selectors, under vdev->lock. */
	uint32_t dfselect;
	uint32_t gfselect;
	uint16_t queue_sel;

	/* Notify ioeventfds, under the bus lock (bar_moved). */
	uint64_t notify_base;   /* BAR address they sit at, or unmapped */
	bool ioevent_on[VIRTIO_MAX_QUEUES];

	/*
	 * MSI-X state, under msix_lock: taken by queue threads in notify(),
	 * so never held while taking vdev->lock (reset joins those threads
	 * with vdev->lock held).
	 */
	pthread_mutex_t msix_lock;
	unsigned int nr_vectors;
	bool msix_enabled;
	bool msix_masked;       /* Function Mask */
	uint16_t config_vector;
	struct virtio_pci_msix_entry table[VIRTIO_PCI_MAX_VECTORS];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	int gsi[VIRTIO_PCI_MAX_VECTORS];
	int irqfd[VIRTIO_PCI_MAX_VECTORS];
	/*
	 * Queues signalled from outside the VMM (vhost; tops->direct_irq),
	 * under msix_lock: the eventfd the signaller was last given
	 * (call_fd: the vector's irqfd, or hold_fd while the vector cannot
	 * be delivered), and per queue the hold eventfd, whose count
	 * becomes the vector's pending bit (pci_msix.c).
	 */
	bool direct[VIRTIO_MAX_QUEUES];
	int call_fd[VIRTIO_MAX_QUEUES];
	int hold_fd[VIRTIO_MAX_QUEUES];
	struct log_ratelimit rl;
};

/**
 * virtio_pci_init() - put @vdev on @bus as a virtio-pci modern device.
 * @t: transport state, owned by the caller until virtio_pci_destroy()
 * @vdev: initialised device core (virtio_dev_init())
 * @host: hypervisor services: ioeventfd, irqfd, gsi_alloc, msi_route
 * @bus: the PCI bus; @t takes its next slot and BAR window space
 *
 * Creates one kick eventfd per queue (wired as an ioeventfd at the
 * queue's notify address whenever the BAR is decoded), one GSI and
 * irqfd per MSI-X vector (num_queues + 1), and the config space.
 * Return: 0 or -errno.  Context: startup.
 */
int virtio_pci_init(struct virtio_pci *t, struct virtio_dev *vdev,
		    const struct virtio_host *host, struct pci_bus *bus);

/**
 * virtio_pci_destroy() - reset the device, take it off the bus and
 * release the eventfds (GSIs stay allocated).
 * Context: teardown, vCPUs stopped.
 */
void virtio_pci_destroy(struct virtio_pci *t);

#endif
