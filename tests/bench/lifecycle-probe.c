// SPDX-License-Identifier: Apache-2.0
/*
 * lifecycle-probe: runs a VMM (microvm or QEMU) and times its control
 * plane: process start to its control socket accepting a connection and
 * answering, the start request to the guest /init's console marker, and
 * pause/resume round trips; then samples the VMM's memory with the guest
 * idle. One persistent connection per VMM: HTTP/1.1 keep-alive for
 * Firecracker's API (microvm --api-sock), QMP for QEMU. Static; runs
 * where the VMMs run (inside L1 for tests/bench/lifecycle-bench.sh).
 *
 * Usage: lifecycle-probe --vmm NAME --run K --api http|qmp|none
 *          [--sock PATH] [--guest-mib M] [--cycles N] [--settle S]
 *          [--boot JSON] [--machine JSON] [--log FILE] -- PROGRAM ARGS...
 * http: PUT /boot-source JSON and /machine-config JSON, then InstanceStart;
 * qmp: PROGRAM was started with -S; qmp_capabilities, then "cont";
 * none: PROGRAM boots at once (no control socket; memory only).
 * Output, one key=value record on stdout:
 *   lc vmm= run= connect_ms= answer_ms= cpu_ms= start_to_init_ms=
 *      pause_min_ms= pause_med_ms= pause_p90_ms= resume_min_ms=
 *      resume_med_ms= resume_p90_ms= cycles= rss_kb= overhead_kb=
 * connect_ms: exec to the first accepted connect(); answer_ms: exec to the
 * first answer (QMP's greeting, or GET / answered); cpu_ms: the VMM's CPU
 * time (every thread, /proc/PID/task/{*}/schedstat) at that answer.
 */
#define _GNU_SOURCE
#include <dirent.h>
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

#define MAX_CYCLES 1000
#define MARK_INIT "BOOT-MARK: init"

static const char *vmm = "?", *api = "none", *sock_path;
static const char *boot_json, *machine_json;
static unsigned int run_no, cycles = 20, settle = 3;
static unsigned long guest_kb = 256 * 1024;
static pid_t child;
static int con_fd = -1, ctl_fd = -1;
static FILE *con_log;
static char con_line[4096];
static size_t con_len;
static int marker_seen;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fail(const char *what)
{
	fprintf(stderr, "lifecycle-probe: %s %s run %u: %s\n", vmm, api,
		run_no, what);
	printf("lc vmm=%s run=%u error=\"%s\"\n", vmm, run_no, what);
	fflush(stdout);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	exit(1);
}

/* Copy what the console pipe holds to the log; note the /init marker. */
static void console_drain(void)
{
	char buf[4096];
	ssize_t n, i;

	while ((n = read(con_fd, buf, sizeof(buf))) > 0) {
		if (con_log)
			fwrite(buf, 1, n, con_log);
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n' && con_len < sizeof(con_line) - 1) {
				con_line[con_len++] = buf[i];
				continue;
			}
			con_line[con_len] = 0;
			if (strstr(con_line, MARK_INIT))
				marker_seen = 1;
			con_len = 0;
		}
	}
}

/* Wait up to @ms for the console marker; return 0 when it came. */
static int console_wait_marker(double ms)
{
	double end = now_ms() + ms;
	struct pollfd p = { .fd = con_fd, .events = POLLIN };

	while (!marker_seen && now_ms() < end) {
		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			return -1;
		console_drain();
		if (p.revents & POLLHUP && !marker_seen)
			return -1;
	}
	return marker_seen ? 0 : -1;
}

/* The VMM's CPU time in ms: the sum of its threads' schedstat run time. */
static double cpu_ms(pid_t pid)
{
	char path[320];
	unsigned long long ns, sum = 0;
	struct dirent *d;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
			 (int)pid, d->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	closedir(dir);
	return sum / 1e6;
}

/* VmRSS, and Rss minus the guest RAM mapping's (the largest mapping of at
 * least the guest's size), from /proc/PID/smaps. */
static void rss_sample(pid_t pid, unsigned long *rss, unsigned long *over)
{
	char path[64], line[512];
	unsigned long lo, hi, size = 0, map_rss = 0, ram_size = 0, ram_rss = 0;
	FILE *f;

	*rss = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		fail("cannot read smaps");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			size = (hi - lo) >> 10;
			continue;
		}
		if (strncmp(line, "Rss:", 4))
			continue;
		map_rss = strtoul(line + 4, NULL, 10);
		*rss += map_rss;
		if (size >= guest_kb && size > ram_size) {
			ram_size = size;
			ram_rss = map_rss;
		}
	}
	fclose(f);
	*over = *rss - ram_rss;
}

