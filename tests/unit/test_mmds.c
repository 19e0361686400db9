// SPDX-License-Identifier: Apache-2.0
/*
 * The metadata service (src/mmds): the store (PUT, PATCH as RFC 7396,
 * the limit, a refusal changing nothing), the guest's HTTP answers (IMDS
 * text and JSON, 404/405/501, V2 sessions with their expiry), and the
 * guest-facing stack driven by a simulated guest TCP client: ARP, the
 * handshake, a request, the whole response reassembled within the
 * guest's window, retransmission after a loss, the close, RSTs, a SYN
 * flood bounded to MMDS_MAX_CONNS, and random frames.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "mmds/mmds.h"

#define SEC 1000000000ull
#define MMDS_IP 0xa9fea9feu
#define GUEST_IP 0x0a000202u

static const uint8_t guest_mac[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };

static const char store_json[] =
	"{\"latest\":{\"meta-data\":{\"ami-id\":\"ami-87654321\","
	"\"reservation-id\":\"r-79054aef\",\"net\":{\"a\":\"b\"},"
	"\"count\":3},\"user-data\":\"#cloud-config\\nhostname: x\\n\"}}";

/* ---- HTTP answers ---- */

static char *answer(struct mmds *m, const char *req, uint64_t now,
		    size_t *len)
{
	char *out = NULL;

	*len = mmds_http_answer(m, req, strlen(req), now, &out);
	return out;
}

/* The status of @resp and its body (after the blank line). */
static int status_of(const char *resp, size_t len, const char **body)
{
	const char *b = resp ? strstr(resp, "\r\n\r\n") : NULL;
	int st = 0;

	if (!resp || sscanf(resp, "HTTP/1.1 %d", &st) != 1 || !b ||
	    (size_t)(b - resp) > len)
		return -1;
	*body = b + 4;
	return st;
}

static void check_get(struct mmds *m, const char *req, int want_st,
		      const char *want_body)
{
	const char *body = NULL;
	size_t len;
	char *r = answer(m, req, 1, &len);
	char *z = r ? realloc(r, len + 1) : NULL;
	int st;

	if (z)
		z[len] = '\0';
	st = status_of(z, len, &body);
	CHECK_EQ(st, want_st);
	if (st != want_st)
		fprintf(stderr, "  request: %s  answer: %s\n", req, z ? z : "-");
	if (want_body && body) {
		CHECK(!strcmp(body, want_body));
		if (strcmp(body, want_body))
			fprintf(stderr, "  body '%s' want '%s'\n", body,
				want_body);
	}
	free(z);
}

static void test_store(void)
{
	struct mmds_config mc = { .limit = 200 };
	struct mmds *m;
	char err[256], *j;
	char big[300];

	CHECK_EQ(mmds_create(&m, &mc), 0);
	j = mmds_get_json(m);
	CHECK(j && !strcmp(j, "{}"));
	free(j);
	/* PATCH before the first PUT: refused. */
	CHECK(mmds_patch(m, "{\"a\":1}", 7, err, sizeof(err)) != 0);
	CHECK(strstr(err, "not initialized") != NULL);
	CHECK_EQ(mmds_put(m, "{\"a\":{\"b\":1,\"c\":2},\"d\":\"e\"}", 27, err,
			  sizeof(err)), 0);
	/* null deletes, objects merge, other values replace. */
	CHECK_EQ(mmds_patch(m, "{\"a\":{\"b\":null,\"x\":[1]},\"d\":5}", 30,
			    err, sizeof(err)), 0);
	j = mmds_get_json(m);
	CHECK(j && !strcmp(j, "{\"a\":{\"c\":2,\"x\":[1]},\"d\":5}"));
	free(j);
	/* Not JSON, trailing data: refused, unchanged. */
	CHECK(mmds_put(m, "{\"a\":", 5, err, sizeof(err)) != 0);
	CHECK(mmds_put(m, "{} {}", 5, err, sizeof(err)) != 0);
	CHECK(mmds_patch(m, "nope", 4, err, sizeof(err)) != 0);
	/* Over the limit, by PUT and by PATCH: refused, unchanged. */
	memset(big, 'x', sizeof(big));
	big[0] = '"';
	big[sizeof(big) - 2] = '"';
	CHECK(mmds_put(m, big, sizeof(big) - 1, err, sizeof(err)) != 0);
	CHECK(strstr(err, "limit") != NULL);
	snprintf(big, sizeof(big), "{\"k\":\"%0190d\"}", 0);
	CHECK(mmds_patch(m, big, strlen(big), err, sizeof(err)) != 0);
	j = mmds_get_json(m);
	CHECK(j && !strcmp(j, "{\"a\":{\"c\":2,\"x\":[1]},\"d\":5}"));
	free(j);
	mmds_destroy(m);
}

