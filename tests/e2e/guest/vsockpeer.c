// SPDX-License-Identifier: Apache-2.0
/*
 * vsockpeer: both ends of e2e.vsock.hybrid (vsock-test.sh). In the guest
 * it speaks AF_VSOCK; where microvm runs it speaks microvm's hybrid vsock
 * on Unix sockets (write "CONNECT <port>\n", read "OK <hostport>\n", then
 * the stream; the guest's connections to host port P arrive at a listener
 * on <uds>_P). Data is a pattern both ends know, echoed back and checked
 * byte by byte (vsockpeer_pump.c). Each check prints one line
 * "VSOCK-CHECK: ok|FAIL what"; every wait is bounded.
 *
 * Guest (AF_VSOCK):
 *   listen PORT            echo every connection (a child each), ~15 min
 *   stall PORT             accept connections and never read them
 *   wait PORT SECONDS      accept one connection, close it, exit 0
 *   connect CID PORT BYTES send BYTES, check the echo
 *   cid                    check nothing, print the local CID
 * Host (Unix sockets):
 *   hlisten PATH           echo every connection on a listener at PATH
 *   hwait UDS PORT SECONDS CONNECT until the guest answers OK
 *   hconnect UDS PORT BYTES   CONNECT (up to 5 tries), send BYTES, check
 *                          the echo
 *   hmany UDS PORT N BYTES    N such connections at once (one try each)
 *   hstall UDS PORT HOLD   CONNECT (up to 5 tries), write until the socket stays blocked
 *                          2 s, print the bytes it took, hold HOLD s
 *   hping UDS PORT N SIZE  CONNECT, then N round trips of SIZE bytes
 *                          through the guest's echo: the mean (for the
 *                          benchmark, tests/bench/vsock-bench.sh)
 * A UDS of "cid:N" is the host side of engine=vhost instead: AF_VSOCK
 * straight to the guest's CID N, no CONNECT line and no OK (the kernel's
 * vhost_vsock carries the stream); the host's own listener for the
 * guest's connections is then "listen PORT" as in the guest.
 * Exit: 0 when the checks passed, 1 when one failed, 2 usage.
 */
#include "vsockpeer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define LISTEN_LIFETIME_MS (900 * 1000)
#define STALL_BLOCKED_MS 2000
#define STALL_MAX ((size_t)64 << 20)
#define MANY_MAX 1024
#define HANDSHAKE_TRIES 5

static int usage(void)
{
	fprintf(stderr,
		"usage: vsockpeer listen|stall PORT | wait PORT SECONDS |\n"
		"       connect CID PORT BYTES | cid | hlisten PATH |\n"
		"       hwait UDS PORT SECONDS | hconnect UDS PORT BYTES |\n"
		"       hmany UDS PORT N BYTES | hstall UDS PORT HOLD |\n"
		"       hping UDS PORT N SIZE\n");
	return 2;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "vsockpeer: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int vsock_listener(unsigned int port)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK,
				  .svm_cid = VMADDR_CID_ANY,
				  .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 128)) {
		say("VSOCK-CHECK: FAIL vsock listener on port %u: %s", port,
		    strerror(errno));
		exit(1);
	}
	return fd;
}

static int unix_listener(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 128)) {
		say("VSOCK-CHECK: FAIL unix listener at %s: %s", path,
		    strerror(errno));
		exit(1);
	}
	return fd;
}

/* Wait up to @ms for a connection on @lfd: its fd, or -1. */
static int accept_within(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, ms) <= 0)
		return -1;
	return accept(lfd, NULL, NULL);
}

/* One echo connection, in its own child: read, write it all back. */
static void echo_one(int fd, const char *name)
{
	static char buf[PEER_CHUNK];
	struct pollfd p = { .fd = fd };
	size_t total = 0;

	for (;;) {
		ssize_t r, off = 0;

		p.events = POLLIN;
		if (poll(&p, 1, PEER_IDLE_MS) <= 0) {
			say("VSOCK-ECHO: %s FAIL idle after %zu bytes", name,
			    total);
			_exit(1);
		}
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				say("VSOCK-ECHO: %s FAIL read after %zu bytes: %s",
				    name, total, strerror(errno));
			break;
		}
		while (off < r) {
			ssize_t w = write(fd, buf + off, (size_t)(r - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				say("VSOCK-ECHO: %s FAIL write after %zu bytes: %s",
				    name, total, strerror(errno));
				_exit(1);
			}
			off += w;
		}
		total += (size_t)r;
	}
	shutdown(fd, SHUT_WR);
	if (total >= (1u << 20))
		say("VSOCK-ECHO: %s echoed %zu bytes", name, total);
	_exit(0);
}

