/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private interface between the disk core and its engines. The core plans a
 * request as a sequence of kernel calls (struct disk_kcall: readv, writev,
 * fdatasync, fallocate); an engine only issues the calls it is handed and
 * reports each result back with disk_req_next(), so short transfers, bounce
 * buffers and read-modify-write behave the same in every engine.
 */
#ifndef MICROVM_DISK_ENGINE_H
#define MICROVM_DISK_ENGINE_H

#include "virtio/disk.h"

/*
 * A queue's O_DIRECT bounce buffers (DISK_BOUNCE_SLOTS, preallocated), and
 * the one cluster buffer a snapshot disk's copy-up uses.
 */
struct disk_bounce {
	uint8_t *mem;                /* the buffers, chunk-aligned; or NULL */
	unsigned int nfree;
	uint8_t free[DISK_BOUNCE_SLOTS]; /* indices of the free buffers */
	uint8_t *cow;                /* DISK_OVERLAY_CLUSTER bytes, or NULL */
};

/* Common head of every engine's queue; engines embed it first. */
struct disk_queue {
	struct disk *disk;
	unsigned int depth;
	unsigned int max_depth;      /* what it was opened with */
	unsigned int inflight;       /* accepted, callback not yet made */
	int efd;                     /* completion eventfd */
	struct disk_req *done_head;  /* finished, waiting for the reap */
	struct disk_req **done_tail;
	/* Finished in the thread with no signal written for them yet:
	 * disk_queue_flush() writes it, disk_queue_drain() makes it moot. */
	bool signal_owed;
	struct disk_bounce bounce;
};

enum disk_kop {
	DISK_KOP_READV,
	DISK_KOP_WRITEV,
	DISK_KOP_FDATASYNC,
	DISK_KOP_FALLOCATE,
};

/* Which descriptor a kernel call uses (the io_uring fixed-file index). */
enum disk_file {
	DISK_FILE_MAIN, /* disk->fd: the image, or a snapshot's overlay */
	DISK_FILE_BASE, /* disk->base_fd: a snapshot's image (reads only) */
};

/* One kernel call on disk->fd or, for snapshot reads, disk->base_fd. */
struct disk_kcall {
	enum disk_kop op;
	enum disk_file file;
	uint64_t pos;          /* READV/WRITEV/FALLOCATE offset */
	uint64_t len;          /* FALLOCATE length */
	int mode;              /* FALLOCATE mode */
	struct iovec *iov;     /* READV/WRITEV segments */
	int iovcnt;
};

/* Return values of disk_req_start() and disk_req_next(). */
#define DISK_REQ_CALL 0 /* issue *kc, then call disk_req_next() */
#define DISK_REQ_DONE 1 /* r->result is final */
#define DISK_REQ_WAIT 2 /* start only: no bounce buffer free, retry later */

struct disk_engine_ops {
	const char *name;
	/* Allocate the engine's queue around the core's @efd. */
	int (*queue_open)(struct disk *d, unsigned int depth, int efd,
			  struct disk_queue **out);
	/* Wait for the kernel, disk_req_abandon() what it returns, free. */
	void (*queue_close)(struct disk_queue *q);
	/* Wait for the kernel and disk_req_abandon() what it returns, as
	 * queue_close does, but keep the queue for another run. 0 or
	 * -errno (the queue is unusable; close it). NULL: nothing is ever
	 * left in the kernel. */
	int (*queue_drain)(struct disk_queue *q);
	/* Issue (or queue) @kc for @r; finish @r through the done list. */
	void (*submit)(struct disk_queue *q, struct disk_req *r,
		       const struct disk_kcall *kc);
	int (*flush)(struct disk_queue *q);
	/* Move requests the kernel finished onto the done list. */
	void (*reap)(struct disk_queue *q);
	/* Has the kernel finished something reap would collect? A peek, no
	 * system call; NULL when nothing finishes outside submit. */
	bool (*ready)(struct disk_queue *q);
	/* The image behind the queue is now @fd (a drive swap, the queue
	 * idle). 0 or -errno. NULL: the engine uses disk->fd as it goes. */
	int (*replace_file)(struct disk_queue *q, int fd);
};

extern const struct disk_engine_ops disk_uring_ops;
extern const struct disk_engine_ops disk_sync_ops;

/**
 * disk_bounce_init() - preallocate a queue's bounce buffers.
 * @b: pool to fill.
 * @d: disk; nothing is allocated unless @d->direct.
 * Return: 0 or -ENOMEM. Context: any thread.
 */
int disk_bounce_init(struct disk_bounce *b, const struct disk *d);

/**
 * disk_bounce_fini() - free the buffers.
 * @b: pool from disk_bounce_init() (or a copy of it); no request may hold
 *	a buffer any more, and the kernel must be done with them.
 * Context: any thread.
 */
void disk_bounce_fini(struct disk_bounce *b);

/**
 * disk_overlay_open() - create a snapshot disk's overlay.
 * @d: disk probed and locked on its image (@d->fd, read-only).
 * @o: options: temporary directory, reflink allowed.
 * @err: message buffer.
 * @errlen: size of @err.
 *
 * On success @d->base_fd is the image, @d->fd the overlay (read-write),
 * and @d->ov the cluster map unless the overlay is a reflinked clone.
 * Return: 0, or -errno with @err filled and @d unchanged.
 * Context: startup.
 */
int disk_overlay_open(struct disk *d, const struct disk_opts *o, char *err,
		      size_t errlen);

