// SPDX-License-Identifier: Apache-2.0
/*
 * The API server (src/api/server.c) with real Unix-socket clients: one
 * request per handler call, keep-alive, pipelining, 100-continue, HTTP-
 * level errors as 400 with a JSON fault_message; a silent client does not
 * stall another and is dropped at its deadline; a flood (1 GiB offered,
 * or pipelined bodies never read back) costs bounded memory; 100 connects
 * leave no descriptor behind; more than API_MAX_CONNS clients wait, not
 * fail; stop with clients connected; the path must not exist and is
 * gone after stop; the tick. The seccomp class and curl are in
 * test_api_confine.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "api_client.h"
#include "api/http.h"
#include "api/server.h"
#include "api_test_handler.h"

static char sock_path[108];

static struct api_server *start_server(struct test_state *t,
				       unsigned int idle_ms)
{
	struct api_server *s = NULL;
	char err[256];

	memset(t, 0, sizeof(*t));
	if (api_server_open(&s, sock_path, test_handler, t, 0, NULL, err,
			    sizeof(err))) {
		fprintf(stderr, "api_server_open: %s\n", err);
		CHECK(0);
		return NULL;
	}
	api_server_set_limits(s, 0, idle_ms);
	CHECK_EQ(api_server_start(s), 0);
	return s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Expect: 100-continue with the body held back: the 100 comes first,
 * then, once the body is sent, the answer. */
static void test_continue(void)
{
	static const char head[] = "PUT /echo HTTP/1.1\r\nContent-Length: 2"
				   "\r\nExpect: 100-continue\r\n\r\n";
	static char buf[4096];
	int fd = cli_connect(sock_path, 5000);

	CHECK(fd >= 0);
	CHECK(!cli_send(fd, head, sizeof(head) - 1));
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      cli_status(buf) == 100 && !strstr(buf, "Content-Length"));
	CHECK(!cli_send(fd, "{}", 2));
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      cli_status(buf) == 200 && strstr(buf, "\"body\":\"{}\""));
	close(fd);
}

