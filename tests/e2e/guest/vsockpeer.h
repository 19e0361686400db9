/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vsockpeer's pieces shared by its two files: the output lines, the byte
 * pattern both ends agree on, and the pump that drives many stream
 * connections at once (send the pattern, read the echo back, check it).
 */
#ifndef VSOCKPEER_H
#define VSOCKPEER_H

#include <stddef.h>
#include <stdint.h>

#include "peer_say.h"

#define PEER_CHUNK (64u << 10)  /* one read or write */
#define PEER_IDLE_MS 30000      /* no progress for this long: a failure */

enum pconn_state { PC_LINE, PC_DATA, PC_DONE, PC_FAIL };

/* One connection that the pump drives. */
struct pconn {
	int fd;                 /* non-blocking stream socket */
	enum pconn_state state; /* PC_LINE: waiting for "OK <n>\n" */
	size_t total;           /* pattern bytes to send and get back */
	size_t sent, got;
	uint32_t seed;          /* pattern of this connection */
	char line[40];          /* the hybrid answer read so far */
	size_t llen;
	unsigned long hostport; /* from "OK <hostport>" */
	char why[160];          /* PC_FAIL: what went wrong */
};


/* pat(seed, off): the pattern byte at offset @off. */
uint8_t pat(uint32_t seed, size_t off);

/* pconn_init: @fd (made non-blocking) will send and check @total bytes;
 * @line: it must read the hybrid "OK <n>\n" answer first. */
void pconn_init(struct pconn *c, int fd, size_t total, uint32_t seed,
		int line);

/* pconn_read_line: read one byte of the hybrid answer "OK <n>\n" on a
 * PC_LINE connection (what follows it is data); PC_DATA after an OK,
 * PC_FAIL after anything else. */
void pconn_read_line(struct pconn *c);

/* pump_run: drive @n connections until each is PC_DONE (the echo back
 * in full and byte-exact) or PC_FAIL; a connection
 * that makes no progress for @idle_ms fails. Return: failures. */
int pump_run(struct pconn *c, int n, int idle_ms);

/* now_ms: a monotonic clock in milliseconds. */
long long now_ms(void);

#endif
