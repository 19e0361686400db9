// SPDX-License-Identifier: Apache-2.0
/*
 * microvm-bench: the device path against its limit, no KVM needed. The real
 * virtqueue, virtio-blk device, per-queue I/O threads and io_uring engine
 * run behind a fake transport whose notify() writes a per-queue eventfd (the
 * irqfd); a simulated guest driver (bench_driver.c) drives them from fake
 * guest memory, and fio on the same file, with the same block size, depth
 * and job count, gives the limit in the same run. Every scenario runs with
 * deferred signalling on and off. See tests/bench/README.md.
 *
 * The I/O threads confine themselves (CONFINE_IO) as in microvm; the bench's
 * own threads (main, drivers) stay unconfined: they fork fio and read
 * clocks, which no microvm thread does.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_driver.h"
#include "bench_fio.h"
#include "uring_probe.h"
#include "util/confine.h"
#include "util/evloop.h"
#include "virtio/blk.h"

#define GPA_BASE 0x100000ull
#define MAX_QUEUES 8
#define MAX_LIST 8

/*
 * Device settings a scenario runs under, one row each. A new run-time knob
 * of the device (blk_config) is one field here and one line in knob_sets[].
 */
struct bench_knobs {
	const char *label;
	bool defer_off;
};

static const struct bench_knobs knob_sets[] = {
	{ .label = "on", .defer_off = false },
	{ .label = "off", .defer_off = true },
};
#define NR_KNOBS (sizeof(knob_sets) / sizeof(knob_sets[0]))
/* run_scenario() compares them: [0] is deferral on, [1] off. */
_Static_assert(NR_KNOBS == 2, "deferral on and off");

struct backing {
	const char *name; /* "shm", "direct" */
	bool direct;
	char path[4096];
	struct disk disk;
	bool ready;
};

struct workload {
	const char *rw; /* as fio spells it */
	bool write;
	enum bdrv_pattern pattern;
	uint32_t bs;
	bool all_qd; /* every depth of the list, else only seq_qd */
};

static const struct workload workloads[] = {
	{ "randread", false, BDRV_RANDOM, 4096, true },
	{ "randwrite", true, BDRV_RANDOM, 4096, true },
	{ "read", false, BDRV_SEQUENTIAL, 65536, false },
};
#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

/* One row of the table. */
struct row {
	double iops;
	double p50_us, p99_us;
	double cpu_us_per_req;
	/*
	 * Where the machine's CPUs went (getrusage of the whole process
	 * over the run, io-wq workers and polling included): the simulated
	 * driver's share, and everything else, the device path, per request.
	 */
	double cores, drv_us_per_req, dev_us_per_req;
	double irq_per_req, enters_per_req, kicks_per_req, batch;
	double ratio;              /* to fio's IOPS in the same round; < 0 n/a */
	double iops_min, iops_max; /* over the --repeat rounds */
	uint64_t requests, errors;
};

#define MAX_REPEAT 9

/* ---- options ---- */

static struct {
	unsigned int ms;
	uint64_t size;
	const char *fio;
	const char *csv;
	const char *direct_dir;
	unsigned int qds[MAX_LIST], nr_qd;
	unsigned int queues[MAX_LIST], nr_queues;
	unsigned int seq_qd;
	unsigned int repeat;
	const char *disks;   /* NULL: every backing */
	const char *rws;     /* NULL: every workload */
	bool no_fio;
	bool event_idx;
	bool seccomp;
	unsigned int poll_us; /* blk_config.poll_us of every row */
	unsigned int irq_hold_us; /* blk_config.irq_hold_us of deferral on */
} opt = {
	.poll_us = BLK_POLL_DEFAULT_US,
	.ms = 2000,
	.size = 256ull << 20,
	.fio = "fio",
	.direct_dir = ".",
	.qds = { 1, 16, 64, 128 },
	.nr_qd = 4,
	.queues = { 1, 2 },
	.nr_queues = 2,
	.seq_qd = 16,
	.repeat = 1,
	.event_idx = true,
	.seccomp = true,
};