static void test_basic(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 0);
	static char buf[8192];
	int fd;

	if (!s)
		return;
	CHECK_EQ(cli_roundtrip(sock_path, "GET /echo HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 200);
	CHECK(strstr(buf, "Content-Type: application/json\r\n") != NULL);
	CHECK(strstr(cli_body(buf), "\"path\":\"/echo\"") != NULL);
	/* An HTTP-level error: 400, a JSON fault_message, and no handler. */
	CHECK_EQ(cli_roundtrip(sock_path, "GET /echo HTTP/9.9\r\n\r\n", buf,
			       sizeof(buf)), 400);
	CHECK(strstr(cli_body(buf),
		     "{\"fault_message\":\"unsupported HTTP version\"}"));
	CHECK(strstr(buf, "Connection: close\r\n") != NULL);
	CHECK_EQ(cli_roundtrip(sock_path, "GET /empty HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 204);
	CHECK_EQ(cli_roundtrip(sock_path, "GET /zero HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 500);
	CHECK_EQ(cli_roundtrip(sock_path, "GET /fault HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 400);
	CHECK(check_fault_json(cli_body(buf)));
	CHECK_EQ(atomic_load(&t.calls), 4);

	/* Keep-alive, then three pipelined requests in one write (the
	 * second with a body and 100-continue: the body is there already,
	 * so no 100, RFC 9110 §10.1.1), then HTTP/1.0's close. */
	fd = cli_connect(sock_path, 5000);
	CHECK(fd >= 0);
	CHECK(!cli_send(fd, "GET /echo HTTP/1.1\r\n\r\n", 22));
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      cli_status(buf) == 200);
	static const char pipe3[] =
		"GET /echo HTTP/1.1\r\n\r\n"
		"PUT /echo HTTP/1.1\r\nExpect: 100-continue\r\n"
		"Content-Length: 4\r\n\r\n{\"\"}"
		"GET /echo HTTP/1.0\r\n\r\n";
	CHECK(!cli_send(fd, pipe3, sizeof(pipe3) - 1));
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      cli_status(buf) == 200);
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      strstr(cli_body(buf), "\"body\":\"{\\\"\\\"}\""));
	CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0 &&
	      strstr(buf, "Connection: close"));
	CHECK_EQ(cli_read_response(fd, buf, sizeof(buf)), 0); /* EOF */
	close(fd);
	test_continue();
	api_server_free(s);
	CHECK(access(sock_path, F_OK) && errno == ENOENT);
}

/* The path exists: refused, as Firecracker does, naming the path. */
static void test_path_exists(void)
{
	struct api_server *s = NULL;
	char err[256] = "";
	int fd = open(sock_path, O_CREAT | O_WRONLY, 0600);

	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(api_server_open(&s, sock_path, test_handler, NULL, 0, NULL,
				 err, sizeof(err)), -EADDRINUSE);
	CHECK(strstr(err, sock_path) && strstr(err, "Address in use"));
	CHECK(!access(sock_path, F_OK)); /* not ours: left alone */
	unlink(sock_path);
	CHECK_EQ(api_server_open(&s, "", test_handler, NULL, 0, NULL, err,
				 sizeof(err)), -EINVAL);
}

/* A client that connects and says nothing: another is served at once,
 * and the silent one is closed at its deadline. */
static void test_silent_client(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 300);
	static char buf[4096];
	double t0;
	int silent, half;

	if (!s)
		return;
	silent = cli_connect(sock_path, 5000);
	half = cli_connect(sock_path, 5000);
	CHECK(silent >= 0 && half >= 0);
	CHECK(!cli_send(half, "PUT /echo HTTP/1.1\r\nContent-Le", 30));
	t0 = now_s();
	CHECK_EQ(cli_roundtrip(sock_path, "GET /echo HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 200);
	CHECK(now_s() - t0 < 0.25);
	/* Both dropped within their 300 ms deadline (plus slack). */
	CHECK_EQ(cli_read_response(silent, buf, sizeof(buf)), 0);
	CHECK_EQ(cli_read_response(half, buf, sizeof(buf)), 0);
	CHECK(now_s() - t0 < 2.0);
	close(silent);
	close(half);
	api_server_free(s);
}

static long proc_status_kb(const char *key)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			kb = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* Reset VmHWM to the current RSS (proc(5), clear_refs "5"). */
static bool reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	bool ok = fd >= 0 && write(fd, "5", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Offer @total bytes of @head then filler; stop at the first refusal. */
static size_t flood(int fd, const char *head, size_t total)
{
	static char chunk[65536];
	size_t sent = 0;

	memset(chunk, 'A', sizeof(chunk));
	if (head && cli_send(fd, head, strlen(head)))
		return 0;
	while (sent < total && !cli_send(fd, chunk, sizeof(chunk)))
		sent += sizeof(chunk);
	return sent;
}

/* 1 GiB offered as one endless header line, and as a body announced
 * at 1 GiB: a 400 each, and the peak RSS stays within 4 MiB. */
static void test_flood(void)
{
	static const char *heads[] = {
		"GET / HTTP/1.1\r\nX-Filler: ",
		"PUT /echo HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n",
	};
	struct test_state t;
	struct api_server *s = start_server(&t, 0);
	static char buf[4096];
	long base, hwm;
	size_t i;

	if (!s)
		return;
	if (!reset_hwm())
		fprintf(stderr, "clear_refs: VmHWM not reset, checked as is\n");
	base = proc_status_kb("VmRSS:");
	for (i = 0; i < 2; i++) {
		int fd = cli_connect(sock_path, 5000);

		CHECK(fd >= 0);
		flood(fd, heads[i], 1UL << 30);
		CHECK(cli_read_response(fd, buf, sizeof(buf)) > 0);
		CHECK_EQ(cli_status(buf), 400);
		CHECK(strstr(cli_body(buf), "fault_message") != NULL);
		close(fd);
	}
	hwm = proc_status_kb("VmHWM:");
	fprintf(stderr, "flood: VmRSS %ld kB before, VmHWM %ld kB after\n",
		base, hwm);
	CHECK(base > 0 && hwm > 0 && hwm - base < 4096);
	CHECK_EQ(atomic_load(&t.calls), 0);
	api_server_free(s);
}

/* Pipelined 50 KB bodies never read back: the server stops reading once
 * an answer waits, so memory stays bounded, and the client is dropped
 * at its deadline. */
static void test_never_reads(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 500);
	static char req[HTTP_BODY_MAX_DEFAULT + 128];
	size_t n, sent = 0;
	long base, hwm;
	int fd, fl;

	if (!s)
		return;
	n = (size_t)sprintf(req, "PUT /echo HTTP/1.1\r\nContent-Length: %d"
			    "\r\n\r\n", HTTP_BODY_MAX_DEFAULT);
	memset(req + n, 'x', HTTP_BODY_MAX_DEFAULT);
	n += HTTP_BODY_MAX_DEFAULT;
	reset_hwm();
	base = proc_status_kb("VmRSS:");
	fd = cli_connect(sock_path, 5000);
	CHECK(fd >= 0);
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (int i = 0; i < 400; i++) {
		ssize_t w = send(fd, req, n, MSG_NOSIGNAL);

		if (w > 0)
			sent += (size_t)w;
		else
			usleep(2000);
	}
	hwm = proc_status_kb("VmHWM:");
	fprintf(stderr, "never reads: %zu bytes sent, %d answered, "
		"VmHWM %ld kB over %ld\n", sent, atomic_load(&t.calls), hwm,
		base);
	CHECK(hwm - base < 4096);
	CHECK(atomic_load(&t.calls) < 100);
	fcntl(fd, F_SETFL, fl);
	/* Dropped at the deadline: the answers waiting, then EOF. */
	{
		struct pollfd p = { .fd = fd, .events = POLLRDHUP };
		double t0 = now_s();

		while (now_s() - t0 < 3 && !(p.revents & (POLLRDHUP | POLLHUP)))
			poll(&p, 1, 100);
		CHECK(p.revents & (POLLRDHUP | POLLHUP));
	}
	close(fd);
	api_server_free(s);
}

static int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += !access(path, F_OK);
	}
	return n;
}

/* 100 connects in a row, each closed mid-request or after its answer:
 * no descriptor left once the server has seen them go. */
static void test_no_fd_leak(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 0);
	static char buf[4096];
	int before, after = -1, i;
	double t0;

	if (!s)
		return;
	before = count_fds();
	for (i = 0; i < 100; i++) {
		if (i % 2) {
			CHECK_EQ(cli_roundtrip(sock_path,
					       "GET /echo HTTP/1.1\r\n\r\n", buf,
					       sizeof(buf)), 200);
		} else {
			int fd = cli_connect(sock_path, 5000);

			CHECK(fd >= 0);
			cli_send(fd, "GET /ec", 7);
			close(fd);
		}
	}
	for (t0 = now_s(); now_s() - t0 < 2; usleep(10000))
		if ((after = count_fds()) == before)
			break;
	CHECK_EQ(after, before);
	api_server_free(s);
}

/* API_MAX_CONNS + 4 silent clients: the ones past the limit wait in the
 * backlog; a client with a request is served once deadlines free
 * slots, not refused. */
static void test_many_clients(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 300);
	int fds[API_MAX_CONNS + 4];
	static char buf[4096];
	size_t i;

	if (!s)
		return;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		fds[i] = cli_connect(sock_path, 5000);
		CHECK(fds[i] >= 0);
	}
	CHECK_EQ(cli_roundtrip(sock_path, "GET /echo HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 200);
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i]);
	api_server_free(s);
}

