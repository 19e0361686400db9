// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the virtio-vsock core (src/virtio/vsock_conn.c,
 * vsock_hdr.c): the input is a script of guest packets (any header, any
 * payload), host programs connecting and writing, sockets that stall,
 * fail or hang up, rx buffers of any size, and time passing. Fake host
 * sockets check the core's promises and abort() when one breaks: never
 * more bytes to the guest than its credit, never a payload beyond the rx
 * buffer or VSOCK_MAX_PAYLOAD, our buffer never beyond VSOCK_BUF_ALLOC and
 * always rx_cnt - fwd_cnt, no socket closed twice or used after close,
 * the table within VSOCK_MAX_CONNS, and after destroy no socket left open.
 */
#include "virtio/vsock_conn.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CID 3
#define NFDS (VSOCK_MAX_CONNS + 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fsock {
	bool open;
	bool eof;
	int err;          /* send and recv fail with it */
	size_t avail;     /* bytes the host program has written */
	size_t room;      /* bytes send may take */
	uint32_t watch;
	const char *line; /* what it says first */
	size_t line_off;
};

static struct fsock fs[NFDS];
static int next_fd;
static bool connect_fails;
static struct vsock_core vc;

/* The script: bytes taken from the front. */
static const uint8_t *in;
static size_t in_len;

static uint8_t take(void)
{
	if (!in_len)
		return 0;
	in_len--;
	return *in++;
}

static uint32_t take32(void)
{
	uint32_t v = take();

	v |= (uint32_t)take() << 8;
	v |= (uint32_t)take() << 16;
	return v | (uint32_t)take() << 24;
}

static struct fsock *sock(int fd)
{
	if (fd < 0 || fd >= NFDS || !fs[fd].open)
		abort(); /* used after close, or never opened */
	return &fs[fd];
}

/* The socket of a send or recv on @fd: the core passes 1 .. VSOCK_MAX_IOV
 * segments. */
static struct fsock *sock_io(int fd, int n)
{
	if (n <= 0 || n > VSOCK_MAX_IOV)
		abort();
	return sock(fd);
}

static int new_fd(void)
{
	int fd;

	if (next_fd >= NFDS)
		return -1;
	fd = next_fd++;
	memset(&fs[fd], 0, sizeof(fs[fd]));
	fs[fd].open = true;
	fs[fd].room = SIZE_MAX;
	return fd;
}

static int f_connect(void *o, uint32_t port, int *fd)
{
	(void)o, (void)port;
	if (connect_fails)
		return -ECONNREFUSED;
	*fd = new_fd();
	return *fd < 0 ? -EMFILE : 0;
}

static ssize_t f_send(void *o, int fd, const struct iovec *iov, int n)
{
	struct fsock *s = sock_io(fd, n);
	size_t total = 0;
	int i;

	(void)o;
	if (s->err)
		return -s->err;
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!total)
		abort(); /* a send of nothing */
	if (total > s->room)
		total = s->room;
	s->room -= total;
	return total ? (ssize_t)total : -EAGAIN;
}

static ssize_t f_recv(void *o, int fd, const struct iovec *iov, int n)
{
	struct fsock *s = sock_io(fd, n);
	size_t done = 0;
	int i;

	(void)o;
	if (s->err)
		return -s->err;
	/* Its CONNECT line first, then bytes of the script. */
	for (i = 0; i < n && s->avail; i++) {
		uint8_t *p = iov[i].iov_base;
		size_t j, m = iov[i].iov_len < s->avail ? iov[i].iov_len :
							  s->avail;

		for (j = 0; j < m; j++)
			p[j] = s->line && s->line[s->line_off] ?
				       (uint8_t)s->line[s->line_off++] :
				       take();
		s->avail -= m;
		done += m;
	}
	if (!done)
		return s->eof ? 0 : -EAGAIN;
	return (ssize_t)done;
}

static void f_watch(void *o, int fd, uint32_t idx, uint32_t ev)
{
	(void)o;
	if (idx >= VSOCK_MAX_CONNS || vc.conns[idx].fd != fd ||
	    ev & ~(VSOCK_WATCH_IN | VSOCK_WATCH_OUT))
		abort();
	sock(fd)->watch = ev;
}

static void f_shut_wr(void *o, int fd)
{
	(void)o;
	sock(fd);
}

static void f_close(void *o, int fd, uint32_t idx)
{
	(void)o;
	if (idx >= VSOCK_MAX_CONNS || vc.conns[idx].fd != fd)
		abort();
	sock(fd)->open = false;
}

static const struct vsock_io_ops ops = {
	.connect = f_connect,
	.send = f_send,
	.recv = f_recv,
	.watch = f_watch,
	.shut_wr = f_shut_wr,
	.close = f_close,
};

static void check_table(void)
{
	unsigned int i, live = 0;

	for (i = 0; i < VSOCK_MAX_CONNS; i++) {
		const struct vsock_conn *c = &vc.conns[i];

		if (c->state == VSOCK_FREE)
			continue;
		live++;
		if (c->buf_len > VSOCK_BUF_ALLOC ||
		    c->buf_len != c->rx_cnt - c->fwd_cnt)
			abort();
		if (c->fd >= 0)
			sock(c->fd);
	}
	if (live != vsock_core_nr_conns(&vc))
		abort();
}

