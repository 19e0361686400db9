/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Disk backend: an image file or block device opened once (struct disk,
 * shared by every queue) and per-thread I/O queues (struct disk_queue) that
 * move byte ranges between the image and iovecs through an engine (io_uring
 * or synchronous system calls). The backend knows nothing about virtio.
 *
 * Usage, one I/O thread per queue:
 *
 *	disk_open(&d, &opts, err, sizeof(err));       // once, at startup
 *	disk_queue_open(&d, depth, &q);               // in or for each thread
 *	loop:
 *		epoll_wait(kick fd, disk_queue_fd(q), stop fd)
 *		for each new request r:
 *			if (disk_queue_submit(q, r) == -EAGAIN)
 *				keep r for later (the queue is full)
 *		disk_queue_flush(q);              // ends the batch
 *		if disk_queue_fd(q) is readable:
 *			disk_queue_reap(q, done_fn, arg); // calls done_fn()
 *	disk_queue_close(q);                          // waits for the kernel
 *	disk_close(&d);
 *
 * A request belongs to the caller again once its done_fn() has been called.
 */
#ifndef MICROVM_DISK_H
#define MICROVM_DISK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Most iovec segments in one request (the kernel's UIO_MAXIOV). */
#define DISK_IOV_MAX 1024
/* Deepest queue disk_queue_open() accepts. */
#define DISK_QUEUE_MAX_DEPTH 4096
/*
 * O_DIRECT bounce memory: each queue of a direct disk preallocates
 * DISK_BOUNCE_SLOTS aligned buffers of DISK_BOUNCE_CHUNK bytes when it
 * opens. A misaligned request holds one buffer while it runs and moves
 * its data through it one chunk at a time; a request finding none free
 * waits (disk_queue_submit() returns -EAGAIN). So bouncing adds at most
 * DISK_BOUNCE_BYTES per queue to the host, whatever the guest sends.
 */
#define DISK_BOUNCE_CHUNK (256u * 1024)
#define DISK_BOUNCE_SLOTS 4u
#define DISK_BOUNCE_BYTES ((size_t)DISK_BOUNCE_SLOTS * DISK_BOUNCE_CHUNK)
/*
 * Snapshot disks (disk_opts.snapshot) without a reflink keep the guest's
 * writes in a throwaway overlay file, tracked per cluster of this many
 * bytes by a bitmap sized at open (one bit per cluster: 2 MiB for 1 TiB).
 * The first write to a cluster copies it up (reads the image's cluster,
 * merges, writes it whole to the overlay). 64 KiB keeps the map small and
 * a sequential writer's copy-ups few; a guest's 4 KiB random write pays
 * at most one 64 KiB read and write per cluster, once.
 */
#define DISK_OVERLAY_CLUSTER (64u * 1024)

enum disk_cache {
	DISK_CACHE_NONE,      /* O_DIRECT, flush = fdatasync (default) */
	DISK_CACHE_WRITEBACK, /* page cache, flush = fdatasync */
	DISK_CACHE_UNSAFE,    /* page cache, flush completes at once */
};

enum disk_engine {
	DISK_ENGINE_URING, /* io_uring, one ring per queue */
	DISK_ENGINE_SYNC,  /* preadv/pwritev/fdatasync/fallocate in submit */
	DISK_ENGINE_COUNT,
};

struct disk_opts {
	const char *path;
	bool readonly;
	enum disk_cache cache;
	enum disk_engine engine;
	/*
	 * snapshot: never write the image (opened read-only, shared lock);
	 * the guest's writes go to an unlinked file in @tmpdir (NULL: $TMPDIR,
	 * else /tmp), dropped at close. Not with @readonly or DISK_CACHE_NONE.
	 */
	bool snapshot;
	const char *tmpdir;
	bool no_reflink;       /* snapshot: use the cluster map even where the
				* file system could clone the image (tests) */
	/*
	 * relock: the image is the one this process has open and locked
	 * already (a drive PATCHed to its own file, to re-read its size):
	 * leave it unlocked, and lock it with disk_relock() once the old
	 * descriptor is closed (an OFD lock conflicts with our own).
	 */
	bool relock;
};

enum disk_op {
	DISK_OP_READ,
	DISK_OP_WRITE,
	DISK_OP_FLUSH,
	DISK_OP_DISCARD,
	DISK_OP_WRITE_ZEROES,
	DISK_OP_COUNT,
};

