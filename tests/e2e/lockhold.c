// SPDX-License-Identifier: Apache-2.0
/*
 * Test helper for the disk-lock bad-input case (bad-input.sh disk_locked):
 * takes an OFD write lock on a whole file, the kind of lock microvm takes
 * on a read-write image, prints "locked" once it holds it, and keeps it
 * until it is killed.
 *
 * Usage: lockhold FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = 0,
		.l_len = 0,
	};
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: lockhold FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "lockhold: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl)) {
		fprintf(stderr, "lockhold: cannot lock %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	for (;;)
		pause();
}
