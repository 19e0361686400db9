// SPDX-License-Identifier: Apache-2.0
/*
 * The snapshot benchmark's stopwatch (tests/bench/snapshot-bench.sh):
 * starts a VMM with its console on a pipe and times what it is told to,
 * from the exec, against the guest's console lines (the boot-time guest
 * with microvm.boot.tick: "BOOT-TICK N" every 10 ms once /init runs).
 * Talks to microvm's API (HTTP on a Unix socket) or QEMU's QMP itself,
 * on one connection, so no client's start is timed. Static.
 *
 * Usage: snapshot-probe MODE [--sock PATH] [--boot JSON] [--machine JSON]
 *          [--state PATH] [--mem PATH] [--hold S] [--ready PREFIX]
 *          -- PROGRAM ARGS...
 * MODE:
 *   boot      ms to "BOOT-MARK: init" and to the first tick (a cold boot)
 *   fc-save   boot through the API (--boot, --machine, InstanceStart),
 *             first tick, pause, PUT /snapshot/create (--state, --mem):
 *             its ms
 *   restore   ms to the first tick (microvm --restore, QEMU -incoming)
 *   fc-load   the API's socket, PUT /snapshot/load (--state, --mem,
 *             resume_vm): ms from the exec and from the request to the
 *             first tick
 *   qmp-save  QEMU -S: cont, first tick, migrate to "exec:cat > --mem"
 *             while it runs: ms until completed
 * After the last timing: --hold S seconds more, then the resident KiB of
 * the mapping of --mem (the pages a restore faulted in), and the child
 * is killed. --ready: the console line fc-save waits for before it
 * pauses (default the first tick). One line on stdout:
 * "snap MODE key=value ...".
 * Exit: 0, 1 on any failure (a line on stderr).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mode, *sock_path, *boot_json, *machine_json;
static const char *state_path, *mem_path;
static const char *ready = "BOOT-TICK"; /* --ready: the guest is up */
static unsigned int hold_s;
static pid_t child;
static int con_fd = -1, ctl_fd = -1;
static char line[4096];
static size_t line_len;
static double t_exec;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fail(const char *what)
{
	fprintf(stderr, "snapshot-probe %s: %s\n", mode, what);
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

/* The next console line that starts with @prefix, or fail after @ms. */
static double wait_line(const char *prefix, double ms)
{
	double end = now_ms() + ms;

	for (;;) {
		struct pollfd p = { .fd = con_fd, .events = POLLIN };
		double left = end - now_ms();
		char c;
		ssize_t n;

		if (left <= 0)
			fail(prefix);
		if (poll(&p, 1, (int)left + 1) <= 0)
			continue;
		n = read(con_fd, &c, 1);
		if (n <= 0)
			fail("console closed");
		if (c == '\r')
			continue;
		if (c != '\n') {
			if (line_len < sizeof(line) - 1)
				line[line_len++] = c;
			continue;
		}
		line[line_len] = 0;
		line_len = 0;
		if (!strncmp(line, prefix, strlen(prefix)))
			return now_ms();
	}
}

static void spawn(char **argv)
{
	int p[2];

	if (pipe(p))
		fail("pipe");
	t_exec = now_ms();
	child = fork();
	if (child < 0)
		fail("fork");
	if (!child) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	con_fd = p[0];
}

static void ctl_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	double end = now_ms() + 30000;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	while (now_ms() < end) {
		ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (ctl_fd >= 0 &&
		    !connect(ctl_fd, (struct sockaddr *)&a, sizeof(a)))
			return;
		close(ctl_fd);
		usleep(1000);
	}
	fail("no control socket");
}

/* Read until @end_mark is in the answer; the answer in @buf. */
static void ctl_read(char *buf, size_t cap, const char *end_mark)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(ctl_fd, buf + len, cap - 1 - len);

		if (n <= 0)
			fail("control socket closed");
		len += (size_t)n;
		buf[len] = 0;
		if (strstr(buf, end_mark) || len >= cap - 1)
			return;
	}
}

/* One HTTP/1.1 request on the kept connection; its status must be 204. */
static void http(const char *method, const char *path, const char *body)
{
	char req[8192], ans[4096];
	int n;

	n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: localhost\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n%s", method, path,
		     strlen(body), body);
	if (n < 0 || (size_t)n >= sizeof(req) ||
	    write(ctl_fd, req, (size_t)n) != n)
		fail("request");
	ctl_read(ans, sizeof(ans), "\r\n\r\n");
	if (strncmp(ans, "HTTP/1.1 204", 12)) {
		fprintf(stderr, "%s %s: %s\n", method, path, ans);
		fail("request refused");
	}
}