/* Counters, updated with relaxed atomics from every queue's thread. */
struct disk_stats {
	_Atomic uint64_t errors[DISK_OP_COUNT]; /* requests failed, per op */
	_Atomic uint64_t bounced;   /* requests copied through aligned memory */
	_Atomic uint64_t bounce_waits; /* deferrals: every bounce buffer busy */
	_Atomic uint64_t resubmits; /* short transfers continued */
	_Atomic uint64_t enters;    /* io_uring_enter calls made to submit
				     * (uring engine; the cost per request
				     * that batching saves) */
	_Atomic uint64_t copy_ups;  /* snapshot: clusters copied to the
				     * overlay */
	_Atomic uint64_t inline_calls; /* uring engine: reads and writes of
					* a memory-backed image made in the
					* queue thread (disk_uring.c) */
};

struct disk_engine_ops;
struct disk_overlay;

/*
 * One per image; read-only after disk_open() except for the counters.
 * With O_DIRECT, a request whose buffers are not aligned goes through an
 * aligned copy (the queue's bounce buffers, DISK_BOUNCE_CHUNK bytes at a
 * time); one whose offset or length is not a multiple of @align is
 * read-modify-written over the covering blocks, which is not atomic against
 * another write to the same block: a device should advertise @align as its
 * logical block size so that guests never send such requests. O_DIRECT is
 * dropped where @align or @mem_align exceeds DISK_BOUNCE_CHUNK.
 */
struct disk {
	int fd;
	uint64_t size;        /* bytes, fixed at open */
	bool readonly;
	bool direct;          /* O_DIRECT in effect */
	uint32_t align;       /* O_DIRECT: offset and segment length multiple */
	uint32_t mem_align;   /* O_DIRECT: segment base address multiple */
	uint32_t phys_block;  /* physical block (device) or fs block (file) */
	bool is_blockdev;
	bool mem_backed;      /* a regular file on tmpfs or ramfs */
	uint8_t *map;         /* mem_backed, io_uring engine: its mapping */
	bool can_discard;
	bool can_write_zeroes;
	enum disk_cache cache;
	enum disk_engine engine;
	const struct disk_engine_ops *ops;
	char *path;
	/*
	 * Snapshot disks: @fd is the throwaway overlay (a reflinked clone of
	 * the image, or a sparse file of the image's size beside @ov, the
	 * cluster map); @base_fd the image, read-only, holding its shared
	 * lock.
	 */
	bool snapshot;
	bool reflinked;
	int base_fd;
	struct disk_overlay *ov;
	struct disk_stats stats;
};

/* Engine bookkeeping inside each request; callers never touch it. */
struct disk_bounce;

struct disk_req_priv {
	struct disk_req *next; /* completion list link */
	struct disk_bounce *pool; /* the queue's bounce buffers */
	void *bounce;          /* the one held for O_DIRECT, or NULL */
	struct iovec biov;     /* the current chunk of @bounce */
	struct iovec saved;    /* caller segment trimmed for a continuation */
	int saved_idx;         /* its index in the caller's array, or -1 */
	struct iovec saved_tail; /* segment cut short at the end of a run */
	int tail_idx;          /* its index, or -1 (after any front trim) */
	int kfile;             /* enum disk_file of the current transfer */
	int stage;             /* step of the request (disk_req.c) */
	int fmode;             /* fallocate mode of the current step */
	uint64_t total;        /* READ/WRITE: the iovec total */
	uint64_t span_end;     /* bounce: end of the aligned span */
	uint64_t kpos;         /* file offset of the current transfer */
	uint64_t klen;         /* bytes the current transfer must move */
	uint64_t kdone;        /* bytes it moved so far */
};

/*
 * One I/O request. The caller fills op, offset, len (DISCARD and
 * WRITE_ZEROES only), iov/iovcnt (READ and WRITE only) and opaque. While the
 * request is in flight the engine may trim one entry of @iov in place to
 * continue a short transfer; it restores it before completion.
 */
struct disk_req {
	enum disk_op op;
	uint64_t offset;       /* bytes from the start of the image */
	uint64_t len;          /* DISCARD/WRITE_ZEROES length; rw: ignored */
	struct iovec *iov;     /* READ/WRITE segments (guest memory) */
	int iovcnt;
	ssize_t result;        /* rw: the iovec total; others 0; or -errno */
	void *opaque;          /* the caller's */
	struct disk_req_priv priv;
};

struct disk_queue;

