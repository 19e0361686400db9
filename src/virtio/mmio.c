// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-mmio version 2 registers (virtio 1.2 §4.2.2). Registers below
 * 0x100 are 32 bits wide and must be accessed as such; anything else reads
 * 0 and is ignored. Device configuration space from 0x100 takes any width.
 * Queue registers are refused once the queue is enabled or the device is
 * running (§4.2.2.2: the driver must not change them then); QueueReady is
 * refused, and NEEDS_RESET set, for a QueueNum above QueueNumMax.
 */
#include "virtio/mmio.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/evloop.h"
#include "util/le.h"

#define REG_MAGIC 0x000
#define REG_VERSION 0x004
#define REG_DEVICE_ID 0x008
#define REG_VENDOR_ID 0x00c
#define REG_DEVICE_FEATURES 0x010
#define REG_DEVICE_FEATURES_SEL 0x014
#define REG_DRIVER_FEATURES 0x020
#define REG_DRIVER_FEATURES_SEL 0x024
#define REG_QUEUE_SEL 0x030
#define REG_QUEUE_NUM_MAX 0x034
#define REG_QUEUE_NUM 0x038
#define REG_QUEUE_READY 0x044
#define REG_QUEUE_NOTIFY 0x050
#define REG_INTERRUPT_STATUS 0x060
#define REG_INTERRUPT_ACK 0x064
#define REG_STATUS 0x070
#define REG_QUEUE_DESC_LOW 0x080
#define REG_QUEUE_DESC_HIGH 0x084
#define REG_QUEUE_DRIVER_LOW 0x090
#define REG_QUEUE_DRIVER_HIGH 0x094
#define REG_QUEUE_DEVICE_LOW 0x0a0
#define REG_QUEUE_DEVICE_HIGH 0x0a4
#define REG_SHM_SEL 0x0ac
#define REG_SHM_LEN_LOW 0x0b0
#define REG_SHM_LEN_HIGH 0x0b4
#define REG_SHM_BASE_LOW 0x0b8
#define REG_SHM_BASE_HIGH 0x0bc
#define REG_CONFIG_GENERATION 0x0fc
#define REG_CONFIG 0x100

static bool mmio_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	struct virtio_mmio *t = vdev->transport;
	unsigned int old;

	(void)q;
	/* Set before the irq: pairs with the driver's InterruptStatus read. */
	old = atomic_fetch_or(&vdev->isr, VIRTIO_ISR_QUEUE);
	/*
	 * Bit already set: the interrupt that set it is not acknowledged
	 * yet. The driver reads the used rings only after its InterruptACK
	 * write clears the bit, and that write comes after this fetch_or,
	 * so it finds this buffer as well: one interrupt covers both, as a
	 * level-triggered line would. A driver that never acknowledges gets
	 * no more interrupts, which is all it asked for.
	 */
	if ((old & VIRTIO_ISR_QUEUE) && t->coalesce)
		return false;
	evfd_signal(t->irq_fd);
	return true;
}

static void mmio_notify_config(struct virtio_dev *vdev)
{
	struct virtio_mmio *t = vdev->transport;

	atomic_fetch_or(&vdev->isr, VIRTIO_ISR_CONFIG);
	evfd_signal(t->irq_fd);
}

/*
 * InterruptACK writes of VIRTIO_ISR_QUEUE alone, taken in KVM (@on) or
 * back in mmio_write_locked(). While a queue is direct the used-buffer bit
 * is never kept in vdev->isr (nothing but the I/O thread's notify sets
 * it, and a backend serves all of a device's queues or none), so such an
 * ACK clears nothing: the guest's handler then costs one exit, its read
 * of InterruptStatus, where it cost two. An ACK with any other bit (a
 * configuration change) still reaches the VMM. If KVM refuses, the VMM
 * keeps taking the write, as before.
 */
static void mmio_ack_in_kernel(struct virtio_mmio *t, bool on)
{
	if (t->ack_fd < 0 || t->ack_in_kernel == on)
		return;
	if (!t->host.ops->ioeventfd(t->host.opaque,
				    t->base + REG_INTERRUPT_ACK, 4, false,
				    true, VIRTIO_ISR_QUEUE, t->ack_fd, on))
		t->ack_in_kernel = on;
}

