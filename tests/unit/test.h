/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal test harness shared by the unit tests: CHECK() records a failure
 * with file and line and carries on, so one run reports every broken row of a
 * table-driven test. test_done() prints "N passed, M failed" and returns the
 * process exit status (0 when nothing failed).
 */
#ifndef MICROVM_TEST_H
#define MICROVM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_pass_count;
static int test_fail_count;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (cond) {                                                  \
			test_pass_count++;                                   \
		} else {                                                     \
			test_fail_count++;                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
		}                                                            \
	} while (0)

#define CHECK_EQ(a, b)                                                       \
	do {                                                                 \
		long long check_a_ = (long long)(a);                         \
		long long check_b_ = (long long)(b);                         \
		if (check_a_ == check_b_) {                                  \
			test_pass_count++;                                   \
		} else {                                                     \
			test_fail_count++;                                   \
			fprintf(stderr,                                      \
				"%s:%d: CHECK_EQ failed: %s == %s "          \
				"(%lld != %lld)\n",                          \
				__FILE__, __LINE__, #a, #b, check_a_,        \
				check_b_);                                   \
		}                                                            \
	} while (0)

static inline int test_done(void)
{
	printf("%d passed, %d failed\n", test_pass_count, test_fail_count);
	return test_fail_count ? 1 : 0;
}

#endif