/**
 * disk_open() - open an image file or block device for I/O.
 * @d: disk to fill (zeroed by this function).
 * @o: path, read-only flag, cache mode and engine.
 * @err: buffer for one message naming the path, e.g. "disk PATH: is a
 *	directory" or "disk PATH: in use by another process (locked)".
 * @errlen: size of @err.
 *
 * Opens read-only (O_RDONLY, shared OFD lock) or read-write (O_RDWR,
 * exclusive OFD lock on the whole file, so a second user is refused).
 * A snapshot disk opens the image read-only with the shared lock (so many
 * snapshot users share one image, and a writer conflicts with them) and
 * creates its overlay: an O_TMPFILE (or unlinked) file in the temporary
 * directory, reflinked from the image (FICLONE) where the file system can
 * and @o->no_reflink is false, else sparse, of the image's size, with a
 * cluster map; flushes then complete at once.
 * cache=none asks for O_DIRECT and falls back to the page cache, with an
 * info message, where the file system refuses it or the size is not a
 * multiple of the direct I/O block. Discard and write-zeroes support is
 * probed: for files by punching a hole entirely past the end of file (a no-op
 * where supported), for block devices from sysfs (discard) and BLKZEROOUT
 * (always available).
 *
 * Return: 0, or -errno with @err filled (-EBUSY when locked by another
 * user, -EISDIR for a directory, -EINVAL for other file types and for a
 * snapshot that is read-only or asks for O_DIRECT); after a
 * failure @d holds nothing (disk_close() on it is harmless).
 * Context: startup, any thread.
 */
int disk_open(struct disk *d, const struct disk_opts *o, char *err,
	      size_t errlen);

/**
 * disk_open_fd() - like disk_open(), on a descriptor the caller opened.
 * @d: disk to fill.
 * @fd: open descriptor; O_DIRECT is taken from its flags (and may be
 *	cleared as in disk_open()); it must be writable unless @o->readonly
 *	(-EBADF).
 * @o: as for disk_open(); @o->path only names the image in messages.
 * @err: message buffer.
 * @errlen: size of @err.
 *
 * Runs the same checks, probing and locking as disk_open(). Tests use it to
 * point the engines at unusual files such as /proc/self/mem.
 *
 * Return: 0 with @fd owned by @d (disk_close() closes it), or -errno with
 * @fd left open for the caller.
 * Context: startup, any thread.
 */
int disk_open_fd(struct disk *d, int fd, const struct disk_opts *o,
		 char *err, size_t errlen);

/**
 * disk_relock() - take the image's lock after a disk_open() with
 * @relock, once the descriptor that held it is closed.
 * @d: the disk opened with @relock.
 * @err: set on failure (another process took the lock meanwhile).
 * @errlen: size of @err.
 *
 * Return: 0, or -EBUSY with @err set.
 */
int disk_relock(struct disk *d, char *err, size_t errlen);

/**
 * disk_close() - release the lock and the descriptor (a snapshot's
 * overlay goes with it).
 * @d: disk from disk_open(); every queue must be closed already.
 * Context: teardown.
 */
void disk_close(struct disk *d);

/**
 * disk_engine_name() - name of an engine ("uring", "sync").
 * @e: engine.
 * Return: a static string, "?" for an unknown value. Context: any.
 */
const char *disk_engine_name(enum disk_engine e);

/**
 * disk_queue_open() - create an I/O queue for one thread.
 * @d: open disk.
 * @depth: most requests in flight (submitted and not yet reaped), 1 to
 *	DISK_QUEUE_MAX_DEPTH.
 * @out: the new queue.
 * Return: 0 or -errno. Context: any thread; the queue is then used by one.
 */
int disk_queue_open(struct disk *d, unsigned int depth,
		    struct disk_queue **out);

/**
 * disk_queue_close() - wait for the kernel to finish every request in
 * flight, then free the queue.
 * @q: queue, or NULL.
 *
 * No callback runs for requests not yet reaped; reap until
 * disk_queue_inflight() is 0 first if the caller needs them. Once this
 * returns, no request memory or iovec buffer is touched any more.
 * Context: the queue's thread, or any thread after it stopped.
 */
void disk_queue_close(struct disk_queue *q);

