// SPDX-License-Identifier: Apache-2.0
/*
 * Zero-loss test of virtio-blk across a crash of the VMM process: a child
 * runs the real device and disk engine on an image file and drives it from
 * fake guest memory (batches of random misaligned writes, then a FLUSH),
 * publishing in shared memory how many writes each completed flush covers,
 * only once its used-ring entry is seen. The parent SIGKILLs the child at a
 * random moment and checks that the image holds every flushed byte
 * (crash_plan.h), then that the check fails on the same image with the last
 * flushed write taken away (the verifier is not vacuous).
 *
 * Usage: crash_blk [--mode writeback|none|both] [--iterations N]
 *                  [--seed S] [--max-delay-ms MS] [--dir DIR] [--broken-ack]
 * Iteration i of a mode uses seed S + i (S printed; random unless given),
 * which also picks the engine (io_uring or sync) and, with cache=none,
 * native or emulated 4 KiB O_DIRECT blocks; --seed S --iterations 1
 * replays one (the same writes, engine and kill delay; the interleaving
 * with the kill is timing). --broken-ack publishes each
 * batch's acknowledgement before the writes are submitted, and after the
 * seed's number of flushes (1 to 8) the writer stops in that window and is
 * killed there: the check must then catch lost bytes in every iteration.
 */
#include "blk_driver.h"
#include "crash_plan.h"

#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define CRASH_DISK_BYTES (4ull << 20)
#define CRASH_O_DIRECT_ALIGN 4096u /* emulated 4 KiB logical blocks */

/* What the writer tells the parent, in shared memory. */
struct crash_log {
	_Atomic uint64_t issued;  /* writes submitted (whole batches) */
	_Atomic uint64_t acked;   /* writes covered by a completed flush */
	_Atomic uint64_t flushes; /* flushes completed */
	_Atomic int state;        /* 0 starting, 1 writing, -1 failed,
				   * 2 stopped with a batch acknowledged
				   * and not submitted (--broken-ack) */
	_Atomic uint64_t bounced; /* the disk's bounce/RMW count so far */
	int direct;               /* O_DIRECT in effect */
	uint32_t align;           /* its offset/length alignment */
	char why[160];
};

struct crash_opts {
	enum disk_cache cache;
	enum disk_engine engine;
	uint64_t seed;
	const char *path;
	bool broken_ack;
	unsigned int stall_after; /* --broken-ack: flushes before the stop */
	bool emulate_4k; /* cache=none: 4 KiB O_DIRECT blocks (RMW) */
};

static struct crash_log *wlog;

static _Noreturn void writer_fail(const char *why)
{
	snprintf(wlog->why, sizeof(wlog->why), "%s", why);
	atomic_store(&wlog->state, -1);
	_exit(1);
}

static void writer_open(const struct crash_opts *co)
{
	struct disk_opts o = {
		.path = co->path,
		.cache = co->cache,
		.engine = co->engine,
	};
	struct blk_config cfg = {
		.disk = &h.disk,
		.serial = SERIAL,
		.num_queues = 1,
		.queue_size = QSZ,
	};
	char err[256];

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		writer_fail("guest memory setup failed");
	memset(ram, 0, RAM_SIZE);
	if (disk_open(&h.disk, &o, err, sizeof(err)))
		writer_fail(err);
	/* Sector-granular writes then take the read-modify-write path. */
	if (co->emulate_4k && h.disk.direct &&
	    h.disk.align < CRASH_O_DIRECT_ALIGN)
		h.disk.align = CRASH_O_DIRECT_ALIGN;
	wlog->direct = h.disk.direct;
	wlog->align = h.disk.align;
	if (blk_dev_create(&h.b, &h.vdev, &cfg, &gm, NAME))
		writer_fail("blk_dev_create failed");
	h.vdev.tops = &fake_tops;
	h.nq = 1;
	h.vdev.queues[0].kick_fd = evfd_new();
	drv_start(default_features());
	if (virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET)
		writer_fail("device failed to start");
}