static void test_http_v1(void)
{
	struct mmds_config mc = { .version = 1 };
	struct mmds *m;
	char err[256];

	CHECK_EQ(mmds_create(&m, &mc), 0);
	check_get(m, "GET /latest HTTP/1.1\r\n\r\n", 404, NULL);
	CHECK_EQ(mmds_put(m, store_json, strlen(store_json), err,
			  sizeof(err)), 0);
	check_get(m, "GET /latest HTTP/1.1\r\nHost: x\r\n\r\n", 200,
		  "meta-data/\nuser-data");
	check_get(m, "GET /latest/meta-data/ HTTP/1.1\r\n\r\n", 200,
		  "ami-id\ncount\nnet/\nreservation-id");
	check_get(m, "GET /latest/meta-data/ami-id HTTP/1.0\r\n\r\n", 200,
		  "ami-87654321");
	check_get(m, "GET //latest//user-data?x=1 HTTP/1.1\r\n\r\n", 200,
		  "#cloud-config\nhostname: x\n");
	check_get(m, "GET /latest/meta-data/ami-id HTTP/1.1\r\n"
		  "accept: application/json\r\n\r\n", 200, "\"ami-87654321\"");
	check_get(m, "GET /latest/meta-data/net HTTP/1.1\r\n"
		  "Accept: application/json\r\n\r\n", 200, "{\"a\":\"b\"}");
	/* A number in IMDS text: not supported (501); in JSON it is. */
	check_get(m, "GET /latest/meta-data/count HTTP/1.1\r\n\r\n", 501,
		  NULL);
	check_get(m, "GET /latest/meta-data/count HTTP/1.1\r\n"
		  "Accept: application/json\r\n\r\n", 200, "3");
	check_get(m, "GET /latest/nope HTTP/1.1\r\n\r\n", 404, NULL);
	check_get(m, "GET /latest/meta-data/ami-id/x HTTP/1.1\r\n\r\n", 404,
		  NULL);
	/* V1 answers with any token or none. */
	check_get(m, "GET /latest/meta-data/ami-id HTTP/1.1\r\n"
		  "X-metadata-token: bogus\r\n\r\n", 200, "ami-87654321");
	check_get(m, "POST /latest HTTP/1.1\r\n\r\n", 405, NULL);
	check_get(m, "DELETE /latest HTTP/1.1\r\n\r\n", 405, NULL);
	check_get(m, "GET /latest HTTP/2.0\r\n\r\n", 400, NULL);
	check_get(m, "GET latest HTTP/1.1\r\n\r\n", 400, NULL);
	check_get(m, "garbage", 400, NULL);
	check_get(m, "GET /latest HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 400,
		  NULL);
	mmds_destroy(m);
}

