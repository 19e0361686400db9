// SPDX-License-Identifier: Apache-2.0
/*
 * The API's HTTP/1.x request parser and response writer (RFC 9112), fed
 * byte ranges as they arrive. The head is gathered into a fixed buffer and
 * parsed once its empty line arrives; the body is read into one allocation
 * whose size Content-Length announced and the limit bounded beforehand.
 *
 * Why our own parser rather than libmicrohttpd or http-parser: microvm
 * links statically by default, and libmicrohttpd brings its own threads,
 * TLS hooks and a much larger set of system calls for the control
 * thread's seccomp filter to allow; http-parser is only a tokenizer, the
 * buffering and limits would still be ours. The subset the API needs
 * (one request at a time on a Unix socket, Content-Length bodies of at
 * most 51200 bytes) is a few hundred lines whose memory is bounded by
 * construction and which the fuzzer covers whole (tests/fuzz/fuzz_http.c).
 *
 * Every malformed request, and every request over a limit, is an error
 * the server answers with 400, as Firecracker's server does for all of
 * them, its oversized payloads included (it does not send 413).
 */
#include "api/http.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(struct http_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record why the request is refused; returns -1 for the caller to pass on. */
static int fail(struct http_parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	p->state = HTTP_ERROR;
	return -1;
}

void http_parser_init(struct http_parser *p, size_t max_body)
{
	memset(p, 0, sizeof(*p) - sizeof(p->head));
	p->head[0] = '\0';
	p->max_body = max_body;
	p->state = HTTP_HEAD;
}

void http_parser_reset(struct http_parser *p)
{
	http_parser_free(p);
	http_parser_init(p, p->max_body);
}

void http_parser_free(struct http_parser *p)
{
	free(p->req.body);
	p->req.body = NULL;
}

/* RFC 9110 §5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return true;
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

/* Field value characters: VCHAR, SP, HTAB and obs-text (RFC 9110 §5.5). */
static bool is_field_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* The request target: visible ASCII and obs-text, no space. */
static bool is_target_char(unsigned char c)
{
	return c > 0x20 && c != 0x7f;
}

static int parse_request_line(struct http_parser *p, char *line)
{
	char *sp1 = strchr(line, ' '), *sp2, *target, *end;
	size_t i, mlen;

	if (!sp1)
		return fail(p, "malformed request line");
	mlen = (size_t)(sp1 - line);
	if (!mlen || mlen > HTTP_METHOD_MAX)
		return fail(p, "invalid HTTP method");
	for (i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)line[i]))
			return fail(p, "invalid HTTP method");
	*sp1 = '\0';
	target = sp1 + 1;
	sp2 = strchr(target, ' ');
	if (!sp2 || sp2 == target)
		return fail(p, "malformed request line");
	*sp2 = '\0';
	for (end = target; *end; end++)
		if (!is_target_char((unsigned char)*end))
			return fail(p, "invalid URI");
	/* absolute-form (RFC 9112 §3.2.2): keep the path only; none after
	 * the authority is "/", written over the scheme. */
	if (!strncasecmp(target, "http://", 7)) {
		char *auth_end = target + 7 + strcspn(target + 7, "/?#");

		if (*auth_end == '/') {
			target = auth_end;
		} else {
			target[0] = '/';
			target[1] = '\0';
		}
	}
	if (target[0] != '/')
		return fail(p, "invalid URI");
	target[strcspn(target, "?#")] = '\0';
	if (!strcmp(sp2 + 1, "HTTP/1.1"))
		p->req.minor = 1;
	else if (!strcmp(sp2 + 1, "HTTP/1.0"))
		p->req.minor = 0;
	else
		return fail(p, "unsupported HTTP version");
	p->req.method = line;
	p->req.path = target;
	p->req.keep_alive = p->req.minor == 1;
	return 0;
}

/* Content-Length: 1*DIGIT (RFC 9110 §8.6); repeats must agree. */
static int parse_length(struct http_parser *p, const char *v, bool *seen,
			size_t *len)
{
	size_t n = 0;
	const char *c;

	if (!*v)
		return fail(p, "invalid Content-Length");
	for (c = v; *c; c++) {
		if (*c < '0' || *c > '9')
			return fail(p, "invalid Content-Length: %.32s", v);
		if (n > (SIZE_MAX - 9) / 10)
			return fail(p, "invalid Content-Length: %.32s", v);
		n = n * 10 + (size_t)(*c - '0');
	}
	if (*seen && n != *len)
		return fail(p, "conflicting Content-Length headers");
	*seen = true;
	*len = n;
	return 0;
}

/* Connection: a comma-separated list of options. */
static void parse_connection(struct http_parser *p, const char *v)
{
	const char *c = v;
	size_t n;

	while (*c) {
		c += strspn(c, " \t,");
		n = strcspn(c, " \t,");
		if (n == 5 && !strncasecmp(c, "close", 5))
			p->req.keep_alive = false;
		else if (n == 10 && !strncasecmp(c, "keep-alive", 10))
			p->req.keep_alive = true;
		c += n;
	}
}

