/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulated VMM and guest driver shared by the vhost-blk module's test
 * programs (vhost_blk_selftest.c, vhost_blk_stress.c): a buffer of the
 * program's own is "guest RAM" (one VHOST_SET_MEM_TABLE region at
 * GPA_BASE), the split rings live in it, kicks are eventfd writes,
 * completions are read from the call eventfds. Each queue has SLOTS
 * request slots; slot s owns descriptors s * SLOT_DESCS onwards.
 */
#ifndef VBLK_SIM_H
#define VBLK_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/vhost.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "uapi/vhost_blk.h"

#define GPA_BASE 0x40000000ull
#define RAM_BYTES (16u << 20)
#define QSZ 128u
#define MAXQ 8u
#define SLOTS 16u           /* requests in flight per queue */
#define SLOT_DESCS 8u       /* descriptors a request may use */
#define RING_BYTES 0x4000u  /* desc, avail at +0x1000, used at +0x2000 */
#define SLOT_AREA 0x100000u /* per-slot areas start here */
#define SLOT_BYTES 0x12000u /* hdr +0, status +0x40, table +0x80, data +0x1000 */
#define DATA_MAX 0x10000u
#define DISK_BYTES (8u << 20)
#define CAP (DISK_BYTES / 512)
#define SERIAL "vhost-selftest-id"
#define TIMEOUT_MS 5000

#define F(bit) (1ull << (bit))
#define BASE_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_BLK_F_FLUSH) | \
		       F(VIRTIO_BLK_F_MQ) | F(VIRTIO_BLK_F_DISCARD) |     \
		       F(VIRTIO_BLK_F_WRITE_ZEROES))

struct slot {
	bool busy, done;
	uint32_t used_len;
};

struct queue {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t avail_idx, last_used;
	int kick, call;
	struct slot slot[SLOTS];
};

struct dev {
	int fd;
	unsigned int nq;
	uint64_t features;
	struct queue q[MAXQ];
};

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool w;
};

/* "Guest RAM" (RAM_BYTES at GPA_BASE): the caller maps it. */
extern uint8_t *ram;
/* Failed checks so far; the phase named in their messages. */
extern int failures;
extern const char *phase;
/* The program's name in die()'s message. */
extern const char *prog;
/* struct vhost_blk_backend.poll_us of every start. */
extern uint32_t poll_us;
/* now_s() at the program's start, for ok()'s timestamps. */
extern double t_start;
extern uint64_t rnd_state;

void check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double now_s(void);
/* A progress line, with the seconds since t_start. */
void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *what) __attribute__((noreturn));
uint64_t gpa(const void *p);
uint64_t rnd(void);
void fill_random(uint8_t *p, size_t n);

uint8_t *slot_area(unsigned int qi, unsigned int s);
uint8_t *slot_hdr(unsigned int qi, unsigned int s);
uint8_t *slot_status(unsigned int qi, unsigned int s);
uint8_t *slot_data(unsigned int qi, unsigned int s);

/* Open /dev/vhost-blk and set up @nq queues; -errno if it cannot open. */
int dev_open(struct dev *d, unsigned int nq, uint64_t features);
/* VHOST_BLK_SET_BACKEND with @fd (-1 stops); 0 or -errno. */
int dev_backend(struct dev *d, int fd, uint32_t flags, uint32_t workers);
void dev_close(struct dev *d);
/* Write a chain of @n segments (direct, or one indirect table). */
uint16_t fill(struct dev *d, unsigned int qi, unsigned int s,
	      const struct seg *segs, unsigned int n, bool indirect);
void kick(struct dev *d, unsigned int qi);
/* Make the chain at @head available to the device, no kick. */
void publish_quiet(struct dev *d, unsigned int qi, uint16_t head);
void publish(struct dev *d, unsigned int qi, uint16_t head);
void post(struct dev *d, unsigned int qi, unsigned int s,
	  const struct seg *segs, unsigned int n, bool indirect);
/* Collect used entries; returns how many. */
unsigned int reap(struct dev *d, unsigned int qi);
/* Wait until slot @s of queue @qi is done; false on timeout. */
bool wait_slot(struct dev *d, unsigned int qi, unsigned int s, int ms);
/* Wait for every busy slot of every queue; false on timeout. */
bool wait_all(struct dev *d, int ms);
void put_hdr(uint8_t *h, uint32_t type, uint64_t sector);
/* Fill slot @s with the usual 3-descriptor request (no publish). */
uint16_t fill_rw(struct dev *d, unsigned int qi, unsigned int s,
		 uint32_t type, uint64_t sector, uint32_t len);
/* The usual 3-descriptor request on slot @s; the data is slot_data(). */
void post_rw(struct dev *d, unsigned int qi, unsigned int s,
	     uint32_t type, uint64_t sector, uint32_t len);
/* One request, waited for; returns the status byte (-1: no completion). */
int sync_req(struct dev *d, unsigned int qi, const struct seg *segs,
	     unsigned int n, bool indirect, uint32_t *used_len);
int sync_rw(struct dev *d, unsigned int qi, uint32_t type,
	    uint64_t sector, uint32_t len);

/* Our kernel workers ("vblk-PID.N"): how many (-1: no /proc); @ticks, if
 * not NULL, gets their CPU time in clock ticks added; the thread ids of
 * the first @max go to @tids, if not NULL. */
int scan_workers(pid_t pid, long *ticks, pid_t *tids, int max);
int count_workers(pid_t pid);
/* @path opened O_DIRECT where it can be (*direct says), else buffered. */
int open_backing(const char *path, bool *direct);

#endif
