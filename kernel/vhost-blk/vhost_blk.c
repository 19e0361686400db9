// SPDX-License-Identifier: GPL-2.0
/*
 * vhost-blk: microvm's in-kernel virtio-blk backend, on the vhost core
 * (drivers/vhost, vhost.ko). The VMM keeps device status, features and
 * config space; this module only serves the rings. User ABI:
 * uapi/vhost_blk.h.
 *
 * Threads. The vhost core runs one worker per device; it only dispatches
 * here: a kick sets the queue's bit and wakes the kernel worker that owns
 * the queue. Each worker (one per queue, or per group of queues when the
 * VMM asks for fewer) adopts the owner's mm, pops chains, submits them as
 * async kiocbs and pushes completions, so queues proceed in parallel.
 *
 * Requests. IN/OUT go to the backing file's read_iter/write_iter with the
 * file's own open flags (the VMM opens it O_DIRECT), asynchronously: the
 * iov_iter is consumed at submission, ki_complete (any context, irq
 * included) only queues the request on a lock-free list for the worker,
 * which writes the status byte and fills the used ring. A queue has at
 * most vq->num requests in flight (a pool allocated at start, sized by the
 * VMM's ring size, never by the guest). Validation and status codes follow
 * microvm's userspace device (src/virtio/virtq.c, blk_req.c): each chain
 * the vhost core accepts is walked again under virtq.c's stricter rules,
 * and a misaligned request on an O_DIRECT image goes through the worker's
 * bounce buffer, VHOST_BLK_BOUNCE_PAGES at a time, as the userspace
 * engines' bounce chunks do (src/virtio/disk_req.c).
 *
 * Credentials and accounting. The workers do all I/O, fallocate and fsync
 * under the credentials of the task that called SET_BACKEND (as io_uring's
 * SQPOLL thread does), never kthreadd's: root's reserved blocks, quota
 * limits and permission checks bind them as they bind the VMM. Every
 * per-open allocation is charged to the opener's memory cgroup.
 *
 * Polling. With poll_us set, a worker that has nothing left to do
 * busy-polls its queues' avail rings and completion lists, kicks off, for
 * an adaptive window before it sleeps (microvm's I/O threads do the same,
 * src/virtio/blk_poll.c): requests the driver adds meanwhile are taken
 * without a kick, and the bigger batches raise fewer interrupts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/bvec.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/virtio_blk.h>
#include <linux/wait.h>

#include "vhost.h"
#include "uapi/vhost_blk.h"

#define VHOST_BLK_MAX_QUEUES 64   /* microvm's VIRTIO_MAX_QUEUES */
#define VHOST_BLK_MAX_RING 1024   /* the largest ring a queue may serve */
#define VHOST_BLK_DWZ_MAX_SECTORS (1u << 22) /* microvm's config space */
#define VHOST_BLK_HDR_BYTES 16
#define VHOST_BLK_DWZ_BYTES 16
#define VHOST_BLK_FLAGS (VHOST_BLK_F_READONLY | VHOST_BLK_F_NO_FLUSH)
/* A worker's bounce buffer: 256 KiB with 4 KiB pages, the userspace
 * engines' DISK_BOUNCE_CHUNK. */
#define VHOST_BLK_BOUNCE_PAGES 64
#define VHOST_BLK_BOUNCE_BYTES ((size_t)VHOST_BLK_BOUNCE_PAGES << PAGE_SHIFT)

/*
 * What the rings support (the vhost core's features less dirty logging,
 * which this module does not do) and the virtio-blk features whose
 * requests it serves or which only concern the VMM's config space.
 */
#define VHOST_BLK_FEATURES                                              \
	((VHOST_FEATURES & ~(1ULL << VHOST_F_LOG_ALL)) |                \
	 BIT_ULL(VIRTIO_BLK_F_SIZE_MAX) | BIT_ULL(VIRTIO_BLK_F_SEG_MAX) | \
	 BIT_ULL(VIRTIO_BLK_F_GEOMETRY) | BIT_ULL(VIRTIO_BLK_F_RO) |     \
	 BIT_ULL(VIRTIO_BLK_F_BLK_SIZE) | BIT_ULL(VIRTIO_BLK_F_FLUSH) |  \
	 BIT_ULL(VIRTIO_BLK_F_TOPOLOGY) | BIT_ULL(VIRTIO_BLK_F_CONFIG_WCE) | \
	 BIT_ULL(VIRTIO_BLK_F_MQ) | BIT_ULL(VIRTIO_BLK_F_DISCARD) |      \
	 BIT_ULL(VIRTIO_BLK_F_WRITE_ZEROES))

struct vhost_blk;
struct vhost_blk_queue;

struct vhost_blk_req {
	struct kiocb iocb;
	struct vhost_blk_queue *q;
	struct llist_node node;
	u8 __user *status;  /* last writable byte of the chain, or NULL */
	size_t len;         /* IN/OUT: bytes the kiocb must move */
	long ret;           /* IN/OUT: the kiocb's result */
	u32 written;        /* used.len: bytes written into the chain */
	u16 head;
	u8 result;          /* VIRTIO_BLK_S_* when not an IN/OUT */
	bool rw;            /* result comes from ret */
	bool write_started; /* kiocb_start_write() to undo */
};

struct vhost_blk_worker {
	struct task_struct *task;
	wait_queue_head_t wait;
	struct vhost_blk *blk;
	unsigned int first; /* serves queues first, first + nw, ... */
	/*
	 * Polling, worker-only: the window now (0 .. poll_max_ns; it grows
	 * from VHOST_BLK_POLL_START_NS, doubling, when work came soon after
	 * the last window, and halves when the worker slept longer than the
	 * cap) and when the last window ended empty (0: none to judge).
	 */
	u64 poll_ns, poll_max_ns, missed_at;
	/*
	 * Misaligned requests on an O_DIRECT image, served one at a time
	 * in the worker: VHOST_BLK_BOUNCE_PAGES pages allocated at start
	 * (no pages when the image is not O_DIRECT).
	 */
	struct bio_vec bounce[VHOST_BLK_BOUNCE_PAGES];
	bool has_bounce;
};

