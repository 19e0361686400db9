// SPDX-License-Identifier: Apache-2.0
/*
 * Metrics lines (vmm/metrics.c): the counts of requests made through the
 * in-test virtio-blk driver come out under Firecracker's names, every
 * line parses as one JSON object, counts are deltas since the last line
 * that went out, and a FIFO nobody reads neither blocks the writer nor
 * receives a torn line nor loses a count.
 */
#define QSZ 64
#include "blk_driver.h"

#include <json-c/json.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/confine.h"

#include "virtio/vsock.h"
#include "vmm/metrics.h"
#include "vmm/vm.h"

/* ---- reading lines back ---- */

/* The value at "a.b.c" (array elements by number), or NULL. */
static struct json_object *jget(struct json_object *o, const char *path)
{
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o;
	     tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, strtoul(tok, NULL,
								 10));
		else if (!json_object_object_get_ex(o, tok, &o))
			o = NULL;
	}
	return o;
}

/* The number at @path, or -1 when it is missing or not a number. */
static long long jnum(struct json_object *o, const char *path)
{
	struct json_object *v = jget(o, path);

	if (!v || !json_object_is_type(v, json_type_int))
		return -1;
	return (long long)json_object_get_uint64(v);
}

/* Everything readable now from @fd (non-blocking), NUL-terminated. */
static char *drain(int fd, size_t *len)
{
	size_t cap = 1 << 20;
	char *buf = malloc(cap + 1);
	ssize_t n;

	*len = 0;
	while ((n = read(fd, buf + *len, cap - *len)) > 0)
		*len += (size_t)n;
	buf[*len] = '\0';
	return buf;
}

/* One line through a pipe, parsed; NULL (and a failed check) if not. */
static struct json_object *emit_parse(struct metrics *mt,
				      const struct metrics_source *src)
{
	struct json_object *o;
	size_t len;
	char *text;
	int fds[2];

	CHECK_EQ(pipe2(fds, O_NONBLOCK), 0);
	CHECK_EQ(metrics_emit(mt, src, fds[1]), 0);
	text = drain(fds[0], &len);
	close(fds[0]);
	close(fds[1]);
	CHECK(len > 0 && text[len - 1] == '\n');
	CHECK(memchr(text, '\n', len) == text + len - 1); /* one line */
	o = json_tokener_parse(text);
	CHECK(o != NULL);
	free(text);
	return o;
}

/* ---- counts of real requests (the blk harness, each engine) ---- */

static void run_engine(void)
{
	struct metrics_drive drive = { .id = "rootfs" };
	struct metrics_source src = { .drives = &drive, .nr_drives = 1 };
	struct metrics *mt = metrics_new(-1);
	struct json_object *o;
	unsigned int k;

	CHECK(mt != NULL);
	if (dev_open(false, 1, SERIAL))
		return;
	drive.vdev = &h.vdev;
	drive.disk = &h.disk.stats;
	drv_start(default_features());
	for (k = 0; k < 3; k++)
		CHECK_EQ(do_req(k, VIRTIO_BLK_T_OUT, 8 * k, 4096, false), 1);
	for (k = 3; k < 5; k++)
		CHECK_EQ(do_req(k, VIRTIO_BLK_T_IN, 0, 1024, true), 1025);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	/* Past the end: the disk is never asked, the request is invalid. */
	CHECK_EQ(do_req(6, VIRTIO_BLK_T_IN, CAP, 512, true), 1);
	quiesce(0);

	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "block_rootfs.write_count"), 3);
	CHECK_EQ(jnum(o, "block_rootfs.write_bytes"), 3 * 4096);
	CHECK_EQ(jnum(o, "block_rootfs.read_count"), 2);
	CHECK_EQ(jnum(o, "block_rootfs.read_bytes"), 2 * 1024);
	CHECK_EQ(jnum(o, "block_rootfs.flush_count"), 1);
	CHECK_EQ(jnum(o, "block_rootfs.invalid_reqs_count"), 1);
	CHECK_EQ(jnum(o, "block_rootfs.execute_fails"), 0);
	CHECK_EQ(jnum(o, "block_rootfs.requests"), 7);
	CHECK(jnum(o, "block_rootfs.queue_event_count") >= 1);
	CHECK_EQ(jnum(o, "block_rootfs.queues.0.write_bytes"), 3 * 4096);
	CHECK_EQ(jnum(o, "block_rootfs.queues.0.errors"), 1);
	CHECK_EQ(jnum(o, "block_rootfs.image.read_errors"), 0);
	/* The aggregate of one drive is that drive. */
	CHECK_EQ(jnum(o, "block.write_bytes"), 3 * 4096);
	CHECK_EQ(jnum(o, "block.read_count"), 2);
	json_object_put(o);

	/* Deltas: nothing new, then one read. */
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "block_rootfs.read_count"), 0);
	CHECK_EQ(jnum(o, "block_rootfs.write_bytes"), 0);
	CHECK_EQ(jnum(o, "block_rootfs.requests"), 0);
	json_object_put(o);
	CHECK_EQ(do_req(7, VIRTIO_BLK_T_IN, 8, 512, true), 513);
	quiesce(0);
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "block_rootfs.read_count"), 1);
	CHECK_EQ(jnum(o, "block_rootfs.read_bytes"), 512);
	CHECK_EQ(jnum(o, "block_rootfs.write_count"), 0);
	json_object_put(o);
	/* --stats reads the same counters (their totals). */
	CHECK_EQ(atomic_load(&h.vdev.queues[0].stats.read_count), 3);
	CHECK_EQ(atomic_load(&h.vdev.queues[0].stats.invalid_reqs), 1);
	metrics_free(mt);
	set_status(0);
	dev_close();
}

