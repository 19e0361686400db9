// SPDX-License-Identifier: Apache-2.0
/*
 * netpeer: one TCP transfer between the L1 host and the L2 guest over
 * microvm's virtio-net device, checked byte for byte. Both ends make the
 * same pseudo-random stream from a seed, so nothing is stored and every
 * byte is compared (a hash would only say that something differs).
 *
 *   netpeer recv PORT BYTES SEED [CPU]   accept one connection on PORT,
 *                                         read BYTES and then the end
 *   netpeer send HOST PORT BYTES SEED [CPU]
 *                                         connect (retrying while the
 *                                         peer is not up yet), send,
 *                                         half-close, wait for the
 *                                         receiver's close
 *
 *   netpeer http METHOD HOST PATH [HEADER...]
 *                                         one HTTP/1.1 request to HOST
 *                                         port 80 (the metadata
 *                                         service), the whole response
 *                                         copied to stdout, read until
 *                                         the server closes
 *
 * CPU pins the process (the guest's transmit queue follows the CPU).
 * Prints one line, "NETPEER: ok recv|send port P: N bytes in T ms" or
 * "NETPEER: FAIL ...", and exits 0 or 1. Nothing waits longer than
 * NETPEER_WAIT_S without progress.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer_say.h"

#define NETPEER_WAIT_S 120
#define NETPEER_CHUNK 65536

static const char *mode = "?";
static unsigned int port;

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	char why[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	say("NETPEER: FAIL %s port %u: %s", mode, port, why);
	exit(1);
}

/* The stream: xorshift32 from the seed, four bytes a step. */
struct stream {
	uint32_t x;
	unsigned int left; /* bytes of x not handed out yet */
};

static void stream_init(struct stream *s, uint32_t seed)
{
	s->x = seed * 2654435761u + 0x6d2b79f5u;
	if (!s->x)
		s->x = 1;
	s->left = 0;
}

static uint8_t stream_next(struct stream *s)
{
	uint8_t b;

	if (!s->left) {
		s->x ^= s->x << 13;
		s->x ^= s->x >> 17;
		s->x ^= s->x << 5;
		s->left = 4;
	}
	b = (uint8_t)s->x;
	s->x = (s->x >> 8) | (s->x << 24);
	s->left--;
	return b;
}

/* Wait until @fd is ready for @events; fail after NETPEER_WAIT_S. */
static void wait_fd(int fd, short events, const char *what)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, NETPEER_WAIT_S * 1000);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		fail("%s: no progress for %d s", what, NETPEER_WAIT_S);
}

static int do_recv(unsigned long long bytes, uint32_t seed)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	static uint8_t buf[NETPEER_CHUNK];
	unsigned long long got = 0;
	struct stream s;
	long long t0;
	int one = 1, l, c;
	ssize_t n;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		fail("listen: %s", strerror(errno));
	say("NETPEER: listening port %u", port);
	wait_fd(l, POLLIN, "accept");
	c = accept(l, NULL, NULL);
	if (c < 0)
		fail("accept: %s", strerror(errno));
	t0 = ms_now();
	stream_init(&s, seed);
	for (;;) {
		wait_fd(c, POLLIN, "read");
		n = read(c, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("read after %llu bytes: %s", got, strerror(errno));
		if (!n)
			break;
		for (ssize_t i = 0; i < n; i++, got++)
			if (got < bytes && buf[i] != stream_next(&s))
				fail("byte %llu differs", got);
	}
	if (got != bytes)
		fail("%llu bytes, want %llu", got, bytes);
	close(c);
	say("NETPEER: ok recv port %u: %llu bytes in %lld ms", port, got,
	     ms_now() - t0);
	return 0;
}

