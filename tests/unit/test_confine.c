// SPDX-License-Identifier: Apache-2.0
/*
 * seccomp confinement per thread class: each row forks a child that
 * installs one class's filter and makes one call; an allowed call returns
 * (the child exits 0), a forbidden one ends the child by SIGSYS with the
 * line naming the thread, class and call on stderr (--seccomp=on), or
 * without it (kill); log lets it through. Also: the parent sees
 * "Seccomp: 2" for a confined child, an I/O thread started by a vCPU
 * thread runs under both filters, vCPU threads wait for main's filter,
 * and the MICROVM_SECCOMP_SELFTEST trigger.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "test.h"
#include "util/confine.h"
#include "util/confine_policy.h" /* CONFINE_SANITIZER */
#include "vhost_blk.h"

/* Set up before the filter, for the call under test. */
static int spare_fd = -1;
static pid_t parent_pid;

static int call_socket(void)
{
	return socket(AF_INET, SOCK_STREAM, 0);
}

static int call_open_ro(void)
{
	return open("/dev/null", O_RDONLY);
}

static int call_open_create(void)
{
	char path[] = "/tmp/microvm-confine-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static int call_execve(void)
{
	char *argv[] = { (char *)"/bin/true", NULL };

	return execve("/bin/true", argv, NULL);
}

static int call_mmap_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -1 : 0;
}

static int call_mmap_rw(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -1 : munmap(p, 4096);
}

static int call_fork(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : 0;
}

static int call_malloc(void)
{
	void *big = malloc(64 << 20), *small = malloc(100);
	int ok = big && small;

	free(big);
	free(small);
	return ok ? 0 : -1;
}

static int call_write(void)
{
	return write(spare_fd, "x", 1) == 1 ? 0 : -1;
}

static int call_eventfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	return fd < 0 ? -1 : close(fd);
}

static int call_epoll_wait(void)
{
	struct epoll_event ev;

	return epoll_wait(spare_fd, &ev, 1, 0) < 0 ? -1 : 0;
}

/* An allowed request on a pipe or epoll fd: the filter passes it, the
 * kernel refuses it. A forbidden one never returns. */
static int call_ioctl(unsigned long req)
{
	int ret = ioctl(spare_fd, req, 0);

	return ret < 0 && (errno == ENOTTY || errno == EINVAL) ? 0 : -1;
}

static int call_kvm_run(void)
{
	return call_ioctl(KVM_RUN);
}

/* engine=vhost: set up and started from a vCPU, stopped at teardown. */
static int call_vhost_set_backend(void)
{
	return call_ioctl(VHOST_BLK_SET_BACKEND);
}

static int call_vhost_set_vring_call(void)
{
	return call_ioctl(VHOST_SET_VRING_CALL);
}

static int call_vhost_get_vring_base(void)
{
	return call_ioctl(VHOST_GET_VRING_BASE);
}

static int call_vhost_set_features(void)
{
	return call_ioctl(VHOST_SET_FEATURES);
}

/* vsock engine=vhost: started from a vCPU or a resume, stopped at
 * reset, pause or teardown. */
static int call_vhost_vsock_set_running(void)
{
	return call_ioctl(VHOST_VSOCK_SET_RUNNING);
}

static int call_blkdiscard(void)
{
	return call_ioctl(BLKDISCARD);
}

static int call_blkzeroout(void)
{
	return call_ioctl(BLKZEROOUT);
}

/* The same requests on a descriptor that is not a disk's (stdin). */
static int call_blkdiscard_other(void)
{
	return ioctl(STDIN_FILENO, BLKDISCARD, 0) < 0 ? 0 : -1;
}

static int call_blkzeroout_other(void)
{
	return ioctl(STDIN_FILENO, BLKZEROOUT, 0) < 0 ? 0 : -1;
}

/* A snapshot disk's copy-up. No descriptor is open for it: the kernel
 * refuses (EBADF) once the filter has let the call through. */
static int call_preadv(void)
{
	char b;
	struct iovec v = { &b, 1 };

	return preadv(-1, &v, 1, 0) < 0 && errno == EBADF ? 0 : -1;
}

static int call_pwritev(void)
{
	char b = 0;
	struct iovec v = { &b, 1 };

	return pwritev(-1, &v, 1, 0) < 0 && errno == EBADF ? 0 : -1;
}

/* A new ring would carry no restriction: no class may make one. */
static int call_uring_setup(void)
{
	struct io_uring_params p = { 0 };
	int fd = (int)syscall(__NR_io_uring_setup, 4, &p);

	return fd < 0 ? -1 : close(fd);
}

/* Main's one register call, at teardown; the kernel finds no ring. */
static int call_uring_unregister_files(void)
{
	return syscall(__NR_io_uring_register, spare_fd,
		       IORING_UNREGISTER_FILES, NULL, 0) < 0 ? 0 : -1;
}

static int call_uring_register_files(void)
{
	int fd = spare_fd;

	return syscall(__NR_io_uring_register, spare_fd,
		       IORING_REGISTER_FILES, &fd, 1) < 0 ? 0 : -1;
}

