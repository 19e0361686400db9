/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strict JSON field readers for the Firecracker objects (fc_config*.c):
 * each checks the type and range of one field and, on a mismatch, writes
 * one fault message naming the object and the field. Private to src/api.
 */
#ifndef MICROVM_API_FC_JSON_H
#define MICROVM_API_FC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define FC_JSON_DEPTH 16 /* nesting a body or config file may have */

/* Where messages go, and the object they are about ("machine-config"). */
struct fc_ctx {
	char obj[320];
	char *err;
	size_t errlen;
};

/** fc_ctx_init() - @c about @obj (a printf format). */
void fc_ctx_init(struct fc_ctx *c, char *err, size_t errlen,
		 const char *obj, ...) __attribute__((format(printf, 4, 5)));

/** fc_fail() - "<obj>: <message>" into the error; Return: -EINVAL. */
int fc_fail(struct fc_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * fc_parse_object() - parse @len bytes of @json (no trailing data) whose
 * top level must be an object. Return: the object (json_object_put() it)
 * or NULL with the error set.
 */
struct json_object *fc_parse_object(struct fc_ctx *c, const char *json,
				    size_t len);

/* Each reader: 0, or -EINVAL naming @key. @v NULL is JSON null. */
int fc_get_bool(struct fc_ctx *c, const char *key, struct json_object *v,
		bool *out);
/* A string of 1 to FC_STRING_MAX bytes with no NUL, as a view. */
int fc_get_str(struct fc_ctx *c, const char *key, struct json_object *v,
	       const char **out);
int fc_get_u64(struct fc_ctx *c, const char *key, struct json_object *v,
	       uint64_t min, uint64_t max, uint64_t *out);
/*
 * One of @names (a NULL-terminated list), compared with strcasecmp when
 * @nocase; *@out is its index.
 */
int fc_get_enum(struct fc_ctx *c, const char *key, struct json_object *v,
		const char *const *names, bool nocase, unsigned int *out);
/* The object @v, or -EINVAL naming @key. */
int fc_get_object(struct fc_ctx *c, const char *key, struct json_object *v);
/* Unknown @key: -EINVAL naming it. */
int fc_unknown(struct fc_ctx *c, const char *key);

/* json-c output helpers: add to @o, or no-op when @v is NULL. */
void fc_add_str(struct json_object *o, const char *key, const char *v);
void fc_add_u64(struct json_object *o, const char *key, uint64_t v);
void fc_add_bool(struct json_object *o, const char *key, bool v);
/* @o as compact JSON in a malloc'd string, then @o released; NULL: ENOMEM */
char *fc_json_finish(struct json_object *o);

/** fc_dup_opt() - *@dst = a copy of @s (NULL: NULL); 0, or -ENOMEM with
 * *@dst NULL. */
int fc_dup_opt(char **dst, const char *s);

/** fc_oom() - "out of memory" into @c's message. Return: -ENOMEM. */
int fc_oom(struct fc_ctx *c);

#endif