struct vhost_blk_queue {
	struct vhost_virtqueue vq;
	struct vhost_blk *blk;
	/* Set while serving; kick_w is cleared first at stop. */
	struct vhost_blk_worker *w;
	struct vhost_blk_worker *kick_w;
	unsigned long kicked; /* bit 0: look at the avail ring */
	struct llist_head done;
	/* Worker-only state below. */
	struct vhost_blk_req *reqs;
	u16 *free;
	unsigned int nr_free, num;
	bool starved; /* stopped popping with no request free */
	bool stalled; /* a bad chain stopped the ring until the next kick */
	bool kicks_off; /* the last pass left guest kicks off, for polling */
	struct vring_used_elem *heads;
};

struct vhost_blk {
	struct vhost_dev dev;
	struct vhost_virtqueue *vqs[VHOST_BLK_MAX_QUEUES];
	struct vhost_blk_queue q[VHOST_BLK_MAX_QUEUES];
	/* Under dev.mutex. */
	struct file *file;
	const struct cred *cred; /* the opener's, for the workers */
	bool serving;
	bool readonly, no_flush;
	u64 capacity;
	u8 serial[VIRTIO_BLK_ID_BYTES];
	unsigned int nq, nw;
	struct vhost_blk_worker *workers;
};

/* ---- completion ---- */

/*
 * Any context (a bio's end_io included): hand the request to its worker.
 * Once the entry is on the list the worker may reap it, find itself idle
 * and return, and vhost_blk_stop() free the worker and queue this wakeup
 * still uses: the read-side section keeps them alive until the wakeup is
 * done, and vhost_blk_stop() waits for it (synchronize_rcu()) before it
 * clears or frees anything. Every request has passed its llist_add() by
 * the time its worker returns, so no section can begin after that wait.
 */
static void vhost_blk_queue_done(struct vhost_blk_req *r)
{
	struct vhost_blk_queue *q = r->q;

	rcu_read_lock();
	llist_add(&r->node, &q->done);
	wake_up(&q->w->wait);
	rcu_read_unlock();
}

static void vhost_blk_ki_complete(struct kiocb *iocb, long ret)
{
	struct vhost_blk_req *r = container_of(iocb, struct vhost_blk_req, iocb);

	r->ret = ret;
	vhost_blk_queue_done(r);
}

static void vhost_blk_finish(struct vhost_blk_req *r, u8 status)
{
	r->rw = false;
	r->result = status;
	vhost_blk_queue_done(r);
}

/* Worker: status bytes, used ring, signal; returns whether it did any. */
static bool vhost_blk_reap(struct vhost_blk_queue *q)
{
	struct vhost_virtqueue *vq = &q->vq;
	struct llist_node *list = llist_del_all(&q->done);
	struct vhost_blk_req *r, *t;
	unsigned int n = 0;

	if (!list)
		return false;
	mutex_lock(&vq->mutex);
	llist_for_each_entry_safe(r, t, list, node) {
		u8 status = r->result;

		if (r->rw) {
			if (r->write_started)
				kiocb_end_write(&r->iocb);
			/* A short transfer is an error: capacity was
			 * checked against the file's size at start. */
			status = r->ret >= 0 && (size_t)r->ret == r->len ?
				 VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
		}
		if (r->status && put_user(status, r->status))
			vq_err(vq, "vhost-blk: status byte not writable\n");
		q->heads[n].id = cpu_to_vhost32(vq, r->head);
		q->heads[n].len = cpu_to_vhost32(vq, r->written);
		n++;
		q->free[q->nr_free++] = r - q->reqs;
	}
	vhost_add_used_and_signal_n(&q->blk->dev, vq, q->heads, n);
	if (q->starved) {
		q->starved = false;
		set_bit(0, &q->kicked);
	}
	mutex_unlock(&vq->mutex);
	return true;
}

/* ---- requests ---- */

static bool vhost_blk_in_range(u64 sector, u64 nsect, u64 capacity)
{
	return sector <= capacity && nsect <= capacity - sector;
}

static struct block_device *vhost_blk_bdev(struct file *file)
{
	struct inode *inode = file_inode(file);

	return S_ISBLK(inode->i_mode) ? I_BDEV(file->f_mapping->host) :
					inode->i_sb->s_bdev;
}

/*
 * Whether direct I/O would refuse @len bytes of @it at @pos with -EINVAL:
 * the block layer wants position, length and every segment's address and
 * length aligned to the logical block size (block/fops.c, fs/direct-io.c
 * and iomap's bdev_iter_is_aligned() test no more than this), and
 * addresses to the queue's DMA alignment. iov_iter_alignment() ORs every
 * segment's base and length; the walk is bounded by the iovec count.
 */
static bool vhost_blk_dio_misaligned(struct file *file, loff_t pos,
				     size_t len, const struct iov_iter *it)
{
	struct block_device *bdev = vhost_blk_bdev(file);
	unsigned long mask;

	if (!bdev)
		return false;
	mask = (bdev_logical_block_size(bdev) - 1) |
	       queue_dma_alignment(bdev_get_queue(bdev));
	return ((unsigned long)pos | len | iov_iter_alignment(it)) & mask;
}

/*
 * The first @len bytes of @w's bounce buffer to or from the file at @pos,
 * direct and synchronously (page-aligned memory, @pos and @len aligned to
 * the logical block size); a short transfer goes on where it stopped.
 */
static int vhost_blk_bounce_io(struct vhost_blk_worker *w, struct file *file,
			       loff_t pos, size_t len, bool write)
{
	size_t done = 0;

	while (done < len) {
		struct iov_iter it;
		struct kiocb k;
		ssize_t ret;

		init_sync_kiocb(&k, file);
		k.ki_pos = pos + done;
		iov_iter_bvec(&it, write ? ITER_SOURCE : ITER_DEST, w->bounce,
			      VHOST_BLK_BOUNCE_PAGES, len);
		iov_iter_advance(&it, done);
		if (write) {
			k.ki_flags |= IOCB_WRITE;
			ret = call_write_iter(file, &k, &it);
		} else {
			ret = call_read_iter(file, &k, &it);
		}
		if (ret < 0)
			return ret;
		if (!ret || ret > len - done)
			return -EIO; /* past the end, as the userspace engine */
		done += ret;
	}
	return 0;
}

