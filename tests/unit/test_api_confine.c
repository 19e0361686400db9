// SPDX-License-Identifier: Apache-2.0
/*
 * The API server under its seccomp class. In a forked child the server's
 * thread confines itself (CONFINE_CONTROL, mode on): it still serves
 * (everything the server calls is allowed: requests, errors, a deadline,
 * the tick's timerfd), /proc shows the thread's filter (Seccomp: 2), and
 * a handler that makes a forbidden call (socket()) ends the child by
 * SIGSYS.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "api_client.h"
#include "api_test_handler.h"
#include "api/server.h"
#include "util/confine.h"

static char sock_path[108];
static atomic_int ticks;

static void count_tick(void *opaque)
{
	(void)opaque;
	atomic_fetch_add(&ticks, 1);
}

/* Child: serve under the filter, check it, then trip it. Exits 1..7 on
 * a failure before the trip (which should never return). */
static int confined_child(void)
{
	struct api_server *s = NULL;
	char err[256], buf[4096], status[256] = "", line[256];
	int tid = -1, silent;
	FILE *f;

	if (api_server_open(&s, sock_path, test_handler, NULL, 10, count_tick,
			    err, sizeof(err)))
		return 1;
	api_server_set_limits(s, 0, 100);
	confine_control_listen_fd(api_server_listen_fd(s));
	if (confine_prepare(CONFINE_ON, err, sizeof(err)) ||
	    api_server_start(s))
		return 2;
	if (cli_roundtrip(sock_path, "GET /tid HTTP/1.1\r\n\r\n", buf,
			  sizeof(buf)) != 200 ||
	    sscanf(cli_body(buf), "{\"tid\":%d}", &tid) != 1)
		return 3;
	snprintf(line, sizeof(line), "/proc/self/task/%d/status", tid);
	f = fopen(line, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			snprintf(status, sizeof(status), "%s", line);
	if (f)
		fclose(f);
	if (strcmp(status, "Seccomp:\t2\n"))
		return 4;
	/* Every path of the server under the filter: an error, a 204, a
	 * body, a silent client dropped at its 100 ms deadline. */
	if (cli_roundtrip(sock_path, "GET / HTTP/9\r\n\r\n", buf,
			  sizeof(buf)) != 400 ||
	    cli_roundtrip(sock_path, "GET /empty HTTP/1.1\r\n\r\n", buf,
			  sizeof(buf)) != 204 ||
	    cli_roundtrip(sock_path, "PUT /echo HTTP/1.1\r\nContent-Length: "
			  "2\r\n\r\n{}", buf, sizeof(buf)) != 200)
		return 5;
	silent = cli_connect(sock_path, 2000);
	if (silent < 0 || cli_read_response(silent, buf, sizeof(buf)) != 0)
		return 6;
	close(silent);
	if (atomic_load(&ticks) < 1) /* the tick's timerfd, confined */
		return 7;
	cli_roundtrip(sock_path, "GET /forbidden HTTP/1.1\r\n\r\n", buf,
		      sizeof(buf));
	return 8; /* still alive: socket() went through */
}

static void test_confined(void)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(confined_child());
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (!WIFSIGNALED(status))
		fprintf(stderr, "confined child: exit %d\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	unlink(sock_path); /* the child died before its stop */
}

int main(void)
{
	snprintf(sock_path, sizeof(sock_path),
		 "/tmp/microvm-api-confine-%d.sock", (int)getpid());
	unlink(sock_path);
	test_confined();
	return test_done();
}
