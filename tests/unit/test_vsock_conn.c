// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock core (virtio 1.2 §5.10.6) against fake host sockets:
 * one table row per header check and per CONNECT line case, both
 * directions of the connection state machine, credit accounting
 * (§5.10.6.3: never beyond the guest's credit, a guest beyond ours is
 * reset), shutdown and RST, timeouts, the connection cap and the
 * allocation of unique host ports.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "virtio/vsock_conn.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CID 3
#define NFDS (VSOCK_MAX_CONNS + 16)
#define SEC (1000ull * 1000 * 1000)
#define OUT_CAP (2 * VSOCK_BUF_ALLOC)

/* ---- fake host sockets, fd = index ---- */

struct fsock {
	bool open;
	uint8_t in[4096];    /* what the host program wrote, to recv */
	size_t in_len, in_off;
	bool eof;            /* recv returns 0 once in[] is empty */
	int recv_err;        /* recv fails with this */
	uint8_t *out;        /* what the core sent (OUT_CAP, on demand) */
	size_t out_len;
	size_t room;         /* bytes send may still take (EAGAIN at 0) */
	int send_err;
	uint32_t watch;
	uint32_t idx;
	bool shut_wr;
};

static struct fsock *fs;
static int next_fd;
static int connect_ret;   /* 0: connects */
static uint32_t connect_port;
static unsigned int nr_connects;

static void fs_clear(void)
{
	int i;

	for (i = 0; i < NFDS; i++)
		free(fs[i].out);
	memset(fs, 0, sizeof(*fs) * NFDS);
}

static void fsock_new(int fd)
{
	free(fs[fd].out);
	memset(&fs[fd], 0, sizeof(fs[fd]));
	fs[fd].open = true;
	fs[fd].room = SIZE_MAX;
}

static int fake_connect(void *o, uint32_t port, int *fd)
{
	(void)o;
	nr_connects++;
	connect_port = port;
	if (connect_ret)
		return connect_ret;
	*fd = next_fd++;
	fsock_new(*fd);
	return 0;
}

static ssize_t fake_send(void *o, int fd, const struct iovec *iov, int n)
{
	struct fsock *s = &fs[fd];
	size_t done = 0;
	int i;

	(void)o;
	CHECK(s->open);
	if (s->send_err)
		return -s->send_err;
	if (!s->out)
		s->out = malloc(OUT_CAP);
	if (!s->out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t k = iov[i].iov_len;

		if (k > s->room)
			k = s->room;
		if (k > OUT_CAP - s->out_len)
			k = OUT_CAP - s->out_len;
		memcpy(s->out + s->out_len, iov[i].iov_base, k);
		s->out_len += k;
		s->room -= k;
		done += k;
		if (k < iov[i].iov_len)
			break;
	}
	return done ? (ssize_t)done : -EAGAIN;
}

static ssize_t fake_recv(void *o, int fd, const struct iovec *iov, int n)
{
	struct fsock *s = &fs[fd];
	size_t done = 0;
	int i;

	(void)o;
	CHECK(s->open);
	if (s->recv_err)
		return -s->recv_err;
	for (i = 0; i < n && s->in_off < s->in_len; i++) {
		size_t k = s->in_len - s->in_off;

		if (k > iov[i].iov_len)
			k = iov[i].iov_len;
		memcpy(iov[i].iov_base, s->in + s->in_off, k);
		s->in_off += k;
		done += k;
	}
	if (done)
		return (ssize_t)done;
	return s->eof ? 0 : -EAGAIN;
}

static void fake_watch(void *o, int fd, uint32_t idx, uint32_t ev)
{
	(void)o;
	CHECK(fs[fd].open);
	fs[fd].watch = ev;
	fs[fd].idx = idx;
}

static void fake_shut_wr(void *o, int fd)
{
	(void)o;
	fs[fd].shut_wr = true;
}

static void fake_close(void *o, int fd, uint32_t idx)
{
	(void)o, (void)idx;
	CHECK(fs[fd].open);
	fs[fd].open = false;
	fs[fd].watch = 0;
}

