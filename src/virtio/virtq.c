// SPDX-License-Identifier: Apache-2.0
/*
 * Split virtqueue, device side (virtio 1.2 §2.7). The rings live in guest
 * RAM that the guest may rewrite at any time: every index is loaded once,
 * every descriptor is copied once into a local before it is checked, and
 * every chain walk is bounded by the size of the table it walks.
 */
#include "virtio/virtq.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* A descriptor as the guest lays it out (virtio 1.2 §2.7.5). */
struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

_Static_assert(sizeof(struct virtq_desc) == 16, "descriptor is 16 bytes");

/* Available ring, in 16-bit words: flags, idx, ring[size], used_event. */
#define AVAIL_FLAGS 0
#define AVAIL_IDX 1
#define AVAIL_RING 2

/* Used ring, in bytes: flags, idx, ring[size] of 8 bytes, avail_event. */
#define USED_FLAGS 0
#define USED_IDX 2
#define USED_RING 4
#define USED_ELEM_BYTES 8

static const char *const virtq_error_names[VIRTQ_ERR_COUNT] = {
	[VIRTQ_ERR_NONE] = "none",
	[VIRTQ_ERR_AVAIL_IDX] = "avail idx out of range",
	[VIRTQ_ERR_HEAD_RANGE] = "head index out of range",
	[VIRTQ_ERR_NEXT_RANGE] = "next index out of range",
	[VIRTQ_ERR_LOOP] = "descriptor loop",
	[VIRTQ_ERR_CHAIN_TOO_LONG] = "chain longer than queue size",
	[VIRTQ_ERR_ADDR] = "buffer outside guest RAM",
	[VIRTQ_ERR_ZERO_LEN] = "zero-length chain",
	[VIRTQ_ERR_TOO_BIG] = "chain over 4 GiB",
	[VIRTQ_ERR_ORDER] = "readable after writable",
	[VIRTQ_ERR_TOO_MANY_SEGS] = "too many segments",
	[VIRTQ_ERR_INDIRECT_FEATURE] = "indirect not negotiated",
	[VIRTQ_ERR_INDIRECT_NEXT] = "indirect with next",
	[VIRTQ_ERR_INDIRECT_NESTED] = "nested indirect",
	[VIRTQ_ERR_INDIRECT_LEN] = "bad indirect table length",
	[VIRTQ_ERR_INDIRECT_ADDR] = "indirect table outside guest RAM",
};

const char *virtq_error_str(enum virtq_error err)
{
	if ((unsigned int)err >= VIRTQ_ERR_COUNT)
		return "unknown";
	return virtq_error_names[err];
}

static uint16_t ring_load(const uint16_t *p, int order)
{
	return le16toh(__atomic_load_n(p, order));
}

static void ring_store(uint16_t *p, uint16_t val, int order)
{
	__atomic_store_n(p, htole16(val), order);
}

static uint16_t *used_word(const struct virtq *vq, size_t off)
{
	return (uint16_t *)(vq->used + off);
}

static uint16_t *avail_event(const struct virtq *vq)
{
	return used_word(vq, USED_RING + (size_t)USED_ELEM_BYTES * vq->size);
}

/* The used ring (flags, entries, index, avail_event) is written: for a
 * diff snapshot (guest_mem_mark_dirty(), a no-op without tracking). */
static void used_dirty(const struct virtq *vq)
{
	guest_mem_mark_dirty(vq->gm, vq->used_gpa, VIRTQ_USED_BYTES(vq->size));
}

/* Validate and map the rings into @vq; nothing in guest memory written. */
static int virtq_map(struct virtq *vq, const struct guest_mem *gm,
		     uint16_t size, uint64_t desc, uint64_t avail,
		     uint64_t used, uint64_t features)
{
	void *d, *a, *u;

	memset(vq, 0, sizeof(*vq));
	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		return -EINVAL;
	/* Minimum alignment of each part (virtio 1.2 §2.7.1). */
	if ((desc & 15) || (avail & 1) || (used & 3))
		return -EINVAL;
	d = guest_mem_ptr(gm, desc, VIRTQ_DESC_BYTES(size));
	a = guest_mem_ptr(gm, avail, VIRTQ_AVAIL_BYTES(size));
	u = guest_mem_ptr(gm, used, VIRTQ_USED_BYTES(size));
	if (!d || !a || !u)
		return -EINVAL;
	/* The index words are accessed atomically: the host mapping must
	 * keep the guest alignment (it does unless a region is odd). */
	if (((uintptr_t)a & 1) || ((uintptr_t)u & 3))
		return -EINVAL;

	vq->gm = gm;
	vq->size = size;
	vq->desc_gpa = desc;
	vq->avail_gpa = avail;
	vq->used_gpa = used;
	vq->event_idx = features & (1ull << VIRTQ_F_EVENT_IDX);
	vq->indirect = features & (1ull << VIRTQ_F_INDIRECT_DESC);
	vq->desc = d;
	vq->avail = a;
	vq->used = u;
	vq->ready = true;
	return 0;
}

