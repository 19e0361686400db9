/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR Apache-2.0 */
/*
 * vhost-blk: the user ABI of the project's in-kernel virtio-blk backend
 * (kernel/vhost-blk). /dev/vhost-blk takes the standard vhost ioctls of
 * <linux/vhost.h> (SET_OWNER, GET/SET_FEATURES, SET_MEM_TABLE,
 * SET_VRING_NUM/ADDR/BASE/KICK/CALL/ERR, GET_VRING_BASE) plus the two below.
 * Built by the module and by microvm (src/virtio) from this one file.
 *
 * Order of use, per VM disk:
 *   open("/dev/vhost-blk"); VHOST_BLK_GET_VERSION; VHOST_SET_OWNER;
 *   VHOST_GET_FEATURES (the virtio features the module serves);
 *   VHOST_SET_FEATURES (what the guest acked); VHOST_SET_MEM_TABLE;
 *   per queue: SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE,
 *              SET_VRING_KICK (the queue's ioeventfd), SET_VRING_CALL;
 *   VHOST_BLK_SET_BACKEND (fd >= 0): requests are served from here on.
 * Stop (device reset, VMM exit): VHOST_BLK_SET_BACKEND with fd == -1
 * returns once every request in flight has completed and been pushed;
 * then VHOST_GET_VRING_BASE per queue gives the ring state back.
 *
 * Limits (EINVAL beyond them): 1 .. 64 queues, rings of at most 1024
 * entries, num_workers <= num_queues, poll_us <= VHOST_BLK_MAX_POLL_US,
 * capacity within the file's size, the fd a regular file or a block
 * device. Queue i is served by worker
 * i % num_workers (threads "vblk-<owner pid>.<n>"). Details:
 * kernel/vhost-blk/README.md.
 */
#ifndef VHOST_BLK_UAPI_H
#define VHOST_BLK_UAPI_H

#include <linux/types.h>
#include <linux/vhost.h>

#define VHOST_BLK_API_VERSION 2

/* The largest struct vhost_blk_backend.poll_us (microvm's poll-us cap). */
#define VHOST_BLK_MAX_POLL_US 1000

/* struct vhost_blk_backend.flags */
#define VHOST_BLK_F_READONLY (1u << 0) /* writes, discards fail (IOERR) */
#define VHOST_BLK_F_NO_FLUSH (1u << 1) /* FLUSH completes at once (unsafe) */

struct vhost_blk_backend {
	__s32 fd;          /* the image (regular file or block device), open
			    * with O_DIRECT; -1 stops serving */
	__u32 flags;       /* VHOST_BLK_F_* */
	__u64 capacity;    /* 512-byte sectors, as in the device config */
	__u32 num_queues;  /* queues served: 1 .. the rings set up */
	__u32 num_workers; /* kernel workers; 0: one per queue */
	__u8 serial[20];   /* the GET_ID answer, NUL-padded */
	__u32 poll_us;     /* most busy-polling per worker wakeup, adaptive;
			    * 0 .. VHOST_BLK_MAX_POLL_US, 0: none */
	__u32 reserved[6]; /* must be zero */
};

/* Start (fd >= 0) or stop (fd == -1) serving; see above. */
#define VHOST_BLK_SET_BACKEND _IOW(VHOST_VIRTIO, 0x90, struct vhost_blk_backend)
/* The module's VHOST_BLK_API_VERSION. */
#define VHOST_BLK_GET_VERSION _IOR(VHOST_VIRTIO, 0x91, __u32)

#endif