static const struct vsock_io_ops fake_ops = {
	.connect = fake_connect,
	.send = fake_send,
	.recv = fake_recv,
	.watch = fake_watch,
	.shut_wr = fake_shut_wr,
	.close = fake_close,
};

static struct vsock_core vc;

static void core_new(void)
{
	next_fd = 3;
	connect_ret = 0;
	nr_connects = 0;
	fs_clear();
	CHECK_EQ(vsock_core_init(&vc, CID, &fake_ops, NULL), 0);
	vsock_core_expire(&vc, 1000);
}

static void host_write(int fd, const char *s, size_t n)
{
	memcpy(fs[fd].in + fs[fd].in_len, s, n);
	fs[fd].in_len += n;
}

/* A host program connects; returns its fd. */
static int host_accept(void)
{
	int fd = next_fd++;

	fsock_new(fd);
	CHECK_EQ(vsock_core_host_accept(&vc, fd), 0);
	CHECK_EQ(fs[fd].watch, VSOCK_WATCH_IN);
	return fd;
}

static void host_event(int fd)
{
	vsock_core_host_event(&vc, fs[fd].idx);
}

/* ---- the guest side ---- */

static struct vsock_hdr ghdr(uint32_t src_port, uint32_t dst_port,
			     uint16_t op)
{
	struct vsock_hdr h = {
		.src_cid = CID, .dst_cid = VSOCK_HOST_CID,
		.src_port = src_port, .dst_port = dst_port,
		.type = VSOCK_TYPE_STREAM, .op = op,
		.buf_alloc = 1u << 20,
	};
	return h;
}

static void guest_send(const struct vsock_hdr *h, const void *data,
		       size_t n)
{
	uint8_t b[VSOCK_HDR_SIZE];
	struct iovec iov = { (void *)data, n };

	vsock_hdr_encode(b, h);
	vsock_core_tx(&vc, b, &iov, n ? 1 : 0, n);
}

static void guest_op(uint32_t src, uint32_t dst, uint16_t op, uint32_t flags)
{
	struct vsock_hdr h = ghdr(src, dst, op);

	h.flags = flags;
	guest_send(&h, NULL, 0);
}

static uint8_t rxdata[VSOCK_MAX_PAYLOAD];

/* The next packet for the guest, or false. */
static bool guest_recv(struct vsock_hdr *h)
{
	uint8_t b[VSOCK_HDR_SIZE];
	struct iovec iov = { rxdata, sizeof(rxdata) };
	uint32_t len = 0xdead;

	if (!vsock_core_rx(&vc, b, &iov, 1, &len))
		return false;
	vsock_hdr_decode(b, h);
	CHECK_EQ(len, h->len);
	CHECK_EQ(h->src_cid, VSOCK_HOST_CID);
	CHECK_EQ(h->dst_cid, CID);
	CHECK_EQ(h->type, VSOCK_TYPE_STREAM);
	CHECK_EQ(h->buf_alloc, VSOCK_BUF_ALLOC);
	return true;
}

static uint16_t guest_recv_op(void)
{
	struct vsock_hdr h;

	return guest_recv(&h) ? h.op : 0xffff;
}

/* ---- header checks ---- */

