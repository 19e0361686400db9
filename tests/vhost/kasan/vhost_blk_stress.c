// SPDX-License-Identifier: Apache-2.0
/*
 * Stress of the vhost-blk module's stop paths with I/O in flight (the
 * late-completion-after-stop race): every round a child process opens
 * /dev/vhost-blk, serves a block device with O_DIRECT and keeps every
 * slot of every queue busy, then, after a random delay, one of:
 *   reset  SET_BACKEND fd=-1 with I/O in flight (1-3 times, starting the
 *          backend again in between), then exit with the device open;
 *   close  close(2) of the device with I/O in flight, then exit;
 *   exit   exit with the device open and I/O in flight;
 *   kill   SIGKILL from the parent with I/O in flight.
 * Meanwhile the child moves its kernel workers from CPU to CPU at random.
 * With --module, every --reload-every rounds the module is unloaded as
 * soon as the child is gone and loaded again (delete_module and
 * finit_module by this program, so that no shell delay hides a late
 * completion).
 * After each round: the child ended as its action says, its kernel
 * workers are gone, and the kernel's taint mask gained no bit other than
 * the out-of-tree/unsigned-module ones (a BUG, WARNING, Oops or KASAN
 * report taints the kernel); the caller also reads the kernel log.
 *
 * Usage: vhost_blk_stress --blockdev DEV --rounds N [--seed S]
 *                         [--module KO [--reload-every K]]
 * Exit status: 0 every round passed; 1 a check failed; 77 no
 * /dev/vhost-blk.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vblk_sim.h"

enum action { A_RESET, A_CLOSE, A_EXIT, A_KILL, A_COUNT };
static const char *const action_name[A_COUNT] = {
	"reset", "close", "exit", "kill"
};

/* Taint bits a loaded out-of-tree module sets by itself: O and E. */
#define TAINT_MODULE_BITS ((1ul << 12) | (1ul << 13))

static unsigned long taint(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (!f || fscanf(f, "%lu", &t) != 1)
		die("/proc/sys/kernel/tainted");
	fclose(f);
	return t & ~TAINT_MODULE_BITS;
}

/* The child's kernel workers, moved between CPUs while they serve. */
static pid_t tids[2 * MAXQ];
static int ntids, ncpus;

static void find_workers(void)
{
	ntids = scan_workers(getpid(), NULL, tids, (int)(sizeof(tids) /
							sizeof(tids[0])));
	if (ntids > (int)(sizeof(tids) / sizeof(tids[0])))
		ntids = sizeof(tids) / sizeof(tids[0]);
}

/*
 * One worker to one CPU at random: a request's completion then often
 * arrives on the CPU its worker has just left (a timer started there, or
 * its softirq), the only way a worker can reap a request whose completion
 * is still running elsewhere.
 */