/* Write @w from slot @k: header | data in one or two segments | status. */
static void writer_add(uint64_t seed, unsigned int k,
		       const struct plan_write *w)
{
	uint32_t len = w->nsec * PLAN_SECTOR, i;
	uint64_t buf = data_gpa(k) + w->buf_off;
	uint8_t *p = host(buf);
	struct dseg s[4];
	unsigned int n = 0;

	for (i = 0; i < len; i++)
		p[i] = plan_byte(seed, w->j, w->sector * PLAN_SECTOR + i);
	hdr_put(k, VIRTIO_BLK_T_OUT, w->sector);
	s[n++] = (struct dseg){ hdr_gpa(k), 16, false };
	s[n++] = (struct dseg){ buf, w->split, false };
	if (w->split < len)
		s[n++] = (struct dseg){ buf + w->split, len - w->split, false };
	s[n++] = (struct dseg){ status_gpa(k), 1, true };
	chain_add(0, head_of(k), s, n);
}

/* Publish, kick, wait for slots [@k0, @k1) to complete with status OK. */
static void writer_run(unsigned int k0, unsigned int k1, const char *what)
{
	char why[96];
	unsigned int k;

	if (!go(0, (uint16_t)(k1 - k0))) {
		snprintf(why, sizeof(why), "%s: no completion in 10 s", what);
		writer_fail(why);
	}
	for (k = k0; k < k1; k++)
		if (status_of(k) != VIRTIO_BLK_S_OK) {
			snprintf(why, sizeof(why), "%s: slot %u status %u",
				 what, k, status_of(k));
			writer_fail(why);
		}
}

/* The killed process: batches of writes, each followed by a flush. */
static _Noreturn void writer_main(const struct crash_opts *co)
{
	struct plan_write w[PLAN_BATCH_MAX];
	struct plan p;
	unsigned int n, k;

	writer_open(co);
	plan_init(&p, co->seed, CRASH_DISK_BYTES);
	for (;;) {
		n = plan_batch(&p, w);
		for (k = 0; k < n; k++)
			writer_add(co->seed, k, &w[k]);
		atomic_store(&wlog->issued, p.next_j);
		if (co->broken_ack) {
			atomic_store(&wlog->acked, p.next_j);
			/* Wait in the window for the kill (crash_kill()). */
			if (atomic_load(&wlog->flushes) == co->stall_after) {
				atomic_store(&wlog->state, 2);
				sleep_ms(10000);
				writer_fail("not killed in the broken window");
			}
		}
		writer_run(0, n, "write");
		hdr_put(n, VIRTIO_BLK_T_FLUSH, 0);
		chain_add(0, head_of(n),
			  (struct dseg[]){ { hdr_gpa(n), 16, false },
					   { status_gpa(n), 1, true } }, 2);
		writer_run(n, n + 1, "flush");
		/* Only now, with the flush's used entry seen. */
		atomic_store(&wlog->acked, p.next_j);
		atomic_fetch_add(&wlog->flushes, 1);
		atomic_store(&wlog->bounced,
			     atomic_load(&h.disk.stats.bounced));
		atomic_store(&wlog->state, 1);
	}
}

/* ---- the parent: kill, then verify ---- */

struct crash_totals {
	unsigned int runs, lost, errors, open_batch, selftest_caught;
	unsigned int lock_waits; /* kills where the lock outlived the writer */
	unsigned int engine_runs[DISK_ENGINE_COUNT];
	uint64_t acked, flushes, later, bounced;
	int direct;
	uint32_t align_min, align_max;
};

static uint8_t *img, *img2, *model, *later;

static bool image_create(const char *path, uint64_t seed)
{
	uint64_t off;
	bool ok;
	int fd;

	for (off = 0; off < CRASH_DISK_BYTES; off++)
		img[off] = plan_byte(seed, PLAN_INIT_WRITE, off);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ok = fd >= 0 &&
	     pwrite(fd, img, CRASH_DISK_BYTES, 0) == (ssize_t)CRASH_DISK_BYTES &&
	     !fsync(fd);
	if (fd >= 0)
		close(fd);
	if (!ok)
		fprintf(stderr, "crash_blk: cannot create %s: %s\n", path,
			strerror(errno));
	return ok;
}

