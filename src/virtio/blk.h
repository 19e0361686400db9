/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-blk device (virtio 1.2 §5.2) on top of the virtio core and the disk
 * backend: feature set and configuration space, and a queue backend
 * (blk_backend.h) that serves the enabled queues: by default one I/O
 * thread per queue ("vda-q0", ...) that pops and parses requests, submits
 * each batch to its own disk queue with one flush, and signals at most once
 * per completion batch; with BLK_ENGINE_VHOST the vhost-blk kernel module.
 * It knows nothing of the transport or of files.
 *
 *	blk_dev_create(&b, &vdev, &cfg, &gm, "vda");  // virtio_dev_init()
 *	virtio_mmio_init(&t, &vdev, ...);             // the transport
 *	... guest runs: DRIVER_OK starts threads, reset stops them ...
 *	virtio_mmio_destroy(&t);
 *	blk_dev_destroy(b);                           // virtio_dev_destroy()
 *	disk_close(cfg.disk);
 */
#ifndef MICROVM_BLK_H
#define MICROVM_BLK_H

#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "util/ratelimit.h"
#include "virtio/blk_req.h"
#include "virtio/disk.h"
#include "virtio/virtio.h"

/* Largest segment the driver is told to build (config size_max). */
#define BLK_SIZE_MAX (1u << 20)
/* Most sectors per DISCARD / WRITE_ZEROES request (2 GiB). */
#define BLK_DWZ_MAX_SECTORS (1u << 22)
/* Bytes of configuration space (virtio 1.2 §5.2.4, up to unused1). */
#define BLK_CONFIG_BYTES 60

/* Configuration space offsets (virtio 1.2 §5.2.4). */
#define BLK_CFG_CAPACITY 0
#define BLK_CFG_SIZE_MAX 8
#define BLK_CFG_SEG_MAX 12
#define BLK_CFG_GEOMETRY 16
#define BLK_CFG_BLK_SIZE 20
#define BLK_CFG_PHYS_BLOCK_EXP 24
#define BLK_CFG_ALIGNMENT_OFFSET 25
#define BLK_CFG_MIN_IO_SIZE 26
#define BLK_CFG_OPT_IO_SIZE 28
#define BLK_CFG_WRITEBACK 32
#define BLK_CFG_NUM_QUEUES 34
#define BLK_CFG_MAX_DISCARD_SECTORS 36
#define BLK_CFG_MAX_DISCARD_SEG 40
#define BLK_CFG_DISCARD_ALIGNMENT 44
#define BLK_CFG_MAX_WZ_SECTORS 48
#define BLK_CFG_MAX_WZ_SEG 52
#define BLK_CFG_WZ_MAY_UNMAP 56

/*
 * Adaptive polling (blk_poll.c): after a round a queue thread busy-polls
 * its ring and its disk queue, kicks off, for up to a window that adapts
 * between 0 and blk_config.poll_us before it sleeps. BLK_POLL_MAX_US caps
 * what may be asked for: a guest that stops submitting costs at most one
 * window of CPU time per wakeup.
 */
#define BLK_POLL_MAX_US 1000u /* VHOST_BLK_MAX_POLL_US too */
/*
 * The default: QEMU's, and the best of 0/32/200 in tests/bench/poll-ab.c
 * (O_DIRECT, io_uring, 2026-12-01): at QD 1 kicks per request fall from
 * 1 to 0.01 and requests rise by a third at 32 us, a fifth at 200 us, which
 * polls four times as long; at QD 32 both end the kicks (0.031 to 0).
 */
#define BLK_POLL_DEFAULT_US 32u

/*
 * Interrupt holding (blk_queue.c), off by default: a completion batch
 * whose notification the driver asks for may hold it back for up to
 * blk_config.irq_hold_us, so that completions finished meanwhile share
 * one interrupt; it goes out early once blk_config.irq_hold_max
 * completions have joined, and at once when the queue stops. Fewer
 * interrupts for up to irq_hold_us more latency per request, as NVMe's
 * aggregation time and threshold and virtio-net's notification
 * coalescing trade them. BLK_IRQ_HOLD_MAX_US caps the hold.
 */
#define BLK_IRQ_HOLD_MAX_US 10000u

/* What serves the queues (virtio/blk_backend.h). */
enum blk_engine {
	BLK_ENGINE_THREADS, /* the VMM's I/O threads over the disk backend */
	BLK_ENGINE_VHOST,   /* the vhost-blk kernel module */
};

struct vhost_sys;