/*
 * A vhost worker writes irq_fd itself: no VMM thread sits between a
 * completion and the interrupt, so nothing sets the ISR bit before it.
 * InterruptStatus then reports the used-buffer bit for as long as any
 * queue is served that way (mmio_read_locked()): the driver's handler
 * looks at its rings only when it sees the bit, and a look that finds
 * nothing new costs one ring check, where a VMM relay thread would cost
 * a wakeup and an eventfd write per interrupt on the host. The read of
 * InterruptStatus is an exit either way (virtio 1.2 §4.2.3.4).
 */
static void mmio_direct_irq(struct virtio_dev *vdev, struct virtio_queue *q,
			    bool on)
{
	struct virtio_mmio *t = vdev->transport;
	uint64_t bit = 1ull << q->index;

	if (on) {
		t->direct |= bit;
		mmio_ack_in_kernel(t, true);
		if (vdev->ops->call_changed)
			vdev->ops->call_changed(vdev, q, t->irq_fd);
		return;
	}
	t->direct &= ~bit;
	/* Before the notify below sets the bit the ACK must clear. */
	if (!t->direct)
		mmio_ack_in_kernel(t, false);
	/* Completions the driver has not looked at yet: one more look. */
	mmio_notify(vdev, q);
}

/* Snapshot state: the selector registers (the rest is the core's). */
static int mmio_save(struct virtio_dev *vdev, struct snap_writer *w,
		     char *err, size_t errlen)
{
	struct virtio_mmio *t = vdev->transport;

	(void)err;
	(void)errlen;
	snap_put_u64(w, t->base);
	snap_put_u32(w, t->gsi);
	snap_put_u32(w, t->device_features_sel);
	snap_put_u32(w, t->driver_features_sel);
	snap_put_u32(w, t->queue_sel);
	return 0;
}

static int mmio_load(struct virtio_dev *vdev, struct snap_reader *r,
		     char *err, size_t errlen)
{
	struct virtio_mmio *t = vdev->transport;
	uint64_t base = snap_get_u64(r);
	uint32_t gsi = snap_get_u32(r);
	uint32_t dsel = snap_get_u32(r);
	uint32_t gsel = snap_get_u32(r);
	uint32_t qsel = snap_get_u32(r);

	if (r->bad || base != t->base || gsi != t->gsi) {
		snprintf(err, errlen, "%s: the snapshot's device is at 0x%llx "
			 "IRQ %u; this one at 0x%llx IRQ %u", vdev->name,
			 (unsigned long long)base, gsi,
			 (unsigned long long)t->base, t->gsi);
		return -EINVAL;
	}
	/* Any value: each register read checks its selector. */
	t->device_features_sel = dsel;
	t->driver_features_sel = gsel;
	t->queue_sel = qsel;
	return 0;
}

static const struct virtio_transport_ops mmio_ops = {
	.name = "mmio",
	.notify = mmio_notify,
	.notify_config = mmio_notify_config,
	.direct_irq = mmio_direct_irq,
	.save = mmio_save,
	.load = mmio_load,
};

static struct virtio_queue *mmio_queue(struct virtio_mmio *t)
{
	if (t->queue_sel >= t->vdev->num_queues)
		return NULL;
	return &t->vdev->queues[t->queue_sel];
}