static void test_http_v2(void)
{
	struct mmds_config mc = { .version = 2 };
	const char *body = NULL;
	char req[512], err[256], tok[64], *r;
	struct mmds *m;
	size_t len;

	CHECK_EQ(mmds_create(&m, &mc), 0);
	CHECK_EQ(mmds_put(m, store_json, strlen(store_json), err,
			  sizeof(err)), 0);
	check_get(m, "GET /latest/meta-data/ami-id HTTP/1.1\r\n\r\n", 401,
		  NULL);
	check_get(m, "GET /latest/meta-data/ami-id HTTP/1.1\r\n"
		  "X-metadata-token: bogus\r\n\r\n", 401, NULL);
	check_get(m, "PUT /latest/api/token HTTP/1.1\r\n\r\n", 400, NULL);
	check_get(m, "PUT /latest/api/token HTTP/1.1\r\n"
		  "X-metadata-token-ttl-seconds: 0\r\n\r\n", 400, NULL);
	check_get(m, "PUT /latest/api/token HTTP/1.1\r\n"
		  "X-metadata-token-ttl-seconds: 21601\r\n\r\n", 400, NULL);
	check_get(m, "PUT /latest/api/token HTTP/1.1\r\n"
		  "X-metadata-token-ttl-seconds: 1x\r\n\r\n", 400, NULL);
	check_get(m, "PUT /latest/api/token HTTP/1.1\r\nX-Forwarded-For: a\r\n"
		  "X-metadata-token-ttl-seconds: 60\r\n\r\n", 400, NULL);
	check_get(m, "PUT /latest/meta-data HTTP/1.1\r\n"
		  "X-metadata-token-ttl-seconds: 60\r\n\r\n", 400, NULL);
	r = answer(m, "PUT /latest/api/token HTTP/1.1\r\n"
		   "X-aws-ec2-metadata-token-ttl-seconds: 60\r\n\r\n", 1, &len);
	r = realloc(r, len + 1);
	r[len] = '\0';
	CHECK_EQ(status_of(r, len, &body), 200);
	CHECK_EQ(strlen(body), 43);
	snprintf(tok, sizeof(tok), "%s", body);
	free(r);
	snprintf(req, sizeof(req), "GET /latest/meta-data/ami-id HTTP/1.1\r\n"
		 "X-metadata-token: %s\r\n\r\n", tok);
	check_get(m, req, 200, "ami-87654321");
	/* Expired 60 s later (check_get asks at t=1 ns; ask at 61 s). */
	r = answer(m, req, 1 + 61 * SEC, &len);
	CHECK_EQ(status_of(r, len, &body), 401);
	free(r);
	/* Many tokens: the oldest go, bounded. */
	for (unsigned int i = 0; i < 3 * MMDS_MAX_TOKENS; i++) {
		r = answer(m, "PUT /latest/api/token HTTP/1.1\r\n"
			   "X-metadata-token-ttl-seconds: 600\r\n\r\n",
			   2 + (uint64_t)i, &len);
		CHECK(r != NULL);
		free(r);
	}
	mmds_destroy(m);
}

/* ---- the stack, with a simulated guest ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint16_t csum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* A guest TCP segment to the service. Return: the frame length. */
static size_t seg(uint8_t *f, uint16_t sport, uint16_t dport, uint32_t seq,
		  uint32_t ack, uint8_t flags, uint16_t wnd, const void *data,
		  size_t n)
{
	uint8_t *ip = f + 14, *t = ip + 20;

	memset(f, 0, 14 + 20 + 24);
	memset(f, 0xff, 6);
	memcpy(f + 6, guest_mac, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + 20 + n));
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, GUEST_IP);
	put32(ip + 16, MMDS_IP);
	put16(t, sport);
	put16(t + 2, dport);
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = 5 << 4;
	t[13] = flags;
	put16(t + 14, wnd);
	if (n)
		memcpy(t + 20, data, n);
	return 14 + 40 + n;
}

struct rx {
	uint8_t f[2048];
	size_t len;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t dport;
	const uint8_t *data;
	size_t n;
};

/* The next frame from the stack, its checksums checked. */
static bool pull(struct mmds_stack *s, struct rx *r, uint64_t now)
{
	const uint8_t *ip, *t;
	uint32_t sum;
	size_t ihl, tot;

	r->len = mmds_stack_rx(s, r->f, sizeof(r->f), now);
	if (!r->len)
		return false;
	if (get16(r->f + 12) != 0x0800)
		return true;
	ip = r->f + 14;
	ihl = (size_t)(ip[0] & 15) * 4;
	tot = get16(ip + 2);
	CHECK_EQ(tot + 14, r->len);
	CHECK_EQ(csum(ip, ihl, 0), 0xffff);
	CHECK(!memcmp(r->f, guest_mac, 6));
	CHECK_EQ(get32(ip + 12), MMDS_IP);
	t = ip + ihl;
	sum = csum(ip + 12, 8, 0) + 6 + (uint32_t)(tot - ihl);
	CHECK_EQ(csum(t, tot - ihl, sum), 0xffff);
	r->flags = t[13];
	r->seq = get32(t + 4);
	r->ack = get32(t + 8);
	r->dport = get16(t + 2);
	r->data = t + (t[12] >> 4) * 4;
	r->n = tot - ihl - (size_t)(t[12] >> 4) * 4;
	return true;
}

#define SYN 0x02
#define ACK 0x10
#define FIN 0x01
#define RST 0x04

