/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtio device core shared by every transport (mmio, pci) and every
 * device (blk): device status and feature negotiation (virtio 1.2 §2.1,
 * §2.2, §3.1), per-queue configuration, the reset protocol, and used-buffer
 * notifications that go out through the transport, deferred so that one
 * batch raises one interrupt.
 *
 * Ownership: the transport owns struct virtio_dev and calls the virtio_*
 * functions from vCPU threads with vdev->lock held (the _locked suffix);
 * the device (ops) owns its queue threads, which touch only their own
 * struct virtio_queue and call virtio_queue_notify().
 *
 *   transport register write -> virtio_set_status_locked()
 *     DRIVER_OK -> virtq_start() for each enabled queue -> ops->start()
 *     0 (reset) -> ops->stop() (threads joined, in-flight completed)
 *   queue thread: pop, process, push; if virtq_need_notify():
 *     virtio_queue_notify(q) -> defer_call() -> tops->notify() once
 *   a queue served outside the VMM (vhost): ops->start() calls
 *     tops->direct_irq(q, on); the transport hands ops->call_changed()
 *     the eventfd that raises q's interrupt (and a new one whenever
 *     masking changes which); ops->stop() turns it off again.
 */
#ifndef MICROVM_VIRTIO_H
#define MICROVM_VIRTIO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "util/log.h"
#include "virtio/virtq.h"

#define VIRTIO_MAX_QUEUES 64

/* Device status bits (virtio 1.2 §2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER 2
#define VIRTIO_STATUS_DRIVER_OK 4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED 128

/* Transport-independent feature bits (virtio 1.2 §6). */
#define VIRTIO_F_INDIRECT_DESC VIRTQ_F_INDIRECT_DESC
#define VIRTIO_F_EVENT_IDX VIRTQ_F_EVENT_IDX
#define VIRTIO_F_VERSION_1 32

/* ISR bits (virtio 1.2 §4.1.4.5, §4.2.2 InterruptStatus). */
#define VIRTIO_ISR_QUEUE 1
#define VIRTIO_ISR_CONFIG 2

#define VIRTIO_MSI_NO_VECTOR 0xffff

struct virtio_dev;
struct snap_writer;
struct snap_reader;

/* Per-queue counters; written by the queue thread, read by --stats. */
struct virtio_queue_stats {
	atomic_uint_fast64_t requests; /* chains completed */
	atomic_uint_fast64_t batches;  /* completion batches processed */
	atomic_uint_fast64_t signals;  /* interrupts raised (irqfd writes) */
	atomic_uint_fast64_t coalesced; /* notifications a pending interrupt
					 * covered (mmio: ISR bit still set) */
	atomic_uint_fast64_t kicks;    /* guest notifications received */
	atomic_uint_fast64_t errors;   /* requests failed with an error */
	/* Adaptive polling (a device's queue thread may busy-poll the ring
	 * and its backend before sleeping): */
	atomic_uint_fast64_t poll_hits;   /* windows that found work */
	atomic_uint_fast64_t poll_misses; /* windows that ended in a sleep */
	atomic_uint_fast64_t poll_ns;     /* time spent polling */
	atomic_uint_fast64_t poll_window_ns; /* the current window */
	/* Interrupt holding (a device may hold a notification back for more
	 * completions to join it): notifications released when the hold
	 * time ran out, and when enough completions had joined. */
	atomic_uint_fast64_t hold_timed;
	atomic_uint_fast64_t hold_full;
	/*
	 * Per operation (blk), counted as a request that reached the disk
	 * completes: those that succeeded and the bytes they moved
	 * (Firecracker's read_count, read_bytes, ...). Failures apart:
	 * execute_fails (the disk failed it), invalid_reqs (refused before
	 * execution: a malformed chain or header); both are in errors too.
	 * engine_full: requests that waited for room in the disk queue.
	 */
	atomic_uint_fast64_t read_count;
	atomic_uint_fast64_t read_bytes;
	atomic_uint_fast64_t write_count;
	atomic_uint_fast64_t write_bytes;
	atomic_uint_fast64_t flush_count;
	atomic_uint_fast64_t discard_count;
	atomic_uint_fast64_t write_zeroes_count;
	atomic_uint_fast64_t execute_fails;
	atomic_uint_fast64_t invalid_reqs;
	atomic_uint_fast64_t engine_full;
	/* Requests a rate limit held back in the queue (each once). */
	atomic_uint_fast64_t throttled;
};

struct virtio_queue {
	struct virtio_dev *vdev;
	unsigned int index;
	/* Written by the driver through the transport, under vdev->lock. */
	uint16_t size;
	uint16_t max_size;
	bool enabled;
	uint64_t desc, avail, used;
	uint16_t msix_vector;
	/* Host side. */
	int kick_fd;     /* eventfd the transport wired to an ioeventfd */
	struct virtq vq; /* owned by the queue thread once started */
	struct virtio_queue_stats stats;
};