static int ctl_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read from the control socket into @buf until @done says the answer is
 * whole; return its length or -1. Keeps the console drained meanwhile. */
static ssize_t ctl_read(char *buf, size_t cap, int (*done)(const char *, size_t))
{
	struct pollfd p[2] = { { .fd = ctl_fd, .events = POLLIN },
			       { .fd = con_fd, .events = POLLIN } };
	double end = now_ms() + 60000;
	size_t len = 0;
	ssize_t n;

	while (len == 0 || !done(buf, len)) {
		if (now_ms() > end || len >= cap - 1)
			return -1;
		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			return -1;
		if (p[1].revents)
			console_drain();
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(ctl_fd, buf + len, cap - 1 - len);
		if (n <= 0)
			return -1;
		len += n;
		buf[len] = 0;
	}
	return len;
}

/* An HTTP answer is whole when its headers and Content-Length bytes are. */
static int http_done(const char *b, size_t len)
{
	const char *end = strstr(b, "\r\n\r\n"), *cl;

	if (!end)
		return 0;
	cl = strcasestr(b, "Content-Length:");
	if (!cl || cl > end)
		return 1;
	return len >= (size_t)(end + 4 - b) + strtoul(cl + 15, NULL, 10);
}

/* A QMP answer is whole at a line holding "return" or "error" (events and
 * the greeting are skipped by the caller's @want). */
static int qmp_done(const char *b, size_t len)
{
	return len && b[len - 1] == '\n' &&
	       (strstr(b, "\"return\"") || strstr(b, "\"error\"") ||
		strstr(b, "\"QMP\""));
}

/* One request on the persistent connection; return its round trip in ms.
 * http: @req is "METHOD PATH" and @body the JSON or NULL; the status must
 * be @want. qmp: @req is the command; the answer must hold "return". */
static double ctl_call(const char *req, const char *body, int want)
{
	char out[2048], in[8192], method[16], path[128];
	double t0 = now_ms();
	int n;

	if (!strcmp(api, "qmp")) {
		n = snprintf(out, sizeof(out), "{\"execute\":\"%s\"}\n", req);
	} else {
		if (sscanf(req, "%15s %127s", method, path) != 2)
			fail("bad request");
		n = snprintf(out, sizeof(out),
			     "%s %s HTTP/1.1\r\nHost: localhost\r\n"
			     "Accept: application/json\r\n"
			     "Content-Type: application/json\r\n"
			     "Content-Length: %zu\r\n\r\n%s", method, path,
			     body ? strlen(body) : 0, body ? body : "");
	}
	if (n >= (int)sizeof(out) || write(ctl_fd, out, n) != n)
		fail("cannot send a request");
	if (ctl_read(in, sizeof(in), strcmp(api, "qmp") ? http_done : qmp_done) < 0)
		fail("no answer");
	if (!strcmp(api, "qmp")) {
		if (!strstr(in, "\"return\"")) {
			fprintf(stderr, "lifecycle-probe: %s -> %s\n", req, in);
			fail("QMP refused a command");
		}
	} else if (strncmp(in, "HTTP/1.1 ", 9) || atoi(in + 9) != want) {
		fprintf(stderr, "lifecycle-probe: %s -> %.200s\n", req, in);
		fail("unexpected HTTP status");
	}
	return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The value at @q (0..1) of @v sorted, nearest rank. */
static double quantile(double *v, unsigned int n, double q)
{
	unsigned int k = (unsigned int)(q * n + 0.999999);

	qsort(v, n, sizeof(*v), cmp_double);
	return v[(k ? k : 1) - 1];
}

static pid_t spawn(char **argv, int *out)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	*out = p[0];
	return pid;
}

/* Connect as soon as the socket accepts, then take the first answer. */
static void ctl_open(double t_exec, double *conn_ms, double *answer_ms,
		     double *cpu)
{
	char in[4096];

	while ((ctl_fd = ctl_connect()) < 0) {
		if (now_ms() - t_exec > 120000 || waitpid(child, NULL, WNOHANG))
			fail("the control socket never accepted");
		console_drain();
		usleep(1000);
	}
	*conn_ms = now_ms() - t_exec;
	if (!strcmp(api, "qmp")) {
		if (ctl_read(in, sizeof(in), qmp_done) < 0 || !strstr(in, "\"QMP\""))
			fail("no QMP greeting");
	} else {
		ctl_call("GET /", NULL, 200);
	}
	*answer_ms = now_ms() - t_exec;
	*cpu = cpu_ms(child);
}

