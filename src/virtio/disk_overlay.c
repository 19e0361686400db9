// SPDX-License-Identifier: Apache-2.0
/*
 * Snapshot disks: a throwaway copy-on-write overlay over an image that is
 * never written. Where the temporary directory's file system can clone the
 * image (FICLONE) the clone simply is the disk. Elsewhere the overlay is a
 * sparse unlinked file of the image's size plus a bitmap of the clusters
 * it holds; writes copy clusters up (serialized per cluster, across every
 * queue's thread) and reads go to whichever file holds each cluster. The
 * map and the overlay are bounded by the image size fixed at open.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/log.h"
#include "virtio/disk_engine.h"

/* Copy-up locks, striped by cluster: a stripe is held for one copy-up. */
#define OV_LOCKS 64u
#define OV_BITS 64u

struct disk_overlay {
	uint64_t nclusters;
	_Atomic uint64_t *map;   /* bit set: the cluster is in the overlay */
	pthread_mutex_t locks[OV_LOCKS];
};

/*
 * Acquire pairs with the release in ov_mark(): whoever sees the bit also
 * sees the overlay holding the cluster (the copy-up's pwritev returned
 * before the bit was set).
 */
static bool ov_has(const struct disk_overlay *ov, uint64_t c)
{
	return atomic_load_explicit(&ov->map[c / OV_BITS],
				    memory_order_acquire) &
	       (1ull << (c % OV_BITS));
}

static void ov_mark(struct disk_overlay *ov, uint64_t c)
{
	atomic_fetch_or_explicit(&ov->map[c / OV_BITS], 1ull << (c % OV_BITS),
				 memory_order_release);
}

void disk_overlay_free(struct disk_overlay *ov)
{
	unsigned int i;

	if (!ov)
		return;
	for (i = 0; i < OV_LOCKS; i++)
		pthread_mutex_destroy(&ov->locks[i]);
	free(ov->map);
	free(ov);
}

static struct disk_overlay *ov_alloc(uint64_t size)
{
	struct disk_overlay *ov = calloc(1, sizeof(*ov));
	uint64_t words;
	unsigned int i;

	if (!ov)
		return NULL;
	/* size < 2^63, so neither sum overflows. */
	ov->nclusters = (size + DISK_OVERLAY_CLUSTER - 1) /
			DISK_OVERLAY_CLUSTER;
	words = (ov->nclusters + OV_BITS - 1) / OV_BITS;
	ov->map = calloc(words ? words : 1, sizeof(*ov->map));
	if (!ov->map) {
		free(ov);
		return NULL;
	}
	for (i = 0; i < OV_LOCKS; i++)
		pthread_mutex_init(&ov->locks[i], NULL);
	return ov;
}

/* An unlinked read-write file in @dir: O_TMPFILE, else create and unlink. */
static int ov_tmpfile(const char *dir)
{
	size_t n = strlen(dir);
	char *tmpl;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL))
		return fd < 0 ? -errno : fd;
	tmpl = malloc(n + sizeof("/microvm-snapshot-XXXXXX"));
	if (!tmpl)
		return -ENOMEM;
	memcpy(tmpl, dir, n);
	memcpy(tmpl + n, "/microvm-snapshot-XXXXXX",
	       sizeof("/microvm-snapshot-XXXXXX"));
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
	} else if (unlink(tmpl)) {
		int e = -errno;

		close(fd);
		fd = e;
	}
	free(tmpl);
	return fd;
}

int disk_overlay_open(struct disk *d, const struct disk_opts *o, char *err,
		      size_t errlen)
{
	const char *dir = o->tmpdir;
	struct disk_overlay *ov = NULL;
	int fd;

	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	fd = ov_tmpfile(dir);
	if (fd < 0) {
		snprintf(err, errlen, "disk %s: snapshot overlay in %s: %s",
			 d->path, dir, strerror(-fd));
		return fd;
	}
	/* The image is read through the page cache too (copy-up buffers
	 * are not aligned for O_DIRECT). */
	if (d->direct) {
		int fl = fcntl(d->fd, F_GETFL);

		if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_DIRECT)) {
			int e = errno;

			snprintf(err, errlen, "disk %s: %s", d->path,
				 strerror(e));
			close(fd);
			return -e;
		}
	}
	if (!o->no_reflink && !d->is_blockdev &&
	    !ioctl(fd, FICLONE, d->fd)) {
		d->reflinked = true;
	} else {
		/* Sparse: the overlay takes room only where the guest wrote. */
		ov = ov_alloc(d->size);
		if (!ov || ftruncate(fd, (off_t)d->size)) {
			int e = ov ? errno : ENOMEM;

			snprintf(err, errlen,
				 "disk %s: snapshot overlay in %s: %s",
				 d->path, dir, strerror(e));
			disk_overlay_free(ov);
			close(fd);
			return -e;
		}
	}
	log_info("disk %s: snapshot, writes go to %s in %s", d->path,
		 d->reflinked ? "a reflinked copy" : "an overlay", dir);
	d->snapshot = true;
	d->base_fd = d->fd;
	d->fd = fd;
	d->ov = ov;
	d->readonly = false;
	/* The guest's disk is now the overlay: a file, page-cached. */
	d->is_blockdev = false;
	d->direct = false;
	d->can_discard = false;
	d->can_write_zeroes = false;
	return 0;
}