/* What a device implements; a const table per device type. */
struct virtio_dev_ops {
	const char *name;
	uint32_t device_id;
	/* Device-specific configuration space (virtio 1.2 §4.x device cfg). */
	void (*config_access)(struct virtio_dev *vdev, uint64_t off,
			      uint8_t *data, unsigned int len, bool is_write);
	/* DRIVER_OK: every enabled queue's virtq has been started. */
	int (*start)(struct virtio_dev *vdev);
	/* Reset: stop queue threads; in-flight requests finished first. */
	void (*stop)(struct virtio_dev *vdev);
	/*
	 * Optional, for a device whose queues are served outside the VMM
	 * (vhost): from now on @fd is the eventfd that raises @q's
	 * used-buffer interrupt. Called by the transport between
	 * tops->direct_irq(on) and (off), under the transport's interrupt
	 * lock, so it must not take vdev->lock.
	 */
	void (*call_changed)(struct virtio_dev *vdev, struct virtio_queue *q,
			     int fd);
	/*
	 * Optional, for a device with no queue thread (virtio-input): the
	 * transport wires no ioeventfd (and makes no kick eventfd) for its
	 * queues, and calls kick() for each notification of @q in the
	 * thread that wrote it (a vCPU's), vdev->lock held. The device
	 * ignores a kick while it is not running.
	 */
	void (*kick)(struct virtio_dev *vdev, struct virtio_queue *q);
	/*
	 * Optional: the device's own state for a snapshot (paused, queues
	 * stopped), and back into a device just attached. A device that
	 * ran and has no save() cannot be snapshotted. Context: the
	 * machine's lifecycle thread, vdev->lock held. 0 or -errno with a
	 * message in @err.
	 */
	int (*save)(struct virtio_dev *vdev, struct snap_writer *w, char *err,
		    size_t errlen);
	int (*load)(struct virtio_dev *vdev, struct snap_reader *r, char *err,
		    size_t errlen);
};

/* What a transport implements; a const table per transport type. */
struct virtio_transport_ops {
	const char *name;
	/*
	 * Raise the used-buffer interrupt of @q (not deferred). Returns
	 * false when no new interrupt was needed: one the driver has not
	 * acknowledged yet covers this buffer too.
	 */
	bool (*notify)(struct virtio_dev *vdev, struct virtio_queue *q);
	/* Raise the configuration-change interrupt. */
	void (*notify_config)(struct virtio_dev *vdev);
	/*
	 * @on: from now on something outside the VMM (a vhost worker)
	 * signals @q's completions by writing an eventfd; the transport
	 * picks that eventfd and hands it to ops->call_changed() now and
	 * whenever its choice changes (MSI-X mask, unmask, a new vector),
	 * keeping the spec's interrupt semantics. @on false: back to
	 * notify(); whatever the outside signaller left pending is
	 * delivered (or stays pending while masked).
	 * Context: the thread that starts or stops the device, vdev->lock
	 * held.
	 */
	void (*direct_irq)(struct virtio_dev *vdev, struct virtio_queue *q,
			   bool on);
	/* The transport's registers for a snapshot, and back (as the
	 * device's save and load; NULL: it cannot be snapshotted). */
	int (*save)(struct virtio_dev *vdev, struct snap_writer *w, char *err,
		    size_t errlen);
	int (*load)(struct virtio_dev *vdev, struct snap_reader *r, char *err,
		    size_t errlen);
};

struct virtio_dev {
	const struct virtio_dev_ops *ops;
	const struct virtio_transport_ops *tops;
	void *dev;       /* the device's private state */
	void *transport; /* the transport's private state */
	const struct guest_mem *gm;
	char name[32];   /* e.g. "vda", for messages and thread names */
	pthread_mutex_t lock;
	uint8_t status;          /* as the driver wrote it */
	atomic_bool needs_reset; /* NEEDS_RESET, settable from any thread */
	uint64_t host_features;
	uint64_t driver_features;
	uint32_t config_generation;
	atomic_uint isr;
	bool running; /* ops->start() succeeded and ops->stop() not yet run */
	bool paused;  /* virtio_dev_pause() ran, virtio_dev_resume() not yet */
	bool paused_running; /* it was running when paused */
	unsigned int num_queues;
	struct virtio_queue queues[VIRTIO_MAX_QUEUES];
	struct log_ratelimit rl;
	atomic_uint_fast64_t broken_count;
};

/**
 * virtio_dev_init() - set up the core state of a device.
 * @num_queues: 1..VIRTIO_MAX_QUEUES
 * @max_size: largest queue size offered, a power of two <= VIRTQ_MAX_SIZE
 * @features: device feature bits; VERSION_1 is always added
 * Return: 0 or -EINVAL.  Context: startup.
 */
int virtio_dev_init(struct virtio_dev *vdev, const struct virtio_dev_ops *ops,
		    void *dev, const struct guest_mem *gm,
		    unsigned int num_queues, uint16_t max_size,
		    uint64_t features, const char *name);

/** virtio_dev_destroy() - stop the device and free the core state. */
void virtio_dev_destroy(struct virtio_dev *vdev);