/* glibc's fstat(): newfstatat(fd, "", st, AT_EMPTY_PATH) on Debian 12,
 * made as fstat(fd) by the SIGSYS handler. */
static int call_fstat(void)
{
	struct stat st;

	return fstat(spare_fd, &st) == 0 && S_ISFIFO(st.st_mode) ? 0 : -1;
}

/* The same flag with a real path: reaches no file. */
static int call_fstatat_path(void)
{
	struct stat st;

	return fstatat(AT_FDCWD, "/etc/passwd", &st, AT_EMPTY_PATH);
}

static int call_stat(void)
{
	struct stat st;

	return stat("/etc/passwd", &st);
}

/* An fstat of a bad fd keeps its error through the handler. */
static int call_fstat_badfd(void)
{
	struct stat st;

	return fstat(1000, &st) < 0 && errno == EBADF ? 0 : -1;
}

/* Signal 0 to our own thread: allowed. */
static int call_tgkill_self(void)
{
	return (int)syscall(SYS_tgkill, getpid(), gettid(), 0);
}

/* Signal 0 to another process (our parent, the test): refused. */
static int call_tgkill_other(void)
{
	return (int)syscall(SYS_tgkill, parent_pid, parent_pid, 0);
}

/* The control thread's listening socket (SPARE_LISTEN): nothing
 * waits, so a non-blocking accept answers EAGAIN. */
static int listen_fd = -1;

static int call_accept_listen(void)
{
	return accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK) < 0 &&
	       errno == EAGAIN ? 0 : -1;
}

/* The same call on any other descriptor. */
static int call_accept_other(void)
{
	return accept4(spare_fd, NULL, NULL, SOCK_NONBLOCK) < 0 ? 0 : -1;
}

static int call_tcgets(void)
{
	return call_ioctl(TCGETS);
}

static int call_fcntl_getfl(void)
{
	return fcntl(spare_fd, F_GETFL) < 0 ? -1 : 0;
}

static int call_fcntl_dupfd(void)
{
	return fcntl(spare_fd, F_DUPFD, 100) < 0 ? -1 : 0;
}

/* --stats: dprintf() asks the fd for its offset first. */
static int call_dprintf(void)
{
	return dprintf(spare_fd, "stats %d\n", 1) > 0 ? 0 : -1;
}

/* The stats thread's sigwait(), with nothing pending. */
static int call_sigtimedwait(void)
{
	struct timespec ts = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	return sigtimedwait(&set, NULL, &ts) < 0 && errno == EAGAIN ? 0 : -1;
}

static int call_sigaction_sigsys(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	return sigaction(SIGSYS, &sa, NULL);
}

static int call_nanosleep(void)
{
	struct timespec ts = { 0, 1000 };

	return nanosleep(&ts, NULL);
}

/* The vsock worker's calls (virtio/vsock.c). */
static int call_socket_unix(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	return fd < 0 ? -1 : close(fd);
}

static int call_connect_unix(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX,
				  .sun_path = "/nonexistent/microvm_52" };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r;

	if (fd < 0)
		return -1;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r < 0 && errno == ENOENT ? 0 : -1;
}

