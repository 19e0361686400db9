/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API server: HTTP/1.1 on a Unix socket, served by one control thread
 * (seccomp class CONFINE_CONTROL) that calls one handler per complete
 * request, one request at a time. HTTP-level errors (malformed, over a
 * limit) are answered here with 400 and {"fault_message": "..."}; what a
 * method on a path means is the handler's business.
 *
 * Usage sketch (main thread):
 *
 *	api_server_open(&s, "/run/vm.sock", handle, vmm, 0, NULL, err, len);
 *	confine_control_listen_fd(api_server_listen_fd(s));
 *	confine_prepare(...);
 *	api_server_start(s);      // the thread confines itself first thing
 *	...
 *	api_server_stop(s);       // join, close every fd, unlink the path
 *	api_server_free(s);
 */
#ifndef MICROVM_API_SERVER_H
#define MICROVM_API_SERVER_H

#include <stddef.h>

struct api_server;

struct api_request {
	const char *method; /* "GET", "PUT", "PATCH", ... NUL-terminated */
	const char *path;   /* "/drives/rootfs" (no query string) */
	const char *body;   /* NUL-terminated copy, may contain NULs; NULL
			     * if none */
	size_t body_len;
};

struct api_response {
	int status; /* 200, 204, 400, 404, 405, 500 ... */
	char *body; /* malloc'd JSON or NULL (no body); the server frees */
};

typedef void api_handler_fn(void *opaque, const struct api_request *req,
			    struct api_response *resp);

/* Most connections served at once; more wait in the listen backlog. */
#define API_MAX_CONNS 16
/* A connection with no complete request for this long is closed. */
#define API_IDLE_MS_DEFAULT 30000

/**
 * api_server_open() - make, bind and listen on the Unix socket, and the
 * descriptors the control thread will wait on. Fails, as Firecracker
 * does, when @sock_path exists.
 * @out: the new server
 * @sock_path: where to bind (shorter than sun_path)
 * @fn: the handler, called on the control thread for each request
 * @opaque: passed to @fn and @tick
 * @tick_ms: period of @tick in ms, 0 for none
 * @tick: called on the control thread every @tick_ms, or NULL
 * @err/@errlen: one line naming the bad value on failure
 * Return: 0 or -errno.
 * Context: main thread, before confine_prepare() (it makes a socket).
 */
int api_server_open(struct api_server **out, const char *sock_path,
		    api_handler_fn *fn, void *opaque,
		    unsigned int tick_ms, void (*tick)(void *opaque),
		    char *err, size_t errlen);

/**
 * api_server_set_limits() - change the defaults before start.
 * @max_body: largest request body (HTTP_BODY_MAX_DEFAULT), at least 1
 * @idle_ms: how long a connection may go without completing a request
 *	or taking its answer (API_IDLE_MS_DEFAULT), at least 1
 * Context: main thread, before api_server_start().
 */
void api_server_set_limits(struct api_server *s, size_t max_body,
			   unsigned int idle_ms);

/**
 * api_server_listen_fd() - the listening socket, for
 * confine_control_listen_fd().
 * Context: any thread.
 */
int api_server_listen_fd(const struct api_server *s);

/**
 * api_server_start() - start the control thread.
 * Return: 0 or -errno.
 * Context: main thread, once, after api_server_open().
 */
int api_server_start(struct api_server *s);

/**
 * api_server_stop() - end the control thread (an answer being written is
 * abandoned), close every connection and the socket, unlink its path.
 * Safe to call when never started and more than once. The unlink is a
 * call by path: a caller already under a seccomp filter must be allowed
 * unlink (CONFINE_MAIN as built today is not).
 * Context: main thread; not from the handler.
 */
void api_server_stop(struct api_server *s);

/**
 * api_server_keep_path() - leave the socket file in place at stop: for a
 * caller whose thread may no longer unlink (confined), as Firecracker
 * leaves its socket behind for whoever started it to remove.
 */
void api_server_keep_path(struct api_server *s);

/**
 * api_server_free() - stop if needed, then free @s (NULL is fine).
 * Context: main thread.
 */
void api_server_free(struct api_server *s);

/**
 * api_response_fault() - set @r to @status with the body
 * {"fault_message": "<formatted text>"}, JSON-escaped.
 * Context: any thread.
 */
void api_response_fault(struct api_response *r, int status, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));

/**
 * api_response_json() - set @r to @status with @malloced_json as its body
 * (the server frees it; NULL for no body).
 * Context: any thread.
 */
void api_response_json(struct api_response *r, int status,
		       char *malloced_json);

#endif