/* @n bytes between the bounce buffer at byte @off and @it. */
static bool vhost_blk_bounce_copy(struct vhost_blk_worker *w, size_t off,
				  size_t n, struct iov_iter *it, bool to_it)
{
	while (n) {
		struct page *page = w->bounce[off >> PAGE_SHIFT].bv_page;
		size_t po = offset_in_page(off);
		size_t m = min_t(size_t, n, PAGE_SIZE - po);

		if ((to_it ? copy_page_to_iter(page, po, m, it) :
			     copy_page_from_iter(page, po, m, it)) != m)
			return false;
		off += m;
		n -= m;
	}
	return true;
}

/*
 * A misaligned request on an O_DIRECT image, as the userspace engines'
 * bounce does it (src/virtio/disk_req.c): the block-aligned span that
 * covers it, one bounce buffer at a time, each chunk moved by aligned
 * direct I/O; a chunk the request covers only in part (an edge block when
 * position or length is not a multiple of the logical block size) is
 * read first and patched (read-modify-write, not atomic, as there).
 * Memory: the worker's buffer, whatever the guest's segments; work: a
 * copy of the request and at most two chunks more, with a reschedule
 * point per chunk. A stop between chunks ends it with an error.
 * Return: @it's byte count, or -errno.
 */
static ssize_t vhost_blk_rw_bounce(struct vhost_blk_worker *w,
				   struct file *file, loff_t pos,
				   struct iov_iter *it, bool write)
{
	struct block_device *bdev = vhost_blk_bdev(file);
	size_t len = iov_iter_count(it);
	loff_t mask, kpos, end = pos + len, span_end;

	mask = bdev ? bdev_logical_block_size(bdev) - 1 : SECTOR_SIZE - 1;
	if (!w->has_bounce || mask >= VHOST_BLK_BOUNCE_BYTES)
		return -EINVAL;
	kpos = pos & ~mask;
	span_end = (end + mask) & ~mask;
	while (kpos < span_end) {
		size_t klen = min_t(loff_t, span_end - kpos,
				    VHOST_BLK_BOUNCE_BYTES);
		loff_t lo = max(kpos, pos), hi = min(kpos + (loff_t)klen, end);
		int err;

		if (kthread_should_stop())
			return -EINTR;
		if (!write || lo != kpos || hi != kpos + klen) {
			err = vhost_blk_bounce_io(w, file, kpos, klen, false);
			if (err)
				return err;
		}
		if (!vhost_blk_bounce_copy(w, lo - kpos, hi - lo, it, !write))
			return -EFAULT;
		if (write) {
			err = vhost_blk_bounce_io(w, file, kpos, klen, true);
			if (err)
				return err;
		}
		kpos += klen;
		cond_resched();
	}
	return len;
}

static void vhost_blk_rw(struct vhost_blk_queue *q, struct vhost_blk_req *r,
			 struct iov_iter *it, u64 sector, bool write)
{
	struct file *file = q->blk->file;
	ssize_t ret;

	r->len = iov_iter_count(it);
	if (!r->len) {
		vhost_blk_finish(r, VIRTIO_BLK_S_OK);
		return;
	}
	/* The file's own flags: IOCB_DIRECT when the VMM opened it so. */
	init_sync_kiocb(&r->iocb, file);
	r->iocb.ki_pos = sector << SECTOR_SHIFT;
	r->iocb.ki_complete = vhost_blk_ki_complete;
	r->rw = true;
	r->write_started = false;
	if (write) {
		r->iocb.ki_flags |= IOCB_WRITE;
		if (S_ISREG(file_inode(file)->i_mode)) {
			kiocb_start_write(&r->iocb);
			r->write_started = true;
		}
	}
	if ((r->iocb.ki_flags & IOCB_DIRECT) &&
	    vhost_blk_dio_misaligned(file, r->iocb.ki_pos, r->len, it))
		ret = vhost_blk_rw_bounce(q->w, file, r->iocb.ki_pos, it,
					  write);
	else if (write)
		ret = call_write_iter(file, &r->iocb, it);
	else
		ret = call_read_iter(file, &r->iocb, it);
	/* Anything but "queued" (a buffered or failed call) is final. */
	if (ret != -EIOCBQUEUED)
		vhost_blk_ki_complete(&r->iocb, ret);
}

static void vhost_blk_fill(struct vhost_blk_queue *q, struct vhost_blk_req *r,
			   bool discard, u64 sector, u64 nsect)
{
	struct file *file = q->blk->file;
	loff_t off = sector << SECTOR_SHIFT, len = nsect << SECTOR_SHIFT;
	int mode = FALLOC_FL_KEEP_SIZE;
	int ret;

	if (!nsect) {
		vhost_blk_finish(r, VIRTIO_BLK_S_OK);
		return;
	}
	if (discard && S_ISBLK(file_inode(file)->i_mode)) {
		/*
		 * A discard, as BLKDISCARD does it: through the block
		 * device's own fallocate (block/fops.c), whose discard mode
		 * vfs_fallocate() does not pass. It refuses a range not
		 * aligned to the logical block size (-EINVAL: IOERR, as
		 * BLKDISCARD's in the userspace engine) before it touches
		 * anything, and drops the range's page cache, dirty pages
		 * included, under the invalidate lock before the discard.
		 */
		ret = file->f_op->fallocate ?
		      file->f_op->fallocate(file, mode | FALLOC_FL_PUNCH_HOLE |
						  FALLOC_FL_NO_HIDE_STALE,
					    off, len) :
		      -EOPNOTSUPP;
	} else if (discard) {
		ret = vfs_fallocate(file, mode | FALLOC_FL_PUNCH_HOLE, off, len);
	} else {
		ret = vfs_fallocate(file, mode | FALLOC_FL_ZERO_RANGE, off, len);
		/* A punched hole reads back as zeroes too. */
		if (ret == -EOPNOTSUPP)
			ret = vfs_fallocate(file, mode | FALLOC_FL_PUNCH_HOLE,
					    off, len);
	}
	vhost_blk_finish(r, !ret ? VIRTIO_BLK_S_OK :
			    ret == -EOPNOTSUPP ? VIRTIO_BLK_S_UNSUPP :
						 VIRTIO_BLK_S_IOERR);
}