/* ---- a made-up machine: shape, gauges, vCPUs ---- */

#define FAKE_QUEUES 16 /* a line well over PIPE_BUF */

static struct virtio_dev fake_dev;
static struct vcpu fake_vcpus[2];
static struct metrics_drive fake_drive = { .id = "d1", .vdev = &fake_dev };
static struct metrics_source fake_src = {
	.drives = &fake_drive, .nr_drives = 1,
	.vcpus = fake_vcpus, .nr_vcpus = 2,
};

static void fake_add_reads(unsigned int n)
{
	unsigned int q;

	for (q = 0; q < FAKE_QUEUES; q++) {
		atomic_fetch_add(&fake_dev.queues[q].stats.read_count, n);
		atomic_fetch_add(&fake_dev.queues[q].stats.read_bytes,
				 512ull * n);
	}
}

static void test_fake_machine(void)
{
	struct metrics *mt = metrics_new(open("/proc/self/status",
					      O_RDONLY | O_CLOEXEC));
	struct json_object *o;

	fake_dev.num_queues = FAKE_QUEUES;
	fake_add_reads(2);
	atomic_store(&fake_dev.queues[3].stats.poll_window_ns, 7000);
	atomic_store(&fake_dev.queues[5].stats.throttled, 3);
	atomic_store(&fake_vcpus[0].exits[VCPU_EXIT_IO_OUT], 5);
	atomic_store(&fake_vcpus[1].exits[VCPU_EXIT_MMIO_WRITE], 4);
	atomic_store(&fake_vcpus[1].exits[VCPU_EXIT_IO_OUT], 1);
	o = emit_parse(mt, &fake_src);
	CHECK(jnum(o, "utc_timestamp_ms") > 1700000000000ll);
	CHECK_EQ(jnum(o, "block_d1.read_count"), 2 * FAKE_QUEUES);
	CHECK_EQ(jnum(o, "block_d1.queues.15.read_bytes"), 1024);
	CHECK_EQ(jnum(o, "block_d1.queues.3.poll_window_us"), 7);
	CHECK(jget(o, "block_d1.queues.16") == NULL);
	CHECK_EQ(jnum(o, "block_d1.rate_limiter_throttled_events"), 3);
	CHECK_EQ(jnum(o, "block_d1.queues.5.rate_limiter_throttled_events"), 3);
	CHECK_EQ(jnum(o, "block.rate_limiter_throttled_events"), 3);
	CHECK_EQ(jnum(o, "vcpu.exit_io_out"), 6);
	CHECK_EQ(jnum(o, "vcpu.exit_mmio_write"), 4);
	CHECK_EQ(jnum(o, "vcpu.exit_io_in"), 0);
	CHECK_EQ(jnum(o, "vcpu.vcpus.1.exit_io_out"), 1);
	CHECK(jnum(o, "vmm.uptime_ms") >= 0);
	CHECK(jnum(o, "vmm.rss_kib") > 0);
	CHECK(jnum(o, "vmm.rss_peak_kib") >= jnum(o, "vmm.rss_kib"));
	CHECK_EQ(jnum(o, "logger.missed_metrics_count"), 0);
	CHECK_EQ(jnum(o, "logger.missed_log_count"), 0);
	CHECK_EQ(jnum(o, "api_server.process_startup_time_us"), 0);
	json_object_put(o);

	/* Startup as a jailer started 1.5 s ago with 2 ms of its CPU time
	 * reports it (once: a second note changes nothing). */
	{
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		metrics_note_startup(now - 1500000, 0, 2000);
		metrics_note_startup(now - 9000000, 0, 0);
	}

	/* The next line: counts are deltas, the window is a gauge. */
	atomic_fetch_add(&fake_vcpus[0].exits[VCPU_EXIT_IO_OUT], 2);
	o = emit_parse(mt, &fake_src);
	CHECK_EQ(jnum(o, "block_d1.read_count"), 0);
	CHECK_EQ(jnum(o, "block_d1.queues.3.poll_window_us"), 7);
	CHECK_EQ(jnum(o, "vcpu.exit_io_out"), 2);
	CHECK_EQ(jnum(o, "vcpu.vcpus.0.exit_io_out"), 2);
	CHECK_EQ(jnum(o, "vcpu.exit_mmio_write"), 0);
	CHECK(jnum(o, "api_server.process_startup_time_us") >= 1500000);
	CHECK(jnum(o, "api_server.process_startup_time_us") < 9000000);
	CHECK(jnum(o, "api_server.process_startup_time_cpu_us") >= 2000);
	json_object_put(o);

	/* Before the vCPUs and disks exist: a line all the same. */
	{
		struct metrics_source none = { 0 };

		o = emit_parse(mt, &none);
		CHECK(jget(o, "block") != NULL);
		CHECK_EQ(jnum(o, "vcpu.exit_io_out"), 0);
		json_object_put(o);
	}
	metrics_free(mt);
}