static const char usage[] =
"usage: microvm-bench [--quick] [--ms N] [--size MiB] [--qd LIST]\n"
"                     [--queues LIST] [--fio PATH | --no-fio]\n"
"                     [--direct-dir DIR] [--csv FILE] [--no-event-idx]\n"
"                     [--disks LIST] [--rw LIST] [--repeat N]\n"
"                     [--seccomp on|off] [--poll-us N]\n"
"                     [--irq-hold-us N]\n"
"  --quick        smoke run: 100 ms per scenario, 16 MiB files\n"
"  --ms N         milliseconds per scenario (default 2000)\n"
"  --size MiB     size of each test file (default 256)\n"
"  --qd LIST      queue depths, comma-separated (default 1,16,64,128)\n"
"  --queues LIST  queue counts (default 1,2; at most 8)\n"
"  --direct-dir   where the O_DIRECT file goes (default .)\n"
"  --csv FILE     every row as CSV\n"
"  --disks LIST   backings to run: shm (page cache), direct (O_DIRECT)\n"
"  --rw LIST      workloads to run: randread, randwrite, read (64k seq)\n"
"  --repeat N     N rounds of fio, defer on, defer off per scenario; each\n"
"                 column is the median over the rounds (1-9, default 1)\n"
"  --no-event-idx negotiate without VIRTIO_F_EVENT_IDX\n"
"  --seccomp off  leave the I/O threads unconfined (profilers)\n"
"  --poll-us N    the queue threads' polling window, as the disk key\n"
"                 poll-us (0-1000, 0: off; default as microvm's)\n"
"  --irq-hold-us N  the rows with deferral on hold a batch's interrupt up\n"
"                 to N us, as the disk key irq-hold-us (0-10000; default 0)\n";

static int parse_list(const char *s, unsigned int *out, unsigned int *n,
		      unsigned int max)
{
	char *copy = strdup(s), *tok, *save = NULL, *end;
	unsigned long v;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		v = strtoul(tok, &end, 10);
		if (*end || !v || v > max || *n == MAX_LIST) {
			free(copy);
			return -1;
		}
		out[(*n)++] = (unsigned int)v;
	}
	free(copy);
	return *n ? 0 : -1;
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'k' },
		{ "ms", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "qd", required_argument, NULL, 'q' },
		{ "queues", required_argument, NULL, 'n' },
		{ "fio", required_argument, NULL, 'f' },
		{ "no-fio", no_argument, NULL, 'F' },
		{ "direct-dir", required_argument, NULL, 'd' },
		{ "csv", required_argument, NULL, 'c' },
		{ "disks", required_argument, NULL, 'D' },
		{ "rw", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "no-event-idx", no_argument, NULL, 'e' },
		{ "seccomp", required_argument, NULL, 'S' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "irq-hold-us", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long v;
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'k':
			opt.ms = 100;
			opt.size = 16ull << 20;
			break;
		case 'm':
			v = strtoul(optarg, &end, 10);
			if (*end || v < 10 || v > 600000)
				goto bad;
			opt.ms = (unsigned int)v;
			break;
		case 's':
			v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > 65536)
				goto bad;
			opt.size = (uint64_t)v << 20;
			break;
		case 'q':
			if (parse_list(optarg, opt.qds, &opt.nr_qd,
				       BDRV_MAX_QD))
				goto bad;
			break;
		case 'n':
			if (parse_list(optarg, opt.queues, &opt.nr_queues,
				       MAX_QUEUES))
				goto bad;
			break;
		case 'f':
			opt.fio = optarg;
			break;
		case 'F':
			opt.no_fio = true;
			break;
		case 'd':
			opt.direct_dir = optarg;
			break;
		case 'c':
			opt.csv = optarg;
			break;
		case 'D':
			opt.disks = optarg;
			break;
		case 'r':
			opt.rws = optarg;
			break;
		case 'R':
			v = strtoul(optarg, &end, 10);
			if (*end || v < 1 || v > MAX_REPEAT)
				goto bad;
			opt.repeat = (unsigned int)v;
			break;
		case 'e':
			opt.event_idx = false;
			break;
		case 'S':
			if (!strcmp(optarg, "on"))
				opt.seccomp = true;
			else if (!strcmp(optarg, "off"))
				opt.seccomp = false;
			else
				goto bad;
			break;
		case 'P':
			v = strtoul(optarg, &end, 10);
			if (*end || *optarg < '0' || *optarg > '9' ||
			    v > BLK_POLL_MAX_US)
				goto bad;
			opt.poll_us = (unsigned int)v;
			break;
		case 'H':
			v = strtoul(optarg, &end, 10);
			if (*end || *optarg < '0' || *optarg > '9' ||
			    v > BLK_IRQ_HOLD_MAX_US)
				goto bad;
			opt.irq_hold_us = (unsigned int)v;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			exit(1);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "microvm-bench: unexpected argument '%s'\n",
			argv[optind]);
		exit(1);
	}
	return;
