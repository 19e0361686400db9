/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fakes shared by the transport fuzz targets (fuzz_mmio.c, fuzz_pci.c),
 * the same shape as those of tests/unit/test_virtio_pci.c: hypervisor
 * services that record ioeventfd, irqfd and MSI routes and check that
 * every removal matches a registration, and a device with 8 config bytes
 * (the first two writable) whose start() checks what the core promises at
 * DRIVER_OK. Guest RAM is FUZZ_VDEV_RAM bytes at 0. abort() on a broken
 * promise; everything is static, one device per target.
 */
#ifndef MICROVM_FUZZ_VIRTIO_FAKES_H
#define MICROVM_FUZZ_VIRTIO_FAKES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/guest_mem.h"
#include "virtio/host.h"
#include "virtio/virtio.h"

#define FUZZ_VDEV_RAM 0x10000u
#define FUZZ_MAX_IOEV 80
#define FUZZ_MAX_IRQFD 80
#define FUZZ_FAKE_CFG 8


struct fuzz_ioev {
	uint64_t addr;
	unsigned int len;
	bool pio, match;
	uint64_t data;
	int fd;
};

struct fuzz_host {
	struct fuzz_ioev live[FUZZ_MAX_IOEV];
	unsigned int nr_live;
	int irqfd[FUZZ_MAX_IRQFD];
	uint32_t irqfd_gsi[FUZZ_MAX_IRQFD];
	unsigned int nr_irqfd;
	int next_gsi;
	unsigned int routes;
	uint32_t route_gsi, route_data;
	uint64_t route_addr;
};

struct fuzz_dev {
	uint8_t cfg[FUZZ_FAKE_CFG];
	unsigned int starts, stops;
	bool fail_start; /* the next start() fails */
};

static struct fuzz_host fuzz_fh;
static struct fuzz_dev fuzz_fd;
static struct guest_mem fuzz_vgm;
static uint8_t *fuzz_vram;

static int fuzz_fake_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			       bool pio, bool match, uint64_t data, int fd,
			       bool assign)
{
	struct fuzz_host *h = opaque;
	unsigned int i;

	for (i = 0; i < h->nr_live; i++) {
		struct fuzz_ioev *e = &h->live[i];

		if (e->addr != addr || e->len != len || e->pio != pio ||
		    e->match != match || (match && e->data != data))
			continue;
		if (assign)
			abort(); /* KVM refuses a duplicate: a transport bug */
		if (e->fd != fd)
			abort();
		*e = h->live[--h->nr_live];
		return 0;
	}
	if (!assign || h->nr_live >= FUZZ_MAX_IOEV)
		abort(); /* removing what was never there */
	h->live[h->nr_live++] = (struct fuzz_ioev){ addr, len, pio, match,
						    data, fd };
	return 0;
}

static int fuzz_fake_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	struct fuzz_host *h = opaque;
	unsigned int i;

	for (i = 0; i < h->nr_irqfd; i++) {
		if (h->irqfd[i] != fd)
			continue;
		if (assign || h->irqfd_gsi[i] != gsi)
			abort();
		h->irqfd[i] = h->irqfd[h->nr_irqfd - 1];
		h->irqfd_gsi[i] = h->irqfd_gsi[--h->nr_irqfd];
		return 0;
	}
	if (!assign || h->nr_irqfd >= FUZZ_MAX_IRQFD)
		abort();
	h->irqfd[h->nr_irqfd] = fd;
	h->irqfd_gsi[h->nr_irqfd++] = gsi;
	return 0;
}

static int fuzz_fake_gsi_alloc(void *opaque)
{
	return ((struct fuzz_host *)opaque)->next_gsi++;
}

static int fuzz_fake_msi_route(void *opaque, uint32_t gsi, uint64_t addr,
			       uint32_t data, uint32_t devid)
{
	struct fuzz_host *h = opaque;

	(void)devid;
	h->routes++;
	h->route_gsi = gsi;
	h->route_addr = addr;
	h->route_data = data;
	return 0;
}

static const struct virtio_host_ops fuzz_fake_host_ops = {
	.ioeventfd = fuzz_fake_ioeventfd,
	.irqfd = fuzz_fake_irqfd,
	.gsi_alloc = fuzz_fake_gsi_alloc,
	.msi_route = fuzz_fake_msi_route,
};

