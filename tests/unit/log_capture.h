/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For unit tests that check what microvm logged: the log sink into a
 * non-blocking pipe (log_capture()), and what came since the last look
 * (logged()). One capture per test executable.
 */
#ifndef MICROVM_TEST_LOG_CAPTURE_H
#define MICROVM_TEST_LOG_CAPTURE_H

#include <fcntl.h>
#include <unistd.h>

#include "test.h"
#include "util/log.h"

static int log_capture_rd = -1;

/* From now on messages of @level and above go to the pipe. */
static inline void log_capture(enum log_level level)
{
	struct log_sink_config c = { .level = level, .id = "t" };
	int p[2];

	CHECK(!pipe2(p, O_NONBLOCK | O_CLOEXEC));
	log_capture_rd = p[0];
	c.fd = p[1];
	log_set_sink(&c);
}

/* What was logged since the last call (NUL-terminated). */
static inline const char *logged(void)
{
	static char buf[1 << 14];
	ssize_t n = read(log_capture_rd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

#endif /* MICROVM_TEST_LOG_CAPTURE_H */
