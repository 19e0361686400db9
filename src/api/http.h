/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An incremental, bounded HTTP/1.1 (and 1.0) request parser and a response
 * writer for the API on a Unix socket. Bytes go in as they arrive, split
 * anywhere; one request comes out at a time, and what follows it
 * (pipelining) is left with the caller. Memory is bounded: the head
 * (request line and headers) lives in the parser (HTTP_HEAD_MAX), the body
 * is one allocation of at most the body limit, known from Content-Length
 * before any of it is read.
 *
 * Usage sketch:
 *
 *	http_parser_init(&p, HTTP_BODY_MAX_DEFAULT);
 *	n = http_parser_feed(&p, buf, len);   // consumes n <= len bytes
 *	if (p.state == HTTP_DONE) { use p.req; http_parser_reset(&p); }
 *	if (p.state == HTTP_ERROR) { answer 400 with p.error; close; }
 *	http_parser_free(&p);
 */
#ifndef MICROVM_API_HTTP_H
#define MICROVM_API_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* Request line and headers, CRLFs included. */
#define HTTP_HEAD_MAX 8192
/* Firecracker's default --http-api-max-payload-size. */
#define HTTP_BODY_MAX_DEFAULT 51200
#define HTTP_HEADERS_MAX 64
#define HTTP_METHOD_MAX 16
#define HTTP_ERROR_LEN 160

enum http_state {
	HTTP_HEAD,  /* reading the request line and headers */
	HTTP_BODY,  /* head parsed, reading Content-Length bytes */
	HTTP_DONE,  /* one request complete in .req */
	HTTP_ERROR, /* malformed or over a limit: .error says why */
};

struct http_request {
	const char *method; /* NUL-terminated, inside the parser */
	const char *path;   /* origin-form, no query or fragment */
	char *body;         /* malloc'd, NUL-terminated; NULL if none */
	size_t body_len;
	bool keep_alive;      /* answer, then read the next request */
	bool expect_continue; /* "Expect: 100-continue" with a body */
	int minor;            /* HTTP/1.<minor>: 0 or 1 */
};

struct http_parser {
	size_t max_body;
	enum http_state state;
	size_t head_len;
	size_t body_want;
	struct http_request req;
	char error[HTTP_ERROR_LEN];
	char head[HTTP_HEAD_MAX + 1];
};

/**
 * http_parser_init() - an empty parser waiting for a request line.
 * @p: parser
 * @max_body: largest body accepted, in bytes (HTTP_BODY_MAX_DEFAULT)
 * Context: any thread; the parser is used by one thread at a time.
 */
void http_parser_init(struct http_parser *p, size_t max_body);

/**
 * http_parser_feed() - parse the next bytes of the stream.
 * @p: parser, in state HTTP_HEAD or HTTP_BODY
 * @data: bytes received
 * @len: how many
 *
 * Consumes bytes up to the end of one request (state HTTP_DONE), up to
 * the byte that made it malformed (HTTP_ERROR), or all of them. A parser
 * in HTTP_DONE or HTTP_ERROR consumes nothing until reset.
 *
 * Return: bytes consumed, 0 to @len.
 * Context: the thread that owns @p.
 */
size_t http_parser_feed(struct http_parser *p, const char *data, size_t len);

/**
 * http_parser_reset() - free the request's body and wait for the next.
 * Context: the thread that owns @p.
 */
void http_parser_reset(struct http_parser *p);

/**
 * http_parser_free() - release what the parser holds (its body).
 * Context: the thread that owns @p.
 */
void http_parser_free(struct http_parser *p);

/**
 * http_reason() - the reason phrase of @status ("Bad Request"), or
 * "Unknown" for a code this server does not send.
 */
const char *http_reason(int status);

/**
 * http_response_head() - format a response's status line and headers.
 * @buf: where to write, NUL-terminated
 * @cap: its size (128 bytes are always enough)
 * @status: 100 to 599
 * @body_len: bytes of JSON body that follow (none for 1xx and 204)
 * @keep_alive: false adds "Connection: close"
 *
 * 1xx and 204 carry no Content-Type and no Content-Length (RFC 9110
 * §8.6); every other status carries both, with Content-Type
 * application/json.
 *
 * Return: bytes written, or -1 if @cap is too small.
 * Context: any thread.
 */
int http_response_head(char *buf, size_t cap, int status, size_t body_len,
		       bool keep_alive);

#endif
