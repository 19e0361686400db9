// SPDX-License-Identifier: Apache-2.0
/*
 * The API's HTTP request parser (src/api/http.c): every good request
 * parses the same whether it arrives whole or split at every byte;
 * pipelined requests come out one at a time; one table row per refusal
 * (RFC 9112 framing, the head, header count and body limits); HTTP/1.0
 * and keep-alive; the response head's framing headers.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "api/http.h"

struct good_row {
	const char *what;
	const char *in;
	const char *method, *path, *body;
	bool keep_alive, expect_continue;
	int minor;
};

static const struct good_row good[] = {
	{ .what = "GET /", .in = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = true, .minor = 1 },
	{ .what = "PUT with body",
	  .in = "PUT /drives/rootfs HTTP/1.1\r\nContent-Type: application/json"
		"\r\nContent-Length: 13\r\n\r\n{\"a\": \"b c\"}\n",
	  .method = "PUT", .path = "/drives/rootfs", .body = "{\"a\": \"b c\"}\n",
	  .keep_alive = true, .minor = 1 },
	{ .what = "query dropped",
	  .in = "GET /machine-config?x=1#f HTTP/1.1\r\n\r\n",
	  .method = "GET", .path = "/machine-config", .keep_alive = true,
	  .minor = 1 },
	{ .what = "absolute-form",
	  .in = "GET http://localhost/version HTTP/1.1\r\n\r\n",
	  .method = "GET", .path = "/version", .keep_alive = true, .minor = 1 },
	{ .what = "absolute-form without a path",
	  .in = "GET http://localhost?x=/y HTTP/1.1\r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = true, .minor = 1 },
	{ .what = "HTTP/1.0 closes",
	  .in = "GET / HTTP/1.0\r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = false, .minor = 0 },
	{ .what = "HTTP/1.0 keep-alive",
	  .in = "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = true, .minor = 0 },
	{ .what = "HTTP/1.1 close",
	  .in = "GET / HTTP/1.1\r\nconnection:  te, close \r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = false, .minor = 1 },
	{ .what = "Expect 100-continue",
	  .in = "PATCH /vm HTTP/1.1\r\nExpect: 100-Continue\r\n"
		"Content-Length: 2\r\n\r\n{}",
	  .method = "PATCH", .path = "/vm", .body = "{}", .keep_alive = true,
	  .expect_continue = true, .minor = 1 },
	{ .what = "leading empty lines",
	  .in = "\r\n\r\nGET / HTTP/1.1\r\n\r\n",
	  .method = "GET", .path = "/", .keep_alive = true, .minor = 1 },
	{ .what = "repeated equal Content-Length",
	  .in = "PUT /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1"
		"\r\n\r\nx",
	  .method = "PUT", .path = "/x", .body = "x", .keep_alive = true,
	  .minor = 1 },
	{ .what = "Content-Length 0",
	  .in = "PUT /actions HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	  .method = "PUT", .path = "/actions", .keep_alive = true, .minor = 1 },
};

static void check_good(const struct good_row *r, const struct http_parser *p)
{
	if (p->state != HTTP_DONE) {
		fprintf(stderr, "row '%s': state %d, error '%s'\n", r->what,
			p->state, p->error);
		CHECK(p->state == HTTP_DONE);
		return;
	}
	CHECK(!strcmp(p->req.method, r->method));
	CHECK(!strcmp(p->req.path, r->path));
	if (r->body) {
		CHECK(p->req.body && p->req.body_len == strlen(r->body) &&
		      !memcmp(p->req.body, r->body, p->req.body_len) &&
		      p->req.body[p->req.body_len] == '\0');
	} else {
		CHECK(!p->req.body && !p->req.body_len);
	}
	CHECK_EQ(p->req.keep_alive, r->keep_alive);
	CHECK_EQ(p->req.expect_continue, r->expect_continue);
	CHECK_EQ(p->req.minor, r->minor);
}

/* Each good row whole, then split into two at every byte, then one byte
 * at a time: the same request, every byte consumed. */
static void test_good_split(void)
{
	struct http_parser *p = malloc(sizeof(*p));
	size_t i, cut, len, used;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		len = strlen(good[i].in);
		for (cut = 0; cut <= len; cut++) {
			http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
			used = http_parser_feed(p, good[i].in, cut);
			used += http_parser_feed(p, good[i].in + used,
						 len - used);
			CHECK_EQ(used, len);
			check_good(&good[i], p);
			http_parser_free(p);
		}
		http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
		for (used = 0; used < len;)
			used += http_parser_feed(p, good[i].in + used, 1);
		check_good(&good[i], p);
		http_parser_free(p);
	}
	free(p);
}