/* Echo every connection on @lfd until the lifetime ends. */
static int serve_echo(int lfd, const char *name)
{
	long long end = now_ms() + LISTEN_LIFETIME_MS;

	signal(SIGCHLD, SIG_IGN);
	say("VSOCK-PEER: %s listening", name);
	while (now_ms() < end) {
		int fd = accept_within(lfd, 1000);
		pid_t pid;

		if (fd < 0)
			continue;
		pid = fork();
		if (pid == 0) {
			close(lfd);
			echo_one(fd, name);
		}
		if (pid < 0)
			say("VSOCK-ECHO: %s FAIL fork: %s", name,
			    strerror(errno));
		close(fd);
	}
	return 0;
}

/* Accept connections on @lfd and never read them. */
static int serve_stall(int lfd, const char *name)
{
	long long end = now_ms() + LISTEN_LIFETIME_MS;
	int n = 0;

	say("VSOCK-PEER: %s listening (never reads)", name);
	while (now_ms() < end) {
		int fd = accept_within(lfd, 1000);

		if (fd < 0)
			continue;
		say("VSOCK-PEER: %s accepted connection %d", name, ++n);
		/* Kept open, unread, until this process ends. */
	}
	return 0;
}

static int wait_one(unsigned int port, int seconds)
{
	int lfd = vsock_listener(port);
	int fd = accept_within(lfd, seconds * 1000);

	if (fd < 0) {
		say("VSOCK-CHECK: FAIL no connection on port %u in %d s", port,
		    seconds);
		return 1;
	}
	say("VSOCK-PEER: port %u: the host's connection came", port);
	close(fd);
	return 0;
}

/* An AF_VSOCK stream to @cid:@port, non-blocking; -1 (why in @err). */
static int vsock_open(unsigned int cid, unsigned int port, char *err,
		      size_t errlen)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_cid = cid,
				  .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	/* The kernel bounds the handshake: 2 s by default. */
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "connect to cid %u port %u: %s", cid,
			 port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	set_nonblock(fd);
	return fd;
}

static int vsock_connect(unsigned int cid, unsigned int port)
{
	char err[160];
	int fd = vsock_open(cid, port, err, sizeof(err));

	if (fd < 0)
		say("VSOCK-CHECK: FAIL %s", err);
	return fd;
}

/* "cid:N": the guest's CID for a host program on engine=vhost; else 0. */
static unsigned int direct_cid(const char *uds)
{
	return strncmp(uds, "cid:", 4) ? 0 : (unsigned int)num(uds + 4);
}

static int guest_connect(unsigned int cid, unsigned int port, size_t bytes)
{
	long long t0 = now_ms();
	struct pconn c;
	int fd = vsock_connect(cid, port);

	if (fd < 0)
		return 1;
	pconn_init(&c, fd, bytes, port, 0);
	if (pump_run(&c, 1, PEER_IDLE_MS)) {
		say("VSOCK-CHECK: FAIL connect cid %u port %u: %s", cid, port,
		    c.why);
		return 1;
	}
	say("VSOCK-CHECK: ok connect cid %u port %u: %zu bytes echoed byte-exact in %lld ms",
	    cid, port, bytes, now_ms() - t0);
	close(fd);
	return 0;
}

static int local_cid(void)
{
	unsigned int cid = 0;
	int fd = open("/dev/vsock", O_RDONLY);

	if (fd < 0 || ioctl(fd, IOCTL_VM_SOCKETS_GET_LOCAL_CID, &cid)) {
		say("VSOCK-PEER: cid unknown: %s", strerror(errno));
		return 1;
	}
	printf("%u\n", cid);
	return 0;
}

/* Connect to microvm's socket and say CONNECT (a "cid:N" @uds: to the
 * guest over AF_VSOCK); -1 (why in @err). */
static int hybrid_open(const char *uds, unsigned int port, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	char line[32];
	int fd, n;

	if (direct_cid(uds))
		return vsock_open(direct_cid(uds), port, err, errlen);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", uds);
	/* A full backlog makes connect() wait: SO_SNDTIMEO bounds it. */
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "connect %s: %s", uds, strerror(errno));
		goto err_close;
	}
	/* Exactly what Kata's agent client writes. */
	n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	if (write(fd, line, (size_t)n) != n) {
		snprintf(err, errlen, "writing CONNECT: %s", strerror(errno));
		goto err_close;
	}
	set_nonblock(fd);
	return fd;
err_close:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Read the answer to CONNECT on @fd within @ms: 0 when it was OK (or,
 * for a "cid:N" @uds, at once: no answer comes). */
