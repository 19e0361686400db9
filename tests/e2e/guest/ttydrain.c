// SPDX-License-Identifier: Apache-2.0
/*
 * ttydrain: wait until everything written to a terminal has left it
 * (tcdrain), so that a VM which powers off right after a program ends
 * does not cut that program's serial output short.
 *
 * Usage: ttydrain SECONDS DEVICE...   (gives up after SECONDS)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static void drain_timeout(int sig)
{
	static const char msg[] = "ttydrain: output still pending, giving up\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(int argc, char **argv)
{
	int i, fd, ret = 0;
	char *end;
	long secs;

	secs = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	if (argc < 3 || *end || secs <= 0) {
		fprintf(stderr, "usage: ttydrain SECONDS DEVICE...\n");
		return 2;
	}
	signal(SIGALRM, drain_timeout);
	alarm((unsigned int)secs);
	for (i = 2; i < argc; i++) {
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
