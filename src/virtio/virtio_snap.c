// SPDX-License-Identifier: Apache-2.0
/*
 * A paused virtio device's state in a snapshot and back: status, features,
 * configuration generation, pending interrupt bits, and each queue's
 * configuration and the indices where it stopped; then the transport's
 * registers and the device's own state. A load goes into a device just
 * attached (reset) and leaves it paused, so that the machine's resume
 * starts it from where the snapshot left it. Everything read is checked
 * as a register write would be: a file cannot give a queue a size, ring
 * or index the driver could not have.
 */
#include <errno.h>
#include <stdio.h>

#include "snapshot/snap.h"
#include "virtio/virtio.h"

/* The status bits a driver may have set (virtio 1.2 §2.1). */
#define STATUS_BITS (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | \
		     VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FEATURES_OK | \
		     VIRTIO_STATUS_FAILED)

int virtio_dev_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&vdev->lock);
	if (!vdev->paused) {
		pthread_mutex_unlock(&vdev->lock);
		snprintf(err, errlen, "%s: not paused", vdev->name);
		return -EBUSY;
	}
	if (!vdev->tops->save || (vdev->paused_running &&
				  !vdev->ops->save)) {
		pthread_mutex_unlock(&vdev->lock);
		snprintf(err, errlen, "%s: a %s device on %s cannot be "
			 "snapshotted yet", vdev->name, vdev->ops->name,
			 vdev->tops->name);
		return -EOPNOTSUPP;
	}
	snap_put_u32(w, vdev->ops->device_id);
	snap_put_u32(w, vdev->num_queues);
	snap_put_u64(w, vdev->host_features);
	snap_put_u8(w, vdev->status);
	snap_put_u8(w, atomic_load(&vdev->needs_reset));
	snap_put_u64(w, vdev->driver_features);
	snap_put_u32(w, __atomic_load_n(&vdev->config_generation,
					__ATOMIC_ACQUIRE));
	snap_put_u32(w, atomic_load(&vdev->isr));
	snap_put_u8(w, vdev->paused_running);
	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];
		struct virtq_state st = { 0 };

		if (vdev->paused_running && q->enabled)
			virtq_save(&q->vq, &st);
		snap_put_u16(w, q->size);
		snap_put_u8(w, q->enabled);
		snap_put_u64(w, q->desc);
		snap_put_u64(w, q->avail);
		snap_put_u64(w, q->used);
		snap_put_u16(w, q->msix_vector);
		snap_put_u16(w, st.last_avail_idx);
		snap_put_u16(w, st.used_idx);
		snap_put_u16(w, st.signalled_used);
	}
	/* The transport's part last: its load replays writes with effects
	 * (interrupts), after everything else was accepted. */
	if (vdev->ops->save)
		ret = vdev->ops->save(vdev, w, err, errlen);
	if (!ret)
		ret = vdev->tops->save(vdev, w, err, errlen);
	pthread_mutex_unlock(&vdev->lock);
	return ret;
}

static int load_fail(struct virtio_dev *vdev, char *err, size_t errlen,
		     const char *what)
{
	snprintf(err, errlen, "%s: %s", vdev->name, what);
	return -EINVAL;
}

/* The queues, read and checked before any is touched. */
struct queue_load {
	uint16_t size;
	bool enabled;
	uint64_t desc, avail, used;
	uint16_t vector;
	struct virtq_state st;
};

static int queues_read(struct virtio_dev *vdev, struct snap_reader *r,
		       struct queue_load *ql, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++) {
		struct queue_load *l = &ql[i];

		l->size = snap_get_u16(r);
		l->enabled = snap_get_u8(r);
		l->desc = snap_get_u64(r);
		l->avail = snap_get_u64(r);
		l->used = snap_get_u64(r);
		l->vector = snap_get_u16(r);
		l->st.last_avail_idx = snap_get_u16(r);
		l->st.used_idx = snap_get_u16(r);
		l->st.signalled_used = snap_get_u16(r);
		if (r->bad)
			return load_fail(vdev, err, errlen, "state truncated");
		if (l->enabled && (!l->size || l->size > vdev->queues[i].max_size ||
				   (l->size & (l->size - 1)))) {
			snprintf(err, errlen, "%s: queue %u: size %u is not a "
				 "power of two up to %u", vdev->name, i,
				 l->size, vdev->queues[i].max_size);
			return -EINVAL;
		}
	}
	return 0;
}