static int call_sendmsg_recvmsg(void)
{
	char b = 1;
	struct iovec v = { &b, 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

	/* The spare fd is a pipe: the kernel says it is no socket. */
	if (sendmsg(spare_fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0 ||
	    errno != ENOTSOCK)
		return -1;
	if (recvmsg(spare_fd, &m, MSG_DONTWAIT) >= 0 || errno != ENOTSOCK)
		return -1;
	return shutdown(spare_fd, SHUT_WR) < 0 && errno == ENOTSOCK ? 0 : -1;
}

/* A virtio-net worker's calls (virtio/net_queue.c). */
static int call_readv_writev(void)
{
	char b = 0;
	struct iovec v = { &b, 1 };

	if (readv(-1, &v, 1) >= 0 || errno != EBADF)
		return -1;
	return writev(spare_fd, &v, 1) == 1 ? 0 : -1;
}

/* What starting it does (tap.c): the spare pipe is no tap. */
static int call_tunsetoffload(void)
{
	return ioctl(spare_fd, TUNSETOFFLOAD, 0ul) < 0 && errno == ENOTTY ?
		       0 : -1;
}

/* A tap queue attached or detached (tap.c): the spare pipe is no tap. */
static int call_tunsetqueue(void)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_DETACH_QUEUE;
	return ioctl(spare_fd, TUNSETQUEUE, &ifr) < 0 && errno == ENOTTY ?
		       0 : -1;
}

enum spare { SPARE_PIPE, SPARE_EPOLL, SPARE_LISTEN };

struct row {
	const char *what;
	enum confine_class cls;
	int (*call)(void);
	const char *syscall; /* forbidden: its name in the line; NULL: allowed */
	enum spare spare;
	/* In a sanitizer build the runtime's list allows it, or its
	 * interceptor may not pass it to the kernel: either outcome. */
	bool sanitizer_varies;
	bool vsock; /* the machine has a vsock device (confine_policy_vsock) */
	bool net;   /* the machine has a net device (confine_policy_net) */
};

#define ALLOWED(w, c, fn) { .what = (w), .cls = (c), .call = (fn) }
#define FORBIDDEN(w, c, fn, sys)                                          \
	{ .what = (w), .cls = (c), .call = (fn), .syscall = (sys) }
#define VSOCK_ALLOWED(w, c, fn)                                           \
	{ .what = (w), .cls = (c), .call = (fn), .vsock = true }
#define VSOCK_FORBIDDEN(w, c, fn, sys)                                    \
	{ .what = (w), .cls = (c), .call = (fn), .syscall = (sys),        \
	  .vsock = true }
#define NET_ALLOWED(w, c, fn)                                             \
	{ .what = (w), .cls = (c), .call = (fn), .net = true }

static const struct row rows[] = {
	/* Forbidden everywhere. */
	FORBIDDEN("socket", CONFINE_MAIN, call_socket, "socket"),
	FORBIDDEN("socket", CONFINE_VCPU, call_socket, "socket"),
	FORBIDDEN("socket", CONFINE_IO, call_socket, "socket"),
	FORBIDDEN("socket", CONFINE_CONSOLE, call_socket, "socket"),
	FORBIDDEN("create", CONFINE_MAIN, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_MAIN, .call = call_open_ro,
	  .syscall = "openat", .sanitizer_varies = true },
	FORBIDDEN("create", CONFINE_VCPU, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_VCPU, .call = call_open_ro,
	  .syscall = "openat", .sanitizer_varies = true },
	FORBIDDEN("create", CONFINE_IO, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_IO, .call = call_open_ro,
	  .syscall = "openat", .sanitizer_varies = true },
	FORBIDDEN("create", CONFINE_CONSOLE, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_CONSOLE, .call = call_open_ro,
	  .syscall = "openat", .sanitizer_varies = true },
	FORBIDDEN("execve", CONFINE_VCPU, call_execve, "execve"),
	FORBIDDEN("execve", CONFINE_IO, call_execve, "execve"),
	FORBIDDEN("mmap exec", CONFINE_VCPU, call_mmap_exec, "mmap"),
	FORBIDDEN("mmap exec", CONFINE_IO, call_mmap_exec, "mmap"),
	FORBIDDEN("fork", CONFINE_VCPU, call_fork, "clone"),
	FORBIDDEN("fork", CONFINE_MAIN, call_fork, "clone"),
	FORBIDDEN("fork", CONFINE_IO, call_fork, "clone"),
	/* ThreadSanitizer keeps handlers in a table of its own and passes
	 * only the first sigaction of a signal to the kernel. */
	{ .what = "sigaction SIGSYS", .cls = CONFINE_MAIN,
	  .call = call_sigaction_sigsys, .syscall = "rt_sigaction",
	  .sanitizer_varies = true },
	{ .what = "sigaction SIGSYS", .cls = CONFINE_VCPU,
	  .call = call_sigaction_sigsys, .syscall = "rt_sigaction",
	  .sanitizer_varies = true },
	/* Every ring exists before the filters (blk_queue_open()). */
	FORBIDDEN("io_uring_setup", CONFINE_MAIN, call_uring_setup,
		  "io_uring_setup"),
	FORBIDDEN("io_uring_setup", CONFINE_VCPU, call_uring_setup,
		  "io_uring_setup"),
	FORBIDDEN("io_uring_setup", CONFINE_IO, call_uring_setup,
		  "io_uring_setup"),
	FORBIDDEN("io_uring_setup", CONFINE_CONSOLE, call_uring_setup,
		  "io_uring_setup"),
	ALLOWED("io_uring unregister files", CONFINE_MAIN,
		call_uring_unregister_files),
	FORBIDDEN("io_uring register files", CONFINE_MAIN,
		  call_uring_register_files, "io_uring_register"),
	FORBIDDEN("io_uring unregister files", CONFINE_VCPU,
		  call_uring_unregister_files, "io_uring_register"),
	FORBIDDEN("io_uring register files", CONFINE_VCPU,
		  call_uring_register_files, "io_uring_register"),
	FORBIDDEN("io_uring register files", CONFINE_IO,
		  call_uring_register_files, "io_uring_register"),
	/* newfstatat: an empty path only (emulated as fstat). */
	ALLOWED("fstat", CONFINE_MAIN, call_fstat),
	ALLOWED("fstat", CONFINE_VCPU, call_fstat),
	ALLOWED("fstat", CONFINE_IO, call_fstat),
	ALLOWED("fstat", CONFINE_CONSOLE, call_fstat),
	ALLOWED("fstat bad fd", CONFINE_IO, call_fstat_badfd),
	{ .what = "fstatat path", .cls = CONFINE_MAIN,
	  .call = call_fstatat_path, .syscall = "newfstatat",
	  .sanitizer_varies = true },
	{ .what = "fstatat path", .cls = CONFINE_VCPU,
	  .call = call_fstatat_path, .syscall = "newfstatat",
	  .sanitizer_varies = true },
	{ .what = "fstatat path", .cls = CONFINE_IO,
	  .call = call_fstatat_path, .syscall = "newfstatat",
	  .sanitizer_varies = true },
	{ .what = "fstatat path", .cls = CONFINE_CONSOLE,
	  .call = call_fstatat_path, .syscall = "newfstatat",
	  .sanitizer_varies = true },
	FORBIDDEN("stat", CONFINE_IO, call_stat, "newfstatat"),
	FORBIDDEN("stat", CONFINE_VCPU, call_stat, "newfstatat"),
	/* tgkill: this process's threads only. */
	ALLOWED("tgkill own", CONFINE_MAIN, call_tgkill_self),
	ALLOWED("tgkill own", CONFINE_VCPU, call_tgkill_self),
	ALLOWED("tgkill own", CONFINE_IO, call_tgkill_self),
	ALLOWED("tgkill own", CONFINE_CONSOLE, call_tgkill_self),
	FORBIDDEN("tgkill other", CONFINE_MAIN, call_tgkill_other, "tgkill"),
	FORBIDDEN("tgkill other", CONFINE_VCPU, call_tgkill_other, "tgkill"),
	FORBIDDEN("tgkill other", CONFINE_IO, call_tgkill_other, "tgkill"),
	FORBIDDEN("tgkill other", CONFINE_CONSOLE, call_tgkill_other,
		  "tgkill"),
	/* The control class (the API server to come). */
	{ .what = "accept4 listening", .cls = CONFINE_CONTROL,
	  .call = call_accept_listen, .spare = SPARE_LISTEN },
	{ .what = "accept4 other", .cls = CONFINE_CONTROL,
	  .call = call_accept_other, .syscall = "accept4",
	  .spare = SPARE_LISTEN },
	FORBIDDEN("accept4", CONFINE_MAIN, call_accept_other, "accept4"),
	ALLOWED("write", CONFINE_CONTROL, call_write),
	ALLOWED("fstat", CONFINE_CONTROL, call_fstat),
	{ .what = "epoll_wait", .cls = CONFINE_CONTROL,
	  .call = call_epoll_wait, .spare = SPARE_EPOLL },
	FORBIDDEN("io_uring_setup", CONFINE_CONTROL, call_uring_setup,
		  "io_uring_setup"),
	FORBIDDEN("socket", CONFINE_CONTROL, call_socket, "socket"),
	FORBIDDEN("create", CONFINE_CONTROL, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_CONTROL,
	  .call = call_open_ro, .syscall = "openat",
	  .sanitizer_varies = true },
	FORBIDDEN("execve", CONFINE_CONTROL, call_execve, "execve"),
	FORBIDDEN("fork", CONFINE_CONTROL, call_fork, "clone"),
	FORBIDDEN("KVM_RUN", CONFINE_CONTROL, call_kvm_run, "ioctl"),
	FORBIDDEN("tgkill other", CONFINE_CONTROL, call_tgkill_other,
		  "tgkill"),
	/* ioctl by request number, per class. */
	ALLOWED("KVM_RUN", CONFINE_VCPU, call_kvm_run),
	FORBIDDEN("KVM_RUN", CONFINE_IO, call_kvm_run, "ioctl"),
	FORBIDDEN("KVM_RUN", CONFINE_MAIN, call_kvm_run, "ioctl"),
	FORBIDDEN("KVM_RUN", CONFINE_CONSOLE, call_kvm_run, "ioctl"),
	ALLOWED("VHOST_BLK_SET_BACKEND", CONFINE_VCPU, call_vhost_set_backend),
	ALLOWED("VHOST_BLK_SET_BACKEND", CONFINE_MAIN, call_vhost_set_backend),
	FORBIDDEN("VHOST_BLK_SET_BACKEND", CONFINE_IO, call_vhost_set_backend,
		  "ioctl"),
	ALLOWED("VHOST_SET_VRING_CALL", CONFINE_VCPU, call_vhost_set_vring_call),
	FORBIDDEN("VHOST_SET_VRING_CALL", CONFINE_CONSOLE,
		  call_vhost_set_vring_call, "ioctl"),
	ALLOWED("VHOST_GET_VRING_BASE", CONFINE_VCPU, call_vhost_get_vring_base),
	ALLOWED("VHOST_GET_VRING_BASE", CONFINE_MAIN, call_vhost_get_vring_base),
	ALLOWED("VHOST_SET_FEATURES", CONFINE_VCPU, call_vhost_set_features),
	/* Main resumes a paused device: it sets the module up again. */
	ALLOWED("VHOST_SET_FEATURES", CONFINE_MAIN, call_vhost_set_features),
	FORBIDDEN("VHOST_SET_FEATURES", CONFINE_CONSOLE,
		  call_vhost_set_features, "ioctl"),
	ALLOWED("VHOST_VSOCK_SET_RUNNING", CONFINE_VCPU,
		call_vhost_vsock_set_running),
	ALLOWED("VHOST_VSOCK_SET_RUNNING", CONFINE_MAIN,
		call_vhost_vsock_set_running),
	FORBIDDEN("VHOST_VSOCK_SET_RUNNING", CONFINE_IO,
		  call_vhost_vsock_set_running, "ioctl"),
	FORBIDDEN("VHOST_VSOCK_SET_RUNNING", CONFINE_CONSOLE,
		  call_vhost_vsock_set_running, "ioctl"),
	/* The vsock worker serves only the event queue with engine=vhost. */
	VSOCK_FORBIDDEN("VHOST_VSOCK_SET_RUNNING", CONFINE_VSOCK,
			call_vhost_vsock_set_running, "ioctl"),
	ALLOWED("BLKDISCARD", CONFINE_IO, call_blkdiscard),
	ALLOWED("BLKZEROOUT", CONFINE_IO, call_blkzeroout),
	ALLOWED("BLKDISCARD", CONFINE_VCPU, call_blkdiscard),
	FORBIDDEN("BLKDISCARD other fd", CONFINE_IO, call_blkdiscard_other,
		  "ioctl"),
	FORBIDDEN("BLKZEROOUT other fd", CONFINE_IO, call_blkzeroout_other,
		  "ioctl"),
	FORBIDDEN("BLKDISCARD other fd", CONFINE_VCPU, call_blkdiscard_other,
		  "ioctl"),
	/* Main starts queue threads on resume: they inherit its filter. */
	ALLOWED("BLKDISCARD", CONFINE_MAIN, call_blkdiscard),
	FORBIDDEN("BLKDISCARD other fd", CONFINE_MAIN, call_blkdiscard_other,
		  "ioctl"),
	FORBIDDEN("BLKDISCARD", CONFINE_CONSOLE, call_blkdiscard, "ioctl"),
	ALLOWED("preadv", CONFINE_IO, call_preadv),
	ALLOWED("pwritev", CONFINE_IO, call_pwritev),
	/* A vCPU starts the queue threads: it holds the I/O list too. */
	ALLOWED("preadv", CONFINE_VCPU, call_preadv),
	ALLOWED("pwritev", CONFINE_MAIN, call_pwritev),
	FORBIDDEN("pwritev", CONFINE_CONSOLE, call_pwritev, "pwritev"),
	ALLOWED("TCGETS", CONFINE_CONSOLE, call_tcgets),
	ALLOWED("TCGETS", CONFINE_MAIN, call_tcgets),
	FORBIDDEN("TCGETS", CONFINE_IO, call_tcgets, "ioctl"),
	FORBIDDEN("TCGETS", CONFINE_VCPU, call_tcgets, "ioctl"),
	/* Other calls by argument or class. */
	ALLOWED("fcntl F_GETFL", CONFINE_CONSOLE, call_fcntl_getfl),
	FORBIDDEN("fcntl F_DUPFD", CONFINE_CONSOLE, call_fcntl_dupfd, "fcntl"),
	ALLOWED("eventfd", CONFINE_VCPU, call_eventfd),
	FORBIDDEN("eventfd", CONFINE_IO, call_eventfd, "eventfd2"),
	{ .what = "epoll_wait", .cls = CONFINE_IO, .call = call_epoll_wait,
	  .spare = SPARE_EPOLL },
	{ .what = "epoll_wait", .cls = CONFINE_CONSOLE, .call = call_epoll_wait,
	  .syscall = "epoll_wait", .spare = SPARE_EPOLL },
	/* What every class does. */
	ALLOWED("mmap rw", CONFINE_MAIN, call_mmap_rw),
	ALLOWED("mmap rw", CONFINE_IO, call_mmap_rw),
	ALLOWED("malloc", CONFINE_VCPU, call_malloc),
	ALLOWED("malloc", CONFINE_IO, call_malloc),
	ALLOWED("malloc", CONFINE_CONSOLE, call_malloc),
	ALLOWED("write", CONFINE_MAIN, call_write),
	ALLOWED("dprintf", CONFINE_MAIN, call_dprintf),
	ALLOWED("sigtimedwait", CONFINE_MAIN, call_sigtimedwait),
	FORBIDDEN("sigtimedwait", CONFINE_VCPU, call_sigtimedwait,
		  "rt_sigtimedwait"),
	ALLOWED("write", CONFINE_CONSOLE, call_write),
	ALLOWED("nanosleep", CONFINE_IO, call_nanosleep),
	/* The vsock worker: Unix sockets only, no files, no threads. */
	ALLOWED("socket AF_UNIX", CONFINE_VSOCK, call_socket_unix),
	FORBIDDEN("socket AF_INET", CONFINE_VSOCK, call_socket, "socket"),
	ALLOWED("connect", CONFINE_VSOCK, call_connect_unix),
	ALLOWED("sendmsg recvmsg shutdown", CONFINE_VSOCK,
		call_sendmsg_recvmsg),
	{ .what = "accept4", .cls = CONFINE_VSOCK, .call = call_accept_listen,
	  .spare = SPARE_LISTEN },
	{ .what = "epoll_wait", .cls = CONFINE_VSOCK,
	  .call = call_epoll_wait, .spare = SPARE_EPOLL },
	ALLOWED("write", CONFINE_VSOCK, call_write),
	FORBIDDEN("eventfd", CONFINE_VSOCK, call_eventfd, "eventfd2"),
	FORBIDDEN("create", CONFINE_VSOCK, call_open_create, "openat"),
	{ .what = "open read-only", .cls = CONFINE_VSOCK,
	  .call = call_open_ro, .syscall = "openat",
	  .sanitizer_varies = true },
	FORBIDDEN("execve", CONFINE_VSOCK, call_execve, "execve"),
	FORBIDDEN("fork", CONFINE_VSOCK, call_fork, "clone"),
	FORBIDDEN("KVM_RUN", CONFINE_VSOCK, call_kvm_run, "ioctl"),
	FORBIDDEN("io_uring_setup", CONFINE_VSOCK, call_uring_setup,
		  "io_uring_setup"),
	FORBIDDEN("preadv", CONFINE_VSOCK, call_preadv, "preadv"),
	/* The threads that start it pass it their filter: with a vsock
	 * device theirs admit its calls, without one they do not. */
	VSOCK_ALLOWED("socket AF_UNIX", CONFINE_VCPU, call_socket_unix),
	VSOCK_ALLOWED("connect", CONFINE_MAIN, call_connect_unix),
	VSOCK_FORBIDDEN("socket AF_INET", CONFINE_VCPU, call_socket,
			"socket"),
	FORBIDDEN("socket AF_UNIX", CONFINE_VCPU, call_socket_unix, "socket"),
	FORBIDDEN("socket AF_UNIX", CONFINE_IO, call_socket_unix, "socket"),
	VSOCK_FORBIDDEN("socket AF_UNIX", CONFINE_IO, call_socket_unix,
			"socket"),
	/* A net worker: its tap fd and epoll set only; no socket, no file,
	 * no ioctl, no thread. */
	ALLOWED("readv writev", CONFINE_NET, call_readv_writev),
	{ .what = "epoll_wait", .cls = CONFINE_NET,
	  .call = call_epoll_wait, .spare = SPARE_EPOLL },
	ALLOWED("write", CONFINE_NET, call_write),
	FORBIDDEN("socket AF_UNIX", CONFINE_NET, call_socket_unix, "socket"),
	FORBIDDEN("create", CONFINE_NET, call_open_create, "openat"),
	FORBIDDEN("TUNSETOFFLOAD", CONFINE_NET, call_tunsetoffload, "ioctl"),
	/* Pair 0's worker answers VQ_PAIRS_SET by choosing tap queues. */
	ALLOWED("TUNSETQUEUE", CONFINE_NET, call_tunsetqueue),
	FORBIDDEN("TUNSETQUEUE", CONFINE_IO, call_tunsetqueue, "ioctl"),
	FORBIDDEN("eventfd", CONFINE_NET, call_eventfd, "eventfd2"),
	FORBIDDEN("fork", CONFINE_NET, call_fork, "clone"),
	FORBIDDEN("KVM_RUN", CONFINE_NET, call_kvm_run, "ioctl"),
	/* The threads that start it: with a net device theirs admit its
	 * calls and the offload ioctl, without one they do not. */
	NET_ALLOWED("readv writev", CONFINE_VCPU, call_readv_writev),
	NET_ALLOWED("TUNSETOFFLOAD", CONFINE_VCPU, call_tunsetoffload),
	NET_ALLOWED("TUNSETOFFLOAD", CONFINE_MAIN, call_tunsetoffload),
	NET_ALLOWED("TUNSETQUEUE", CONFINE_VCPU, call_tunsetqueue),
	NET_ALLOWED("TUNSETQUEUE", CONFINE_MAIN, call_tunsetqueue),
	FORBIDDEN("readv", CONFINE_VCPU, call_readv_writev, "readv"),
	FORBIDDEN("TUNSETOFFLOAD", CONFINE_VCPU, call_tunsetoffload,
		  "ioctl"),
	FORBIDDEN("readv", CONFINE_IO, call_readv_writev, "readv"),
};

static const char *const class_names[] = {
	[CONFINE_MAIN] = "main",
	[CONFINE_VCPU] = "vcpu",
	[CONFINE_IO] = "io",
	[CONFINE_CONSOLE] = "console",
	[CONFINE_CONTROL] = "control",
	[CONFINE_VSOCK] = "vsock",
	[CONFINE_NET] = "net",
};

struct child {
	int status;
	char err[4096];
};

/*
 * Run @fn in a forked child with its stderr captured; the child exits
 * with what @fn returns (0 or 1), unless it is killed.
 */
static void run_child(int (*fn)(const void *), const void *arg,
		      struct child *c)
{
	int errp[2];
	ssize_t n, got = 0;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	if (pipe(errp)) {
		CHECK(0);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(errp[0]);
		dup2(errp[1], STDERR_FILENO);
		exit(fn(arg) ? 1 : 0);
	}
	close(errp[1]);
	while ((n = read(errp[0], c->err + got,
			 sizeof(c->err) - 1 - got)) > 0)
		got += n;
	close(errp[0]);
	waitpid(pid, &c->status, 0);
}

struct row_arg {
	const struct row *row;
	enum confine_mode mode;
};

static int row_child(const void *p)
{
	const struct row_arg *a = p;
	char err[256];
	int fds[2];

	parent_pid = getppid();
	if (a->row->spare == SPARE_LISTEN) {
		struct sockaddr sa = { .sa_family = AF_UNIX };

		/* Bound to an abstract name the kernel picks (autobind). */
		listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (listen_fd < 0 ||
		    bind(listen_fd, &sa, sizeof(sa.sa_family)) ||
		    listen(listen_fd, 1))
			return 1;
		confine_control_listen_fd(listen_fd);
	}
	if (a->row->spare == SPARE_EPOLL) {
		spare_fd = epoll_create1(0);
	} else {
		if (pipe(fds))
			return 1;
		spare_fd = fds[1];
	}
	confine_policy_vsock(a->row->vsock);
	confine_policy_net(a->row->net);
	if (confine_prepare(a->mode, err, sizeof(err))) {
		fprintf(stderr, "prepare: %s\n", err);
		return 1;
	}
	/* The spare fd stands for the disk. */
	if (confine_disk_fds(&spare_fd, 1, err, sizeof(err))) {
		fprintf(stderr, "disk fds: %s\n", err);
		return 1;
	}
	confine_thread(a->row->cls);
	return a->row->call() ? 1 : 0;
}

static bool killed_by_sigsys(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static void test_rows(enum confine_mode mode)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct row_arg a = { .row = r, .mode = mode };
		bool forbidden = r->syscall && mode != CONFINE_LOG;
		char want[128];
		struct child c;
		int fails = test_fail_count;

		run_child(row_child, &a, &c);
		if (CONFINE_SANITIZER && r->sanitizer_varies) {
			CHECK(WIFEXITED(c.status) || killed_by_sigsys(c.status));
		} else if (!forbidden) {
			CHECK(WIFEXITED(c.status));
			/* With log, a forbidden call may still fail in the
			 * kernel (execve of a missing file, say): no matter. */
			if (!r->syscall)
				CHECK_EQ(WEXITSTATUS(c.status), 0);
			CHECK(!strstr(c.err, "seccomp:"));
		} else {
			CHECK(killed_by_sigsys(c.status));
			snprintf(want, sizeof(want),
				 "(%s class) made forbidden system call ",
				 class_names[r->cls]);
			if (mode == CONFINE_ON) {
				CHECK(strstr(c.err, "microvm: seccomp: thread "));
				CHECK(strstr(c.err, want));
				snprintf(want, sizeof(want), "(%s); ending",
					 r->syscall);
				CHECK(strstr(c.err, want));
			} else {
				CHECK(!strstr(c.err, "seccomp:"));
			}
		}
		if (test_fail_count != fails)
			fprintf(stderr, "row %zu (%s in %s, --seccomp=%s): "
				"status %#x, stderr '%s'\n", i, r->what,
				class_names[r->cls], confine_mode_name(mode),
				c.status, c.err);
	}
}

