// SPDX-License-Identifier: Apache-2.0
/*
 * The simulated guest driver of microvm-bench (see bench_driver.h): split
 * ring bookkeeping as a driver does it (virtio 1.2 §2.7.13, §2.7.14), with
 * Linux virtio_blk's shape: requests through indirect tables, one kick
 * decision per batch of resubmissions, interrupts re-armed only once the
 * used ring is empty, then re-checked.
 */
#include "bench_driver.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "virtio/blk_req.h"
#include "virtio/virtq.h"

/* Offsets inside a queue's region of guest memory. */
#define OFF_DESC 0x0ull
#define OFF_AVAIL 0x1000ull
#define OFF_USED 0x2000ull
#define OFF_HDR 0x3000ull    /* 16 bytes per slot */
#define OFF_STATUS 0x3800ull /* 16 bytes per slot */
#define OFF_IND 0x4000ull    /* a 3-entry indirect table per slot, 64 B */
#define OFF_DATA 0x10000ull  /* BDRV_MAX_BS per slot */

_Static_assert(OFF_DATA + (uint64_t)BDRV_MAX_QD * BDRV_MAX_BS <= BDRV_REGION,
	       "data buffers fit the queue's region");
_Static_assert(OFF_USED + VIRTQ_USED_BYTES(BDRV_QSZ) + 2 <= OFF_HDR,
	       "used ring and avail_event fit");
_Static_assert(OFF_AVAIL + VIRTQ_AVAIL_BYTES(BDRV_QSZ) + 2 <= OFF_USED,
	       "avail ring and used_event fit");

/* ---- histogram ---- */

static unsigned int bhist_idx(uint64_t v)
{
	unsigned int msb;

	if (v < BHIST_SUB)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v); /* >= 5 */
	return (msb - 4) * BHIST_SUB + (unsigned int)((v >> (msb - 5)) &
						       (BHIST_SUB - 1));
}

/* Middle of bucket @i. */
static uint64_t bhist_value(unsigned int i)
{
	unsigned int msb, sub;

	if (i < BHIST_SUB)
		return i;
	msb = i / BHIST_SUB + 4;
	sub = i % BHIST_SUB;
	return ((uint64_t)(BHIST_SUB + sub) << (msb - 5)) +
	       ((1ull << (msb - 5)) >> 1);
}

void bhist_add(struct bhist *h, uint64_t v)
{
	unsigned int i = bhist_idx(v);

	if (i >= BHIST_BUCKETS)
		i = BHIST_BUCKETS - 1;
	h->count[i]++;
	h->n++;
}

void bhist_merge(struct bhist *to, const struct bhist *from)
{
	unsigned int i;

	for (i = 0; i < BHIST_BUCKETS; i++)
		to->count[i] += from->count[i];
	to->n += from->n;
}

uint64_t bhist_quantile(const struct bhist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int i;

	if (!h->n)
		return 0;
	want = (uint64_t)(q * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (i = 0; i < BHIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen > want)
			return bhist_value(i);
	}
	return bhist_value(BHIST_BUCKETS - 1);
}

/* ---- guest memory as the driver sees it ---- */

uint64_t bdrv_clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bdrv_now_ns(void)
{
	return bdrv_clock_ns(CLOCK_MONOTONIC);
}

static void *gpa(struct bdrv_queue *q, uint64_t off)
{
	return q->ram + off;
}

