// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for virtio-blk end to end: the real device (blk.c,
 * blk_queue.c with its I/O thread, blk_req.c, the virtq) over the disk
 * core (disk_queue.c, disk_req.c's planner) and an in-memory engine that
 * stands in for the kernel. The engine can pretend the image needs
 * O_DIRECT alignment, so misaligned requests go through the bounce and
 * read-modify-write planner; it checks that every call it is handed is
 * aligned then, stays inside the image, and it injects short transfers,
 * EINTR and errors as the input says. A shadow model of the image
 * follows every request: each chain comes back exactly once, statuses
 * are what the request deserves, reads return the model's bytes, and the
 * image differs from the model nowhere (refused or failed requests never
 * touch it; a read-modify-write never spills outside its request).
 * abort() on any broken promise; a request that never completes is a hang
 * and aborts after FUZZ_WAIT_MS.
 *
 * Input: FUZZ_HEADER bytes (see fuzz_setup()), then FUZZ_OP_SIZE-byte
 * requests (see fuzz_build()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/evloop.h"
#include "util/le.h"
#include "virtio/blk.h"
#include "virtio/blk_priv.h"
#include "virtio/disk_engine.h"

#include "fuzz_blk_engine.h"

#define FUZZ_RAM_SIZE 0x100000u
#define FUZZ_RING_GPA 0x0ull      /* desc, avail, used of up to 256 */
#define FUZZ_BUF_GPA 0x10000ull   /* headers, data, statuses, bump-allocated */
#define FUZZ_HEADER 6
#define FUZZ_OP_SIZE 12
#define FUZZ_MAX_REQS 64
#define FUZZ_BATCH_MAX 16
#define FUZZ_WAIT_MS 5000
#define FUZZ_SERIAL "fuzz-serial-0123"
#define SECTOR 512u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the driver and the model ---- */

enum fuzz_kind { K_IN, K_OUT, K_FLUSH, K_GET_ID, K_DISCARD, K_WZ, K_TYPE,
		 K_NO_STATUS };
enum { EXPECT_OK, EXPECT_FAIL }; /* a faulted request may fail either way */

struct fuzz_req {
	enum fuzz_kind kind;
	uint16_t head;
	uint64_t pos, len;   /* disk bytes the request covers */
	uint64_t data_gpa;   /* the data area (IN/OUT/GET_ID) */
	uint64_t data_len;
	uint64_t status_gpa;
	int expect;          /* EXPECT_*: what the model demands */
	bool done;
};

struct fuzz_drv {
	uint8_t *ram;
	struct guest_mem gm;
	struct virtio_dev vdev;
	struct blk_dev *b;
	uint16_t qsize;
	uint16_t avail_idx, used_seen;
	uint64_t bump;       /* next free buffer gpa */
	uint64_t features;
	uint8_t model[FUZZ_DISK_MAX];
	uint8_t known[FUZZ_DISK_MAX]; /* 1: model[i] is what the image holds */
	struct fuzz_req reqs[FUZZ_BATCH_MAX];
	unsigned int nr_reqs;
	unsigned int ndesc;  /* descriptors used in this batch */
};

static struct fuzz_drv drv;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint8_t *fuzz_host(uint64_t gpa)
{
	return drv.ram + gpa;
}

static void fuzz_put(uint64_t gpa, uint64_t v, unsigned int n)
{
	le_put(fuzz_host(gpa), n, v);
}

static uint64_t fuzz_get(uint64_t gpa, unsigned int n)
{
	return le_get(fuzz_host(gpa), n);
}

static uint64_t fuzz_avail_gpa(void)
{
	return FUZZ_RING_GPA + 16ull * drv.qsize;
}

static uint64_t fuzz_used_gpa(void)
{
	return (fuzz_avail_gpa() + 6 + 2ull * drv.qsize + 3) & ~3ull;
}

/* Guest buffer of @len bytes, @mis bytes past an 8-byte boundary. */
static uint64_t fuzz_alloc(uint64_t len, unsigned int mis)
{
	uint64_t at = ((drv.bump + 7) & ~7ull) + mis;

	if (at > FUZZ_RAM_SIZE || len > FUZZ_RAM_SIZE - at)
		return 0;
	drv.bump = at + len;
	return at;
}

/* Append a descriptor to the chain being built; false when out of room. */
static bool fuzz_desc(uint64_t addr, uint32_t len, bool write, bool more)
{
	uint64_t d = FUZZ_RING_GPA + 16ull * drv.ndesc;

	if (drv.ndesc >= drv.qsize)
		return false;
	fuzz_put(d, addr, 8);
	fuzz_put(d + 8, len, 4);
	fuzz_put(d + 12, (write ? VIRTQ_DESC_F_WRITE : 0) |
			 (more ? VIRTQ_DESC_F_NEXT : 0), 2);
	fuzz_put(d + 14, drv.ndesc + 1u, 2);
	drv.ndesc++;
	return true;
}

/* The model's verdict on a request the driver built. */
static int fuzz_expect(const struct fuzz_req *r, bool len_ok, uint32_t flags)
{
	uint64_t cap = disk.size / SECTOR, sect = r->pos / SECTOR;
	uint64_t n = r->len / SECTOR;
	bool wtype = r->kind == K_OUT || r->kind == K_DISCARD ||
		     r->kind == K_WZ;

	switch (r->kind) {
	case K_TYPE:
		return EXPECT_FAIL;
	case K_FLUSH:
	case K_GET_ID:
		return EXPECT_OK;
	case K_DISCARD:
	case K_WZ:
		if (!(drv.features & (1ull << (r->kind == K_DISCARD ?
					       VIRTIO_BLK_F_DISCARD :
					       VIRTIO_BLK_F_WRITE_ZEROES))))
			return EXPECT_FAIL;
		if (flags & ~(r->kind == K_WZ ? VIRTIO_BLK_WZ_F_UNMAP : 0u))
			return EXPECT_FAIL;
		break;
	default:
		if (!len_ok)
			return EXPECT_FAIL;
		break;
	}
	if (sect > cap || n > cap - sect)
		return EXPECT_FAIL;
	if (wtype && disk.readonly)
		return EXPECT_FAIL;
	return EXPECT_OK;
}

FUZZ_HARNESS static void fuzz_fill(uint64_t gpa, uint64_t len, uint8_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		fuzz_host(gpa)[i] = (uint8_t)(i * 31 + seed * 7 + 1);
}

/*
 * One request from FUZZ_OP_SIZE bytes: [0] kind, [1] layout (bit 0:
 * header in two pieces, bit 1: data in two, bit 2: status in the last
 * data descriptor, bits 4-7: misalignment), [2..5] le32 sector (mod
 * capacity + 2), [6..7] le16 data bytes (bit 15: as is, else a multiple
 * of 512), [8] data seed, [9] data misalignment, [10] segment flags /
 * type, [11] unused.
 * Return: false when the batch has no room for it.
 */
static bool fuzz_build(const uint8_t *op, struct fuzz_req *r)
{
	enum fuzz_kind kind = (enum fuzz_kind)(op[0] % 8);
	uint64_t cap = disk.size / SECTOR, sect, len, hdr, seg = 0;
	uint16_t l16 = (uint16_t)le_get(op + 6, 2);
	unsigned int first = drv.ndesc, mis = op[9] % 64 * 8 + (op[1] >> 4);
	uint32_t type, flags = op[10] & 3;
	bool len_ok, more;

	sect = le_get(op + 2, 4) % (cap + 2);
	len = l16 & 0x8000 ? l16 & 0x7fff : (uint64_t)(l16 % 64) * SECTOR;
	len_ok = len % SECTOR == 0;
	static const uint32_t types[8] = {
		VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT, VIRTIO_BLK_T_FLUSH,
		VIRTIO_BLK_T_GET_ID, VIRTIO_BLK_T_DISCARD,
		VIRTIO_BLK_T_WRITE_ZEROES, 0, VIRTIO_BLK_T_IN,
	};
	type = kind == K_TYPE ? 0x20u + op[10] : types[kind];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->head = (uint16_t)first;
	hdr = fuzz_alloc(VIRTIO_BLK_HDR_BYTES, op[1] & 1);
	r->status_gpa = fuzz_alloc(1, 0);
	if (!hdr || !r->status_gpa)
		return false;
	fuzz_put(hdr, type, 4);
	fuzz_put(hdr + 4, 0, 4);
	fuzz_put(hdr + 8, sect, 8);
	fuzz_put(r->status_gpa, 0xee, 1);
	if (kind == K_DISCARD || kind == K_WZ) {
		seg = fuzz_alloc(VIRTIO_BLK_DWZ_BYTES, 0);
		if (!seg)
			return false;
		fuzz_put(seg, sect, 8);
		fuzz_put(seg + 8, len / SECTOR, 4);
		fuzz_put(seg + 12, flags == 2 ? 4 : flags, 4);
		len = len / SECTOR * SECTOR;
	} else if (kind == K_IN || kind == K_OUT || kind == K_GET_ID ||
		   kind == K_NO_STATUS) {
		r->data_len = len;
		r->data_gpa = fuzz_alloc(len + 1, mis);
		if (!r->data_gpa)
			return false;
		fuzz_fill(r->data_gpa, len, op[8]);
	}
	r->pos = sect * SECTOR;
	r->len = kind == K_IN || kind == K_OUT || kind == K_DISCARD ||
		 kind == K_WZ ? len : 0;
	/* Header, in one or two readable pieces. */
	if (op[1] & 1) {
		if (!fuzz_desc(hdr, 8, false, true) ||
		    !fuzz_desc(hdr + 8, 8, false, true))
			return false;
	} else if (!fuzz_desc(hdr, 16, false, true)) {
		return false;
	}
	if (seg && !fuzz_desc(seg, VIRTIO_BLK_DWZ_BYTES, false, true))
		return false;
	if (r->data_len) {
		/* NO_STATUS: readable data and nothing writable at all. */
		bool w = kind != K_OUT && kind != K_NO_STATUS;
		uint64_t a = r->data_len / 2, b;

		if (!(op[1] & 2) || a == 0)
			a = r->data_len;
		b = r->data_len - a;
		more = kind != K_NO_STATUS || b;
		if (!fuzz_desc(r->data_gpa, (uint32_t)a, w, more))
			return false;
		if (b && !fuzz_desc(r->data_gpa + a, (uint32_t)b, w,
				    kind != K_NO_STATUS))
			return false;
	}
	if (kind != K_NO_STATUS &&
	    !fuzz_desc(r->status_gpa, 1, true, false))
		return false;
	if (kind == K_NO_STATUS && !r->data_len) /* the chain ends here */
		fuzz_put(FUZZ_RING_GPA + 16ull * (drv.ndesc - 1) + 12, 0, 2);
	if (kind == K_NO_STATUS)
		r->expect = EXPECT_FAIL;
	else
		r->expect = fuzz_expect(r, len_ok, flags == 2 ? 4 : flags);
	return true;
}

/* Does @r conflict with one already in the batch (a write overlaps)? */
static bool fuzz_overlaps(const struct fuzz_req *r)
{
	unsigned int i;

	for (i = 0; i < drv.nr_reqs; i++) {
		const struct fuzz_req *o = &drv.reqs[i];
		bool ow = o->kind != K_IN, rw = r->kind != K_IN;

		if ((ow || rw) && r->len && o->len && r->pos < o->pos + o->len &&
		    o->pos < r->pos + r->len)
			return true;
	}
	return false;
}

FUZZ_HARNESS static void fuzz_mark(uint64_t pos, uint64_t len, bool known)
{
	memset(drv.known + pos, known, len);
}

/* One completed request against the model. */
FUZZ_HARNESS static void fuzz_check_req(struct fuzz_req *r, uint32_t written)
{
	uint8_t st = (uint8_t)fuzz_get(r->status_gpa, 1);
	bool faulted = eng.faulted[r->head];
	uint64_t i;

	if (r->done)
		abort(); /* completed twice */
	r->done = true;
	if (r->kind == K_NO_STATUS) {
		if (written != 0 || st != 0xee)
			abort();
		return;
	}
	if (st > VIRTIO_BLK_S_UNSUPP || written < 1)
		abort();
	if (r->kind == K_TYPE && st != VIRTIO_BLK_S_UNSUPP)
		abort();
	if (!faulted && r->expect == EXPECT_OK && st != VIRTIO_BLK_S_OK)
		abort();
	if (r->expect == EXPECT_FAIL && st == VIRTIO_BLK_S_OK)
		abort();
	if (st != VIRTIO_BLK_S_OK) {
		/* A write that failed part way leaves its range unknown. */
		if (faulted && r->kind != K_IN)
			fuzz_mark(r->pos, r->len, false);
		if (written != 1)
			abort();
		return;
	}
	switch (r->kind) {
	case K_IN:
		if (written != r->data_len + 1)
			abort();
		for (i = 0; i < r->len; i++)
			if (drv.known[r->pos + i] &&
			    fuzz_host(r->data_gpa)[i] != drv.model[r->pos + i])
				abort(); /* the read returned other bytes */
		break;
	case K_OUT:
		memcpy(drv.model + r->pos, fuzz_host(r->data_gpa), r->len);
		fuzz_mark(r->pos, r->len, true);
		break;
	case K_GET_ID:
		if (written != (r->data_len < VIRTIO_BLK_ID_BYTES ?
				r->data_len : VIRTIO_BLK_ID_BYTES) + 1 ||
		    strncmp((const char *)fuzz_host(r->data_gpa), FUZZ_SERIAL,
			    written - 1))
			abort();
		break;
	case K_DISCARD:
		fuzz_mark(r->pos, r->len, false);
		break;
	case K_WZ:
		memset(drv.model + r->pos, 0, r->len);
		fuzz_mark(r->pos, r->len, true);
		break;
	default:
		break;
	}
}

/* Publish the batch, kick, wait for every chain, check. */
FUZZ_HARNESS static void fuzz_run_batch(void)
{
	struct virtio_queue *q = &drv.vdev.queues[0];
	uint16_t want = (uint16_t)(drv.avail_idx + drv.nr_reqs), idx;
	uint64_t end, i;
	unsigned int k;

	if (!drv.nr_reqs)
		return;
	for (k = 0; k < drv.nr_reqs; k++)
		fuzz_put(fuzz_avail_gpa() + 4 +
				 2ull * ((drv.avail_idx + k) & (drv.qsize - 1)),
			 drv.reqs[k].head, 2);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* used_event: interrupt at the last one (§2.7.10 with EVENT_IDX). */
	fuzz_put(fuzz_avail_gpa() + 4 + 2ull * drv.qsize,
		 (uint16_t)(want - 1), 2);
	fuzz_put(fuzz_avail_gpa() + 2, want, 2);
	drv.avail_idx = want;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	evfd_signal(q->kick_fd);
	end = now_ms() + FUZZ_WAIT_MS;
	while ((idx = (uint16_t)__atomic_load_n(
			(uint16_t *)fuzz_host(fuzz_used_gpa() + 2),
			__ATOMIC_ACQUIRE)) != want) {
		struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };

		if ((uint16_t)(idx - drv.used_seen) > drv.nr_reqs ||
		    now_ms() > end)
			abort(); /* too many completions, or a hang */
		poll(&pfd, 1, 1);
		evfd_drain(notify_fd);
	}
	for (; drv.used_seen != want; drv.used_seen++) {
		uint64_t e = fuzz_used_gpa() + 4 +
			     8ull * (drv.used_seen & (drv.qsize - 1));
		uint16_t head = (uint16_t)fuzz_get(e, 4);

		for (k = 0; k < drv.nr_reqs; k++)
			if (drv.reqs[k].head == head)
				break;
		if (k == drv.nr_reqs)
			abort(); /* a head nobody submitted */
		fuzz_check_req(&drv.reqs[k], (uint32_t)fuzz_get(e + 4, 4));
	}
	/* The image holds the model wherever the model is sure. */
	for (i = 0; i < disk.size; i++)
		if (drv.known[i] && eng.img[i] != drv.model[i])
			abort();
	drv.nr_reqs = 0;
	drv.ndesc = 0;
	drv.bump = FUZZ_BUF_GPA;
	memset(eng.faulted, 0, sizeof(eng.faulted));
}

static void fuzz_set_status(uint8_t s)
{
	pthread_mutex_lock(&drv.vdev.lock);
	virtio_set_status_locked(&drv.vdev, s);
	pthread_mutex_unlock(&drv.vdev.lock);
}

/*
 * Header: [0] image size choice, [1] bits 0-1 O_DIRECT alignment choice,
 * bit 2 read-only, bit 3 discard, bit 4 write-zeroes, bit 5 cache=unsafe;
 * [2] queue size choice (4 << n % 7), [3] driver features (bit 0
 * EVENT_IDX, bit 1 DISCARD, bit 2 WRITE_ZEROES), [4] a fault every n
 * kernel calls (0: none), [5] which fault.
 */
static int fuzz_setup(const uint8_t *h)
{
	static const uint32_t sizes[4] = { 0x10000, FUZZ_DISK_MAX, 0x10200,
					   0x10064 };
	static const uint32_t aligns[4][2] = {
		{ 0, 0 }, { 512, 512 }, { 4096, 512 }, { 4096, 4096 },
	};
	struct blk_config cfg = { .disk = &disk, .serial = FUZZ_SERIAL,
				  .num_queues = 1 };
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	struct virtio_queue *q;
	uint64_t f;
	unsigned int a = h[1] & 3;

	memset(&disk, 0, sizeof(disk));
	disk.fd = -1;
	disk.size = sizes[h[0] % 4];
	if (a && disk.size % aligns[a][0])
		a = 0; /* disk_open() turns O_DIRECT off for such a size */
	disk.direct = a != 0;
	disk.align = aligns[a][0] ? aligns[a][0] : 1;
	disk.mem_align = aligns[a][1] ? aligns[a][1] : 1;
	disk.phys_block = 4096;
	disk.readonly = h[1] & 4;
	disk.can_discard = h[1] & 8;
	disk.can_write_zeroes = h[1] & 16;
	disk.cache = h[1] & 32 ? DISK_CACHE_UNSAFE : DISK_CACHE_WRITEBACK;
	disk.engine = DISK_ENGINE_SYNC;
	disk.ops = &mem_ops;
	eng.calls = 0;
	eng.last_faulted = false;
	eng.fault_every = h[4] % 16;
	eng.fault_kind = h[5];
	memset(eng.faulted, 0, sizeof(eng.faulted));
	memset(drv.ram, 0, FUZZ_BUF_GPA);
	drv.qsize = (uint16_t)(4u << (h[2] % 7));
	drv.avail_idx = drv.used_seen = 0;
	drv.nr_reqs = drv.ndesc = 0;
	drv.bump = FUZZ_BUF_GPA;
	cfg.queue_size = drv.qsize;
	if (blk_dev_create(&drv.b, &drv.vdev, &cfg, &drv.gm, "vfz"))
		abort();
	drv.vdev.tops = &fuzz_tops;
	q = &drv.vdev.queues[0];
	q->kick_fd = evfd_new();
	if (q->kick_fd < 0)
		abort();
	f = drv.vdev.host_features & ~(1ull << VIRTIO_F_EVENT_IDX |
				       1ull << VIRTIO_BLK_F_DISCARD |
				       1ull << VIRTIO_BLK_F_WRITE_ZEROES);
	if (h[3] & 1)
		f |= 1ull << VIRTIO_F_EVENT_IDX;
	if (h[3] & 2)
		f |= drv.vdev.host_features & 1ull << VIRTIO_BLK_F_DISCARD;
	if (h[3] & 4)
		f |= drv.vdev.host_features & 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	drv.features = f;
	fuzz_set_status(VIRTIO_STATUS_ACKNOWLEDGE);
	pthread_mutex_lock(&drv.vdev.lock);
	virtio_set_status_locked(&drv.vdev, s);
	virtio_set_driver_features_locked(&drv.vdev, 0, (uint32_t)f);
	virtio_set_driver_features_locked(&drv.vdev, 1, (uint32_t)(f >> 32));
	virtio_set_status_locked(&drv.vdev, s | VIRTIO_STATUS_FEATURES_OK);
	q->size = drv.qsize;
	q->desc = FUZZ_RING_GPA;
	q->avail = fuzz_avail_gpa();
	q->used = fuzz_used_gpa();
	q->enabled = true;
	virtio_set_status_locked(&drv.vdev, s | VIRTIO_STATUS_FEATURES_OK |
					  VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&drv.vdev.lock);
	if (virtio_get_status(&drv.vdev) !=
	    (s | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK))
		abort(); /* a well-formed start must work */
	return 0;
}

FUZZ_HARNESS static void fuzz_image_init(void)
{
	uint64_t i;

	for (i = 0; i < disk.size; i++)
		eng.img[i] = (uint8_t)(i * 7 + (i >> 9));
	memcpy(drv.model, eng.img, disk.size);
	memset(drv.known, 1, disk.size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, n;

	if (size < FUZZ_HEADER)
		return 0;
	if (!drv.ram) {
		notify_fd = evfd_new();
		drv.ram = calloc(1, FUZZ_RAM_SIZE);
		if (!drv.ram || notify_fd < 0 ||
		    guest_mem_add_region(&drv.gm, 0, FUZZ_RAM_SIZE, drv.ram))
			abort();
	}
	fuzz_setup(data);
	fuzz_image_init();
	n = (size - FUZZ_HEADER) / FUZZ_OP_SIZE;
	if (n > FUZZ_MAX_REQS)
		n = FUZZ_MAX_REQS;
	for (i = 0; i < n; i++) {
		const uint8_t *op = data + FUZZ_HEADER + i * FUZZ_OP_SIZE;
		unsigned int ndesc = drv.ndesc;
		uint64_t bump = drv.bump;
		struct fuzz_req r;

		if (drv.nr_reqs == FUZZ_BATCH_MAX ||
		    !fuzz_build(op, &r) || fuzz_overlaps(&r)) {
			/* No room or a conflict: run what is there first. */
			drv.ndesc = ndesc;
			drv.bump = bump;
			fuzz_run_batch();
			if (!fuzz_build(op, &r))
				continue;
		}
		drv.reqs[drv.nr_reqs++] = r;
	}
	fuzz_run_batch();
	fuzz_set_status(0); /* reset: the queue thread is joined */
	if (drv.vdev.running)
		abort();
	close(drv.vdev.queues[0].kick_fd);
	drv.vdev.queues[0].kick_fd = -1;
	blk_dev_destroy(drv.b);
	return 0;
}