static uint32_t mmio_read_locked(struct virtio_mmio *t, uint64_t off)
{
	struct virtio_dev *vdev = t->vdev;
	struct virtio_queue *q = mmio_queue(t);

	switch (off) {
	case REG_MAGIC:
		return VIRTIO_MMIO_MAGIC;
	case REG_VERSION:
		return 2;
	case REG_DEVICE_ID:
		return vdev->ops->device_id;
	case REG_VENDOR_ID:
		return VIRTIO_MMIO_VENDOR;
	case REG_DEVICE_FEATURES:
		if (t->device_features_sel > 1)
			return 0;
		return (uint32_t)(vdev->host_features >>
				  (32 * t->device_features_sel));
	case REG_QUEUE_NUM_MAX:
		return q ? q->max_size : 0;
	case REG_QUEUE_READY:
		return q ? q->enabled : 0;
	case REG_INTERRUPT_STATUS:
		/* See mmio_direct_irq(). */
		return atomic_load(&vdev->isr) |
		       (t->direct ? VIRTIO_ISR_QUEUE : 0);
	case REG_STATUS:
		return virtio_get_status(vdev);
	case REG_SHM_LEN_LOW:
	case REG_SHM_LEN_HIGH:
		return 0xffffffff; /* no shared memory regions */
	case REG_CONFIG_GENERATION:
		return __atomic_load_n(&vdev->config_generation,
				       __ATOMIC_ACQUIRE);
	default:
		return 0;
	}
}

static void mmio_queue_write_locked(struct virtio_mmio *t, uint64_t off,
				    uint32_t v)
{
	struct virtio_queue *q = mmio_queue(t);

	if (!q)
		return;
	if (off == REG_QUEUE_READY) {
		/* Only 1 (after setup) or 0 before DRIVER_OK. */
		if (t->vdev->status & VIRTIO_STATUS_DRIVER_OK)
			return;
		if (!(v & 1))
			q->enabled = false;
		else if (!q->enabled)
			virtio_queue_enable_locked(t->vdev, q);
		return;
	}
	if (!virtio_queue_writable_locked(t->vdev, q))
		return;
	switch (off) {
	case REG_QUEUE_NUM:
		/*
		 * Stored as written (0 if wider than 16 bits); QueueReady
		 * refuses anything but a power of two <= QueueNumMax.
		 */
		q->size = v > 0xffff ? 0 : (uint16_t)v;
		break;
	case REG_QUEUE_DESC_LOW:
		q->desc = (q->desc & ~0xffffffffULL) | v;
		break;
	case REG_QUEUE_DESC_HIGH:
		q->desc = (q->desc & 0xffffffffULL) | ((uint64_t)v << 32);
		break;
	case REG_QUEUE_DRIVER_LOW:
		q->avail = (q->avail & ~0xffffffffULL) | v;
		break;
	case REG_QUEUE_DRIVER_HIGH:
		q->avail = (q->avail & 0xffffffffULL) | ((uint64_t)v << 32);
		break;
	case REG_QUEUE_DEVICE_LOW:
		q->used = (q->used & ~0xffffffffULL) | v;
		break;
	case REG_QUEUE_DEVICE_HIGH:
		q->used = (q->used & 0xffffffffULL) | ((uint64_t)v << 32);
		break;
	default:
		break;
	}
}

static void mmio_write_locked(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	struct virtio_dev *vdev = t->vdev;

	switch (off) {
	case REG_DEVICE_FEATURES_SEL:
		t->device_features_sel = v;
		break;
	case REG_DRIVER_FEATURES:
		virtio_set_driver_features_locked(vdev, t->driver_features_sel,
						  v);
		break;
	case REG_DRIVER_FEATURES_SEL:
		t->driver_features_sel = v;
		break;
	case REG_QUEUE_SEL:
		t->queue_sel = v;
		break;
	case REG_QUEUE_NOTIFY:
		/*
		 * Valid indices are consumed by the ioeventfds; what reaches
		 * here is out of range or arrived without them: kick the
		 * queue's eventfd so the queue thread still sees it. A
		 * device with ops->kick has no ioeventfds: all come here.
		 */
		if (v >= vdev->num_queues)
			break;
		if (vdev->ops->kick)
			vdev->ops->kick(vdev, &vdev->queues[v]);
		else if (vdev->queues[v].kick_fd >= 0)
			evfd_signal(vdev->queues[v].kick_fd);
		break;
	case REG_INTERRUPT_ACK:
		atomic_fetch_and(&vdev->isr, ~v);
		break;
	case REG_STATUS:
		virtio_set_status_locked(vdev, (uint8_t)v);
		break;
	case REG_SHM_SEL:
		break;
	default:
		mmio_queue_write_locked(t, off, v);
		break;
	}
}

