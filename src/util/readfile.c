// SPDX-License-Identifier: Apache-2.0
#include "util/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int read_bounded(const char *path, size_t max, char **out, size_t *len,
		 const char **step)
{
	size_t n = 0, cap = 0;
	char *buf = NULL, *nb;
	ssize_t r = 0;
	int fd, saved;

	*step = "open";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*step = "read";
	while (n <= max) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16384;
			if (cap > max + 1)
				cap = max + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				r = -1;
				errno = ENOMEM;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	saved = errno;
	close(fd);
	if (r < 0 || n > max) {
		free(buf);
		return r < 0 ? -saved : -E2BIG;
	}
	*out = buf;
	*len = n;
	return 0;
}
