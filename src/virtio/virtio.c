// SPDX-License-Identifier: Apache-2.0
/*
 * Device status state machine and feature negotiation shared by the
 * transports (virtio 1.2 §2.1, §2.2, §3.1.1), and deferred used-buffer
 * notifications: virtio_queue_notify() hands (notify, queue) to
 * defer_call(), so all completions of one batch signal once.
 */
#include "virtio/virtio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/defer_call.h"
#include "util/le.h"

int virtio_dev_init(struct virtio_dev *vdev, const struct virtio_dev_ops *ops,
		    void *dev, const struct guest_mem *gm,
		    unsigned int num_queues, uint16_t max_size,
		    uint64_t features, const char *name)
{
	unsigned int i;

	if (!num_queues || num_queues > VIRTIO_MAX_QUEUES || max_size < 2 ||
	    max_size > VIRTQ_MAX_SIZE || (max_size & (max_size - 1)))
		return -EINVAL;
	memset(vdev, 0, sizeof(*vdev));
	vdev->ops = ops;
	vdev->dev = dev;
	vdev->gm = gm;
	vdev->num_queues = num_queues;
	vdev->host_features = features | (1ULL << VIRTIO_F_VERSION_1);
	snprintf(vdev->name, sizeof(vdev->name), "%s", name);
	pthread_mutex_init(&vdev->lock, NULL);
	for (i = 0; i < num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		q->vdev = vdev;
		q->index = i;
		q->max_size = max_size;
		q->size = max_size;
		q->msix_vector = VIRTIO_MSI_NO_VECTOR;
		q->kick_fd = -1;
	}
	return 0;
}

void virtio_dev_destroy(struct virtio_dev *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	virtio_reset_locked(vdev);
	pthread_mutex_unlock(&vdev->lock);
	pthread_mutex_destroy(&vdev->lock);
}

void virtio_dev_pause(struct virtio_dev *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	if (!vdev->paused) {
		vdev->paused = true;
		vdev->paused_running = vdev->running;
		if (vdev->running) {
			vdev->ops->stop(vdev);
			vdev->running = false;
		}
	}
	pthread_mutex_unlock(&vdev->lock);
}

int virtio_dev_resume(struct virtio_dev *vdev)
{
	int ret = 0;

	pthread_mutex_lock(&vdev->lock);
	if (vdev->paused && vdev->paused_running) {
		ret = vdev->ops->start(vdev);
		if (!ret)
			vdev->running = true;
	}
	vdev->paused = vdev->paused_running = false;
	pthread_mutex_unlock(&vdev->lock);
	if (ret)
		virtio_dev_broken(vdev, "cannot resume the device");
	return ret;
}

uint16_t virtio_queue_used_idx(const struct virtio_dev *vdev,
			       unsigned int qi)
{
	uint64_t used = __atomic_load_n(&vdev->queues[qi].used,
					__ATOMIC_RELAXED);
	uint8_t raw[2] = { 0, 0 };

	if (used)
		guest_mem_read(vdev->gm, used + 2, raw, sizeof(raw));
	return (uint16_t)le_get(raw, 2);
}

uint8_t virtio_get_status(struct virtio_dev *vdev)
{
	uint8_t s = __atomic_load_n(&vdev->status, __ATOMIC_ACQUIRE);

	if (atomic_load(&vdev->needs_reset))
		s |= VIRTIO_STATUS_NEEDS_RESET;
	return s;
}

void virtio_reset_locked(struct virtio_dev *vdev)
{
	unsigned int i;

	if (vdev->running) {
		vdev->ops->stop(vdev);
		vdev->running = false;
	}
	vdev->paused = vdev->paused_running = false;
	__atomic_store_n(&vdev->status, 0, __ATOMIC_RELEASE);
	atomic_store(&vdev->needs_reset, false);
	vdev->driver_features = 0;
	atomic_store(&vdev->isr, 0);
	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		q->size = q->max_size;
		q->enabled = false;
		q->desc = q->avail = q->used = 0;
		q->msix_vector = VIRTIO_MSI_NO_VECTOR;
		memset(&q->vq, 0, sizeof(q->vq));
	}
}

