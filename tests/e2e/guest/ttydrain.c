// SPDX-License-Identifier: Apache-2.0
/*
 * ttydrain: wait until everything written to a terminal has left it
 * (tcdrain), so that a VM which powers off right after a program ends
 * does not cut that program's serial output short.
 *
 * Usage: ttydrain DEVICE...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int i, fd, ret = 0;

	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_WRONLY | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 || tcdrain(fd) < 0) {
			fprintf(stderr, "ttydrain: %s: %s\n", argv[i],
				strerror(errno));
			ret = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	return ret;
}
