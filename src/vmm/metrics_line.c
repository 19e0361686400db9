// SPDX-License-Identifier: Apache-2.0
/*
 * A metrics line (metrics.h): every counter read into a snapshot, and the
 * JSON object of its differences from what the last line reported, under
 * Firecracker's names where it has the counter. Counters are read with
 * relaxed loads while their threads run: a line is a consistent picture
 * of no single instant, as Firecracker's, and no count is lost or
 * reported twice.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "virtio/disk.h"
#include "virtio/virtio.h"
#include "vmm/metrics_priv.h"
#include "vmm/vm.h"

enum mf_kind {
	MF_DELTA,    /* a count: the difference from the last line */
	MF_DELTA_US, /* nanoseconds summed: the difference, in us */
	MF_GAUGE_US, /* nanoseconds, a value now: in us */
};

struct mfield {
	const char *name;
	size_t off;
	enum mf_kind kind;
};

/* Per queue: struct virtio_queue_stats, in this order. */
enum {
	QF_REQUESTS, QF_BATCHES, QF_SIGNALS, QF_COALESCED, QF_KICKS,
	QF_ERRORS, QF_READ_COUNT, QF_READ_BYTES, QF_WRITE_COUNT,
	QF_WRITE_BYTES, QF_FLUSH, QF_DISCARD, QF_WRITE_ZEROES,
	QF_EXECUTE_FAILS, QF_INVALID, QF_ENGINE_FULL, QF_POLL_HITS,
	QF_POLL_MISSES, QF_POLL_NS, QF_POLL_WINDOW_NS, QF_HOLD_TIMED,
	QF_HOLD_FULL, QF_THROTTLED, QF_COUNT
};

#define QF(i, n, f, k)                                                   \
	[i] = { .name = (n), .off = offsetof(struct virtio_queue_stats, f), \
		.kind = (k) }
static const struct mfield queue_fields[QF_COUNT] = {
	QF(QF_REQUESTS, "requests", requests, MF_DELTA),
	QF(QF_BATCHES, "batches", batches, MF_DELTA),
	QF(QF_SIGNALS, "irq_signals", signals, MF_DELTA),
	QF(QF_COALESCED, "coalesced", coalesced, MF_DELTA),
	QF(QF_KICKS, "kicks", kicks, MF_DELTA),
	QF(QF_ERRORS, "errors", errors, MF_DELTA),
	QF(QF_READ_COUNT, "read_count", read_count, MF_DELTA),
	QF(QF_READ_BYTES, "read_bytes", read_bytes, MF_DELTA),
	QF(QF_WRITE_COUNT, "write_count", write_count, MF_DELTA),
	QF(QF_WRITE_BYTES, "write_bytes", write_bytes, MF_DELTA),
	QF(QF_FLUSH, "flush_count", flush_count, MF_DELTA),
	QF(QF_DISCARD, "discard_count", discard_count, MF_DELTA),
	QF(QF_WRITE_ZEROES, "write_zeroes_count", write_zeroes_count,
	   MF_DELTA),
	QF(QF_EXECUTE_FAILS, "execute_fails", execute_fails, MF_DELTA),
	QF(QF_INVALID, "invalid_reqs_count", invalid_reqs, MF_DELTA),
	QF(QF_ENGINE_FULL, "io_engine_throttled_events", engine_full,
	   MF_DELTA),
	QF(QF_POLL_HITS, "poll_hits", poll_hits, MF_DELTA),
	QF(QF_POLL_MISSES, "poll_misses", poll_misses, MF_DELTA),
	QF(QF_POLL_NS, "poll_us", poll_ns, MF_DELTA_US),
	QF(QF_POLL_WINDOW_NS, "poll_window_us", poll_window_ns, MF_GAUGE_US),
	QF(QF_HOLD_TIMED, "irq_hold_timed", hold_timed, MF_DELTA),
	QF(QF_HOLD_FULL, "irq_hold_full", hold_full, MF_DELTA),
	QF(QF_THROTTLED, "rate_limiter_throttled_events", throttled, MF_DELTA),
};