struct bad_row {
	const char *what;
	const char *in;
	const char *error; /* a substring of the message */
};

static const struct bad_row bad[] = {
	{ "no version", "GET /\r\n\r\n", "malformed request line" },
	{ "empty target", "GET  HTTP/1.1\r\n\r\n", "malformed request line" },
	{ "bad method", "G@T / HTTP/1.1\r\n\r\n", "invalid HTTP method" },
	{ "long method", "GETGETGETGETGETGE / HTTP/1.1\r\n\r\n",
	  "invalid HTTP method" },
	{ "relative target", "GET vm HTTP/1.1\r\n\r\n", "invalid URI" },
	{ "control in target", "GET /\x01 HTTP/1.1\r\n\r\n", "invalid URI" },
	{ "HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", "unsupported HTTP version" },
	{ "version trailer", "GET / HTTP/1.1 x\r\n\r\n",
	  "unsupported HTTP version" },
	{ "bare LF", "GET / HTTP/1.1\n\n", "CRLF" },
	{ "bare LF in header", "GET / HTTP/1.1\r\nA: b\n\r\n", "CRLF" },
	{ "bare CR", "GET / HTTP/1.1\rX\r\n\r\n", "CR not followed" },
	{ "NUL in head", "GET /\0 HTTP/1.1\r\n\r\n", "NUL" },
	{ "no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", "malformed header" },
	{ "space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
	  "invalid header name" },
	{ "folded", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "folded" },
	{ "control in value", "GET / HTTP/1.1\r\nA: \x7f\r\n\r\n",
	  "invalid header value" },
	{ "negative length", "PUT / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	  "invalid Content-Length" },
	{ "hex length", "PUT / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n",
	  "invalid Content-Length" },
	{ "empty length", "PUT / HTTP/1.1\r\nContent-Length:\r\n\r\n",
	  "invalid Content-Length" },
	{ "overflowing length",
	  "PUT / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
	  "invalid Content-Length" },
	{ "conflicting lengths",
	  "PUT / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	  "conflicting" },
	{ "body over the limit",
	  "PUT / HTTP/1.1\r\nContent-Length: 51201\r\n\r\n",
	  "51201 bytes is over the limit of 51200" },
	{ "chunked", "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "Transfer-Encoding" },
	{ "odd Expect", "PUT / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n",
	  "Expect" },
};

/* Each refusal, whole and one byte at a time; the parser stops at the
 * byte that made it (it consumes nothing after). */
static void test_bad(void)
{
	struct http_parser *p = malloc(sizeof(*p));
	size_t i, len, used, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = strlen(bad[i].in);
		if (!strcmp(bad[i].what, "NUL in head"))
			len = 20;
		http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
		http_parser_feed(p, bad[i].in, len);
		if (p->state != HTTP_ERROR || !strstr(p->error, bad[i].error))
			fprintf(stderr, "row '%s': state %d, error '%s'\n",
				bad[i].what, p->state, p->error);
		CHECK(p->state == HTTP_ERROR && strstr(p->error, bad[i].error));
		http_parser_free(p);
		http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
		for (used = 0; used < len && p->state != HTTP_ERROR;)
			used += http_parser_feed(p, bad[i].in + used, 1);
		CHECK(p->state == HTTP_ERROR);
		n = http_parser_feed(p, "GET / HTTP/1.1\r\n\r\n", 18);
		CHECK_EQ(n, 0);
		http_parser_free(p);
	}
	free(p);
}

static void test_limits(void)
{
	struct http_parser *p = malloc(sizeof(*p));
	char *big = malloc(HTTP_HEAD_MAX + 64);
	size_t n, i;

	/* A head of exactly HTTP_HEAD_MAX bytes parses; one more is over. */
	for (i = 0; i < 2; i++) {
		size_t head = HTTP_HEAD_MAX + i;

		n = (size_t)sprintf(big, "GET / HTTP/1.1\r\nX: ");
		memset(big + n, 'a', head - n - 4);
		memcpy(big + head - 4, "\r\n\r\n", 4);
		http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
		http_parser_feed(p, big, head);
		CHECK_EQ(p->state, i ? HTTP_ERROR : HTTP_DONE);
		if (i)
			CHECK(strstr(p->error, "request head over 8192") != NULL);
		http_parser_free(p);
	}
	/* HTTP_HEADERS_MAX headers parse; one more is refused. */
	for (i = 0; i < 2; i++) {
		unsigned int h;

		n = (size_t)sprintf(big, "GET / HTTP/1.1\r\n");
		for (h = 0; h < HTTP_HEADERS_MAX + i; h++)
			n += (size_t)sprintf(big + n, "H%u: v\r\n", h);
		n += (size_t)sprintf(big + n, "\r\n");
		http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
		http_parser_feed(p, big, n);
		CHECK_EQ(p->state, i ? HTTP_ERROR : HTTP_DONE);
		http_parser_free(p);
	}
	/* The body limit is a parameter: 10 passes at 10, 11 does not. */
	http_parser_init(p, 10);
	n = (size_t)sprintf(big, "PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"
			    "0123456789");
	CHECK_EQ(http_parser_feed(p, big, n), n);
	CHECK_EQ(p->state, HTTP_DONE);
	http_parser_reset(p);
	n = (size_t)sprintf(big, "PUT / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
	http_parser_feed(p, big, n);
	CHECK_EQ(p->state, HTTP_ERROR);
	http_parser_free(p);
	free(big);
	free(p);
}

/* Three requests in one buffer come out one at a time; the body may hold
 * bytes that look like a request, and NULs. */
static void test_pipelined(void)
{
	static const char in[] =
		"PUT /a HTTP/1.1\r\nContent-Length: 21\r\n\r\n"
		"GET /no HTTP/1.1\r\n\0\r\n"
		"GET /b HTTP/1.1\r\n\r\n"
		"GET /c HTTP/1.1\r\nConnection: close\r\n\r\n";
	static const char *paths[] = { "/a", "/b", "/c" };
	struct http_parser *p = malloc(sizeof(*p));
	size_t len = sizeof(in) - 1, off = 0, i;

	http_parser_init(p, HTTP_BODY_MAX_DEFAULT);
	for (i = 0; i < 3; i++) {
		off += http_parser_feed(p, in + off, len - off);
		CHECK_EQ(p->state, HTTP_DONE);
		if (p->state != HTTP_DONE)
			break;
		CHECK(!strcmp(p->req.path, paths[i]));
		CHECK_EQ(p->req.keep_alive, i < 2);
		if (i == 0)
			CHECK(p->req.body_len == 21 && p->req.body[18] == '\0');
		http_parser_reset(p);
	}
	CHECK_EQ(off, len);
	http_parser_free(p);
	free(p);
}

static void test_response_head(void)
{
	char buf[256];
	int n;

	n = http_response_head(buf, sizeof(buf), 200, 17, true);
	CHECK(n > 0 && (size_t)n == strlen(buf));
	CHECK(!strncmp(buf, "HTTP/1.1 200 OK\r\n", 17));
	CHECK(strstr(buf, "Content-Type: application/json\r\n") != NULL);
	CHECK(strstr(buf, "Content-Length: 17\r\n") != NULL);
	CHECK(strstr(buf, "Server: microvm\r\n") != NULL);
	CHECK(!strstr(buf, "Connection: close"));
	CHECK(!strcmp(buf + n - 4, "\r\n\r\n"));
	n = http_response_head(buf, sizeof(buf), 400, 3, false);
	CHECK(strstr(buf, "400 Bad Request\r\n") != NULL);
	CHECK(strstr(buf, "Connection: close\r\n") != NULL);
	/* RFC 9110 §8.6: no Content-Length on 204 or 1xx. */
	n = http_response_head(buf, sizeof(buf), 204, 0, true);
	CHECK(n > 0 && !strncmp(buf, "HTTP/1.1 204 No Content\r\n", 25));
	CHECK(!strstr(buf, "Content-Length") && !strstr(buf, "Content-Type"));
	n = http_response_head(buf, sizeof(buf), 100, 0, true);
	CHECK(n > 0 && !strcmp(buf, "HTTP/1.1 100 Continue\r\n\r\n"));
	CHECK_EQ(http_response_head(buf, 10, 200, 0, true), -1);
	CHECK_EQ(http_response_head(buf, sizeof(buf), 99, 0, true), -1);
	CHECK_EQ(http_response_head(buf, sizeof(buf), 600, 0, true), -1);
}

int main(void)
{
	test_good_split();
	test_bad();
	test_limits();
	test_pipelined();
	test_response_head();
	return test_done();
}
