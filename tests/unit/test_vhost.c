// SPDX-License-Identifier: Apache-2.0
/*
 * The generic vhost-kernel layer against a fake kernel (a struct vhost_sys
 * that records every ioctl and keeps the state a vhost device would:
 * owner, kick/err/call fd and backend per ring, running, open fds).
 * Two devices drive it through their ops: a vsock-like one (guest CID at
 * open, SET_RUNNING 1/0) and a net-like one (a tap per ring, -1 to stop).
 * Every failing step must leave nothing open or running.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/vhost.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_vhost.h"
#include "test.h"
#include "util/evloop.h"
#include "virtio/vhost.h"
#include "virtio/virtio.h"

/* ---- the fake kernel ---- */

#define FAKE_FD 90
#define NR 2 /* rings of the vsock- and net-like devices */

#define FEAT_VSOCK                                                       \
	(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_EVENT_IDX)

static void fake_reset(void)
{
	fake_vhost_reset(FAKE_FD);
	fk.features = FEAT_VSOCK;
	fk.nr_rings = VHOST_MAX_RINGS;
	fk.one_fd = true;
}

/* Descriptors this process holds (the error eventfds are real ones). */
static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- stderr, for the messages that name a fix ---- */

static int saved_stderr = -1;
static FILE *captured;

static void capture_begin(void)
{
	captured = tmpfile();
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	if (captured && saved_stderr >= 0)
		dup2(fileno(captured), STDERR_FILENO);
}

/* What was written to stderr since capture_begin(), into @buf. */
static void capture_end(char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	if (saved_stderr >= 0) {
		dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
		saved_stderr = -1;
	}
	if (!captured)
		return;
	rewind(captured);
	n = fread(buf, 1, size - 1, captured);
	buf[n] = 0;
	fclose(captured);
	captured = NULL;
	fputs(buf, stderr);
}

/* ---- guest memory and rings ---- */

static uint8_t mem[0x40000];
static uint8_t mem2[0x8000];
static struct guest_mem gm;
static struct vhost_ring rings[VHOST_MAX_RINGS];

static void gm_setup(void)
{
	memset(&gm, 0, sizeof(gm));
	CHECK_EQ(guest_mem_add_region(&gm, 0, sizeof(mem), mem), 0);
	CHECK_EQ(guest_mem_add_region(&gm, 0x80000000ull, sizeof(mem2), mem2),
		 0);
}

static void rings_fill(unsigned int n, uint16_t base)
{
	unsigned int i;

	memset(rings, 0, sizeof(rings));
	for (i = 0; i < n; i++) {
		rings[i].size = 128;
		rings[i].desc = mem + 0x10000 + 0x4000 * i;
		rings[i].avail = mem + 0x10800 + 0x4000 * i;
		rings[i].used = mem + 0x11000 + 0x4000 * i;
		rings[i].base = (uint16_t)(base + 2 * i);
		rings[i].kick_fd = 300 + (int)i;
	}
}

/* ---- a vsock-like device: a guest CID, SET_RUNNING ---- */

struct vsock_like {
	uint64_t cid;
	int setups, ons, offs;
};

static int vsock_setup(struct vhost_dev *v)
{
	struct vsock_like *d = v->opaque;
	__u64 cid = d->cid;
	int ret;

	d->setups++;
	ret = vhost_ioctl(v, VHOST_VSOCK_SET_GUEST_CID, &cid);
	return ret < 0 ? ret : 0;
}

static int vsock_running(struct vhost_dev *v, int on)
{
	int ret = vhost_ioctl(v, VHOST_VSOCK_SET_RUNNING, &on);

	return ret < 0 ? ret : 0;
}

static int vsock_on(struct vhost_dev *v, unsigned int nr_rings,
		    const void *arg)
{
	struct vsock_like *d = v->opaque;

	CHECK_EQ(nr_rings, NR);
	CHECK(arg == NULL);
	d->ons++;
	return vsock_running(v, 1);
}