/* Device settings, from the command line via main. */
struct blk_config {
	struct disk *disk;       /* opened by the caller, outlives the device */
	const char *serial;      /* GET_ID string (<= 20 printable bytes), or
				  * NULL to derive one from the image */
	unsigned int num_queues; /* 1 .. VIRTIO_MAX_QUEUES */
	uint16_t queue_size;     /* power of two, 2 .. VIRTQ_MAX_SIZE */
	bool defer_off;          /* signal each completion as it is pushed
				  * (still honouring the driver's
				  * suppression), not once per batch */
	uint32_t poll_us;        /* most busy-polling per wakeup, 0 ..
				  * BLK_POLL_MAX_US; 0: off */
	uint32_t irq_hold_us;    /* longest hold of a notification, 0 ..
				  * BLK_IRQ_HOLD_MAX_US; 0: off */
	uint32_t irq_hold_max;   /* completions that end a hold early;
				  * 0: queue_size */
	enum blk_engine engine;
	/* Token buckets shared by all the queues (util/ratelimit.h); all
	 * zero: none. BLK_ENGINE_THREADS only. */
	struct rl_config rl;
	/* BLK_ENGINE_VHOST: the system calls on /dev/vhost-blk; NULL: the
	 * real ones (vhost_sys_host), a fake in tests. */
	const struct vhost_sys *vhost_sys;
};

struct blk_dev;

/**
 * blk_dev_create() - create a block device and initialise its virtio core.
 * @out: the new device
 * @vdev: core state to initialise (virtio_dev_init()); the caller then
 *        attaches a transport to it
 * @cfg: disk, serial, queue count and size; @cfg->disk must stay open
 *       until blk_dev_destroy()
 * @gm: guest memory the queues live in
 * @name: device name for messages and thread names, e.g. "vda"
 *
 * Offers VERSION_1, SEG_MAX, SIZE_MAX, BLK_SIZE, TOPOLOGY, FLUSH,
 * EVENT_IDX, INDIRECT_DESC, plus RO for a read-only disk, DISCARD and
 * WRITE_ZEROES where the disk supports them, and MQ for more than one
 * queue. Capacity is the disk size in 512-byte sectors, rounded down (a
 * warning names a size that is not a multiple of 512).
 *
 * With BLK_ENGINE_VHOST the disk must be O_DIRECT on a regular file or
 * block device; /dev/vhost-blk is opened and set up here (blk_vhost.h),
 * and the features it cannot serve are not offered.
 *
 * Return: 0, or -EINVAL (bad queue count or size, poll_us above
 * BLK_POLL_MAX_US, bad serial, a rate limit rl_config_check() refuses or
 * one with BLK_ENGINE_VHOST; a message names the value), -ENOMEM, or
 * the vhost setup's -errno (a message names the fix).
 * Context: startup.
 */
int blk_dev_create(struct blk_dev **out, struct virtio_dev *vdev,
		   const struct blk_config *cfg, const struct guest_mem *gm,
		   const char *name);

/**
 * blk_dev_destroy() - stop the device and free it.
 * @b: device from blk_dev_create(), or NULL
 *
 * Calls virtio_dev_destroy() on its vdev, which stops any queue thread
 * still running; the transport must already be detached.
 * Context: teardown.
 */
void blk_dev_destroy(struct blk_dev *b);

/**
 * blk_dev_serial() - the GET_ID string in use (given or derived).
 * @b: device
 * Return: a NUL-terminated string of at most 20 bytes. Context: any thread.
 */
const char *blk_dev_serial(const struct blk_dev *b);

/**
 * blk_dev_set_rate_limit() - replace the device's rate limit while its
 * queues run: fresh buckets (full, bursts unspent) for the next requests,
 * and a queue thread waiting for tokens under the old limit looks again
 * at once.
 * @b: device
 * @rl: the new limit; all zero lifts it
 *
 * A request the limit holds back stays in its queue thread, parsed but
 * not submitted, while the thread sleeps until its tokens are due (no
 * polling, no other queue or disk held back); each one counts once in
 * the queue's throttled counter. A stop or reset submits it at once.
 * Return: 0, -EINVAL (a value rl_config_check() refuses; a message names
 * it), or -ENOTSUP for engine=vhost, whose module cannot honour a limit.
 * Context: any thread but the queue threads, vdev->lock not held.
 */
int blk_dev_set_rate_limit(struct blk_dev *b, const struct rl_config *rl);

/**
 * blk_dev_print_stats() - what the queue backend can tell for --stats
 * beyond the core's per-queue counters (vhost: ring positions), one line
 * per queue; nothing for the I/O threads, which fill the core's counters.
 * Context: any thread.
 */
void blk_dev_print_stats(struct blk_dev *b, int fd);

/**
 * blk_dev_replace_file() - a new image was moved into @b's struct disk
 * (a drive swap): the I/O-thread engine's disk queues take @fd in place
 * of @old_fd; engine=vhost hands the module disk->fd at its next start.
 * Return: 0, or -errno with every queue back on @old_fd.
 * Context: main thread, the device paused (virtio_dev_pause()).
 */
int blk_dev_replace_file(struct blk_dev *b, int fd, int old_fd);

/**
 * blk_dev_disk_changed() - the image's size may have changed: the
 * capacity follows it and the driver gets a configuration change
 * interrupt (virtio 1.2 §5.2.4: it re-reads capacity).
 * Context: main thread.
 */
void blk_dev_disk_changed(struct blk_dev *b);

#endif
