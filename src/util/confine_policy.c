// SPDX-License-Identifier: Apache-2.0
/*
 * What each thread class may call once confined, and why (see confine.c
 * for how the filters stack). Nothing here opens, creates, renames or
 * truncates a file, makes a socket, executes a program, maps executable
 * memory, or creates anything but a thread of this process: every file
 * microvm needs is open before the first filter goes in.
 */
#include "util/confine_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <linux/seccomp.h>
#include <linux/vhost.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vhost_blk.h"

#define ALLOW(name) { .nr = SCMP_SYS(name) }
#define ALLOW_IF(name, argn, how, x, y)                                  \
	{ .nr = SCMP_SYS(name), .nargs = 1,                              \
	  .cmp = { { .arg = (argn), .op = (how), .a = (x), .b = (y) } } }
/* Allowed when (arg & mask) == value. */
#define ALLOW_MASKED(name, argn, mask, value)                            \
	ALLOW_IF(name, argn, SCMP_CMP_MASKED_EQ, mask, value)
#define ALLOW_EQ(name, argn, value) ALLOW_IF(name, argn, SCMP_CMP_EQ, value, 0)
#define ALLOW_NE(name, argn, value) ALLOW_IF(name, argn, SCMP_CMP_NE, value, 0)

#define NR(a) (sizeof(a) / sizeof((a)[0]))
#define PART(n, r, i) { .name = (n), .rules = (r), .nr_rules = NR(r),     \
			.ioctls = (i), .nr_ioctls = NR(i) }
#define PART_NO_IOCTLS(n, r) { .name = (n), .rules = (r), .nr_rules = NR(r) }

/* What pthread_create() passes to clone(): a thread, nothing else. */
#define CONFINE_THREAD_CLONE_FLAGS                                       \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
	 CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |             \
	 CLONE_CHILD_CLEARTID)

/*
 * Every thread: glibc's malloc (brk, mmap/mprotect without PROT_EXEC,
 * munmap, mremap, madvise), locks (futex), clocks where the vDSO falls
 * back to the kernel, sleeps, logging (write), eventfds (read, write),
 * signals: masks, the vCPU kick and abort() (tgkill of our own
 * process; rt_sigaction of anything but SIGSYS), and leaving (exit, exit_group). clone3 answers
 * ENOSYS: its flags are in memory where no filter can read them, and
 * glibc then falls back to clone, whose flags the vCPU list checks.
 */
static const struct confine_rule base_rules[] = {
	ALLOW(read),
	ALLOW(write),
	ALLOW(futex),
	ALLOW(brk),
	ALLOW_MASKED(mmap, 2, PROT_EXEC, 0),
	ALLOW_MASKED(mprotect, 2, PROT_EXEC, 0),
	ALLOW(munmap),
	ALLOW(mremap),
	ALLOW(madvise),
	ALLOW(clock_gettime),
	ALLOW(clock_getres),
	ALLOW(gettimeofday),
	ALLOW(time),
	ALLOW(nanosleep),
	ALLOW(clock_nanosleep),
	ALLOW(sched_yield),
	ALLOW(getpid),
	ALLOW(gettid),
	ALLOW(getrandom),
	ALLOW(fstat),
	/* glibc's fstat(), stdio's included, is newfstatat(fd, "",
	 * AT_EMPTY_PATH); the filter cannot read the path, the handler
	 * can: it makes an empty path's call as fstat(fd), and any other
	 * path is the forbidden call (confine.c, confine_emulate()). */
	{ .nr = SCMP_SYS(newfstatat), .action = CONFINE_ACT_EMULATE,
	  .nargs = 1, .cmp = { { .arg = 3, .op = SCMP_CMP_MASKED_EQ,
				 .a = AT_EMPTY_PATH, .b = AT_EMPTY_PATH } } },
	ALLOW(rt_sigprocmask),
	ALLOW(rt_sigreturn),
	ALLOW_NE(rt_sigaction, 0, SIGSYS),
	/* tgkill: only our own threads, a rule made at run time with
	 * our pid (confine.c, build_class()). */
	ALLOW(restart_syscall),
	ALLOW(exit),
	ALLOW(exit_group),
	{ .nr = SCMP_SYS(clone3), .action = SCMP_ACT_ERRNO(ENOSYS) },
};