static void vsock_off(struct vhost_dev *v, unsigned int nr_rings)
{
	struct vsock_like *d = v->opaque;

	CHECK_EQ(nr_rings, NR);
	d->offs++;
	vsock_running(v, 0);
}

static const struct vhost_ops vsock_ops = {
	.what = "vhost_vsock",
	.fix_load = "modprobe vhost_vsock",
	.fix_version = "use a newer kernel",
	.setup = vsock_setup,
	.backend_on = vsock_on,
	.backend_off = vsock_off,
};

/* The same with a probe before ownership (as vhost-blk's version). */
static int probe_ret, probes;

static int probe(struct vhost_dev *v, const char *path)
{
	CHECK_EQ(fk.owned, 0);
	CHECK(!strcmp(path, "/dev/vhost-vsock"));
	CHECK_EQ(v->fd, FAKE_FD);
	probes++;
	return probe_ret;
}

static const struct vhost_ops probed_ops = {
	.what = "vhost_vsock",
	.fix_load = "modprobe vhost_vsock",
	.fix_version = "use a newer kernel",
	.probe = probe,
	.setup = vsock_setup,
	.backend_on = vsock_on,
	.backend_off = vsock_off,
};

static struct vsock_like vs;

static int vsock_open(struct vhost_dev *v, const struct vhost_ops *ops)
{
	memset(&vs, 0, sizeof(vs));
	vs.cid = 42;
	return vhost_open(v, &fake_sys, ops, &vs, &gm, "/dev/vhost-vsock",
			  "vsock0");
}

/* Nothing served, nothing attached, no descriptor of ours left over. */
static void check_idle(const struct vhost_dev *v, int fds)
{
	unsigned int i;

	CHECK(!v->serving);
	CHECK(!v->err_running);
	CHECK_EQ(fk.running, 0);
	for (i = 0; i < VHOST_MAX_RINGS; i++) {
		CHECK_EQ(fk.kick[i], -1);
		CHECK_EQ(fk.err[i], -1);
		CHECK_EQ(fk.tap[i], -1);
		CHECK_EQ(v->err_fd[i], -1);
	}
	CHECK_EQ(nr_fds(), fds);
}

/* The order <linux/vhost.h> asks for, the CID set after ownership. */
static void test_vsock_open(void)
{
	struct vhost_dev v;
	int fds = nr_fds();

	fake_reset();
	CHECK_EQ(vsock_open(&v, &vsock_ops), 0);
	CHECK(!strcmp(fk.path, "/dev/vhost-vsock"));
	CHECK_EQ(fk.open_fds, 1);
	CHECK_EQ(fk.n, 4);
	CHECK_EQ(fk.log[0].req, VHOST_SET_OWNER);
	CHECK_EQ(fk.log[1].req, VHOST_GET_FEATURES);
	CHECK_EQ(fk.log[2].req, VHOST_SET_MEM_TABLE);
	CHECK_EQ(fk.log[2].nregions, 2);
	CHECK(fk.log[2].reg_gpa[0] == 0 &&
	      fk.log[2].reg_size[0] == sizeof(mem) &&
	      fk.log[2].reg_host[0] == (uintptr_t)mem);
	CHECK(fk.log[2].reg_gpa[1] == 0x80000000ull &&
	      fk.log[2].reg_size[1] == sizeof(mem2) &&
	      fk.log[2].reg_host[1] == (uintptr_t)mem2);
	CHECK_EQ(fk.log[3].req, VHOST_VSOCK_SET_GUEST_CID);
	CHECK_EQ(fk.cid, 42);
	CHECK_EQ(vs.setups, 1);
	CHECK_EQ(v.features, FEAT_VSOCK);
	CHECK(v.opaque == &vs && v.ops == &vsock_ops);
	CHECK(!strcmp(v.name, "vsock0"));
	/* Never started: closing stops nothing. */
	vhost_close(&v);
	CHECK_EQ(fk.open_fds, 0);
	CHECK_EQ(vs.offs, 0);
	CHECK_EQ(fk.n, 4);
	CHECK_EQ(v.fd, -1);
	vhost_close(&v); /* twice: nothing */
	CHECK_EQ(fk.open_fds, 0);
	CHECK_EQ(nr_fds(), fds);

	/* A probe runs on the open device, before ownership. */
	fake_reset();
	probes = probe_ret = 0;
	CHECK_EQ(vsock_open(&v, &probed_ops), 0);
	CHECK_EQ(probes, 1);
	vhost_close(&v);
}