static bool image_read(const char *path)
{
	int fd = open(path, O_RDONLY);
	bool ok = fd >= 0 && pread(fd, img, CRASH_DISK_BYTES, 0) ==
			     (ssize_t)CRASH_DISK_BYTES;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Write number @j of the stream of @seed. */
static struct plan_write plan_find(uint64_t seed, uint64_t j)
{
	struct plan_write w[PLAN_BATCH_MAX];
	struct plan p;
	unsigned int n, i;

	plan_init(&p, seed, CRASH_DISK_BYTES);
	for (;;) {
		n = plan_batch(&p, w);
		for (i = 0; i < n; i++)
			if (w[i].j == j)
				return w[i];
	}
}

/*
 * The verifier must reject the image with the last flushed write taken
 * back out (its bytes as they were before it): a lost flush.
 */
static bool selftest_catches(uint64_t seed, uint64_t acked, uint64_t issued)
{
	struct plan_write w = plan_find(seed, acked - 1);
	uint64_t off = w.sector * PLAN_SECTOR;
	uint64_t end = off + w.nsec * (uint64_t)PLAN_SECTOR;
	struct plan_verdict v;

	plan_verify(seed, CRASH_DISK_BYTES, acked - 1, acked - 1, img, model,
		    later, &v);
	memcpy(img2, img, CRASH_DISK_BYTES);
	memcpy(img2 + off, model + off, end - off);
	plan_verify(seed, CRASH_DISK_BYTES, acked, issued, img2, model, later,
		    &v);
	return v.bad > 0;
}

/* Wait up to 10 s for the writer to reach @state (1 or 2). */
static bool wait_writing(pid_t pid, int state)
{
	uint64_t end = now_ms() + 10000;
	int s;

	while ((s = atomic_load(&wlog->state)) >= 0 && s < state &&
	       now_ms() < end) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		sleep_ms(1);
	}
	return atomic_load(&wlog->state) == state;
}

/*
 * Wait until no process holds @path's lock: a killed writer's io_uring is
 * torn down after waitpid() returns, and only then are its last requests
 * done and the image's file closed (the OFD lock goes with it, disk.c).
 * Until then a write of the dead writer can still land, in the image we
 * are about to read or, truncated and refilled in place, in the next
 * iteration's. Up to 10 s; true at once where the file system has no locks.
 * @waits: counts the calls that found the lock still held.
 */
static bool image_wait_released(const char *path, unsigned int *waits)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	uint64_t end = now_ms() + 10000;
	bool waited = false;
	int fd, ret, e;

	for (;;) {
		fd = open(path, O_RDWR);
		if (fd < 0)
			return false;
		ret = fcntl(fd, F_OFD_SETLK, &fl);
		e = errno;
		close(fd); /* drops the lock we may have taken */
		if (!ret || (e != EAGAIN && e != EACCES)) {
			*waits += waited;
			return true;
		}
		waited = true;
		if (now_ms() >= end) {
			fprintf(stderr, "crash_blk: %s still locked 10 s after "
				"the writer died\n", path);
			return false;
		}
		sleep_ms(1);
	}
}

/*
 * Start the writer on a fresh image, kill it at the seed's moment after its
 * first flush (--broken-ack: as soon as it stops with a batch acknowledged
 * and not submitted). Return: true with the image in @img, false (reported) when
 * the writer did not run as it should.
 */
static bool crash_kill(const struct crash_opts *co, unsigned int max_delay_ms,
		       struct crash_totals *t)
{
	uint64_t delay_us;
	struct timespec ts;
	pid_t pid;
	int st;