static int do_send(const char *host, unsigned long long bytes,
		   uint32_t seed)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	static uint8_t buf[NETPEER_CHUNK];
	unsigned long long sent = 0;
	struct stream s;
	long long t0, give_up;
	ssize_t n;
	int c;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		fail("bad address '%s'", host);
	/* The receiver may not listen yet, nor the link be up. */
	give_up = ms_now() + NETPEER_WAIT_S * 1000LL;
	for (;;) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0)
			fail("socket: %s", strerror(errno));
		if (!connect(c, (struct sockaddr *)&a, sizeof(a)))
			break;
		if (ms_now() > give_up)
			fail("connect %s: %s", host, strerror(errno));
		close(c);
		usleep(200000);
	}
	t0 = ms_now();
	stream_init(&s, seed);
	while (sent < bytes) {
		size_t len = bytes - sent < sizeof(buf) ?
			     (size_t)(bytes - sent) : sizeof(buf);

		for (size_t i = 0; i < len; i++)
			buf[i] = stream_next(&s);
		for (size_t off = 0; off < len;) {
			wait_fd(c, POLLOUT, "write");
			n = write(c, buf + off, len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				fail("write after %llu bytes: %s", sent + off,
				     strerror(errno));
			off += (size_t)n;
		}
		sent += len;
	}
	/* The receiver closes once it has every byte. */
	if (shutdown(c, SHUT_WR))
		fail("shutdown: %s", strerror(errno));
	for (;;) {
		wait_fd(c, POLLIN, "the receiver's close");
		n = read(c, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	close(c);
	say("NETPEER: ok send port %u: %llu bytes in %lld ms", port, sent,
	     ms_now() - t0);
	return 0;
}

#define NETPEER_HTTP_MAX (1u << 20)

static int do_http(const char *method, const char *host, const char *path,
		   char **headers, int nh)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(80) };
	static char req[8192], resp[NETPEER_HTTP_MAX];
	size_t len = 0, got = 0;
	ssize_t n;
	int c, i;

	port = 80;
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		fail("bad address '%s'", host);
	len = (size_t)snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: %s"
			       "\r\n", method, path, host);
	for (i = 0; i < nh && len < sizeof(req); i++)
		len += (size_t)snprintf(req + len, sizeof(req) - len, "%s\r\n",
					headers[i]);
	if (len + 3 > sizeof(req))
		fail("request too long");
	len += (size_t)snprintf(req + len, sizeof(req) - len, "\r\n");
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		fail("connect %s:80: %s", host, strerror(errno));
	for (size_t off = 0; off < len;) {
		wait_fd(c, POLLOUT, "write");
		n = write(c, req + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write: %s", strerror(errno));
		off += (size_t)n;
	}
	while (got < sizeof(resp)) {
		wait_fd(c, POLLIN, "the response");
		n = read(c, resp + got, sizeof(resp) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("read after %zu bytes: %s", got, strerror(errno));
		if (!n)
			break;
		got += (size_t)n;
	}
	close(c);
	if (got < 12 || strncmp(resp, "HTTP/1.1 ", 9))
		fail("no HTTP response (%zu bytes)", got);
	fwrite(resp, 1, got, stdout);
	return 0;
}

static unsigned long long number(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		fail("bad %s '%s'", what, s);
	return v;
}

static void pin(const char *cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)number(cpu, "cpu"), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("cpu %s: %s", cpu, strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc >= 5 && argc <= 6 && !strcmp(argv[1], "recv")) {
		mode = "recv";
		port = (unsigned int)number(argv[2], "port");
		if (argc == 6)
			pin(argv[5]);
		return do_recv(number(argv[3], "bytes"),
			       (uint32_t)number(argv[4], "seed"));
	}
	if (argc >= 6 && argc <= 7 && !strcmp(argv[1], "send")) {
		mode = "send";
		port = (unsigned int)number(argv[3], "port");
		if (argc == 7)
			pin(argv[6]);
		return do_send(argv[2], number(argv[4], "bytes"),
			       (uint32_t)number(argv[5], "seed"));
	}
	if (argc >= 5 && !strcmp(argv[1], "http")) {
		mode = "http";
		return do_http(argv[2], argv[3], argv[4], argv + 5, argc - 5);
	}
	fprintf(stderr, "usage: netpeer recv PORT BYTES SEED [CPU]\n"
			"       netpeer send HOST PORT BYTES SEED [CPU]\n"
			"       netpeer http METHOD HOST PATH [HEADER...]\n");
	return 2;
}