/* DISCARD and WRITE_ZEROES: one {le64 sector, le32 num, le32 flags}. */
static void vhost_blk_dwz(struct vhost_blk_queue *q, struct vhost_blk_req *r,
			  struct iov_iter *out_it, size_t out_len,
			  size_t in_len, bool discard)
{
	struct virtio_blk_discard_write_zeroes seg;
	size_t len = out_len - VHOST_BLK_HDR_BYTES;
	u32 flags, allowed;
	u64 sector, nsect;

	if (!vhost_has_feature(&q->vq, discard ? VIRTIO_BLK_F_DISCARD :
					      VIRTIO_BLK_F_WRITE_ZEROES))
		return vhost_blk_finish(r, VIRTIO_BLK_S_UNSUPP);
	if (in_len > 1)
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	if (!len || len % VHOST_BLK_DWZ_BYTES)
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	/* max_discard_seg = max_write_zeroes_seg = 1 in config space. */
	if (len > VHOST_BLK_DWZ_BYTES)
		return vhost_blk_finish(r, VIRTIO_BLK_S_UNSUPP);
	if (copy_from_iter(&seg, sizeof(seg), out_it) != sizeof(seg))
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	sector = le64_to_cpu(seg.sector);
	nsect = le32_to_cpu(seg.num_sectors);
	flags = le32_to_cpu(seg.flags);
	/* Unknown flags, and UNMAP on DISCARD, are UNSUPP (§5.2.6.2). */
	allowed = discard ? 0 : VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
	if (flags & ~allowed)
		return vhost_blk_finish(r, VIRTIO_BLK_S_UNSUPP);
	if (nsect > VHOST_BLK_DWZ_MAX_SECTORS || q->blk->readonly ||
	    !vhost_blk_in_range(sector, nsect, q->blk->capacity))
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	vhost_blk_fill(q, r, discard, sector, nsect);
}

/*
 * The user address of the indirect table at guest-physical @addr, @len
 * bytes, if the memory table maps all of it readable in one region (as
 * the userspace device's guest_mem_ptr() requires); else NULL. vq->umem
 * is stable under vq->mutex (vhost_set_memory() takes every vq mutex).
 */
static struct vring_desc __user *vhost_blk_table(struct vhost_virtqueue *vq,
						 u64 addr, u32 len)
{
	const struct vhost_iotlb_map *map;
	u64 last;

	if (!vq->umem || check_add_overflow(addr, (u64)len - 1, &last))
		return NULL;
	map = vhost_iotlb_itree_first(vq->umem, addr, last);
	if (!map || map->start > addr || map->last < last ||
	    !(map->perm & VHOST_ACCESS_RO))
		return NULL;
	return (struct vring_desc __user *)(uintptr_t)(map->addr + addr -
						       map->start);
}

/*
 * Walk the chain at @head again under the rules of the userspace device
 * (src/virtio/virtq.c's chain_walk()), which the vhost core's
 * vhost_get_vq_desc() does not all apply: it reads an indirect table in
 * order whatever its next fields say, follows NEXT after an INDIRECT
 * descriptor and takes tables of up to 65536 entries. Here (virtio 1.2
 * §2.7.5.3): next within the table being walked, INDIRECT only with
 * INDIRECT_DESC negotiated, never with NEXT, never nested, a table length
 * a nonzero multiple of 16 of at most the queue size, at most queue-size
 * buffers in the whole chain, and not all of them empty. At most
 * 2 * vq->num descriptors are read; nothing is allocated.
 * The iovecs served are the core's; this only decides whether to serve
 * them. Returns NULL, or what is wrong.
 */
static const char *vhost_blk_check_chain(struct vhost_virtqueue *vq,
					 unsigned int head)
{
	struct vring_desc __user *table = vq->desc;
	unsigned int entries = vq->num, steps = 0, bufs = 0, i = head;
	bool indirect = false, empty = true;
	struct vring_desc d;

	for (;;) {
		u16 flags;
		u32 len;

		if (++steps > entries)
			return "descriptor loop";
		if (copy_from_user(&d, table + i, sizeof(d)))
			return "descriptor not readable";
		flags = vhost16_to_cpu(vq, d.flags);
		len = vhost32_to_cpu(vq, d.len);
		if (flags & VRING_DESC_F_INDIRECT) {
			if (!vhost_has_feature(vq, VIRTIO_RING_F_INDIRECT_DESC))
				return "indirect not negotiated";
			if (indirect)
				return "nested indirect";
			if (flags & VRING_DESC_F_NEXT)
				return "indirect with next";
			if (!len || len % sizeof(d))
				return "bad indirect table length";
			if (len / sizeof(d) > vq->num)
				return "indirect table longer than the queue";
			table = vhost_blk_table(vq, vhost64_to_cpu(vq, d.addr),
						len);
			if (!table)
				return "indirect table outside guest RAM";
			entries = len / sizeof(d);
			steps = 0;
			i = 0;
			indirect = true;
			continue;
		}
		if (++bufs > vq->num)
			return "chain longer than the queue";
		empty &= !len;
		if (!(flags & VRING_DESC_F_NEXT))
			break;
		i = vhost16_to_cpu(vq, d.next);
		if (i >= entries)
			return "next index out of range";
	}
	return empty ? "zero-length chain" : NULL;
}

/*
 * Start the chain @head: @out readable then @in writable iovecs in
 * vq->iov, as vhost_get_vq_desc() left them (it has bounded each buffer
 * by the memory table; vhost_blk_check_chain() the chain by the queue
 * size). No assumption about how header, data and status split across
 * them.
 */
