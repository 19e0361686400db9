// SPDX-License-Identifier: Apache-2.0
/*
 * microvm-jailer's entry point. The parent (root, on the host) checks
 * the command line, builds the chroot directory, sets the rlimits, joins
 * the cgroup and forks the jailed child into new PID, mount, IPC and UTS
 * namespaces (always: the PID namespace is the default, not an option).
 * The child pivots into the chroot, joins --netns, drops to --uid/--gid,
 * closes every fd above 2 and execs the copy of the exec file. A pipe
 * that closes on exec tells the parent whether the exec happened; the
 * child's error lines travel through it. Then the parent writes
 * <root>/<exec name>.pid and, with --daemonize or --new-pid-ns, exits 0
 * (Firecracker's detached start); otherwise it stays, passes on the
 * signals it gets and exits with the child's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "jail.h"

#define EXTRA_MAX 4096
#define FIXED_ARGS 10 /* argv[0], --id, 3 start-time pairs, NULL */

/* What the child needs, all opened or computed by the parent. */
struct jail_run {
	struct jail_config cfg;
	char exec_path[PATH_MAX];   /* canonical --exec-file */
	char base[PATH_MAX];        /* canonical --chroot-base-dir */
	char root[PATH_MAX];        /* <base>/<name>/<id>/root */
	struct jail_devs devs;
	int netns_fd;               /* -1 without --netns */
	int null_fd;                /* -1 without --daemonize */
	int status_w;               /* child: error lines; closes on exec */
	int alive_r;                /* child: EOF once the parent is gone */
	uint64_t start_us;          /* CLOCK_MONOTONIC at the jailer's start */
	uint64_t parent_cpu_us;     /* the jailer's CPU time before fork */
};

static volatile pid_t child_pid;

static uint64_t clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Every fd above 2 except @keep (-1: none). */
static void close_fds_above_2(int keep)
{
	int first = 3;

	if (keep >= first) {
		if (keep > first && close_range(3, (unsigned int)keep - 1, 0))
			for (int fd = 3; fd < keep; fd++)
				close(fd);
		first = keep + 1;
	}
	if (close_range((unsigned int)first, ~0u, 0)) {
		struct rlimit rl;

		getrlimit(RLIMIT_NOFILE, &rl);
		for (rlim_t fd = (rlim_t)first; fd < rl.rlim_cur; fd++)
			close((int)fd);
	}
}

static int canonical(const char *opt, const char *path, mode_t type,
		     char *out)
{
	struct stat st;

	if (!realpath(path, out) || stat(out, &st)) {
		jail_err("%s: '%s': %s", opt, path, strerror(errno));
		return -errno;
	}
	if ((st.st_mode & S_IFMT) != type) {
		jail_err("%s: '%s' is not a %s", opt, path,
			 type == S_IFDIR ? "directory" : "regular file");
		return -EINVAL;
	}
	return 0;
}

static int open_netns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		jail_err("--netns: '%s': %s", path, strerror(errno));
		return -1;
	}
	if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) {
		jail_err("--netns: '%s' is not a network namespace", path);
		close(fd);
		return -1;
	}
	return fd;
}