static void test_hdr_check(void)
{
	static const struct {
		const char *what;
		uint64_t src_cid, dst_cid;
		uint16_t type, op;
		uint32_t len;
		uint64_t payload;
		enum vsock_hdr_err want;
	} rows[] = {
		{ "ok rw", CID, 2, 1, VSOCK_OP_RW, 10, 10, VSOCK_HDR_OK },
		{ "ok request", CID, 2, 1, VSOCK_OP_REQUEST, 0, 0,
		  VSOCK_HDR_OK },
		{ "ok rw, longer chain", CID, 2, 1, VSOCK_OP_RW, 10, 4096,
		  VSOCK_HDR_OK },
		{ "src cid", CID + 1, 2, 1, VSOCK_OP_RW, 0, 0,
		  VSOCK_HDR_SRC_CID },
		{ "src cid host", 2, 2, 1, VSOCK_OP_RW, 0, 0,
		  VSOCK_HDR_SRC_CID },
		{ "dst cid guest", CID, CID, 1, VSOCK_OP_RW, 0, 0,
		  VSOCK_HDR_DST_CID },
		{ "dst cid any", CID, UINT64_MAX, 1, VSOCK_OP_RW, 0, 0,
		  VSOCK_HDR_DST_CID },
		{ "seqpacket", CID, 2, 2, VSOCK_OP_RW, 0, 0, VSOCK_HDR_TYPE },
		{ "type 0", CID, 2, 0, VSOCK_OP_RW, 0, 0, VSOCK_HDR_TYPE },
		{ "op invalid", CID, 2, 1, VSOCK_OP_INVALID, 0, 0,
		  VSOCK_HDR_OP },
		{ "op 8", CID, 2, 1, 8, 0, 0, VSOCK_HDR_OP },
		{ "op max", CID, 2, 1, UINT16_MAX, 0, 0, VSOCK_HDR_OP },
		{ "len max", CID, 2, 1, VSOCK_OP_RW, VSOCK_MAX_PAYLOAD + 1,
		  UINT32_MAX, VSOCK_HDR_LEN_MAX },
		{ "len huge", CID, 2, 1, VSOCK_OP_RW, UINT32_MAX, UINT32_MAX,
		  VSOCK_HDR_LEN_MAX },
		{ "len chain", CID, 2, 1, VSOCK_OP_RW, 11, 10,
		  VSOCK_HDR_LEN_CHAIN },
		{ "len ctrl", CID, 2, 1, VSOCK_OP_CREDIT_UPDATE, 1, 1,
		  VSOCK_HDR_LEN_CTRL },
	};
	bool seen[VSOCK_HDR_ERR_COUNT] = { false };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct vsock_hdr h = {
			.src_cid = rows[i].src_cid, .dst_cid = rows[i].dst_cid,
			.type = rows[i].type, .op = rows[i].op,
			.len = rows[i].len,
		};
		enum vsock_hdr_err e = vsock_hdr_check(&h, CID,
						       rows[i].payload);

		if (e != rows[i].want)
			fprintf(stderr, "row %s: %s\n", rows[i].what,
				vsock_hdr_err_str(e));
		CHECK_EQ(e, rows[i].want);
		seen[rows[i].want] = true;
	}
	/* Every error code has a row. */
	for (i = 0; i < VSOCK_HDR_ERR_COUNT; i++)
		CHECK(seen[i]);
	CHECK(!strcmp(vsock_hdr_err_str(VSOCK_HDR_ERR_COUNT), "unknown"));
}

static void test_hdr_codec(void)
{
	struct vsock_hdr h = {
		.src_cid = 0x0102030405060708ull, .dst_cid = 2,
		.src_port = 0xa1a2a3a4, .dst_port = 5, .len = 77, .type = 1,
		.op = 5, .flags = 3, .buf_alloc = 0x40000, .fwd_cnt = 9,
	}, g;
	uint8_t b[VSOCK_HDR_SIZE];

	vsock_hdr_encode(b, &h);
	CHECK_EQ(b[0], 0x08);  /* little-endian */
	CHECK_EQ(b[16], 0xa4);
	CHECK_EQ(b[30], 5);
	vsock_hdr_decode(b, &g);
	CHECK(!memcmp(&h, &g, sizeof(h)));
}

/* ---- the CONNECT line ---- */