/* One row per failing step: the error, where it stopped, nothing open. */
static void test_open_errors(void)
{
	static const struct {
		const char *what;
		int open_err;
		int probe_ret;
		uint64_t features;
		unsigned long fail_req;
		int fail_err;
		int want;
		int nr_ioctls; /* issued, the failing one included */
		const char *msg; /* in the message, or NULL */
	} rows[] = {
		{ .what = "no node", .open_err = -ENOENT,
		  .features = FEAT_VSOCK, .want = -ENOENT,
		  .msg = "the vhost_vsock module is not loaded: "
			 "modprobe vhost_vsock" },
		{ .what = "no access", .open_err = -EACCES,
		  .features = FEAT_VSOCK, .want = -EACCES,
		  .msg = "read-write access" },
		{ .what = "other open error", .open_err = -EMFILE,
		  .features = FEAT_VSOCK, .want = -EMFILE,
		  .msg = "cannot open /dev/vhost-vsock" },
		{ .what = "probe", .probe_ret = -EPROTO,
		  .features = FEAT_VSOCK, .want = -EPROTO, .nr_ioctls = 0 },
		{ .what = "owned", .features = FEAT_VSOCK,
		  .fail_req = VHOST_SET_OWNER, .fail_err = EBUSY,
		  .want = -EBUSY, .nr_ioctls = 1, .msg = "VHOST_SET_OWNER" },
		{ .what = "features", .features = FEAT_VSOCK,
		  .fail_req = VHOST_GET_FEATURES, .fail_err = EFAULT,
		  .want = -EFAULT, .nr_ioctls = 2 },
		{ .what = "no VERSION_1",
		  .features = 1ull << VIRTIO_F_EVENT_IDX, .want = -EPROTO,
		  .nr_ioctls = 2,
		  .msg = "VIRTIO_F_VERSION_1 (features 0x20000000); "
			 "use a newer kernel" },
		{ .what = "mem table", .features = FEAT_VSOCK,
		  .fail_req = VHOST_SET_MEM_TABLE, .fail_err = ENOMEM,
		  .want = -ENOMEM, .nr_ioctls = 3,
		  .msg = "VHOST_SET_MEM_TABLE (2 regions)" },
		{ .what = "guest cid", .features = FEAT_VSOCK,
		  .fail_req = VHOST_VSOCK_SET_GUEST_CID, .fail_err = EADDRINUSE,
		  .want = -EADDRINUSE, .nr_ioctls = 4 },
	};
	char buf[2048];
	struct vhost_dev v;
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fds = nr_fds();

		fake_reset();
		fk.open_err = rows[i].open_err;
		fk.features = rows[i].features;
		fk.fail_req = rows[i].fail_req;
		fk.fail_err = rows[i].fail_err;
		probes = 0;
		probe_ret = rows[i].probe_ret;
		printf("open error row: %s\n", rows[i].what);
		capture_begin();
		CHECK_EQ(vsock_open(&v, &probed_ops), rows[i].want);
		capture_end(buf, sizeof(buf));
		CHECK_EQ(fk.open_fds, 0);
		CHECK_EQ(v.fd, -1);
		CHECK_EQ(fk.n, rows[i].nr_ioctls);
		CHECK_EQ(probes, rows[i].open_err ? 0 : 1);
		if (rows[i].msg)
			CHECK(strstr(buf, rows[i].msg) != NULL);
		CHECK_EQ(nr_fds(), fds);
		/* Closing after a failed open does nothing. */
		vhost_close(&v);
		CHECK_EQ(fk.open_fds, 0);
	}
}

