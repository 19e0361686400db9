// SPDX-License-Identifier: Apache-2.0
/*
 * A minimal API client for the arm64 L1 (its busybox has no curl and its
 * nc no Unix sockets): one HTTP/1.1 PUT of a JSON body to microvm's API
 * socket (or a PATCH, when METHOD says so), then the status code and the
 * body on one line:
 *	api-put SOCKET PATH JSON [METHOD]
 *		->  "API-PUT: 204" or "API-PUT: 400 {...}"
 * Exit status: 0 on a 2xx answer, 1 on another answer, 2 when the socket
 * cannot be reached or the answer is not HTTP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int put_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[4096], resp[4096], *body;
	size_t got = 0;
	ssize_t r;
	int fd, n, code;

	if ((argc != 4 && argc != 5) ||
	    strlen(argv[1]) >= sizeof(sa.sun_path) ||
	    (argc == 5 && strcmp(argv[4], "PUT") && strcmp(argv[4], "PATCH"))) {
		fprintf(stderr, "usage: api-put SOCKET PATH JSON [PUT|PATCH]\n");
		return 2;
	}
	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: localhost\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     argc == 5 ? argv[4] : "PUT", argv[2], strlen(argv[3]),
		     argv[3]);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "api-put: request too long\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    put_all(fd, req, (size_t)n) < 0) {
		perror("api-put");
		return 2;
	}
	while (got < sizeof(resp) - 1 &&
	       (r = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)r;
	resp[got] = 0;
	close(fd);
	if (sscanf(resp, "HTTP/1.%*d %d", &code) != 1) {
		fprintf(stderr, "api-put: not an HTTP answer: %.80s\n", resp);
		return 2;
	}
	body = strstr(resp, "\r\n\r\n");
	printf("API-PUT: %d %s\n", code, body ? body + 4 : "");
	return code >= 200 && code < 300 ? 0 : 1;
}
