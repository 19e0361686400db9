/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulated guest of microvm-bench: a virtio-blk driver that keeps a
 * fixed number of requests in flight on one split virtqueue in fake guest
 * memory, the way Linux's virtio_blk does (one indirect table per request:
 * header, data, status; kick only when the device asks for one; on each
 * interrupt reap the used ring, resubmit, re-arm and re-check). One thread
 * per queue; kicks are eventfd writes, interrupts are reads of an eventfd
 * the bench's fake transport writes.
 *
 *	bdrv_layout(&q, gm_base, qi, qd, bs);   // where its rings live
 *	virtio core: q.desc_gpa, q.avail_gpa, q.used_gpa, size BDRV_QSZ
 *	pthread_create(..., bdrv_run, &q);      // until q.end_ns, then drains
 *	q.done, q.lat (histogram), q.errors
 */
#ifndef MICROVM_BENCH_DRIVER_H
#define MICROVM_BENCH_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Ring size the driver uses (the device's default, README --disk). */
#define BDRV_QSZ 256
/* Deepest queue and largest request a scenario may ask for. */
#define BDRV_MAX_QD 128
#define BDRV_MAX_BS (64u * 1024)
/* Guest memory per queue: rings, headers, tables, then data buffers. */
#define BDRV_REGION (16ull << 20)

/* Latency histogram: 32 linear steps per power of two (about 3%). */
#define BHIST_SUB 32
#define BHIST_BUCKETS (60 * BHIST_SUB)

struct bhist {
	uint64_t n;
	uint64_t count[BHIST_BUCKETS];
};

void bhist_add(struct bhist *h, uint64_t v);
void bhist_merge(struct bhist *to, const struct bhist *from);
/* Value at quantile @q (0..1), in the units added; 0 when empty. */
uint64_t bhist_quantile(const struct bhist *h, double q);

enum bdrv_pattern { BDRV_RANDOM, BDRV_SEQUENTIAL };

struct bdrv_queue {
	/* Set by the caller before bdrv_run(). */
	unsigned int qi;
	unsigned int qd;        /* requests kept in flight, <= BDRV_MAX_QD */
	uint32_t bs;            /* bytes per request, multiple of 512 */
	bool write;
	enum bdrv_pattern pattern;
	bool event_idx;         /* VIRTIO_F_EVENT_IDX negotiated */
	uint64_t disk_bytes;    /* capacity the offsets stay within */
	uint64_t end_ns;        /* CLOCK_MONOTONIC: stop resubmitting */
	uint64_t min_done;      /* ... once this many completed, too */
	int kick_fd;            /* the queue's ioeventfd stand-in */
	int irq_fd;             /* written by the transport's notify() */
	uint8_t *ram;           /* host address of guest physical @gpa_base */
	uint64_t gpa_base;
	/* Guest physical addresses of the rings (bdrv_layout()). */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	/* Results, valid once bdrv_run() returned. */
	uint64_t done;          /* completions seen before stop_ns */
	uint64_t stop_ns;       /* when resubmission stopped */
	uint64_t total;         /* every completion, drain included */
	uint64_t kicks;         /* kick_fd writes */
	uint64_t wakeups;       /* irq_fd reads that returned a count */
	uint64_t errors;        /* bad status, bad length, unknown id */
	bool stalled;           /* no interrupt for BDRV_STALL_MS */
	uint64_t cpu_ns;        /* this driver thread's CPU time */
	struct bhist lat;       /* kick to used, ns, of the @done ones */
	/* Driver state. */
	uint16_t avail_idx, kicked_avail, last_used;
	uint64_t next_off;
	uint64_t rng;
	uint64_t pub_ns[BDRV_MAX_QD];
};

/* A device that leaves the driver waiting this long has stalled. */
#define BDRV_STALL_MS 5000

/**
 * bdrv_layout() - place queue @qi's rings and buffers in guest memory
 * (BDRV_REGION bytes from @gpa_base + @qi * BDRV_REGION) and reset the
 * driver state; the caller sets the rest of @q.
 */
void bdrv_layout(struct bdrv_queue *q, uint8_t *ram, uint64_t gpa_base,
		 unsigned int qi);

/**
 * bdrv_run() - pthread entry: fill the queue, keep it full until end_ns
 * (and min_done completions: a starved run still measures something),
 * then wait for every request to complete. Context: one thread per queue.
 * Return: NULL.
 */
void *bdrv_run(void *arg);

/* CLOCK_MONOTONIC in ns. */
uint64_t bdrv_now_ns(void);

/* Clock @c in ns (a thread's CPU clock, say); 0 if it cannot be read. */
uint64_t bdrv_clock_ns(clockid_t c);

#endif