/**
 * disk_overlay_free() - free the cluster map (descriptors stay open).
 * @ov: map, or NULL.
 * Context: teardown.
 */
void disk_overlay_free(struct disk_overlay *ov);

/**
 * disk_overlay_run() - where a read finds its data: the overlay or the
 * image, for as many clusters in a row as agree.
 * @d: snapshot disk with a cluster map.
 * @pos: first byte.
 * @end: end of the read (> @pos).
 * @file: which descriptor to read.
 * Return: bytes from @pos that come from *@file (at most @end - @pos).
 * Context: any queue's thread; a cluster copied up concurrently may still
 * be read from the image (the guest raced its own write).
 */
uint64_t disk_overlay_run(const struct disk *d, uint64_t pos, uint64_t end,
			  enum disk_file *file);

/**
 * disk_overlay_prepare() - copy up the clusters a write, discard or
 * write-zeroes touches that are not in the overlay yet.
 * @d: snapshot disk with a cluster map.
 * @buf: the queue's cluster buffer (struct disk_bounce.cow).
 * @r: the request; its range is checked already.
 * @len: its length in bytes (> 0).
 *
 * Copy-up is synchronous (preadv/pwritev on the queue's thread) and
 * serialized per cluster across queues: the image's cluster is read
 * (unless @r covers it), @r's bytes (or zeroes) are merged in, and the
 * result is written to the overlay before the cluster is marked, so a
 * second writer of the cluster either copies it up first or finds it
 * marked and writes into the overlay; neither's data is lost. A cluster
 * that a discard or write-zeroes covers whole is only marked (the overlay
 * has a hole there; the request's own fallocate follows).
 * Return: 1 when @r is a write that is complete (every cluster it touches
 * was copied up here, with its data), 0 when @r must still run on the
 * overlay, -errno on failure (some clusters may be copied up; the rest
 * read from the image as before).
 * Context: the queue's thread.
 */
int disk_overlay_prepare(struct disk *d, uint8_t *buf, struct disk_req *r,
			 uint64_t len);

/**
 * disk_req_copy() - copy between a buffer and a request's iovecs.
 * @r: READ or WRITE request.
 * @from: byte offset into the iovecs.
 * @buf: the buffer.
 * @n: bytes; the iovecs must hold @from + @n.
 * @to_iov: direction.
 * Context: the queue's thread.
 */
void disk_req_copy(struct disk_req *r, uint64_t from, uint8_t *buf,
		   uint64_t n, bool to_iov);

/**
 * disk_req_start() - check and plan @r; fill @kc with its first call.
 * @d: disk.
 * @b: the queue's bounce buffers; a misaligned O_DIRECT request holds one
 *	of them until it finishes.
 * @r: request from the caller.
 * @kc: first kernel call, when DISK_REQ_CALL is returned.
 * Return: DISK_REQ_CALL, DISK_REQ_DONE with r->result set (refused,
 * empty, or executed at once: block device discard, unsafe flush), or
 * DISK_REQ_WAIT when @r needs a bounce buffer and none is free (nothing
 * is held; start @r again once a request of the queue finished).
 * Context: the queue's thread.
 */
int disk_req_start(struct disk *d, struct disk_bounce *b, struct disk_req *r,
		   struct disk_kcall *kc);

/**
 * disk_req_next() - account the result of the last call of @r.
 * @d: disk.
 * @r: request.
 * @res: bytes moved, 0, or -errno, as the kernel returned it.
 * @kc: next kernel call, when DISK_REQ_CALL is returned.
 * Return: DISK_REQ_CALL or DISK_REQ_DONE. Context: the queue's thread.
 */
int disk_req_next(struct disk *d, struct disk_req *r, int64_t res,
		  struct disk_kcall *kc);

/**
 * disk_req_abandon() - drop a request without completing it (queue close):
 * returns its bounce buffer and restores the caller's iovecs.
 * @r: request whose last call the kernel has finished.
 * Context: the queue's thread.
 */
void disk_req_abandon(struct disk_req *r);

/**
 * disk_queue_complete() - put a finished request on the done list.
 * @q: queue.
 * @r: request with its final result.
 * Context: the queue's thread.
 */
void disk_queue_complete(struct disk_queue *q, struct disk_req *r);

/**
 * disk_kcall_run() - make kernel call @kc at once, blocking (the sync
 * engine; the uring engine's memory-backed reads and writes).
 * @fd: the descriptor @kc->file names.
 * @kc: the call.
 * Return: its result as disk_req_next() takes it (bytes, 0 or -errno).
 */
int64_t disk_kcall_run(int fd, const struct disk_kcall *kc);

/**
 * disk_map_kcall() - make READV or WRITEV call @kc on @d's mapping (@d->map
 * set): memcpy through guarded_copy(), short at the end of the image.
 * Return: bytes moved, or -EIO when a write's page could not be accessed
 * (the file was truncated behind microvm, or its tmpfs is full); a read
 * that faults is made again with preadv, which reads a hole as zeros and
 * ends short at the end of a shrunk file.
 * Context: a queue thread (guarded_copy_thread() called).
 */
int64_t disk_map_kcall(struct disk *d, const struct disk_kcall *kc);

/**
 * disk_queue_signal() - make the completion fd readable.
 * @q: queue.
 * Context: the queue's thread.
 */
void disk_queue_signal(struct disk_queue *q);

#endif