static int parse_header(struct http_parser *p, char *line, bool *has_len,
			size_t *len)
{
	char *colon = strchr(line, ':'), *v, *e;
	char *c;

	if (line[0] == ' ' || line[0] == '\t')
		return fail(p, "folded header lines are not supported");
	if (!colon || colon == line)
		return fail(p, "malformed header line");
	*colon = '\0';
	for (c = line; *c; c++)
		if (!is_tchar((unsigned char)*c))
			return fail(p, "invalid header name");
	v = colon + 1;
	v += strspn(v, " \t");
	for (e = v; *e; e++)
		if (!is_field_char((unsigned char)*e))
			return fail(p, "invalid header value in %.32s", line);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	if (!strcasecmp(line, "Content-Length"))
		return parse_length(p, v, has_len, len);
	if (!strcasecmp(line, "Transfer-Encoding"))
		return fail(p, "Transfer-Encoding is not supported: send "
			    "Content-Length");
	if (!strcasecmp(line, "Expect")) {
		if (strcasecmp(v, "100-continue"))
			return fail(p, "unsupported Expect: %.32s", v);
		p->req.expect_continue = true;
	} else if (!strcasecmp(line, "Connection")) {
		parse_connection(p, v);
	}
	return 0;
}

/* The head is complete: p->head holds it, "\r\n\r\n" included. */
static void parse_head(struct http_parser *p)
{
	char *line = p->head, *eol;
	unsigned int nr_headers = 0;
	bool has_len = false;
	size_t len = 0;

	p->head[p->head_len] = '\0';
	eol = strstr(line, "\r\n");
	*eol = '\0';
	if (parse_request_line(p, line))
		return;
	for (line = eol + 2; *line != '\r'; line = eol + 2) {
		eol = strstr(line, "\r\n");
		*eol = '\0';
		if (++nr_headers > HTTP_HEADERS_MAX) {
			fail(p, "more than %d headers", HTTP_HEADERS_MAX);
			return;
		}
		if (parse_header(p, line, &has_len, &len))
			return;
	}
	if (len > p->max_body) {
		fail(p, "request body of %zu bytes is over the limit of %zu "
		     "bytes", len, p->max_body);
		return;
	}
	if (!len) {
		p->req.expect_continue = false;
		p->state = HTTP_DONE;
		return;
	}
	p->req.body = malloc(len + 1);
	if (!p->req.body) {
		fail(p, "out of memory for a %zu-byte body", len);
		return;
	}
	p->body_want = len;
	p->state = HTTP_BODY;
}

/* Refuse @c before it is stored: NUL, a bare LF or CR, no room left. */
static bool head_byte_bad(struct http_parser *p, char c)
{
	char prev = p->head_len ? p->head[p->head_len - 1] : '\0';

	if (c == '\0')
		return fail(p, "NUL byte in the request head");
	if (c == '\n' && prev != '\r')
		return fail(p, "line not ended by CRLF");
	if (prev == '\r' && c != '\n')
		return fail(p, "CR not followed by LF");
	if (p->head_len == HTTP_HEAD_MAX)
		return fail(p, "request head over %d bytes", HTTP_HEAD_MAX);
	return false;
}

static size_t feed_head(struct http_parser *p, const char *data, size_t len)
{
	size_t i;

	for (i = 0; i < len && p->state == HTTP_HEAD; i++) {
		char c = data[i];

		if (head_byte_bad(p, c))
			return i;
		p->head[p->head_len++] = c;
		/* Empty lines before a request line are ignored (RFC 9112
		 * §2.2), and cost nothing. */
		if (p->head_len == 2 && c == '\n') {
			p->head_len = 0;
			continue;
		}
		if (p->head_len >= 4 && c == '\n' &&
		    !memcmp(p->head + p->head_len - 4, "\r\n\r\n", 4))
			parse_head(p);
	}
	return i;
}

static size_t feed_body(struct http_parser *p, const char *data, size_t len)
{
	size_t n = p->body_want - p->req.body_len;

	if (n > len)
		n = len;
	memcpy(p->req.body + p->req.body_len, data, n);
	p->req.body_len += n;
	if (p->req.body_len == p->body_want) {
		p->req.body[p->req.body_len] = '\0';
		p->state = HTTP_DONE;
	}
	return n;
}

size_t http_parser_feed(struct http_parser *p, const char *data, size_t len)
{
	size_t used = 0;

	if (p->state == HTTP_HEAD)
		used = feed_head(p, data, len);
	if (p->state == HTTP_BODY)
		used += feed_body(p, data + used, len - used);
	return used;
}

const char *http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}

int http_response_head(char *buf, size_t cap, int status, size_t body_len,
		       bool keep_alive)
{
	const char *conn = keep_alive ? "" : "Connection: close\r\n";
	int n;

	if (status < 100 || status > 599)
		return -1;
	if (status < 200 || status == 204)
		n = snprintf(buf, cap, "HTTP/1.1 %d %s\r\n%s%s\r\n", status,
			     http_reason(status),
			     status < 200 ? "" : "Server: microvm\r\n",
			     status < 200 ? "" : conn);
	else
		n = snprintf(buf, cap,
			     "HTTP/1.1 %d %s\r\nServer: microvm\r\n%s"
			     "Content-Type: application/json\r\n"
			     "Content-Length: %zu\r\n\r\n",
			     status, http_reason(status), conn, body_len);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	return n;
}
