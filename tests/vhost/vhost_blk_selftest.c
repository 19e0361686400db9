// SPDX-License-Identifier: Apache-2.0
/*
 * Selftest of the vhost-blk kernel module (kernel/vhost-blk) without a
 * VMM: this program is the VMM and the guest driver at once. A buffer of
 * its own is "guest RAM" (one VHOST_SET_MEM_TABLE region at GPA_BASE), the
 * split rings live in it, kicks are eventfd writes, completions are read
 * from the call eventfds.
 *
 * Usage: vhost_blk_selftest [--dir DIR] [--blockdev DEV] [--kill] [--quick]
 *   --dir DIR       where the backing file goes (default: $TMPDIR or /tmp)
 *   --blockdev DEV  also run the data tests on block device DEV (its
 *                   first 8 MiB are overwritten)
 *   --kill          also SIGKILL a child in the middle of its I/O
 *   --fill DIR --uid N  only this: as uid N, fill a file in DIR (a file
 *                   system with root-reserved blocks) by pwrite, then an
 *                   image through the module; both must stop short
 *   --quick         leave out the polling tests (t_poll, and the data
 *                   tests and hostile chains again with the workers
 *                   polling)
 * Exit status: 0 all passed; 1 a check failed; 77 no /dev/vhost-blk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/fs.h>

#include "vblk_sim.h"


/* ---- data integrity ---- */


struct pending {
	uint32_t type;
	uint64_t sector;
	uint32_t len;
};

/*
 * Rounds of random reads and writes on every queue at once, SLOTS in
 * flight per queue, each on its own stripe of the disk that round (the
 * order of overlapping requests in flight is undefined); reads are checked
 * against @model at once, then the whole disk is read back.
 */