static void test_line(void)
{
	static const struct {
		const char *in;
		int want;
		uint32_t port;
		size_t used;
	} rows[] = {
		{ "CONNECT 52\n", 1, 52, 11 },
		{ "CONNECT 0\n", 1, 0, 10 },
		{ "CONNECT 4294967295\n", 1, UINT32_MAX, 19 },
		{ "CONNECT 52\nhello", 1, 52, 11 },   /* data after it stays */
		{ "CONNECT 52", 0, 0, 10 },           /* no newline yet */
		{ "CONNECT 4294967296\n", -EINVAL, 0, 19 }, /* overflow */
		{ "CONNECT 99999999999\n", -EINVAL, 0, 20 }, /* 11 digits */
		{ "CONNECT 5x\n", -EINVAL, 0, 11 },
		{ "CONNECT -1\n", -EINVAL, 0, 11 },
		{ "CONNECT \n", -EINVAL, 0, 9 },
		{ "CONNECT  52\n", -EINVAL, 0, 12 },
		{ "connect 52\n", -EINVAL, 0, 11 },
		{ "CONNECT52\n", -EINVAL, 0, 10 },
		{ "\n", -EINVAL, 0, 1 },
		{ "CONNECT 52\r\n", -EINVAL, 0, 12 },
		{ "CONNECT 000000000000000000000000052\n", -EINVAL, 0,
		  VSOCK_LINE_MAX },                   /* too long */
	};
	size_t i, used;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct vsock_line l = { .len = 0 };
		uint32_t port = 0xdeadbeef;
		int r = vsock_line_feed(&l, rows[i].in, strlen(rows[i].in),
					&used, &port);

		if (r != rows[i].want)
			fprintf(stderr, "line row %zu: %d\n", i, r);
		CHECK_EQ(r, rows[i].want);
		CHECK_EQ(used, rows[i].used);
		if (r == 1)
			CHECK_EQ(port, rows[i].port);
	}
	/* Split across reads, a byte at a time. */
	{
		const char *s = "CONNECT 1234\n";
		struct vsock_line l = { .len = 0 };
		uint32_t port = 0;
		int r = 0;

		for (i = 0; s[i] && r == 0; i++)
			r = vsock_line_feed(&l, s + i, 1, &used, &port);
		CHECK_EQ(r, 1);
		CHECK_EQ(i, strlen(s));
		CHECK_EQ(port, 1234);
	}
	/* Endless bytes without a newline stop at the bound. */
	{
		struct vsock_line l = { .len = 0 };
		char junk[VSOCK_LINE_MAX * 4];
		uint32_t port;
		int r = 0;

		memset(junk, 'A', sizeof(junk));
		for (i = 0; i < 8 && r == 0; i++)
			r = vsock_line_feed(&l, junk, 16, &used, &port);
		CHECK_EQ(r, -EINVAL);
		CHECK(l.len <= VSOCK_LINE_MAX);
	}
}

/* ---- host-initiated ---- */

/* A host program connects and says CONNECT @gport; the guest answers. */
static int host_conn(uint32_t gport, uint32_t *hport)
{
	struct vsock_hdr h;
	char want[32];
	int fd = host_accept();

	snprintf(want, sizeof(want), "CONNECT %u\n", gport);
	host_write(fd, want, 4);
	host_event(fd);
	CHECK(!vsock_core_rx_pending(&vc)); /* half a line */
	host_write(fd, want + 4, strlen(want) - 4);
	host_event(fd);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_REQUEST);
	CHECK_EQ(h.dst_port, gport);
	CHECK(h.src_port >= VSOCK_EPHEMERAL_BASE);
	CHECK_EQ(fs[fd].watch, 0); /* nothing read before the answer */
	*hport = h.src_port;
	guest_op(gport, h.src_port, VSOCK_OP_RESPONSE, 0);
	snprintf(want, sizeof(want), "OK %u\n", h.src_port);
	CHECK_EQ(fs[fd].out_len, strlen(want));
	CHECK(!memcmp(fs[fd].out, want, strlen(want)));
	CHECK_EQ(fs[fd].watch, VSOCK_WATCH_IN);
	fs[fd].out_len = 0;
	return fd;
}

