// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-pci modern registers (virtio 1.2 §4.1.4): the BAR 0 dispatcher,
 * the common configuration structure, ISR, device configuration, notify,
 * the capability list and the VIRTIO_PCI_CAP_PCI_CFG window. Register
 * accesses hold vdev->lock; the MSI-X half lives in pci_msix.c. Notify
 * ioeventfds have length 0 (any write width, no datamatch): each queue has
 * its own address, so the written value is not needed.
 */
#include "virtio/pci.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/evloop.h"
#include "util/le.h"
#include "virtio/pci_priv.h"

#define NOTIFY_IOEVENT_LEN 0

/* Width of each common configuration field, indexed by offset. */
static const uint8_t common_field_size[VIRTIO_PCI_COMMON_LEN] = {
	[VIRTIO_PCI_COMMON_DFSELECT] = 4,
	[VIRTIO_PCI_COMMON_DF] = 4,
	[VIRTIO_PCI_COMMON_GFSELECT] = 4,
	[VIRTIO_PCI_COMMON_GF] = 4,
	[VIRTIO_PCI_COMMON_MSIX] = 2,
	[VIRTIO_PCI_COMMON_NUMQ] = 2,
	[VIRTIO_PCI_COMMON_STATUS] = 1,
	[VIRTIO_PCI_COMMON_CFGGENERATION] = 1,
	[VIRTIO_PCI_COMMON_Q_SELECT] = 2,
	[VIRTIO_PCI_COMMON_Q_SIZE] = 2,
	[VIRTIO_PCI_COMMON_Q_MSIX] = 2,
	[VIRTIO_PCI_COMMON_Q_ENABLE] = 2,
	[VIRTIO_PCI_COMMON_Q_NOFF] = 2,
	[VIRTIO_PCI_COMMON_Q_DESC] = 8,
	[VIRTIO_PCI_COMMON_Q_AVAIL] = 8,
	[VIRTIO_PCI_COMMON_Q_USED] = 8,
};

static struct virtio_queue *vpci_queue(struct virtio_pci *t)
{
	if (t->queue_sel >= t->vdev->num_queues)
		return NULL;
	return &t->vdev->queues[t->queue_sel];
}

static uint64_t vpci_queue_read_locked(struct virtio_queue *q,
				       unsigned int field)
{
	if (!q)
		return 0; /* §4.1.4.3.2: absent queues read queue_size 0 */
	switch (field) {
	case VIRTIO_PCI_COMMON_Q_SIZE:
		return q->size;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		return __atomic_load_n(&q->msix_vector, __ATOMIC_ACQUIRE);
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		return q->enabled;
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return q->index; /* notify at NOTIFY_OFF + index * MULT */
	case VIRTIO_PCI_COMMON_Q_DESC:
		return q->desc;
	case VIRTIO_PCI_COMMON_Q_AVAIL:
		return q->avail;
	case VIRTIO_PCI_COMMON_Q_USED:
		return q->used;
	default:
		return 0;
	}
}

static uint64_t vpci_common_read_locked(struct virtio_pci *t,
					unsigned int field)
{
	struct virtio_dev *vdev = t->vdev;

	switch (field) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		return t->dfselect;
	case VIRTIO_PCI_COMMON_DF:
		return t->dfselect > 1 ? 0 : (uint32_t)(vdev->host_features >>
							(32 * t->dfselect));
	case VIRTIO_PCI_COMMON_GFSELECT:
		return t->gfselect;
	case VIRTIO_PCI_COMMON_GF:
		return t->gfselect > 1 ? 0 : (uint32_t)(vdev->driver_features >>
							(32 * t->gfselect));
	case VIRTIO_PCI_COMMON_MSIX:
		return virtio_pci_config_vector(t);
	case VIRTIO_PCI_COMMON_NUMQ:
		return vdev->num_queues;
	case VIRTIO_PCI_COMMON_STATUS:
		return virtio_get_status(vdev);
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return (uint8_t)__atomic_load_n(&vdev->config_generation,
						__ATOMIC_ACQUIRE);
	case VIRTIO_PCI_COMMON_Q_SELECT:
		return t->queue_sel;
	default:
		return vpci_queue_read_locked(vpci_queue(t), field);
	}
}