static int hybrid_answer(const char *uds, int fd, int ms, char *err,
			 size_t errlen)
{
	struct pconn c;

	if (direct_cid(uds))
		return 0;
	pconn_init(&c, fd, 0, 0, 1);
	while (c.state == PC_LINE) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, ms) <= 0) {
			snprintf(err, errlen, "no answer in %d ms", ms);
			return -1;
		}
		pconn_read_line(&c);
	}
	if (c.state == PC_FAIL) {
		snprintf(err, errlen, "%s", c.why);
		return -1;
	}
	return 0;
}

/*
 * CONNECT and its OK, tried up to HANDSHAKE_TRIES times: microvm, as
 * Firecracker, gives the guest 2 s to answer a request, which a guest
 * under emulation busy closing other connections may miss. The fd, or
 * -1 (why in @err); @tries: how many it took.
 */
static int hybrid_handshake(const char *uds, unsigned int port, int *tries,
			    char *err, size_t errlen)
{
	for (*tries = 1; *tries <= HANDSHAKE_TRIES; ++*tries) {
		int fd = hybrid_open(uds, port, err, errlen);

		if (fd >= 0 && !hybrid_answer(uds, fd, 10000, err, errlen))
			return fd;
		if (fd >= 0)
			close(fd);
		poll(NULL, 0, 250);
	}
	*tries = HANDSHAKE_TRIES;
	return -1;
}

static int host_many(const char *uds, unsigned int port, int n, size_t bytes)
{
	long long t0 = now_ms();
	struct pconn *c = calloc((size_t)n, sizeof(*c));
	int i, fails, bad = -1, tries = 1;
	char err[160];

	if (!c)
		return 1;
	/* One connection: its handshake first, retried; many: all at once,
	 * each answer read in the pump. */
	for (i = 0; i < n; i++) {
		int fd = n == 1 ?
			 hybrid_handshake(uds, port, &tries, err, sizeof(err)) :
			 hybrid_open(uds, port, err, sizeof(err));

		if (fd < 0) {
			say("VSOCK-CHECK: FAIL hconnect port %u, connection %d of %d (%d tries): %s",
			    port, i + 1, n, tries, err);
			return 1;
		}
		pconn_init(&c[i], fd, bytes, port * 1000 + (uint32_t)i,
			   n > 1 && !direct_cid(uds));
	}
	fails = pump_run(c, n, PEER_IDLE_MS);
	for (i = 0; i < n; i++)
		if (c[i].state != PC_DONE && bad < 0)
			bad = i;
	if (fails) {
		say("VSOCK-CHECK: FAIL hconnect port %u: %d of %d connections failed, connection %d: %s",
		    port, fails, n, bad + 1, c[bad].why);
		return 1;
	}
	say("VSOCK-CHECK: ok hconnect port %u: %d connection(s) %s%s (%d tries), %zu bytes each echoed byte-exact in %lld ms",
	    port, n, direct_cid(uds) ? "connected" : "answered OK <port>",
	    n > 1 ? " at once" : "", tries, bytes, now_ms() - t0);
	for (i = 0; i < n; i++)
		close(c[i].fd);
	free(c);
	return 0;
}

/* Read or write exactly @len bytes of @buf on non-blocking @fd, each
 * wait bounded: 0, or -1. */
static int xfer_all(int fd, uint8_t *buf, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd p = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		ssize_t r = out ? write(fd, buf + done, len - done) :
				  read(fd, buf + done, len - done);

		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
		if (poll(&p, 1, PEER_IDLE_MS) <= 0)
			return -1;
	}
	return 0;
}

static int host_ping(const char *uds, unsigned int port, long n, size_t size)
{
	static uint8_t out[PEER_CHUNK], in[PEER_CHUNK];
	char err[160];
	long long t0;
	long i;
	int tries, fd;

	if (!size || size > sizeof(out) || n < 1) {
		say("VSOCK-CHECK: FAIL hping: SIZE 1 to %zu, N at least 1",
		    sizeof(out));
		return 1;
	}
	fd = hybrid_handshake(uds, port, &tries, err, sizeof(err));
	if (fd < 0) {
		say("VSOCK-CHECK: FAIL hping port %u: %s", port, err);
		return 1;
	}
	for (i = 0; i < (long)size; i++)
		out[i] = pat((uint32_t)port, (size_t)i);
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if (xfer_all(fd, out, size, true) ||
		    xfer_all(fd, in, size, false) || memcmp(in, out, size)) {
			say("VSOCK-CHECK: FAIL hping port %u: round trip %ld",
			    port, i + 1);
			close(fd);
			return 1;
		}
	}
	say("VSOCK-BENCH: hping port %u: %ld round trips of %zu bytes, mean %lld us",
	    port, n, size, (now_ms() - t0) * 1000 / n);
	close(fd);
	return 0;
}