static void test_host_initiated(void)
{
	struct vsock_hdr h;
	uint32_t hp;
	int fd;

	core_new();
	fd = host_conn(52, &hp);
	CHECK_EQ(atomic_load(&vc.stats.conns_host), 1);
	/* host -> guest */
	host_write(fd, "ping", 4);
	host_event(fd);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_RW);
	CHECK_EQ(h.len, 4);
	CHECK_EQ(h.src_port, hp);
	CHECK_EQ(h.dst_port, 52);
	CHECK(!memcmp(rxdata, "ping", 4));
	CHECK(!guest_recv(&h));              /* EAGAIN: nothing more */
	CHECK_EQ(fs[fd].watch, VSOCK_WATCH_IN);
	/* guest -> host */
	h = ghdr(52, hp, VSOCK_OP_RW);
	h.len = 4;
	guest_send(&h, "pong", 4);
	CHECK_EQ(fs[fd].out_len, 4);
	CHECK(!memcmp(fs[fd].out, "pong", 4));
	CHECK_EQ(atomic_load(&vc.stats.tx_bytes), 4);
	CHECK_EQ(atomic_load(&vc.stats.rx_bytes), 4);
	/* The guest closes: SHUTDOWN both ways, we RST and close. */
	guest_op(52, hp, VSOCK_OP_SHUTDOWN,
		 VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	vsock_core_destroy(&vc);
}

static void test_host_refused(void)
{
	uint32_t hp;
	struct vsock_hdr h;
	int fd, fd2;

	core_new();
	/* No listener in the guest: RST closes the host program. */
	fd = host_accept();
	host_write(fd, "CONNECT 9\n", 10);
	host_event(fd);
	CHECK(guest_recv(&h));
	guest_op(9, h.src_port, VSOCK_OP_RST, 0);
	CHECK(!fs[fd].open);
	CHECK_EQ(fs[fd].out_len, 0);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	/* A bad line closes at once, nothing reaches the guest. */
	fd = host_accept();
	host_write(fd, "HELLO\n", 6);
	host_event(fd);
	CHECK(!fs[fd].open);
	CHECK(!vsock_core_rx_pending(&vc));
	CHECK_EQ(atomic_load(&vc.stats.bad_lines), 1);
	/* A host program that leaves before its line. */
	fd = host_accept();
	fs[fd].eof = true;
	host_event(fd);
	CHECK(!fs[fd].open);
	/* A line too long, with no newline. */
	fd = host_accept();
	host_write(fd, "CONNECT 11111111111111111111111111111111", 40);
	host_event(fd);
	CHECK(!fs[fd].open);
	CHECK_EQ(atomic_load(&vc.stats.bad_lines), 2);
	/* A host program that never finishes its line: closed in time. */
	fd = host_accept();
	host_write(fd, "CONN", 4);
	host_event(fd);
	vsock_core_expire(&vc, 1000 + SEC);
	CHECK(fs[fd].open);
	vsock_core_expire(&vc, 1000 + 3 * SEC);
	CHECK(!fs[fd].open);
	CHECK(!vsock_core_rx_pending(&vc));
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	vsock_core_expire(&vc, 1000);
	/* The guest never answers: RST and close after the timeout. */
	fd = host_accept();
	host_write(fd, "CONNECT 7\n", 10);
	host_event(fd);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_REQUEST);
	CHECK(vsock_core_expire(&vc, 1000 + SEC) != 0);
	CHECK(fs[fd].open);
	vsock_core_expire(&vc, 1000 + 3 * SEC);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(atomic_load(&vc.stats.timeouts), 2);
	/* A RESPONSE to a REQUEST never made: RST. */
	guest_op(9, 12345, VSOCK_OP_RESPONSE, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	/* Host EOF: SHUTDOWN to the guest, its RST frees the slot. */
	fd2 = host_conn(80, &hp);
	fs[fd2].eof = true;
	host_event(fd2);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_SHUTDOWN);
	CHECK_EQ(h.flags, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	CHECK_EQ(vsock_core_nr_conns(&vc), 1);
	guest_op(80, hp, VSOCK_OP_RST, 0);
	CHECK(!fs[fd2].open);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	CHECK(!guest_recv(&h)); /* no RST for an RST */
	vsock_core_destroy(&vc);
}

/* ---- guest-initiated ---- */

