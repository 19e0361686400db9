// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp-BPF filters, one per thread class, built at startup with
 * libseccomp and exported to plain BPF programs, so that a thread installs
 * its filter with one seccomp() call and no allocation. libseccomp rather
 * than hand-built BPF: it resolves syscall numbers, adds the architecture
 * check and compiles argument comparisons (64-bit masks, several per
 * call) into jumps we would otherwise write and review by hand.
 *
 * Order, because filters stack (a call must pass every filter of the
 * thread) and are inherited by the threads a thread creates:
 * - main creates stats, console and the vCPUs unfiltered; each installs
 *   its own class's filter first thing; then main installs the main filter
 *   on itself (confine_thread(CONFINE_MAIN)), which releases the vCPU
 *   threads: no KVM_RUN happens before every filter is in place.
 * - I/O threads are created by the vCPU thread whose register write set
 *   DRIVER_OK (blk_queue_start) and are joined by whoever resets the
 *   device: a vCPU, or main at teardown. An I/O thread therefore runs
 *   under the vCPU filter *and* its own, and the vCPU filter has to admit
 *   everything an I/O thread does. It does: the vCPU class is built from
 *   the vCPU and the I/O lists (none of the I/O calls reaches beyond the
 *   guest's own disk images and queues, which the vCPU thread drives
 *   anyway), and the I/O filter, installed on top, takes the KVM ioctls,
 *   thread creation and the rest of the vCPU list away again.
 *
 * Default action (--seccomp=on): SECCOMP_RET_TRAP into a SIGSYS handler
 * that writes one line naming the thread, its class and the call, then
 * ends the process by SIGSYS (status 159, the same as the kernel's
 * KILL_PROCESS, which --seccomp=kill selects). No filter allows
 * rt_sigaction(SIGSYS), so the handler cannot be replaced; a thread that
 * blocks SIGSYS (the mask is in memory, no filter can see it) gains
 * nothing, as the kernel then resets SIGSYS to its default and the
 * process dies all the same, only without the line.
 */
#include "util/confine.h"

#include <dirent.h>
#include <linux/fs.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/ucontext.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/confine_policy.h"
#include "util/log.h"

/* si_code of a SIGSYS from a filter (the kernel's asm-generic/siginfo.h,
 * which glibc's headers leave out). */
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Names of syscalls below this number appear in the SIGSYS line. */
#define CONFINE_NAMED_SYSCALLS 512

static const char *const class_names[CONFINE_NR_CLASSES] = {
	[CONFINE_MAIN] = "main",
	[CONFINE_VCPU] = "vcpu",
	[CONFINE_IO] = "io",
	[CONFINE_CONSOLE] = "console",
	[CONFINE_CONTROL] = "control",
	[CONFINE_VSOCK] = "vsock",
	[CONFINE_NET] = "net",
};

static const char *const mode_names[] = {
	[CONFINE_ON] = "on",
	[CONFINE_KILL] = "kill",
	[CONFINE_LOG] = "log",
	[CONFINE_OFF] = "off",
};

static struct {
	bool prepared;
	enum confine_mode mode;
	struct sock_fprog prog[CONFINE_NR_CLASSES];
	int selftest;                      /* class, or -1 */
	int listen_fd;                     /* control's accept4(), or -1 */
	int disk_fd[CONFINE_MAX_DISK_FDS]; /* BLKDISCARD, BLKZEROOUT */
	unsigned int nr_disk_fds;
	uint32_t arch;                     /* the names below are for it */
	char *syscall_name[CONFINE_NAMED_SYSCALLS];
	pthread_mutex_t lock;
	pthread_cond_t main_done;
	pthread_t main_thread;             /* confine_prepare()'s caller */
	bool main_confined;
	bool selftest_done;
} confine = {
	.selftest = -1,
	.listen_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.main_done = PTHREAD_COND_INITIALIZER,
};

long confine_limit_fds(unsigned int later)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	struct rlimit rl;
	long top = -1, want;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		long fd = strtol(de->d_name, NULL, 10);

		if (de->d_name[0] != '.' && fd > top)
			top = fd;
	}
	closedir(dir);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	want = top + 1 + (long)later + CONFINE_FDS_SLACK;
	if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)want >= rl.rlim_cur)
		return (long)rl.rlim_cur;
	rl.rlim_cur = (rlim_t)want;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	return want;
}

/* For the SIGSYS handler: who this thread is. */
static __thread const char *thread_class = "unconfined";
static __thread char thread_name[16];