static void vpci_queue_write_locked(struct virtio_pci *t, unsigned int field,
				    uint64_t v)
{
	struct virtio_queue *q = vpci_queue(t);

	if (!q)
		return;
	if (field == VIRTIO_PCI_COMMON_Q_MSIX) {
		/* Always writable; notify() reads it at each interrupt. */
		__atomic_store_n(&q->msix_vector,
				 virtio_pci_vector_check(t, (uint16_t)v),
				 __ATOMIC_RELEASE);
		virtio_pci_msix_vector_changed(t);
		return;
	}
	if (!virtio_queue_writable_locked(t->vdev, q))
		return;
	switch (field) {
	case VIRTIO_PCI_COMMON_Q_SIZE:
		/* Stored as written; queue_enable checks it (§4.1.4.3.2). */
		q->size = (uint16_t)v;
		break;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		/* Only 1 is defined (0 needs VIRTIO_F_RING_RESET). */
		if (v == 1)
			virtio_queue_enable_locked(t->vdev, q);
		break;
	case VIRTIO_PCI_COMMON_Q_DESC:
		q->desc = v;
		break;
	case VIRTIO_PCI_COMMON_Q_AVAIL:
		q->avail = v;
		break;
	case VIRTIO_PCI_COMMON_Q_USED:
		q->used = v;
		break;
	default:
		break;
	}
}

static void vpci_common_write_locked(struct virtio_pci *t, unsigned int field,
				     uint64_t v)
{
	struct virtio_dev *vdev = t->vdev;

	switch (field) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		t->dfselect = (uint32_t)v;
		break;
	case VIRTIO_PCI_COMMON_GFSELECT:
		t->gfselect = (uint32_t)v;
		break;
	case VIRTIO_PCI_COMMON_GF:
		virtio_set_driver_features_locked(vdev, t->gfselect,
						  (uint32_t)v);
		break;
	case VIRTIO_PCI_COMMON_MSIX:
		virtio_pci_set_config_vector(t, (uint16_t)v);
		break;
	case VIRTIO_PCI_COMMON_STATUS:
		virtio_set_status_locked(vdev, (uint8_t)v);
		if (!v) {
			/* The core reset the queue vectors; ours follow. */
			virtio_pci_set_config_vector(t, VIRTIO_MSI_NO_VECTOR);
			t->dfselect = t->gfselect = 0;
			t->queue_sel = 0;
		}
		break;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		t->queue_sel = (uint16_t)v;
		break;
	case VIRTIO_PCI_COMMON_DF:
	case VIRTIO_PCI_COMMON_NUMQ:
	case VIRTIO_PCI_COMMON_CFGGENERATION:
	case VIRTIO_PCI_COMMON_Q_NOFF:
		break; /* read only */
	default:
		vpci_queue_write_locked(t, field, v);
		break;
	}
}

/*
 * Any naturally aligned access of 1, 2, 4 or 8 bytes inside one field
 * (e.g. the 32-bit halves of queue_desc); a narrower write merges into
 * the field's current value. Anything else reads 0 and is dropped.
 */
static void vpci_common_access(struct virtio_pci *t, uint64_t off,
			       uint8_t *data, unsigned int len, bool is_write)
{
	unsigned int field = (unsigned int)off, size, shift;
	uint64_t mask, v;

	if (off >= VIRTIO_PCI_COMMON_LEN || (len & (len - 1)) || (off % len))
		return;
	while (!common_field_size[field])
		field--; /* offset 0 always has a size */
	size = common_field_size[field];
	if (off + len > field + size)
		return;
	shift = 8 * (unsigned int)(off - field);
	mask = len == 8 ? UINT64_MAX : ((1ULL << (8 * len)) - 1) << shift;
	pthread_mutex_lock(&t->vdev->lock);
	v = vpci_common_read_locked(t, field);
	if (is_write) {
		if (len < size)
			v = (v & ~mask) | ((le_get(data, len) << shift) & mask);
		else
			v = le_get(data, len);
		vpci_common_write_locked(t, field, v);
	} else {
		le_put(data, len, (v & mask) >> shift);
	}
	pthread_mutex_unlock(&t->vdev->lock);
}