/**
 * virtio_set_status_locked() - the driver writes the status register.
 * Enforces the negotiation rules: FEATURES_OK is refused (stays clear)
 * unless the driver's features are a subset of ours and include VERSION_1;
 * DRIVER_OK starts the queues and the device, and is refused while the
 * device reports NEEDS_RESET; 0 resets. Bits may only be
 * added, never cleared, except by writing 0.
 * Context: vCPU thread, vdev->lock held.
 */
void virtio_set_status_locked(struct virtio_dev *vdev, uint8_t status);

/**
 * virtio_queue_used_idx() - queue @qi's used index as guest memory holds
 * it now (written by whoever serves the queue: a kernel vhost device
 * too), or 0 when the queue has no ring. For --stats.
 * Context: any thread.
 */
uint16_t virtio_queue_used_idx(const struct virtio_dev *vdev,
			       unsigned int qi);

/**
 * virtio_get_status() - the status register as the driver reads it.
 * Context: any thread.
 */
uint8_t virtio_get_status(struct virtio_dev *vdev);

/**
 * virtio_reset_locked() - device reset (virtio 1.2 §2.4): stop the device
 * and forget negotiated state and queue configuration.
 * Context: vCPU thread, vdev->lock held.
 */
void virtio_reset_locked(struct virtio_dev *vdev);

/**
 * virtio_dev_pause() - stop serving the queues without a reset: every
 * request the device took completes and is pushed, its threads are
 * joined (vhost: the module stops the rings), the avail index where each
 * queue stopped is kept, and status, features, queue configuration and
 * pending interrupts stay as they are. Idempotent.
 * Context: the machine's lifecycle thread, with the vCPUs parked (no
 * register write may run meanwhile).
 */
void virtio_dev_pause(struct virtio_dev *vdev);

/**
 * virtio_dev_resume() - serve the queues again from where the pause left
 * them: nothing is replayed, nothing is skipped, and requests the driver
 * added meanwhile are looked at first. A device that cannot start again
 * reports NEEDS_RESET.
 * Return: 0, or the device's -errno (the device is then broken).
 * Context: as virtio_dev_pause().
 */
int virtio_dev_resume(struct virtio_dev *vdev);

/**
 * virtio_dev_save() - a paused device's state (virtio_snap.c): status,
 * features, queues and where each stopped, the transport's registers,
 * the device's own state.
 * Return: 0, -EBUSY (not paused) or -EOPNOTSUPP (its transport or
 * device keeps no snapshot state), with a message in @err.
 * Context: the machine's lifecycle thread, vCPUs parked.
 */
int virtio_dev_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen);

/**
 * virtio_dev_load() - virtio_dev_save()'s state into @vdev, just attached
 * and never driven: every field is checked as the driver's register
 * writes would be and against this device (type, queues, features) before
 * any is applied. The device is left paused; virtio_dev_resume() starts
 * it from the saved indices.
 * Return: 0, or -EINVAL with a message in @err (the device is left reset).
 * Context: as virtio_dev_save().
 */
int virtio_dev_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen);

/**
 * virtio_set_driver_features_locked() - store 32 feature bits at @word
 * (0 or 1); ignored once FEATURES_OK is set.
 */
void virtio_set_driver_features_locked(struct virtio_dev *vdev,
				       unsigned int word, uint32_t value);

/**
 * virtio_queue_writable_locked() - may the driver still change the
 * configuration of @q? (Not once DRIVER_OK is set or the queue is enabled;
 * virtio 1.2 §4.2.2.2.)
 */
bool virtio_queue_writable_locked(struct virtio_dev *vdev,
				  struct virtio_queue *q);

/**
 * virtio_queue_enable_locked() - the driver enables @q (queue_enable,
 * QueueReady). Refused unless the size it chose is a power of two no
 * larger than max_size (virtio 1.2 §2.7, §4.1.4.3.2, §4.2.2.2): the queue
 * then stays disabled and the device reports NEEDS_RESET, so the guest
 * never picks the host's allocation sizes or in-flight depth.
 * Return: true when @q is now enabled.
 * Context: vCPU thread, vdev->lock held, @q writable.
 */
bool virtio_queue_enable_locked(struct virtio_dev *vdev,
				struct virtio_queue *q);

/**
 * virtio_queue_notify() - request the used-buffer interrupt for @q. Inside
 * a defer_call section (the queue thread's batch) the transport is told
 * once at the section's end however often this is called.
 * Context: the queue thread of @q.
 */
void virtio_queue_notify(struct virtio_queue *q);

/**
 * virtio_dev_broken() - the guest broke the device (malformed ring): set
 * NEEDS_RESET, raise the config interrupt, log rate-limited and count.
 * Context: any thread.
 */
void virtio_dev_broken(struct virtio_dev *vdev, const char *why);

/**
 * virtio_config_changed() - bump config_generation and raise the
 * configuration-change interrupt. Context: any thread.
 */
void virtio_config_changed(struct virtio_dev *vdev);

/**
 * virtio_dev_print_stats() - per-queue counters, one line each, then for
 * each queue an "ops:" line of its requests by operation (when it served
 * any), a "polling:" line (when it polled) and an "irq-hold:" line (when
 * it held notifications).
 */
void virtio_dev_print_stats(struct virtio_dev *vdev, int fd);

#endif