/* A vCPU thread starts an I/O thread: it runs under both filters. */
static void *io_child_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "vda-q0");
	confine_thread(CONFINE_IO);
	if (call_epoll_wait() || call_blkdiscard() || call_malloc())
		return (void *)1;
	call_kvm_run(); /* the vCPU filter allows it, the I/O one not */
	return (void *)2;
}

static int stacked_child(const void *arg)
{
	pthread_t t;
	char err[256];
	void *ret = NULL;

	(void)arg;
	spare_fd = epoll_create1(0);
	if (confine_prepare(CONFINE_ON, err, sizeof(err)) ||
	    confine_disk_fds(&spare_fd, 1, err, sizeof(err)))
		return 1;
	pthread_setname_np(pthread_self(), "vcpu0");
	confine_thread(CONFINE_VCPU);
	if (pthread_create(&t, NULL, io_child_thread, NULL))
		return 1;
	pthread_join(t, &ret);
	return 1;
}

static void test_stacked(void)
{
	struct child c;

	run_child(stacked_child, NULL, &c);
	if (!killed_by_sigsys(c.status))
		fprintf(stderr, "stacked: status %#x, stderr '%s'\n", c.status,
			c.err);
	CHECK(killed_by_sigsys(c.status));
	CHECK(strstr(c.err, "thread vda-q0 (io class) made forbidden system "
			    "call 16 (ioctl)"));
}