int confine_parse_mode(const char *s, enum confine_mode *out)
{
	unsigned int i;

	for (i = 0; s && i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*out = (enum confine_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *confine_mode_name(enum confine_mode mode)
{
	if ((unsigned int)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "?";
	return mode_names[mode];
}

/* ---- the SIGSYS line (async-signal-safe: no stdio, no allocation) ---- */

static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at < cap)
		buf[at++] = *s++;
	return at;
}

static size_t put_uint(char *buf, size_t at, size_t cap, unsigned long v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && at < cap)
		buf[at++] = digits[--n];
	return at;
}

/* The trapped call's argument @i and its return value, in @uc. */
#if defined(__x86_64__)
static const int arg_reg[4] = { REG_RDI, REG_RSI, REG_RDX, REG_R10 };
#define UC_ARG(uc, i) ((uc)->uc_mcontext.gregs[arg_reg[i]])
#define UC_RET(uc) ((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__aarch64__)
#define UC_ARG(uc, i) ((uc)->uc_mcontext.regs[i])
#define UC_RET(uc) ((uc)->uc_mcontext.regs[0])
#endif

/*
 * The calls the filters trap rather than allow (CONFINE_ACT_EMULATE),
 * made here in their narrow form: newfstatat(fd, "", st, AT_EMPTY_PATH)
 * becomes fstat(fd, st); a path that is not empty is refused (false).
 * The path is read once, here, and never passed to the kernel, so
 * another thread that changes it afterwards changes nothing.
 */
static bool confine_emulate(const siginfo_t *si, void *ctx)
{
#ifdef UC_ARG
	ucontext_t *uc = ctx;
	const char *path;
	int saved = errno;
	long ret;

	if (si->si_arch != confine.arch || si->si_syscall != SYS_newfstatat ||
	    !(UC_ARG(uc, 3) & AT_EMPTY_PATH))
		return false;
	path = (const char *)UC_ARG(uc, 1);
	if (path && *path)
		return false;
	ret = syscall(SYS_fstat, (int)UC_ARG(uc, 0), (void *)UC_ARG(uc, 2));
	UC_RET(uc) = ret < 0 ? -errno : ret;
	errno = saved;
	return true;
#else
	(void)si;
	(void)ctx;
	return false;
#endif
}

static void confine_sigsys(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char line[200];
	size_t n = 0, cap = sizeof(line) - 1;
	int nr = si->si_syscall;
	sigset_t set;

	if (si->si_code == SYS_SECCOMP && confine_emulate(si, uc))
		return;
	if (confine.mode != CONFINE_ON)
		goto die; /* kill: no line */
	n = put_str(line, n, cap, "microvm: seccomp: thread ");
	n = put_str(line, n, cap, thread_name[0] ? thread_name : "?");
	n = put_str(line, n, cap, " (");
	n = put_str(line, n, cap, thread_class);
	n = put_str(line, n, cap, " class) made forbidden system call ");
	n = put_uint(line, n, cap, (unsigned long)nr);
	if (si->si_arch == confine.arch && nr >= 0 &&
	    nr < CONFINE_NAMED_SYSCALLS && confine.syscall_name[nr]) {
		n = put_str(line, n, cap, " (");
		n = put_str(line, n, cap, confine.syscall_name[nr]);
		n = put_str(line, n, cap, ")");
	}
	n = put_str(line, n, cap, "; ending microvm");
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		n = 0;
die:
	/*
	 * Every filter forbids rt_sigaction(SIGSYS): with SIGSYS blocked (we
	 * are its handler) the kernel answers by resetting SIGSYS to its
	 * default and delivering it, which ends the whole process. Where
	 * the call is allowed (a thread with no filter), the same by hand.
	 */
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	_exit(CONFINE_EXIT_STATUS);
}

/* ---- building the filters ---- */

static uint32_t default_action(enum confine_mode mode)
{
	switch (mode) {
	case CONFINE_KILL:
		return SCMP_ACT_KILL_PROCESS;
	case CONFINE_LOG:
		return SCMP_ACT_LOG;
	default:
		return SCMP_ACT_TRAP;
	}
}

static uint32_t rule_action(const struct confine_rule *r,
			    enum confine_mode mode)
{
	if (r->action == CONFINE_ACT_EMULATE)
		return mode == CONFINE_LOG ? SCMP_ACT_ALLOW : SCMP_ACT_TRAP;
	return r->action ? r->action : SCMP_ACT_ALLOW;
}

static int add_rules(scmp_filter_ctx ctx, const struct confine_rule *r,
		     size_t n, enum confine_mode mode)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct scmp_arg_cmp cmp[CONFINE_RULE_MAX_ARGS];
		unsigned int k;

		for (k = 0; k < r[i].nargs; k++) {
			cmp[k].arg = r[i].cmp[k].arg;
			cmp[k].op = r[i].cmp[k].op;
			cmp[k].datum_a = r[i].cmp[k].a;
			cmp[k].datum_b = r[i].cmp[k].b;
		}
		/* With --seccomp=on every call not allowed traps already:
		 * libseccomp refuses a rule that repeats the default. */
		if (rule_action(&r[i], mode) == default_action(mode))
			continue;
		ret = seccomp_rule_add_array(ctx, rule_action(&r[i], mode),
					     r[i].nr, r[i].nargs, cmp);
		if (ret)
			return ret;
	}
	return 0;
}