static void t_integrity(struct dev *d, uint8_t *model, int rounds)
{
	unsigned int nstripes = d->nq * SLOTS;
	uint64_t stripe = CAP / nstripes;
	struct pending pend[MAXQ][SLOTS];
	unsigned int *perm = calloc(nstripes, sizeof(*perm));
	unsigned int i, qi, s, bad = 0, timeouts = 0;
	int round;

	for (round = 0; round < rounds; round++) {
		for (i = 0; i < nstripes; i++)
			perm[i] = i;
		for (i = nstripes - 1; i > 0; i--) {
			unsigned int j = rnd() % (i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (qi = 0; qi < d->nq; qi++) {
			for (s = 0; s < SLOTS; s++) {
				struct pending *p = &pend[qi][s];
				uint64_t maxn = stripe < DATA_MAX / 512 ?
						stripe : DATA_MAX / 512;
				uint64_t n = 1 + rnd() % maxn;

				p->type = rnd() % 10 < 6 ? VIRTIO_BLK_T_OUT :
							   VIRTIO_BLK_T_IN;
				p->sector = perm[qi * SLOTS + s] * stripe +
					    rnd() % (stripe - n + 1);
				p->len = n * 512;
				if (p->type == VIRTIO_BLK_T_OUT)
					fill_random(slot_data(qi, s), p->len);
				else
					memset(slot_data(qi, s), 0xa5, p->len);
				post_rw(d, qi, s, p->type, p->sector, p->len);
			}
		}
		for (qi = 0; qi < d->nq; qi++) {
			for (s = 0; s < SLOTS; s++) {
				struct pending *p = &pend[qi][s];
				uint8_t *m = model + p->sector * 512;

				if (!wait_slot(d, qi, s, TIMEOUT_MS)) {
					timeouts++;
					continue;
				}
				if (*slot_status(qi, s) != VIRTIO_BLK_S_OK) {
					bad++;
					continue;
				}
				if (p->type == VIRTIO_BLK_T_OUT) {
					memcpy(m, slot_data(qi, s), p->len);
				} else {
					bad += !!memcmp(m, slot_data(qi, s),
							p->len);
					check(d->q[qi].slot[s].used_len ==
					      p->len + 1, "read used.len %u",
					      d->q[qi].slot[s].used_len);
				}
			}
		}
		if (timeouts)
			break;
	}
	check(!timeouts, "%u requests never completed", timeouts);
	check(!bad, "%u requests failed or read wrong data", bad);
	/* Read the whole disk back on queue 0. */
	bad = 0;
	for (i = 0; i < CAP; i += DATA_MAX / 512) {
		if (sync_rw(d, 0, VIRTIO_BLK_T_IN, i, DATA_MAX) !=
		    VIRTIO_BLK_S_OK ||
		    memcmp(slot_data(0, 0), model + (uint64_t)i * 512,
			   DATA_MAX))
			bad++;
	}
	check(!bad, "read-back: %u chunks differ from the model", bad);
	free(perm);
}


/* CPU time, in ms, of our workers; -1 if none is found. */
static long workers_cpu_ms(pid_t pid)
{
	long ticks = 0, hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || scan_workers(pid, &ticks, NULL, 0) <= 0)
		return -1;
	return ticks * 1000 / hz;
}

/* What our workers spend while the driver does nothing for @ms. */
static long idle_cpu_ms(int ms)
{
	long before = workers_cpu_ms(getpid()), after;

	usleep(ms * 1000);
	after = workers_cpu_ms(getpid());
	return before < 0 || after < 0 ? -1 : after - before;
}


/* Data tests on @fd (a file or block device), its current content @model. */
static void t_data(int fd, uint8_t *model, bool direct, const char *what)
{
	static const struct {
		unsigned int nq, workers;
		uint64_t extra;
	} cfg[] = {
		{ 1, 0, 0 },
		{ 4, 0, F(VIRTIO_RING_F_EVENT_IDX) },
		{ 4, 2, F(VIRTIO_RING_F_INDIRECT_DESC) },
	};
	unsigned int c;
	struct dev d;

	for (c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		int w;

		phase = what;
		if (dev_open(&d, cfg[c].nq, BASE_FEATURES | cfg[c].extra))
			die("open /dev/vhost-blk");
		check(!dev_backend(&d, fd, 0, cfg[c].workers),
		      "SET_BACKEND %u queues", cfg[c].nq);
		w = count_workers(getpid());
		check(w == (int)(cfg[c].workers ? cfg[c].workers : cfg[c].nq),
		      "%d kernel workers for %u queues, %u asked", w,
		      cfg[c].nq, cfg[c].workers);
		t_integrity(&d, model, 6);
		check(!dev_backend(&d, -1, 0, 0), "stop");
		/* kthread_stop() has returned; the tasks leave /proc when
		 * they are reaped, a moment later. */
		for (w = 0; w < 40 && count_workers(getpid()); w++)
			usleep(50 * 1000);
		check(count_workers(getpid()) == 0, "workers left after stop");
		dev_close(&d);
		ok("ok - %s: integrity, %u queue(s), %u worker(s)%s\n",
		       what, cfg[c].nq, cfg[c].workers ? cfg[c].workers :
		       cfg[c].nq, direct ? ", O_DIRECT" : "");
	}
}

/* ---- request validation ---- */

/*
 * On a block device whose logical block is larger than a sector, a
 * DISCARD of one sector is refused (IOERR, BLKDISCARD's rule) before the
 * page cache is touched: a page of it read buffered before the request
 * still holds the data after it (the module once zeroed the sector in
 * the cache, then failed the discard).
 */
static void t_discard_unaligned(struct dev *d, int fd, const uint8_t *model,
				uint8_t *h, uint8_t *st)
{
	struct virtio_blk_discard_write_zeroes *dz = (void *)(h + 16);
	struct seg segs[2] = { { gpa(h), 32, false }, { gpa(st), 1, true } };
	static uint8_t pg[4096];
	char path[64];
	int lbs = 0, bfd, r, before = failures;

	if (ioctl(fd, BLKSSZGET, &lbs) || lbs <= 512)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	bfd = open(path, O_RDONLY);
	check(bfd >= 0 && pread(bfd, pg, 4096, 96 * 512) == 4096,
	      "buffered read of sectors 96..103");
	put_hdr(h, VIRTIO_BLK_T_DISCARD, 0);
	dz->sector = 97;
	dz->num_sectors = 1;
	dz->flags = 0;
	r = sync_req(d, 0, segs, 2, false, NULL);
	check(r == VIRTIO_BLK_S_IOERR,
	      "DISCARD of 1 sector, %d-byte logical blocks: status %d", lbs, r);
	check(bfd >= 0 && pread(bfd, pg, 4096, 96 * 512) == 4096 &&
	      !memcmp(pg, model + 96 * 512, 4096),
	      "page cache unchanged by the refused DISCARD");
	if (bfd >= 0)
		close(bfd);
	if (failures == before)
		ok("ok - DISCARD not aligned to the %d-byte logical "
		   "block: IOERR, page cache unchanged\n", lbs);
}

static void t_requests(int fd, uint8_t *model, bool direct)
{
	uint8_t *h = slot_hdr(0, 0), *st = slot_status(0, 0);
	uint8_t *data = slot_data(0, 0);
	struct seg segs[SLOT_DESCS];
	uint32_t used = 0;
	int r;
	struct dev d;

	phase = "requests";
	if (dev_open(&d, 1, BASE_FEATURES | F(VIRTIO_RING_F_INDIRECT_DESC)))
		die("open /dev/vhost-blk");
	check(!dev_backend(&d, fd, 0, 0), "SET_BACKEND");

	/* GET_ID, full and truncated. */
	memset(data, 0xee, 64);
	put_hdr(h, VIRTIO_BLK_T_GET_ID, 0);
	segs[0] = (struct seg){ gpa(h), 16, false };
	segs[1] = (struct seg){ gpa(data), 20, true };
	segs[2] = (struct seg){ gpa(st), 1, true };
	r = sync_req(&d, 0, segs, 3, false, &used);
	check(r == VIRTIO_BLK_S_OK && !memcmp(data, SERIAL, strlen(SERIAL)) &&
	      !data[strlen(SERIAL)] && used == 21,
	      "GET_ID: status %d, used %u, '%.20s'", r, used, data);
	memset(data, 0xee, 64);
	segs[1].len = 8;
	r = sync_req(&d, 0, segs, 3, false, &used);
	check(r == VIRTIO_BLK_S_OK && !memcmp(data, SERIAL, 8) &&
	      data[8] == 0xee && used == 9, "GET_ID short: %d, used %u", r,
	      used);

	/* FLUSH. */
	check(sync_rw(&d, 0, VIRTIO_BLK_T_FLUSH, 0, 0) == VIRTIO_BLK_S_OK,
	      "FLUSH");

	/* Range: last sector fine, past it and overflow not. */
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, CAP - 1, 512) == VIRTIO_BLK_S_OK,
	      "read of the last sector");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, CAP - 1, 1024) ==
	      VIRTIO_BLK_S_IOERR, "read across the end");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_OUT, CAP, 512) ==
	      VIRTIO_BLK_S_IOERR, "write past the end");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, ~0ull, 512) ==
	      VIRTIO_BLK_S_IOERR, "sector 2^64-1");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, ~0ull >> 9, 512) ==
	      VIRTIO_BLK_S_IOERR, "sector whose byte offset overflows");
	/* Not a multiple of 512; unknown type. */
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, 0, 511) == VIRTIO_BLK_S_IOERR,
	      "511-byte read");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_OUT, 0, 1000) == VIRTIO_BLK_S_IOERR,
	      "1000-byte write");
	check(sync_rw(&d, 0, 0x7f, 0, 512) == VIRTIO_BLK_S_UNSUPP,
	      "unknown type");
	check(sync_rw(&d, 0, 10 /* GET_LIFETIME */, 0, 16) ==
	      VIRTIO_BLK_S_UNSUPP, "GET_LIFETIME");

	/* Header short (8 bytes); IN with readable data; OUT with writable. */
	segs[0] = (struct seg){ gpa(h), 8, false };
	segs[1] = (struct seg){ gpa(st), 1, true };
	check(sync_req(&d, 0, segs, 2, false, NULL) == VIRTIO_BLK_S_IOERR,
	      "8-byte header");
	put_hdr(h, VIRTIO_BLK_T_IN, 0);
	segs[0] = (struct seg){ gpa(h), 16, false };
	segs[1] = (struct seg){ gpa(data), 512, false };
	segs[2] = (struct seg){ gpa(st), 1, true };
	check(sync_req(&d, 0, segs, 3, false, NULL) == VIRTIO_BLK_S_IOERR,
	      "IN with readable data");
	put_hdr(h, VIRTIO_BLK_T_OUT, 0);
	segs[1] = (struct seg){ gpa(data), 512, true };
	check(sync_req(&d, 0, segs, 3, false, NULL) == VIRTIO_BLK_S_IOERR,
	      "OUT with writable data");

	/*
	 * Odd splits: header in 3 + 13 bytes, data and status in one
	 * descriptor, the whole chain through an indirect table. Data
	 * buffers stay 512-aligned (O_DIRECT needs that).
	 */
	memcpy(data, model + 512 * 7, 1024);
	put_hdr(h, VIRTIO_BLK_T_OUT, 7);
	fill_random(data + 0x2000, 1024);
	segs[0] = (struct seg){ gpa(h), 3, false };
	segs[1] = (struct seg){ gpa(h) + 3, 13, false };
	segs[2] = (struct seg){ gpa(data + 0x2000), 512, false };
	segs[3] = (struct seg){ gpa(data + 0x2200), 512, false };
	segs[4] = (struct seg){ gpa(st), 1, true };
	*st = 0xff;
	r = sync_req(&d, 0, segs, 5, false, &used);
	check(r == VIRTIO_BLK_S_OK && used == 1, "split write: %d used %u", r,
	      used);
	if (r == VIRTIO_BLK_S_OK)
		memcpy(model + 512 * 7, data + 0x2000, 1024);
	put_hdr(h, VIRTIO_BLK_T_IN, 7);
	memset(data, 0, 1025);
	data[1024] = 0xff;
	segs[0] = (struct seg){ gpa(h), 16, false };
	segs[1] = (struct seg){ gpa(data), 1025, true }; /* data + status */
	r = sync_req(&d, 0, segs, 2, true, &used);
	check(r == -1 ? false : data[1024] == VIRTIO_BLK_S_OK && used == 1025 &&
	      !memcmp(data, model + 512 * 7, 1024),
	      "indirect read with the status in the data descriptor: %d/%u",
	      data[1024], used);
	/* Any byte split works, as in the userspace device (which bounces
	 * misaligned buffers; O_DIRECT: the module's page-cache path). */
	put_hdr(h, VIRTIO_BLK_T_IN, 7);
	memset(data, 0, 1024);
	segs[1] = (struct seg){ gpa(data), 100, true };
	segs[2] = (struct seg){ gpa(data) + 100, 924, true };
	segs[3] = (struct seg){ gpa(st), 1, true };
	*st = 0xff;
	r = sync_req(&d, 0, segs, 4, false, NULL);
	check(r == VIRTIO_BLK_S_OK && !memcmp(data, model + 512 * 7, 1024),
	      "read split at byte 100: %d", r);

	/*
	 * Misaligned addresses: a write from data + 0x2001 in 100 + 924
	 * bytes, then reads into data + 0x4003 (one segment, lengths
	 * aligned, as the hostile driver's huge_aliased) and data + 0x6005
	 * (split again), each checked against the model.
	 */
	put_hdr(h, VIRTIO_BLK_T_OUT, 9);
	fill_random(data + 0x2000, 2048);
	segs[0] = (struct seg){ gpa(h), 16, false };
	segs[1] = (struct seg){ gpa(data + 0x2001), 100, false };
	segs[2] = (struct seg){ gpa(data + 0x2001) + 100, 924, false };
	segs[3] = (struct seg){ gpa(st), 1, true };
	*st = 0xff;
	r = sync_req(&d, 0, segs, 4, false, &used);
	check(r == VIRTIO_BLK_S_OK && used == 1,
	      "misaligned write%s: status %d, used %u",
	      direct ? " (O_DIRECT)" : "", r, used);
	if (r == VIRTIO_BLK_S_OK)
		memcpy(model + 512 * 9, data + 0x2001, 1024);
	put_hdr(h, VIRTIO_BLK_T_IN, 9);
	memset(data + 0x4000, 0, 2048);
	segs[1] = (struct seg){ gpa(data + 0x4003), 1024, true };
	segs[2] = (struct seg){ gpa(st), 1, true };
	*st = 0xff;
	r = sync_req(&d, 0, segs, 3, false, &used);
	check(r == VIRTIO_BLK_S_OK && used == 1025 &&
	      !memcmp(data + 0x4003, model + 512 * 9, 1024),
	      "misaligned read%s: status %d, used %u",
	      direct ? " (O_DIRECT)" : "", r, used);
	put_hdr(h, VIRTIO_BLK_T_IN, 8);
	memset(data + 0x6000, 0, 2048);
	segs[1] = (struct seg){ gpa(data + 0x6005), 700, true };
	segs[2] = (struct seg){ gpa(data + 0x6005) + 700, 836, true };
	segs[3] = (struct seg){ gpa(st), 1, true };
	*st = 0xff;
	r = sync_req(&d, 0, segs, 4, false, &used);
	check(r == VIRTIO_BLK_S_OK && used == 1537 &&
	      !memcmp(data + 0x6005, model + 512 * 8, 1536),
	      "misaligned split read%s: status %d, used %u",
	      direct ? " (O_DIRECT)" : "", r, used);

	/* DISCARD/WRITE_ZEROES: payload checks, then zeroes on disk. */
	{
		struct virtio_blk_discard_write_zeroes *dz = (void *)(h + 16);
		int wz;

		put_hdr(h, VIRTIO_BLK_T_WRITE_ZEROES, 0);
		dz->sector = 16;
		dz->num_sectors = 8;
		dz->flags = 0;
		segs[0] = (struct seg){ gpa(h), 32, false };
		segs[1] = (struct seg){ gpa(st), 1, true };
		wz = r = sync_req(&d, 0, segs, 2, false, NULL);
		check(r == VIRTIO_BLK_S_OK || r == VIRTIO_BLK_S_UNSUPP,
		      "WRITE_ZEROES: %d", r);
		if (r == VIRTIO_BLK_S_OK) {
			memset(model + 16 * 512, 0, 8 * 512);
			memset(data, 0xee, 4096);
			check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, 16, 4096) ==
			      VIRTIO_BLK_S_OK && !memcmp(data, model + 16 * 512,
							 4096),
			      "zeroes read back");
		}
		/* A discard may or may not zero; it must not fail. */
		put_hdr(h, VIRTIO_BLK_T_DISCARD, 0);
		dz->sector = 64;
		r = sync_req(&d, 0, segs, 2, false, NULL);
		check(r == VIRTIO_BLK_S_OK || r == VIRTIO_BLK_S_UNSUPP,
		      "DISCARD: %d", r);
		ok("info - DISCARD status %d, WRITE_ZEROES status %d\n",
		       r, wz);
		if (r == VIRTIO_BLK_S_OK)
			t_discard_unaligned(&d, fd, model, h, st);
		if (r == VIRTIO_BLK_S_OK &&
		    sync_rw(&d, 0, VIRTIO_BLK_T_IN, 64, 4096) ==
		    VIRTIO_BLK_S_OK)
			memcpy(model + 64 * 512, data, 4096);
		put_hdr(h, VIRTIO_BLK_T_WRITE_ZEROES, 0);
		dz->flags = 2; /* unknown */
		check(sync_req(&d, 0, segs, 2, false, NULL) ==
		      VIRTIO_BLK_S_UNSUPP, "WRITE_ZEROES unknown flag");
		put_hdr(h, VIRTIO_BLK_T_DISCARD, 0);
		dz->flags = VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
		check(sync_req(&d, 0, segs, 2, false, NULL) ==
		      VIRTIO_BLK_S_UNSUPP, "DISCARD with UNMAP");
		dz->flags = 0;
		dz->sector = CAP - 4;
		check(sync_req(&d, 0, segs, 2, false, NULL) ==
		      VIRTIO_BLK_S_IOERR, "DISCARD past the end");
		segs[0].len = 24;
		check(sync_req(&d, 0, segs, 2, false, NULL) ==
		      VIRTIO_BLK_S_IOERR, "DISCARD payload of 8 bytes");
		segs[0].len = 48;
		check(sync_req(&d, 0, segs, 2, false, NULL) ==
		      VIRTIO_BLK_S_UNSUPP, "two DISCARD segments");
	}
	check(!dev_backend(&d, -1, 0, 0), "stop");

	/* Read-only: reads work, writes and discards fail. */
	check(!dev_backend(&d, fd, VHOST_BLK_F_READONLY, 0),
	      "SET_BACKEND read-only");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, 0, 512) == VIRTIO_BLK_S_OK &&
	      !memcmp(data, model, 512), "read-only: read");
	check(sync_rw(&d, 0, VIRTIO_BLK_T_OUT, 0, 512) == VIRTIO_BLK_S_IOERR,
	      "read-only: write");
	check(!dev_backend(&d, -1, 0, 0), "stop");
	dev_close(&d);
	ok("ok - requests: GET_ID, FLUSH, range, alignment, types, "
	       "splits, misaligned buffers, DISCARD/WRITE_ZEROES, "
	       "read-only%s\n",
	       direct ? " (O_DIRECT)" : "");
}