static void *emit_thread(void *arg)
{
	struct json_object *o = emit_parse(arg, &fake_src);

	/* Not the stream's thread: no lseek, so no RSS; the rest is there. */
	CHECK(jget(o, "vmm.rss_kib") == NULL);
	CHECK(jnum(o, "vmm.uptime_ms") >= 0);
	CHECK(jget(o, "block_d1") != NULL);
	json_object_put(o);
	return NULL;
}

/* A line from another thread (the API's periodic tick). */
static void test_other_thread(void)
{
	struct metrics *mt = metrics_new(open("/proc/self/status",
					      O_RDONLY | O_CLOEXEC));
	pthread_t t;
	int rc;

	/* The thread's checks count too: main checks only after the join
	 * (the pass counter is not atomic). */
	rc = pthread_create(&t, NULL, emit_thread, mt);
	if (!rc)
		pthread_join(t, NULL);
	CHECK_EQ(rc, 0);
	metrics_free(mt);
}

struct emit_arg {
	struct metrics *mt;
	int fd;
	int ret;
};

/* The API's tick: a line from the control thread under its filter. */
static void *confined_emit(void *p)
{
	struct emit_arg *a = p;

	confine_thread(CONFINE_CONTROL);
	a->ret = metrics_emit(a->mt, &fake_src, a->fd);
	return NULL;
}

/*
 * Under the seccomp filters, in a child: a line from the control thread
 * (no RSS, nothing it may not call) and one from the main thread (with
 * the RSS). A forbidden call would end the child with SIGSYS.
 */