void virtio_mmio_access(void *opaque, uint64_t off, uint8_t *data,
			unsigned int len, bool is_write)
{
	struct virtio_mmio *t = opaque;
	struct virtio_dev *vdev = t->vdev;

	if (off >= REG_CONFIG) {
		pthread_mutex_lock(&vdev->lock);
		vdev->ops->config_access(vdev, off - REG_CONFIG, data, len,
					 is_write);
		pthread_mutex_unlock(&vdev->lock);
		return;
	}
	if (len != 4 || (off & 3)) {
		if (!is_write)
			le_put(data, len, 0);
		return;
	}
	pthread_mutex_lock(&vdev->lock);
	if (is_write)
		mmio_write_locked(t, off, (uint32_t)le_get(data, 4));
	else
		le_put(data, 4, mmio_read_locked(t, off));
	pthread_mutex_unlock(&vdev->lock);
}

int virtio_mmio_init(struct virtio_mmio *t, struct virtio_dev *vdev,
		     const struct virtio_host *host, uint64_t base,
		     uint32_t gsi)
{
	unsigned int i;
	int ret;

	t->vdev = vdev;
	t->host = *host;
	t->base = base;
	t->gsi = gsi;
	t->coalesce = true;
	t->ack_in_kernel = false;
	vdev->transport = t;
	vdev->tops = &mmio_ops;
	t->ack_fd = evfd_new();
	if (t->ack_fd < 0)
		return t->ack_fd;
	t->irq_fd = evfd_new();
	if (t->irq_fd < 0) {
		ret = t->irq_fd;
		goto err_ack;
	}
	ret = host->ops->irqfd(host->opaque, t->irq_fd, gsi, true);
	if (ret)
		goto err_irq;
	/* A device served in the vCPU thread takes QueueNotify there. */
	for (i = 0; i < vdev->num_queues && !vdev->ops->kick; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		q->kick_fd = evfd_new();
		if (q->kick_fd < 0) {
			ret = q->kick_fd;
			goto err_queues;
		}
		ret = host->ops->ioeventfd(host->opaque,
					   base + REG_QUEUE_NOTIFY, 4, false,
					   true, i, q->kick_fd, true);
		if (ret) {
			close(q->kick_fd);
			q->kick_fd = -1;
			goto err_queues;
		}
	}
	return 0;
err_queues:
	while (i-- > 0) {
		host->ops->ioeventfd(host->opaque, base + REG_QUEUE_NOTIFY, 4,
				     false, true, i, vdev->queues[i].kick_fd,
				     false);
		close(vdev->queues[i].kick_fd);
		vdev->queues[i].kick_fd = -1;
	}
	host->ops->irqfd(host->opaque, t->irq_fd, gsi, false);
err_irq:
	close(t->irq_fd);
	t->irq_fd = -1;
err_ack:
	close(t->ack_fd);
	t->ack_fd = -1;
	return ret;
}

void virtio_mmio_destroy(struct virtio_mmio *t)
{
	struct virtio_dev *vdev = t->vdev;
	unsigned int i;

	pthread_mutex_lock(&vdev->lock);
	virtio_reset_locked(vdev);
	pthread_mutex_unlock(&vdev->lock);
	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		if (q->kick_fd < 0)
			continue;
		t->host.ops->ioeventfd(t->host.opaque,
				       t->base + REG_QUEUE_NOTIFY, 4, false,
				       true, i, q->kick_fd, false);
		close(q->kick_fd);
		q->kick_fd = -1;
	}
	if (t->irq_fd >= 0) {
		t->host.ops->irqfd(t->host.opaque, t->irq_fd, t->gsi, false);
		close(t->irq_fd);
		t->irq_fd = -1;
	}
	/* The reset above took every queue off direct. */
	if (t->ack_fd >= 0) {
		mmio_ack_in_kernel(t, false);
		close(t->ack_fd);
		t->ack_fd = -1;
	}
}