static void vhost_blk_start(struct vhost_blk_queue *q, unsigned int head,
			    unsigned int out, unsigned int in)
{
	struct vhost_blk *b = q->blk;
	struct iovec *iov = q->vq.iov;
	size_t out_len = iov_length(iov, out);
	size_t in_len = iov_length(iov + out, in);
	struct virtio_blk_outhdr hdr;
	struct vhost_blk_req *r;
	struct iov_iter out_it, in_it;
	u64 sector, nsect;
	unsigned int last;
	size_t len;
	const char *bad;
	u32 type;

	r = &q->reqs[q->free[--q->nr_free]];
	r->head = head;
	r->written = 0;
	r->status = NULL;
	r->rw = false;

	/* A malformed chain goes back unused, nothing written, as the
	 * userspace device returns it (bq_push_nostatus()). */
	bad = vhost_blk_check_chain(&q->vq, head);
	if (unlikely(bad)) {
		pr_warn_ratelimited("queue %td: bad chain at head %u: %s\n",
				    q - b->q, head, bad);
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	}

	/* Status: the last writable byte (§5.2.6). Without one, the chain
	 * is returned with nothing written. */
	if (!in_len)
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	for (last = out + in - 1; !iov[last].iov_len; last--)
		;
	r->status = (u8 __user *)iov[last].iov_base + iov[last].iov_len - 1;
	r->written = 1;
	if (out_len < VHOST_BLK_HDR_BYTES)
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	iov_iter_init(&out_it, ITER_SOURCE, iov, out, out_len);
	if (copy_from_iter(&hdr, sizeof(hdr), &out_it) != sizeof(hdr))
		return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
	type = vhost32_to_cpu(&q->vq, hdr.type);
	sector = vhost64_to_cpu(&q->vq, hdr.sector);
	iov_iter_init(&in_it, ITER_DEST, iov + out, in, in_len);
	len = in_len - 1; /* the status byte is not data */
	iov_iter_truncate(&in_it, len);

	switch (type) {
	case VIRTIO_BLK_T_IN:
		if (out_len > VHOST_BLK_HDR_BYTES || len % SECTOR_SIZE ||
		    len > MAX_RW_COUNT)
			return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
		nsect = len >> SECTOR_SHIFT;
		if (!vhost_blk_in_range(sector, nsect, b->capacity))
			return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
		r->written = len + 1;
		return vhost_blk_rw(q, r, &in_it, sector, false);
	case VIRTIO_BLK_T_OUT:
		len = out_len - VHOST_BLK_HDR_BYTES;
		if (in_len > 1 || len % SECTOR_SIZE || len > MAX_RW_COUNT ||
		    b->readonly)
			return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
		nsect = len >> SECTOR_SHIFT;
		if (!vhost_blk_in_range(sector, nsect, b->capacity))
			return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
		return vhost_blk_rw(q, r, &out_it, sector, true);
	case VIRTIO_BLK_T_FLUSH:
		if (b->no_flush)
			return vhost_blk_finish(r, VIRTIO_BLK_S_OK);
		return vhost_blk_finish(r, vfs_fsync(b->file, 1) ?
				VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK);
	case VIRTIO_BLK_T_GET_ID:
		len = min_t(size_t, len, VIRTIO_BLK_ID_BYTES);
		if (copy_to_iter(b->serial, len, &in_it) != len)
			return vhost_blk_finish(r, VIRTIO_BLK_S_IOERR);
		r->written = len + 1;
		return vhost_blk_finish(r, VIRTIO_BLK_S_OK);
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		return vhost_blk_dwz(q, r, &out_it, out_len, in_len,
				     type == VIRTIO_BLK_T_DISCARD);
	default:
		return vhost_blk_finish(r, VIRTIO_BLK_S_UNSUPP);
	}
}

/* Worker: pop and start chains while a request is free. */
static void vhost_blk_submit(struct vhost_blk_queue *q, bool poll)
{
	struct vhost_virtqueue *vq = &q->vq;
	struct vhost_dev *dev = &q->blk->dev;
	unsigned int out, in;
	int head;

	mutex_lock(&vq->mutex);
	vhost_disable_notify(dev, vq);
	/* Only a pass that empties the ring leaves kicks off for polling:
	 * a starved or stalled ring is not polled (its buffers stay). */
	q->stalled = false;
	q->kicks_off = false;
	for (;;) {
		if (!q->nr_free) {
			/* vhost_blk_reap() kicks again. */
			q->starved = true;
			break;
		}
		head = vhost_get_vq_desc(vq, vq->iov, ARRAY_SIZE(vq->iov),
					 &out, &in, NULL, NULL);
		/* A bad chain (loop, buffer outside the memory table, too
		 * long): the ring stays stopped at it, as in vhost-net. */
		if (unlikely(head < 0)) {
			q->stalled = true;
			break;
		}
		if (head == vq->num) {
			/* The worker polls next, kicks off; a window
			 * that finds nothing turns them on again. */
			if (poll) {
				q->kicks_off = true;
				break;
			}
			if (unlikely(vhost_enable_notify(dev, vq))) {
				vhost_disable_notify(dev, vq);
				continue;
			}
			break;
		}
		vhost_blk_start(q, head, out, in);
		cond_resched();
	}
	mutex_unlock(&vq->mutex);
}

/* ---- workers ---- */

#define for_each_worker_queue(b, w, q, i)                            \
	for ((i) = (w)->first; (i) < (b)->nq && ((q) = &(b)->q[i], 1); \
	     (i) += (b)->nw)

static bool vhost_blk_worker_ready(struct vhost_blk_worker *w, bool stop)
{
	struct vhost_blk *b = w->blk;
	struct vhost_blk_queue *q;
	unsigned int i;

	if (kthread_should_stop() != stop)
		return true;
	for_each_worker_queue(b, w, q, i) {
		if (!llist_empty(&q->done))
			return true;
		if (!stop && test_bit(0, &q->kicked))
			return true;
	}
	return false;
}

static bool vhost_blk_worker_idle(struct vhost_blk_worker *w)
{
	struct vhost_blk *b = w->blk;
	struct vhost_blk_queue *q;
	unsigned int i;

	for_each_worker_queue(b, w, q, i)
		if (q->nr_free != q->num || !llist_empty(&q->done))
			return false;
	return true;
}

#define VHOST_BLK_POLL_START_NS 4000u

static void vhost_blk_poll_grow(struct vhost_blk_worker *w)
{
	w->poll_ns = min(w->poll_ns ? w->poll_ns * 2 : VHOST_BLK_POLL_START_NS,
			 w->poll_max_ns);
}