static int confined_child(void)
{
	struct emit_arg a = { .ret = -1 };
	struct json_object *o;
	char err[256], *text, *nl;
	int fds[2];
	pthread_t t;
	size_t len;

	a.mt = metrics_new(open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	if (!a.mt || pipe2(fds, O_NONBLOCK) ||
	    confine_prepare(CONFINE_ON, err, sizeof(err)))
		return 1;
	a.fd = fds[1];
	if (pthread_create(&t, NULL, confined_emit, &a) ||
	    pthread_join(t, NULL) || a.ret)
		return 2;
	confine_thread(CONFINE_MAIN);
	if (metrics_emit(a.mt, &fake_src, fds[1]))
		return 3;
	text = drain(fds[0], &len);
	nl = strchr(text, '\n');
	if (!nl)
		return 4;
	*nl = '\0';
	o = json_tokener_parse(text);
	if (!o || jget(o, "vmm.rss_kib") != NULL)
		return 5;
	o = json_tokener_parse(nl + 1);
	if (!o || jnum(o, "vmm.rss_kib") <= 0)
		return 6;
	return 0;
}

static void test_confined(void)
{
	int status = -1;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(confined_child());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	/* 125: confine_thread() could not install a filter (qemu-user
	 * has no seccomp): nothing to check here. */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 125) {
		printf("note: no seccomp here: confined case skipped\n");
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "confined child: status 0x%x\n", status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * A FIFO with no reader but us (metrics_open() opens it read-write, as
 * Firecracker does): writes never block, lines that find no room are
 * dropped and counted, their counts go out with a later line, and a line
 * larger than the room left is finished before the next, never torn.
 */
static void test_fifo_no_reader(void)
{
	char dir[] = "/tmp/test_metrics.XXXXXX", path[64], err[128];
	struct metrics *mt = metrics_new(-1);
	struct metrics_totals t;
	unsigned int i, made = 0, lines = 0;
	long long reads = 0, missed = 0;
	size_t len, acc_len = 0;
	char *text, *line, *acc, *save = NULL;
	uint64_t t0;
	int fd, ret, drops = 0;

	/* A new stream reports all counted so far first. */
	made = (unsigned int)atomic_load(&fake_dev.queues[0].stats.read_count) *
	       FAKE_QUEUES;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/metrics.fifo", dir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	fd = metrics_open(path, err, sizeof(err));
	CHECK(fd >= 0);
	/* The smallest pipe: a line (> 4 KiB) never fits twice. */
	fcntl(fd, F_SETPIPE_SZ, 4096);
	t0 = now_ms();
	for (i = 0; i < 40; i++) {
		fake_add_reads(1);
		made += FAKE_QUEUES;
		ret = metrics_emit(mt, &fake_src, fd);
		CHECK(ret == 0 || ret == -EAGAIN);
		drops += ret == -EAGAIN;
	}
	CHECK(now_ms() - t0 < 2000);
	CHECK(drops > 0);
	metrics_get_totals(mt, &t);
	CHECK_EQ(t.dropped, drops);
	/* Read what is there and let the rest out, a few times; then with
	 * room for all, the last rest and a last line. */
	acc = calloc(1, 1);
	for (i = 0; i < 6; i++) {
		if (i == 5)
			fcntl(fd, F_SETPIPE_SZ, 1 << 20);
		text = drain(fd, &len);
		acc = realloc(acc, acc_len + len + 1);
		memcpy(acc + acc_len, text, len + 1);
		acc_len += len;
		free(text);
		CHECK(metrics_emit(mt, &fake_src, fd) != -EPIPE);
	}
	text = drain(fd, &len);
	acc = realloc(acc, acc_len + len + 1);
	memcpy(acc + acc_len, text, len + 1);
	acc_len += len;
	free(text);
	CHECK(acc_len > 0 && acc[acc_len - 1] == '\n');
	for (line = strtok_r(acc, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct json_object *o = json_tokener_parse(line);

		CHECK(o != NULL); /* no torn line */
		reads += jnum(o, "block_d1.read_count");
		missed += jnum(o, "logger.missed_metrics_count");
		lines++;
		json_object_put(o);
	}
	free(acc);
	metrics_get_totals(mt, &t);
	CHECK(lines >= 2);
	CHECK_EQ(lines, t.lines);
	CHECK_EQ(reads, made); /* nothing lost, nothing twice */
	CHECK_EQ(missed, t.dropped); /* each drop reported once */
	{
		char want[96], got[96] = "";
		int fds[2];

		CHECK_EQ(pipe(fds), 0);
		metrics_print_stats(mt, fds[1]);
		CHECK(read(fds[0], got, sizeof(got) - 1) > 0);
		snprintf(want, sizeof(want), "microvm: stats metrics: lines "
			 "%llu dropped %llu fails 0\n",
			 (unsigned long long)t.lines,
			 (unsigned long long)t.dropped);
		CHECK(!strcmp(got, want));
		close(fds[0]);
		close(fds[1]);
	}
	close(fd);
	unlink(path);
	rmdir(dir);
	/* A path that cannot be opened: the message names it. */
	fd = metrics_open("/nonexistent/dir/metrics", err, sizeof(err));
	CHECK_EQ(fd, -ENOENT);
	CHECK(strstr(err, "/nonexistent/dir/metrics") != NULL);
	metrics_free(mt);
}

/* "vsock": deltas of the device's totals; absent without a device. */
static void test_vsock(void)
{
	struct vsock_dev_stats vs = { .rx_bytes = 1000, .tx_bytes = 70,
				      .rx_packets = 3, .conns_host = 2,
				      .conns_guest = 1, .credit_violations = 1 };
	struct metrics_source src = { .vsock = &vs };
	struct metrics *mt = metrics_new(-1);
	struct json_object *o, *v;

	CHECK(mt != NULL);
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "vsock.rx_bytes_count"), 1000);
	CHECK_EQ(jnum(o, "vsock.tx_bytes_count"), 70);
	CHECK_EQ(jnum(o, "vsock.rx_packets_count"), 3);
	CHECK_EQ(jnum(o, "vsock.conns_added"), 3);
	CHECK_EQ(jnum(o, "vsock.conns_killed"), 1);
	json_object_put(o);
	vs.rx_bytes += 24;
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "vsock.rx_bytes_count"), 24);
	CHECK_EQ(jnum(o, "vsock.conns_added"), 0);
	json_object_put(o);
	src.vsock = NULL;
	o = emit_parse(mt, &src);
	CHECK(!json_object_object_get_ex(o, "vsock", &v));
	json_object_put(o);
	metrics_free(mt);
}