bad:
	for (i = 0; lo[i].name && lo[i].val != c; i++)
		;
	fprintf(stderr, "microvm-bench: bad value '%s' for --%s\n", optarg,
		lo[i].name ? lo[i].name : "?");
	exit(1);
}

/* Is @name in the comma-separated @list (NULL: everything)? */
static bool selected(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!list)
		return true;
	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/* ---- the fake transport: notify() is the irqfd write ---- */

static struct {
	int irq_fd;
	atomic_bool have_clock;
	clockid_t clock; /* the queue thread's CPU clock */
} tq[MAX_QUEUES];

/*
 * Runs on the queue's I/O thread (virtio_queue_notify_now()), which is
 * how the bench learns that thread's CPU clock without reaching into the
 * device: pthread_getcpuclockid() computes it, no system call.
 */
static bool bench_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	(void)vdev;
	if (!atomic_load_explicit(&tq[q->index].have_clock,
				  memory_order_relaxed) &&
	    !pthread_getcpuclockid(pthread_self(), &tq[q->index].clock))
		atomic_store(&tq[q->index].have_clock, true);
	evfd_signal(tq[q->index].irq_fd);
	return true;
}

static void bench_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops bench_tops = {
	.name = "bench",
	.notify = bench_notify,
	.notify_config = bench_notify_config,
};

/* ---- one scenario on the device ---- */

static uint8_t *ram;
static struct guest_mem gm;

static void set_status(struct virtio_dev *vdev, uint8_t s)
{
	pthread_mutex_lock(&vdev->lock);
	virtio_set_status_locked(vdev, s);
	pthread_mutex_unlock(&vdev->lock);
}

/* §3.1.1: negotiate, configure the queues, DRIVER_OK. */
static int drv_start(struct virtio_dev *vdev, struct bdrv_queue *dq,
		     unsigned int nq)
{
	uint8_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	uint64_t f = vdev->host_features;
	unsigned int i;

	if (!opt.event_idx)
		f &= ~(1ull << VIRTIO_F_EVENT_IDX);
	set_status(vdev, VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(vdev, s);
	pthread_mutex_lock(&vdev->lock);
	virtio_set_driver_features_locked(vdev, 0, (uint32_t)f);
	virtio_set_driver_features_locked(vdev, 1, (uint32_t)(f >> 32));
	virtio_set_status_locked(vdev, s | VIRTIO_STATUS_FEATURES_OK);
	for (i = 0; i < nq; i++) {
		struct virtio_queue *q = &vdev->queues[i];

		q->size = BDRV_QSZ;
		q->desc = dq[i].desc_gpa;
		q->avail = dq[i].avail_gpa;
		q->used = dq[i].used_gpa;
		q->enabled = true;
	}
	virtio_set_status_locked(vdev, s | VIRTIO_STATUS_FEATURES_OK |
					   VIRTIO_STATUS_DRIVER_OK);
	pthread_mutex_unlock(&vdev->lock);
	s = virtio_get_status(vdev);
	return (s & VIRTIO_STATUS_DRIVER_OK) &&
	       !(s & VIRTIO_STATUS_NEEDS_RESET) ? 0 : -EIO;
}

/* User plus system time of every thread of this process so far. */
static uint64_t rusage_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
		       1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) *
		       1000ull;
}

