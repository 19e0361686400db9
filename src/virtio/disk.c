// SPDX-License-Identifier: Apache-2.0
/*
 * Disk images: open (O_DIRECT with a page-cache fallback), size and direct
 * I/O alignment of files and block devices, OFD image locking (an exclusive
 * lock for read-write users, shared for read-only and snapshot ones; a
 * snapshot's overlay is in disk_overlay.c), discard probing,
 * and the engine-independent half of the queue API: depth accounting, the
 * done list and the completion eventfd every engine reports through.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/guarded_copy.h"
#include "util/log.h"
#include "virtio/disk_engine.h"

/* Direct I/O alignment assumed when nothing reports one (always safe). */
#define DISK_ALIGN_FALLBACK 4096

static const struct disk_engine_ops *const disk_engines[DISK_ENGINE_COUNT] = {
	[DISK_ENGINE_URING] = &disk_uring_ops,
	[DISK_ENGINE_SYNC] = &disk_sync_ops,
};

const char *disk_engine_name(enum disk_engine e)
{
	if ((unsigned int)e >= DISK_ENGINE_COUNT)
		return "?";
	return disk_engines[e]->name;
}

static int disk_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int disk_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Read a number from the sysfs queue directory of block device @dev. */
static bool sysfs_queue_u64(dev_t dev, const char *attr, uint64_t *val)
{
	/* A partition has no queue/ of its own: use its parent disk's. */
	static const char *const up[] = { "", "../" };
	char path[128];
	unsigned long long v;
	unsigned int i;
	FILE *f;
	int n;

	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%squeue/%s",
			 major(dev), minor(dev), up[i], attr);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fscanf(f, "%llu", &v);
		fclose(f);
		if (n == 1) {
			*val = v;
			return true;
		}
	}
	return false;
}

static int disk_probe_blockdev(struct disk *d, const struct stat *st,
			       char *err, size_t errlen)
{
	uint64_t size, v;
	int lbs, pbs;

	if (ioctl(d->fd, BLKGETSIZE64, &size) ||
	    ioctl(d->fd, BLKSSZGET, &lbs) || ioctl(d->fd, BLKPBSZGET, &pbs))
		return disk_fail(err, errlen, -errno, "disk %s: %s", d->path,
				 strerror(errno));
	d->is_blockdev = true;
	d->size = size;
	d->align = d->mem_align = lbs;
	d->phys_block = pbs;
	if (!d->readonly) {
		d->can_write_zeroes = true; /* BLKZEROOUT writes if it must */
		d->can_discard = sysfs_queue_u64(st->st_rdev,
						 "discard_max_bytes", &v) &&
				 v > 0;
	}
	return 0;
}

/*
 * Direct I/O alignment of a regular file: statx where the kernel reports it,
 * else the logical block size of the device under the file system.
 */
static void disk_probe_file_align(struct disk *d, const struct stat *st)
{
	struct statx sx;
	uint64_t lbs;

	if (!statx(d->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) &&
	    (sx.stx_mask & STATX_DIOALIGN)) {
		/* 0 means the file system cannot do direct I/O here. */
		d->align = sx.stx_dio_offset_align;
		d->mem_align = sx.stx_dio_mem_align;
		return;
	}
	if (sysfs_queue_u64(st->st_dev, "logical_block_size", &lbs) &&
	    is_pow2(lbs) && lbs <= 65536)
		d->align = d->mem_align = lbs;
	else
		d->align = d->mem_align = DISK_ALIGN_FALLBACK;
}

/*
 * Punching a hole wholly past the end of file changes nothing, and
 * fails with EOPNOTSUPP where the file system cannot punch holes.
 */
static void disk_probe_file_discard(struct disk *d)
{
	uint64_t past = (d->size + 65535) & ~(uint64_t)65535;

	if (d->readonly)
		return;
	if (fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)past, 65536)) {
		log_debug("disk %s: no hole punching (%s)", d->path,
			  strerror(errno));
		return;
	}
	d->can_discard = true;
	/* ZERO_RANGE is tried first; a punched hole stands in for it. */
	d->can_write_zeroes = true;
}

/* Leave O_DIRECT (direct I/O unsupported, or a size it cannot cover). */
static int disk_drop_direct(struct disk *d, const char *why, char *err,
			    size_t errlen)
{
	int fl = fcntl(d->fd, F_GETFL);

	if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_DIRECT))
		return disk_fail(err, errlen, -errno, "disk %s: %s", d->path,
				 strerror(errno));
	d->direct = false;
	log_info("disk %s: %s, using the page cache", d->path, why);
	return 0;
}