static void vpci_notify_write(struct virtio_pci *t, uint64_t off)
{
	uint64_t i = off / VIRTIO_PCI_NOTIFY_MULT;
	struct virtio_queue *q;

	/*
	 * Writes the ioeventfds caught never get here; what does (decoding
	 * just moved, or registration failed) kicks the queue directly.
	 */
	if (off % VIRTIO_PCI_NOTIFY_MULT || i >= t->vdev->num_queues)
		return;
	q = &t->vdev->queues[i];
	if (t->vdev->ops->kick) {
		/* No ioeventfds: the device serves the queue right here. */
		pthread_mutex_lock(&t->vdev->lock);
		t->vdev->ops->kick(t->vdev, q);
		pthread_mutex_unlock(&t->vdev->lock);
	} else if (q->kick_fd >= 0) {
		evfd_signal(q->kick_fd);
	}
}

static void vpci_bar_access(void *opaque, uint64_t off, uint8_t *data,
			    unsigned int len, bool is_write)
{
	struct virtio_pci *t = opaque;
	struct virtio_dev *vdev = t->vdev;
	uint64_t roff = off % VIRTIO_PCI_REGION_SIZE;

	if (!len || len > 8)
		return;
	if (!is_write)
		memset(data, 0, len);
	if (roff + len > VIRTIO_PCI_REGION_SIZE)
		return; /* straddles two structures */
	switch (off - roff) {
	case VIRTIO_PCI_COMMON_OFF:
		vpci_common_access(t, roff, data, len, is_write);
		break;
	case VIRTIO_PCI_ISR_OFF:
		/* Reading clears it (§4.1.4.5.1). */
		if (!is_write && roff == 0)
			data[0] = (uint8_t)atomic_exchange(&vdev->isr, 0);
		break;
	case VIRTIO_PCI_DEVICE_OFF:
		pthread_mutex_lock(&vdev->lock);
		vdev->ops->config_access(vdev, roff, data, len, is_write);
		pthread_mutex_unlock(&vdev->lock);
		break;
	case VIRTIO_PCI_NOTIFY_OFF:
		if (is_write)
			vpci_notify_write(t, roff);
		break;
	case VIRTIO_PCI_MSIX_TABLE_OFF:
	case VIRTIO_PCI_MSIX_PBA_OFF:
		virtio_pci_msix_access(t, off, data, len, is_write);
		break;
	default:
		break;
	}
}

/* Take the ioeventfds down and, unless unmapped, put them up at @base. */
static void vpci_ioevents_move(struct virtio_pci *t, uint64_t base)
{
	struct virtio_dev *vdev = t->vdev;
	unsigned int i;
	int ret;

	for (i = 0; i < vdev->num_queues; i++) {
		if (!t->ioevent_on[i])
			continue;
		t->host.ops->ioeventfd(t->host.opaque,
				       t->notify_base + VIRTIO_PCI_NOTIFY_OFF +
					       i * VIRTIO_PCI_NOTIFY_MULT,
				       NOTIFY_IOEVENT_LEN, false, false, 0,
				       vdev->queues[i].kick_fd, false);
		t->ioevent_on[i] = false;
	}
	t->notify_base = base;
	if (base == PCI_BAR_UNMAPPED)
		return;
	for (i = 0; i < vdev->num_queues; i++) {
		if (vdev->queues[i].kick_fd < 0)
			continue; /* ops->kick: notifications in the vCPU */
		ret = t->host.ops->ioeventfd(t->host.opaque,
					     base + VIRTIO_PCI_NOTIFY_OFF +
						     i * VIRTIO_PCI_NOTIFY_MULT,
					     NOTIFY_IOEVENT_LEN, false, false,
					     0, vdev->queues[i].kick_fd, true);
		if (ret)
			log_ratelimited(&t->rl, LOG_WARN,
					"%s: queue %u: notify ioeventfd at "
					"0x%llx failed (%d); kicks go through "
					"the vCPU", vdev->name, i,
					(unsigned long long)base, ret);
		else
			t->ioevent_on[i] = true;
	}
}

static void vpci_bar_moved(struct pci_dev *d, int bar, uint64_t old,
			   uint64_t new_addr)
{
	(void)old;
	if (bar == VIRTIO_PCI_BAR)
		vpci_ioevents_move(d->opaque, new_addr);
}