/*
 * A drive's own keys: Firecracker's BlockDeviceMetrics names first (and
 * queue_event_count: the guest's notifications), then ours; each the sum
 * over the drive's queues. "block" sums them over the drives.
 */
static const struct {
	const char *name;
	unsigned int qf;
} drive_keys[] = {
	{ "read_count", QF_READ_COUNT },
	{ "write_count", QF_WRITE_COUNT },
	{ "read_bytes", QF_READ_BYTES },
	{ "write_bytes", QF_WRITE_BYTES },
	{ "flush_count", QF_FLUSH },
	{ "execute_fails", QF_EXECUTE_FAILS },
	{ "invalid_reqs_count", QF_INVALID },
	{ "queue_event_count", QF_KICKS },
	{ "io_engine_throttled_events", QF_ENGINE_FULL },
	{ "rate_limiter_throttled_events", QF_THROTTLED },
	{ "discard_count", QF_DISCARD },
	{ "write_zeroes_count", QF_WRITE_ZEROES },
	{ "requests", QF_REQUESTS },
	{ "irq_signals", QF_SIGNALS },
};
#define NR_DRIVE_KEYS (sizeof(drive_keys) / sizeof(drive_keys[0]))

/* Per image: struct disk_stats, as "image" inside the drive. */
enum {
	DF_READ_ERR, DF_WRITE_ERR, DF_FLUSH_ERR, DF_DISCARD_ERR, DF_WZ_ERR,
	DF_BOUNCED, DF_BOUNCE_WAITS, DF_RESUBMITS, DF_ENTERS, DF_COPY_UPS,
	DF_INLINE, DF_COUNT
};

#define DF(i, n, f)                                                      \
	[i] = { .name = (n), .off = offsetof(struct disk_stats, f),       \
		.kind = MF_DELTA }
static const struct mfield image_fields[DF_COUNT] = {
	DF(DF_READ_ERR, "read_errors", errors[DISK_OP_READ]),
	DF(DF_WRITE_ERR, "write_errors", errors[DISK_OP_WRITE]),
	DF(DF_FLUSH_ERR, "flush_errors", errors[DISK_OP_FLUSH]),
	DF(DF_DISCARD_ERR, "discard_errors", errors[DISK_OP_DISCARD]),
	DF(DF_WZ_ERR, "write_zeroes_errors", errors[DISK_OP_WRITE_ZEROES]),
	DF(DF_BOUNCED, "bounced", bounced),
	DF(DF_BOUNCE_WAITS, "bounce_waits", bounce_waits),
	DF(DF_RESUBMITS, "resubmits", resubmits),
	DF(DF_ENTERS, "uring_enters", enters),
	DF(DF_COPY_UPS, "copy_ups", copy_ups),
	DF(DF_INLINE, "inline_rw", inline_calls),
};

/* Per vCPU: its exits by kind (enum vcpu_exit_kind), Firecracker's names. */
static const char *const vcpu_keys[VCPU_EXIT_KINDS] = {
	[VCPU_EXIT_IO_IN] = "exit_io_in",
	[VCPU_EXIT_IO_OUT] = "exit_io_out",
	[VCPU_EXIT_MMIO_READ] = "exit_mmio_read",
	[VCPU_EXIT_MMIO_WRITE] = "exit_mmio_write",
	[VCPU_EXIT_INTR] = "exit_intr",
	[VCPU_EXIT_OTHER] = "exit_other",
};

