/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The write plan of the crash test and its verifier. A seed names a stream
 * of batches of writes (random sectors and lengths, buffers at random byte
 * offsets, split into two segments at a random byte) and the content of
 * every byte each write carries, so the killed writer and the verifying
 * parent derive the same writes without passing data. Writes in one batch
 * never share a 4 KiB block (they run concurrently and, through O_DIRECT's
 * read-modify-write, would race each other: see struct disk).
 */
#ifndef MICROVM_CRASH_PLAN_H
#define MICROVM_CRASH_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PLAN_SECTOR 512u
#define PLAN_BLOCK 4096u
#define PLAN_BATCH_MAX 8u
#define PLAN_MAX_SECTORS 24u /* 12 KiB per write */
#define PLAN_BUF_OFF_MAX 4095u
#define PLAN_INIT_WRITE UINT64_MAX /* "write" that made the initial image */

struct plan_write {
	uint64_t j;      /* index in the whole stream */
	uint64_t sector;
	uint32_t nsec;
	uint32_t buf_off; /* byte offset of the data in its guest buffer */
	uint32_t split;   /* first segment's length; == len: one segment */
};

struct plan {
	uint64_t seed;
	uint64_t rng;
	uint64_t next_j;
	uint64_t disk_sectors;
};

static inline uint64_t plan_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t plan_rand(struct plan *p)
{
	p->rng += 0x9e3779b97f4a7c15ull;
	return plan_mix(p->rng);
}

static inline void plan_init(struct plan *p, uint64_t seed,
			     uint64_t disk_bytes)
{
	p->seed = seed;
	p->rng = plan_mix(seed ^ 0x6372617368ull);
	p->next_j = 0;
	p->disk_sectors = disk_bytes / PLAN_SECTOR;
}

/* The byte that write @j puts at image offset @off. */
static inline uint8_t plan_byte(uint64_t seed, uint64_t j, uint64_t off)
{
	return (uint8_t)plan_mix(seed ^ plan_mix(j ^ (off << 20) ^ off));
}

static inline bool plan_blocks_meet(const struct plan_write *a,
				    const struct plan_write *b)
{
	uint64_t a0 = a->sector * PLAN_SECTOR / PLAN_BLOCK;
	uint64_t a1 = ((a->sector + a->nsec) * PLAN_SECTOR - 1) / PLAN_BLOCK;
	uint64_t b0 = b->sector * PLAN_SECTOR / PLAN_BLOCK;
	uint64_t b1 = ((b->sector + b->nsec) * PLAN_SECTOR - 1) / PLAN_BLOCK;

	return a0 <= b1 && b0 <= a1;
}

/*
 * The next batch: 1 to PLAN_BATCH_MAX writes, about a third of them with
 * aligned buffers and sector-multiple segments (the straight path), the
 * others with a buffer at any byte and a split at any byte (bounce).
 * Return: the number of writes put in @w.
 */
static inline unsigned int plan_batch(struct plan *p, struct plan_write *w)
{
	unsigned int want = 1 + (unsigned int)(plan_rand(p) % PLAN_BATCH_MAX);
	unsigned int n = 0, tries, i;

	for (tries = 0; n < want && tries < 4 * PLAN_BATCH_MAX; tries++) {
		struct plan_write c;
		uint32_t len;
		bool clash = false;

		c.nsec = 1 + (uint32_t)(plan_rand(p) % PLAN_MAX_SECTORS);
		c.sector = plan_rand(p) % (p->disk_sectors - c.nsec + 1);
		len = c.nsec * PLAN_SECTOR;
		if (plan_rand(p) % 3 == 0) {
			c.buf_off = 0;
			c.split = PLAN_SECTOR *
				  (1 + (uint32_t)(plan_rand(p) % c.nsec));
		} else {
			c.buf_off = (uint32_t)(plan_rand(p) %
					       (PLAN_BUF_OFF_MAX + 1));
			c.split = 1 + (uint32_t)(plan_rand(p) % len);
		}
		for (i = 0; i < n && !clash; i++)
			clash = plan_blocks_meet(&c, &w[i]);
		if (clash)
			continue;
		c.j = p->next_j++;
		w[n++] = c;
	}
	return n;
}

/* Apply write @w to the image model @img. */
static inline void plan_apply(uint64_t seed, const struct plan_write *w,
			      uint8_t *img)
{
	uint64_t off = w->sector * PLAN_SECTOR, end = off + w->nsec * 512ull;

	for (; off < end; off++)
		img[off] = plan_byte(seed, w->j, off);
}

struct plan_verdict {
	uint64_t bad;         /* bytes holding no allowed value */
	uint64_t first_bad;   /* offset of the first, when bad */
	uint8_t want, got;    /* flushed value and content there */
	uint64_t later;       /* bytes holding an unflushed later write */
};

/*
 * plan_verify() - does @img (@bytes long) hold every byte that the first
 * @acked writes of the stream of @seed left, allowing for the writes
 * [@acked, @issued) over it (each byte: its last flushed value or a value
 * a later write carried there, nothing else)?
 * @model: scratch of @bytes bytes.
 * @later: scratch of @bytes bytes.
 */
static inline void plan_verify(uint64_t seed, uint64_t bytes, uint64_t acked,
			       uint64_t issued, const uint8_t *img,
			       uint8_t *model, uint8_t *later,
			       struct plan_verdict *v)
{
	struct plan_write w[PLAN_BATCH_MAX];
	struct plan p;
	uint64_t off, end;
	unsigned int n, i;

	memset(v, 0, sizeof(*v));
	for (off = 0; off < bytes; off++)
		model[off] = plan_byte(seed, PLAN_INIT_WRITE, off);
	memset(later, 0, bytes);
	plan_init(&p, seed, bytes);
	while (p.next_j < issued) {
		n = plan_batch(&p, w);
		for (i = 0; i < n && w[i].j < issued; i++) {
			if (w[i].j < acked) {
				plan_apply(seed, &w[i], model);
				continue;
			}
			off = w[i].sector * PLAN_SECTOR;
			end = off + w[i].nsec * (uint64_t)PLAN_SECTOR;
			for (; off < end; off++)
				if (img[off] == plan_byte(seed, w[i].j, off))
					later[off] = 1;
		}
	}
	for (off = 0; off < bytes; off++) {
		if (img[off] == model[off])
			continue;
		if (later[off]) {
			v->later++;
			continue;
		}
		if (!v->bad++) {
			v->first_bad = off;
			v->want = model[off];
			v->got = img[off];
		}
	}
}

#endif