/**
 * disk_queue_reset() - make @q as it was when opened, for another run:
 * wait for the kernel to finish every request in flight (no callback runs
 * for them, as in disk_queue_close()), forget the finished ones and any
 * wakeup owed, and take at most @depth requests from now on. The engine's
 * kernel objects (an io_uring, made and restricted at open) are kept, so
 * a queue that runs again after a device reset needs no new ring.
 * @q: queue.
 * @depth: 1 to the depth @q was opened with.
 * Return: 0, -EINVAL for a deeper @depth, or -errno when the kernel could
 * not be waited for (@q is unusable then: close it).
 * Context: the queue's thread, or any thread after it stopped.
 */
int disk_queue_reset(struct disk_queue *q, unsigned int depth);

/**
 * disk_queue_submit() - queue one request.
 * @q: queue.
 * @r: request; owned by the queue until its completion callback.
 *
 * Requests the backend refuses (out of range, read-only disk: -EROFS,
 * unsupported discard: -EOPNOTSUPP, ...) are accepted here and complete with
 * that result through disk_queue_reap() like any other, so the caller has one
 * completion path. The synchronous engine executes the request here, and
 * so does every engine for discard and write-zeroes on a block device
 * (BLKDISCARD and BLKZEROOUT are blocking ioctls).
 *
 * Return: 0 when accepted, -EAGAIN when @depth requests are in flight or
 * when @r needs a bounce buffer and all DISK_BOUNCE_SLOTS are held by
 * requests in flight (either way the caller keeps @r and retries after a
 * reap).
 * Context: the queue's thread.
 */
int disk_queue_submit(struct disk_queue *q, struct disk_req *r);

/**
 * disk_queue_flush() - hand everything still queued to the kernel, and
 * end the batch (io_uring: submit enters a batch's SQEs in chunks of 1,
 * 2, 4 and then 8; this enters the rest, at most one io_uring_enter).
 * @q: queue.
 * Return: number of kernel operations started (0 when none), or -errno; on
 * failure the operations stay queued and the completion fd is signalled so
 * that disk_queue_reap() retries.
 * Context: the queue's thread.
 */
int disk_queue_flush(struct disk_queue *q);

/**
 * disk_queue_fd() - descriptor that becomes readable when disk_queue_reap()
 * has work (an eventfd; io_uring signals it for each completion).
 * @q: queue.
 * Return: the descriptor, owned by @q. Context: any.
 */
int disk_queue_fd(struct disk_queue *q);

/**
 * disk_queue_replace_file() - the queue's image is now @fd: a drive swap
 * moves a new image into the queue's struct disk; an engine that took
 * the old descriptor into the kernel (io_uring's registered file) is
 * re-pointed. The queue must be idle (its device paused).
 * Return: 0 or -errno (the queue still uses the old file).
 */
int disk_queue_replace_file(struct disk_queue *q, int fd);

/* Called once per finished request; @r->result holds the outcome. */
typedef void (*disk_complete_fn)(void *arg, struct disk_req *r);

/**
 * disk_queue_reap() - drain the completion fd and finish what completed.
 * @q: queue.
 * @fn: called once per finished request; it may submit new requests.
 * @arg: passed to @fn.
 *
 * Short transfers are continued here rather than completed.
 * Return: number of callbacks made. Context: the queue's thread.
 */
int disk_queue_reap(struct disk_queue *q, disk_complete_fn fn, void *arg);

/**
 * disk_queue_drain() - finish what has already completed, with no system
 * call: requests the submitting thread made itself (a memory-backed
 * image) or refused; nothing is collected from the kernel.
 * @q: queue.
 * @fn: called once per finished request.
 * @arg: passed to @fn.
 * Return: number of requests finished.
 * Context: the queue's thread, after disk_queue_submit() and before
 * disk_queue_flush(), which then has no completion to signal for them.
 */
int disk_queue_drain(struct disk_queue *q, disk_complete_fn fn, void *arg);

/**
 * disk_queue_ready() - whether disk_queue_reap() has something to finish,
 * without a system call: a peek for a thread that busy-polls instead of
 * waiting on disk_queue_fd().
 * @q: queue.
 *
 * False may be stale (a completion may land just after); true stays true
 * until the next reap. A failed flush that left work for the reap shows
 * only on disk_queue_fd().
 * Return: true when a request has finished. Context: the queue's thread.
 */
bool disk_queue_ready(struct disk_queue *q);

/**
 * disk_queue_inflight() - requests submitted and not yet reaped.
 * @q: queue.
 * Return: the count. Context: the queue's thread.
 */
unsigned int disk_queue_inflight(const struct disk_queue *q);

#endif