/*
 * Main thread after startup, and the stats thread: waits for the exit
 * eventfd (poll) with --timeout; SIGUSR1 (rt_sigtimedwait); --stats
 * (dprintf asks the fd for its offset: lseek); kicks and
 * joins the vCPUs; the terminal back to how it was (termios ioctls);
 * vCPU state after --timeout or a crash with --verbose (registers; on
 * x86 also run state, timer MSRs and LAPIC); teardown: each device
 * reset stops its queue threads (join, io_uring_enter to wait out the
 * ring), each device's rings are closed (IORING_UNREGISTER_FILES, the
 * one register call a ring allows), ioeventfds and irqfds are taken
 * down, rings unmapped, fds closed.
 */
static const struct confine_rule control_rules[] = {
	ALLOW(poll),
	ALLOW(ppoll),
	ALLOW(rt_sigtimedwait),
	ALLOW(lseek),
	ALLOW(close),
	ALLOW(io_uring_enter),
	ALLOW_EQ(io_uring_register, 1, IORING_UNREGISTER_FILES),
};

static const unsigned long control_ioctls[] = {
	KVM_IOEVENTFD, KVM_IRQFD, KVM_GET_REGS, KVM_GET_SREGS,
	/* the vCPU dump after --timeout */
#ifdef __x86_64__
	/* run state, timer, LAPIC */
	KVM_GET_MP_STATE, KVM_GET_MSRS, KVM_GET_LAPIC, KVM_GET_TSC_KHZ,
#endif
#ifdef __aarch64__
	KVM_GET_ONE_REG, /* pc, sp, pstate */
#endif
	TCGETS, TCSETS, TCSETSW, TCSETSF,
	/* engine=vhost teardown (blk_vhost_stop, vsock_vhost_stop,
	 * net_vhost_stop): stop serving, take the ring state back, detach
	 * the kick eventfds. */
	VHOST_BLK_SET_BACKEND, VHOST_VSOCK_SET_RUNNING, VHOST_NET_SET_BACKEND,
	VHOST_GET_VRING_BASE, VHOST_SET_VRING_KICK, VHOST_SET_VRING_ERR,
};

/*
 * vCPU thread: KVM_RUN; interrupts (KVM_IRQ_LINE for the UART and
 * i8042, MSI routes when the driver programs MSI-X); ioeventfds moved
 * with a PCI BAR. A register write that sets DRIVER_OK starts the queue
 * threads (blk_queue_start): a stop eventfd and an epoll set per queue,
 * then the thread (clone with thread flags only, and what a new thread
 * does before its own filter: set_robust_list, rseq, naming itself,
 * seccomp). A reset stops them again (close; io_uring_enter to wait out
 * the ring). No io_uring_setup and no io_uring_register: every ring a
 * queue will ever use was made and restricted at device creation
 * (blk_queue_open), before the first filter, and a reset drains it for
 * the next run (disk_queue_reset); a new ring would carry no
 * restriction and open, connect or unlink what no filter sees. Plus
 * every call of the I/O list (see confine.c: inherited).
 */
static const struct confine_rule vcpu_rules[] = {
	ALLOW(close),
	ALLOW(eventfd2),
	ALLOW(epoll_create1),
	ALLOW(epoll_ctl),
	ALLOW(io_uring_enter),
	ALLOW_EQ(clone, 0, CONFINE_THREAD_CLONE_FLAGS),
	ALLOW(set_robust_list),
	ALLOW(rseq),
	ALLOW_EQ(prctl, 0, PR_SET_NAME),
	ALLOW_EQ(prctl, 0, PR_GET_NAME),
	ALLOW_EQ(prctl, 0, PR_SET_TIMERSLACK), /* a queue that holds
						* interrupts (blk_queue.c) */
	ALLOW_EQ(seccomp, 0, SECCOMP_SET_MODE_FILTER),
};