uint64_t disk_overlay_run(const struct disk *d, uint64_t pos, uint64_t end,
			  enum disk_file *file)
{
	const struct disk_overlay *ov = d->ov;
	uint64_t c = pos / DISK_OVERLAY_CLUSTER;
	uint64_t next = (c + 1) * DISK_OVERLAY_CLUSTER;
	bool in = ov_has(ov, c);

	while (next < end && ov_has(ov, next / DISK_OVERLAY_CLUSTER) == in)
		next += DISK_OVERLAY_CLUSTER;
	*file = in ? DISK_FILE_MAIN : DISK_FILE_BASE;
	return (next < end ? next : end) - pos;
}

/* All of @n bytes at @pos, or -errno (-EIO at an unexpected end of file). */
static int ov_xfer(int fd, uint8_t *buf, size_t n, uint64_t pos, bool write)
{
	while (n) {
		struct iovec v = { buf, n };
		ssize_t k = write ? pwritev(fd, &v, 1, (off_t)pos) :
				    preadv(fd, &v, 1, (off_t)pos);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		buf += k;
		pos += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * Copy cluster @c up with @r's bytes in [@lo, @hi) merged; the caller
 * holds the cluster's lock and saw it absent. The last cluster ends at the
 * image's end, so the overlay never grows past the image size.
 */
static int ov_copy_up(struct disk *d, uint8_t *buf, struct disk_req *r,
		      uint64_t c, uint64_t lo, uint64_t hi)
{
	uint64_t start = c * DISK_OVERLAY_CLUSTER;
	uint64_t end = start + DISK_OVERLAY_CLUSTER < d->size ?
		       start + DISK_OVERLAY_CLUSTER : d->size;
	bool whole = lo == start && hi == end;
	int ret;

	if (whole && r->op != DISK_OP_WRITE) {
		/* Never written, so a hole: zeroes already. */
		ov_mark(d->ov, c);
		return 0;
	}
	if (!whole) {
		ret = ov_xfer(d->base_fd, buf, end - start, start, false);
		if (ret)
			return ret;
	}
	if (r->op == DISK_OP_WRITE)
		disk_req_copy(r, lo - r->offset, buf + (lo - start), hi - lo,
			      false);
	else
		memset(buf + (lo - start), 0, hi - lo);
	ret = ov_xfer(d->fd, buf, end - start, start, true);
	if (ret)
		return ret;
	atomic_fetch_add_explicit(&d->stats.copy_ups, 1, memory_order_relaxed);
	ov_mark(d->ov, c);
	return 0;
}

int disk_overlay_prepare(struct disk *d, uint8_t *buf, struct disk_req *r,
			 uint64_t len)
{
	struct disk_overlay *ov = d->ov;
	uint64_t end = r->offset + len, c, lo, hi;
	bool all = true;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (c = r->offset / DISK_OVERLAY_CLUSTER;
	     c * DISK_OVERLAY_CLUSTER < end; c++) {
		pthread_mutex_t *l = &ov->locks[c % OV_LOCKS];

		if (ov_has(ov, c)) {
			all = false;
			continue;
		}
		lo = c * DISK_OVERLAY_CLUSTER;
		hi = lo + DISK_OVERLAY_CLUSTER;
		lo = lo > r->offset ? lo : r->offset;
		hi = hi < end ? hi : end;
		pthread_mutex_lock(l);
		/* Another queue may have copied it up while we waited. */
		if (ov_has(ov, c))
			all = false;
		else
			ret = ov_copy_up(d, buf, r, c, lo, hi);
		pthread_mutex_unlock(l);
		if (ret)
			return ret;
	}
	return all && r->op == DISK_OP_WRITE;
}