static int add_ioctls(scmp_filter_ctx ctx, const unsigned long *req,
		      size_t n)
{
	size_t i;
	int ret;

	/* The kernel reads the request as a 32-bit int: compare those. */
	for (i = 0; i < n; i++) {
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					       req[i] & 0xffffffffUL));
		if (ret)
			return ret;
	}
	return 0;
}

/* Compile @ctx to plain BPF through a memfd (libseccomp 2.5 exports to
 * file descriptors only). */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	struct stat st;
	void *buf;
	int fd, ret;

	fd = memfd_create("microvm-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	if (!ret && fstat(fd, &st))
		ret = -errno;
	if (!ret && (st.st_size <= 0 ||
		     st.st_size % sizeof(struct sock_filter) ||
		     st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS))
		ret = -E2BIG;
	if (ret) {
		close(fd);
		return ret;
	}
	buf = malloc(st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	if (pread(fd, buf, st.st_size, 0) != st.st_size) {
		ret = errno ? -errno : -EIO;
		free(buf);
		close(fd);
		return ret;
	}
	close(fd);
	prog->filter = buf;
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
}

/* Block-device discard and write-zeroes, on disk descriptor @fd only. */
static int add_disk_ioctls(scmp_filter_ctx ctx, int fd)
{
	static const unsigned long req[] = { BLKDISCARD, BLKZEROOUT };
	size_t i;
	int ret;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 2,
				       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fd),
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					       req[i] & 0xffffffffUL));
		if (ret)
			return ret;
	}
	return 0;
}

static int build_class(enum confine_class cls, enum confine_mode mode,
		       struct sock_fprog *prog)
{
	const struct confine_part *parts[CONFINE_MAX_PARTS];
	uint32_t act = default_action(mode);
	scmp_filter_ctx ctx;
	size_t i, n;
	int ret = 0;

	ctx = seccomp_init(act);
	if (!ctx)
		return -ENOMEM;
	/* no_new_privs is set once, process-wide, by confine_prepare(). */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, act);
	n = confine_policy_parts(cls, parts, CONFINE_MAX_PARTS);
	for (i = 0; !ret && i < n; i++) {
		ret = add_rules(ctx, parts[i]->rules, parts[i]->nr_rules,
				mode);
		if (!ret)
			ret = add_ioctls(ctx, parts[i]->ioctls,
					 parts[i]->nr_ioctls);
	}
	/* The vCPU kick, raise() and abort(): threads of this process only
	 * (tgid, the first argument, is our pid; known now, at build). */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				       SCMP_A0(SCMP_CMP_EQ,
					       (scmp_datum_t)getpid()));
	if (cls == CONFINE_IO || cls == CONFINE_VCPU || cls == CONFINE_MAIN) {
		for (i = 0; !ret && i < confine.nr_disk_fds; i++)
			ret = add_disk_ioctls(ctx, confine.disk_fd[i]);
	}
	/* The control thread accepts on its listening socket only. */
	if (!ret && cls == CONFINE_CONTROL && confine.listen_fd >= 0)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(accept4), 1,
				       SCMP_A0(SCMP_CMP_EQ,
					       (scmp_datum_t)confine.listen_fd));
	if (!ret)
		ret = export_prog(ctx, prog);
	seccomp_release(ctx);
	return ret;
}

static int parse_selftest(char *err, size_t errlen)
{
	const char *v = getenv("MICROVM_SECCOMP_SELFTEST");
	unsigned int i;

	if (!v || !*v)
		return 0;
	for (i = 0; i < CONFINE_NR_CLASSES; i++) {
		if (!strcmp(v, class_names[i])) {
			confine.selftest = (int)i;
			return 0;
		}
	}
	snprintf(err, errlen,
		 "MICROVM_SECCOMP_SELFTEST=%s: not one of main, vcpu, io, "
		 "console, control, vsock, net", v);
	return -EINVAL;
}

static void name_syscalls(void)
{
	int nr;

	confine.arch = seccomp_arch_native();
	for (nr = 0; nr < CONFINE_NAMED_SYSCALLS; nr++)
		confine.syscall_name[nr] =
			seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
}

void confine_control_listen_fd(int fd)
{
	confine.listen_fd = fd;
}