static void test_guest_initiated(void)
{
	struct vsock_hdr h;
	int fd;

	core_new();
	fd = next_fd;
	guest_op(1111, 5000, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(nr_connects, 1);
	CHECK_EQ(connect_port, 5000);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_RESPONSE);
	CHECK_EQ(h.src_port, 5000);
	CHECK_EQ(h.dst_port, 1111);
	CHECK_EQ(fs[fd].watch, VSOCK_WATCH_IN);
	/* A second REQUEST on the live connection: RST. */
	guest_op(1111, 5000, VSOCK_OP_REQUEST, 0);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	/* No listener behind <uds>_<port>: RST. */
	connect_ret = -ECONNREFUSED;
	guest_op(1112, 5001, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	CHECK_EQ(atomic_load(&vc.stats.conns_refused), 1);
	connect_ret = 0;
	/* SHUTDOWN SEND: the host socket's write side closes. */
	fd = next_fd;
	guest_op(1113, 5002, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RESPONSE);
	guest_op(1113, 5002, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND);
	CHECK(fs[fd].shut_wr);
	CHECK(fs[fd].open);
	/* ... and data after it resets. */
	h = ghdr(1113, 5002, VSOCK_OP_RW);
	h.len = 1;
	guest_send(&h, "x", 1);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	/* SHUTDOWN RCV: the host socket is no longer read. */
	fd = next_fd;
	guest_op(1114, 5003, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RESPONSE);
	guest_op(1114, 5003, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_RCV);
	CHECK_EQ(fs[fd].watch, 0);
	host_write(fd, "abc", 3);
	host_event(fd);
	CHECK(!guest_recv(&h));
	/* The guest's RST closes it, with no answer. */
	guest_op(1114, 5003, VSOCK_OP_RST, 0);
	CHECK(!fs[fd].open);
	CHECK(!vsock_core_rx_pending(&vc));
	vsock_core_destroy(&vc);
}

static void test_stray_and_invalid(void)
{
	struct vsock_hdr h;
	unsigned int i;

	core_new();
	/* Data to no connection: RST back, ports swapped. */
	guest_op(10, 20, VSOCK_OP_CREDIT_REQUEST, 0);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK_EQ(h.src_port, 20);
	CHECK_EQ(h.dst_port, 10);
	/* An RST to no connection: nothing. */
	guest_op(10, 20, VSOCK_OP_RST, 0);
	CHECK(!vsock_core_rx_pending(&vc));
	/* Wrong CIDs: dropped and counted, no answer. */
	h = ghdr(10, 20, VSOCK_OP_REQUEST);
	h.src_cid = 7;
	guest_send(&h, NULL, 0);
	h = ghdr(10, 20, VSOCK_OP_REQUEST);
	h.dst_cid = 1;
	guest_send(&h, NULL, 0);
	CHECK(!vsock_core_rx_pending(&vc));
	CHECK_EQ(nr_connects, 0);
	CHECK_EQ(atomic_load(&vc.stats.invalid), 2);
	/* SEQPACKET: RST, no connect. */
	h = ghdr(10, 20, VSOCK_OP_REQUEST);
	h.type = 2;
	guest_send(&h, NULL, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(nr_connects, 0);
	/* A len beyond the chain: RST. */
	h = ghdr(10, 20, VSOCK_OP_RW);
	h.len = 100;
	guest_send(&h, "abc", 3);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(atomic_load(&vc.stats.invalid), 4);
	/* Strays beyond the ring are dropped, counted. */
	for (i = 0; i < VSOCK_STRAY_MAX + 10; i++)
		guest_op(10 + i, 20, VSOCK_OP_CREDIT_UPDATE, 0);
	CHECK_EQ(atomic_load(&vc.stats.stray_dropped), 10);
	for (i = 0; i < VSOCK_STRAY_MAX; i++)
		CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK(!vsock_core_rx_pending(&vc));
	vsock_core_destroy(&vc);
}

/* ---- credit (§5.10.6.3) ---- */

static void test_credit_to_guest(void)
{
	struct vsock_hdr h;
	uint32_t hp, got = 0;
	int fd, k;

	core_new();
	fd = host_conn(52, &hp);
	/* The guest offers 100 bytes of buffer. */
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 100;
	guest_send(&h, NULL, 0);
	for (k = 0; k < 1000; k++)
		host_write(fd, "x", 1);
	host_event(fd);
	while (guest_recv(&h)) {
		CHECK_EQ(h.op, VSOCK_OP_RW);
		got += h.len;
	}
	CHECK_EQ(got, 100);               /* never beyond its credit */
	CHECK_EQ(fs[fd].watch, 0);        /* the socket is not read */
	CHECK(!vsock_core_rx_pending(&vc));
	/* It forwarded 60: 60 more. */
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 100;
	h.fwd_cnt = 60;
	guest_send(&h, NULL, 0);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.len, 60);
	CHECK(!guest_recv(&h));
	/* A hostile fwd_cnt beyond what was sent gives no credit. */
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 100;
	h.fwd_cnt = 0xfffff000u;
	guest_send(&h, NULL, 0);
	CHECK(!guest_recv(&h) || h.len <= 100);
	vsock_core_destroy(&vc);
}

static void test_credit_from_guest(void)
{
	static uint8_t big[VSOCK_MAX_PAYLOAD];
	struct vsock_hdr h;
	uint32_t hp, sent = 0;
	unsigned int i;
	int fd;

	core_new();
	fd = host_conn(52, &hp);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	/* The host program reads nothing: our buffer takes buf_alloc. */
	fs[fd].room = 1000;
	while (sent < VSOCK_BUF_ALLOC) {
		h = ghdr(52, hp, VSOCK_OP_RW);
		h.len = VSOCK_MAX_PAYLOAD;
		guest_send(&h, big, sizeof(big));
		sent += VSOCK_MAX_PAYLOAD;
	}
	CHECK(fs[fd].open);
	CHECK_EQ(fs[fd].out_len, 1000);
	CHECK(fs[fd].watch & VSOCK_WATCH_OUT);
	/* The socket drains: bytes arrive in order, credit comes back. */
	fs[fd].room = SIZE_MAX;
	host_event(fd);
	CHECK_EQ(fs[fd].out_len, VSOCK_BUF_ALLOC);
	for (i = 0; i < VSOCK_BUF_ALLOC; i++)
		if (fs[fd].out[i] != (uint8_t)((i % VSOCK_MAX_PAYLOAD) * 7))
			break;
	CHECK_EQ(i, VSOCK_BUF_ALLOC);
	CHECK(!(fs[fd].watch & VSOCK_WATCH_OUT));
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_CREDIT_UPDATE);
	CHECK_EQ(h.fwd_cnt, VSOCK_BUF_ALLOC);
	/* A CREDIT_REQUEST is answered. */
	guest_op(52, hp, VSOCK_OP_CREDIT_REQUEST, 0);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.op, VSOCK_OP_CREDIT_UPDATE);
	CHECK_EQ(h.fwd_cnt, VSOCK_BUF_ALLOC);
	/* A guest beyond our credit: fill the buffer, one byte more. */
	fs[fd].room = 0;
	fs[fd].out_len = 0;
	for (sent = 0; sent < VSOCK_BUF_ALLOC; sent += VSOCK_MAX_PAYLOAD) {
		h = ghdr(52, hp, VSOCK_OP_RW);
		h.len = VSOCK_MAX_PAYLOAD;
		guest_send(&h, big, sizeof(big));
	}
	CHECK(fs[fd].open);
	h = ghdr(52, hp, VSOCK_OP_RW);
	h.len = 1;
	guest_send(&h, big, 1);
	CHECK(!fs[fd].open);
	CHECK_EQ(atomic_load(&vc.stats.credit_violations), 1);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	vsock_core_destroy(&vc);
}