/* VIRTIO_PCI_CAP_PCI_CFG: pci_cfg_data reaches BAR bytes (§4.1.4.9). */
static void vpci_cfg_window(struct virtio_pci *t, bool is_write)
{
	uint8_t *cap = t->pci.cfg + t->cfg_cap;
	uint8_t *win = cap + VIRTIO_PCI_CAP_PCI_CFG_DATA;
	uint64_t off = le_get(cap + VIRTIO_PCI_CAP_OFFSET, 4);
	uint64_t len = le_get(cap + VIRTIO_PCI_CAP_LENGTH, 4);
	uint8_t buf[4] = { 0 };

	if (cap[VIRTIO_PCI_CAP_BAR] != VIRTIO_PCI_BAR ||
	    (len != 1 && len != 2 && len != 4) ||
	    off > VIRTIO_PCI_BAR_SIZE - len) {
		if (!is_write)
			memset(win, 0, sizeof(buf));
		return;
	}
	if (is_write) {
		memcpy(buf, win, len);
		vpci_bar_access(t, off, buf, (unsigned int)len, true);
	} else {
		vpci_bar_access(t, off, buf, (unsigned int)len, false);
		memcpy(win, buf, sizeof(buf));
	}
}

static bool span_overlaps(unsigned int a, unsigned int alen, unsigned int b,
			  unsigned int blen)
{
	return a < b + blen && b < a + alen;
}

static void vpci_cfg_hook(struct pci_dev *d, unsigned int off,
			  unsigned int len, bool is_write)
{
	struct virtio_pci *t = d->opaque;

	if (is_write &&
	    span_overlaps(off, len, t->msix_cap + PCI_MSIX_FLAGS, 2))
		virtio_pci_msix_control(
			t, (uint16_t)le_get(d->cfg + t->msix_cap +
						    PCI_MSIX_FLAGS, 2));
	if (span_overlaps(off, len, t->cfg_cap + VIRTIO_PCI_CAP_PCI_CFG_DATA,
			  4))
		vpci_cfg_window(t, is_write);
}

/* One struct virtio_pci_cap (§4.1.4), plus the type's extra field. */
static int vpci_add_vcap(struct virtio_pci *t, uint8_t type, uint32_t off,
			 uint32_t len)
{
	/* Indices are the cap's offsets minus its ID and next bytes. */
	uint8_t body[18] = { 0 }, wmask[18] = { 0 };
	size_t n = VIRTIO_PCI_CAP_LENGTH + 4 - 2;

	body[VIRTIO_PCI_CAP_CFG_TYPE - 2] = type;
	body[VIRTIO_PCI_CAP_BAR - 2] = VIRTIO_PCI_BAR;
	le_put(body + VIRTIO_PCI_CAP_OFFSET - 2, 4, off);
	le_put(body + VIRTIO_PCI_CAP_LENGTH - 2, 4, len);
	if (type == VIRTIO_PCI_CAP_NOTIFY_CFG) {
		le_put(body + VIRTIO_PCI_CAP_NOTIFY_MULT - 2, 4,
		       VIRTIO_PCI_NOTIFY_MULT);
		n += 4;
	} else if (type == VIRTIO_PCI_CAP_PCI_CFG) {
		/* bar, offset, length and pci_cfg_data are the driver's. */
		wmask[VIRTIO_PCI_CAP_BAR - 2] = 0xff;
		memset(wmask + VIRTIO_PCI_CAP_OFFSET - 2, 0xff, 12);
		n += 4;
	}
	body[VIRTIO_PCI_CAP_LEN - 2] = (uint8_t)(n + 2);
	return pci_add_cap(&t->pci, PCI_CAP_ID_VNDR, body, n, wmask);
}