static void test_arp(struct mmds_stack *s)
{
	uint8_t f[64] = { 0 };
	struct rx r;

	memset(f, 0xff, 6);
	memcpy(f + 6, guest_mac, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1);
	put16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, 1);
	memcpy(f + 22, guest_mac, 6);
	put32(f + 28, GUEST_IP);
	put32(f + 38, MMDS_IP);
	CHECK(mmds_stack_match(s, f, 42));
	CHECK(mmds_stack_tx(s, f, 42, 1));
	CHECK(pull(s, &r, 1));
	CHECK_EQ(r.len, 42);
	CHECK_EQ(get16(r.f + 12), 0x0806);
	CHECK_EQ(get16(r.f + 20), 2);
	CHECK_EQ(get32(r.f + 28), MMDS_IP);
	CHECK_EQ(get32(r.f + 38), GUEST_IP);
	CHECK(!memcmp(r.f + 32, guest_mac, 6));
	CHECK(!pull(s, &r, 1));
	/* For another address: not ours. */
	put32(f + 38, 0x0a000201);
	CHECK(!mmds_stack_match(s, f, 42));
	CHECK(!mmds_stack_tx(s, f, 42, 1));
}

/* One request on one connection; the response as received. */
static size_t fetch(struct mmds_stack *s, uint16_t port, const char *req,
		    uint16_t wnd, bool lose_first, char *out, size_t cap)
{
	uint8_t f[2048];
	uint32_t seq = 1000, ack;
	uint64_t now = 10 * SEC;
	size_t got = 0;
	bool fin = false, lost = false;
	struct rx r;
	int rounds;

	CHECK(mmds_stack_tx(s, f, seg(f, port, 80, seq, 0, SYN, wnd, NULL, 0),
			    now));
	CHECK(pull(s, &r, now));
	CHECK_EQ(r.flags, SYN | ACK);
	CHECK_EQ(r.ack, seq + 1);
	ack = r.seq + 1;
	seq++;
	CHECK(mmds_stack_tx(s, f, seg(f, port, 80, seq, ack, ACK, wnd, NULL, 0),
			    now));
	CHECK(mmds_stack_tx(s, f, seg(f, port, 80, seq, ack, ACK | 0x08, wnd,
				      req, strlen(req)), now));
	seq += (uint32_t)strlen(req);
	for (rounds = 0; rounds < 10000 && !fin; rounds++) {
		if (!pull(s, &r, now)) {
			/* Nothing now: the guest acks what it has. */
			now += SEC; /* past any retransmission deadline */
			CHECK(mmds_stack_deadline(s) == 0 ||
			      mmds_stack_deadline(s) <= now);
			continue;
		}
		CHECK(r.n <= wnd);
		if (lose_first && !lost && r.n) {
			lost = true; /* dropped: no ack */
			continue;
		}
		if (r.seq == ack && r.n) {
			CHECK(got + r.n <= cap);
			if (got + r.n <= cap)
				memcpy(out + got, r.data, r.n);
			got += r.n;
			ack += (uint32_t)r.n;
		}
		if ((r.flags & FIN) && r.seq == ack) {
			ack++;
			fin = true;
		}
		mmds_stack_tx(s, f, seg(f, port, 80, seq, ack, ACK, wnd, NULL,
					0), now);
	}
	CHECK(fin);
	/* Our FIN; the stack acks it and forgets the connection. */
	CHECK(mmds_stack_tx(s, f, seg(f, port, 80, seq, ack, FIN | ACK, wnd,
				      NULL, 0), now));
	CHECK(pull(s, &r, now));
	CHECK_EQ(r.flags, ACK);
	CHECK_EQ(r.ack, seq + 1);
	CHECK(!pull(s, &r, now));
	return got;
}

/* The guest half-closes with its request (FIN on the data): the stack
 * answers, its FIN is acked with a pure ACK, and the connection is gone. */
static void test_guest_closes_first(struct mmds_stack *s, const char *req)
{
	struct mmds_stats before = { 0 }, after = { 0 };
	uint32_t seq = 500, ack;
	uint8_t f[2048];
	struct rx r;
	int i;

	mmds_stack_stats(s, &before);
	CHECK(mmds_stack_tx(s, f, seg(f, 41000, 80, seq, 0, SYN, 65535, NULL,
				      0), 1));
	CHECK(pull(s, &r, 1));
	ack = r.seq + 1;
	seq++;
	CHECK(mmds_stack_tx(s, f, seg(f, 41000, 80, seq, ack, ACK | FIN,
				      65535, req, strlen(req)), 1));
	seq += (uint32_t)strlen(req) + 1;
	for (i = 0; i < 100 && pull(s, &r, 1); i++) {
		CHECK_EQ(r.ack, seq); /* our FIN counted */
		ack = r.seq + (uint32_t)r.n + ((r.flags & FIN) ? 1 : 0);
	}
	CHECK(mmds_stack_tx(s, f, seg(f, 41000, 80, seq, ack, ACK, 65535, NULL,
				      0), 1));
	CHECK(!pull(s, &r, 1));
	mmds_stack_stats(s, &after);
	CHECK_EQ(after.connections_created - before.connections_created, 1);
	CHECK_EQ(after.connections_destroyed - before.connections_destroyed,
		 1);
}

