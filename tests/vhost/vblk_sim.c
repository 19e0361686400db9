// SPDX-License-Identifier: Apache-2.0
/*
 * The simulated VMM and guest driver of the vhost-blk module tests
 * (vhost_blk_selftest, vhost_blk_stress): "guest RAM", split rings, kicks
 * and calls through eventfds, request helpers. See vblk_sim.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/vhost.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "vblk_sim.h"

uint8_t *ram;
int failures;
/* struct vhost_blk_backend.poll_us of every start (t_hostile runs both). */
uint32_t poll_us;
const char *phase = "setup";
const char *prog = "vblk";

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	fprintf(stderr, "FAIL [%s]: ", phase);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double t_start;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A progress line, with the seconds since the start. */
void ok(const char *fmt, ...)
{
	va_list ap;

	printf("[%7.2f] ", now_s() - t_start);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

uint64_t gpa(const void *p)
{
	return GPA_BASE + (uint64_t)((const uint8_t *)p - ram);
}

uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* ---- the simulated driver ---- */


uint8_t *slot_area(unsigned int qi, unsigned int s)
{
	return ram + SLOT_AREA + (qi * SLOTS + s) * SLOT_BYTES;
}

uint8_t *slot_hdr(unsigned int qi, unsigned int s)
{
	return slot_area(qi, s);
}

uint8_t *slot_status(unsigned int qi, unsigned int s)
{
	return slot_area(qi, s) + 0x40;
}

uint8_t *slot_data(unsigned int qi, unsigned int s)
{
	return slot_area(qi, s) + 0x1000;
}

int dev_open(struct dev *d, unsigned int nq, uint64_t features)
{
	struct vhost_memory *mem;
	uint64_t offered;
	uint32_t version = 0;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->fd = open("/dev/vhost-blk", O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	d->nq = nq;
	if (ioctl(d->fd, VHOST_BLK_GET_VERSION, &version) ||
	    version != VHOST_BLK_API_VERSION)
		die("VHOST_BLK_GET_VERSION");
	if (ioctl(d->fd, VHOST_SET_OWNER))
		die("VHOST_SET_OWNER");
	if (ioctl(d->fd, VHOST_GET_FEATURES, &offered))
		die("VHOST_GET_FEATURES");
	check((offered & features) == features,
	      "features %#llx not all offered (%#llx)",
	      (unsigned long long)features, (unsigned long long)offered);
	d->features = features & offered;
	if (ioctl(d->fd, VHOST_SET_FEATURES, &d->features))
		die("VHOST_SET_FEATURES");
	mem = calloc(1, sizeof(*mem) + sizeof(mem->regions[0]));
	mem->nregions = 1;
	mem->regions[0].guest_phys_addr = GPA_BASE;
	mem->regions[0].memory_size = RAM_BYTES;
	mem->regions[0].userspace_addr = (uintptr_t)ram;
	if (ioctl(d->fd, VHOST_SET_MEM_TABLE, mem))
		die("VHOST_SET_MEM_TABLE");
	free(mem);
	for (i = 0; i < nq; i++) {
		struct queue *q = &d->q[i];
		uint8_t *r = ram + i * RING_BYTES;
		struct vhost_vring_state num = { i, QSZ }, base = { i, 0 };
		struct vhost_vring_addr addr = {
			.index = i,
			.desc_user_addr = (uintptr_t)r,
			.avail_user_addr = (uintptr_t)(r + 0x1000),
			.used_user_addr = (uintptr_t)(r + 0x2000),
		};
		struct vhost_vring_file kick, call;

		memset(r, 0, RING_BYTES);
		q->desc = (void *)r;
		q->avail = (void *)(r + 0x1000);
		q->used = (void *)(r + 0x2000);
		q->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		q->call = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (q->kick < 0 || q->call < 0)
			die("eventfd");
		kick = (struct vhost_vring_file){ i, q->kick };
		call = (struct vhost_vring_file){ i, q->call };
		if (ioctl(d->fd, VHOST_SET_VRING_NUM, &num) ||
		    ioctl(d->fd, VHOST_SET_VRING_ADDR, &addr) ||
		    ioctl(d->fd, VHOST_SET_VRING_BASE, &base) ||
		    ioctl(d->fd, VHOST_SET_VRING_KICK, &kick) ||
		    ioctl(d->fd, VHOST_SET_VRING_CALL, &call))
			die("vring setup");
	}
	return 0;
}

int dev_backend(struct dev *d, int fd, uint32_t flags,
		uint32_t workers)
{
	struct vhost_blk_backend be = {
		.fd = fd,
		.flags = flags,
		.capacity = CAP,
		.num_queues = d->nq,
		.num_workers = workers,
		.poll_us = poll_us,
	};

	memcpy(be.serial, SERIAL, strlen(SERIAL));
	return ioctl(d->fd, VHOST_BLK_SET_BACKEND, &be) ? -errno : 0;
}

void dev_close(struct dev *d)
{
	unsigned int i;

	close(d->fd);
	for (i = 0; i < d->nq; i++) {
		close(d->q[i].kick);
		close(d->q[i].call);
	}
}

/* Write a chain of @n segments (direct, or one indirect table). */
uint16_t fill(struct dev *d, unsigned int qi, unsigned int s,
	      const struct seg *segs, unsigned int n, bool indirect)
{
	struct queue *q = &d->q[qi];
	uint16_t head = s * SLOT_DESCS;
	struct vring_desc *tab = indirect ? (void *)(slot_area(qi, s) + 0x80) :
					    &q->desc[head];
	uint16_t base = indirect ? 0 : head;
	unsigned int i;

	for (i = 0; i < n; i++) {
		tab[i].addr = segs[i].gpa;
		tab[i].len = segs[i].len;
		tab[i].flags = (segs[i].w ? VRING_DESC_F_WRITE : 0) |
			       (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		tab[i].next = base + i + 1;
	}
	if (indirect) {
		q->desc[head].addr = gpa(tab);
		q->desc[head].len = n * sizeof(*tab);
		q->desc[head].flags = VRING_DESC_F_INDIRECT;
		q->desc[head].next = 0;
	}
	return head;
}

void kick(struct dev *d, unsigned int qi)
{
	uint64_t one = 1;

	if (write(d->q[qi].kick, &one, sizeof(one)) != sizeof(one))
		die("kick");
}

/* Make the chain at @head available to the device, no kick. */
void publish_quiet(struct dev *d, unsigned int qi, uint16_t head)
{
	struct queue *q = &d->q[qi];
	unsigned int s = head / SLOT_DESCS;

	q->slot[s].busy = true;
	q->slot[s].done = false;
	q->avail->ring[q->avail_idx % QSZ] = head;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	q->avail->idx = ++q->avail_idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Make the chain at @head available to the device, then kick. */
void publish(struct dev *d, unsigned int qi, uint16_t head)
{
	publish_quiet(d, qi, head);
	kick(d, qi);
}

void post(struct dev *d, unsigned int qi, unsigned int s,
	  const struct seg *segs, unsigned int n, bool indirect)
{
	publish(d, qi, fill(d, qi, s, segs, n, indirect));
}

/* Collect used entries; returns how many. */
unsigned int reap(struct dev *d, unsigned int qi)
{
	struct queue *q = &d->q[qi];
	unsigned int n = 0;
	uint64_t v;

	if (read(q->call, &v, sizeof(v)) < 0 && errno != EAGAIN)
		die("call eventfd");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (q->last_used != *(volatile uint16_t *)&q->used->idx) {
		struct vring_used_elem *e = &q->used->ring[q->last_used % QSZ];
		unsigned int s = e->id / SLOT_DESCS;

		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		check(e->id % SLOT_DESCS == 0 && s < SLOTS && q->slot[s].busy,
		      "queue %u: used id %u not in flight", qi, e->id);
		if (s < SLOTS) {
			q->slot[s].busy = false;
			q->slot[s].done = true;
			q->slot[s].used_len = e->len;
		}
		q->last_used++;
		n++;
		/* EVENT_IDX: a signal for the next used entry, then look
		 * again for one that came before the device saw it. */
		q->avail->ring[QSZ] = q->last_used;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	return n;
}

/* Wait until slot @s of queue @qi is done; false on timeout. */
bool wait_slot(struct dev *d, unsigned int qi, unsigned int s, int ms)
{
	struct pollfd p = { .fd = d->q[qi].call, .events = POLLIN };

	for (;;) {
		reap(d, qi);
		if (d->q[qi].slot[s].done)
			return true;
		if (poll(&p, 1, ms) <= 0)
			return false;
	}
}

/* Wait for every busy slot of every queue; false on timeout. */
bool wait_all(struct dev *d, int ms)
{
	unsigned int qi, s;

	for (qi = 0; qi < d->nq; qi++)
		for (s = 0; s < SLOTS; s++)
			if (d->q[qi].slot[s].busy && !wait_slot(d, qi, s, ms))
				return false;
	return true;
}

void put_hdr(uint8_t *h, uint32_t type, uint64_t sector)
{
	struct virtio_blk_outhdr o = { .type = type, .sector = sector };

	memcpy(h, &o, sizeof(o));
}

/* The usual 3-descriptor request on slot @s; the data is slot_data(). */
uint16_t fill_rw(struct dev *d, unsigned int qi, unsigned int s,
		 uint32_t type, uint64_t sector, uint32_t len)
{
	struct seg segs[3];
	unsigned int n = 0;

	put_hdr(slot_hdr(qi, s), type, sector);
	*slot_status(qi, s) = 0xff;
	segs[n++] = (struct seg){ gpa(slot_hdr(qi, s)), 16, false };
	if (len)
		segs[n++] = (struct seg){ gpa(slot_data(qi, s)), len,
					  type != VIRTIO_BLK_T_OUT };
	segs[n++] = (struct seg){ gpa(slot_status(qi, s)), 1, true };
	return fill(d, qi, s, segs, n, false);
}

void post_rw(struct dev *d, unsigned int qi, unsigned int s,
	     uint32_t type, uint64_t sector, uint32_t len)
{
	publish(d, qi, fill_rw(d, qi, s, type, sector, len));
}

/* One request, waited for; returns the status byte (-1: no completion). */
int sync_req(struct dev *d, unsigned int qi, const struct seg *segs,
	     unsigned int n, bool indirect, uint32_t *used_len)
{
	post(d, qi, 0, segs, n, indirect);
	if (!wait_slot(d, qi, 0, TIMEOUT_MS))
		return -1;
	if (used_len)
		*used_len = d->q[qi].slot[0].used_len;
	return *slot_status(qi, 0);
}

int sync_rw(struct dev *d, unsigned int qi, uint32_t type,
	    uint64_t sector, uint32_t len)
{
	post_rw(d, qi, 0, type, sector, len);
	if (!wait_slot(d, qi, 0, TIMEOUT_MS))
		return -1;
	return *slot_status(qi, 0);
}


void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t v = rnd();

		memcpy(p + i, &v, 8);
	}
}

/*
 * Our kernel workers ("vblk-PID.N"), found by their /proc/TID/stat.
 * Return: how many there are (-1 if /proc cannot be read); @ticks, if not
 * NULL, gets their CPU time (utime + stime, clock ticks) added.
 */
int scan_workers(pid_t pid, long *ticks, pid_t *tids, int max)
{
	char want[32], path[300], buf[512];
	struct dirent *de;
	int n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -1;
	snprintf(want, sizeof(want), "(vblk-%d.", (int)pid);
	while ((de = readdir(dir))) {
		unsigned long ut, st;
		char *p;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* pid (comm) state ... utime stime: fields 14 and 15. */
		if (fgets(buf, sizeof(buf), f) && (p = strchr(buf, '(')) &&
		    !strncmp(p, want, strlen(want))) {
			if (tids && n < max)
				tids[n] = (pid_t)atoi(de->d_name);
			n++;
			if (ticks && (p = strrchr(p, ')')) &&
			    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
				   "%*u %*u %lu %lu", &ut, &st) == 2)
				*ticks += (long)(ut + st);
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

int count_workers(pid_t pid)
{
	return scan_workers(pid, NULL, NULL, 0);
}

int open_backing(const char *path, bool *direct)
{
	int fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);

	*direct = fd >= 0;
	if (fd < 0 && errno == EINVAL) /* tmpfs: no O_DIRECT before 6.6 */
		fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(path);
	return fd;
}
