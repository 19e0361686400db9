// SPDX-License-Identifier: Apache-2.0
/*
 * A Diff snapshot's memory file onto its base: every extent of data in
 * the diff (the pages it wrote; its holes are the pages that did not
 * change) copied to the same offset of the base, which then restores
 * with the Diff's state file. Firecracker's rebase-snap does the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/snap.h"

#define COPY_CHUNK (1u << 20)

int snap_pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = pwrite(fd, b, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		b += k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

static int copy_range(int from, int to, off_t off, off_t end, uint8_t *buf)
{
	while (off < end) {
		size_t n = end - off > COPY_CHUNK ? COPY_CHUNK :
						     (size_t)(end - off);
		ssize_t r = pread(from, buf, n, off);
		int ret;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		ret = snap_pwrite_all(to, buf, (size_t)r, off);
		if (ret)
			return ret;
		off += r;
	}
	return 0;
}

int snap_rebase(const char *base, const char *diff, uint64_t *copied,
		char *err, size_t errlen)
{
	struct stat sb, sd;
	uint8_t *buf = NULL;
	int fb = -1, fd = -1, ret = 0;
	off_t pos = 0, data, hole;

	*copied = 0;
	fb = open(base, O_WRONLY | O_CLOEXEC);
	if (fb < 0 || fstat(fb, &sb) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--base-file %s: %s", base, strerror(-ret));
		goto out;
	}
	fd = open(diff, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sd) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--diff-file %s: %s", diff, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(sb.st_mode) || !S_ISREG(sd.st_mode) ||
	    sb.st_size != sd.st_size) {
		snprintf(err, errlen, "--diff-file %s (%lld bytes) and "
			 "--base-file %s (%lld bytes): two memory files of one "
			 "guest's RAM have the same size", diff,
			 (long long)sd.st_size, base, (long long)sb.st_size);
		ret = -EINVAL;
		goto out;
	}
	if (sb.st_dev == sd.st_dev && sb.st_ino == sd.st_ino) {
		snprintf(err, errlen, "--diff-file %s is the base file", diff);
		ret = -EINVAL;
		goto out;
	}
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while (pos < sd.st_size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (data < 0 || hole < 0) {
			ret = -errno;
			snprintf(err, errlen, "--diff-file %s: %s", diff,
				 strerror(-ret));
			goto out;
		}
		ret = copy_range(fd, fb, data, hole, buf);
		if (ret) {
			snprintf(err, errlen, "copying %s to %s: %s", diff,
				 base, strerror(-ret));
			goto out;
		}
		*copied += (uint64_t)(hole - data);
		pos = hole;
	}
	if (fsync(fb) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--base-file %s: %s", base,
			 strerror(-ret));
	}
out:
	free(buf);
	if (fb >= 0)
		close(fb);
	if (fd >= 0)
		close(fd);
	return ret;
}