static int disk_probe(struct disk *d, char *err, size_t errlen)
{
	struct stat st;
	int fl, ret;

	if (fstat(d->fd, &st))
		return disk_fail(err, errlen, -errno, "disk %s: %s", d->path,
				 strerror(errno));
	if (S_ISDIR(st.st_mode))
		return disk_fail(err, errlen, -EISDIR,
				 "disk %s: is a directory", d->path);
	fl = fcntl(d->fd, F_GETFL);
	if (fl < 0)
		return disk_fail(err, errlen, -errno, "disk %s: %s", d->path,
				 strerror(errno));
	if (!d->readonly && (fl & O_ACCMODE) == O_RDONLY)
		return disk_fail(err, errlen, -EBADF,
				 "disk %s: not open for writing", d->path);
	d->direct = fl & O_DIRECT;
	if (S_ISBLK(st.st_mode)) {
		ret = disk_probe_blockdev(d, &st, err, errlen);
		if (ret)
			return ret;
	} else if (S_ISREG(st.st_mode)) {
		struct statfs fs;

		d->size = st.st_size;
		d->phys_block = st.st_blksize;
		disk_probe_file_align(d, &st);
		d->mem_backed = !fstatfs(d->fd, &fs) &&
				(fs.f_type == TMPFS_MAGIC ||
				 fs.f_type == RAMFS_MAGIC);
	} else {
		return disk_fail(err, errlen, -EINVAL,
				 "disk %s: not a regular file or block device",
				 d->path);
	}
	if (d->size > INT64_MAX)
		return disk_fail(err, errlen, -EFBIG,
				 "disk %s: size %" PRIu64 " too large",
				 d->path, d->size);
	if (!d->direct)
		return 0;
	if (!d->align)
		return disk_drop_direct(d, "O_DIRECT not supported here",
					err, errlen);
	if (!is_pow2(d->align) || !is_pow2(d->mem_align))
		return disk_drop_direct(d, "odd direct I/O alignment",
					err, errlen);
	if (d->align > DISK_BOUNCE_CHUNK || d->mem_align > DISK_BOUNCE_CHUNK)
		return disk_drop_direct(d,
			"direct I/O block larger than a bounce buffer",
			err, errlen);
	if (d->size % d->align)
		return disk_drop_direct(d,
			"size not a multiple of the direct I/O block",
			err, errlen);
	return 0;
}

/* OFD locks belong to the open file description: a second open conflicts
 * even inside this process, and the lock goes with the last close. */
static int disk_lock(struct disk *d, char *err, size_t errlen)
{
	/* A snapshot never writes the image: it shares it like a reader. */
	struct flock fl = {
		.l_type = d->readonly ? F_RDLCK : F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = 0,
		.l_len = 0,
	};

	if (!fcntl(d->fd, F_OFD_SETLK, &fl))
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return disk_fail(err, errlen, -EBUSY,
				 "disk %s: in use by another process (locked)",
				 d->path);
	/* Some file systems have no locks at all: carry on unlocked. */
	log_warn("disk %s: cannot lock the image (%s), opening it unlocked",
		 d->path, strerror(errno));
	return 0;
}

/*
 * A memory-backed image read and written by the io_uring engine's queue
 * threads (disk_uring.c) is mapped: each transfer is then one memcpy, with
 * no system call and no page-cache lookup (disk_map_kcall()). Only where
 * nothing else stands between the guest and the file: the page cache, no
 * snapshot overlay. And only a fully allocated image: a read fault on a
 * hole of a shared tmpfs mapping allocates a page, where preadv returns
 * zeros and allocates nothing, so a guest reading a sparse image through
 * the mapping could grow it in host memory up to its size (and fail on a
 * full tmpfs). The pages the guest touches count in microvm's Rss
 * (shared, RssShmem), as they are the image's own. Without a mapping (it
 * failed, or the SIGBUS guard could not be installed) the thread makes
 * its preadv/pwritev as before.
 */
static void disk_map(struct disk *d)
{
	struct stat st;
	void *m;

	if (!d->mem_backed || d->direct || d->snapshot || !d->size ||
	    d->engine != DISK_ENGINE_URING || d->size > SIZE_MAX ||
	    fstat(d->fd, &st) || (uint64_t)st.st_blocks * 512 < d->size ||
	    guarded_copy_init())
		return;
	m = mmap(NULL, (size_t)d->size,
		 d->readonly ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->fd, 0);
	if (m == MAP_FAILED) {
		log_debug("disk %s: not mapped (%s): transfers by system call",
			  d->path, strerror(errno));
		return;
	}
	d->map = m;
}