/* Work for @w without a wakeup: completions, a kick, or new buffers. */
static bool vhost_blk_poll_once(struct vhost_blk_worker *w)
{
	struct vhost_blk *b = w->blk;
	struct vhost_blk_queue *q;
	unsigned int i;
	bool avail;

	for_each_worker_queue(b, w, q, i) {
		if (!llist_empty(&q->done) || test_bit(0, &q->kicked))
			return true;
		/* A stalled ring stays stopped until a kick; one whose kicks
		 * are on announces its buffers. */
		if (!q->kicks_off || q->stalled)
			continue;
		mutex_lock(&q->vq.mutex);
		avail = !vhost_vq_avail_empty(&b->dev, &q->vq);
		mutex_unlock(&q->vq.mutex);
		if (avail) {
			set_bit(0, &q->kicked);
			return true;
		}
	}
	return false;
}

/*
 * Kicks on again after an empty window, and a last look at each ring (a
 * buffer added before the driver saw the new event index). Return:
 * whether one had buffers.
 */
static bool vhost_blk_poll_end(struct vhost_blk_worker *w)
{
	struct vhost_blk *b = w->blk;
	struct vhost_blk_queue *q;
	unsigned int i;
	bool found = false;

	for_each_worker_queue(b, w, q, i) {
		if (!q->kicks_off)
			continue;
		q->kicks_off = false;
		mutex_lock(&q->vq.mutex);
		if (unlikely(vhost_enable_notify(&b->dev, &q->vq))) {
			vhost_disable_notify(&b->dev, &q->vq);
			set_bit(0, &q->kicked);
			found = true;
		}
		mutex_unlock(&q->vq.mutex);
	}
	return found;
}

/*
 * Busy-poll for at most the window, yielding the CPU whenever another
 * task wants it (a vCPU of the same guest, often). Return: whether work
 * was found; the caller sleeps otherwise. Kicks are on again then.
 */
static bool vhost_blk_poll(struct vhost_blk_worker *w)
{
	u64 start = local_clock(), now = start;
	bool found;

	for (;;) {
		found = vhost_blk_poll_once(w);
		if (found || kthread_should_stop())
			break;
		now = local_clock();
		/* Unsigned: a clock read on another CPU that went back
		 * ends the window too. */
		if (now - start >= w->poll_ns)
			break;
		cond_resched();
		cpu_relax();
	}
	if (found) {
		/* In the second half of the window: a little later and
		 * it would have been missed. */
		if ((now - start) * 2 > w->poll_ns)
			vhost_blk_poll_grow(w);
		return true;
	}
	if (vhost_blk_poll_end(w)) {
		vhost_blk_poll_grow(w);
		return true;
	}
	w->missed_at = start;
	return false;
}

/* After a sleep that followed an empty window: adapt the window. */
static void vhost_blk_poll_woke(struct vhost_blk_worker *w)
{
	if (!w->missed_at)
		return;
	if (local_clock() - w->missed_at <= w->poll_max_ns)
		vhost_blk_poll_grow(w);
	else if (w->poll_ns / 2 < VHOST_BLK_POLL_START_NS)
		w->poll_ns = 0;
	else
		w->poll_ns /= 2;
	w->missed_at = 0;
}

/*
 * Until kthread_stop(): serve the queues. After it: pop nothing more,
 * push every request still in flight, then return.
 */
static int vhost_blk_worker_fn(void *data)
{
	struct vhost_blk_worker *w = data;
	struct vhost_blk *b = w->blk;
	struct vhost_blk_queue *q;
	const struct cred *old;
	unsigned int i;

	kthread_use_mm(b->dev.mm);
	/* The opener's credentials for every read, write, fallocate and
	 * fsync; this thread does nothing else. */
	old = override_creds(b->cred);
	for (;;) {
		bool stop = kthread_should_stop();
		bool poll = !stop && w->poll_max_ns;

		for_each_worker_queue(b, w, q, i) {
			vhost_blk_reap(q);
			if (!stop && test_and_clear_bit(0, &q->kicked))
				vhost_blk_submit(q, poll);
		}
		if (stop && vhost_blk_worker_idle(w))
			break;
		if (poll && vhost_blk_poll(w))
			continue;
		wait_event_interruptible(w->wait,
					 vhost_blk_worker_ready(w, stop));
		if (poll)
			vhost_blk_poll_woke(w);
	}
	revert_creds(old);
	kthread_unuse_mm(b->dev.mm);
	return 0;
}

/* vhost core's worker, on a kick: dispatch only. */
static void vhost_blk_handle_kick(struct vhost_work *work)
{
	struct vhost_virtqueue *vq = container_of(work, struct vhost_virtqueue,
						  poll.work);
	struct vhost_blk_queue *q = container_of(vq, struct vhost_blk_queue, vq);
	struct vhost_blk_worker *w = READ_ONCE(q->kick_w);

	if (!w)
		return;
	set_bit(0, &q->kicked);
	wake_up(&w->wait);
}

/* ---- backend start/stop (dev.mutex held) ---- */

static void vhost_blk_bounce_free(struct vhost_blk_worker *w)
{
	unsigned int i;

	for (i = 0; i < VHOST_BLK_BOUNCE_PAGES; i++)
		if (w->bounce[i].bv_page)
			__free_page(w->bounce[i].bv_page);
	memset(w->bounce, 0, sizeof(w->bounce));
	w->has_bounce = false;
}

/* The worker's bounce pages, charged to the opener's memory cgroup. */
static int vhost_blk_bounce_alloc(struct vhost_blk_worker *w)
{
	unsigned int i;

	for (i = 0; i < VHOST_BLK_BOUNCE_PAGES; i++) {
		struct page *page = alloc_page(GFP_KERNEL_ACCOUNT);

		if (!page) {
			vhost_blk_bounce_free(w);
			return -ENOMEM;
		}
		bvec_set_page(&w->bounce[i], page, PAGE_SIZE, 0);
	}
	w->has_bounce = true;
	return 0;
}

/* Every worker's bounce pages, then the array. */
static void vhost_blk_free_workers(struct vhost_blk *b, unsigned int nw)
{
	unsigned int i;

	for (i = 0; b->workers && i < nw; i++)
		vhost_blk_bounce_free(&b->workers[i]);
	kfree(b->workers);
	b->workers = NULL;
}

/* @nw workers, with bounce buffers when @file is O_DIRECT. */
static int vhost_blk_alloc_workers(struct vhost_blk *b, struct file *file,
				   unsigned int nw)
{
	unsigned int i;

	b->workers = kcalloc(nw, sizeof(*b->workers), GFP_KERNEL_ACCOUNT);
	if (!b->workers)
		return -ENOMEM;
	for (i = 0; (file->f_flags & O_DIRECT) && i < nw; i++) {
		if (vhost_blk_bounce_alloc(&b->workers[i])) {
			vhost_blk_free_workers(b, nw);
			return -ENOMEM;
		}
	}
	return 0;
}