int virtq_start(struct virtq *vq, const struct guest_mem *gm, uint16_t size,
		uint64_t desc, uint64_t avail, uint64_t used,
		uint64_t features)
{
	int ret = virtq_map(vq, gm, size, desc, avail, used, features);

	if (ret)
		return ret;
	/* Start with kicks wanted for the first buffer (§2.7.10.2). */
	ring_store(used_word(vq, USED_FLAGS), 0, __ATOMIC_RELAXED);
	if (vq->event_idx)
		ring_store(avail_event(vq), 0, __ATOMIC_RELAXED);
	guest_mem_mark_dirty(gm, used, VIRTQ_USED_BYTES(size));
	return 0;
}

void virtq_save(const struct virtq *vq, struct virtq_state *st)
{
	st->last_avail_idx = vq->last_avail_idx;
	st->used_idx = vq->used_idx;
	st->signalled_used = vq->signalled_used;
}

int virtq_restore(struct virtq *vq, const struct guest_mem *gm,
		  uint16_t size, uint64_t desc, uint64_t avail, uint64_t used,
		  uint64_t features, const struct virtq_state *st)
{
	int ret = virtq_map(vq, gm, size, desc, avail, used, features);

	if (ret)
		return ret;
	/*
	 * Every chain taken has been pushed (a device pauses only once its
	 * requests completed): the distance between the two indices is at
	 * most one ring's worth, or the state is not one we saved.
	 */
	if ((uint16_t)(st->last_avail_idx - st->used_idx) > size) {
		vq->ready = false;
		return -EINVAL;
	}
	vq->last_avail_idx = st->last_avail_idx;
	vq->used_idx = st->used_idx;
	vq->signalled_used = st->signalled_used;
	return 0;
}

/*
 * Copy descriptor @i of @table into @d, the only read of it: after the
 * compiler barrier nothing may be re-loaded from guest memory, so the
 * values checked are the values used (no double fetch). memcpy also copes
 * with an indirect table the guest placed at an unaligned address.
 */
static void desc_read(const uint8_t *table, uint32_t i, struct virtq_desc *d)
{
	memcpy(d, table + (size_t)i * sizeof(*d), sizeof(*d));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d->addr = le64toh(d->addr);
	d->len = le32toh(d->len);
	d->flags = le16toh(d->flags);
	d->next = le16toh(d->next);
}

/* Where a chain walk stands. */
struct chain_walk {
	const uint8_t *table; /* descriptor table being walked */
	uint32_t entries;     /* descriptors in @table */
	uint32_t steps;       /* descriptors read from @table */
	uint32_t bufs;        /* buffer descriptors in the whole chain */
	bool in_indirect;
	bool seen_write;
};

/* Switch the walk to the indirect table @d describes (§2.7.5.3). */
static enum virtq_error walk_indirect(const struct virtq *vq,
				      struct chain_walk *w,
				      const struct virtq_desc *d)
{
	const uint8_t *table;

	if (!vq->indirect)
		return VIRTQ_ERR_INDIRECT_FEATURE;
	if (w->in_indirect)
		return VIRTQ_ERR_INDIRECT_NESTED;
	if (d->flags & VIRTQ_DESC_F_NEXT)
		return VIRTQ_ERR_INDIRECT_NEXT;
	if (!d->len || d->len % sizeof(struct virtq_desc))
		return VIRTQ_ERR_INDIRECT_LEN;
	if (d->len / sizeof(struct virtq_desc) > vq->size)
		return VIRTQ_ERR_CHAIN_TOO_LONG;
	table = guest_mem_ptr(vq->gm, d->addr, d->len);
	if (!table)
		return VIRTQ_ERR_INDIRECT_ADDR;
	w->table = table;
	w->entries = d->len / sizeof(struct virtq_desc);
	w->steps = 0;
	w->in_indirect = true;
	return VIRTQ_ERR_NONE;
}