static int vpci_add_msix_cap(struct virtio_pci *t)
{
	uint8_t body[10] = { 0 }, wmask[10] = { 0 };

	le_put(body + PCI_MSIX_FLAGS - 2, 2, t->nr_vectors - 1);
	le_put(body + PCI_MSIX_TABLE - 2, 4, VIRTIO_PCI_MSIX_TABLE_OFF |
					     VIRTIO_PCI_BAR);
	le_put(body + PCI_MSIX_PBA - 2, 4, VIRTIO_PCI_MSIX_PBA_OFF |
					   VIRTIO_PCI_BAR);
	le_put(wmask + PCI_MSIX_FLAGS - 2, 2,
	       PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	return pci_add_cap(&t->pci, PCI_CAP_ID_MSIX, body, sizeof(body),
			   wmask);
}

static uint32_t vpci_class(uint32_t device_id)
{
	switch (device_id) {
	case 1:
		return 0x020000; /* network controller */
	case 2:
		return 0x018000; /* mass storage, other */
	default:
		return 0xff0000; /* unassigned class */
	}
}

static int vpci_build_config(struct virtio_pci *t)
{
	uint32_t id = t->vdev->ops->device_id;
	const struct pci_ids ids = {
		.vendor = VIRTIO_PCI_VENDOR,
		.device = (uint16_t)(VIRTIO_PCI_DEVICE_BASE + id),
		.subsys_vendor = VIRTIO_PCI_VENDOR,
		.subsys_id = (uint16_t)id,
		.class_code = vpci_class(id),
		.revision = VIRTIO_PCI_REVISION,
	};
	const uint32_t caps[][3] = {
		{ VIRTIO_PCI_CAP_COMMON_CFG, VIRTIO_PCI_COMMON_OFF,
		  VIRTIO_PCI_COMMON_LEN },
		{ VIRTIO_PCI_CAP_NOTIFY_CFG, VIRTIO_PCI_NOTIFY_OFF,
		  VIRTIO_PCI_NOTIFY_MULT * t->vdev->num_queues },
		{ VIRTIO_PCI_CAP_ISR_CFG, VIRTIO_PCI_ISR_OFF,
		  VIRTIO_PCI_ISR_LEN },
		{ VIRTIO_PCI_CAP_DEVICE_CFG, VIRTIO_PCI_DEVICE_OFF,
		  VIRTIO_PCI_DEVICE_LEN },
		{ VIRTIO_PCI_CAP_PCI_CFG, 0, 0 },
	};
	size_t i;
	int ret;

	pci_dev_init(&t->pci, &ids);
	t->pci.opaque = t;
	t->pci.bar_moved = vpci_bar_moved;
	t->pci.cfg_hook = vpci_cfg_hook;
	ret = pci_dev_set_bar(&t->pci, VIRTIO_PCI_BAR, VIRTIO_PCI_BAR_SIZE,
			      false, vpci_bar_access, t);
	if (ret)
		return ret;
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		ret = vpci_add_vcap(t, (uint8_t)caps[i][0], caps[i][1],
				    caps[i][2]);
		if (ret < 0)
			return ret;
	}
	/* The last one added is the PCI_CFG window. */
	t->cfg_cap = (unsigned int)ret;
	ret = vpci_add_msix_cap(t);
	if (ret < 0)
		return ret;
	t->msix_cap = (unsigned int)ret;
	return 0;
}

static void vpci_kicks_close(struct virtio_dev *vdev)
{
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++) {
		if (vdev->queues[i].kick_fd >= 0)
			close(vdev->queues[i].kick_fd);
		vdev->queues[i].kick_fd = -1;
	}
}

static int vpci_kicks_open(struct virtio_dev *vdev)
{
	unsigned int i;
	int fd;

	for (i = 0; i < vdev->num_queues && !vdev->ops->kick; i++) {
		fd = evfd_new();
		if (fd < 0) {
			vpci_kicks_close(vdev);
			return fd;
		}
		vdev->queues[i].kick_fd = fd;
	}
	return 0;
}

int virtio_pci_init(struct virtio_pci *t, struct virtio_dev *vdev,
		    const struct virtio_host *host, struct pci_bus *bus)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->vdev = vdev;
	t->host = *host;
	t->bus = bus;
	t->notify_base = PCI_BAR_UNMAPPED;
	t->nr_vectors = vdev->num_queues + 1;
	ret = vpci_kicks_open(vdev);
	if (ret)
		return ret;
	ret = virtio_pci_msix_init(t);
	if (ret)
		goto err_kicks;
	ret = vpci_build_config(t);
	if (ret)
		goto err_msix;
	vdev->transport = t;
	vdev->tops = &virtio_pci_transport_ops;
	ret = pci_bus_add(bus, &t->pci);
	if (ret)
		goto err_msix;
	return 0;
err_msix:
	virtio_pci_msix_destroy(t);
