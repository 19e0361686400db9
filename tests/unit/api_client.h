/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small blocking HTTP client on a Unix socket for the API server's
 * tests: connect with a receive timeout, send all of a request, read one
 * response (head, then Content-Length bytes of body), take its status.
 */
#ifndef MICROVM_TEST_API_CLIENT_H
#define MICROVM_TEST_API_CLIENT_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* Blocking socket connected to @path, reads time out after @timeout_ms. */
static inline int cli_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int cli_send(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One response into @buf (NUL-terminated): the head, then the body its
 * Content-Length announces. Return: its length, 0 on EOF before any
 * byte, -1 on a timeout, an error or a response that does not fit.
 */
static inline ssize_t cli_read_response(int fd, char *buf, size_t cap)
{
	size_t got = 0, want = 0;
	char *end = NULL;

	buf[0] = '\0';
	for (;;) {
		ssize_t n;

		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			const char *cl = strcasestr(buf, "Content-Length:");

			want = (size_t)(end + 4 - buf);
			if (cl && cl < end)
				want += strtoul(cl + 15, NULL, 10);
		}
		if (end && got >= want)
			return (ssize_t)got;
		if (got + 1 >= cap)
			return -1;
		n = recv(fd, buf + got, end ? want - got : 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 && !got ? 0 : -1;
		got += (size_t)n;
		buf[got] = '\0';
	}
}

/* The status code of a response, or -1. */
static inline int cli_status(const char *resp)
{
	int st;

	return sscanf(resp, "HTTP/1.1 %d ", &st) == 1 ? st : -1;
}

/* The body of a response (after the head). */
static inline const char *cli_body(const char *resp)
{
	const char *end = strstr(resp, "\r\n\r\n");

	return end ? end + 4 : "";
}

/* Connect, send @req, read one response: its status, or -1. */
static inline int cli_roundtrip(const char *path, const char *req,
				char *buf, size_t cap)
{
	int fd = cli_connect(path, 5000), st = -1;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	if (!cli_send(fd, req, strlen(req)) &&
	    cli_read_response(fd, buf, cap) > 0)
		st = cli_status(buf);
	close(fd);
	return st;
}

#endif
