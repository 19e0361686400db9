// SPDX-License-Identifier: Apache-2.0
/*
 * vsockpeer's pump: many non-blocking stream connections in one poll()
 * loop. Each one optionally reads the hybrid vsock answer "OK <n>\n"
 * first, then sends its pattern while it reads the echo back and checks
 * every byte; it is done with the last byte back. No half-close: like
 * Firecracker's, microvm's hybrid side takes a host socket's end of file
 * for the host program's leaving (SHUTDOWN both ways to the guest).
 * Nothing waits longer than the idle limit.
 */
#include "vsockpeer.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint8_t pat(uint32_t seed, size_t off)
{
	uint32_t x = (uint32_t)off * 2654435761u + seed * 40503u + 0x9e37u;

	x ^= x >> 15;
	return (uint8_t)(x ^ (uint32_t)(off >> 12));
}

void pconn_init(struct pconn *c, int fd, size_t total, uint32_t seed,
		int line)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->total = total;
	c->seed = seed;
	c->state = line ? PC_LINE : total ? PC_DATA : PC_DONE;
}

static void pc_fail(struct pconn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pc_fail(struct pconn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	c->state = PC_FAIL;
}

void pconn_read_line(struct pconn *c)
{
	char ch, tail;
	ssize_t r = read(c->fd, &ch, 1);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r < 0) {
		pc_fail(c, "reading the answer to CONNECT: %s",
			strerror(errno));
		return;
	}
	if (r == 0) {
		pc_fail(c, "closed before answering CONNECT (got '%.*s')",
			(int)c->llen, c->line);
		return;
	}
	if (ch != '\n') {
		if (c->llen + 1 >= sizeof(c->line)) {
			pc_fail(c, "answer to CONNECT longer than %zu bytes",
				sizeof(c->line) - 1);
			return;
		}
		c->line[c->llen++] = ch;
		return;
	}
	c->line[c->llen] = '\0';
	if (sscanf(c->line, "OK %lu%c", &c->hostport, &tail) != 1 ||
	    strncmp(c->line, "OK ", 3) || c->line[3] < '0' ||
	    c->line[3] > '9') {
		pc_fail(c, "answer to CONNECT is '%s', want 'OK <port>'",
			c->line);
		return;
	}
	c->state = PC_DATA;
}

static void pc_write(struct pconn *c)
{
	static uint8_t buf[PEER_CHUNK];
	size_t n = c->total - c->sent, i;
	ssize_t r;

	if (n > sizeof(buf))
		n = sizeof(buf);
	for (i = 0; i < n; i++)
		buf[i] = pat(c->seed, c->sent + i);
	r = write(c->fd, buf, n);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		pc_fail(c, "write after %zu bytes: %s", c->sent,
			r ? strerror(errno) : "wrote nothing");
		return;
	}
	c->sent += (size_t)r;
}

static void pc_read(struct pconn *c)
{
	static uint8_t buf[PEER_CHUNK];
	ssize_t r = read(c->fd, buf, sizeof(buf));
	size_t i;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r < 0) {
		pc_fail(c, "read after %zu of %zu bytes back: %s", c->got,
			c->total, strerror(errno));
		return;
	}
	if (r == 0) {
		pc_fail(c, "end of file after %zu of %zu bytes back", c->got,
			c->total);
		return;
	}
	if ((size_t)r > c->total - c->got) {
		pc_fail(c, "%zd bytes back past %zu of %zu", r, c->got,
			c->total);
		return;
	}
	for (i = 0; i < (size_t)r; i++) {
		uint8_t want = pat(c->seed, c->got + i);

		if (buf[i] != want) {
			pc_fail(c, "byte %zu back is 0x%02x, want 0x%02x",
				c->got + i, buf[i], want);
			return;
		}
	}
	c->got += (size_t)r;
	if (c->got == c->total)
		c->state = PC_DONE;
}

static void pc_event(struct pconn *c, short revents)
{
	if (c->state == PC_LINE) {
		if (revents & (POLLIN | POLLHUP | POLLERR))
			pconn_read_line(c);
		if (c->state == PC_DATA && !c->total)
			c->state = PC_DONE;
		return;
	}
	if ((revents & POLLOUT) && c->sent < c->total)
		pc_write(c);
	if (c->state == PC_DATA && (revents & (POLLIN | POLLHUP | POLLERR)))
		pc_read(c);
}

int pump_run(struct pconn *c, int n, int idle_ms)
{
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	int *map = calloc((size_t)n, sizeof(*map));
	long long last = now_ms();
	int i, live, fails = 0;

	if (!pfd || !map) {
		for (i = 0; i < n; i++)
			if (c[i].state < PC_DONE)
				pc_fail(&c[i], "out of memory");
		live = 0;
	}
	for (;;) {
		size_t before = 0, after = 0;

		live = 0;
		for (i = 0; pfd && i < n; i++) {
			if (c[i].state >= PC_DONE)
				continue;
			pfd[live].fd = c[i].fd;
			pfd[live].events = POLLIN;
			if (c[i].state == PC_DATA && c[i].sent < c[i].total)
				pfd[live].events |= POLLOUT;
			pfd[live].revents = 0;
			map[live++] = i;
			before += c[i].sent + c[i].got + c[i].llen;
		}
		if (!live)
			break;
		if (poll(pfd, (nfds_t)live, 1000) < 0 && errno != EINTR) {
			for (i = 0; i < live; i++)
				pc_fail(&c[map[i]], "poll: %s", strerror(errno));
			continue;
		}
		for (i = 0; i < live; i++) {
			struct pconn *p = &c[map[i]];

			if (pfd[i].revents)
				pc_event(p, pfd[i].revents);
			after += p->sent + p->got + p->llen;
			if (p->state >= PC_DONE)
				after++; /* finishing is progress */
		}
		if (after != before) {
			last = now_ms();
		} else if (now_ms() - last > idle_ms) {
			for (i = 0; i < live; i++) {
				struct pconn *p = &c[map[i]];

				pc_fail(p, "no progress for %d s (sent %zu, got %zu back of %zu)",
					idle_ms / 1000, p->sent, p->got,
					p->total);
			}
		}
	}
	for (i = 0; i < n; i++)
		fails += c[i].state != PC_DONE;
	free(pfd);
	free(map);
	return fails;
}