static double pause_resume(double *pause_min, double *pause_p90,
			   double *resume_min, double *resume_med,
			   double *resume_p90)
{
	static double p[MAX_CYCLES], r[MAX_CYCLES];
	int http = strcmp(api, "qmp");
	unsigned int i;
	double med;

	for (i = 0; i < cycles; i++) {
		p[i] = http ? ctl_call("PATCH /vm", "{\"state\": \"Paused\"}", 204)
			    : ctl_call("stop", NULL, 0);
		r[i] = http ? ctl_call("PATCH /vm", "{\"state\": \"Resumed\"}", 204)
			    : ctl_call("cont", NULL, 0);
	}
	med = quantile(p, cycles, 0.5);
	*pause_min = p[0]; /* sorted by quantile() */
	*pause_p90 = quantile(p, cycles, 0.9);
	*resume_med = quantile(r, cycles, 0.5);
	*resume_min = r[0];
	*resume_p90 = quantile(r, cycles, 0.9);
	return med;
}

static void usage(void)
{
	fprintf(stderr, "usage: lifecycle-probe --vmm NAME --run K "
		"--api http|qmp|none [--sock PATH] [--guest-mib M] "
		"[--cycles N] [--settle S] [--boot JSON] [--machine JSON] "
		"[--log FILE] -- PROGRAM ARGS...\n");
	exit(2);
}

static void parse_args(int argc, char **argv, int *first)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(o, "--vmm")) vmm = v;
		else if (!strcmp(o, "--run")) run_no = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--api")) api = v;
		else if (!strcmp(o, "--sock")) sock_path = v;
		else if (!strcmp(o, "--guest-mib")) guest_kb = strtoul(v, NULL, 10) * 1024;
		else if (!strcmp(o, "--cycles")) cycles = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--settle")) settle = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--boot")) boot_json = v;
		else if (!strcmp(o, "--machine")) machine_json = v;
		else if (!strcmp(o, "--log")) {
			con_log = fopen(v, "w");
			if (!con_log) { perror(v); exit(2); }
			setvbuf(con_log, NULL, _IONBF, 0);
		} else usage();
	}
	if (i + 1 >= argc || !guest_kb || cycles > MAX_CYCLES ||
	    (strcmp(api, "http") && strcmp(api, "qmp") && strcmp(api, "none")) ||
	    (strcmp(api, "none") && !sock_path) ||
	    (!strcmp(api, "http") && (!boot_json || !machine_json)) ||
	    (strcmp(api, "none") && !cycles))
		usage();
	*first = i + 1;
}

int main(int argc, char **argv)
{
	double t_exec, t_start, conn = -1, answer = -1, cpu = -1, to_init;
	double pmin = -1, pmed = -1, p90 = -1, rmin = -1, rmed = -1, r90 = -1;
	unsigned long rss, over;
	int first, status;

	parse_args(argc, argv, &first);
	signal(SIGPIPE, SIG_IGN);
	t_exec = now_ms();
	child = spawn(argv + first, &con_fd);
	if (child < 0)
		fail("cannot start the VMM");
	if (strcmp(api, "none"))
		ctl_open(t_exec, &conn, &answer, &cpu);
	if (!strcmp(api, "http")) {
		ctl_call("PUT /boot-source", boot_json, 204);
		ctl_call("PUT /machine-config", machine_json, 204);
	} else if (!strcmp(api, "qmp")) {
		ctl_call("qmp_capabilities", NULL, 0);
	}
	t_start = now_ms();
	if (!strcmp(api, "http"))
		ctl_call("PUT /actions", "{\"action_type\": \"InstanceStart\"}", 204);
	else if (!strcmp(api, "qmp"))
		ctl_call("cont", NULL, 0);
	if (console_wait_marker(600000))
		fail("no /init marker on the console");
	to_init = now_ms() - (strcmp(api, "none") ? t_start : t_exec);
	/* The guest sleeps now; memory is sampled with the API idle. */
	sleep(settle);
	console_drain();
	rss_sample(child, &rss, &over);
	if (strcmp(api, "none"))
		pmed = pause_resume(&pmin, &p90, &rmin, &rmed, &r90);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	printf("lc vmm=%s run=%u connect_ms=%.1f answer_ms=%.1f cpu_ms=%.1f "
	       "start_to_init_ms=%.1f pause_min_ms=%.2f pause_med_ms=%.2f "
	       "pause_p90_ms=%.2f resume_min_ms=%.2f resume_med_ms=%.2f "
	       "resume_p90_ms=%.2f cycles=%u rss_kb=%lu overhead_kb=%lu\n",
	       vmm, run_no, conn, answer, cpu, to_init, pmin, pmed, p90, rmin,
	       rmed, r90, strcmp(api, "none") ? cycles : 0, rss, over);
	return 0;
}
