// SPDX-License-Identifier: Apache-2.0
/*
 * What a jailed process sees, for jail-test.sh: a static program the
 * jailer execs in place of microvm. It reports its ids, pid, session,
 * hostname, its root directory's entries, whether "/.." leads anywhere,
 * the jail's device nodes, every open fd, its rlimits, environment and
 * arguments, as "PROBE ..." lines on stdout and in /report.txt (stdout
 * is /dev/null under --daemonize). With --hold it then waits for /go to
 * appear (the test looks at /proc/PID from outside meanwhile), or for
 * SIGTERM (/sigterm made, exit 143); it exits with the status after --exit (default 0). "--list-root" alone only
 * lists "/" (the test runs it at the root of the jail's mount namespace).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define REPORT_MAX 65536
#define FD_SCAN_MAX 65536
#define HOLD_MS 120000

extern char **environ;

static char report[REPORT_MAX];
static size_t used;

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (used >= sizeof(report) - 1)
		return;
	memcpy(report + used, "PROBE ", 6);
	used += 6;
	va_start(ap, fmt);
	n = vsnprintf(report + used, sizeof(report) - used - 1, fmt, ap);
	va_end(ap);
	if (n > 0)
		used += (size_t)n < sizeof(report) - used - 1
				? (size_t)n : sizeof(report) - used - 1;
	report[used++] = '\n';
}

static void list_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d) {
		say("dir %s error=%s", path, strerror(errno));
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			say("entry %s/%s", strcmp(path, "/") ? path : "",
			    e->d_name);
	closedir(d);
}

static void dev_node(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		say("dev %s missing", path);
		return;
	}
	say("dev %s chr=%d major=%u minor=%u uid=%u gid=%u mode=%o", path,
	    S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev),
	    st.st_uid, st.st_gid, st.st_mode & 07777);
}

static void ids(void)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	getresuid(&r, &e, &s);
	getresgid(&rg, &eg, &sg);
	say("ids ruid=%u euid=%u suid=%u rgid=%u egid=%u sgid=%u groups=%d",
	    r, e, s, rg, eg, sg, getgroups(0, NULL));
	say("pid=%d ppid=%d sid=%d", (int)getpid(), (int)getppid(),
	    (int)getsid(0));
}

static void fds_and_limits(void)
{
	struct rlimit nofile, fsize;
	struct stat st;
	int n = 0;

	for (int fd = 0; fd < FD_SCAN_MAX; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			say("fd %d", fd);
	getrlimit(RLIMIT_NOFILE, &nofile);
	getrlimit(RLIMIT_FSIZE, &fsize);
	say("rlimit nofile=%llu fsize=%lld",
	    (unsigned long long)nofile.rlim_cur,
	    fsize.rlim_cur == RLIM_INFINITY ? -1LL
					     : (long long)fsize.rlim_cur);
	for (char **e = environ; *e; e++)
		n++;
	say("env count=%d", n);
	if (!fstat(STDOUT_FILENO, &st))
		say("stdout chr=%d major=%u minor=%u", S_ISCHR(st.st_mode),
		    major(st.st_rdev), minor(st.st_rdev));
}

static void root_view(void)
{
	struct stat root, up;
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	say("hostname=%s", host);
	list_dir("/");
	list_dir("/dev");
	list_dir("/dev/net");
	stat("/", &root);
	stat("/..", &up);
	say("dotdot same=%d", root.st_dev == up.st_dev &&
			      root.st_ino == up.st_ino);
	say("chroot-again=%s", chroot("/") ? strerror(errno) : "allowed");
	dev_node("/dev/kvm");
	dev_node("/dev/net/tun");
	dev_node("/dev/urandom");
}

/* As microvm does: a handler, without which pid 1 of a namespace
 * ignores SIGTERM sent from outside it. */
static void on_sigterm(int sig)
{
	/* The test's evidence that the signal arrived (open is async-signal
	 * safe); a jailer that died of it would take us down by SIGKILL. */
	int fd = open("/sigterm", O_WRONLY | O_CREAT, 0644);

	if (fd >= 0)
		close(fd);
	_exit(128 + sig);
}

static void hold(void)
{
	struct timespec ts = { 0, 20 * 1000000 };

	for (int i = 0; i < HOLD_MS / 20 && access("/go", F_OK); i++)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int status = 0, fd;
	int do_hold = 0;

	/* Run by the test through nsenter: the mount namespace's own root. */
	if (argc == 2 && !strcmp(argv[1], "--list-root")) {
		list_dir("/");
		return write(STDOUT_FILENO, report, used) < 0;
	}
	for (int i = 0; i < argc; i++) {
		say("argv[%d]=%s", i, argv[i]);
		if (!strcmp(argv[i], "--hold"))
			do_hold = 1;
		if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			status = atoi(argv[i + 1]);
	}
	ids();
	root_view();
	fds_and_limits();
	say("end");
	if (write(STDOUT_FILENO, report, used) < 0)
		status = status ? status : 1;
	/* Written last and renamed in: the test sees all of it or none. */
	fd = open("/report.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, report, used) != (ssize_t)used ||
	    close(fd) || rename("/report.tmp", "/report.txt"))
		return 99;
	if (do_hold) {
		signal(SIGTERM, on_sigterm);
		hold();
	}
	return status;
}
