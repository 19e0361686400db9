/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API server's insides, shared by server.c (socket, thread, event
 * loop, accept) and server_conn.c (one connection: read, parse, call the
 * handler, write). Everything here is touched by the control thread only,
 * once api_server_start() returned, until api_server_stop() joined it.
 */
#ifndef MICROVM_API_SERVER_PRIV_H
#define MICROVM_API_SERVER_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "api/http.h"
#include "api/server.h"

/* Bytes read from a connection at a time; the parser copies what it
 * keeps, so this is all that is held of the stream besides it. */
#define API_IN_CHUNK 4096

/* epoll tags: the fixed descriptors, then one per connection slot. */
enum {
	API_TAG_LISTEN,
	API_TAG_STOP,
	API_TAG_TICK,
	API_TAG_CONN0,
};

struct api_conn {
	int fd;
	unsigned int slot;
	uint32_t events;       /* what epoll waits for now */
	bool closing;          /* close once the answer is written */
	bool eof;              /* the client shut its side */
	bool continue_sent;    /* "100 Continue" queued for this request */
	uint64_t deadline_ms;  /* CLOCK_MONOTONIC: closed after this */
	char *out;             /* the answer being written, malloc'd */
	size_t out_len, out_off;
	size_t in_len, in_off; /* received bytes not yet parsed */
	char in[API_IN_CHUNK];
	struct http_parser parser;
};

struct api_server {
	int listen_fd, epoll_fd, stop_fd, tick_fd;
	bool started, listen_paused;
	uint64_t listen_retry_ms; /* accept again after fd exhaustion */
	api_handler_fn *fn;
	void *opaque;
	unsigned int tick_ms;
	void (*tick)(void *opaque);
	size_t max_body;
	unsigned int idle_ms;
	unsigned int nr_conns;
	pthread_t thread;
	struct api_conn *conn[API_MAX_CONNS];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* CLOCK_MONOTONIC in ms. */
uint64_t api_now_ms(void);

/* A new connection on @fd in a free slot; closes @fd on failure. */
void api_conn_add(struct api_server *s, int fd);

/* epoll reported @events on @c. */
void api_conn_event(struct api_server *s, struct api_conn *c,
		    uint32_t events);

/* Close @c and free its slot. */
void api_conn_close(struct api_server *s, struct api_conn *c);

#endif
