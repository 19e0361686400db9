/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The handler the API server tests serve: /echo answers the request as
 * JSON, /empty 204, /zero forgets to set a status (the server makes it
 * 500), /fault a fault message that needs escaping, /tid the control
 * thread's id, /forbidden makes a call the control class forbids
 * (socket()); anything else is a 404 fault.
 */
#ifndef MICROVM_TEST_API_TEST_HANDLER_H
#define MICROVM_TEST_API_TEST_HANDLER_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/server.h"

struct test_state {
	atomic_int calls;
	atomic_int ticks;
};

#define TEST_FAULT_TEXT "bad \"value\"\n\\ \x01 /drives"

static inline char *test_json_strdup(struct json_object *o)
{
	char *s = strdup(json_object_to_json_string_ext(o,
					JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return s;
}

static inline void test_handler(void *opaque,
				const struct api_request *req,
				struct api_response *resp)
{
	struct test_state *t = opaque;
	struct json_object *o;

	if (t)
		atomic_fetch_add(&t->calls, 1);
	if (!strcmp(req->path, "/echo")) {
		o = json_object_new_object();
		json_object_object_add(o, "method",
				       json_object_new_string(req->method));
		json_object_object_add(o, "path",
				       json_object_new_string(req->path));
		json_object_object_add(o, "body_len",
				       json_object_new_int64((int64_t)req->body_len));
		if (req->body)
			json_object_object_add(o, "body",
				json_object_new_string_len(req->body,
							   (int)req->body_len));
		api_response_json(resp, 200, test_json_strdup(o));
	} else if (!strcmp(req->path, "/empty")) {
		api_response_json(resp, 204, NULL);
	} else if (!strcmp(req->path, "/zero")) {
		/* no status */
	} else if (!strcmp(req->path, "/fault")) {
		api_response_fault(resp, 400, "%s", TEST_FAULT_TEXT);
	} else if (!strcmp(req->path, "/tid")) {
		o = json_object_new_object();
		json_object_object_add(o, "tid",
				       json_object_new_int(gettid()));
		api_response_json(resp, 200, test_json_strdup(o));
	} else if (!strcmp(req->path, "/forbidden")) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		api_response_fault(resp, 500, "socket() returned %d", fd);
	} else {
		api_response_fault(resp, 404, "no %s %s", req->method,
				   req->path);
	}
}

/* The /fault body parses as JSON and gives the text back exactly. */
static inline bool check_fault_json(const char *body)
{
	struct json_object *o = json_tokener_parse(body), *m;
	bool ok = o && json_object_object_get_ex(o, "fault_message", &m) &&
		  json_object_is_type(m, json_type_string) &&
		  !strcmp(json_object_get_string(m), TEST_FAULT_TEXT) &&
		  json_object_object_length(o) == 1;

	json_object_put(o);
	return ok;
}

#endif