static int set_rlimits(const struct jail_config *cfg)
{
	struct rlimit nofile = { cfg->nofile, cfg->nofile };
	struct rlimit fsize = { cfg->fsize, cfg->fsize };

	if (setrlimit(RLIMIT_NOFILE, &nofile)) {
		jail_err("--resource-limit no-file=%llu: %s",
			 (unsigned long long)cfg->nofile, strerror(errno));
		return -errno;
	}
	if (cfg->has_fsize && setrlimit(RLIMIT_FSIZE, &fsize)) {
		jail_err("--resource-limit fsize=%llu: %s",
			 (unsigned long long)cfg->fsize, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Parse errors and the like before the fork: the line is out already. */
static void child_die(void)
{
	_exit(1);
}

/* Firecracker's exec line: --id and the three start-time values first. */
static char **exec_argv(const struct jail_run *r, char *path, char nums[3][24])
{
	const struct jail_config *cfg = &r->cfg;
	char **argv = calloc(FIXED_ARGS + (size_t)cfg->n_extra, sizeof(*argv));
	int n = 0;

	if (!argv) {
		jail_err("no memory for %d exec arguments", cfg->n_extra);
		child_die();
	}
	snprintf(nums[0], 24, "%llu", (unsigned long long)r->start_us);
	snprintf(nums[1], 24, "%llu", (unsigned long long)
		 clock_us(CLOCK_PROCESS_CPUTIME_ID));
	snprintf(nums[2], 24, "%llu", (unsigned long long)r->parent_cpu_us);
	argv[n++] = path;
	argv[n++] = (char *)"--id";
	argv[n++] = (char *)cfg->id;
	argv[n++] = (char *)"--start-time-us";
	argv[n++] = nums[0];
	argv[n++] = (char *)"--start-time-cpu-us";
	argv[n++] = nums[1];
	argv[n++] = (char *)"--parent-cpu-time-us";
	argv[n++] = nums[2];
	for (int i = 0; i < cfg->n_extra; i++)
		argv[n++] = cfg->extra[i];
	argv[n] = NULL;
	return argv;
}

/* The child drops to the user; with @stay, it dies with the parent. */
static void child_drop(const struct jail_run *r, bool stay)
{
	uid_t uid = r->cfg.uid;
	gid_t gid = r->cfg.gid;
	struct pollfd pfd = { .fd = r->alive_r, .events = POLLIN };

	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		jail_err("dropping to uid %u gid %u: %s", uid, gid,
			 strerror(errno));
		child_die();
	}
	/* After setresuid, which clears the parent-death signal. */
	if (stay && (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
		     poll(&pfd, 1, 0) != 0)) {
		jail_err("the jailer's parent process is gone");
		child_die();
	}
}

static void __attribute__((noreturn)) child_exec(struct jail_run *r,
						  bool stay)
{
	const struct jail_config *cfg = &r->cfg;
	char path[PATH_MAX], nums[3][24];
	char *envp[] = { NULL };
	char **argv;

	jail_err_set_fd(r->status_w);
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS) ||
	    sethostname(cfg->id, strlen(cfg->id))) {
		jail_err("new mount, IPC and UTS namespaces: %s",
			 strerror(errno));
		child_die();
	}
	if (jail_enter(r->root, &r->devs, cfg->uid, cfg->gid))
		child_die();
	if (r->netns_fd >= 0 && setns(r->netns_fd, CLONE_NEWNET)) {
		jail_err("--netns: joining '%s': %s", cfg->netns,
			 strerror(errno));
		child_die();
	}
	/* Without --netns a new, empty network namespace (Firecracker's
	 * jailer keeps the caller's): microvm reaches no network it was
	 * not given. */
	if (r->netns_fd < 0 && unshare(CLONE_NEWNET)) {
		jail_err("new network namespace: %s", strerror(errno));
		child_die();
	}
	if (r->null_fd >= 0 &&
	    (setsid() < 0 || dup2(r->null_fd, STDIN_FILENO) < 0 ||
	     dup2(r->null_fd, STDOUT_FILENO) < 0 ||
	     dup2(r->null_fd, STDERR_FILENO) < 0)) {
		jail_err("--daemonize: %s", strerror(errno));
		child_die();
	}
	child_drop(r, stay);
	snprintf(path, sizeof(path), "/%s", jail_exec_name(r->exec_path));
	close_fds_above_2(r->status_w);
	argv = exec_argv(r, path, nums);
	execve(path, argv, envp);
	jail_err("exec of %s in the jail %s failed: %s", path, r->root,
		 strerror(errno));
	child_die();
	__builtin_unreachable();
}

static int prepare(struct jail_run *r)
{
	struct jail_config *cfg = &r->cfg;

	if (canonical("--exec-file", cfg->exec_file, S_IFREG, r->exec_path) ||
	    canonical("--chroot-base-dir", cfg->chroot_base, S_IFDIR, r->base))
		return -1;
	cfg->exec_file = r->exec_path;
	cfg->chroot_base = r->base;
	if (cfg->netns && (r->netns_fd = open_netns(cfg->netns)) < 0)
		return -1;
	if (cfg->daemonize) {
		r->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (r->null_fd < 0) {
			jail_err("--daemonize: /dev/null: %s", strerror(errno));
			return -1;
		}
	}
	if (jail_dir_prepare(cfg, r->root, sizeof(r->root)) ||
	    set_rlimits(cfg) || jail_cgroup_join(cfg, getpid()))
		return -1;
	jail_devs_probe(&r->devs);
	return 0;
}

