// SPDX-License-Identifier: Apache-2.0
/*
 * Strict JSON field readers for the Firecracker objects: json-c parses
 * (bounded depth, strict mode, nothing after the value), and each reader
 * checks one field's type and range, naming the object and the field
 * when it does not fit.
 */
#include "api/fc_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/fc_config.h"

void fc_ctx_init(struct fc_ctx *c, char *err, size_t errlen,
		 const char *obj, ...)
{
	va_list ap;

	c->err = err;
	c->errlen = errlen;
	va_start(ap, obj);
	vsnprintf(c->obj, sizeof(c->obj), obj, ap);
	va_end(ap);
}

int fc_fail(struct fc_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->errlen)
		snprintf(c->err, c->errlen, "%s: %s", c->obj, msg);
	return -EINVAL;
}

struct json_object *fc_parse_object(struct fc_ctx *c, const char *json,
				    size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;

	if (!json || !len) {
		fc_fail(c, "no JSON body");
		return NULL;
	}
	if (len > FC_CONFIG_FILE_MAX || len > INT32_MAX) {
		fc_fail(c, "JSON body of %zu bytes, more than %u", len,
			FC_CONFIG_FILE_MAX);
		return NULL;
	}
	tok = json_tokener_new_ex(FC_JSON_DEPTH);
	if (!tok) {
		fc_fail(c, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o && jerr == json_tokener_continue) {
		/* The end of input ends a top-level literal ("null", 12). */
		o = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
	}
	json_tokener_free(tok);
	if (!o) {
		if (jerr == json_tokener_success)
			fc_fail(c, "the body is null, not an object");
		else
			fc_fail(c, "not valid JSON at byte %zu: %s", end,
				json_tokener_error_desc(jerr));
		return NULL;
	}
	if (end < len) {
		/* json-c stops at a NUL: whatever follows it is refused. */
		fc_fail(c, "not valid JSON at byte %zu: data after the object",
			end);
		json_object_put(o);
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		fc_fail(c, "the body must be a JSON object, not %s",
			json_type_to_name(json_object_get_type(o)));
		json_object_put(o);
		return NULL;
	}
	return o;
}

static const char *type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "null";
}

int fc_get_bool(struct fc_ctx *c, const char *key, struct json_object *v,
		bool *out)
{
	if (!json_object_is_type(v, json_type_boolean))
		return fc_fail(c, "%s must be true or false, not %s", key,
			       type_name(v));
	*out = json_object_get_boolean(v);
	return 0;
}

int fc_get_str(struct fc_ctx *c, const char *key, struct json_object *v,
	       const char **out)
{
	const char *s;
	int len;

	if (!json_object_is_type(v, json_type_string))
		return fc_fail(c, "%s must be a string, not %s", key,
			       type_name(v));
	s = json_object_get_string(v);
	len = json_object_get_string_len(v);
	if (len <= 0)
		return fc_fail(c, "%s must not be empty", key);
	if ((size_t)len > FC_STRING_MAX)
		return fc_fail(c, "%s is %d bytes long, more than %d", key,
			       len, FC_STRING_MAX);
	if (strlen(s) != (size_t)len)
		return fc_fail(c, "%s contains a NUL character", key);
	*out = s;
	return 0;
}

int fc_get_u64(struct fc_ctx *c, const char *key, struct json_object *v,
	       uint64_t min, uint64_t max, uint64_t *out)
{
	int64_t n;

	/* json-c saturates integers beyond int64 at INT64_MAX/INT64_MIN,
	 * and every max here is below INT64_MAX: too big stays too big. */
	if (!json_object_is_type(v, json_type_int))
		return fc_fail(c, "%s must be an integer, not %s", key,
			       type_name(v));
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
		return fc_fail(c, "%s is %s%" PRId64 ", must be %" PRIu64
			       " to %" PRIu64, key,
			       n == INT64_MAX || n == INT64_MIN ? "about " : "",
			       n, min, max);
	*out = (uint64_t)n;
	return 0;
}

int fc_get_enum(struct fc_ctx *c, const char *key, struct json_object *v,
		const char *const *names, bool nocase, unsigned int *out)
{
	char list[256] = "";
	const char *s;
	unsigned int i;
	int ret;

	ret = fc_get_str(c, key, v, &s);
	if (ret)
		return ret;
	for (i = 0; names[i]; i++) {
		if (nocase ? !strcasecmp(s, names[i]) : !strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s\"%s\"", i ? ", " : "", names[i]);
	}
	return fc_fail(c, "%s \"%.64s\" is not one of %s", key, s, list);
}

int fc_get_object(struct fc_ctx *c, const char *key, struct json_object *v)
{
	if (!json_object_is_type(v, json_type_object))
		return fc_fail(c, "%s must be an object, not %s", key,
			       type_name(v));
	return 0;
}

int fc_unknown(struct fc_ctx *c, const char *key)
{
	return fc_fail(c, "unknown field \"%.64s\"", key);
}

void fc_add_str(struct json_object *o, const char *key, const char *v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_string(v));
}

void fc_add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void fc_add_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

char *fc_json_finish(struct json_object *o)
{
	const char *s;
	char *out = NULL;

	if (!o)
		return NULL;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s)
		out = strdup(s);
	json_object_put(o);
	return out;
}

int fc_dup_opt(char **dst, const char *s)
{
	*dst = NULL;
	if (s && !(*dst = strdup(s)))
		return -ENOMEM;
	return 0;
}

int fc_oom(struct fc_ctx *c)
{
	fc_fail(c, "out of memory");
	return -ENOMEM;
}
