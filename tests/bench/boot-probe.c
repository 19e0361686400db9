// SPDX-License-Identifier: Apache-2.0
/*
 * boot-probe: runs a VMM (microvm or QEMU), times its guest's boot from
 * the exec to the guest /init's console marker, and measures the VMM's
 * memory overhead: the Rss of every mapping in /proc/PID/smaps except the
 * guest RAM mapping (the largest one of at least the guest's size). Runs
 * where the VMM runs (inside L1 for tests/bench/boot-vs-qemu.sh); static.
 *
 * Usage: boot-probe --vmm NAME --run K --guest-mib M [--log FILE]
 *                   [--timeout S] [--maps N] -- PROGRAM ARGS...
 * PROGRAM's stdout (the guest console) is read here and copied to FILE;
 * its stderr is ours. Console lines containing
 *	"BOOT-MARK: init"   time from exec: exec_to_init_ms
 *	"BOOT-MARK: idle"   smaps sample, phase=idle
 *	"BOOT-MARK: io"     smaps sample, phase=io (the guest reads its disk)
 *	"BOOT-MARK: done"   PROGRAM gets 20 s to end, then SIGTERM/SIGKILL
 * Output, one key=value record per line on stdout:
 *	boot vmm=NAME run=K exec_to_init_ms=T status=N
 *	rss vmm=NAME run=K phase=P total_kb= guest_ram_kb= guest_map_kb=
 *	    overhead_kb= overhead_anon_kb= hwm_kb=
 *	map vmm=NAME run=K phase=P rss_kb= anon_kb= size_kb= name=...
 *	    (the N largest overhead mappings by Rss, with --maps N)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct map {
	unsigned long size_kb, rss_kb, anon_kb;
	char name[96];
};

static const char *vmm = "?";
static unsigned int run_no, nr_top;
static unsigned long guest_kb;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_rss(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->rss_kb < y->rss_kb ? 1 : x->rss_kb > y->rss_kb ? -1 : 0;
}

static unsigned long status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	unsigned long v = 0;
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = strtoul(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

/* One smaps sample of @pid: the rss record and the top mappings. */
static void sample(pid_t pid, const char *phase)
{
	char path[64], line[512];
	struct map *maps = NULL, *cur = NULL;
	size_t n = 0, cap = 0, i, ram = SIZE_MAX;
	unsigned long total = 0, anon = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		printf("rss vmm=%s run=%u phase=%s error=%s\n", vmm, run_no,
		       phase, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int off = 0;

		if (isdigit((unsigned char)line[0]) ||
		    (line[0] >= 'a' && line[0] <= 'f')) {
			char *nm;

			if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo,
				   &hi, &off) < 2)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				maps = realloc(maps, cap * sizeof(*maps));
				if (!maps)
					abort();
			}
			cur = &maps[n++];
			memset(cur, 0, sizeof(*cur));
			cur->size_kb = (hi - lo) >> 10;
			nm = off ? line + off : line + strlen(line);
			nm[strcspn(nm, "\n")] = 0;
			snprintf(cur->name, sizeof(cur->name), "%s",
				 *nm ? nm : "[anon]");
			continue;
		}
		if (!cur)
			continue;
		if (!strncmp(line, "Rss:", 4))
			cur->rss_kb = strtoul(line + 4, NULL, 10);
		else if (!strncmp(line, "Anonymous:", 10))
			cur->anon_kb = strtoul(line + 10, NULL, 10);
	}
	fclose(f);
	for (i = 0; i < n; i++) {
		total += maps[i].rss_kb;
		anon += maps[i].anon_kb;
		if (maps[i].size_kb >= guest_kb &&
		    (ram == SIZE_MAX || maps[i].size_kb > maps[ram].size_kb))
			ram = i;
	}
	printf("rss vmm=%s run=%u phase=%s total_kb=%lu guest_ram_kb=%lu "
	       "guest_map_kb=%lu overhead_kb=%lu overhead_anon_kb=%lu "
	       "hwm_kb=%lu\n", vmm, run_no, phase, total,
	       ram == SIZE_MAX ? 0 : maps[ram].rss_kb,
	       ram == SIZE_MAX ? 0 : maps[ram].size_kb,
	       total - (ram == SIZE_MAX ? 0 : maps[ram].rss_kb),
	       anon - (ram == SIZE_MAX ? 0 : maps[ram].anon_kb),
	       status_kb(pid, "VmHWM"));
	if (ram != SIZE_MAX)
		maps[ram].rss_kb = 0; /* not overhead */
	qsort(maps, n, sizeof(*maps), by_rss);
	for (i = 0; i < n && i < nr_top && maps[i].rss_kb; i++)
		printf("map vmm=%s run=%u phase=%s rss_kb=%lu anon_kb=%lu "
		       "size_kb=%lu name=%s\n", vmm, run_no, phase,
		       maps[i].rss_kb, maps[i].anon_kb, maps[i].size_kb,
		       maps[i].name);
	fflush(stdout);
	free(maps);
}