/* Start, stop, and a restart that resumes from the saved bases. */
static void test_vsock_start_stop_restart(void)
{
	uint64_t feat = FEAT_VSOCK;
	struct vhost_dev v;
	unsigned int i;
	int at, fds = nr_fds();

	fake_reset();
	CHECK_EQ(vsock_open(&v, &vsock_ops), 0);
	rings_fill(NR, 5);
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, NR, feat, NULL), 0);
	CHECK_EQ(fk.log[at].req, VHOST_SET_FEATURES);
	CHECK_EQ(fk.log[at].val, (long long)feat);
	for (i = 0; i < NR; i++) {
		struct fake_call *c = &fk.log[at + 1 + 4 * i];

		CHECK(c[0].req == VHOST_SET_VRING_NUM && c[0].index == i &&
		      c[0].val == 128);
		CHECK(c[1].req == VHOST_SET_VRING_ADDR && c[1].index == i &&
		      c[1].a[0] == (uintptr_t)rings[i].desc &&
		      c[1].a[1] == (uintptr_t)rings[i].avail &&
		      c[1].a[2] == (uintptr_t)rings[i].used);
		CHECK(c[2].req == VHOST_SET_VRING_BASE && c[2].index == i &&
		      c[2].val == 5 + 2 * i);
		CHECK(c[3].req == VHOST_SET_VRING_KICK && c[3].index == i &&
		      c[3].val == 300 + i);
		/* An error eventfd per ring, a real one. */
		CHECK(fk.err[i] >= 0 && fk.err[i] == v.err_fd[i]);
	}
	CHECK_EQ(fake_count(VHOST_SET_VRING_ERR, at), NR);
	/* Running is the last step. */
	CHECK_EQ(fk.log[fk.n - 1].req, VHOST_VSOCK_SET_RUNNING);
	CHECK_EQ(fk.running, 1);
	CHECK_EQ(vs.ons, 1);
	CHECK(v.serving && v.err_running);
	CHECK_EQ(v.nr_started, NR);
	CHECK_EQ(v.starts, 1);
	/* A second start while serving is refused, nothing issued. */
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, NR, feat, NULL), -EINVAL);
	CHECK_EQ(fk.n, at);

	/* Stop: running 0 first, then the ring state per ring. */
	fk.ring_base[0] = 1000;
	fk.ring_base[1] = 2001;
	at = fk.n;
	vhost_stop(&v, rings, NR);
	CHECK_EQ(fk.log[at].req, VHOST_VSOCK_SET_RUNNING);
	CHECK_EQ(fk.log[at].val, 0);
	for (i = 0; i < NR; i++)
		CHECK(fk.log[at + 1 + i].req == VHOST_GET_VRING_BASE &&
		      fk.log[at + 1 + i].index == i);
	CHECK_EQ(rings[0].base, 1000);
	CHECK_EQ(rings[1].base, 2001);
	CHECK_EQ(v.stop_base[0], 1000);
	CHECK_EQ(v.stop_base[1], 2001);
	CHECK_EQ(vs.offs, 1);
	check_idle(&v, fds);
	CHECK_EQ(fk.open_fds, 1);
	/* Stopping twice does nothing more. */
	at = fk.n;
	vhost_stop(&v, rings, NR);
	CHECK_EQ(fk.n, at);

	/* Restart: the saved bases are where the rings resume. */
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, NR, feat, NULL), 0);
	CHECK_EQ(fk.log[at + 3].req, VHOST_SET_VRING_BASE);
	CHECK_EQ(fk.log[at + 3].val, 1000);
	CHECK_EQ(fk.log[at + 7].req, VHOST_SET_VRING_BASE);
	CHECK_EQ(fk.log[at + 7].val, 2001);
	CHECK_EQ(fk.running, 1);
	CHECK_EQ(v.starts, 2);

	/* A ring whose GET_VRING_BASE fails keeps its base. */
	fk.ring_base[0] = 1100;
	fk.ring_base[1] = 2100;
	fk.fail_req = VHOST_GET_VRING_BASE;
	fk.fail_err = EIO;
	fk.fail_index = 1;
	vhost_stop(&v, rings, NR);
	CHECK_EQ(rings[0].base, 1100);
	CHECK_EQ(rings[1].base, 2001);
	CHECK_EQ(v.stop_base[1], 2001);
	check_idle(&v, fds);
	fk.fail_req = 0;

	/* Only @nr_rings of the bases are written back; NULL: none. */
	CHECK_EQ(vhost_start(&v, rings, NR, feat, NULL), 0);
	fk.ring_base[0] = 1200;
	fk.ring_base[1] = 2200;
	vhost_stop(&v, rings, 1);
	CHECK_EQ(rings[0].base, 1200);
	CHECK_EQ(rings[1].base, 2001);
	CHECK_EQ(v.stop_base[1], 2200);
	CHECK_EQ(vhost_start(&v, rings, NR, feat, NULL), 0);

	/* Closing a serving device stops it first, then closes it. */
	at = fk.n;
	vhost_close(&v);
	CHECK_EQ(fk.log[at].req, VHOST_VSOCK_SET_RUNNING);
	CHECK_EQ(fk.log[at].val, 0);
	CHECK_EQ(fake_count(VHOST_GET_VRING_BASE, at), NR);
	check_idle(&v, fds);
	CHECK_EQ(fk.open_fds, 0);
}