static void put16(void *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t *avail_word(struct bdrv_queue *q, unsigned int i)
{
	return gpa(q, OFF_AVAIL + 2ull * i);
}

static uint16_t *used_word(struct bdrv_queue *q, unsigned int i)
{
	return gpa(q, OFF_USED + 2ull * i);
}

static uint16_t load16(uint16_t *p, int order)
{
	return le16toh(__atomic_load_n(p, order));
}

static void store16(uint16_t *p, uint16_t v, int order)
{
	__atomic_store_n(p, htole16(v), order);
}

void bdrv_layout(struct bdrv_queue *q, uint8_t *ram, uint64_t gpa_base,
		 unsigned int qi)
{
	q->qi = qi;
	q->ram = ram + (uint64_t)qi * BDRV_REGION;
	q->gpa_base = gpa_base + (uint64_t)qi * BDRV_REGION;
	q->desc_gpa = q->gpa_base + OFF_DESC;
	q->avail_gpa = q->gpa_base + OFF_AVAIL;
	q->used_gpa = q->gpa_base + OFF_USED;
	memset(q->ram, 0, OFF_DATA);
	q->avail_idx = q->kicked_avail = q->last_used = 0;
	q->done = q->total = q->kicks = q->wakeups = q->errors = 0;
	q->stop_ns = 0;
	q->stalled = false;
	memset(&q->lat, 0, sizeof(q->lat));
	q->next_off = 0;
	q->rng = 0x9e3779b97f4a7c15ull * (qi + 1);
}

static uint64_t rng_next(struct bdrv_queue *q)
{
	/* xorshift64*: cheap and good enough to spread offsets. */
	q->rng ^= q->rng >> 12;
	q->rng ^= q->rng << 25;
	q->rng ^= q->rng >> 27;
	return q->rng * 0x2545f4914f6cdd1dull;
}

static uint64_t next_offset(struct bdrv_queue *q)
{
	uint64_t blocks = q->disk_bytes / q->bs, off;

	if (q->pattern == BDRV_RANDOM)
		return (rng_next(q) % blocks) * q->bs;
	off = q->next_off;
	q->next_off = off + q->bs >= blocks * q->bs ? 0 : off + q->bs;
	return off;
}

/*
 * Write request @k (header, indirect table) and put its head, descriptor
 * @k, in the avail ring; it is published with the next avail->idx store.
 */
static void queue_req(struct bdrv_queue *q, unsigned int k)
{
	uint8_t *hdr = gpa(q, OFF_HDR + 16ull * k);
	uint8_t *ind = gpa(q, OFF_IND + 64ull * k);
	uint8_t *d = gpa(q, OFF_DESC + 16ull * k);
	uint64_t st = q->gpa_base + OFF_STATUS + 16ull * k;

	put32(hdr, q->write ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN);
	put32(hdr + 4, 0);
	put64(hdr + 8, next_offset(q) >> BLK_SECTOR_SHIFT);
	*(uint8_t *)gpa(q, OFF_STATUS + 16ull * k) = 0xff;
	/* header, data, status (virtio 1.2 §5.2.6) */
	put64(ind, q->gpa_base + OFF_HDR + 16ull * k);
	put32(ind + 8, 16);
	put16(ind + 12, VIRTQ_DESC_F_NEXT);
	put16(ind + 14, 1);
	put64(ind + 16, q->gpa_base + OFF_DATA + (uint64_t)BDRV_MAX_BS * k);
	put32(ind + 24, q->bs);
	put16(ind + 28, VIRTQ_DESC_F_NEXT |
			(q->write ? 0 : VIRTQ_DESC_F_WRITE));
	put16(ind + 30, 2);
	put64(ind + 32, st);
	put32(ind + 40, 1);
	put16(ind + 44, VIRTQ_DESC_F_WRITE);
	put16(ind + 46, 0);
	put64(d, q->gpa_base + OFF_IND + 64ull * k);
	put32(d + 8, 48);
	put16(d + 12, VIRTQ_DESC_F_INDIRECT);
	put16(d + 14, 0);
	store16(avail_word(q, 2 + (q->avail_idx & (BDRV_QSZ - 1))),
		(uint16_t)k, __ATOMIC_RELAXED);
	q->avail_idx++;
}

/*
 * Publish what was queued (§2.7.13) and kick if the device wants it:
 * vring_need_event() on avail_event with EVENT_IDX (§2.7.10.1), else its
 * NO_NOTIFY flag. Every request published here is timed from here.
 */
static void publish_kick(struct bdrv_queue *q, const unsigned int *ks,
			 unsigned int n)
{
	uint16_t old = q->kicked_avail, new = q->avail_idx;
	bool kick;
	uint64_t t;
	unsigned int i;

	if (!n)
		return;
	/* Release: the entries before the idx that covers them. */
	store16(avail_word(q, 1), new, __ATOMIC_RELEASE);
	/*
	 * Full barrier between the idx store and reading the device's
	 * suppression; pairs with the fence in virtq_notify_enable().
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (q->event_idx) {
		uint16_t ev = load16(used_word(q, 2 + 4 * BDRV_QSZ),
				     __ATOMIC_RELAXED);

		kick = (uint16_t)(new - ev - 1) < (uint16_t)(new - old);
	} else {
		kick = !(load16(used_word(q, 0), __ATOMIC_RELAXED) &
			 VIRTQ_USED_F_NO_NOTIFY);
	}
	q->kicked_avail = new;
	t = bdrv_now_ns();
	for (i = 0; i < n; i++)
		q->pub_ns[ks[i]] = t;
	if (kick) {
		uint64_t one = 1;

		if (write(q->kick_fd, &one, sizeof(one)) == sizeof(one))
			q->kicks++;
	}
}

/* Re-arm interrupts (§2.7.7); then the caller must re-check used->idx. */
static void irq_enable(struct bdrv_queue *q)
{
	if (q->event_idx)
		store16(avail_word(q, 2 + BDRV_QSZ), q->last_used,
			__ATOMIC_RELAXED);
	else
		store16(avail_word(q, 0), 0, __ATOMIC_RELAXED);
	/* Pairs with the fence in virtq_need_notify(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Without EVENT_IDX the driver sets NO_INTERRUPT while it reaps. */
static void irq_disable(struct bdrv_queue *q)
{
	if (!q->event_idx)
		store16(avail_word(q, 0), VIRTQ_AVAIL_F_NO_INTERRUPT,
			__ATOMIC_RELAXED);
}

/* Wait for the irqfd; false on a stall. */
static bool wait_irq(struct bdrv_queue *q)
{
	struct pollfd p = { .fd = q->irq_fd, .events = POLLIN };
	uint64_t v;
	int r;

	do
		r = poll(&p, 1, BDRV_STALL_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return false;
	if (read(q->irq_fd, &v, sizeof(v)) == sizeof(v))
		q->wakeups++;
	return true;
}

/* One completion: check it, time it, resubmit it unless past end_ns. */
static bool reap_one(struct bdrv_queue *q, uint64_t now, unsigned int *ks,
		     unsigned int *nk)
{
	uint8_t *e = gpa(q, OFF_USED + 4 + 8ull * (q->last_used &
						   (BDRV_QSZ - 1)));
	uint32_t id, len;
	uint8_t status;

	memcpy(&id, e, 4);
	memcpy(&len, e + 4, 4);
	id = le32toh(id);
	len = le32toh(len);
	q->last_used++;
	q->total++;
	if (id >= q->qd) {
		q->errors++;
		return false;
	}
	status = *(uint8_t *)gpa(q, OFF_STATUS + 16ull * id);
	if (status != VIRTIO_BLK_S_OK || len != (q->write ? 1 : q->bs + 1))
		q->errors++;
	if (q->stop_ns || (now >= q->end_ns && q->done >= q->min_done)) {
		if (!q->stop_ns)
			q->stop_ns = now;
		return false;
	}
	q->done++;
	bhist_add(&q->lat, now - q->pub_ns[id]);
	queue_req(q, id);
	ks[(*nk)++] = id;
	return true;
}

void *bdrv_run(void *arg)
{
	struct bdrv_queue *q = arg;
	unsigned int ks[BDRV_MAX_QD], nk = 0, k, inflight = q->qd;
	uint16_t used;
	uint64_t now;

	for (k = 0; k < q->qd; k++) {
		queue_req(q, k);
		ks[nk++] = k;
	}
	irq_enable(q);
	publish_kick(q, ks, nk);
	while (inflight) {
		used = load16(used_word(q, 1), __ATOMIC_ACQUIRE);
		if (used == q->last_used) {
			irq_enable(q);
			if (load16(used_word(q, 1), __ATOMIC_ACQUIRE) !=
			    q->last_used)
				continue;
			if (!wait_irq(q)) {
				q->stalled = true;
				break;
			}
			continue;
		}
		irq_disable(q);
		now = bdrv_now_ns();
		nk = 0;
		while (q->last_used != used) {
			if (!reap_one(q, now, ks, &nk))
				inflight--;
		}
		publish_kick(q, ks, nk);
	}
	q->cpu_ns = bdrv_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}