/* ---- ABI misuse ---- */

static void t_abi(int fd)
{
	struct vhost_blk_backend be = { .fd = fd, .capacity = CAP,
					.num_queues = 1 };
	struct dev d;

	phase = "abi";
	if (dev_open(&d, 1, BASE_FEATURES))
		die("open /dev/vhost-blk");
	be.reserved[3] = 1;
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "reserved field accepted");
	be.reserved[3] = 0;
	be.poll_us = VHOST_BLK_MAX_POLL_US + 1;
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "poll_us above VHOST_BLK_MAX_POLL_US accepted");
	be.poll_us = 0;
	be.flags = 1u << 7;
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "unknown flag accepted");
	be.flags = 0;
	be.num_queues = 2; /* ring 1 not set up */
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "queue without a ring accepted");
	be.num_queues = 1;
	be.capacity = CAP * 1024;
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "capacity beyond the file accepted");
	be.capacity = CAP;
	be.fd = d.q[0].kick;
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EINVAL,
	      "an eventfd accepted as the image");
	be.fd = fd;
	check(!ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be), "SET_BACKEND");
	check(ioctl(d.fd, VHOST_BLK_SET_BACKEND, &be) && errno == EBUSY,
	      "second SET_BACKEND while serving");
	{
		struct vhost_vring_state num = { 0, QSZ };

		check(ioctl(d.fd, VHOST_SET_VRING_NUM, &num) && errno == EBUSY,
		      "ring resized while serving");
	}
	/* Closing while serving stops the backend (release path). */
	dev_close(&d);
	ok("ok - abi: reserved, poll_us, flags, rings, capacity, file type, "
	   "busy\n");
}