	if (!image_create(co->path, co->seed))
		return false;
	memset(wlog, 0, sizeof(*wlog));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
		writer_main(co);
	if (!wait_writing(pid, co->broken_ack ? 2 : 1)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		image_wait_released(co->path, &t->lock_waits);
		fprintf(stderr, "crash_blk: seed %llu: writer failed: %s\n",
			(unsigned long long)co->seed,
			wlog->why[0] ? wlog->why : "no first flush in 10 s");
		return false;
	}
	delay_us = co->broken_ack ? 0 : plan_mix(co->seed ^ 0xde1a7ull) %
					 (max_delay_ms * 1000ull + 1);
	ts = (struct timespec){ (time_t)(delay_us / 1000000),
				(long)(delay_us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
		fprintf(stderr, "crash_blk: seed %llu: writer ended before "
			"the kill: %s\n", (unsigned long long)co->seed,
			wlog->why);
		image_wait_released(co->path, &t->lock_waits);
		return false;
	}
	return image_wait_released(co->path, &t->lock_waits) &&
	       image_read(co->path);
}

static const char *cache_name(enum disk_cache c)
{
	return c == DISK_CACHE_NONE ? "none" : "writeback";
}

/* One iteration. Return: 0 no loss, 1 loss, 2 the run itself failed. */
static int crash_once(const struct crash_opts *co, unsigned int max_delay_ms,
		      struct crash_totals *t)
{
	uint64_t acked, issued;
	struct plan_verdict v;

