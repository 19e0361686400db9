/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device side of a split virtqueue (virtio 1.2 §2.7). The transport hands
 * over the ring addresses and size with virtq_start(); the device's queue
 * thread pops descriptor chains, pushes used elements and asks whether the
 * driver wants an interrupt. Every ring access is bounds-checked against
 * struct guest_mem, and nothing a guest writes can crash or hang the VMM.
 *
 * Usage (one queue thread, woken by the queue's ioeventfd):
 *
 *	for (;;) {
 *		virtq_notify_disable(vq);
 *		while ((r = virtq_pop(vq, &elem)) != 0) {
 *			if (r == -EIO)
 *				goto needs_reset;
 *			if (r == -EBADMSG)
 *				virtq_push(vq, elem.head, 0);
 *			else
 *				submit(&elem);  (virtq_push() later)
 *		}
 *		if (!virtq_notify_enable(vq))
 *			break;          (empty, kicks back on)
 *	}
 *	after completions: if (virtq_need_notify(vq)) signal the irqfd
 *
 * The state in struct virtq belongs to the queue thread; the ring memory is
 * shared with the guest, which may change it at any moment.
 */
#ifndef MICROVM_VIRTQ_H
#define MICROVM_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"

/* Largest queue size this device side offers (the spec allows 32768). */
#define VIRTQ_MAX_SIZE 1024

/* Descriptor flags (virtio 1.2 §2.7.5). */
#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2
#define VIRTQ_DESC_F_INDIRECT 4

/* avail->flags (§2.7.7) and used->flags (§2.7.10). */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY 1

/* Feature bit numbers virtq_start() looks at (virtio 1.2 §6). */
#define VIRTQ_F_INDIRECT_DESC 28
#define VIRTQ_F_EVENT_IDX 29

/* Ring part sizes in bytes for a queue of @n entries, event fields included
 * (virtio 1.2 §2.7, table of virtqueue parts). */
#define VIRTQ_DESC_BYTES(n) (16u * (n))
#define VIRTQ_AVAIL_BYTES(n) (6u + 2u * (n))
#define VIRTQ_USED_BYTES(n) (6u + 8u * (n))

/**
 * enum virtq_error - why the last virtq_pop() failed (vq->last_error).
 *
 * The first two break the whole ring (virtq_pop() returns -EIO); the rest
 * fail one chain whose head is known (virtq_pop() returns -EBADMSG).
 */
enum virtq_error {
	VIRTQ_ERR_NONE,
	VIRTQ_ERR_AVAIL_IDX,        /* avail idx ran more than size ahead */
	VIRTQ_ERR_HEAD_RANGE,       /* avail ring entry >= queue size */
	VIRTQ_ERR_NEXT_RANGE,       /* next >= entries in its table */
	VIRTQ_ERR_LOOP,             /* more steps than entries: a cycle */
	VIRTQ_ERR_CHAIN_TOO_LONG,   /* more than size buffer descriptors */
	VIRTQ_ERR_ADDR,             /* buffer not wholly inside guest RAM */
	VIRTQ_ERR_ZERO_LEN,         /* chain of 0 bytes in total */
	VIRTQ_ERR_TOO_BIG,          /* chain of more than UINT32_MAX bytes */
	VIRTQ_ERR_ORDER,            /* device-readable after device-writable */
	VIRTQ_ERR_TOO_MANY_SEGS,    /* more segments than elem->max_segs */
	VIRTQ_ERR_INDIRECT_FEATURE, /* INDIRECT without the feature */
	VIRTQ_ERR_INDIRECT_NEXT,    /* INDIRECT and NEXT in one descriptor */
	VIRTQ_ERR_INDIRECT_NESTED,  /* INDIRECT inside an indirect table */
	VIRTQ_ERR_INDIRECT_LEN,     /* table len 0 or not a multiple of 16 */
	VIRTQ_ERR_INDIRECT_ADDR,    /* table not wholly inside guest RAM */
	VIRTQ_ERR_COUNT
};

/* One buffer of a chain: host pointer into guest RAM, already checked. */
struct virtq_seg {
	void *addr;
	uint32_t len;
};

/*
 * One popped chain. The caller provides @segs and @max_segs; virtq_pop()
 * fills the rest. Device-readable segments come first, [0, nr_out), then
 * device-writable ones, [nr_out, nr_out + nr_in). Zero-length descriptors
 * produce no segment (their address is never looked at).
 */
struct virtq_elem {
	uint16_t head;    /* descriptor id to hand back to virtq_push() */
	uint16_t nr_out;  /* device-readable segments */
	uint16_t nr_in;   /* device-writable segments */
	uint64_t out_len; /* bytes in the readable segments */
	uint64_t in_len;  /* bytes in the writable segments */
	struct virtq_seg *segs;
	uint16_t max_segs;
};

/*
 * One split virtqueue. Fields are public for the transport (addresses, to
 * read back) and for tests and statistics; only virtq_*() writes them.
 * Counters are plain integers owned by the queue thread: another thread
 * reading them sees approximate values.
 */
struct virtq {
	/* Set by virtq_start(), read-only afterwards. */
	const struct guest_mem *gm;
	uint16_t size;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	bool event_idx; /* VIRTQ_F_EVENT_IDX negotiated */
	bool indirect;  /* VIRTQ_F_INDIRECT_DESC negotiated */
	bool ready;     /* virtq_start() succeeded */
	uint8_t *desc;  /* host view of the rings, each wholly in RAM */
	uint16_t *avail;
	uint8_t *used;

	/* Queue-thread state. */
	uint16_t last_avail_idx; /* next avail ring entry to consume */
	uint16_t used_idx;       /* next used ring entry to fill */
	uint16_t signalled_used; /* used_idx at the last virtq_need_notify() */
	bool broken;             /* ring unusable until virtq_start() */
	enum virtq_error last_error;

	/* Counters. */
	uint64_t pops;       /* chains returned */
	uint64_t pushes;     /* used elements written */
	uint64_t bad_chains; /* chains failed with -EBADMSG */
};

/**
 * virtq_start() - validate the rings and make the queue ready.
 * @vq: queue to (re)initialise; all previous state is discarded
 * @gm: guest memory the rings and buffers live in
 * @size: queue size chosen by the driver
 * @desc: guest physical address of the descriptor table
 * @avail: guest physical address of the available ring (driver area)
 * @used: guest physical address of the used ring (device area)
 * @features: negotiated feature bits (VIRTQ_F_INDIRECT_DESC and
 *            VIRTQ_F_EVENT_IDX are used)
 *
 * @size must be a power of two no larger than VIRTQ_MAX_SIZE; @desc must be
 * 16-, @avail 2- and @used 4-byte aligned (virtio 1.2 §2.7.1), and each
 * part, event fields included, must lie wholly inside one RAM region.
 * Indices start at 0. Writes used->flags = 0 and, with EVENT_IDX,
 * avail_event = 0, so the driver starts out kicking.
 *
 * Return: 0, or -EINVAL for a bad size, a misaligned ring or a ring not
 * wholly in RAM; the queue is then left not ready, and every later call
 * treats it as empty.
 * Context: the thread that handles transport register writes, while the
 * queue thread is stopped.
 */
int virtq_start(struct virtq *vq, const struct guest_mem *gm, uint16_t size,
		uint64_t desc, uint64_t avail, uint64_t used,
		uint64_t features);

/* Where a queue stands, the host side of it: what pause and snapshot keep. */
struct virtq_state {
	uint16_t last_avail_idx;
	uint16_t used_idx;
	uint16_t signalled_used;
};

/**
 * virtq_save() - the indices of a stopped queue, for virtq_restore().
 * Context: the queue thread, or any thread while it is stopped.
 */
void virtq_save(const struct virtq *vq, struct virtq_state *st);

/**
 * virtq_restore() - as virtq_start() (the same checks of size, alignment
 * and placement), but the queue goes on from @st and nothing is written
 * to guest memory: the driver's view of the rings (used flags, event
 * index) stays as the device left it.
 * Return: 0, or -EINVAL for rings virtq_start() would refuse or an @st
 * whose used index trails the avail index by more than @size; the queue
 * is then left not ready.
 * Context: as virtq_start().
 */
int virtq_restore(struct virtq *vq, const struct guest_mem *gm,
		  uint16_t size, uint64_t desc, uint64_t avail, uint64_t used,
		  uint64_t features, const struct virtq_state *st);

/**
 * virtq_pop() - take the next available descriptor chain.
 * @vq: started queue
 * @elem: chain out; @elem->segs and @elem->max_segs must be set
 *
 * Reads avail->idx once, consumes one avail ring entry and walks its chain
 * (direct descriptors, optionally ending in one indirect table), bounded by
 * the queue size. vq->last_error says what was wrong on failure.
 *
 * Return: 1 and a chain in @elem; 0 when the ring is empty (or the queue
 * was never started); -EBADMSG when the chain is malformed: the avail entry
 * is consumed and @elem->head is valid, so the caller fails just that
 * request with virtq_push(); -EIO when the ring itself is broken (avail idx
 * out of range, head index >= size): vq->broken is set, @elem->head is not
 * valid, and every later pop returns -EIO until virtq_start().
 * Context: the queue thread.
 */
int virtq_pop(struct virtq *vq, struct virtq_elem *elem);

/**
 * virtq_push() - return a chain to the driver.
 * @vq: started queue
 * @head: elem->head of a chain popped from @vq and not yet pushed
 * @written: bytes written into the chain's device-writable buffers, from
 *           the first one on (at most elem->in_len; 0 for a failed chain)
 *
 * Fills the next used ring entry, then publishes it by advancing used->idx
 * with release semantics (virtio 1.2 §2.7.8.2).
 * Context: the queue thread.
 */
void virtq_push(struct virtq *vq, uint16_t head, uint32_t written);

/**
 * virtq_need_notify() - decide whether a used buffer notification is due.
 * @vq: started queue
 *
 * Call once after a batch of virtq_push(). With EVENT_IDX: true when the
 * used idx crossed used_event since the previous call (virtio 1.2 §2.7.7.2,
 * 16-bit wraparound handled); without it: true when something was pushed
 * since the previous call and VIRTQ_AVAIL_F_NO_INTERRUPT is clear. Batches
 * between two calls must stay below 65536 pushes.
 *
 * Return: true when the caller must interrupt the guest.
 * Context: the queue thread.
 */
bool virtq_need_notify(struct virtq *vq);

/**
 * virtq_notify_disable() - ask the driver not to kick (a hint only).
 * @vq: started queue
 *
 * Without EVENT_IDX sets VIRTQ_USED_F_NO_NOTIFY in used->flags. With
 * EVENT_IDX (§2.7.10.2 requires used->flags to stay 0 then) sets
 * avail_event one behind the next index the device will consume, an index
 * the driver has already published: it kicks for none of the next 65535
 * buffers, the first one included.
 * Context: the queue thread.
 */
void virtq_notify_disable(struct virtq *vq);

/**
 * virtq_notify_enable() - ask the driver to kick again, then re-check.
 * @vq: started queue
 *
 * Clears VIRTQ_USED_F_NO_NOTIFY, or with EVENT_IDX sets avail_event to the
 * next index the device will consume, then issues a full barrier and looks
 * at avail->idx again so a buffer added in between is not lost.
 *
 * Return: true when buffers are available (drain again), false when the
 * ring is empty or broken.
 * Context: the queue thread.
 */
bool virtq_notify_enable(struct virtq *vq);

/**
 * virtq_has_avail() - whether virtq_pop() has something to look at.
 * @vq: queue
 *
 * Return: true when avail->idx differs from the next index to consume and
 * the ring is started and not broken.
 * Context: the queue thread.
 */
bool virtq_has_avail(struct virtq *vq);

/**
 * virtq_error_str() - short name of an enum virtq_error, for logs.
 * @err: error code
 *
 * Return: a static string, "unknown" for values out of range.
 * Context: any thread.
 */
const char *virtq_error_str(enum virtq_error err);

#endif