static void fuzz_fake_config(struct virtio_dev *vdev, uint64_t off,
			     uint8_t *data, unsigned int len, bool is_write)
{
	struct fuzz_dev *d = vdev->dev;
	unsigned int i;

	if (len > 8)
		abort(); /* transports pass bus-sized accesses only */
	for (i = 0; i < len; i++) {
		if (off + i >= sizeof(d->cfg)) {
			if (!is_write)
				data[i] = 0;
		} else if (!is_write) {
			data[i] = d->cfg[off + i];
		} else if (off + i < 2) {
			d->cfg[off + i] = data[i];
		}
	}
}

/* DRIVER_OK: what virtio_start_locked() promises the device. */
static int fuzz_fake_start(struct virtio_dev *vdev)
{
	struct fuzz_dev *d = vdev->dev;
	uint64_t f = vdev->driver_features;
	unsigned int i;

	if (!(vdev->status & VIRTIO_STATUS_DRIVER_OK) ||
	    !(vdev->status & VIRTIO_STATUS_FEATURES_OK) ||
	    (f & ~vdev->host_features) || !(f & (1ULL << VIRTIO_F_VERSION_1)) ||
	    vdev->running || d->starts != d->stops)
		abort();
	for (i = 0; i < vdev->num_queues; i++) {
		const struct virtio_queue *q = &vdev->queues[i];

		if (!q->enabled) {
			if (q->vq.ready)
				abort();
			continue;
		}
		if (!q->vq.ready || q->vq.size != q->size || !q->size ||
		    q->size > VIRTQ_MAX_SIZE || (q->size & (q->size - 1)) ||
		    !guest_mem_ptr(vdev->gm, q->desc, VIRTQ_DESC_BYTES(q->size)))
			abort();
		if (q->size > q->max_size)
			abort(); /* §4.2.2.2 / §4.1.4.3: refuse above the max */
	}
	d->starts++;
	if (d->fail_start) {
		d->fail_start = false;
		d->stops++; /* a failed start leaves nothing to stop */
		return -EIO;
	}
	return 0;
}

static void fuzz_fake_stop(struct virtio_dev *vdev)
{
	struct fuzz_dev *d = vdev->dev;

	if (!vdev->running || d->stops + 1 != d->starts)
		abort();
	d->stops++;
}

static const struct virtio_dev_ops fuzz_fake_dev_ops = {
	.name = "fake",
	.device_id = 2,
	.config_access = fuzz_fake_config,
	.start = fuzz_fake_start,
	.stop = fuzz_fake_stop,
};

/* Guest RAM for the rings, made once. */
static int fuzz_fake_ram(void)
{
	if (fuzz_vram)
		return 0;
	fuzz_vram = calloc(1, FUZZ_VDEV_RAM);
	if (!fuzz_vram ||
	    guest_mem_add_region(&fuzz_vgm, 0, FUZZ_VDEV_RAM, fuzz_vram))
		return -1;
	return 0;
}

/* Reset the fakes for a new input. */
static void fuzz_fakes_reset(void)
{
	memset(&fuzz_fh, 0, sizeof(fuzz_fh));
	memset(&fuzz_fd, 0, sizeof(fuzz_fd));
	fuzz_fh.next_gsi = 40;
}

/*
 * What holds after any register access: the status only says what the
 * core did (DRIVER_OK needs FEATURES_OK, which needs acceptable features),
 * and the device runs exactly when it was started and not stopped.
 */
static void fuzz_check_core(struct virtio_dev *vdev)
{
	uint8_t s = vdev->status;
	uint64_t f = vdev->driver_features;

	if (s & VIRTIO_STATUS_NEEDS_RESET)
		abort(); /* the driver never sets it */
	if ((s & VIRTIO_STATUS_DRIVER_OK) &&
	    !(s & VIRTIO_STATUS_FEATURES_OK))
		abort();
	if ((s & VIRTIO_STATUS_FEATURES_OK) &&
	    ((f & ~vdev->host_features) ||
	     !(f & (1ULL << VIRTIO_F_VERSION_1))))
		abort();
	if (vdev->running != (fuzz_fd.starts != fuzz_fd.stops))
		abort();
	if (vdev->running && !(s & VIRTIO_STATUS_DRIVER_OK))
		abort();
}

#endif