static void vhost_blk_free_queue(struct vhost_blk_queue *q)
{
	kvfree(q->reqs);
	kvfree(q->free);
	kvfree(q->heads);
	q->reqs = NULL;
	q->free = NULL;
	q->heads = NULL;
	q->num = q->nr_free = 0;
}

static void vhost_blk_stop(struct vhost_blk *b)
{
	unsigned int i;

	if (!b->serving)
		return;
	for (i = 0; i < b->nq; i++)
		WRITE_ONCE(b->q[i].kick_w, NULL);
	/* No dispatch in progress may still see a worker. */
	vhost_dev_flush(&b->dev);
	/* Each worker pushes what it has in flight before it returns. */
	for (i = 0; i < b->nw; i++)
		kthread_stop(b->workers[i].task);
	/* A completion may still be inside vhost_blk_queue_done()'s
	 * wakeup of a worker that has returned: wait it out. */
	synchronize_rcu();
	for (i = 0; i < b->nq; i++) {
		struct vhost_blk_queue *q = &b->q[i];

		mutex_lock(&q->vq.mutex);
		vhost_vq_set_backend(&q->vq, NULL);
		mutex_unlock(&q->vq.mutex);
		q->w = NULL;
		q->kicked = 0;
		q->starved = false;
		q->stalled = false;
		q->kicks_off = false;
		vhost_blk_free_queue(q);
	}
	vhost_blk_free_workers(b, b->nw);
	put_cred(b->cred);
	b->cred = NULL;
	fput(b->file);
	b->file = NULL;
	b->nq = b->nw = 0;
	b->serving = false;
}

static int vhost_blk_alloc_queue(struct vhost_blk_queue *q, unsigned int num)
{
	unsigned int i;

	q->reqs = kvcalloc(num, sizeof(*q->reqs), GFP_KERNEL_ACCOUNT);
	q->free = kvcalloc(num, sizeof(*q->free), GFP_KERNEL_ACCOUNT);
	q->heads = kvcalloc(num, sizeof(*q->heads), GFP_KERNEL_ACCOUNT);
	if (!q->reqs || !q->free || !q->heads) {
		vhost_blk_free_queue(q);
		return -ENOMEM;
	}
	for (i = 0; i < num; i++) {
		q->reqs[i].q = q;
		q->free[i] = num - 1 - i;
	}
	q->num = q->nr_free = num;
	return 0;
}

static int vhost_blk_check_file(struct file *file, bool readonly, u64 cap)
{
	struct inode *inode = file_inode(file);
	loff_t size;

	if (!S_ISREG(inode->i_mode) && !S_ISBLK(inode->i_mode))
		return -EINVAL;
	if (!(file->f_mode & FMODE_READ) || !file->f_op->read_iter)
		return -EBADF;
	if (!readonly && (!(file->f_mode & FMODE_WRITE) ||
			  !file->f_op->write_iter))
		return -EBADF;
	size = i_size_read(file->f_mapping->host);
	if (cap > (u64)size >> SECTOR_SHIFT)
		return -EINVAL;
	return 0;
}

static long vhost_blk_start_backend(struct vhost_blk *b,
				    const struct vhost_blk_backend *be)
{
	unsigned int nq = be->num_queues, nw = be->num_workers, i;
	struct file *file;
	long r;

	if (b->serving)
		return -EBUSY;
	if (!nq || nq > VHOST_BLK_MAX_QUEUES || nw > nq)
		return -EINVAL;
	if (!nw)
		nw = nq;
	file = fget(be->fd);
	if (!file)
		return -EBADF;
	r = vhost_blk_check_file(file, be->flags & VHOST_BLK_F_READONLY,
				 be->capacity);
	if (r)
		goto err_file;
	r = vhost_blk_alloc_workers(b, file, nw);
	if (r)
		goto err_file;
	for (i = 0; i < nq; i++) {
		struct vhost_blk_queue *q = &b->q[i];

		mutex_lock(&q->vq.mutex);
		if (!vhost_vq_is_setup(&q->vq) ||
		    q->vq.num > VHOST_BLK_MAX_RING) {
			mutex_unlock(&q->vq.mutex);
			r = -EINVAL;
			goto err_queues;
		}
		r = vhost_blk_alloc_queue(q, q->vq.num);
		if (!r) {
			vhost_vq_set_backend(&q->vq, q);
			r = vhost_vq_init_access(&q->vq);
			if (r)
				vhost_vq_set_backend(&q->vq, NULL);
		}
		mutex_unlock(&q->vq.mutex);
		if (r) {
			vhost_blk_free_queue(q);
			goto err_queues;
		}
	}
	b->file = file;
	b->cred = get_current_cred();
	b->readonly = be->flags & VHOST_BLK_F_READONLY;
	b->no_flush = be->flags & VHOST_BLK_F_NO_FLUSH;
	b->capacity = be->capacity;
	memcpy(b->serial, be->serial, sizeof(b->serial));
	b->nq = nq;
	b->nw = nw;
	for (i = 0; i < nw; i++) {
		struct vhost_blk_worker *w = &b->workers[i];
		struct task_struct *t;

		w->blk = b;
		w->first = i;
		w->poll_max_ns = (u64)be->poll_us * NSEC_PER_USEC;
		init_waitqueue_head(&w->wait);
		t = kthread_create(vhost_blk_worker_fn, w, "vblk-%d.%u",
				   current->pid, i);
		if (IS_ERR(t)) {
			r = PTR_ERR(t);
			goto err_workers;
		}
		w->task = t;
		/* The VMM's cgroups account for its I/O, as with vhost. */
		r = cgroup_attach_task_all(current, t);
		if (r) {
			kthread_stop(t);
			goto err_workers;
		}
	}
	for (i = 0; i < nq; i++) {
		struct vhost_blk_queue *q = &b->q[i];

		q->w = &b->workers[i % nw];
		/* Buffers made available before the start count too. */
		set_bit(0, &q->kicked);
		WRITE_ONCE(q->kick_w, q->w);
	}
	b->serving = true;
	for (i = 0; i < nw; i++)
		wake_up_process(b->workers[i].task);
	return 0;

err_workers:
	/* Never woken: kthread_stop() makes them return at once. */
	while (i--)
		kthread_stop(b->workers[i].task);
	i = nq;
	put_cred(b->cred);
	b->cred = NULL;
	b->file = NULL;
	b->nq = b->nw = 0;
err_queues:
	while (i--) {
		struct vhost_blk_queue *q = &b->q[i];

		mutex_lock(&q->vq.mutex);
		vhost_vq_set_backend(&q->vq, NULL);
		mutex_unlock(&q->vq.mutex);
		vhost_blk_free_queue(q);
	}
	vhost_blk_free_workers(b, nw);
err_file:
	fput(file);
	return r;
}