/*
 * Main thread, the machine's lifecycle after boot (PATCH /vm, the API):
 * a pause stops every device's queues as a reset does (joins, closes),
 * and a resume starts them again as DRIVER_OK does: the thread calls of
 * the vCPU list above, and the vhost set-up ioctls below (no KVM_RUN).
 * A thread main starts inherits main's filter under its own, so main
 * also carries the I/O list (confine.c: inherited) and the disks'
 * discard ioctls. SendCtrlAltDel raises the keyboard interrupt (x86:
 * KVM_IRQ_LINE for the i8042; arm64: a write of the virtio-input
 * keyboard's irqfd, under its mutex: write and futex, the base list).
 */
static const unsigned long lifecycle_ioctls[] = {
	KVM_IRQ_LINE,
	VHOST_SET_FEATURES, VHOST_SET_VRING_NUM, VHOST_SET_VRING_ADDR,
	VHOST_SET_VRING_BASE, VHOST_SET_VRING_CALL,
};
/* (A resume's VHOST_BLK_SET_BACKEND, VHOST_VSOCK_SET_RUNNING,
 * VHOST_NET_SET_BACKEND and kicks: the control list, which main also
 * carries.) */

/*
 * Main thread with the API (confine_policy_api()): PATCH /drives/{id}
 * path_on_host opens the new image as startup opened the old one
 * (disk_open: open an existing file, never create, truncate or make a
 * temporary one; the block device's sizes, its queue's settings read
 * from sysfs, direct-I/O alignment by statx, the file system's type by
 * fstatfs, hole punching probed past the end, the OFD lock) and
 * re-points each ring's registered image (IORING_REGISTER_FILES_UPDATE,
 * which the ring's own restriction allows; it can reach no other file).
 */
#define CONFINE_NO_CREATE (O_CREAT | O_TRUNC | __O_TMPFILE)
static const struct confine_rule swap_rules[] = {
	ALLOW_MASKED(openat, 2, CONFINE_NO_CREATE, 0),
	ALLOW_EQ(fcntl, 1, F_GETFL),
	ALLOW_EQ(fcntl, 1, F_SETFL),
	ALLOW_EQ(fcntl, 1, F_OFD_SETLK),
	ALLOW(fstatfs),
	ALLOW(statx),
	ALLOW_EQ(fallocate, 1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE),
	ALLOW_EQ(io_uring_register, 1, IORING_REGISTER_FILES_UPDATE),
};

static const unsigned long swap_ioctls[] = {
	BLKGETSIZE64, BLKSSZGET, BLKPBSZGET,
};

/*
 * Main thread with the API: PUT /snapshot/create writes the paused
 * machine out (machine_snapshot.c): it creates or truncates the two files
 * write-only (no O_TMPFILE), sizes the memory file, writes the pages that
 * are not zero (a Diff: the dirty ones) where they belong and syncs both;
 * it reads each vCPU's and the VM's state and the slots' dirty logs (the
 * rest of the vCPU reads are the control list's).
 */
static const struct confine_rule snapshot_rules[] = {
	ALLOW_MASKED(openat, 2, O_ACCMODE | __O_TMPFILE, O_WRONLY),
	ALLOW(ftruncate),
	ALLOW(pwrite64),
	ALLOW(fsync),
};