static int run_device(struct backing *bk, const struct workload *w,
		      unsigned int qd, unsigned int nq,
		      const struct bench_knobs *kn, struct row *r)
{
	static struct bdrv_queue dq[MAX_QUEUES];
	struct blk_config cfg = {
		.disk = &bk->disk,
		.num_queues = nq,
		.queue_size = BDRV_QSZ,
		.defer_off = kn->defer_off,
		.poll_us = opt.poll_us,
		.irq_hold_us = kn->defer_off ? 0 : opt.irq_hold_us,
	};
	pthread_t th[MAX_QUEUES];
	struct virtio_dev vdev;
	struct blk_dev *b;
	struct bhist lat;
	uint64_t enters0, t0, cpu = 0, reqs = 0, sig = 0, batches = 0;
	uint64_t done = 0, total = 0, kicks = 0, errors = 0, t_end = 0;
	uint64_t ru0, ru, drv = 0;
	unsigned int i;
	int ret;

	memset(&vdev, 0, sizeof(vdev));
	ret = blk_dev_create(&b, &vdev, &cfg, &gm, "vdb");
	if (ret)
		return ret;
	vdev.tops = &bench_tops;
	for (i = 0; i < nq; i++) {
		vdev.queues[i].kick_fd = evfd_new();
		tq[i].irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		atomic_store(&tq[i].have_clock, false);
		bdrv_layout(&dq[i], ram, GPA_BASE, i);
		dq[i].qd = qd;
		dq[i].bs = w->bs;
		dq[i].write = w->write;
		dq[i].pattern = w->pattern;
		dq[i].disk_bytes = bk->disk.size;
		/*
		 * Sequential queues start at different offsets (fio's jobs
		 * all start at 0; neither changes what a read costs here).
		 */
		dq[i].next_off = (bk->disk.size / nq / w->bs) * w->bs * i;
		dq[i].kick_fd = vdev.queues[i].kick_fd;
		dq[i].irq_fd = tq[i].irq_fd;
	}
	for (i = 0; i < nq; i++)
		if (vdev.queues[i].kick_fd < 0 || tq[i].irq_fd < 0)
			ret = -EMFILE;
	if (!ret)
		ret = drv_start(&vdev, dq, nq);
	if (ret)
		goto out;
	for (i = 0; i < nq; i++)
		dq[i].event_idx = vdev.driver_features &
				  (1ull << VIRTIO_F_EVENT_IDX);
	enters0 = atomic_load(&bk->disk.stats.enters);
	ru0 = rusage_ns();
	t0 = bdrv_now_ns();
	for (i = 0; i < nq; i++) {
		dq[i].end_ns = t0 + (uint64_t)opt.ms * 1000000ull;
		dq[i].min_done = qd;
		pthread_create(&th[i], NULL, bdrv_run, &dq[i]);
	}
	for (i = 0; i < nq; i++)
		pthread_join(th[i], NULL);
	ru = rusage_ns() - ru0;
	memset(&lat, 0, sizeof(lat));
	for (i = 0; i < nq; i++) {
		struct virtio_queue_stats *st = &vdev.queues[i].stats;

		if (atomic_load(&tq[i].have_clock))
			cpu += bdrv_clock_ns(tq[i].clock);
		reqs += atomic_load(&st->requests);
		sig += atomic_load(&st->signals);
		batches += atomic_load(&st->batches);
		done += dq[i].done;
		drv += dq[i].cpu_ns;
		total += dq[i].total;
		kicks += dq[i].kicks;
		errors += dq[i].errors;
		bhist_merge(&lat, &dq[i].lat);
		if (dq[i].stop_ns > t_end)
			t_end = dq[i].stop_ns;
		if (dq[i].stalled) {
			fprintf(stderr, "microvm-bench: queue %u stalled\n", i);
			ret = -ETIMEDOUT;
		}
	}
	memset(r, 0, sizeof(*r));
	r->requests = reqs;
	r->errors = errors + (total != reqs);
	if (t_end > t0)
		r->iops = (double)done * 1e9 / (double)(t_end - t0);
	r->p50_us = (double)bhist_quantile(&lat, 0.50) / 1000.0;
	r->p99_us = (double)bhist_quantile(&lat, 0.99) / 1000.0;
	if (t_end > t0)
		r->cores = (double)ru / (double)(t_end - t0);
	if (reqs) {
		r->cpu_us_per_req = (double)cpu / 1000.0 / (double)reqs;
		r->drv_us_per_req = (double)drv / 1000.0 / (double)reqs;
		r->dev_us_per_req = ru > drv ? (double)(ru - drv) / 1000.0 /
						       (double)reqs : 0;
		r->irq_per_req = (double)sig / (double)reqs;
		r->enters_per_req =
			(double)(atomic_load(&bk->disk.stats.enters) -
				 enters0) / (double)reqs;
		r->kicks_per_req = (double)kicks / (double)reqs;
	}
	if (batches)
		r->batch = (double)reqs / (double)batches;
out:
	set_status(&vdev, 0);
	blk_dev_destroy(b);
	for (i = 0; i < nq; i++) {
		if (vdev.queues[i].kick_fd >= 0)
			close(vdev.queues[i].kick_fd);
		if (tq[i].irq_fd >= 0)
			close(tq[i].irq_fd);
	}
	return ret;
}