int virtio_dev_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen)
{
	struct queue_load ql[VIRTIO_MAX_QUEUES];
	uint32_t id, nq, gen, isr;
	uint64_t host, drv;
	uint8_t status, broken, running;
	unsigned int i;
	int ret;

	id = snap_get_u32(r);
	nq = snap_get_u32(r);
	host = snap_get_u64(r);
	status = snap_get_u8(r);
	broken = snap_get_u8(r);
	drv = snap_get_u64(r);
	gen = snap_get_u32(r);
	isr = snap_get_u32(r);
	running = snap_get_u8(r);
	if (r->bad)
		return load_fail(vdev, err, errlen, "state truncated");
	if (id != vdev->ops->device_id || nq != vdev->num_queues) {
		snprintf(err, errlen, "%s: the snapshot has a device of type "
			 "%u with %u queues here; this one is type %u with %u",
			 vdev->name, id, nq, vdev->ops->device_id,
			 vdev->num_queues);
		return -EINVAL;
	}
	if (host != vdev->host_features) {
		snprintf(err, errlen, "%s: the snapshot's device offered "
			 "features 0x%llx; this one offers 0x%llx", vdev->name,
			 (unsigned long long)host,
			 (unsigned long long)vdev->host_features);
		return -EINVAL;
	}
	/*
	 * Only what the status rules let a driver reach (virtio 1.2 §3.1.1):
	 * DRIVER_OK after FEATURES_OK, FEATURES_OK with VERSION_1; a device
	 * with DRIVER_OK runs unless it broke (then NEEDS_RESET).
	 */
	if ((status & ~STATUS_BITS) || (drv & ~host) ||
	    (running && !(status & VIRTIO_STATUS_DRIVER_OK)) ||
	    ((status & VIRTIO_STATUS_DRIVER_OK) &&
	     !(status & VIRTIO_STATUS_FEATURES_OK)) ||
	    ((status & VIRTIO_STATUS_FEATURES_OK) &&
	     !(drv & (1ULL << VIRTIO_F_VERSION_1))) ||
	    ((status & VIRTIO_STATUS_DRIVER_OK) && !running && !broken) ||
	    (isr & ~(VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG)))
		return load_fail(vdev, err, errlen, "inconsistent status, "
				 "features or interrupt bits");
	ret = queues_read(vdev, r, ql, err, errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&vdev->lock);
	if (vdev->status || vdev->running) {
		pthread_mutex_unlock(&vdev->lock);
		return load_fail(vdev, err, errlen, "not in its reset state");
	}
	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		q->size = ql[i].size ? ql[i].size : q->max_size;
		q->enabled = ql[i].enabled;
		q->desc = ql[i].desc;
		q->avail = ql[i].avail;
		q->used = ql[i].used;
		q->msix_vector = ql[i].vector;
		if (!running || !q->enabled)
			continue;
		if (virtq_restore(&q->vq, vdev->gm, q->size, q->desc, q->avail,
				  q->used, drv, &ql[i].st)) {
			snprintf(err, errlen, "%s: queue %u: rings outside "
				 "guest RAM, misaligned, or indices apart by "
				 "more than its size", vdev->name, i);
			ret = -EINVAL;
			break;
		}
	}
	if (!ret && vdev->ops->load)
		ret = vdev->ops->load(vdev, r, err, errlen);
	/*
	 * The transport's part last, without vdev->lock: virtio-pci replays
	 * config writes under its function's lock, whose window callback
	 * takes vdev->lock (that order, never the other); it checks that
	 * nothing is left over before any write with an effect. Nothing
	 * else runs: the vCPUs have not started.
	 */
	pthread_mutex_unlock(&vdev->lock);
	if (!ret)
		ret = vdev->tops->load ? vdev->tops->load(vdev, r, err, errlen) :
					 load_fail(vdev, err, errlen,
						   "its transport has no "
						   "snapshot state");
	pthread_mutex_lock(&vdev->lock);
	if (!ret && !snap_reader_done(r))
		ret = load_fail(vdev, err, errlen, "state has bytes left over");
	if (ret) {
		virtio_reset_locked(vdev);
		pthread_mutex_unlock(&vdev->lock);
		return ret;
	}
	vdev->driver_features = drv;
	__atomic_store_n(&vdev->config_generation, gen, __ATOMIC_RELEASE);
	atomic_store(&vdev->isr, isr);
	atomic_store(&vdev->needs_reset, broken != 0);
	__atomic_store_n(&vdev->status, status, __ATOMIC_RELEASE);
	/* virtio_dev_resume() starts it, as after a pause. */
	vdev->paused = true;
	vdev->paused_running = running;
	pthread_mutex_unlock(&vdev->lock);
	return 0;
}