static const unsigned long snapshot_ioctls[] = {
	KVM_CHECK_EXTENSION,
#ifdef __x86_64__
	KVM_GET_MSR_INDEX_LIST, KVM_GET_XSAVE, KVM_GET_XSAVE2, KVM_GET_FPU,
	KVM_GET_XCRS, KVM_GET_DEBUGREGS, KVM_GET_VCPU_EVENTS, KVM_GET_CPUID2,
	KVM_GET_IRQCHIP, KVM_GET_PIT2, KVM_GET_CLOCK,
#endif
#ifdef __aarch64__
	/* every register KVM lists, MP state and events; the GIC's and
	 * ITS's registers, and the two calls (SET_DEVICE_ATTR, group CTRL)
	 * that make KVM write their tables into guest RAM; the CPU target */
	KVM_GET_REG_LIST, KVM_GET_MP_STATE, KVM_GET_VCPU_EVENTS,
	KVM_GET_DEVICE_ATTR, KVM_HAS_DEVICE_ATTR, KVM_SET_DEVICE_ATTR,
	KVM_ARM_PREFERRED_TARGET,
#endif
	KVM_GET_DIRTY_LOG,
};

/*
 * engine=vhost: DRIVER_OK sets the module up and starts it
 * (blk_vhost_start, vsock_vhost_start: VHOST_VSOCK_SET_RUNNING 1,
 * net_vhost_start: VHOST_NET_SET_BACKEND per ring, with
 * the ring-error thread: clone as above), a reset stops it
 * (blk_vhost_stop, vsock_vhost_stop), and MSI-X mask and unmask writes
 * re-point a queue's call eventfd (pci_msix.c).
 */
static const unsigned long vcpu_ioctls[] = {
	KVM_RUN, KVM_IRQ_LINE, KVM_IOEVENTFD, KVM_IRQFD, KVM_SET_GSI_ROUTING,
	VHOST_SET_FEATURES, VHOST_SET_VRING_NUM, VHOST_SET_VRING_ADDR,
	VHOST_SET_VRING_BASE, VHOST_SET_VRING_KICK, VHOST_SET_VRING_CALL,
	VHOST_BLK_SET_BACKEND, VHOST_VSOCK_SET_RUNNING, VHOST_NET_SET_BACKEND,
	VHOST_GET_VRING_BASE, VHOST_SET_VRING_ERR,
};

/*
 * I/O queue thread: waits on its epoll set, drains and signals eventfds
 * (kick, completion, stop, irqfd), submits and reaps through its
 * io_uring, and runs block-device discard and write-zeroes at once
 * (BLKDISCARD, BLKZEROOUT). Disk reads and writes go through the ring,
 * except a snapshot disk's copy-up of a cluster on its first write
 * (preadv of the image, pwritev of the overlay, one cluster, at once)
 * and every read and write of an image on tmpfs or ramfs (preadv,
 * pwritev: see disk_uring.c); no fallocate here (the sync engine is for
 * tests only).
 */
static const struct confine_rule io_rules[] = {
	ALLOW(epoll_wait),
	ALLOW(epoll_pwait),
	ALLOW(epoll_pwait2), /* a held interrupt's deadline (blk_queue.c) */
	ALLOW(io_uring_enter),
	ALLOW(preadv),
	ALLOW(pwritev),
};

/* BLKDISCARD and BLKZEROOUT: on the disks' descriptors only, rules
 * built at run time (confine.c, confine_disk_fds()). */

/*
 * Console threads: block in read() or poll() on stdin and write() to
 * stdout (O_NONBLOCK and back through fcntl), raise the UART interrupt
 * when input arrives (KVM_IRQ_LINE), and query or set the terminal.
 */
static const struct confine_rule console_rules[] = {
	ALLOW(close), /* an abandoned console-out thread frees its buffer */
	ALLOW(poll),
	ALLOW(ppoll),
	ALLOW_EQ(fcntl, 1, F_GETFL),
	ALLOW_EQ(fcntl, 1, F_SETFL),
	ALLOW_EQ(fcntl, 1, F_GETFD),
};

static const unsigned long console_ioctls[] = {
	KVM_IRQ_LINE, TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGWINSZ,
};

/*
 * Control thread: the HTTP/JSON API server of the lifecycle work, on a
 * Unix socket made before the filters (no production caller yet). It
 * accepts on that socket (accept4, a rule built at run time on its fd:
 * confine.c), reads requests and writes answers on the connections,
 * waits in epoll with timerfds for timeouts, and closes what it is done
 * with. It makes no socket, opens no file by path, and makes no ring:
 * what an action needs (a snapshot file) the main thread opens.
 */