void virtio_set_driver_features_locked(struct virtio_dev *vdev,
				       unsigned int word, uint32_t value)
{
	if (vdev->status & VIRTIO_STATUS_FEATURES_OK || word > 1)
		return;
	vdev->driver_features &= ~(0xffffffffULL << (32 * word));
	vdev->driver_features |= (uint64_t)value << (32 * word);
}

bool virtio_queue_writable_locked(struct virtio_dev *vdev,
				  struct virtio_queue *q)
{
	return !(vdev->status & VIRTIO_STATUS_DRIVER_OK) && !q->enabled;
}

bool virtio_queue_enable_locked(struct virtio_dev *vdev,
				struct virtio_queue *q)
{
	uint16_t n = q->size;
	char why[80];

	/* Split rings: a power of two up to what we offered (§2.7). */
	if (n && n <= q->max_size && !(n & (n - 1))) {
		q->enabled = true;
		return true;
	}
	snprintf(why, sizeof(why),
		 "queue %u: size %u is not a power of two up to %u", q->index,
		 n, q->max_size);
	virtio_dev_broken(vdev, why);
	return false;
}

static bool features_ok(struct virtio_dev *vdev)
{
	uint64_t f = vdev->driver_features;

	return !(f & ~vdev->host_features) &&
	       (f & (1ULL << VIRTIO_F_VERSION_1));
}

/* DRIVER_OK: start every enabled queue's ring, then the device. */
static int virtio_start_locked(struct virtio_dev *vdev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		if (!q->enabled)
			continue;
		ret = virtq_start(&q->vq, vdev->gm, q->size, q->desc, q->avail,
				  q->used, vdev->driver_features);
		if (ret) {
			log_ratelimited(&vdev->rl, LOG_WARN,
					"%s: queue %u: rings outside guest "
					"RAM or misaligned", vdev->name, i);
			return ret;
		}
	}
	ret = vdev->ops->start(vdev);
	if (!ret)
		vdev->running = true;
	return ret;
}

void virtio_set_status_locked(struct virtio_dev *vdev, uint8_t status)
{
	uint8_t old = vdev->status;

	if (status == 0) {
		virtio_reset_locked(vdev);
		return;
	}
	/* The driver only ever adds bits (virtio 1.2 §2.1.1). */
	status |= old;
	status &= ~VIRTIO_STATUS_NEEDS_RESET;
	if ((status & VIRTIO_STATUS_FEATURES_OK) &&
	    !(old & VIRTIO_STATUS_FEATURES_OK) && !features_ok(vdev))
		status &= ~VIRTIO_STATUS_FEATURES_OK;
	if ((status & VIRTIO_STATUS_DRIVER_OK) &&
	    !(old & VIRTIO_STATUS_DRIVER_OK)) {
		if (!(status & VIRTIO_STATUS_FEATURES_OK) ||
		    (status & VIRTIO_STATUS_FAILED) ||
		    atomic_load(&vdev->needs_reset)) {
			status &= ~VIRTIO_STATUS_DRIVER_OK;
		} else {
			__atomic_store_n(&vdev->status, status,
					 __ATOMIC_RELEASE);
			if (virtio_start_locked(vdev))
				virtio_dev_broken(vdev, "cannot start queues");
			return;
		}
	}
	__atomic_store_n(&vdev->status, status, __ATOMIC_RELEASE);
}

static void virtio_queue_notify_now(void *opaque)
{
	struct virtio_queue *q = opaque;
	struct virtio_dev *vdev = q->vdev;

	if (vdev->tops->notify(vdev, q))
		atomic_fetch_add(&q->stats.signals, 1);
	else
		atomic_fetch_add(&q->stats.coalesced, 1);
}

void virtio_queue_notify(struct virtio_queue *q)
{
	defer_call(virtio_queue_notify_now, q);
}

void virtio_config_changed(struct virtio_dev *vdev)
{
	__atomic_fetch_add(&vdev->config_generation, 1, __ATOMIC_RELEASE);
	vdev->tops->notify_config(vdev);
}