/* ---- hostile chains ---- */

/*
 * A chain the vhost core refuses (loop, buffer past RAM) stops the ring at
 * it, as a broken device would; what matters is that nothing completes
 * wrongly, the stop returns, and the next device works.
 */
static void t_hostile(int fd)
{
	static const char *const names[] = { "descriptor loop",
		"length past RAM", "address past RAM", "no status byte",
		"indirect table loop", "chain longer than the ring",
		"indirect next out of range", "indirect with next",
		"indirect table longer than the ring" };
	unsigned int c;

	for (c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
		struct dev d;
		struct queue *q;
		uint8_t *h = slot_hdr(0, 0), *st = slot_status(0, 0);
		struct seg segs[3];
		bool done, refused;

		phase = "hostile";
		if (dev_open(&d, 1, BASE_FEATURES |
			     F(VIRTIO_RING_F_INDIRECT_DESC)))
			die("open /dev/vhost-blk");
		check(!dev_backend(&d, fd, 0, 0), "SET_BACKEND");
		q = &d.q[0];
		put_hdr(h, VIRTIO_BLK_T_IN, 0);
		*st = 0xff;
		segs[0] = (struct seg){ gpa(h), 16, false };
		segs[1] = (struct seg){ gpa(slot_data(0, 0)), 512, true };
		segs[2] = (struct seg){ gpa(st), 1, true };
		switch (c) {
		case 0: /* desc 1 points back at desc 0 */
			fill(&d, 0, 0, segs, 2, false);
			q->desc[1].flags |= VRING_DESC_F_NEXT;
			q->desc[1].next = 0;
			break;
		case 1:
			segs[1].len = RAM_BYTES;
			fill(&d, 0, 0, segs, 2, false);
			break;
		case 2:
			segs[1].gpa = GPA_BASE + RAM_BYTES;
			fill(&d, 0, 0, segs, 2, false);
			break;
		case 3:
			segs[1].w = false;
			fill(&d, 0, 0, segs, 2, false);
			break;
		case 4: {
			struct vring_desc *t = (void *)(slot_area(0, 0) + 0x80);

			fill(&d, 0, 0, segs, 2, true);
			t[1].flags |= VRING_DESC_F_NEXT;
			t[1].next = 0;
			break;
		}
		case 5: {
			unsigned int i;

			/* every descriptor of the ring, chained in a cycle */
			for (i = 0; i < QSZ; i++) {
				q->desc[i].addr = gpa(h);
				q->desc[i].len = 16;
				q->desc[i].flags = VRING_DESC_F_NEXT;
				q->desc[i].next = (i + 1) % QSZ;
			}
			break;
		}
		/*
		 * Chains the vhost core would serve but virtio 1.2 §2.7.5.3
		 * and the userspace device refuse: a legal read, each
		 * broken in one way.
		 */
		case 6: { /* the data descriptor's next is past the table */
			struct vring_desc *t = (void *)(slot_area(0, 0) + 0x80);

			fill(&d, 0, 0, segs, 3, true);
			t[1].next = 9;
			break;
		}
		case 7: /* INDIRECT with NEXT, to a second status byte */
			fill(&d, 0, 0, segs, 3, true);
			q->desc[0].flags |= VRING_DESC_F_NEXT;
			q->desc[0].next = 1;
			q->desc[1].addr = gpa(st) + 1;
			q->desc[1].len = 1;
			q->desc[1].flags = VRING_DESC_F_WRITE;
			st[1] = 0xff;
			break;
		case 8: { /* a table of 2 * QSZ + 2 entries: 128 KiB read */
			struct vring_desc *t = (void *)slot_area(0, 2);
			unsigned int i, last = 2 * QSZ + 1;

			t[0] = (struct vring_desc){ gpa(h), 16,
						    VRING_DESC_F_NEXT, 1 };
			for (i = 1; i < last; i++)
				t[i] = (struct vring_desc){
					gpa(slot_data(0, 0)), 512,
					VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
					(uint16_t)(i + 1) };
			t[last] = (struct vring_desc){ gpa(st), 1,
						       VRING_DESC_F_WRITE, 0 };
			q->desc[0] = (struct vring_desc){ gpa(t),
				16 * (last + 1), VRING_DESC_F_INDIRECT, 0 };
			break;
		}
		}
		publish(&d, 0, 0);
		done = wait_slot(&d, 0, 0, 500);
		/* Returned unserved: nothing written, status kept. */
		refused = done && q->slot[0].used_len == 0 && *st == 0xff;
		if (c == 3)
			check(refused, "%s: done %d used %u status %#x",
			      names[c], done, q->slot[0].used_len, *st);
		else if (c >= 6)
			/* As the userspace device: returned unserved (or,
			 * were it ever so, failed with IOERR). */
			check(refused || (done && *st == VIRTIO_BLK_S_IOERR &&
					  (c != 7 || st[1] == 0xff)),
			      "%s: done %d used %u status %#x (%#x)", names[c],
			      done, q->slot[0].used_len, *st, st[1]);
		else
			check(!done || *st == VIRTIO_BLK_S_IOERR,
			      "%s: completed with status %#x", names[c], *st);
		if (poll_us) {
			/* A ring stopped at a bad chain is not polled: the
			 * worker sleeps (bounded CPU whatever the guest). */
			long ms = idle_cpu_ms(400);

			check(ms >= 0 && ms < 100,
			      "%s: polling workers spent %ld ms of 400 idle",
			      names[c], ms);
		}
		check(!dev_backend(&d, -1, 0, 0), "%s: stop", names[c]);
		dev_close(&d);
		ok("ok - hostile%s: %s\n", poll_us ? " (polling)" : "",
		   names[c]);
	}
	/* And the module still serves. */
	{
		struct dev d;

		if (dev_open(&d, 1, BASE_FEATURES))
			die("open /dev/vhost-blk");
		check(!dev_backend(&d, fd, 0, 0), "SET_BACKEND after hostile");
		check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, 0, 4096) ==
		      VIRTIO_BLK_S_OK, "read after the hostile chains");
		dev_close(&d);
	}
}