int confine_disk_fds(const int *fds, unsigned int n, char *err,
		     size_t errlen)
{
	static const enum confine_class rebuilt[] = { CONFINE_IO,
						      CONFINE_VCPU,
						      CONFINE_MAIN };
	struct sock_fprog prog;
	unsigned int i;
	int ret;

	if (n > CONFINE_MAX_DISK_FDS) {
		snprintf(err, errlen, "seccomp: %u disks: at most %d", n,
			 CONFINE_MAX_DISK_FDS);
		return -E2BIG;
	}
	memcpy(confine.disk_fd, fds, n * sizeof(*fds));
	confine.nr_disk_fds = n;
	if (!confine.prepared)
		return 0;
	for (i = 0; i < sizeof(rebuilt) / sizeof(rebuilt[0]); i++) {
		ret = build_class(rebuilt[i], confine.mode, &prog);
		if (ret) {
			snprintf(err, errlen, "--seccomp=%s: cannot build the "
				 "%s filter: %s", mode_names[confine.mode],
				 class_names[rebuilt[i]], strerror(-ret));
			return ret;
		}
		free(confine.prog[rebuilt[i]].filter);
		confine.prog[rebuilt[i]] = prog;
	}
	return 0;
}

int confine_prepare(enum confine_mode mode, char *err, size_t errlen)
{
	struct sigaction sa = { .sa_sigaction = confine_sigsys,
				.sa_flags = SA_SIGINFO };
	unsigned int i;
	int ret;

	ret = parse_selftest(err, errlen);
	if (ret)
		return ret;
	confine.mode = mode;
	confine.main_thread = pthread_self();
	if (mode == CONFINE_OFF)
		return 0;
	for (i = 0; i < CONFINE_NR_CLASSES; i++) {
		ret = build_class(i, mode, &confine.prog[i]);
		if (ret) {
			snprintf(err, errlen,
				 "--seccomp=%s: cannot build the %s filter: %s",
				 mode_names[mode], class_names[i],
				 strerror(-ret));
			return ret;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		ret = -errno;
		snprintf(err, errlen, "--seccomp=%s: no_new_privs: %s",
			 mode_names[mode], strerror(-ret));
		return ret;
	}
	/* kill too: the handler makes the calls trapped for it
	 * (confine_emulate()); any other call it ends without a line. */
	if (mode != CONFINE_LOG) {
		name_syscalls();
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSYS, &sa, NULL)) {
			ret = -errno;
			snprintf(err, errlen, "--seccomp=%s: SIGSYS handler: %s",
				 mode_names[mode], strerror(-ret));
			return ret;
		}
	}
	confine.prepared = true;
	return 0;
}

/*
 * MICROVM_SECCOMP_SELFTEST: the first thread of the class breaks a rule
 * (for "main", the main thread itself rather than the stats thread).
 */
static void confine_selftest(enum confine_class cls, bool is_main)
{
	bool mine;
	int fd;

	if (confine.selftest != (int)cls || (cls == CONFINE_MAIN && !is_main))
		return;
	pthread_mutex_lock(&confine.lock);
	mine = !confine.selftest_done;
	confine.selftest_done = true;
	pthread_mutex_unlock(&confine.lock);
	if (!mine)
		return;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	/* Only reached with --seccomp=log (or a filter that is too wide). */
	fprintf(stderr, "microvm: seccomp selftest: socket() in the %s class "
		"returned %d\n", class_names[cls], fd);
	if (fd >= 0)
		close(fd);
}

void confine_thread(enum confine_class cls)
{
	bool is_main = pthread_equal(pthread_self(), confine.main_thread);
	sigset_t sys;

	/* The name its log lines carry, read while prctl is still ours
	 * (main's lines say "main", set in main()). */
	if (prctl(PR_GET_NAME, thread_name, 0, 0, 0))
		thread_name[0] = '\0';
	thread_name[sizeof(thread_name) - 1] = '\0';
	if (!is_main)
		log_set_thread_name(thread_name);
	if (!confine.prepared || (unsigned int)cls >= CONFINE_NR_CLASSES)
		return;
	thread_class = class_names[cls];
	/* Synchronous: the thread that made the call must take it. */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
		    &confine.prog[cls])) {
		fprintf(stderr, "microvm: seccomp: cannot confine thread %s "
			"(%s class): %s\n", thread_name, thread_class,
			strerror(errno));
		_exit(125);
	}
	confine_selftest(cls, is_main);
	pthread_mutex_lock(&confine.lock);
	if (is_main && cls == CONFINE_MAIN && !confine.main_confined) {
		confine.main_confined = true;
		pthread_cond_broadcast(&confine.main_done);
	}
	while (!is_main && cls == CONFINE_VCPU && !confine.main_confined)
		pthread_cond_wait(&confine.main_done, &confine.lock);
	pthread_mutex_unlock(&confine.lock);
}
