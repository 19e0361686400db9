// SPDX-License-Identifier: Apache-2.0
/*
 * The logger's file sink (Firecracker's logger): lines in its format
 * ("DATE [ID:THREAD(:LEVEL)(:FILE:LINE)] text"), its level, the module
 * filter on the origin, Off, and a full pipe: the line is dropped and
 * counted, the caller never waits. stderr keeps its own level.
 */
#include "util/log.h"
#include "test.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int rd = -1;

/* A fresh non-blocking pipe as the sink; its read end in rd. */
static void sink(int level, bool show_level, bool show_origin,
		 const char *module)
{
	struct log_sink_config c = {
		.level = level, .show_level = show_level,
		.show_origin = show_origin, .id = "vm-7", .module = module,
	};
	int p[2];

	CHECK(!pipe2(p, O_NONBLOCK | O_CLOEXEC));
	if (rd >= 0)
		close(rd);
	rd = p[0];
	c.fd = p[1];
	log_set_sink(&c);
}

/* What the sink got since the last call (NUL-terminated). */
static const char *drain(void)
{
	static char buf[1 << 17];
	ssize_t n = read(rd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* "YYYY-MM-DDTHH:MM:SS.nnnnnnnnn " */
static bool stamped(const char *l)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddddd ";
	size_t i;

	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? (l[i] < '0' || l[i] > '9') :
				      l[i] != shape[i])
			return false;
	}
	return !strncmp(l, "20", 2);
}

static void test_format(void)
{
	const char *out;
	int line;

	log_set_level(LOG_ERROR); /* stderr: errors only */
	log_set_thread_name("fc_vcpu 0");
	sink(LOG_INFO, false, false, NULL);
	log_info("hello %d", 42);
	out = drain();
	CHECK(stamped(out));
	CHECK(!strcmp(out + 30, "[vm-7:fc_vcpu 0] hello 42\n"));
	log_debug("not at Info");
	CHECK(!*drain());

	sink(LOG_DEBUG, true, true, NULL);
	line = __LINE__ + 1;
	log_warn("careful");
	out = drain();
	{
		char want[128];

		snprintf(want, sizeof(want),
			 "[vm-7:fc_vcpu 0:WARN:unit/test_log.c:%d] careful\n",
			 line);
		CHECK(!strcmp(out + 30, want));
	}
	log_msg(LOG_DEBUG, "no origin");
	CHECK(!strcmp(drain() + 30, "[vm-7:fc_vcpu 0:DEBUG:?:?] no origin\n"));
}

static void test_module_and_off(void)
{
	sink(LOG_DEBUG, false, false, "virtio");
	log_info("from the tests");
	CHECK(!*drain());
	sink(LOG_DEBUG, false, false, "unit/test_log");
	log_info("from here");
	CHECK(strstr(drain(), "] from here\n") != NULL);
	sink(-1, false, false, NULL);
	log_error("off");
	CHECK(!*drain());
}

/* A pipe nobody reads fills; the next lines are dropped and counted. */
static void test_full(void)
{
	uint64_t before;
	int i;

	sink(LOG_INFO, false, false, NULL);
	before = log_missed_count();
	for (i = 0; i < 2000; i++)
		log_info("%0200d", i);
	CHECK(log_missed_count() > before);
	CHECK(log_missed_count() - before < 2000);
}

int main(void)
{
	test_format();
	test_module_and_off();
	test_full();
	return test_done();
}