static int write_pid_file(const struct jail_run *r, pid_t pid, char *path,
			  size_t len)
{
	char num[24];
	int fd, n = snprintf(num, sizeof(num), "%d", (int)pid);

	if ((size_t)snprintf(path, len, "%s/%s.pid", r->root,
			     jail_exec_name(r->exec_path)) >= len) {
		jail_err("pid file path below %s is too long", r->root);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 || write(fd, num, (size_t)n) != n) {
		int err = errno;

		jail_err("writing the pid file %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	close(fd);
	return 0;
}

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void forward_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT,
				    SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = forward_signal };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* The child's lines until the exec closes the pipe: 0 when none came. */
static int await_exec(int fd)
{
	char buf[1024];
	ssize_t n;
	int got = 0;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got = 1;
		if (write(STDERR_FILENO, buf, (size_t)n) < 0)
			break;
	}
	return got ? -ECHILD : 0;
}

/* Stay with the child: pass on signals, return its status as a shell's. */
static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			jail_err("waiting for pid %d: %s", (int)pid,
				 strerror(errno));
			return 1;
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Fork the jailed child; the parent's part of the start. */
static int run(struct jail_run *r, uint64_t start_cpu_us)
{
	bool stay = !r->cfg.daemonize && !r->cfg.new_pid_ns;
	char pid_path[PATH_MAX];
	int st[2], alive[2], own_pidns;
	pid_t pid;

	if (pipe2(st, O_CLOEXEC) || pipe2(alive, O_CLOEXEC)) {
		jail_err("pipe: %s", strerror(errno));
		return 1;
	}
	/* Our own PID namespace, to return to after the fork below. */
	own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (unshare(CLONE_NEWPID)) {
		jail_err("new PID namespace: %s", strerror(errno));
		return 1;
	}
	r->parent_cpu_us = clock_us(CLOCK_PROCESS_CPUTIME_ID) - start_cpu_us;
	pid = fork();
	/*
	 * The parent's later children (a sanitizer's helper thread at exit)
	 * would go to the jail's namespace, whose init may be gone by then:
	 * send them to ours again. Without /proc only they would suffer.
	 */
	if (pid != 0 && own_pidns >= 0) {
		setns(own_pidns, CLONE_NEWPID);
		close(own_pidns);
	}
	if (pid < 0) {
		jail_err("fork into the new PID namespace: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(st[0]);
		close(alive[1]);
		r->status_w = st[1];
		r->alive_r = alive[0];
		child_exec(r, stay);
	}
	close(st[1]);
	close(alive[0]);
	child_pid = pid;
	if (stay)
		forward_signals();
	if (write_pid_file(r, pid, pid_path, sizeof(pid_path))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	if (await_exec(st[0])) {
		waitpid(pid, NULL, 0);
		unlink(pid_path);
		return 1;
	}
	close(st[0]);
	return stay ? wait_child(pid) : 0;
}

int main(int argc, char **argv)
{
	struct jail_run r = { .netns_fd = -1, .null_fd = -1 };
	uint64_t start_cpu_us = clock_us(CLOCK_PROCESS_CPUTIME_ID);

	r.start_us = clock_us(CLOCK_MONOTONIC);
	if (jail_parse_args(argc, argv, &r.cfg))
		return 1;
	if (r.cfg.help) {
		fputs(jail_usage(), stdout);
		return 0;
	}
	/* Nothing the caller left open reaches the jail. */
	close_fds_above_2(-1);
	if (clearenv()) {
		jail_err("clearing the environment failed");
		return 1;
	}
	umask(022);
	if (prepare(&r))
		return 1;
	return run(&r, start_cpu_us);
}