/* One row per failing step of a start: nothing served or attached. */
static void test_start_errors(void)
{
	static const struct {
		const char *what;
		unsigned long fail_req;
		int fail_index;
		int err;
	} rows[] = {
		{ "features", VHOST_SET_FEATURES, -1, EINVAL },
		{ "num, ring 1", VHOST_SET_VRING_NUM, 1, EINVAL },
		{ "addr, ring 0", VHOST_SET_VRING_ADDR, 0, EFAULT },
		{ "addr, ring 1", VHOST_SET_VRING_ADDR, 1, EFAULT },
		{ "base, ring 1", VHOST_SET_VRING_BASE, 1, EBUSY },
		{ "kick, ring 1", VHOST_SET_VRING_KICK, 1, EBADF },
		{ "running", VHOST_VSOCK_SET_RUNNING, -1, EIO },
	};
	struct vhost_dev v;
	unsigned int i;
	int at, fds = nr_fds();

	fake_reset();
	CHECK_EQ(vsock_open(&v, &vsock_ops), 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		printf("start error row: %s\n", rows[i].what);
		rings_fill(NR, 0);
		fk.fail_req = rows[i].fail_req;
		fk.fail_index = rows[i].fail_index;
		fk.fail_err = rows[i].err;
		at = fk.n;
		CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, NULL),
			 -rows[i].err);
		check_idle(&v, fds);
		CHECK_EQ(fk.open_fds, 1);
		CHECK_EQ(v.starts, 0);
		/* Running is only asked for once every ring is set. */
		CHECK_EQ(fake_count(VHOST_VSOCK_SET_RUNNING, at),
			 rows[i].fail_req == VHOST_VSOCK_SET_RUNNING);
		/* Nothing to stop. */
		at = fk.n;
		vhost_stop(&v, rings, NR);
		CHECK_EQ(fk.n, at);
	}

	/* No error eventfd: a warning, the rings still served. */
	fk.fail_req = VHOST_SET_VRING_ERR;
	fk.fail_index = 1;
	fk.fail_err = EINVAL;
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, NULL), 0);
	CHECK(v.serving && !v.err_running);
	CHECK_EQ(fk.err[0], -1); /* ring 0's detached again */
	CHECK_EQ(v.err_fd[0], -1);
	CHECK_EQ(nr_fds(), fds);
	CHECK_EQ(fk.running, 1);
	fk.fail_req = 0;
	vhost_stop(&v, rings, NR);
	check_idle(&v, fds);

	/* Bad ring counts: refused before any ioctl. */
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, 0, FEAT_VSOCK, NULL), -EINVAL);
	CHECK_EQ(vhost_start(&v, rings, VHOST_MAX_RINGS + 1, FEAT_VSOCK,
			     NULL), -EINVAL);
	CHECK_EQ(fk.n, at);

	/* After all that, a clean start works. */
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, NULL), 0);
	CHECK_EQ(fk.running, 1);
	vhost_close(&v);
	check_idle(&v, fds);
	CHECK_EQ(fk.open_fds, 0);
}