/* ---- polling ---- */

/*
 * Read slot 1 published without a kick right after slot 0 completed;
 * Return: whether the worker took it within @ms (it is kicked after).
 */
static bool probe_unkicked(struct dev *d, int ms)
{
	bool served;

	check(sync_rw(d, 0, VIRTIO_BLK_T_IN, 0, 4096) == VIRTIO_BLK_S_OK,
	      "probe: kicked read");
	put_hdr(slot_hdr(0, 1), VIRTIO_BLK_T_IN, 8);
	*slot_status(0, 1) = 0xff;
	{
		struct seg segs[3] = {
			{ gpa(slot_hdr(0, 1)), 16, false },
			{ gpa(slot_data(0, 1)), 4096, true },
			{ gpa(slot_status(0, 1)), 1, true },
		};

		publish_quiet(d, 0, fill(d, 0, 1, segs, 3, false));
	}
	served = wait_slot(d, 0, 1, ms);
	if (!served) {
		kick(d, 0);
		check(wait_slot(d, 0, 1, TIMEOUT_MS), "probe: kicked late");
	}
	check(*slot_status(0, 1) == VIRTIO_BLK_S_OK, "probe: status %#x",
	      *slot_status(0, 1));
	return served;
}

/*
 * poll_us: without it a request nobody kicked is never served; with it
 * the worker, its window grown by back-to-back requests, takes such
 * requests; and an idle polling worker costs next to no CPU.
 */