void virtio_dev_broken(struct virtio_dev *vdev, const char *why)
{
	atomic_fetch_add(&vdev->broken_count, 1);
	log_ratelimited(&vdev->rl, LOG_WARN, "%s: device needs reset: %s",
			vdev->name, why);
	if (atomic_exchange(&vdev->needs_reset, true))
		return;
	if (__atomic_load_n(&vdev->status, __ATOMIC_ACQUIRE) &
	    VIRTIO_STATUS_DRIVER_OK)
		virtio_config_changed(vdev);
}

/* Polling counters of queue @i, when it polled at all. */
static void virtio_print_poll_stats(struct virtio_dev *vdev, unsigned int i,
				    int fd)
{
	struct virtio_queue_stats *s = &vdev->queues[i].stats;
	uint64_t hits = atomic_load(&s->poll_hits);
	uint64_t misses = atomic_load(&s->poll_misses);

	if (!hits && !misses)
		return;
	dprintf(fd,
		"microvm: stats %s queue %u polling: hits %llu misses %llu "
		"polled-us %llu window-us %llu\n",
		vdev->name, i, (unsigned long long)hits,
		(unsigned long long)misses,
		(unsigned long long)atomic_load(&s->poll_ns) / 1000,
		(unsigned long long)atomic_load(&s->poll_window_ns) / 1000);
}

/* Interrupt-holding counters of queue @i, when it held any. */
static void virtio_print_hold_stats(struct virtio_dev *vdev, unsigned int i,
				    int fd)
{
	struct virtio_queue_stats *s = &vdev->queues[i].stats;
	uint64_t timed = atomic_load(&s->hold_timed);
	uint64_t full = atomic_load(&s->hold_full);

	if (!timed && !full)
		return;
	dprintf(fd,
		"microvm: stats %s queue %u irq-hold: released by time %llu "
		"by count %llu\n",
		vdev->name, i, (unsigned long long)timed,
		(unsigned long long)full);
}

/* Requests of queue @i by operation (blk), when it served any. */
static void virtio_print_op_stats(struct virtio_dev *vdev, unsigned int i,
				  int fd)
{
	struct virtio_queue_stats *s = &vdev->queues[i].stats;
	unsigned long long v[] = {
		atomic_load(&s->read_count), atomic_load(&s->read_bytes),
		atomic_load(&s->write_count), atomic_load(&s->write_bytes),
		atomic_load(&s->flush_count), atomic_load(&s->discard_count),
		atomic_load(&s->write_zeroes_count),
		atomic_load(&s->execute_fails), atomic_load(&s->invalid_reqs),
		atomic_load(&s->engine_full),
	};
	unsigned long long any = 0;
	size_t k;

	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		any |= v[k];
	if (!any)
		return;
	dprintf(fd,
		"microvm: stats %s queue %u ops: read %llu read-bytes %llu "
		"write %llu write-bytes %llu flush %llu discard %llu "
		"write-zeroes %llu execute-fails %llu invalid %llu "
		"engine-full %llu\n",
		vdev->name, i, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
		v[8], v[9]);
}

void virtio_dev_print_stats(struct virtio_dev *vdev, int fd)
{
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue_stats *s = &vdev->queues[i].stats;
		uint64_t req = atomic_load(&s->requests);
		uint64_t sig = atomic_load(&s->signals);

		dprintf(fd,
			"microvm: stats %s queue %u: requests %llu batches "
			"%llu irq-signals %llu kicks %llu errors %llu "
			"signals/request %.3f coalesced %llu\n",
			vdev->name, i, (unsigned long long)req,
			(unsigned long long)atomic_load(&s->batches),
			(unsigned long long)sig,
			(unsigned long long)atomic_load(&s->kicks),
			(unsigned long long)atomic_load(&s->errors),
			req ? (double)sig / (double)req : 0.0,
			(unsigned long long)atomic_load(&s->coalesced));
		virtio_print_op_stats(vdev, i, fd);
		virtio_print_poll_stats(vdev, i, fd);
		virtio_print_hold_stats(vdev, i, fd);
		if (atomic_load(&vdev->queues[i].stats.throttled))
			dprintf(fd, "microvm: stats %s queue %u rate-limit: "
				"throttled %llu\n", vdev->name, i,
				(unsigned long long)atomic_load(
					&vdev->queues[i].stats.throttled));
	}
}