static int mvals_size(struct mvals *v, size_t n)
{
	uint64_t *p;

	if (v->base && v->n == n)
		return 0;
	p = calloc(n ? 2 * n : 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	free(v->base);
	/* A new shape: nothing reported yet, every count is new. */
	v->base = p;
	v->cur = p + n;
	v->n = n;
	return 0;
}

static void mvals_commit(struct mvals *v)
{
	memcpy(v->base, v->cur, v->n * sizeof(*v->base));
}

/* The difference from the last line; a counter that restarted (a device
 * made again) reports all it has. */
static uint64_t mvals_delta(const struct mvals *v, size_t i)
{
	return v->cur[i] >= v->base[i] ? v->cur[i] - v->base[i] : v->cur[i];
}

static uint64_t mfield_load(const void *stats, const struct mfield *f)
{
	const atomic_uint_fast64_t *c =
		(const atomic_uint_fast64_t *)((const char *)stats + f->off);

	return atomic_load_explicit(c, memory_order_relaxed);
}

/* The value of counter @i of @v as its line reports it. */
static uint64_t mfield_value(const struct mvals *v, size_t i,
			     enum mf_kind kind)
{
	switch (kind) {
	case MF_DELTA_US:
		return mvals_delta(v, i) / 1000;
	case MF_GAUGE_US:
		return v->cur[i] / 1000;
	default:
		return mvals_delta(v, i);
	}
}

static void jput(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void metrics_free_drives(struct metrics *mt)
{
	unsigned int i;

	for (i = 0; i < mt->nr_drives; i++) {
		free(mt->drives[i].q.base);
		free(mt->drives[i].img.base);
	}
	free(mt->drives);
	mt->drives = NULL;
	mt->nr_drives = 0;
}

/* ---- the snapshot ---- */

static int snap_drives(struct metrics *mt, const struct metrics_source *src)
{
	unsigned int i, k, qi;

	if (mt->nr_drives != src->nr_drives) {
		metrics_free_drives(mt);
		mt->drives = calloc(src->nr_drives ? src->nr_drives : 1,
				    sizeof(*mt->drives));
		if (!mt->drives)
			return -ENOMEM;
		mt->nr_drives = src->nr_drives;
	}
	for (i = 0; i < src->nr_drives; i++) {
		const struct metrics_drive *sd = &src->drives[i];
		struct mdrive *d = &mt->drives[i];

		d->nq = sd->vdev->num_queues;
		if (mvals_size(&d->q, (size_t)d->nq * QF_COUNT) ||
		    mvals_size(&d->img, DF_COUNT))
			return -ENOMEM;
		for (qi = 0; qi < d->nq; qi++)
			for (k = 0; k < QF_COUNT; k++)
				d->q.cur[qi * QF_COUNT + k] = mfield_load(
					&sd->vdev->queues[qi].stats,
					&queue_fields[k]);
		for (k = 0; k < DF_COUNT; k++)
			d->img.cur[k] = sd->disk ?
				mfield_load(sd->disk, &image_fields[k]) : 0;
	}
	return 0;
}

static int snap_vcpus(struct metrics *mt, const struct metrics_source *src)
{
	unsigned int n = src->vcpus ? src->nr_vcpus : 0;
	unsigned int i, k;

	if (mvals_size(&mt->vcpu, (size_t)n * VCPU_EXIT_KINDS))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		for (k = 0; k < VCPU_EXIT_KINDS; k++)
			mt->vcpu.cur[i * VCPU_EXIT_KINDS + k] =
				atomic_load_explicit(&src->vcpus[i].exits[k],
						     memory_order_relaxed);
	return 0;
}

int metrics_snap(struct metrics *mt, const struct metrics_source *src)
{
	int ret = snap_drives(mt, src);

	mt->has_vsock = src->vsock != NULL;
	if (src->vsock)
		mt->vsock = *src->vsock;
	metrics_snap_nets(mt, src);
	return ret ? ret : snap_vcpus(mt, src);
}

void metrics_snap_commit(struct metrics *mt)
{
	unsigned int i;

	for (i = 0; i < mt->nr_drives; i++) {
		mvals_commit(&mt->drives[i].q);
		mvals_commit(&mt->drives[i].img);
	}
	mvals_commit(&mt->vcpu);
	mt->reported = mt->totals;
	mt->vsock_reported = mt->vsock;
	metrics_commit_nets(mt);
}

/* ---- the line ---- */

/* One queue's object: every counter of struct virtio_queue_stats. */
static struct json_object *queue_json(const struct mdrive *d,
				      unsigned int qi)
{
	struct json_object *o = json_object_new_object();
	unsigned int k;

	for (k = 0; k < QF_COUNT; k++)
		jput(o, queue_fields[k].name,
		     mfield_value(&d->q, (size_t)qi * QF_COUNT + k,
				  queue_fields[k].kind));
	return o;
}

/* "block_<id>": the drive's sums, its image, its queues; adds the sums
 * to @agg (drive_keys order). */
static struct json_object *drive_json(const struct mdrive *d, uint64_t *agg)
{
	struct json_object *o = json_object_new_object();
	struct json_object *img = json_object_new_object();
	struct json_object *qs = json_object_new_array();
	unsigned int k, qi;

	for (k = 0; k < NR_DRIVE_KEYS; k++) {
		uint64_t sum = 0;

		for (qi = 0; qi < d->nq; qi++)
			sum += mvals_delta(&d->q, (size_t)qi * QF_COUNT +
						  drive_keys[k].qf);
		jput(o, drive_keys[k].name, sum);
		agg[k] += sum;
	}
	for (k = 0; k < DF_COUNT; k++)
		jput(img, image_fields[k].name, mvals_delta(&d->img, k));
	json_object_object_add(o, "image", img);
	for (qi = 0; qi < d->nq; qi++)
		json_object_array_add(qs, queue_json(d, qi));
	json_object_object_add(o, "queues", qs);
	return o;
}

static int add_drives(struct metrics *mt, const struct metrics_source *src,
		      struct json_object *root)
{
	struct json_object *block = json_object_new_object();
	uint64_t agg[NR_DRIVE_KEYS] = { 0 };
	unsigned int i, k;

	for (i = 0; i < mt->nr_drives; i++) {
		const char *id = src->drives[i].id;
		size_t len = strlen(id) + sizeof("block_");
		char *key = malloc(len);

		if (!key) {
			json_object_put(block);
			return -ENOMEM;
		}
		snprintf(key, len, "block_%s", id);
		json_object_object_add(root, key,
				       drive_json(&mt->drives[i], agg));
		free(key);
	}
	for (k = 0; k < NR_DRIVE_KEYS; k++)
		jput(block, drive_keys[k].name, agg[k]);
	json_object_object_add(root, "block", block);
	return 0;
}

/* "vcpu": Firecracker's sums over the vCPUs, and "vcpus", one each. */
static void add_vcpus(struct metrics *mt, struct json_object *root)
{
	struct json_object *o = json_object_new_object();
	struct json_object *each = json_object_new_array();
	size_t n = mt->vcpu.n / VCPU_EXIT_KINDS, i;
	unsigned int k;

	for (k = 0; k < VCPU_EXIT_KINDS; k++) {
		uint64_t sum = 0;

		for (i = 0; i < n; i++)
			sum += mvals_delta(&mt->vcpu, i * VCPU_EXIT_KINDS + k);
		jput(o, vcpu_keys[k], sum);
	}
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_new_object();

		for (k = 0; k < VCPU_EXIT_KINDS; k++)
			jput(v, vcpu_keys[k],
			     mvals_delta(&mt->vcpu, i * VCPU_EXIT_KINDS + k));
		json_object_array_add(each, v);
	}
	json_object_object_add(o, "vcpus", each);
	json_object_object_add(root, "vcpu", o);
}

/* @key's value in kB from /proc/self/status text, or 0. */
static uint64_t status_kib(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * "vmm": uptime, and resident memory now and at its peak (kB). The RSS
 * only on the thread that made the stream (main): reading the status
 * file again takes an lseek, which the control thread's seccomp class
 * does not allow; another thread's line leaves the RSS out.
 */
static void add_vmm(struct metrics *mt, struct json_object *root)
{
	struct json_object *o = json_object_new_object();
	char buf[4096];
	size_t len = 0;
	ssize_t n;

	jput(o, "uptime_ms", clock_since_start_ns() / 1000000);
	if (mt->status_fd >= 0 && gettid() == mt->owner &&
	    lseek(mt->status_fd, 0, SEEK_SET) == 0) {
		while (len < sizeof(buf) - 1 &&
		       (n = read(mt->status_fd, buf + len,
				 sizeof(buf) - 1 - len)) > 0)
			len += (size_t)n;
		buf[len] = '\0';
		jput(o, "rss_kib", status_kib(buf, "\nVmRSS:"));
		jput(o, "rss_peak_kib", status_kib(buf, "\nVmHWM:"));
	}
	json_object_object_add(root, "vmm", o);
}

/* Firecracker's "api_server" startup times; 0 until noted. */
static _Atomic uint64_t startup_us, startup_cpu_us;

static uint64_t clock_us(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void metrics_note_startup(uint64_t start_us, uint64_t start_cpu_us,
			  uint64_t parent_cpu_us)
{
	uint64_t now = clock_us(CLOCK_MONOTONIC);
	uint64_t cpu = clock_us(CLOCK_PROCESS_CPUTIME_ID);

	if (atomic_load(&startup_us))
		return;
	atomic_store(&startup_cpu_us, (cpu > start_cpu_us ?
				       cpu - start_cpu_us : 0) +
				      parent_cpu_us);
	atomic_store(&startup_us, start_us && now > start_us ?
			  now - start_us : clock_since_start_ns() / 1000);
}

static void add_api_server(struct json_object *root)
{
	struct json_object *o = json_object_new_object();

	jput(o, "process_startup_time_us", atomic_load(&startup_us));
	jput(o, "process_startup_time_cpu_us", atomic_load(&startup_cpu_us));
	json_object_object_add(root, "api_server", o);
}

/* "logger": Firecracker's counts of metrics and log lines not written. */
static void add_logger(struct metrics *mt, struct json_object *root)
{
	struct json_object *o = json_object_new_object();

	mt->totals.log_missed = log_missed_count();
	jput(o, "missed_log_count",
	     mt->totals.log_missed - mt->reported.log_missed);
	jput(o, "missed_metrics_count",
	     mt->totals.dropped - mt->reported.dropped);
	jput(o, "metrics_fails", mt->totals.fails - mt->reported.fails);
	json_object_object_add(root, "logger", o);
}

/*
 * "vsock": Firecracker's counters of its vsock device where ours mean the
 * same (deltas since the last line), then ours. rx is host to guest.
 */
static void add_vsock(struct metrics *mt, struct json_object *root)
{
	const struct vsock_dev_stats *c = &mt->vsock, *r = &mt->vsock_reported;
	struct json_object *o;

	if (!mt->has_vsock || !(o = json_object_new_object()))
		return;
#define VD(f) (c->f - r->f)
	jput(o, "rx_bytes_count", VD(rx_bytes));
	jput(o, "tx_bytes_count", VD(tx_bytes));
	jput(o, "rx_packets_count", VD(rx_packets));
	jput(o, "tx_packets_count", VD(tx_packets));
	jput(o, "conns_added", VD(conns_host) + VD(conns_guest));
	jput(o, "conns_removed", VD(conns_closed));
	jput(o, "conns_killed", VD(timeouts) + VD(credit_violations));
	jput(o, "conns_refused", VD(conns_refused));
	jput(o, "rst_sent", VD(rst_sent));
	jput(o, "rst_received", VD(rst_received));
	jput(o, "invalid_packets", VD(invalid));
	jput(o, "credit_violations", VD(credit_violations));
	jput(o, "stray_dropped", VD(stray_dropped));
	jput(o, "bad_connect_lines", VD(bad_lines));
	jput(o, "bad_buffers", VD(bad_bufs));
	jput(o, "events_sent", VD(events_sent));
#undef VD
	json_object_object_add(root, "vsock", o);
}

/* The line (malloc'd, with its newline), from the snapshot just taken. */
char *metrics_line(struct metrics *mt, const struct metrics_source *src,
		   size_t *len)
{
	struct json_object *root = json_object_new_object();
	struct timespec ts;
	const char *text;
	char *line = NULL;

	clock_gettime(CLOCK_REALTIME, &ts);
	jput(root, "utc_timestamp_ms", (uint64_t)ts.tv_sec * 1000 +
				       (uint64_t)ts.tv_nsec / 1000000);
	if (add_drives(mt, src, root) || metrics_add_nets(mt, src, root))
		goto out;
	add_vcpus(mt, root);
	add_vmm(mt, root);
	add_vsock(mt, root);
	add_api_server(root);
	add_logger(mt, root);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (!text)
		goto out;
	*len = strlen(text) + 1;
	line = malloc(*len + 1);
	if (line) {
		memcpy(line, text, *len - 1);
		line[*len - 1] = '\n';
		line[*len] = '\0';
	}
out:
	json_object_put(root);
	return line;
}