err_kicks:
	vpci_kicks_close(vdev);
	return ret;
}

void virtio_pci_destroy(struct virtio_pci *t)
{
	struct virtio_dev *vdev = t->vdev;

	pthread_mutex_lock(&vdev->lock);
	virtio_reset_locked(vdev);
	pthread_mutex_unlock(&vdev->lock);
	pci_bus_remove(t->bus, &t->pci);
	vpci_ioevents_move(t, PCI_BAR_UNMAPPED);
	vpci_kicks_close(vdev);
	virtio_pci_msix_destroy(t);
}

/* ---- snapshot state (virtio_pci_save(), virtio_pci_load()) ---- */

int virtio_pci_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen)
{
	struct virtio_pci *t = vdev->transport;
	unsigned int q;

	for (q = 0; q < vdev->num_queues; q++) {
		if (t->direct[q]) {
			snprintf(err, errlen, "%s: queues signalled from "
				 "outside the VMM cannot be snapshotted yet",
				 vdev->name);
			return -EOPNOTSUPP;
		}
	}
	snap_put_u32(w, (uint32_t)t->pci.slot);
	snap_put_u32(w, PCI_CFG_SPACE_SIZE);
	pthread_mutex_lock(&t->pci.lock);
	snap_put_bytes(w, t->pci.cfg, PCI_CFG_SPACE_SIZE);
	pthread_mutex_unlock(&t->pci.lock);
	snap_put_u32(w, t->dfselect);
	snap_put_u32(w, t->gfselect);
	snap_put_u16(w, t->queue_sel);
	virtio_pci_msix_save(t, w);
	return 0;
}

/* Is config byte @reg one the load writes itself (with its effects)? */
static bool replayed(const void *opaque, unsigned int reg)
{
	const struct virtio_pci *t = opaque;

	return (reg >= PCI_COMMAND && reg < PCI_COMMAND + 2) ||
	       (reg >= t->msix_cap + PCI_MSIX_FLAGS &&
		reg < t->msix_cap + PCI_MSIX_FLAGS + 2);
}

int virtio_pci_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen)
{
	struct virtio_pci *t = vdev->transport;
	struct pci_dev *d = &t->pci;
	uint32_t slot = snap_get_u32(r), len = snap_get_u32(r);
	const uint8_t *cfg;
	unsigned int i;
	int ret;

	cfg = len == PCI_CFG_SPACE_SIZE ? snap_get_ref(r, len) : NULL;
	if (r->bad || !cfg || slot != (uint32_t)d->slot) {
		snprintf(err, errlen, "%s: the snapshot's device is in PCI "
			 "slot %u; this one in %d", vdev->name, slot, d->slot);
		return -EINVAL;
	}
	t->dfselect = snap_get_u32(r);
	t->gfselect = snap_get_u32(r);
	t->queue_sel = snap_get_u16(r);
	if (r->bad) {
		snprintf(err, errlen, "%s: state truncated", vdev->name);
		return -EINVAL;
	}
	/* What the driver wrote that has no side effect goes back as it
	 * was (the BARs decode once Command is written below). */
	if (pci_dev_cfg_load(d, cfg, replayed, t, &i)) {
		snprintf(err, errlen, "%s: the snapshot's PCI config "
			 "space differs from this device's at 0x%x",
			 vdev->name, i);
		return -EINVAL;
	}
	ret = virtio_pci_msix_load(t, r, err, errlen);
	if (ret)
		return ret;
	/* A vector past the table reads back as none (§4.1.5.1.2), as the
	 * register write would have made it. */
	for (i = 0; i < vdev->num_queues; i++)
		vdev->queues[i].msix_vector = virtio_pci_vector_check(
			t, vdev->queues[i].msix_vector);
	/* All of the state read: only now the writes with effects. */
	if (!snap_reader_done(r)) {
		snprintf(err, errlen, "%s: state has bytes left over",
			 vdev->name);
		return -EINVAL;
	}
	pci_dev_cfg_write(d, PCI_COMMAND, cfg + PCI_COMMAND, 2);
	pci_dev_cfg_write(d, t->msix_cap + PCI_MSIX_FLAGS,
			  cfg + t->msix_cap + PCI_MSIX_FLAGS, 2);
	return 0;
}