/* Check one buffer descriptor and append it to @elem. */
static enum virtq_error walk_buffer(const struct virtq *vq,
				    struct chain_walk *w,
				    struct virtq_elem *elem,
				    const struct virtq_desc *d)
{
	bool write = d->flags & VIRTQ_DESC_F_WRITE;
	struct virtq_seg *seg;
	void *host;

	if (++w->bufs > vq->size)
		return VIRTQ_ERR_CHAIN_TOO_LONG;
	/* Writable buffers follow readable ones (§2.7.4.2). */
	if (!write && w->seen_write)
		return VIRTQ_ERR_ORDER;
	w->seen_write |= write;
	if (!d->len)
		return VIRTQ_ERR_NONE;
	host = guest_mem_ptr(vq->gm, d->addr, d->len);
	if (!host)
		return VIRTQ_ERR_ADDR;
	/* Each length is below 2^32 and so is the sum so far: no overflow. */
	if (elem->out_len + elem->in_len + d->len > UINT32_MAX)
		return VIRTQ_ERR_TOO_BIG;
	if (elem->nr_out + elem->nr_in >= elem->max_segs)
		return VIRTQ_ERR_TOO_MANY_SEGS;
	seg = &elem->segs[elem->nr_out + elem->nr_in];
	seg->addr = host;
	seg->len = d->len;
	if (write) {
		/* The device may write it: a diff snapshot must carry it
		 * (KVM's dirty log sees only the guest's writes). */
		guest_mem_mark_dirty(vq->gm, d->addr, d->len);
		elem->nr_in++;
		elem->in_len += d->len;
	} else {
		elem->nr_out++;
		elem->out_len += d->len;
	}
	return VIRTQ_ERR_NONE;
}

/*
 * Walk the chain starting at elem->head. A table of n entries holds no
 * chain of more than n descriptors, so step n + 1 proves a cycle.
 */
static enum virtq_error chain_walk(const struct virtq *vq,
				   struct virtq_elem *elem)
{
	struct chain_walk w = { .table = vq->desc, .entries = vq->size };
	uint32_t i = elem->head;
	enum virtq_error err;

	for (;;) {
		struct virtq_desc d;

		if (++w.steps > w.entries)
			return VIRTQ_ERR_LOOP;
		desc_read(w.table, i, &d);
		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			/* WRITE is ignored here (§2.7.5.3.2). */
			err = walk_indirect(vq, &w, &d);
			if (err)
				return err;
			i = 0;
			continue;
		}
		err = walk_buffer(vq, &w, elem, &d);
		if (err)
			return err;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= w.entries)
			return VIRTQ_ERR_NEXT_RANGE;
		i = d.next;
	}
	if (!elem->out_len && !elem->in_len)
		return VIRTQ_ERR_ZERO_LEN;
	return VIRTQ_ERR_NONE;
}

static void elem_clear(struct virtq_elem *elem)
{
	elem->nr_out = 0;
	elem->nr_in = 0;
	elem->out_len = 0;
	elem->in_len = 0;
}

static int ring_break(struct virtq *vq, enum virtq_error err)
{
	vq->broken = true;
	vq->last_error = err;
	return -EIO;
}

int virtq_pop(struct virtq *vq, struct virtq_elem *elem)
{
	uint16_t avail_idx, pending, head;
	enum virtq_error err;

	if (!vq->ready)
		return 0;
	if (vq->broken)
		return -EIO;
	/*
	 * Acquire: pairs with the driver's barrier between writing the
	 * descriptors and avail ring entries and increasing avail->idx
	 * (virtio 1.2 §2.7.13 step 4, §2.7.13.3.1). The ring entry and the
	 * descriptors read below cannot be read before this idx.
	 */
	avail_idx = ring_load(&vq->avail[AVAIL_IDX], __ATOMIC_ACQUIRE);
	pending = avail_idx - vq->last_avail_idx;
	if (!pending)
		return 0;
	if (pending > vq->size)
		return ring_break(vq, VIRTQ_ERR_AVAIL_IDX);
	head = ring_load(&vq->avail[AVAIL_RING +
				    (vq->last_avail_idx & (vq->size - 1))],
			 __ATOMIC_RELAXED);
	if (head >= vq->size)
		return ring_break(vq, VIRTQ_ERR_HEAD_RANGE);
	vq->last_avail_idx++;

	elem->head = head;
	elem_clear(elem);
	err = chain_walk(vq, elem);
	vq->last_error = err;
	if (err) {
		/* No partial chain escapes: the caller sees only the head. */
		elem_clear(elem);
		vq->bad_chains++;
		return -EBADMSG;
	}
	vq->pops++;
	return 1;
}