/* vCPU threads go on only once main has its filter. */
static atomic_int vcpu_past_gate;

static void *gate_vcpu(void *arg)
{
	(void)arg;
	confine_thread(CONFINE_VCPU);
	atomic_store(&vcpu_past_gate, 1);
	return NULL;
}

static int gate_child(const void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	char err[256];
	pthread_t t;
	int early;

	(void)arg;
	if (confine_prepare(CONFINE_ON, err, sizeof(err)) ||
	    pthread_create(&t, NULL, gate_vcpu, NULL))
		return 1;
	nanosleep(&ts, NULL);
	early = atomic_load(&vcpu_past_gate);
	confine_thread(CONFINE_MAIN);
	pthread_join(t, NULL);
	return early || !atomic_load(&vcpu_past_gate);
}

static void test_gate(void)
{
	struct child c;

	run_child(gate_child, NULL, &c);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
}

/* The value of "@key:" in /proc/@pid/status (0: ours), or -1. */
static long proc_status_field(pid_t pid, const char *key)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t k = strlen(key);

		if (!strncmp(p, key, k) && p[k] == ':')
			return strtol(p + k + 1, NULL, 10);
	}
	return -1;
}

/* The parent reads the confined child's /proc status. */
static void test_proc_status(void)
{
	long filters = proc_status_field(0, "Seccomp_filters");
	char err[256], buf[16];
	int go[2], ready[2];
	pid_t pid;
	int status;

	CHECK(!pipe(go) && !pipe(ready));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char b;

		if (confine_prepare(CONFINE_ON, err, sizeof(err)))
			_exit(1);
		confine_thread(CONFINE_CONSOLE);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		_exit(0);
	}
	CHECK_EQ(read(ready[0], buf, 1), 1);
	CHECK_EQ(proc_status_field(pid, "Seccomp"), 2);
	/* One more than this process has (0 unless run under a filter). */
	CHECK_EQ(proc_status_field(pid, "Seccomp_filters"), filters + 1);
	CHECK_EQ(write(go[1], "g", 1), 1);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int selftest_child(const void *arg)
{
	char err[256];

	setenv("MICROVM_SECCOMP_SELFTEST", arg, 1);
	if (confine_prepare(CONFINE_ON, err, sizeof(err))) {
		fprintf(stderr, "prepare: %s\n", err);
		return 1;
	}
	pthread_setname_np(pthread_self(), "console");
	confine_thread(CONFINE_CONSOLE);
	return 0;
}