static void test_stack(void)
{
	struct mmds_config mc = { .version = 1 };
	struct mmds_stats st = { 0 };
	char err[256], out[8192], *want;
	size_t wlen, n;
	struct mmds_stack *s;
	struct mmds *m;
	uint8_t f[2048];
	struct rx r;
	int i;
	const char *req = "GET /latest/meta-data/ami-id HTTP/1.1\r\n"
			  "Host: 169.254.169.254\r\n\r\n";

	CHECK_EQ(mmds_create(&m, &mc), 0);
	CHECK_EQ(mmds_put(m, store_json, strlen(store_json), err,
			  sizeof(err)), 0);
	s = mmds_stack_create(m);
	CHECK(s != NULL);
	test_arp(s);
	wlen = mmds_http_answer(m, req, strlen(req), 0, &want);
	n = fetch(s, 40000, req, 65535, false, out, sizeof(out));
	CHECK_EQ(n, wlen);
	CHECK(n == wlen && !memcmp(out, want, n));
	/* A window of 50 bytes: segments of at most 50. */
	n = fetch(s, 40001, req, 50, false, out, sizeof(out));
	CHECK(n == wlen && !memcmp(out, want, n));
	/* The first data segment lost: sent again after the timeout. */
	n = fetch(s, 40002, req, 50, true, out, sizeof(out));
	CHECK(n == wlen && !memcmp(out, want, n));
	free(want);
	test_guest_closes_first(s, req);
	/* Another port, or a stray segment: RST. */
	CHECK(mmds_stack_tx(s, f, seg(f, 40003, 81, 5, 0, SYN, 1000, NULL, 0),
			    1));
	CHECK(pull(s, &r, 1));
	CHECK(r.flags & RST);
	CHECK_EQ(r.ack, 6);
	CHECK(mmds_stack_tx(s, f, seg(f, 40004, 80, 5, 77, ACK, 1000, NULL, 0),
			    1));
	CHECK(pull(s, &r, 1));
	CHECK(r.flags & RST);
	CHECK_EQ(r.seq, 77);
	/* A SYN flood: at most MMDS_MAX_CONNS live, the oldest evicted. */
	for (i = 0; i < 200; i++) {
		CHECK(mmds_stack_tx(s, f, seg(f, (uint16_t)(20000 + i), 80, 1,
					      0, SYN, 1000, NULL, 0),
				    (uint64_t)(100 + i)));
		while (pull(s, &r, (uint64_t)(100 + i)))
			;
	}
	mmds_stack_stats(s, &st);
	CHECK_EQ(st.connections_created, 204);
	CHECK(st.connections_created - st.connections_destroyed <=
	      MMDS_MAX_CONNS);
	/* Unanswered SYN-ACKs: resent, then the connections dropped. */
	for (i = 0; i < 20 && mmds_stack_deadline(s); i++)
		while (pull(s, &r, mmds_stack_deadline(s)))
			;
	memset(&st, 0, sizeof(st));
	mmds_stack_stats(s, &st);
	CHECK_EQ(st.connections_created, st.connections_destroyed);
	CHECK_EQ(mmds_stack_deadline(s), 0);
	/* Random frames to the address: taken, nothing breaks. */
	srand(7);
	for (i = 0; i < 20000; i++) {
		size_t len = 34 + (size_t)(rand() % 200);

		for (size_t k = 0; k < len; k++)
			f[k] = (uint8_t)rand();
		put16(f + 12, 0x0800);
		put32(f + 30, MMDS_IP);
		if (i & 1)
			f[14] = 0x45, f[23] = 6;
		CHECK(mmds_stack_tx(s, f, len, (uint64_t)i));
		while (pull(s, &r, (uint64_t)i))
			;
	}
	mmds_stack_destroy(s);
	mmds_destroy(m);
}

int main(void)
{
	test_store();
	test_http_v1();
	test_http_v2();
	test_stack();
	return test_done();
}