void virtq_push(struct virtq *vq, uint16_t head, uint32_t written)
{
	uint32_t *elem;

	if (!vq->ready)
		return;
	elem = (uint32_t *)(vq->used + USED_RING + (size_t)USED_ELEM_BYTES *
			    (vq->used_idx & (vq->size - 1)));
	__atomic_store_n(&elem[0], htole32(head), __ATOMIC_RELAXED);
	__atomic_store_n(&elem[1], htole32(written), __ATOMIC_RELAXED);
	vq->used_idx++;
	/*
	 * Release: the entry above is visible before the idx that covers it
	 * (virtio 1.2 §2.7.8.2); pairs with the driver's read barrier after
	 * it reads used->idx and before it reads the entries (§2.7.14).
	 */
	ring_store(used_word(vq, USED_IDX), vq->used_idx, __ATOMIC_RELEASE);
	used_dirty(vq);
	vq->pushes++;
}

bool virtq_need_notify(struct virtq *vq)
{
	uint16_t old, new, event;

	if (!vq->ready)
		return false;
	/*
	 * Full barrier: our used->idx store must be visible before we read
	 * avail->flags or used_event. Pairs with the driver's barrier between
	 * re-enabling interrupts (clearing NO_INTERRUPT or writing
	 * used_event) and re-reading used->idx (virtio 1.2 §2.7.14): one of
	 * the two sides is then sure to see the other's update.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	old = vq->signalled_used;
	new = vq->used_idx;
	vq->signalled_used = new;
	if (old == new)
		return false;
	if (!vq->event_idx)
		return !(ring_load(&vq->avail[AVAIL_FLAGS], __ATOMIC_RELAXED) &
			 VIRTQ_AVAIL_F_NO_INTERRUPT);
	event = ring_load(&vq->avail[AVAIL_RING + vq->size], __ATOMIC_RELAXED);
	/*
	 * Notify when one of the entries written since the last call, used
	 * indices old .. new - 1, was used_event (§2.7.7.2). In 16-bit
	 * arithmetic new - event - 1 < new - old holds exactly then, across
	 * the 65536 wrap too.
	 */
	return (uint16_t)(new - event - 1) < (uint16_t)(new - old);
}

void virtq_notify_disable(struct virtq *vq)
{
	if (!vq->ready)
		return;
	used_dirty(vq);
	/*
	 * With EVENT_IDX used->flags must stay 0 (§2.7.10.2): avail_event
	 * one behind the next index to consume instead. The driver kicks
	 * when an index it publishes equals avail_event (§2.7.10.1), and
	 * every index it can publish from here is past that one, until
	 * 65535 more: no kick at all while the thread drains or polls.
	 * virtq_notify_enable() sets it back and looks again.
	 */
	if (vq->event_idx)
		ring_store(avail_event(vq), (uint16_t)(vq->last_avail_idx - 1),
			   __ATOMIC_RELAXED);
	else
		ring_store(used_word(vq, USED_FLAGS), VIRTQ_USED_F_NO_NOTIFY,
			   __ATOMIC_RELAXED);
}

bool virtq_notify_enable(struct virtq *vq)
{
	if (!vq->ready)
		return false;
	used_dirty(vq);
	if (vq->event_idx)
		ring_store(avail_event(vq), vq->last_avail_idx,
			   __ATOMIC_RELAXED);
	else
		ring_store(used_word(vq, USED_FLAGS), 0, __ATOMIC_RELAXED);
	/*
	 * Full barrier: the store above must be visible before avail->idx is
	 * read again. Pairs with the driver's barrier between increasing
	 * avail->idx and reading used->flags or avail_event (virtio 1.2
	 * §2.7.13.4.1): either it sees kicks enabled or we see its buffer.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return virtq_has_avail(vq);
}

bool virtq_has_avail(struct virtq *vq)
{
	if (!vq->ready || vq->broken)
		return false;
	/* A peek only: virtq_pop() loads the idx again with acquire. */
	return ring_load(&vq->avail[AVAIL_IDX], __ATOMIC_RELAXED) !=
	       vq->last_avail_idx;
}