/* The error eventfd of a ring the kernel finds broken: err_fn(index). */
static int err_calls;
static unsigned int err_index;

static void on_err(void *opaque, unsigned int index)
{
	CHECK(opaque == &vs);
	err_index = index;
	__atomic_add_fetch(&err_calls, 1, __ATOMIC_RELEASE);
}

static void test_ring_error(void)
{
	struct vhost_dev v;
	int t;

	fake_reset();
	CHECK_EQ(vsock_open(&v, &vsock_ops), 0);
	v.err_fn = on_err;
	v.err_opaque = &vs;
	err_calls = 0;
	rings_fill(NR, 0);
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, NULL), 0);
	CHECK(fk.err[1] >= 0);
	if (fk.err[1] >= 0)
		evfd_signal(fk.err[1]);
	for (t = 0; t < 400 && !__atomic_load_n(&err_calls, __ATOMIC_ACQUIRE);
	     t++)
		usleep(5000);
	CHECK_EQ(__atomic_load_n(&err_calls, __ATOMIC_ACQUIRE), 1);
	CHECK_EQ(err_index, 1);
	vhost_close(&v);
	CHECK(!v.err_running);
}

/* ---- a net-like device: VHOST_NET_SET_BACKEND per ring ---- */

static int net_on(struct vhost_dev *v, unsigned int nr_rings,
		  const void *arg)
{
	const int *tap = arg;
	unsigned int i, j;
	int ret;

	for (i = 0; i < nr_rings; i++) {
		struct vhost_vring_file f = { .index = i, .fd = tap[i] };

		ret = vhost_ioctl(v, VHOST_NET_SET_BACKEND, &f);
		if (ret < 0) {
			for (j = 0; j < i; j++) {
				struct vhost_vring_file u = { .index = j,
							      .fd = -1 };

				vhost_ioctl(v, VHOST_NET_SET_BACKEND, &u);
			}
			return ret;
		}
	}
	return 0;
}

static void net_off(struct vhost_dev *v, unsigned int nr_rings)
{
	unsigned int i;

	for (i = 0; i < nr_rings; i++) {
		struct vhost_vring_file f = { .index = i, .fd = -1 };

		vhost_ioctl(v, VHOST_NET_SET_BACKEND, &f);
	}
}

static const struct vhost_ops net_ops = {
	.what = "vhost_net",
	.fix_load = "modprobe vhost_net",
	.fix_version = "use a newer kernel",
	.backend_on = net_on,
	.backend_off = net_off,
};