static void test_selftest(void)
{
	struct child c;

	run_child(selftest_child, "console", &c);
	CHECK(killed_by_sigsys(c.status));
	CHECK(strstr(c.err, "thread console (console class) made forbidden "
			    "system call 41 (socket)"));
	/* Another class's trigger leaves this one alone. */
	run_child(selftest_child, "io", &c);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
	/* A bad value is refused with its name. */
	run_child(selftest_child, "vcpus", &c);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 1);
	CHECK(strstr(c.err, "MICROVM_SECCOMP_SELFTEST=vcpus"));
}

/* RLIMIT_NOFILE: what is open now, plus what was asked, plus the slack. */
static int nofile_child(const void *arg)
{
	long limit = confine_limit_fds(5);
	int n = 0, first = -1, fd, err;

	(void)arg;
	if (limit < 0)
		return 1;
	while ((fd = eventfd(0, 0)) >= 0) {
		if (first < 0)
			first = fd;
		n++;
	}
	err = errno;
	if (first >= 0)
		closefrom(first); /* sanitizers open files at exit */
	/* Every fd below the limit that was free got used, no more. */
	fprintf(stderr, "limit %ld, opened %d\n", limit, n);
	return err != EMFILE || n < 5 + CONFINE_FDS_SLACK || n >= limit;
}

static void test_nofile(void)
{
	struct child c;

	run_child(nofile_child, NULL, &c);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
	if (!WIFEXITED(c.status) || WEXITSTATUS(c.status))
		fprintf(stderr, "nofile: %s", c.err);
}

/* off: no filter at all, forbidden calls work. */
static int off_child(const void *arg)
{
	char err[256];
	int fd;

	(void)arg;
	if (confine_prepare(CONFINE_OFF, err, sizeof(err)))
		return 1;
	confine_thread(CONFINE_IO);
	fd = call_socket();
	return fd < 0;
}

static void test_off(void)
{
	struct child c;

	run_child(off_child, NULL, &c);
	CHECK(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
}

int main(void)
{
	/* A kernel without CONFIG_SECCOMP_FILTER has no such lines. */
	if (proc_status_field(0, "Seccomp") < 0 ||
	    proc_status_field(0, "Seccomp_filters") < 0) {
		printf("SKIP: this kernel has no seccomp filters\n");
		return 77;
	}
	test_rows(CONFINE_ON);
	test_rows(CONFINE_KILL);
	test_rows(CONFINE_LOG);
	test_stacked();
	test_gate();
	test_proc_status();
	test_selftest();
	test_off();
	test_nofile();
	return test_done();
}