/* SHUTDOWN both with bytes still buffered: written first, then RST. */
static void test_shutdown_drains(void)
{
	struct vsock_hdr h;
	uint32_t hp;
	int fd;

	core_new();
	fd = host_conn(52, &hp);
	fs[fd].room = 2;
	h = ghdr(52, hp, VSOCK_OP_RW);
	h.len = 5;
	guest_send(&h, "hello", 5);
	guest_op(52, hp, VSOCK_OP_SHUTDOWN,
		 VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	CHECK(fs[fd].open);
	CHECK(!vsock_core_rx_pending(&vc));
	fs[fd].room = SIZE_MAX;
	host_event(fd);
	CHECK_EQ(fs[fd].out_len, 5);
	CHECK(!memcmp(fs[fd].out, "hello", 5));
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	/* A host that never drains: RST after the timeout. */
	fd = host_conn(53, &hp);
	fs[fd].room = 0;
	h = ghdr(53, hp, VSOCK_OP_RW);
	h.len = 5;
	guest_send(&h, "hello", 5);
	guest_op(53, hp, VSOCK_OP_SHUTDOWN,
		 VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	vsock_core_expire(&vc, 1000 + 3 * SEC);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	/* A host socket that fails: RST. */
	fd = host_conn(54, &hp);
	fs[fd].send_err = EPIPE;
	h = ghdr(54, hp, VSOCK_OP_RW);
	h.len = 5;
	guest_send(&h, "hello", 5);
	CHECK(!fs[fd].open);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	vsock_core_destroy(&vc);
}

/* ---- bounds ---- */

static void test_cap_and_ports(void)
{
	static uint32_t ports[VSOCK_MAX_CONNS];
	struct vsock_hdr h;
	unsigned int i, j, dup = 0;
	int fd;

	core_new();
	/* The guest holds the first ephemeral port itself. */
	guest_op(1, VSOCK_EPHEMERAL_BASE, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RESPONSE);
	for (i = 0; i + 1 < VSOCK_MAX_CONNS; i++) {
		char line[32];

		fd = host_accept();
		snprintf(line, sizeof(line), "CONNECT %u\n", 100 + i % 3);
		host_write(fd, line, strlen(line));
		host_event(fd);
		CHECK(guest_recv(&h));
		ports[i] = h.src_port;
	}
	CHECK_EQ(ports[0], VSOCK_EPHEMERAL_BASE + 1);
	for (i = 0; i + 1 < VSOCK_MAX_CONNS; i++)
		for (j = i + 1; j + 1 < VSOCK_MAX_CONNS; j++)
			dup += ports[i] == ports[j];
	CHECK_EQ(dup, 0);
	CHECK_EQ(vsock_core_nr_conns(&vc), VSOCK_MAX_CONNS);
	/* Full: a host program is refused, a guest REQUEST gets RST. */
	CHECK_EQ(vsock_core_host_accept(&vc, 9999), -ENOSPC);
	guest_op(2, 77, VSOCK_OP_REQUEST, 0);
	CHECK_EQ(nr_connects, 1);
	CHECK_EQ(guest_recv_op(), VSOCK_OP_RST);
	CHECK_EQ(atomic_load(&vc.stats.conns_refused), 2);
	/* Reset closes them all. */
	vsock_core_reset(&vc);
	CHECK_EQ(vsock_core_nr_conns(&vc), 0);
	for (i = 3; i < (unsigned int)next_fd; i++)
		CHECK(!fs[i].open);
	CHECK(!vsock_core_rx_pending(&vc));
	/* Port wrap-around stays in the ephemeral range. */
	vc.next_port = UINT32_MAX;
	fd = host_accept();
	host_write(fd, "CONNECT 1\n", 10);
	host_event(fd);
	CHECK(guest_recv(&h));
	CHECK_EQ(h.src_port, UINT32_MAX);
	CHECK_EQ(vc.next_port, VSOCK_EPHEMERAL_BASE);
	vsock_core_destroy(&vc);
}

int main(void)
{
	fs = calloc(NFDS, sizeof(*fs));
	if (!fs)
		return 1;
	test_hdr_check();
	test_hdr_codec();
	test_line();
	test_host_initiated();
	test_host_refused();
	test_guest_initiated();
	test_stray_and_invalid();
	test_credit_to_guest();
	test_credit_from_guest();
	test_shutdown_drains();
	test_cap_and_ports();
	fs_clear();
	free(fs);
	return test_done();
}