static void t_poll(int fd)
{
	static const uint32_t settings[] = { 0, VHOST_BLK_MAX_POLL_US };
	unsigned int k, i, hits;

	phase = "poll";
	for (k = 0; k < 2; k++) {
		struct dev d;
		long ms;

		if (dev_open(&d, 1, BASE_FEATURES | F(VIRTIO_RING_F_EVENT_IDX)))
			die("open /dev/vhost-blk");
		poll_us = settings[k];
		check(!dev_backend(&d, fd, 0, 0), "SET_BACKEND poll_us %u",
		      poll_us);
		hits = 0;
		for (i = 0; i < 40; i++) {
			unsigned int j;

			/* Back-to-back reads: each kick comes soon after the
			 * worker went to sleep, so its window grows. */
			for (j = 0; j < 20; j++)
				check(sync_rw(&d, 0, VIRTIO_BLK_T_IN, 0,
					      4096) == VIRTIO_BLK_S_OK,
				      "warm-up read");
			hits += probe_unkicked(&d, poll_us ? 200 : 50);
		}
		if (poll_us)
			check(hits > 0, "poll_us %u: none of 40 unkicked "
			      "requests served", poll_us);
		else
			check(hits == 0, "poll_us 0: %u of 40 unkicked "
			      "requests served", hits);
		ms = idle_cpu_ms(500);
		check(ms >= 0 && ms < 100, "poll_us %u: the worker spent %ld "
		      "ms of 500 idle", poll_us, ms);
		check(!dev_backend(&d, -1, 0, 0), "stop");
		dev_close(&d);
		ok("ok - poll_us %u: %u of 40 unkicked requests served, idle "
		   "worker %ld ms of 500\n", settings[k], hits, ms);
	}
	poll_us = 0;
}