/* A guest packet: header fields from the script, mostly valid CIDs. */
static void do_tx(void)
{
	static uint8_t payload[VSOCK_MAX_PAYLOAD + 16];
	uint8_t b[VSOCK_HDR_SIZE];
	struct vsock_hdr h;
	uint8_t sel = take();
	struct iovec iov[3];
	size_t bytes = (size_t)take() * 300;
	int n = 0;

	h.src_cid = sel & 1 ? take() : CID;
	h.dst_cid = sel & 2 ? take() : VSOCK_HOST_CID;
	h.src_port = sel & 4 ? take32() : take() % 4;
	h.dst_port = sel & 8 ? take32() : VSOCK_EPHEMERAL_BASE + take() % 4;
	h.type = sel & 16 ? take() : VSOCK_TYPE_STREAM;
	h.op = take() % 9;
	h.flags = take() % 4;
	h.len = sel & 32 ? take32() : (uint32_t)bytes;
	h.buf_alloc = sel & 64 ? take32() : (uint32_t)take() * 64;
	h.fwd_cnt = take32();
	if (bytes > sizeof(payload))
		bytes = sizeof(payload);
	if (bytes) {
		/* Three segments, the middle one empty. */
		iov[n++] = (struct iovec){ payload, bytes / 2 };
		iov[n++] = (struct iovec){ payload + bytes / 2, 0 };
		iov[n++] = (struct iovec){ payload + bytes / 2,
					   bytes - bytes / 2 };
	}
	vsock_hdr_encode(b, &h);
	vsock_core_tx(&vc, b, iov, n, bytes);
}

/* One rx buffer of the guest, of a size from the script. */
static void do_rx(void)
{
	static uint8_t buf[VSOCK_MAX_PAYLOAD + 64];
	uint8_t b[VSOCK_HDR_SIZE];
	size_t cap = (size_t)take() * 300;
	struct iovec iov = { buf, cap > sizeof(buf) ? sizeof(buf) : cap };
	struct vsock_hdr h;
	uint32_t len;
	int i;

	if (!vsock_core_rx(&vc, b, &iov, 1, &len))
		return;
	vsock_hdr_decode(b, &h);
	if (h.len != len || len > iov.iov_len || len > VSOCK_MAX_PAYLOAD ||
	    h.src_cid != VSOCK_HOST_CID || h.dst_cid != CID ||
	    h.op < VSOCK_OP_REQUEST || h.op > VSOCK_OP_CREDIT_UPDATE ||
	    (h.op != VSOCK_OP_RW && len))
		abort();
	if (h.op != VSOCK_OP_RW)
		return;
	i = vsock_core_find(&vc, h.src_port, h.dst_port);
	if (i < 0)
		abort(); /* data for no connection */
	/* Within the guest's credit (§5.10.6.3). */
	if (vc.conns[i].tx_cnt - vc.conns[i].peer_fwd_cnt >
	    vc.conns[i].peer_buf_alloc)
		abort();
}

static void do_host(uint8_t op)
{
	int fd = (int)take() % (next_fd ? next_fd : 1);
	static const char *const lines[] = {
		"CONNECT 1\n", "CONNECT 2", "\n", "CONNECT 4294967295\n",
		"CONNECT 99999999999\n", "junk",
	};

	switch (op) {
	case 0: /* a host program connects and says its line */
		fd = new_fd();
		if (fd < 0)
			return;
		if (vsock_core_host_accept(&vc, fd)) {
			fs[fd].open = false;
			return;
		}
		fs[fd].line = lines[take() % 6];
		fs[fd].avail = strlen(fs[fd].line);
		break;
	case 1: /* it writes more */
		if (fd < NFDS && fs[fd].open)
			fs[fd].avail += (size_t)take() * 100;
		break;
	case 2: /* its socket stalls, drains, fails or hangs up */
		if (fd < NFDS && fs[fd].open) {
			uint8_t how = take();

			fs[fd].room = how & 1 ? 0 : SIZE_MAX;
			fs[fd].eof = how & 2;
			fs[fd].err = how & 4 ? EPIPE : 0;
		}
		break;
	default:
		break;
	}
	/* Whatever it was watched for, or not: an event. */
	if (fd >= 0 && fd < NFDS && fs[fd].open) {
		unsigned int i;

		for (i = 0; i < VSOCK_MAX_CONNS; i++)
			if (vc.conns[i].state != VSOCK_FREE &&
			    vc.conns[i].fd == fd)
				vsock_core_host_event(&vc, i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t now = 1;
	unsigned int steps = 0;
	int i;

	in = data;
	in_len = size;
	next_fd = 3;
	connect_fails = false;
	if (vsock_core_init(&vc, CID, &ops, NULL))
		return 0;
	vsock_core_expire(&vc, now);
	while (in_len && steps++ < 1024) {
		uint8_t op = take();

		switch (op % 8) {
		case 0:
		case 1:
			do_tx();
			break;
		case 2:
		case 3:
			do_rx();
			break;
		case 4:
			do_host(take() % 3);
			break;
		case 5:
			now += (uint64_t)take() << 24; /* up to ~4 s */
			vsock_core_expire(&vc, now);
			break;
		case 6:
			connect_fails = take() & 1;
			break;
		default:
			if (take() == 0xff)
				vsock_core_reset(&vc);
			break;
		}
		check_table();
	}
	vsock_core_destroy(&vc);
	for (i = 0; i < NFDS; i++)
		if (fs[i].open && i < next_fd)
			abort(); /* a host socket left open */
	memset(fs, 0, sizeof(fs));
	return 0;
}