static void usage(void)
{
	fprintf(stderr, "usage: boot-probe --vmm NAME --run K --guest-mib M "
		"[--log FILE] [--timeout S] [--maps N] -- PROGRAM ARGS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *log_path = "/dev/null";
	double t0, deadline, init_ms = -1;
	unsigned int timeout_s = 300;
	char line[4096];
	size_t len = 0;
	int pfd[2], logfd, status = -1, i;
	bool done = false, eof = false;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--vmm"))
			vmm = argv[i + 1];
		else if (!strcmp(argv[i], "--run"))
			run_no = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--guest-mib"))
			guest_kb = strtoul(argv[i + 1], NULL, 10) << 10;
		else if (!strcmp(argv[i], "--log"))
			log_path = argv[i + 1];
		else if (!strcmp(argv[i], "--timeout"))
			timeout_s = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--maps"))
			nr_top = strtoul(argv[i + 1], NULL, 10);
		else
			usage();
	}
	if (i + 1 >= argc || !guest_kb)
		usage();
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (logfd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		perror("boot-probe");
		return 1;
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("boot-probe: fork");
		return 1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		execvp(argv[i + 1], argv + i + 1);
		perror("boot-probe: exec");
		_exit(127);
	}
	close(pfd[1]);
	deadline = t0 + timeout_s * 1e3;
	while (!eof) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		char buf[4096];
		double left = deadline - now_ms();
		ssize_t got, k;

		if (left <= 0) {
			fprintf(stderr, "boot-probe: %s run %u: %s, stopping "
				"it\n", vmm, run_no,
				done ? "did not end after the done marker" :
				       "timeout");
			kill(pid, done ? SIGTERM : SIGKILL);
			if (done) {
				done = false; /* SIGKILL next time */
				deadline = now_ms() + 5e3;
				continue;
			}
			break;
		}
		if (poll(&p, 1, (int)left + 1) <= 0)
			continue;
		got = read(pfd[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			eof = true;
			break;
		}
		if (write(logfd, buf, got) != got)
			perror("boot-probe: log");
		for (k = 0; k < got; k++) {
			if (buf[k] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[k];
				continue;
			}
			line[len] = 0;
			len = 0;
			if (strstr(line, "BOOT-MARK: init") && init_ms < 0)
				init_ms = now_ms() - t0;
			else if (strstr(line, "BOOT-MARK: idle"))
				sample(pid, "idle");
			else if (strstr(line, "BOOT-MARK: io") &&
				 !strstr(line, "io-error"))
				sample(pid, "io");
			else if (strstr(line, "BOOT-MARK: done") && !done) {
				done = true;
				deadline = now_ms() + 20e3;
			}
		}
	}
	if (waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) :
					     128 + WTERMSIG(status);
	printf("boot vmm=%s run=%u exec_to_init_ms=%.3f status=%d\n", vmm,
	       run_no, init_ms, status);
	return init_ms < 0;
}