/* ---- a VMM killed mid-I/O ---- */

static void t_kill(int fd)
{
	pid_t pid;
	int status, i, left = -1;

	phase = "kill";
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		struct dev d;
		unsigned int qi, s;

		if (dev_open(&d, 4, BASE_FEATURES) || dev_backend(&d, fd, 0, 0))
			_exit(2);
		for (;;) {
			for (qi = 0; qi < d.nq; qi++)
				for (s = 0; s < SLOTS; s++) {
					fill_random(slot_data(qi, s), DATA_MAX);
					post_rw(&d, qi, s, s & 1 ?
						VIRTIO_BLK_T_OUT :
						VIRTIO_BLK_T_IN,
						(qi * SLOTS + s) * 128,
						DATA_MAX);
				}
			if (!wait_all(&d, TIMEOUT_MS))
				_exit(3);
		}
	}
	/* Kill it once its backend runs and I/O is under way. */
	for (i = 0; i < 100 && count_workers(pid) < 4; i++)
		usleep(50 * 1000);
	check(count_workers(pid) == 4, "child has %d workers, not 4",
	      count_workers(pid));
	usleep(200 * 1000);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child ended with status %#x before the kill", status);
	for (i = 0; i < 50; i++) {
		left = count_workers(pid);
		if (!left)
			break;
		usleep(100 * 1000);
	}
	check(left == 0, "%d workers of the killed VMM still there", left);
	ok("ok - kill: VMM killed mid-I/O, its workers gone\n");
}

/* ---- credentials ---- */

/*
 * --fill DIR --uid N: the workers write as the task that set the backend.
 * DIR is a file system with root-reserved blocks where uid N may write
 * less than DISK_BYTES and root more. As uid N: a file written with
 * pwrite() until it fails shows the user's share; then an image of
 * DISK_BYTES, sparse, written whole through the module must fail (IOERR)
 * as the user's own write did, within a MiB of the same byte, instead of
 * filling root's reserve.
 */
