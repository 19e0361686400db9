// SPDX-License-Identifier: Apache-2.0
/*
 * The API server against curl --unix-socket, with requests written as
 * Firecracker's getting-started guide writes them (PUT with a JSON body,
 * GET, PATCH), and a body over 1024 bytes sent after "Expect:
 * 100-continue". Exits 77 where curl is not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "api_client.h"
#include "api_test_handler.h"
#include "api/server.h"

static char sock_path[108];

/* Run curl with @args after the socket; its stdout into @out. */
static int run_curl(const char *args, char *out, size_t cap)
{
	char cmd[8192];
	size_t got = 0, n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "curl -sS -i --max-time 10 --unix-socket "
		 "'%s' %s", sock_path, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (got + 1 < cap && (n = fread(out + got, 1, cap - 1 - got, p)))
		got += n;
	out[got] = '\0';
	return pclose(p);
}

static void test_curl(void)
{
	struct test_state t = { 0 };
	struct api_server *s = NULL;
	static char out[16384], big[3000], args[4096];
	char err[256];

	CHECK_EQ(api_server_open(&s, sock_path, test_handler, &t, 0, NULL,
				 err, sizeof(err)), 0);
	if (!s)
		return;
	CHECK_EQ(api_server_start(s), 0);
	/* As Firecracker's getting-started guide writes its requests. */
	CHECK_EQ(run_curl("-X PUT 'http://localhost/echo' -H 'Accept: "
			  "application/json' -H 'Content-Type: "
			  "application/json' -d '{\"vcpu_count\": 2, "
			  "\"mem_size_mib\": 1024}'", out, sizeof(out)), 0);
	CHECK(strstr(out, "HTTP/1.1 200 OK\r\n") != NULL);
	CHECK(strstr(out, "\"body\":\"{\\\"vcpu_count\\\": 2, "
		     "\\\"mem_size_mib\\\": 1024}\"") != NULL);
	CHECK_EQ(run_curl("'http://localhost/empty'", out, sizeof(out)), 0);
	CHECK(strstr(out, "HTTP/1.1 204 No Content\r\n") != NULL);
	CHECK_EQ(run_curl("-X PATCH 'http://localhost/fault' -d '{}'", out,
			  sizeof(out)), 0);
	CHECK(strstr(out, "HTTP/1.1 400 Bad Request\r\n") != NULL);
	CHECK(check_fault_json(cli_body(out)));
	/* Over 1024 bytes: curl asks "Expect: 100-continue" first. */
	memset(big, 'b', sizeof(big) - 1);
	snprintf(args, sizeof(args), "-X PUT 'http://localhost/echo' "
		 "-H 'Expect: 100-continue' -d '%s'", big);
	CHECK_EQ(run_curl(args, out, sizeof(out)), 0);
	CHECK(strstr(out, "HTTP/1.1 100 Continue\r\n") != NULL);
	CHECK(strstr(out, "\"body_len\":2999") != NULL);
	CHECK_EQ(atomic_load(&t.calls), 4);
	api_server_free(s);
}

int main(void)
{
	if (system("curl --version >/dev/null 2>&1")) {
		printf("curl is not installed: skipped\n");
		return 77;
	}
	snprintf(sock_path, sizeof(sock_path),
		 "/tmp/microvm-api-curl-%d.sock", (int)getpid());
	unlink(sock_path);
	test_curl();
	unlink(sock_path);
	return test_done();
}