static void migrate_one(void)
{
	cpu_set_t set;

	if (ntids <= 0 || ncpus < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(rnd() % ncpus, &set);
	/* A worker that has just returned is gone: nothing to check. */
	sched_setaffinity(tids[rnd() % ntids], sizeof(set), &set);
}

/* Keep every slot of every queue busy for @us microseconds. */
static void run_io(struct dev *d, long us)
{
	double until = now_s() + us / 1e6;
	struct pollfd p[MAXQ];
	unsigned int qi, s;

	for (qi = 0; qi < d->nq; qi++)
		p[qi] = (struct pollfd){ .fd = d->q[qi].call, .events = POLLIN };
	do {
		for (qi = 0; qi < d->nq; qi++) {
			bool posted = false;

			reap(d, qi);
			for (s = 0; s < SLOTS; s++) {
				uint32_t type = rnd() & 1 ? VIRTIO_BLK_T_OUT :
							    VIRTIO_BLK_T_IN;

				if (d->q[qi].slot[s].busy)
					continue;
				publish_quiet(d, qi, fill_rw(d, qi, s, type,
					      rnd() % (CAP - DATA_MAX / 512),
					      DATA_MAX));
				posted = true;
			}
			if (posted)
				kick(d, qi);
		}
		migrate_one();
		poll(p, d->nq, 1);
	} while (now_s() < until);
}

static int open_disk(const char *path)
{
	int fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		die(path);
	return fd;
}

/*
 * After a stop: every request the device took from a ring (up to its
 * last_avail_idx) is back in the used ring; those it had not taken yet
 * stay published and are served after the next start.
 */
static bool stop_pushed_all(struct dev *d)
{
	unsigned int qi;

	for (qi = 0; qi < d->nq; qi++) {
		struct vhost_vring_state base = { .index = qi };
		uint16_t used;

		if (ioctl(d->fd, VHOST_GET_VRING_BASE, &base))
			die("VHOST_GET_VRING_BASE");
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		used = *(volatile uint16_t *)&d->q[qi].used->idx;
		if (used != (uint16_t)base.num) {
			fprintf(stderr, "queue %u: %u requests taken, %u used "
				"after the stop\n", qi, base.num, used);
			return false;
		}
		reap(d, qi);
	}
	return true;
}

/* The child: I/O, then @a after @us; exit status 0 unless a check failed. */
static void child(const char *disk, enum action a, long us)
{
	/* Half the rounds on one queue: stop frees a queue's worker only
	 * after every worker has returned, one at a time, so a late
	 * completion on the last queue stopped is the one that can meet
	 * the free; with one queue that is every queue. */
	unsigned int nq = rnd() & 1 ? 1 : 2 + rnd() % 3, k;
	unsigned int resets = 1 + rnd() % 3;
	int fd = open_disk(disk);
	struct dev d;

	if (dev_open(&d, nq, BASE_FEATURES) || dev_backend(&d, fd, 0, 0))
		_exit(2);
	find_workers();
	run_io(&d, us);
	switch (a) {
	case A_RESET:
		for (k = 0; k < resets; k++) {
			if (dev_backend(&d, -1, 0, 0))
				_exit(3);
			if (!stop_pushed_all(&d))
				_exit(4);
			if (dev_backend(&d, fd, 0, 0))
				_exit(5);
			find_workers();
			run_io(&d, us / 2);
		}
		_exit(failures ? 1 : 0);
	case A_CLOSE:
		close(d.fd);
		_exit(failures ? 1 : 0);
	case A_EXIT:
		_exit(failures ? 1 : 0);
	default:
		for (;;)
			run_io(&d, 1000000);
	}
}

static const char *const child_why[] = {
	[1] = "a ring check failed", [2] = "device setup failed",
	[3] = "SET_BACKEND -1 failed", [4] = "requests the device had taken "
	"were not in the used ring after a stop", [5] = "backend restart "
	"failed",
};

static void wait_dev(void)
{
	int i;

	for (i = 0; i < 100 && access("/dev/vhost-blk", F_OK); i++)
		usleep(20 * 1000);
	if (access("/dev/vhost-blk", F_OK))
		die("/dev/vhost-blk after loading the module");
}

/* Unload the module as soon as the last user is gone, load it again. */
static void reload(const char *ko)
{
	int i, fd;

	for (i = 0; i < 500; i++) {
		if (!syscall(SYS_delete_module, "vhost_blk", O_NONBLOCK))
			break;
		if (errno != EWOULDBLOCK && errno != EBUSY && errno != EAGAIN)
			die("delete_module vhost_blk");
		usleep(10 * 1000);
	}
	if (i == 500)
		die("delete_module vhost_blk (still in use after 5 s)");
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
		die(ko);
	close(fd);
	wait_dev();
}

/* One round; false if it failed (the message printed). */
static bool round_once(unsigned int r, const char *disk, unsigned int *counts)
{
	enum action a = rnd() % A_COUNT;
	long us = 2000 + rnd() % 40000;
	int status, i, left = -1;
	uint64_t seed = rnd();
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	counts[a]++;
	if (!pid) {
		rnd_state = seed | 1;
		child(disk, a, us);
	}
	if (a == A_KILL) {
		usleep(us + 2000);
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (a == A_KILL ? !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) :
			  !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

		check(false, "round %u (%s after %ld us): child status %#x%s%s",
		      r, action_name[a], us, status, code && code < 6 ? ": " : "",
		      code && code < 6 ? child_why[code] : "");
		return false;
	}
	for (i = 0; i < 50; i++) {
		left = count_workers(pid);
		if (!left)
			break;
		usleep(100 * 1000);
	}
	check(left == 0, "round %u (%s): %d workers still there", r,
	      action_name[a], left);
	return left == 0;
}

int main(int argc, char **argv)
{
	const char *disk = NULL, *ko = NULL;
	unsigned long rounds = 0, every = 10, r, t0, t;
	unsigned int counts[A_COUNT] = { 0 };
	int i;

	prog = "vhost_blk_stress";
	rnd_state = 0x5eed5eedull;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--blockdev") && i + 1 < argc)
			disk = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rnd_state = strtoull(argv[++i], NULL, 0) *
				    0x9e3779b97f4a7c15ull | 1;
		else if (!strcmp(argv[i], "--module") && i + 1 < argc)
			ko = argv[++i];
		else if (!strcmp(argv[i], "--reload-every") && i + 1 < argc)
			every = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "%s: bad argument '%s' (usage: see the "
				"source's head)\n", prog, argv[i]);
			return 1;
		}
	}
	if (!disk || !rounds || !every) {
		fprintf(stderr, "%s: --blockdev DEV and --rounds N (N > 0) are "
			"needed; --reload-every must be > 0\n", prog);
		return 1;
	}
	t_start = now_s();
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (access("/dev/vhost-blk", F_OK)) {
		printf("SKIP: no /dev/vhost-blk\n");
		return 77;
	}
	ram = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		die("memory");
	close(open_disk(disk));
	t0 = taint();
	for (r = 0; r < rounds; r++) {
		bool good = round_once(r, disk, counts);

		if (good && ko && r % every == every - 1)
			reload(ko);
		t = taint();
		if (t != t0) {
			check(false, "round %lu: the kernel is tainted %#lx "
			      "(was %#lx): see its log", r, t, t0);
			break;
		}
		if (!good)
			break;
	}
	ok("%s: %lu of %lu rounds done (reset %u, close %u, exit %u, kill "
	   "%u), %d failure(s)\n", prog, failures ? r + 1 : rounds, rounds,
	   counts[A_RESET], counts[A_CLOSE], counts[A_EXIT], counts[A_KILL],
	   failures);
	if (failures) {
		printf("FAILED\n");
		return 1;
	}
	printf("PASS\n");
	return 0;
}