/* One QMP command; its answer must be a "return". */
static void qmp(const char *cmd)
{
	char ans[8192];

	if (write(ctl_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		fail("qmp write");
	for (;;) {
		ctl_read(ans, sizeof(ans), "\n");
		if (strstr(ans, "\"error\"")) {
			fprintf(stderr, "%s: %s\n", cmd, ans);
			fail("qmp error");
		}
		if (strstr(ans, "\"return\""))
			return;
	}
}

/* Resident KiB of the child's mappings of @path (/proc/PID/smaps: a
 * mapping's line starts with its lowercase hex range, its keys follow). */
static long mapping_kb(const char *path)
{
	char name[64], buf[512];
	long kb = 0, v;
	int in = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/smaps", (int)child);
	f = fopen(name, "r");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		if (isxdigit((unsigned char)buf[0]) &&
		    !isupper((unsigned char)buf[0]))
			in = strstr(buf, path) != NULL;
		else if (in && sscanf(buf, "Rss: %ld kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	char body[8192];
	double t0, t1, t2;
	int i;

	if (argc < 3)
		fail("usage");
	mode = argv[1];
	for (i = 2; i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--sock")) sock_path = v;
		else if (!strcmp(o, "--boot")) boot_json = v;
		else if (!strcmp(o, "--machine")) machine_json = v;
		else if (!strcmp(o, "--state")) state_path = v;
		else if (!strcmp(o, "--mem")) mem_path = v;
		else if (!strcmp(o, "--hold")) hold_s = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--ready")) ready = v;
		else fail("unknown option");
	}
	if (i >= argc || strcmp(argv[i], "--"))
		fail("no -- PROGRAM");
	signal(SIGPIPE, SIG_IGN);
	spawn(argv + i + 1);
	printf("snap %s", mode);
	if (!strcmp(mode, "boot")) {
		t1 = wait_line("BOOT-MARK: init", 300000);
		t2 = wait_line("BOOT-TICK", 60000);
		printf(" init_ms=%.1f tick_ms=%.1f", t1 - t_exec, t2 - t_exec);
	} else if (!strcmp(mode, "restore")) {
		t1 = wait_line("BOOT-TICK", 60000);
		printf(" tick_ms=%.1f", t1 - t_exec);
	} else if (!strcmp(mode, "fc-save")) {
		ctl_connect();
		http("PUT", "/boot-source", boot_json);
		http("PUT", "/machine-config", machine_json);
		http("PUT", "/actions", "{\"action_type\": \"InstanceStart\"}");
		wait_line(ready, 300000);
		http("PATCH", "/vm", "{\"state\": \"Paused\"}");
		snprintf(body, sizeof(body), "{\"snapshot_type\": \"Full\", "
			 "\"snapshot_path\": \"%s\", \"mem_file_path\": "
			 "\"%s\"}", state_path, mem_path);
		t0 = now_ms();
		http("PUT", "/snapshot/create", body);
		printf(" create_ms=%.1f", now_ms() - t0);
	} else if (!strcmp(mode, "fc-load")) {
		ctl_connect();
		snprintf(body, sizeof(body), "{\"snapshot_path\": \"%s\", "
			 "\"mem_backend\": {\"backend_type\": \"File\", "
			 "\"backend_path\": \"%s\"}, \"resume_vm\": true}",
			 state_path, mem_path);
		t0 = now_ms();
		http("PUT", "/snapshot/load", body);
		t2 = now_ms();
		t1 = wait_line("BOOT-TICK", 60000);
		printf(" tick_ms=%.1f request_tick_ms=%.1f load_request_ms=%.1f",
		       t1 - t_exec, t1 - t0, t2 - t0);
	} else if (!strcmp(mode, "qmp-save")) {
		char ans[4096];

		ctl_connect();
		ctl_read(ans, sizeof(ans), "\n"); /* greeting */
		qmp("{\"execute\": \"qmp_capabilities\"}\n");
		qmp("{\"execute\": \"cont\"}\n");
		wait_line("BOOT-TICK", 300000);
		snprintf(body, sizeof(body), "{\"execute\": \"migrate\", "
			 "\"arguments\": {\"uri\": \"exec:cat > %s\"}}\n",
			 mem_path);
		t0 = now_ms();
		qmp(body);
		for (;;) {
			const char *q = "{\"execute\": \"query-migrate\"}\n";

			if (write(ctl_fd, q, strlen(q)) != (ssize_t)strlen(q))
				fail("qmp write");
			ctl_read(ans, sizeof(ans), "\n");
			if (strstr(ans, "\"completed\""))
				break;
			if (strstr(ans, "\"failed\""))
				fail("migration failed");
			usleep(1000);
		}
		printf(" create_ms=%.1f", now_ms() - t0);
	} else {
		fail("unknown mode");
	}
	if (hold_s) {
		sleep(hold_s);
		if (mem_path)
			printf(" mem_rss_kb=%ld", mapping_kb(mem_path));
	}
	printf("\n");
	fflush(stdout);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