static const struct confine_rule control_thread_rules[] = {
	ALLOW(recvfrom),
	ALLOW(recvmsg),
	ALLOW(sendto),
	ALLOW(sendmsg),
	ALLOW(shutdown),
	ALLOW(close),
	ALLOW(epoll_create1),
	ALLOW(epoll_ctl),
	ALLOW(epoll_wait),
	ALLOW(epoll_pwait),
	ALLOW(timerfd_create),
	ALLOW(timerfd_settime),
	ALLOW(timerfd_gettime),
	ALLOW(poll),
	ALLOW(ppoll),
	ALLOW_EQ(fcntl, 1, F_GETFL),
	ALLOW_EQ(fcntl, 1, F_SETFL),
};

/*
 * The virtio-vsock worker (virtio/vsock.c): waits in its epoll set
 * (queue kicks, the listening socket, each connection) and changes what
 * it watches; accepts host programs on the listening socket made at
 * device creation; connects to a host listener <uds_path>_<port> for a
 * guest's request (a new Unix socket: AF_UNIX only, so nothing leaves
 * the host); moves bytes with sendmsg/recvmsg, half-closes with shutdown
 * and closes connections. It opens no file and makes no thread.
 */
static const struct confine_rule vsock_rules[] = {
	ALLOW(epoll_wait),
	ALLOW(epoll_pwait),
	ALLOW(epoll_pwait2),
	ALLOW(epoll_ctl),
	ALLOW_EQ(socket, 0, AF_UNIX),
	ALLOW(connect),
	ALLOW(accept4),
	ALLOW(recvmsg),
	ALLOW(sendmsg),
	ALLOW(recvfrom),
	ALLOW(sendto),
	ALLOW(shutdown),
	ALLOW(close),
};

static const struct confine_part part_vsock =
	PART_NO_IOCTLS("vsock", vsock_rules);

/*
 * A virtio-net queue pair's worker (virtio/net_queue.c): waits in its
 * epoll set (the pair's kicks, its tap queue fd) and changes what it
 * watches on the tap; reads a packet from the tap (read) and writes one
 * gathered from guest RAM (writev); wakes another pair's worker
 * (eventfd write, the base list). No socket and no file: the tap fds
 * were opened and set up before the first filter; one ioctl, pair 0's
 * worker attaching and detaching tap queues for the driver's
 * VQ_PAIRS_SET (TUNSETQUEUE).
 */
static const struct confine_rule net_rules[] = {
	ALLOW(epoll_wait),
	ALLOW(epoll_pwait),
	ALLOW(epoll_pwait2),
	ALLOW(epoll_ctl),
	ALLOW(readv),
	ALLOW(writev),
};

static const unsigned long net_ioctls[] = {
	TUNSETQUEUE,
};

/* The threads that start the workers set the taps' receive offloads
 * from the negotiated features (DRIVER_OK; a resume sets nothing) and,
 * at a reset, detach every tap queue but the first. */
static const unsigned long net_start_ioctls[] = {
	TUNSETOFFLOAD, TUNSETQUEUE,
};

static const struct confine_part part_net = PART("net", net_rules,
						 net_ioctls);
static const struct confine_part part_net_start = PART("net start",
						       net_rules,
						       net_start_ioctls);

static const struct confine_part part_control_thread =
	PART_NO_IOCTLS("control thread", control_thread_rules);

static const struct confine_part part_base = PART_NO_IOCTLS("base",
							     base_rules);
static const struct confine_part part_control = PART("control",
						     control_rules,
						     control_ioctls);
static const struct confine_part part_vcpu = PART("vcpu", vcpu_rules,
						  vcpu_ioctls);
static const struct confine_part part_io = PART_NO_IOCTLS("io", io_rules);
static const struct confine_part part_swap = PART("drive swap", swap_rules,
						  swap_ioctls);
