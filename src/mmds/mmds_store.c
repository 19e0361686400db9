// SPDX-License-Identifier: Apache-2.0
/*
 * The metadata service's data store and the guest's HTTP requests to it
 * (mmds.h): a json-c value under a mutex, replaced whole by PUT, merged
 * by PATCH (RFC 7396) on a copy that is kept only if it fits the limit,
 * read by GET (RFC 6901 pointers from the request's path) in IMDS text
 * or JSON. V2 sessions: random tokens with an expiry, at most
 * MMDS_MAX_TOKENS.
 */
#include "mmds/mmds.h"
#include "util/readfile.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define TOKEN_BYTES 32
#define TOKEN_CHARS 43 /* base64url of 32 bytes, no padding */
#define JSON_DEPTH 32
/* Compact, and '/' as it is (as Firecracker writes JSON). */
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct mmds_token {
	char text[TOKEN_CHARS + 1];
	uint64_t expires_ns; /* 0: free slot */
};

struct mmds {
	pthread_mutex_t lock;
	struct mmds_config cfg;
	struct json_object *store; /* NULL: not initialized */
	struct mmds_token tokens[MMDS_MAX_TOKENS];
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void cfg_defaults(struct mmds_config *c)
{
	if (c->version != 2)
		c->version = 1;
	if (!c->ipv4)
		c->ipv4 = MMDS_DEFAULT_IPV4;
	if (!c->limit)
		c->limit = MMDS_DEFAULT_LIMIT;
}

int mmds_create(struct mmds **out, const struct mmds_config *cfg)
{
	struct mmds *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	if (cfg)
		m->cfg = *cfg;
	cfg_defaults(&m->cfg);
	*out = m;
	return 0;
}

void mmds_destroy(struct mmds *m)
{
	if (!m)
		return;
	json_object_put(m->store);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void mmds_configure(struct mmds *m, const struct mmds_config *cfg)
{
	size_t limit;

	pthread_mutex_lock(&m->lock);
	limit = m->cfg.limit;
	m->cfg = *cfg;
	if (!cfg->limit)
		m->cfg.limit = limit;
	cfg_defaults(&m->cfg);
	pthread_mutex_unlock(&m->lock);
}

uint32_t mmds_ipv4(struct mmds *m)
{
	uint32_t ip;

	pthread_mutex_lock(&m->lock);
	ip = m->cfg.ipv4;
	pthread_mutex_unlock(&m->lock);
	return ip;
}

/* Parse exactly @len bytes as one JSON value (NULL: not JSON). */
static struct json_object *parse_value(const char *json, size_t len,
				       bool *ok)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	struct json_object *o = NULL;

	*ok = false;
	if (!tok || len > (size_t)INT32_MAX) {
		json_tokener_free(tok);
		return NULL;
	}
	o = json_tokener_parse_ex(tok, json, (int)len);
	if (json_tokener_get_error(tok) == json_tokener_success &&
	    (size_t)json_tokener_get_parse_end(tok) == len)
		*ok = true;
	else {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* The serialized size of @o ("null" for NULL). */
static size_t json_size(struct json_object *o)
{
	size_t n = 0;
	const char *s = json_object_to_json_string_length(
		o, JSON_FLAGS, &n);

	return s ? n : SIZE_MAX;
}

/* Keep @next as the store if it fits; else put it back. Lock held. */
static int store_swap(struct mmds *m, struct json_object *next, char *err,
		      size_t errlen)
{
	size_t n = json_size(next);

	if (n > m->cfg.limit) {
		json_object_put(next);
		set_err(err, errlen, "The MMDS data store would hold %zu "
			"bytes; its limit is %zu bytes", n, m->cfg.limit);
		return -E2BIG;
	}
	json_object_put(m->store);
	m->store = next;
	return 0;
}

int mmds_put(struct mmds *m, const char *json, size_t len, char *err,
	     size_t errlen)
{
	struct json_object *o;
	bool ok;
	int ret;

	pthread_mutex_lock(&m->lock);
	if (len > m->cfg.limit) {
		pthread_mutex_unlock(&m->lock);
		set_err(err, errlen, "The MMDS data store would hold %zu "
			"bytes; its limit is %zu bytes", len, m->cfg.limit);
		return -E2BIG;
	}
	pthread_mutex_unlock(&m->lock);
	o = parse_value(json, len, &ok);
	if (!ok) {
		set_err(err, errlen, "the MMDS data is not one JSON value");
		return -EINVAL;
	}
	pthread_mutex_lock(&m->lock);
	ret = store_swap(m, o, err, errlen);
	pthread_mutex_unlock(&m->lock);
	return ret;
}

/* RFC 7396: @patch merged into @target (consumed); the result. */
static struct json_object *merge(struct json_object *target,
				 struct json_object *patch)
{
	struct json_object *cur, *sub;

	if (!json_object_is_type(patch, json_type_object)) {
		json_object_put(target);
		return json_object_get(patch);
	}
	if (!json_object_is_type(target, json_type_object)) {
		json_object_put(target);
		target = json_object_new_object();
		if (!target)
			return NULL;
	}
	json_object_object_foreach(patch, k, v) {
		if (!v) {
			json_object_object_del(target, k);
			continue;
		}
		cur = json_object_object_get(target, k);
		sub = merge(json_object_get(cur), v);
		if (!sub || json_object_object_add(target, k, sub)) {
			json_object_put(sub);
			json_object_put(target);
			return NULL;
		}
	}
	return target;
}

int mmds_patch(struct mmds *m, const char *json, size_t len, char *err,
	       size_t errlen)
{
	struct json_object *patch, *copy = NULL, *next;
	bool ok;
	int ret;

	patch = parse_value(json, len, &ok);
	if (!ok) {
		set_err(err, errlen, "the MMDS patch is not one JSON value");
		return -EINVAL;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->store) {
		pthread_mutex_unlock(&m->lock);
		json_object_put(patch);
		set_err(err, errlen, "The MMDS data store is not initialized.");
		return -EINVAL;
	}
	if (json_object_deep_copy(m->store, &copy, NULL)) {
		pthread_mutex_unlock(&m->lock);
		json_object_put(patch);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	next = merge(copy, patch);
	json_object_put(patch);
	if (!next) {
		pthread_mutex_unlock(&m->lock);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = store_swap(m, next, err, errlen);
	pthread_mutex_unlock(&m->lock);
	return ret;
}

char *mmds_get_json(struct mmds *m)
{
	const char *s;
	char *out;

	pthread_mutex_lock(&m->lock);
	s = m->store ? json_object_to_json_string_ext(m->store,
						      JSON_FLAGS) :
		       "{}";
	out = s ? strdup(s) : NULL;
	pthread_mutex_unlock(&m->lock);
	return out;
}

int mmds_load_file(struct mmds *m, const char *path, char *err,
		   size_t errlen)
{
	const char *step;
	size_t limit, len = 0;
	char *buf = NULL, inner[256];
	int ret;

	pthread_mutex_lock(&m->lock);
	limit = m->cfg.limit;
	pthread_mutex_unlock(&m->lock);
	ret = read_bounded(path, limit, &buf, &len, &step);
	if (ret == -E2BIG) {
		set_err(err, errlen, "--metadata %s: more than the data "
			"store's limit of %zu bytes", path, limit);
		return ret;
	}
	if (ret) {
		set_err(err, errlen, "--metadata %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = mmds_put(m, buf, len, inner, sizeof(inner));
	free(buf);
	if (ret)
		set_err(err, errlen, "--metadata %s: %s", path, inner);
	return ret;
}

/* ---- the guest's requests ---- */

struct http_req {
	char method[8];
	char path[MMDS_REQ_MAX];
	const char *token, *ttl, *accept;
	size_t token_len, ttl_len, accept_len;
	bool forwarded, body;
};

struct reply {
	int status;
	const char *type;  /* Content-Type */
	char *body;        /* malloc'd, or NULL with @msg */
	size_t len;
	const char *msg;
	bool allow;        /* an Allow header (405) */
};

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 501: return "Not Implemented";
	default: return "Internal Server Error";
	}
}

/* Does header line @l (of @n bytes) name @name? Its value, else NULL. */
static const char *header_value(const char *l, size_t n, const char *name,
				size_t *vlen)
{
	size_t k = strlen(name);
	const char *v, *end = l + n;

	if (n <= k || l[k] != ':' || strncasecmp(l, name, k))
		return NULL;
	v = l + k + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*vlen = (size_t)(end - v);
	return v;
}

/* Parse the request line and the headers we read. Return: 0 or -1. */
static int parse_req(const char *req, size_t len, struct http_req *h)
{
	const char *p = req, *end = req + len, *eol, *sp1, *sp2, *v;
	size_t n, vl;

	memset(h, 0, sizeof(*h));
	eol = memchr(p, '\n', len);
	if (!eol)
		return -1;
	n = (size_t)(eol - p);
	if (n && p[n - 1] == '\r')
		n--;
	sp1 = memchr(p, ' ', n);
	if (!sp1 || sp1 == p || (size_t)(sp1 - p) >= sizeof(h->method))
		return -1;
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - p));
	if (!sp2 || sp2 == sp1 + 1 || (size_t)(sp2 - sp1 - 1) >= sizeof(h->path))
		return -1;
	if ((size_t)(p + n - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) && strncmp(sp2 + 1, "HTTP/1.0", 8)))
		return -1;
	memcpy(h->method, p, (size_t)(sp1 - p));
	memcpy(h->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (h->path[0] != '/')
		return -1;
	for (p = eol + 1; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			break;
		n = (size_t)(eol - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (!n)
			break;
		if ((v = header_value(p, n, "X-metadata-token", &vl)) ||
		    (v = header_value(p, n, "X-aws-ec2-metadata-token", &vl)))
			h->token = v, h->token_len = vl;
		else if ((v = header_value(p, n, "X-metadata-token-ttl-seconds",
					   &vl)) ||
			 (v = header_value(p, n,
					   "X-aws-ec2-metadata-token-ttl-seconds",
					   &vl)))
			h->ttl = v, h->ttl_len = vl;
		else if ((v = header_value(p, n, "Accept", &vl)))
			h->accept = v, h->accept_len = vl;
		else if (header_value(p, n, "X-Forwarded-For", &vl))
			h->forwarded = true;
		else if ((v = header_value(p, n, "Content-Length", &vl)) &&
			 !(vl == 1 && v[0] == '0'))
			h->body = true;
		else if (header_value(p, n, "Transfer-Encoding", &vl))
			h->body = true;
	}
	return 0;
}

static void reply_msg(struct reply *r, int status, const char *msg)
{
	r->status = status;
	r->type = "text/plain";
	r->msg = msg;
}

/* A token valid now? Lock held. */
static bool token_ok(struct mmds *m, const char *t, size_t n, uint64_t now)
{
	unsigned int i, k;
	unsigned char diff;

	if (n != TOKEN_CHARS)
		return false;
	for (i = 0; i < MMDS_MAX_TOKENS; i++) {
		if (!m->tokens[i].expires_ns || m->tokens[i].expires_ns <= now)
			continue;
		diff = 0;
		for (k = 0; k < TOKEN_CHARS; k++)
			diff |= (unsigned char)(m->tokens[i].text[k] ^ t[k]);
		if (!diff)
			return true;
	}
	return false;
}

/* A new token for @ttl seconds. Lock held. Return: it, or NULL. */
static const char *token_new(struct mmds *m, unsigned long ttl, uint64_t now)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
				  "qrstuvwxyz0123456789-_";
	unsigned char raw[TOKEN_BYTES + 1] = { 0 };
	struct mmds_token *slot = &m->tokens[0];
	unsigned int i, bits = 0, acc = 0, k = 0;

	if (getrandom(raw, TOKEN_BYTES, 0) != TOKEN_BYTES)
		return NULL;
	for (i = 0; i < MMDS_MAX_TOKENS; i++) {
		struct mmds_token *t = &m->tokens[i];

		if (t->expires_ns <= now) {
			slot = t;
			break;
		}
		if (t->expires_ns < slot->expires_ns)
			slot = t;
	}
	for (i = 0; i < TOKEN_BYTES && k < TOKEN_CHARS; i++) {
		acc = (acc << 8) | raw[i];
		bits += 8;
		while (bits >= 6 && k < TOKEN_CHARS) {
			slot->text[k++] = b64[(acc >> (bits - 6)) & 63];
			bits -= 6;
		}
	}
	if (bits && k < TOKEN_CHARS)
		slot->text[k++] = b64[(acc << (6 - bits)) & 63];
	slot->text[k] = '\0';
	slot->expires_ns = now + ttl * 1000000000ull;
	return slot->text;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* @o in IMDS text: an object's keys (sorted, '/' after an object's), a
 * string's value. Lock held. */
static void imds_text(struct json_object *o, struct reply *r)
{
	const char **keys;
	size_t n = 0, i, len = 0;
	char *p;

	if (json_object_is_type(o, json_type_string)) {
		r->len = (size_t)json_object_get_string_len(o);
		r->body = malloc(r->len + 1);
		if (r->body)
			memcpy(r->body, json_object_get_string(o), r->len);
		return;
	}
	if (!json_object_is_type(o, json_type_object)) {
		reply_msg(r, 501, "Cannot retrieve value. The value has an "
			  "unsupported type.");
		return;
	}
	keys = calloc((size_t)json_object_object_length(o) + 1,
		      sizeof(*keys));
	if (!keys)
		return;
	json_object_object_foreach(o, k, v) {
		(void)v;
		keys[n++] = k;
		len += strlen(k) + 2;
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	r->body = p = malloc(len + 1);
	if (p) {
		for (i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);

			if (i)
				*p++ = '\n';
			memcpy(p, keys[i], kl);
			p += kl;
			if (json_object_is_type(json_object_object_get(
							o, keys[i]),
						json_type_object))
				*p++ = '/';
		}
		r->len = (size_t)(p - r->body);
	}
	free(keys);
}

/* Resolve @path (RFC 6901 tokens between '/', empty ones skipped; a
 * query string ignored) in the store. Lock held. */
static struct json_object *lookup(struct mmds *m, char *path)
{
	struct json_object *o = m->store, *next;
	char *tok, *save = NULL, *q, *w;

	q = strchr(path, '?');
	if (q)
		*q = '\0';
	for (tok = strtok_r(path, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		for (q = w = tok; *q; q++) {
			if (q[0] == '~' && q[1] == '1')
				*w++ = '/', q++;
			else if (q[0] == '~' && q[1] == '0')
				*w++ = '~', q++;
			else
				*w++ = *q;
		}
		*w = '\0';
		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, tok, &next))
			return NULL;
		o = next;
	}
	return o;
}

static void answer_get(struct mmds *m, struct http_req *h, uint64_t now,
		       struct reply *r)
{
	struct json_object *o;
	const char *s;
	bool json;

	if (m->cfg.version == 2 &&
	    (!h->token || !token_ok(m, h->token, h->token_len, now))) {
		reply_msg(r, 401, h->token ?
			  "MMDS token not valid." :
			  "No MMDS token provided. Use `X-metadata-token` "
			  "header to specify the session token.");
		return;
	}
	o = m->store ? lookup(m, h->path) : NULL;
	if (!o) {
		reply_msg(r, 404, "Resource not found.");
		return;
	}
	json = !m->cfg.imds_compat && h->accept &&
	       memmem(h->accept, h->accept_len, "application/json", 16);
	r->status = 200;
	if (!json) {
		r->type = "text/plain";
		imds_text(o, r);
		return;
	}
	r->type = "application/json";
	s = json_object_to_json_string_length(o, JSON_FLAGS,
					      &r->len);
	r->body = s ? malloc(r->len + 1) : NULL;
	if (r->body)
		memcpy(r->body, s, r->len);
}

static void answer_put(struct mmds *m, struct http_req *h, uint64_t now,
		       struct reply *r)
{
	char ttl_s[16], *end;
	unsigned long ttl;
	const char *t;

	if (strcmp(h->path, "/latest/api/token")) {
		reply_msg(r, 400, "Invalid URI: only /latest/api/token "
			  "takes PUT.");
		return;
	}
	if (h->forwarded) {
		reply_msg(r, 400, "Invalid header. Reason: Unsupported "
			  "header name. Key: X-Forwarded-For");
		return;
	}
	if (!h->ttl || !h->ttl_len || h->ttl_len >= sizeof(ttl_s)) {
		reply_msg(r, 400, "Token time to live value not found. Use "
			  "`X-metadata-token-ttl-seconds` header to specify "
			  "the token's lifetime.");
		return;
	}
	memcpy(ttl_s, h->ttl, h->ttl_len);
	ttl_s[h->ttl_len] = '\0';
	errno = 0;
	ttl = strtoul(ttl_s, &end, 10);
	if (errno || *end || ttl_s[0] < '0' || ttl_s[0] > '9' || ttl < 1 ||
	    ttl > MMDS_TOKEN_TTL_MAX) {
		reply_msg(r, 400, "Invalid time to live value provided for "
			  "token: it must be 1 to 21600 seconds.");
		return;
	}
	t = token_new(m, ttl, now);
	if (!t)
		return; /* 500 */
	r->status = 200;
	r->type = "text/plain";
	r->len = TOKEN_CHARS;
	r->body = malloc(TOKEN_CHARS + 1);
	if (r->body)
		memcpy(r->body, t, TOKEN_CHARS);
}

size_t mmds_http_answer(struct mmds *m, const char *req, size_t len,
			uint64_t now_ns, char **out)
{
	struct reply r = { .status = 500, .type = "text/plain" };
	struct http_req *h = malloc(sizeof(*h));
	const char *body;
	size_t blen, hl, total;
	char head[256];
	char *buf;

	*out = NULL;
	if (!h)
		return 0;
	if (parse_req(req, len, h)) {
		reply_msg(&r, 400, "Invalid HTTP request.");
	} else if (h->body) {
		reply_msg(&r, 400, "A request body is not supported.");
	} else if (!strcmp(h->method, "GET")) {
		pthread_mutex_lock(&m->lock);
		answer_get(m, h, now_ns, &r);
		pthread_mutex_unlock(&m->lock);
	} else if (!strcmp(h->method, "PUT")) {
		pthread_mutex_lock(&m->lock);
		answer_put(m, h, now_ns, &r);
		pthread_mutex_unlock(&m->lock);
	} else {
		reply_msg(&r, 405, "Not allowed HTTP method.");
		r.allow = true;
	}
	free(h);
	if (r.status == 200 && !r.body) {
		r.len = 0;
		r.status = 500;
		r.msg = "out of memory";
	}
	body = r.body ? r.body : r.msg ? r.msg : "";
	blen = r.body ? r.len : strlen(body);
	hl = (size_t)snprintf(head, sizeof(head),
			      "HTTP/1.1 %d %s\r\nServer: microvm MMDS\r\n"
			      "Content-Type: %s\r\nContent-Length: %zu\r\n"
			      "%sConnection: close\r\n\r\n",
			      r.status, reason(r.status), r.type, blen,
			      r.allow ? "Allow: GET, PUT\r\n" : "");
	total = hl + blen;
	buf = malloc(total);
	if (buf) {
		memcpy(buf, head, hl);
		memcpy(buf + hl, body, blen);
	}
	free(r.body);
	*out = buf;
	return buf ? total : 0;
}
