// SPDX-License-Identifier: Apache-2.0
/*
 * outb: write one byte to an x86 I/O port from a guest's userspace
 * (ioperm + outb), for the VMM's exit port. The cloud kernel has no
 * /dev/port, so busybox cannot do this by itself.
 *
 * Usage: outb PORT VALUE   (numbers in C syntax: 0xf4, 42)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>

static int outb_parse(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return (*s && !*end && !errno && *out <= max) ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	unsigned long port, value;

	if (argc != 3 || outb_parse(argv[1], 0xffff, &port) ||
	    outb_parse(argv[2], 0xff, &value)) {
		fprintf(stderr, "usage: outb PORT VALUE (PORT <= 0xffff, "
			"VALUE <= 0xff)\n");
		return 2;
	}
	if (ioperm(port, 1, 1) < 0) {
		fprintf(stderr, "outb: ioperm 0x%lx: %s\n", port,
			strerror(errno));
		return 1;
	}
	outb((unsigned char)value, (unsigned short)port);
	return 0;
}
