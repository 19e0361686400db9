// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the API's HTTP request parser (src/api/http.c).
 * Input layout: byte 0 picks the body limit (FUZZ_LIMITS), byte 1 seeds
 * the chunk sizes, the rest is the byte stream a client sends. The stream
 * is parsed twice, whole and in random chunks of 1 to 64 bytes; both give
 * the same requests and the same final verdict (split invariance), and
 * every request kept holds only what the parser promises: a method of
 * 1-16 token characters, an origin-form path without query, fragment,
 * space or control byte, a NUL-terminated body within the limit. A feed
 * that neither completes a request nor fails consumes all it is given.
 * abort() on a broken promise.
 */
#include "api/http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_HEADER 2
#define FUZZ_MAX_EVENTS 256
#define FUZZ_CHUNK_MAX 64

static const size_t FUZZ_LIMITS[] = { 0, 1, 7, 100, HTTP_BODY_MAX_DEFAULT };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a over a request's fields: one word per event to compare. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

static void check_request(const struct http_request *r, size_t max_body)
{
	size_t i, n = strlen(r->method);

	if (!n || n > HTTP_METHOD_MAX)
		abort();
	for (i = 0; i < n; i++)
		if ((unsigned char)r->method[i] <= 0x20 ||
		    strchr("()<>@,;:\\\"/[]?={}\x7f", r->method[i]))
			abort();
	if (r->path[0] != '/' || strpbrk(r->path, "?#"))
		abort();
	for (i = 0; r->path[i]; i++)
		if ((unsigned char)r->path[i] <= 0x20 || r->path[i] == 0x7f)
			abort();
	if (r->body_len > max_body || (r->body_len && !r->body) ||
	    (!r->body_len && r->body) ||
	    (r->body && r->body[r->body_len] != '\0'))
		abort();
	if (r->minor != 0 && r->minor != 1)
		abort();
}

static uint64_t event_hash(const struct http_parser *p)
{
	const struct http_request *r = &p->req;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint8_t flags = (uint8_t)(r->keep_alive | r->expect_continue << 1 |
				  r->minor << 2);

	if (p->state == HTTP_ERROR)
		return fnv(h, p->error, strlen(p->error));
	h = fnv(h, r->method, strlen(r->method) + 1);
	h = fnv(h, r->path, strlen(r->path) + 1);
	h = fnv(h, &flags, 1);
	h = fnv(h, &r->body_len, sizeof(r->body_len));
	return r->body ? fnv(h, r->body, r->body_len) : h;
}

struct fuzz_run {
	uint64_t ev[FUZZ_MAX_EVENTS];
	size_t nr;
	int final_state;
};

/* Parse @data in chunks (@seed 0: whole); record each event. */
static void run(const uint8_t *data, size_t len, size_t max_body,
		uint32_t seed, struct fuzz_run *out, struct http_parser *p)
{
	size_t off = 0;

	out->nr = 0;
	http_parser_init(p, max_body);
	while (off < len && out->nr < FUZZ_MAX_EVENTS) {
		size_t chunk = len - off, n;

		if (seed) {
			seed ^= seed << 13;
			seed ^= seed >> 17;
			seed ^= seed << 5;
			if (chunk > 1 + seed % FUZZ_CHUNK_MAX)
				chunk = 1 + seed % FUZZ_CHUNK_MAX;
		}
		n = http_parser_feed(p, (const char *)data + off, chunk);
		if (n > chunk)
			abort();
		off += n;
		if (p->state == HTTP_DONE) {
			check_request(&p->req, max_body);
			out->ev[out->nr++] = event_hash(p);
			http_parser_reset(p);
		} else if (p->state == HTTP_ERROR) {
			if (!p->error[0] ||
			    !memchr(p->error, '\0', sizeof(p->error)))
				abort();
			out->ev[out->nr++] = event_hash(p);
			break;
		} else if (n != chunk) {
			abort(); /* no verdict, yet bytes left unconsumed */
		}
	}
	out->final_state = p->state;
	http_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_parser p;
	static struct fuzz_run whole, split;
	size_t max_body;
	uint32_t seed;
	char head[256];

	if (size < FUZZ_HEADER)
		return 0;
	max_body = FUZZ_LIMITS[data[0] % (sizeof(FUZZ_LIMITS) /
					  sizeof(FUZZ_LIMITS[0]))];
	seed = 0x9e3779b9u * (data[1] + 1u);
	run(data + FUZZ_HEADER, size - FUZZ_HEADER, max_body, 0, &whole, &p);
	run(data + FUZZ_HEADER, size - FUZZ_HEADER, max_body, seed, &split,
	    &p);
	if (whole.nr != split.nr || whole.final_state != split.final_state ||
	    memcmp(whole.ev, split.ev, whole.nr * sizeof(whole.ev[0])))
		abort();
	/* The response head for any status: framed, or refused. */
	if (http_response_head(head, sizeof(head), 100 + data[1] * 2,
			       whole.nr, data[0] & 1) >= 0 &&
	    !strstr(head, "\r\n\r\n"))
		abort();
	return 0;
}