/* Stop with clients connected (one idle, one mid-body, one waiting for
 * its answer to be read): each sees EOF, the path is gone. */
static void test_stop_with_clients(void)
{
	struct test_state t;
	struct api_server *s = start_server(&t, 0);
	static char buf[4096];
	int a, b;
	double t0;

	if (!s)
		return;
	a = cli_connect(sock_path, 5000);
	b = cli_connect(sock_path, 5000);
	CHECK(a >= 0 && b >= 0);
	cli_send(b, "PUT /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nab", 44);
	CHECK_EQ(cli_roundtrip(sock_path, "GET /echo HTTP/1.1\r\n\r\n", buf,
			       sizeof(buf)), 200);
	t0 = now_s();
	api_server_stop(s);
	CHECK(now_s() - t0 < 1.0);
	CHECK_EQ(cli_read_response(a, buf, sizeof(buf)), 0);
	CHECK_EQ(cli_read_response(b, buf, sizeof(buf)), 0);
	CHECK(access(sock_path, F_OK) && errno == ENOENT);
	api_server_stop(s); /* twice is fine */
	api_server_free(s);
	close(a);
	close(b);
}

static void count_tick(void *opaque)
{
	atomic_fetch_add(&((struct test_state *)opaque)->ticks, 1);
}

static void test_tick(void)
{
	struct test_state t = { 0 };
	struct api_server *s = NULL;
	char err[256];

	CHECK_EQ(api_server_open(&s, sock_path, test_handler, &t, 20,
				 count_tick, err, sizeof(err)), 0);
	if (!s)
		return;
	CHECK_EQ(api_server_start(s), 0);
	usleep(300000);
	api_server_free(s);
	CHECK(atomic_load(&t.ticks) >= 5);
	CHECK(atomic_load(&t.ticks) <= 16);
}

int main(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/microvm-api-test-%d.sock",
		 (int)getpid());
	unlink(sock_path);
	test_basic();
	test_path_exists();
	test_silent_client();
	test_flood();
	test_never_reads();
	test_no_fd_leak();
	test_many_clients();
	test_stop_with_clients();
	test_tick();
	unlink(sock_path);
	return test_done();
}