static void t_fill(const char *dir, uid_t uid)
{
	uint8_t *buf = slot_data(0, 0);
	const uint32_t chunk = 64 << 10;
	uint32_t off = 0;
	size_t own = 0;
	char a[4096], b[4096];
	struct dev d;
	int fd, st = -1, before = failures;

	phase = "fill";
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		die("drop to --uid");
	memset(buf, 0x5a, chunk);
	snprintf(a, sizeof(a), "%s/fill-own", dir);
	snprintf(b, sizeof(b), "%s/fill-vhost", dir);
	fd = open(a, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0)
		die(a);
	while (own < DISK_BYTES && pwrite(fd, buf, chunk, own) == chunk)
		own += chunk;
	close(fd);
	unlink(a);
	check(own < DISK_BYTES, "uid %u wrote all %u bytes itself: %s has "
	      "no reserve that binds it", (unsigned int)uid, DISK_BYTES, dir);
	fd = open(b, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, DISK_BYTES))
		die(b);
	if (dev_open(&d, 1, BASE_FEATURES) || dev_backend(&d, fd, 0, 0))
		die("device for --fill");
	for (; off < DISK_BYTES; off += chunk) {
		st = sync_rw(&d, 0, VIRTIO_BLK_T_OUT, off / 512, chunk);
		if (st != VIRTIO_BLK_S_OK)
			break;
	}
	check(st == VIRTIO_BLK_S_IOERR, "uid %u: the module wrote %u of %u "
	      "bytes (status %d); the user's own write stopped at %zu",
	      (unsigned int)uid, off, DISK_BYTES, st, own);
	check(off <= own + (1u << 20), "uid %u: the module wrote %u bytes, "
	      "the user's own write %zu", (unsigned int)uid, off, own);
	check(!dev_backend(&d, -1, 0, 0), "stop");
	dev_close(&d);
	close(fd);
	unlink(b);
	if (failures == before)
		ok("ok - as uid %u: own writes stopped at %zu bytes, the "
		   "module's with IOERR at %u (root's reserve not used)\n",
		   (unsigned int)uid, own, off);
}

/* ---- main ---- */


int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *blockdev = NULL, *fill = NULL;
	long uid = -1;
	bool do_kill = false, quick = false, direct;
	char path[4096];
	uint8_t *model;
	int i, fd;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--blockdev") && i + 1 < argc) {
			blockdev = argv[++i];
		} else if (!strcmp(argv[i], "--fill") && i + 1 < argc) {
			fill = argv[++i];
		} else if (!strcmp(argv[i], "--uid") && i + 1 < argc) {
			uid = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--kill")) {
			do_kill = true;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else {
			fprintf(stderr, "vhost_blk_selftest: unknown argument "
				"'%s' (usage: see the source's head)\n",
				argv[i]);
			return 1;
		}
	}
	t_start = now_s();
	if (access("/dev/vhost-blk", F_OK)) {
		printf("SKIP: no /dev/vhost-blk (insmod vhost_blk.ko)\n");
		return 77;
	}
	ram = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	model = aligned_alloc(4096, DISK_BYTES);
	if (ram == MAP_FAILED || !model)
		die("memory");
	if (fill) {
		if (uid < 0) {
			fprintf(stderr, "vhost_blk_selftest: --fill needs "
				"--uid\n");
			return 1;
		}
		t_fill(fill, (uid_t)uid);
		printf(failures ? "FAILED: %d check(s)\n" : "PASS\n",
		       failures);
		return failures ? 1 : 0;
	}

	/* A regular file with random content. */
	snprintf(path, sizeof(path), "%s/vhost-blk-selftest.%d.img", dir,
		 (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	fill_random(model, DISK_BYTES);
	if (pwrite(fd, model, DISK_BYTES, 0) != DISK_BYTES)
		die("write the image");
	close(fd);
	fd = open_backing(path, &direct);
	t_abi(fd);
	t_data(fd, model, direct, "file");
	t_requests(fd, model, direct);
	t_hostile(fd);
	if (!quick) {
		t_poll(fd);
		/* Integrity and the hostile chains again, the workers
		 * polling. */
		poll_us = VHOST_BLK_MAX_POLL_US;
		t_data(fd, model, direct, "file, polling");
		t_hostile(fd);
		poll_us = 0;
	}
	{
		uint8_t *img = aligned_alloc(4096, DISK_BYTES);

		phase = "file";
		check(img && pread(fd, img, DISK_BYTES, 0) == DISK_BYTES &&
		      !memcmp(img, model, DISK_BYTES),
		      "the image file differs from the model");
		free(img);
	}
	if (do_kill)
		t_kill(fd);
	close(fd);
	unlink(path);

	if (blockdev) {
		uint64_t size = 0;

		fd = open_backing(blockdev, &direct);
		if (ioctl(fd, BLKGETSIZE64, &size) || size < DISK_BYTES) {
			fprintf(stderr, "%s: smaller than %u bytes\n", blockdev,
				DISK_BYTES);
			return 1;
		}
		fill_random(model, DISK_BYTES);
		if (pwrite(fd, model, DISK_BYTES, 0) != DISK_BYTES)
			die("write the block device");
		t_data(fd, model, direct, "blockdev");
		t_requests(fd, model, direct);
		close(fd);
	}
	if (failures) {
		printf("FAILED: %d check(s)\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