int64_t disk_map_kcall(struct disk *d, const struct disk_kcall *kc)
{
	uint64_t pos = kc->pos;
	int64_t done = 0;
	size_t len;
	void *at;
	int i;

	if (kc->op != DISK_KOP_READV &&
	    (kc->op != DISK_KOP_WRITEV || d->readonly))
		return -EBADF; /* a read-only mapping, or not a transfer */
	for (i = 0; i < kc->iovcnt; i++) {
		/* As preadv/pwritev at the end of a file that shrank: short. */
		if (pos >= d->size)
			break;
		len = kc->iov[i].iov_len;
		if (len > d->size - pos)
			len = (size_t)(d->size - pos);
		at = d->map + pos;
		if (kc->op == DISK_KOP_WRITEV) {
			/* The file shrank, or a hole (a discard made it) on
			 * a full tmpfs: as pwritev's ENOSPC, an I/O error. */
			if (guarded_copy(at, kc->iov[i].iov_base, len))
				return -EIO;
		} else if (guarded_copy(kc->iov[i].iov_base, at, len)) {
			/* A hole a discard made, with tmpfs now full, or a
			 * shrunk file: preadv reads zeros or ends short. */
			return disk_kcall_run(d->fd, kc);
		}
		pos += len;
		done += (int64_t)len;
		if (len < kc->iov[i].iov_len)
			break;
	}
	return done;
}

static int disk_setup(struct disk *d, int fd, const struct disk_opts *o,
		      char *err, size_t errlen)
{
	int ret;

	if ((unsigned int)o->engine >= DISK_ENGINE_COUNT)
		return disk_fail(err, errlen, -EINVAL,
				 "disk %s: unknown engine %d", o->path,
				 (int)o->engine);
	if ((unsigned int)o->cache > DISK_CACHE_UNSAFE)
		return disk_fail(err, errlen, -EINVAL,
				 "disk %s: unknown cache mode %d", o->path,
				 (int)o->cache);
	if (o->snapshot && o->readonly)
		return disk_fail(err, errlen, -EINVAL,
				 "disk %s: snapshot and read-only exclude each other (a read-only disk is never written anyway)",
				 o->path);
	if (o->snapshot && o->cache == DISK_CACHE_NONE)
		return disk_fail(err, errlen, -EINVAL,
				 "disk %s: snapshot does not combine with O_DIRECT (cache=none): the throwaway overlay is page-cached",
				 o->path);
	memset(d, 0, sizeof(*d));
	d->fd = fd;
	d->base_fd = -1;
	/* A snapshot's image is probed and locked as a reader's. */
	d->readonly = o->readonly || o->snapshot;
	d->cache = o->cache;
	d->engine = o->engine;
	d->ops = disk_engines[o->engine];
	d->path = strdup(o->path);
	if (!d->path)
		return disk_fail(err, errlen, -ENOMEM, "disk %s: %s", o->path,
				 strerror(ENOMEM));
	ret = disk_probe(d, err, errlen);
	if (!ret && !o->relock)
		ret = disk_lock(d, err, errlen);
	if (!ret && o->snapshot)
		ret = disk_overlay_open(d, o, err, errlen);
	/* Only once the image is ours: the probe writes past its end (for a
	 * snapshot, past the overlay's). */
	if (!ret && !d->is_blockdev)
		disk_probe_file_discard(d);
	if (!ret)
		disk_map(d);
	if (ret) {
		free(d->path);
		d->path = NULL;
		d->fd = -1;
	}
	return ret;
}

int disk_relock(struct disk *d, char *err, size_t errlen)
{
	return disk_lock(d, err, errlen);
}

int disk_open_fd(struct disk *d, int fd, const struct disk_opts *o,
		 char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->base_fd = -1;
	if (!o->path || !*o->path)
		return disk_fail(err, errlen, -EINVAL, "disk: no path given");
	return disk_setup(d, fd, o, err, errlen);
}

int disk_open(struct disk *d, const struct disk_opts *o, char *err,
	      size_t errlen)
{
	int flags = O_CLOEXEC |
		    (o->readonly || o->snapshot ? O_RDONLY : O_RDWR);
	int direct = o->cache == DISK_CACHE_NONE && !o->snapshot ? O_DIRECT : 0;
	int fd, ret;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->base_fd = -1;
	if (!o->path || !*o->path)
		return disk_fail(err, errlen, -EINVAL, "disk: no path given");
	fd = open(o->path, flags | direct);
	if (fd < 0 && errno == EINVAL && direct) {
		fd = open(o->path, flags);
		if (fd >= 0)
			log_info("disk %s: O_DIRECT not supported here, using the page cache",
				 o->path);
	}
	if (fd < 0 && errno == EISDIR)
		return disk_fail(err, errlen, -EISDIR,
				 "disk %s: is a directory", o->path);
	if (fd < 0)
		return disk_fail(err, errlen, -errno, "disk %s: %s", o->path,
				 strerror(errno));
	ret = disk_setup(d, fd, o, err, errlen);
	if (ret)
		close(fd);
	return ret;
}

void disk_close(struct disk *d)
{
	if (d->map)
		munmap(d->map, (size_t)d->size);
	d->map = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	/* Only a snapshot owns @base_fd (a zeroed disk holds 0 there). */
	if (d->snapshot && d->base_fd >= 0)
		close(d->base_fd);
	d->base_fd = -1;
	disk_overlay_free(d->ov);
	d->ov = NULL;
	d->snapshot = false;
	free(d->path);
	d->path = NULL;
}