/* ---- backing files ---- */

static int make_file(struct backing *bk)
{
	struct disk_opts o = {
		.path = bk->path,
		.cache = bk->direct ? DISK_CACHE_NONE : DISK_CACHE_WRITEBACK,
		.engine = DISK_ENGINE_URING,
	};
	size_t chunk = 1u << 20;
	char err[256];
	uint64_t done;
	uint8_t *buf;
	size_t i;
	int fd;

	fd = mkstemp(bk->path);
	if (fd < 0) {
		fprintf(stderr, "microvm-bench: %s: %s\n", bk->path,
			strerror(errno));
		return -1;
	}
	buf = malloc(chunk);
	for (i = 0; buf && i < chunk; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	/* Written, not sparse: reads must reach data, not holes. */
	for (done = 0; buf && done < opt.size; done += chunk)
		if (write(fd, buf, chunk) != (ssize_t)chunk)
			break;
	free(buf);
	if (done < opt.size || fsync(fd)) {
		fprintf(stderr, "microvm-bench: cannot fill %s\n", bk->path);
		close(fd);
		unlink(bk->path);
		return -1;
	}
	close(fd);
	if (disk_open(&bk->disk, &o, err, sizeof(err))) {
		fprintf(stderr, "microvm-bench: %s\n", err);
		unlink(bk->path);
		return -1;
	}
	if (bk->direct && !bk->disk.direct) {
		printf("note: %s: no O_DIRECT there (use --direct-dir): "
		       "direct scenarios skipped\n", opt.direct_dir);
		disk_close(&bk->disk);
		unlink(bk->path);
		return 1;
	}
	bk->ready = true;
	return 0;
}

static void drop_file(struct backing *bk)
{
	if (!bk->ready)
		return;
	disk_close(&bk->disk);
	unlink(bk->path);
	bk->ready = false;
}

/* ---- output ---- */

static FILE *csv;
static bool have_fio;

static void fmt_ratio(char *buf, size_t n, double ratio)
{
	if (ratio >= 0)
		snprintf(buf, n, "%.2f", ratio);
	else
		snprintf(buf, n, "n/a");
}

static void print_header(void)
{
	printf("%-6s %-9s %3s %3s %2s %-5s %9s %9s %5s %7s %8s %7s %8s "
	       "%7s %7s %7s %7s %6s %5s %6s %6s %5s %6s\n", "disk", "rw", "bs",
	       "qd", "nq", "defer", "iops", "fio_iops", "ratio", "p50_us",
	       "p99_us", "fio_p50", "fio_p99", "cpu_us", "irq/req", "ent/req",
	       "kick/rq", "batch", "cores", "dev_us", "drv_us", "fio_c",
	       "fio_us");
	if (csv)
		fprintf(csv, "disk,rw,bs,qd,queues,defer,iops,fio_iops,ratio,"
			"p50_us,p99_us,fio_p50_us,fio_p99_us,cpu_us_per_req,"
			"irqfd_per_req,uring_enter_per_req,kicks_per_req,"
			"reqs_per_batch,iops_min,iops_max,requests,errors,"
			"cores,dev_us_per_req,drv_us_per_req,fio_cores,"
			"fio_us_per_req\n");
}

static void print_row(const struct backing *bk, const struct workload *w,
		      unsigned int qd, unsigned int nq,
		      const struct bench_knobs *kn, const struct row *r,
		      const struct fio_result *f)
{
	char ratio[16], fiops[16], f50[16], f99[16], fc[16], fus[16];

	fmt_ratio(ratio, sizeof(ratio), r->ratio);
	strcpy(fc, "n/a");
	strcpy(fus, "n/a");
	if (have_fio && f->iops > 0) {
		snprintf(fiops, sizeof(fiops), "%.0f", f->iops);
		snprintf(f50, sizeof(f50), "%.1f", f->p50_us);
		snprintf(f99, sizeof(f99), "%.1f", f->p99_us);
		if (f->cores >= 0) {
			/* fio's CPU per I/O, its io-wq workers included. */
			snprintf(fc, sizeof(fc), "%.2f", f->cores);
			snprintf(fus, sizeof(fus), "%.2f",
				 f->cores * 1e6 / f->iops);
		}
	} else {
		strcpy(fiops, "n/a");
		strcpy(f50, "n/a");
		strcpy(f99, "n/a");
	}
	printf("%-6s %-9s %2uk %3u %2u %-5s %9.0f %9s %5s %7.1f %8.1f %7s "
	       "%8s %7.2f %7.3f %7.3f %7.3f %6.1f %5.2f %6.2f %6.2f %5s %6s\n",
	       bk->name, w->rw, w->bs / 1024, qd, nq, kn->label, r->iops,
	       fiops, ratio, r->p50_us, r->p99_us, f50, f99,
	       r->cpu_us_per_req, r->irq_per_req, r->enters_per_req,
	       r->kicks_per_req, r->batch, r->cores, r->dev_us_per_req,
	       r->drv_us_per_req, fc, fus);
	fflush(stdout);
	if (csv)
		fprintf(csv, "%s,%s,%u,%u,%u,%s,%.0f,%s,%s,%.2f,%.2f,%s,%s,"
			"%.3f,%.4f,%.4f,%.4f,%.2f,%.0f,%.0f,%llu,%llu,"
			"%.3f,%.3f,%.3f,%s,%s\n",
			bk->name, w->rw, w->bs, qd, nq, kn->label, r->iops,
			fiops, ratio, r->p50_us, r->p99_us, f50, f99,
			r->cpu_us_per_req, r->irq_per_req, r->enters_per_req,
			r->kicks_per_req, r->batch, r->iops_min, r->iops_max,
			(unsigned long long)r->requests,
			(unsigned long long)r->errors, r->cores,
			r->dev_us_per_req, r->drv_us_per_req, fc, fus);
}

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* ---- one scenario: --repeat rounds of fio, then each knob set ---- */

static unsigned int rows, failed;
static double key_ratio = -2, key_irq = -1;

/*
 * Deferral on against off at QD >= 16 (the "never slower"), over
 * the scenarios run: how many there were, in how many on's median IOPS is
 * below off's, and in how many every round of on is below every round of
 * off (slower beyond the run-to-run spread).
 */
static unsigned int ab_pairs, ab_slower, ab_slower_beyond, ab_slower_sign;

/*
 * The paired sign test: on and off run back to back in each round, so a
 * round is a pair. With no difference between them, on is below off in
 * each round with probability 1/2: the smallest count of such rounds out
 * of @n that has probability <= 0.05 (one-sided), or 0 when even all @n
 * have more (n < 5).
 */
static unsigned int sign_threshold(unsigned int n)
{
	double tail = 0, c = 1; /* C(n, k), from k = n down */
	unsigned int k;

	for (k = n; k > 0; k--) {
		tail += c / (double)(1u << n);
		if (tail > 0.05)
			return k == n ? 0 : k + 1;
		c = c * k / (n - k + 1);
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of the @n values at @base, @stride bytes apart. */
static double median(const void *base, size_t stride, unsigned int n)
{
	double v[MAX_REPEAT];
	unsigned int i;

	for (i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)base + i * stride);
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MEDIAN(arr, field, n) \
	median(&(arr)[0].field, sizeof((arr)[0]), (n))

static void run_scenario(struct backing *bk, const struct workload *w,
			 unsigned int qd, unsigned int nq, bool key)
{
	static struct row rs[NR_KNOBS][MAX_REPEAT];
	struct row med[NR_KNOBS];
	struct fio_result fs[MAX_REPEAT] = { 0 }, fm = { 0 };
	struct fio_job j = {
		.fio = opt.fio, .file = bk->path, .rw = w->rw, .bs = w->bs,
		.qd = qd, .jobs = nq, .direct = bk->direct, .ms = opt.ms,
	};
	unsigned int rep, ki, kj, n = opt.repeat;
	bool fio_ok = have_fio;

	for (rep = 0; rep < n; rep++) {
		if (fio_ok && fio_run(&j, &fs[rep]))
			fio_ok = false;
		/*
		 * Odd rounds run the knob sets in reverse, so that neither
		 * setting always runs right after fio or after the other.
		 */
		for (kj = 0; kj < NR_KNOBS; kj++) {
			struct row *r;

			ki = rep % 2 ? NR_KNOBS - 1 - kj : kj;
			r = &rs[ki][rep];

			if (run_device(bk, w, qd, nq, &knob_sets[ki], r)) {
				printf("%s %s qd %u nq %u defer %s: FAILED\n",
				       bk->name, w->rw, qd, nq,
				       knob_sets[ki].label);
				failed++;
				return;
			}
			if (r->errors)
				failed++;
			/* Side by side: each round against its own fio. */
			r->ratio = fio_ok && fs[rep].iops > 0 ?
				   r->iops / fs[rep].iops : -1;
		}
	}
	if (fio_ok) {
		fm.iops = MEDIAN(fs, iops, n);
		fm.p50_us = MEDIAN(fs, p50_us, n);
		fm.p99_us = MEDIAN(fs, p99_us, n);
		fm.cores = MEDIAN(fs, cores, n);
	}
	for (ki = 0; ki < NR_KNOBS; ki++) {
		struct row m = rs[ki][0], *a = rs[ki];

		m.iops = MEDIAN(a, iops, n);
		m.p50_us = MEDIAN(a, p50_us, n);
		m.p99_us = MEDIAN(a, p99_us, n);
		m.cpu_us_per_req = MEDIAN(a, cpu_us_per_req, n);
		m.cores = MEDIAN(a, cores, n);
		m.drv_us_per_req = MEDIAN(a, drv_us_per_req, n);
		m.dev_us_per_req = MEDIAN(a, dev_us_per_req, n);
		m.irq_per_req = MEDIAN(a, irq_per_req, n);
		m.enters_per_req = MEDIAN(a, enters_per_req, n);
		m.kicks_per_req = MEDIAN(a, kicks_per_req, n);
		m.batch = MEDIAN(a, batch, n);
		m.ratio = fio_ok ? MEDIAN(a, ratio, n) : -1;
		m.iops_min = m.iops_max = a[0].iops;
		for (rep = 1; rep < n; rep++) {
			m.requests += a[rep].requests;
			m.errors += a[rep].errors;
			if (a[rep].iops < m.iops_min)
				m.iops_min = a[rep].iops;
			if (a[rep].iops > m.iops_max)
				m.iops_max = a[rep].iops;
		}
		print_row(bk, w, qd, nq, &knob_sets[ki], &m, &fm);
		rows++;
		if (key && !knob_sets[ki].defer_off) {
			key_ratio = m.ratio;
			key_irq = m.irq_per_req;
		}
		med[ki] = m;
	}
	if (qd >= 16) {
		unsigned int below = 0, t = sign_threshold(n);

		for (rep = 0; rep < n; rep++)
			below += rs[0][rep].iops < rs[1][rep].iops;
		printf("defer-ab: %s %s %uk qd %u nq %u: on below off in %u of "
		       "%u paired rounds, on/off %.3f (medians)%s\n",
		       bk->name, w->rw, w->bs / 1024, qd, nq, below, n,
		       med[1].iops > 0 ? med[0].iops / med[1].iops : 0,
		       t && below >= t ? ": slower by the sign test" : "");
		ab_pairs++;
		ab_slower += med[0].iops < med[1].iops;
		ab_slower_beyond += med[0].iops_max < med[1].iops_min;
		ab_slower_sign += t && below >= t;
	}
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	struct backing bks[2] = {
		{ .name = "shm", .direct = false },
		{ .name = "direct", .direct = true },
	};
	unsigned int b, wi, qi, ni, nq_max = 1;
	char err[256];

	parse_args(argc, argv);
	if (!uring_works()) {
		printf("microvm-bench: io_uring unavailable here: skipped\n");
		return 77;
	}
	if (opt.seccomp && confine_prepare(CONFINE_ON, err, sizeof(err))) {
		fprintf(stderr, "microvm-bench: %s\n", err);
		return 1;
	}
	have_fio = !opt.no_fio && fio_available(opt.fio);
	if (!have_fio)
		printf("note: fio %s: ratios are n/a\n",
		       opt.no_fio ? "not asked for" : "not found");
	if (opt.csv) {
		csv = fopen(opt.csv, "w");
		if (!csv) {
			fprintf(stderr, "microvm-bench: %s: %s\n", opt.csv,
				strerror(errno));
			return 1;
		}
	}
	for (ni = 0; ni < opt.nr_queues; ni++)
		if (opt.queues[ni] > nq_max)
			nq_max = opt.queues[ni];
	ram = aligned_alloc(1u << 21, nq_max * BDRV_REGION);
	if (!ram || guest_mem_add_region(&gm, GPA_BASE, nq_max * BDRV_REGION,
					 ram)) {
		fprintf(stderr, "microvm-bench: guest memory setup failed\n");
		return 1;
	}
	memset(ram, 0, nq_max * BDRV_REGION);
	snprintf(bks[0].path, sizeof(bks[0].path),
		 "/dev/shm/microvm-bench.XXXXXX");
	snprintf(bks[1].path, sizeof(bks[1].path), "%s/microvm-bench.XXXXXX",
		 opt.direct_dir);
	printf("microvm-bench: %u ms per scenario, %llu MiB files, "
	       "%ld CPUs online, load average %.2f, event_idx %s, "
	       "seccomp %s, poll-us %u, irq-hold-us %u, I/O thread cpu_us "
	       "per request\n",
	       opt.ms, (unsigned long long)(opt.size >> 20),
	       sysconf(_SC_NPROCESSORS_ONLN), loadavg(),
	       opt.event_idx ? "on" : "off", opt.seccomp ? "on" : "off",
	       opt.poll_us, opt.irq_hold_us);
	print_header();
	for (b = 0; b < 2; b++) {
		struct backing *bk = &bks[b];

		if (!selected(opt.disks, bk->name) || make_file(bk))
			continue;
		for (wi = 0; wi < NR_WORKLOADS; wi++) {
			const struct workload *w = &workloads[wi];

			if (!selected(opt.rws, w->rw))
				continue;
			for (qi = 0; qi < opt.nr_qd; qi++) {
				unsigned int qd = w->all_qd ? opt.qds[qi] :
							      opt.seq_qd;

				if (!w->all_qd && qi)
					break;
				for (ni = 0; ni < opt.nr_queues; ni++)
					run_scenario(bk, w, qd, opt.queues[ni],
						     b == 0 && wi == 0 &&
						     qd == 64 &&
						     opt.queues[ni] == 1);
			}
		}
		drop_file(bk);
	}
	if (csv)
		fclose(csv);
	free(ram);
	printf("microvm-bench: %u rows, %u failed, load average %.2f\n",
	       rows, failed, loadavg());
	if (ab_pairs)
		printf("deferral: at QD >= 16 on is slower than off in %u of "
		       "%u scenarios by median IOPS, in %u beyond the spread "
		       "(every round of on below every round of off)\n",
		       ab_slower, ab_pairs, ab_slower_beyond);
	if (ab_pairs && sign_threshold(opt.repeat))
		printf("deferral: by the paired sign test (on below off in at "
		       "least %u of %u rounds, one-sided p <= 0.05) on is "
		       "slower in %u of %u scenarios\n",
		       sign_threshold(opt.repeat), opt.repeat, ab_slower_sign,
		       ab_pairs);
	else if (ab_pairs)
		printf("deferral: the paired sign test needs --repeat 5 or "
		       "more\n");
	if (key_irq < 0) {
		printf("ratio_vs_fio=n/a irqfd_per_req=n/a\n");
	} else {
		char ratio[16];

		fmt_ratio(ratio, sizeof(ratio), key_ratio);
		printf("ratio_vs_fio=%s irqfd_per_req=%.3f\n", ratio, key_irq);
	}
	return failed ? 1 : 0;
}