static int host_wait(const char *uds, unsigned int port, int seconds)
{
	long long t0 = now_ms(), end = t0 + seconds * 1000LL;
	char err[160] = "no try";
	int tries = 0;

	while (now_ms() < end) {
		int fd = hybrid_open(uds, port, err, sizeof(err));

		tries++;
		if (fd >= 0) {
			int ok = !hybrid_answer(uds, fd, 3000, err,
						sizeof(err));

			close(fd);
			if (ok) {
				say("VSOCK-CHECK: ok hwait port %u: the guest answered OK after %d tries, %lld ms",
				    port, tries, now_ms() - t0);
				return 0;
			}
		}
		poll(NULL, 0, 250);
	}
	say("VSOCK-CHECK: FAIL hwait port %u: no OK in %d s (%d tries, last: %s)",
	    port, seconds, tries, err);
	return 1;
}

static int host_stall(const char *uds, unsigned int port, int hold)
{
	static uint8_t buf[PEER_CHUNK];
	size_t took = 0;
	char err[160];
	int tries, waited = 0;
	int fd = hybrid_handshake(uds, port, &tries, err, sizeof(err));

	if (fd < 0) {
		say("VSOCK-CHECK: FAIL hstall port %u (%d tries): %s", port,
		    tries, err);
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	/* POLLOUT on a Unix socket means a quarter of its send buffer is
	 * free: write until EAGAIN, and stop when 2 s of waiting freed no
	 * room at all. */
	while (took < STALL_MAX) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t w = write(fd, buf, sizeof(buf));

		if (w > 0) {
			took += (size_t)w;
			waited = 0;
			continue;
		}
		if (w == 0 || (errno != EAGAIN && errno != EINTR)) {
			say("VSOCK-CHECK: FAIL hstall port %u: write after %zu bytes: %s",
			    port, took, w ? strerror(errno) : "wrote nothing");
			return 1;
		}
		if (waited)
			break;
		waited = poll(&p, 1, STALL_BLOCKED_MS) == 0;
		if (p.revents & (POLLERR | POLLHUP)) {
			say("VSOCK-CHECK: FAIL hstall port %u: the connection ended after %zu bytes",
			    port, took);
			return 1;
		}
	}
	if (took >= STALL_MAX) {
		say("VSOCK-CHECK: FAIL hstall port %u: still writing after %zu bytes",
		    port, took);
		return 1;
	}
	say("VSOCK-STALL: port %u accepted %zu bytes, then blocked %d ms",
	    port, took, STALL_BLOCKED_MS);
	poll(NULL, 0, hold * 1000);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	char name[160];

	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(m, "listen") && argc == 3) {
		snprintf(name, sizeof(name), "vsock port %s", argv[2]);
		return serve_echo(vsock_listener((unsigned int)num(argv[2])),
				  name);
	}
	if (!strcmp(m, "stall") && argc == 3) {
		snprintf(name, sizeof(name), "vsock port %s", argv[2]);
		return serve_stall(vsock_listener((unsigned int)num(argv[2])),
				   name);
	}
	if (!strcmp(m, "wait") && argc == 4)
		return wait_one((unsigned int)num(argv[2]), (int)num(argv[3]));
	if (!strcmp(m, "connect") && argc == 5)
		return guest_connect((unsigned int)num(argv[2]),
				     (unsigned int)num(argv[3]), num(argv[4]));
	if (!strcmp(m, "cid") && argc == 2)
		return local_cid();
	if (!strcmp(m, "hlisten") && argc == 3) {
		snprintf(name, sizeof(name), "unix %s", argv[2]);
		return serve_echo(unix_listener(argv[2]), name);
	}
	if (!strcmp(m, "hwait") && argc == 5)
		return host_wait(argv[2], (unsigned int)num(argv[3]),
				 (int)num(argv[4]));
	if (!strcmp(m, "hconnect") && argc == 5)
		return host_many(argv[2], (unsigned int)num(argv[3]), 1,
				 num(argv[4]));
	if (!strcmp(m, "hmany") && argc == 6 && num(argv[4]) >= 1 &&
	    num(argv[4]) <= MANY_MAX)
		return host_many(argv[2], (unsigned int)num(argv[3]),
				 (int)num(argv[4]), num(argv[5]));
	if (!strcmp(m, "hping") && argc == 6)
		return host_ping(argv[2], (unsigned int)num(argv[3]),
				 (long)num(argv[4]), num(argv[5]));
	if (!strcmp(m, "hstall") && argc == 5)
		return host_stall(argv[2], (unsigned int)num(argv[3]),
				  (int)num(argv[4]));
	return usage();
}