static long vhost_blk_set_backend(struct vhost_blk *b,
				  const struct vhost_blk_backend *be)
{
	long r;
	int i;

	for (i = 0; i < ARRAY_SIZE(be->reserved); i++)
		if (be->reserved[i])
			return -EINVAL;
	if (be->flags & ~VHOST_BLK_FLAGS || be->poll_us > VHOST_BLK_MAX_POLL_US)
		return -EINVAL;
	mutex_lock(&b->dev.mutex);
	r = vhost_dev_check_owner(&b->dev);
	if (!r) {
		if (be->fd == -1)
			vhost_blk_stop(b);
		else if (be->fd < 0)
			r = -EBADF;
		else
			r = vhost_blk_start_backend(b, be);
	}
	mutex_unlock(&b->dev.mutex);
	return r;
}

static long vhost_blk_set_features(struct vhost_blk *b, u64 features)
{
	int i;

	if (features & ~VHOST_BLK_FEATURES)
		return -EOPNOTSUPP;
	mutex_lock(&b->dev.mutex);
	if (b->serving) {
		mutex_unlock(&b->dev.mutex);
		return -EBUSY;
	}
	for (i = 0; i < VHOST_BLK_MAX_QUEUES; i++) {
		struct vhost_virtqueue *vq = b->vqs[i];

		mutex_lock(&vq->mutex);
		vq->acked_features = features;
		mutex_unlock(&vq->mutex);
	}
	mutex_unlock(&b->dev.mutex);
	return 0;
}

static long vhost_blk_reset_owner(struct vhost_blk *b)
{
	struct vhost_iotlb *umem;
	long r;

	mutex_lock(&b->dev.mutex);
	r = vhost_dev_check_owner(&b->dev);
	if (r)
		goto out;
	umem = vhost_dev_reset_owner_prepare();
	if (!umem) {
		r = -ENOMEM;
		goto out;
	}
	vhost_blk_stop(b);
	vhost_dev_stop(&b->dev);
	vhost_dev_reset_owner(&b->dev, umem);
out:
	mutex_unlock(&b->dev.mutex);
	return r;
}

/* ---- file operations ---- */

static int vhost_blk_open(struct inode *inode, struct file *f)
{
	struct vhost_blk *b;
	int i;

	/* Charged to the opener's memory cgroup, as vhost-net's. */
	b = kvzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < VHOST_BLK_MAX_QUEUES; i++) {
		struct vhost_blk_queue *q = &b->q[i];

		q->blk = b;
		init_llist_head(&q->done);
		q->vq.handle_kick = vhost_blk_handle_kick;
		b->vqs[i] = &q->vq;
	}
	/*
	 * iov_limit sizes the core's per-ring log and heads arrays, unused
	 * here (no dirty log; used entries come from q->heads); the weights
	 * only matter to the core's own handlers.
	 */
	vhost_dev_init(&b->dev, b->vqs, VHOST_BLK_MAX_QUEUES, 1, 0, 0, true,
		       NULL);
	f->private_data = b;
	return 0;
}

static int vhost_blk_release(struct inode *inode, struct file *f)
{
	struct vhost_blk *b = f->private_data;

	mutex_lock(&b->dev.mutex);
	vhost_blk_stop(b);
	mutex_unlock(&b->dev.mutex);
	vhost_dev_stop(&b->dev);
	vhost_dev_cleanup(&b->dev);
	kvfree(b);
	return 0;
}

static long vhost_blk_ioctl(struct file *f, unsigned int ioctl,
			    unsigned long arg)
{
	struct vhost_blk *b = f->private_data;
	void __user *argp = (void __user *)arg;
	struct vhost_blk_backend be;
	u64 features;
	long r;

	switch (ioctl) {
	case VHOST_BLK_GET_VERSION:
		return put_user((u32)VHOST_BLK_API_VERSION, (u32 __user *)argp);
	case VHOST_BLK_SET_BACKEND:
		if (copy_from_user(&be, argp, sizeof(be)))
			return -EFAULT;
		return vhost_blk_set_backend(b, &be);
	case VHOST_GET_FEATURES:
		features = VHOST_BLK_FEATURES;
		return copy_to_user(argp, &features, sizeof(features)) ?
		       -EFAULT : 0;
	case VHOST_SET_FEATURES:
		if (copy_from_user(&features, argp, sizeof(features)))
			return -EFAULT;
		return vhost_blk_set_features(b, features);
	case VHOST_RESET_OWNER:
		return vhost_blk_reset_owner(b);
	default:
		mutex_lock(&b->dev.mutex);
		r = vhost_dev_ioctl(&b->dev, ioctl, argp);
		if (r == -ENOIOCTLCMD)
			r = vhost_vring_ioctl(&b->dev, ioctl, argp);
		mutex_unlock(&b->dev.mutex);
		return r == -ENOIOCTLCMD ? -ENOTTY : r;
	}
}

static const struct file_operations vhost_blk_fops = {
	.owner = THIS_MODULE,
	.open = vhost_blk_open,
	.release = vhost_blk_release,
	.unlocked_ioctl = vhost_blk_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vhost_blk_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vhost-blk",
	.fops = &vhost_blk_fops,
};

module_misc_device(vhost_blk_misc);

MODULE_LICENSE("GPL v2");
MODULE_AUTHOR("microvm");
MODULE_DESCRIPTION("vhost-blk: virtio-blk rings served in the host kernel");