/* "net" (sums) and "net_<iface_id>": Firecracker's names, deltas of the
 * devices' totals; absent without an interface. */
static void test_net(void)
{
	struct metrics_net nets[2] = {
		{ .id = "eth0", .stats = { .rx_bytes = 1500, .rx_packets = 1,
					   .tx_bytes = 100, .tx_packets = 2,
					   .tx_errors = 1, .tx_drops = 2,
					   .rx_throttled = 4 } },
		{ .id = "eth1", .stats = { .rx_bytes = 500, .rx_drops = 3,
					   .rx_errors = 1, .ctrl_ok = 2,
					   .mmds = { .rx_count = 7,
						     .connections_created = 2,
						     .tx_frames = 5 } } },
	};
	struct metrics_source src = { .nets = nets, .nr_nets = 2 };
	struct metrics *mt = metrics_new(-1);
	struct json_object *o, *v;

	CHECK(mt != NULL);
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "net.rx_bytes_count"), 2000);
	CHECK_EQ(jnum(o, "net.rx_packets_count"), 1);
	CHECK_EQ(jnum(o, "net.rx_fails"), 4);
	CHECK_EQ(jnum(o, "net.tx_fails"), 3);
	CHECK_EQ(jnum(o, "net.tx_malformed_frames"), 1);
	CHECK_EQ(jnum(o, "net.tap_write_fails"), 2);
	CHECK_EQ(jnum(o, "net.rx_rate_limiter_throttled"), 4);
	CHECK_EQ(jnum(o, "net.ctrl_commands"), 2);
	CHECK_EQ(jnum(o, "net_eth0.rx_bytes_count"), 1500);
	CHECK_EQ(jnum(o, "net_eth0.tx_packets_count"), 2);
	CHECK_EQ(jnum(o, "net_eth1.rx_dropped"), 3);
	CHECK_EQ(jnum(o, "net_eth1.tx_rate_limiter_throttled"), 0);
	CHECK_EQ(jnum(o, "mmds.rx_count"), 7);
	CHECK_EQ(jnum(o, "mmds.connections_created"), 2);
	CHECK_EQ(jnum(o, "mmds.tx_frames"), 5);
	CHECK_EQ(jnum(o, "mmds.connections_destroyed"), 0);
	json_object_put(o);
	nets[1].stats.rx_bytes += 60;
	nets[1].stats.mmds.connections_created += 1;
	nets[0].stats.tx_packets += 5;
	o = emit_parse(mt, &src);
	CHECK_EQ(jnum(o, "net.rx_bytes_count"), 60);
	CHECK_EQ(jnum(o, "net_eth1.rx_bytes_count"), 60);
	CHECK_EQ(jnum(o, "net_eth0.rx_bytes_count"), 0);
	CHECK_EQ(jnum(o, "net_eth0.tx_packets_count"), 5);
	CHECK_EQ(jnum(o, "net.rx_fails"), 0);
	CHECK_EQ(jnum(o, "mmds.connections_created"), 1);
	CHECK_EQ(jnum(o, "mmds.rx_count"), 0);
	json_object_put(o);
	src.nets = NULL;
	src.nr_nets = 0;
	o = emit_parse(mt, &src);
	CHECK(!json_object_object_get_ex(o, "net", &v));
	CHECK(!json_object_object_get_ex(o, "net_eth0", &v));
	CHECK(!json_object_object_get_ex(o, "mmds", &v));
	json_object_put(o);
	metrics_free(mt);
}

int main(void)
{
	int ret;

	test_net();
	test_vsock();
	test_fake_machine();
	test_other_thread();
	test_confined();
	test_fifo_no_reader();
	ret = blk_test_main_with(run_engine, false);
	return ret;
}