static void test_net(void)
{
	static const int tap[NR] = { 31, 32 };
	struct vhost_dev v;
	int at, fds = nr_fds();

	fake_reset();
	CHECK_EQ(vhost_open(&v, &fake_sys, &net_ops, NULL, &gm,
			    "/dev/vhost-net", "net0"), 0);
	CHECK(!strcmp(fk.path, "/dev/vhost-net"));
	CHECK_EQ(fk.n, 3); /* no setup hook: owner, features, table */
	rings_fill(NR, 0);
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, tap), 0);
	/* The taps go in last, after every ring's kick and err. */
	CHECK_EQ(fk.log[fk.n - 2].req, VHOST_NET_SET_BACKEND);
	CHECK_EQ(fk.log[fk.n - 2].index, 0);
	CHECK_EQ(fk.log[fk.n - 2].val, 31);
	CHECK_EQ(fk.log[fk.n - 1].req, VHOST_NET_SET_BACKEND);
	CHECK_EQ(fk.log[fk.n - 1].index, 1);
	CHECK_EQ(fk.log[fk.n - 1].val, 32);
	CHECK_EQ(fk.n - at, 1 + 4 * NR + NR + NR);
	CHECK(fk.tap[0] == 31 && fk.tap[1] == 32);
	/* Stop: each tap -1 before the bases are read. */
	fk.ring_base[0] = 77;
	fk.ring_base[1] = 88;
	at = fk.n;
	vhost_stop(&v, rings, NR);
	CHECK(fk.log[at].req == VHOST_NET_SET_BACKEND &&
	      fk.log[at].index == 0 && fk.log[at].val == -1);
	CHECK(fk.log[at + 1].req == VHOST_NET_SET_BACKEND &&
	      fk.log[at + 1].index == 1 && fk.log[at + 1].val == -1);
	CHECK_EQ(fk.log[at + 2].req, VHOST_GET_VRING_BASE);
	CHECK(rings[0].base == 77 && rings[1].base == 88);
	check_idle(&v, fds);

	/* The second tap refused: the first detached again, nothing
	 * served, and a restart resumes from the saved bases. */
	fk.fail_req = VHOST_NET_SET_BACKEND;
	fk.fail_index = 1;
	fk.fail_err = EBADFD;
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, tap), -EBADFD);
	check_idle(&v, fds);
	fk.fail_req = 0;
	at = fk.n;
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, tap), 0);
	CHECK_EQ(fk.log[at + 3].val, 77);
	CHECK_EQ(fk.log[at + 7].val, 88);
	CHECK_EQ(v.starts, 2);
	vhost_close(&v);
	check_idle(&v, fds);
	CHECK_EQ(fk.open_fds, 0);
}

/* ---- call eventfds ---- */

static void test_set_call(void)
{
	struct vhost_dev v;
	int at;

	fake_reset();
	CHECK_EQ(vsock_open(&v, &vsock_ops), 0);
	/* Before a start, and while serving. */
	CHECK_EQ(vhost_set_call(&v, 1, 55), 0);
	CHECK_EQ(fk.call[1], 55);
	CHECK_EQ(fk.call[0], -1);
	rings_fill(NR, 0);
	CHECK_EQ(vhost_start(&v, rings, NR, FEAT_VSOCK, NULL), 0);
	CHECK_EQ(vhost_set_call(&v, 0, 56), 0);
	CHECK_EQ(fk.call[0], 56);
	CHECK_EQ(vhost_set_call(&v, 1, -1), 0);
	CHECK_EQ(fk.call[1], -1);
	CHECK_EQ(fk.log[fk.n - 1].req, VHOST_SET_VRING_CALL);
	CHECK_EQ(fk.log[fk.n - 1].index, 1);
	/* Refused: the error, the old fd kept. */
	fk.fail_req = VHOST_SET_VRING_CALL;
	fk.fail_err = EBADF;
	at = fk.n;
	CHECK_EQ(vhost_set_call(&v, 0, 57), -EBADF);
	CHECK_EQ(fk.n, at + 1);
	CHECK_EQ(fk.call[0], 56);
	fk.fail_req = 0;
	/* Stopping leaves the call fds to the transport. */
	vhost_stop(&v, rings, NR);
	CHECK_EQ(fk.call[0], 56);
	vhost_close(&v);
}

int main(void)
{
	gm_setup();
	test_vsock_open();
	test_open_errors();
	test_vsock_start_stop_restart();
	test_start_errors();
	test_ring_error();
	test_net();
	test_set_call();
	return test_done();
}