static const struct confine_part part_snapshot = PART("snapshot",
						      snapshot_rules,
						      snapshot_ioctls);
static const struct confine_part part_lifecycle = PART("lifecycle",
						       vcpu_rules,
						       lifecycle_ioctls);
static const struct confine_part part_console = PART("console",
						     console_rules,
						     console_ioctls);

#if CONFINE_SANITIZER
/* How LeakSanitizer clones the tracer that stops the world at exit. */
#define CONFINE_LSAN_CLONE_FLAGS                                         \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED)
#define CONFINE_READ_ONLY_OPEN (O_ACCMODE | O_CREAT | O_TRUNC)

/*
 * Sanitizer builds only (-DMICROVM_SANITIZE/-DMICROVM_TSAN): a report
 * reads /proc/self/maps and the binary to symbolize (read-only opens),
 * LeakSanitizer at exit stops the world from a clone()d tracer with
 * ptrace and reads /proc/self/task, and every thread gets an alternate
 * signal stack. These builds are for testing; a release build has none
 * of this.
 */
static const struct confine_rule sanitizer_rules[] = {
	ALLOW_MASKED(open, 1, CONFINE_READ_ONLY_OPEN, O_RDONLY),
	ALLOW_MASKED(openat, 2, CONFINE_READ_ONLY_OPEN, O_RDONLY),
	ALLOW(close),
	ALLOW(readlink),
	ALLOW(readlinkat),
	ALLOW(getdents),
	ALLOW(getdents64),
	ALLOW(lseek),
	ALLOW(pread64),
	ALLOW(sigaltstack),
	ALLOW(prctl),
	ALLOW(sched_getaffinity),
	ALLOW_EQ(clone, 0, CONFINE_LSAN_CLONE_FLAGS),
	ALLOW(ptrace),
	ALLOW(wait4),
	ALLOW(getppid),
	ALLOW(kill),
	ALLOW(uname),
	ALLOW(prlimit64),
	ALLOW(getrlimit),
	ALLOW(pipe2),
	ALLOW(dup2),
	ALLOW(mincore),
};

static const struct confine_part part_sanitizer =
	PART_NO_IOCTLS("sanitizer", sanitizer_rules);
#endif

static bool policy_api;
static bool policy_vsock;
static bool policy_net;

void confine_policy_api(bool on)
{
	policy_api = on;
}

void confine_policy_vsock(bool on)
{
	policy_vsock = on;
}

void confine_policy_net(bool on)
{
	policy_net = on;
}

size_t confine_policy_parts(enum confine_class cls,
			    const struct confine_part **parts, size_t max)
{
	size_t n = 0;

	if (max < CONFINE_MAX_PARTS)
		return 0;
	parts[n++] = &part_base;
	switch (cls) {
	case CONFINE_MAIN:
		parts[n++] = &part_control;
		parts[n++] = &part_lifecycle;
		parts[n++] = &part_io;
		if (policy_api) {
			parts[n++] = &part_swap;
			parts[n++] = &part_snapshot;
		}
		if (policy_vsock)
			parts[n++] = &part_vsock;
		if (policy_net)
			parts[n++] = &part_net_start;
		break;
	case CONFINE_VCPU:
		parts[n++] = &part_vcpu;
		parts[n++] = &part_io;
		if (policy_vsock)
			parts[n++] = &part_vsock;
		if (policy_net)
			parts[n++] = &part_net_start;
		break;
	case CONFINE_IO:
		parts[n++] = &part_io;
		break;
	case CONFINE_CONSOLE:
		parts[n++] = &part_console;
		break;
	case CONFINE_CONTROL:
		parts[n++] = &part_control_thread;
		break;
	case CONFINE_VSOCK:
		parts[n++] = &part_vsock;
		break;
	case CONFINE_NET:
		parts[n++] = &part_net;
		break;
	default:
		break;
	}
#if CONFINE_SANITIZER
	parts[n++] = &part_sanitizer;
#endif
	return n;
}