	if (!crash_kill(co, max_delay_ms, t))
		return 2;
	acked = atomic_load(&wlog->acked);
	issued = atomic_load(&wlog->issued);
	t->direct = wlog->direct;
	if (!t->align_min || wlog->align < t->align_min)
		t->align_min = wlog->align;
	if (wlog->align > t->align_max)
		t->align_max = wlog->align;
	t->acked += acked;
	t->flushes += atomic_load(&wlog->flushes);
	t->bounced += atomic_load(&wlog->bounced);
	t->open_batch += issued > acked;
	plan_verify(co->seed, CRASH_DISK_BYTES, acked, issued, img, model,
		    later, &v);
	t->later += v.later;
	if (v.bad) {
		printf("crash_blk: LOST: cache=%s engine=%s seed %llu: %llu "
		       "bytes hold neither their flushed value nor a later "
		       "write's; first at offset %llu: flushed %#x, image %#x "
		       "(%llu writes flushed, %llu issued)\n",
		       cache_name(co->cache), disk_engine_name(co->engine),
		       (unsigned long long)co->seed,
		       (unsigned long long)v.bad,
		       (unsigned long long)v.first_bad, v.want, v.got,
		       (unsigned long long)acked, (unsigned long long)issued);
		return 1;
	}
	if (acked && !co->broken_ack)
		t->selftest_caught += selftest_catches(co->seed, acked, issued);
	return 0;
}

/*
 * @n iterations of cache mode @cache. Return: false when any lost a byte
 * (--broken-ack: when any did not).
 */
static bool crash_mode(enum disk_cache cache, unsigned int n, uint64_t seed,
		       unsigned int max_delay_ms, const char *dir,
		       bool broken_ack, bool *harness_ok)
{
	struct crash_totals t = { 0 };
	bool uring = uring_works();
	char path[4096];
	unsigned int i;

	snprintf(path, sizeof(path), "%s/crash_blk.%d.img", dir, (int)getpid());
	for (i = 0; i < n; i++) {
		/* The seed picks the engine and the alignment (replays). */
		struct crash_opts co = {
			.cache = cache,
			.engine = uring && (seed + i) % 2 == 0 ?
				  DISK_ENGINE_URING : DISK_ENGINE_SYNC,
			.seed = seed + i,
			.path = path,
			.broken_ack = broken_ack,
			.stall_after = 1 + (unsigned int)(plan_mix(seed + i) % 8),
			.emulate_4k = (seed + i) / 2 % 2 == 0,
		};
		int r = crash_once(&co, max_delay_ms, &t);

		t.runs++;
		t.engine_runs[co.engine] += r != 2;
		t.lost += r == 1;
		t.errors += r == 2;
		if (broken_ack ? r != 1 : r)
			printf("crash_blk: replay with: --mode %s --seed %llu "
			       "--iterations 1%s\n", cache_name(cache),
			       (unsigned long long)co.seed,
			       broken_ack ? " --broken-ack" : "");
	}
	unlink(path);
	printf("crash_blk: cache=%s%s: %u kills (uring %u, sync %u), %u lost "
	       "data, %u failed to run; %llu writes in %llu flushes "
	       "acknowledged, %u kills with a batch unacknowledged, %llu "
	       "unflushed bytes seen; verifier self-test caught %u of %u lost "
	       "flushes; O_DIRECT %s (align %u to %u), %llu writes bounced; "
	       "%u kills waited for the dead writer's image lock\n",
	       cache_name(cache), broken_ack ? " (broken ack)" : "", t.runs,
	       t.engine_runs[DISK_ENGINE_URING], t.engine_runs[DISK_ENGINE_SYNC],
	       t.lost, t.errors, (unsigned long long)t.acked,
	       (unsigned long long)t.flushes, t.open_batch,
	       (unsigned long long)t.later, t.selftest_caught,
	       t.runs - t.lost - t.errors, t.direct ? "on" : "off", t.align_min,
	       t.align_max,
	       (unsigned long long)t.bounced, t.lock_waits);
	if (!uring)
		printf("crash_blk: note: io_uring unavailable here: sync "
		       "engine only\n");
	if (cache == DISK_CACHE_NONE && !t.direct)
		printf("crash_blk: note: %s refuses O_DIRECT: cache=none ran "
		       "on the page cache\n", dir);
	*harness_ok = !t.errors && (broken_ack ||
		      t.selftest_caught == t.runs - t.lost - t.errors);
	/* Every kill in the broken window must be caught. */
	if (broken_ack) {
		printf("crash_blk: cache=%s: broken acknowledgements caught in "
		       "%u of %u kills\n", cache_name(cache), t.lost, t.runs);
		return t.runs && t.lost == t.runs;
	}
	return !t.lost;
}

static _Noreturn void usage(const char *bad)
{
	fprintf(stderr, "crash_blk: bad argument '%s'; usage: crash_blk "
		"[--mode writeback|none|both] [--iterations N] [--seed S] "
		"[--max-delay-ms MS] [--dir DIR] [--broken-ack]\n", bad);
	exit(2);
}

static unsigned long long num_arg(const char *s, unsigned long long max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max || *s == '-')
		usage(s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "max-delay-ms", required_argument, NULL, 'd' },
		{ "dir", required_argument, NULL, 'D' },
		{ "broken-ack", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int n = 10, max_delay_ms = 200;
	uint64_t seed = plan_mix((uint64_t)time(NULL) ^
				 ((uint64_t)getpid() << 32)) >> 16;
	const char *mode = "both", *dir = ".";
	bool broken = false, ok = true, harness_ok = true, hok;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'n': n = (unsigned int)num_arg(optarg, 1000000); break;
		case 's': seed = num_arg(optarg, UINT64_MAX / 2); break;
		case 'd': max_delay_ms = (unsigned int)num_arg(optarg, 60000);
			  break;
		case 'D': dir = optarg; break;
		case 'b': broken = true; break;
		default: usage(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage(argv[optind]);
	if (strcmp(mode, "both") && strcmp(mode, "none") &&
	    strcmp(mode, "writeback"))
		usage(mode);
	printf("crash_blk: seed %llu (replay: --seed %llu), %u iterations per "
	       "mode, kill within %u ms of the first flush, image %s\n",
	       (unsigned long long)seed, (unsigned long long)seed, n,
	       max_delay_ms, dir);
	wlog = mmap(NULL, sizeof(*wlog), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	img = malloc(CRASH_DISK_BYTES);
	img2 = malloc(CRASH_DISK_BYTES);
	model = malloc(CRASH_DISK_BYTES);
	later = malloc(CRASH_DISK_BYTES);
	if (wlog == MAP_FAILED || !img || !img2 || !model || !later) {
		fprintf(stderr, "crash_blk: out of memory\n");
		return 2;
	}
	if (strcmp(mode, "none")) {
		ok &= crash_mode(DISK_CACHE_WRITEBACK, n, seed, max_delay_ms,
				 dir, broken, &hok);
		harness_ok &= hok;
	}
	if (strcmp(mode, "writeback")) {
		ok &= crash_mode(DISK_CACHE_NONE, n, seed, max_delay_ms, dir,
				 broken, &hok);
		harness_ok &= hok;
	}
	printf("crash_blk: %s\n", !ok && broken ?
	       "FAIL: a broken acknowledgement was not caught" :
	       !ok ? "FAIL: flushed data lost" :
	       !harness_ok ? "FAIL: the test itself did not run right" :
	       "PASS");
	return !ok ? 1 : !harness_ok ? 2 : 0;
}
