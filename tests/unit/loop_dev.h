/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loop_dev_attach(): put a test's image file behind a free loop device
 * (512-byte blocks, detached by the kernel when the last descriptor
 * closes), so the disk tests run their block-device paths without root
 * tools. Shared by test_disk and test_disk_overlay.
 */
#ifndef MICROVM_TEST_LOOP_DEV_H
#define MICROVM_TEST_LOOP_DEV_H

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

/*
 * Attach @file to a free loop device: its path goes to @path (@pathlen
 * bytes), its open descriptor to *@loop_fd. Return: 0, or -errno when
 * that is impossible here (no /dev/loop-control, no permission).
 */
static inline int loop_dev_attach(const char *file, char *path,
				  size_t pathlen, int *loop_fd)
{
	struct loop_config cfg = { .block_size = 512 };
	int ctl, nr, lfd, bfd, tries, ret = -EBUSY;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	bfd = open(file, O_RDWR | O_CLOEXEC);
	for (tries = 0; bfd >= 0 && tries < 8 && ret == -EBUSY; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			ret = -errno;
			break;
		}
		snprintf(path, pathlen, "/dev/loop%d", nr);
		lfd = open(path, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			ret = -errno;
			break;
		}
		cfg.fd = bfd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (!ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
			*loop_fd = lfd;
			ret = 0;
			break;
		}
		ret = -errno;
		close(lfd);
	}
	if (bfd >= 0)
		close(bfd);
	close(ctl);
	return ret;
}

#endif
