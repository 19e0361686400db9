// SPDX-License-Identifier: Apache-2.0
/*
 * defer_call: immediate calls outside a section, nesting, collapsing of
 * repeated pairs, first-deferred order, per-thread isolation, the overflow
 * rule, and callbacks that defer again while the outermost end runs.
 */
#include <pthread.h>
#include <stdbool.h>

#include "test.h"
#include "util/defer_call.h"

#define TRACE_MAX 256

/* Each call appends its tag; tags identify (fn, opaque) pairs. */
struct trace {
	int tags[TRACE_MAX];
	int n;
};

static _Thread_local struct trace trace;

struct tagged {
	int tag;
};

static void record(void *opaque)
{
	struct tagged *t = opaque;

	if (trace.n < TRACE_MAX)
		trace.tags[trace.n++] = t->tag;
}

/* Same argument as record() but a different function: a distinct pair. */
static void record_neg(void *opaque)
{
	struct tagged *t = opaque;

	if (trace.n < TRACE_MAX)
		trace.tags[trace.n++] = -t->tag;
}

static bool trace_is(const int *want, int n)
{
	int i;

	if (trace.n != n)
		return false;
	for (i = 0; i < n; i++)
		if (trace.tags[i] != want[i])
			return false;
	return true;
}

static struct tagged t1 = { 1 }, t2 = { 2 }, t3 = { 3 };

static void test_immediate(void)
{
	static const int want[] = { 1, 2, 1 };

	trace.n = 0;
	defer_call(record, &t1);
	CHECK_EQ(trace.n, 1);
	defer_call(record, &t2);
	defer_call(record, &t1); /* no collapsing outside a section */
	CHECK(trace_is(want, 3));
}

/* One row per scenario: pairs deferred inside one section, then the trace. */
static void test_dedupe_order(void)
{
	static const struct {
		const char *name;
		void (*fn[6])(void *);
		struct tagged *arg[6];
		int n;
		int want[6];
		int nwant;
	} rows[] = {
		{ "single", { record }, { &t1 }, 1, { 1 }, 1 },
		{ "repeat", { record, record, record }, { &t1, &t1, &t1 }, 3,
		  { 1 }, 1 },
		{ "first-deferred order",
		  { record, record, record, record, record },
		  { &t3, &t1, &t3, &t2, &t1 }, 5, { 3, 1, 2 }, 3 },
		{ "same opaque, other fn",
		  { record, record_neg, record, record_neg },
		  { &t2, &t2, &t2, &t2 }, 4, { 2, -2 }, 2 },
		{ "same fn, other opaque", { record, record }, { &t2, &t1 },
		  2, { 2, 1 }, 2 },
	};
	size_t r;
	int i;

	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		trace.n = 0;
		defer_call_begin();
		for (i = 0; i < rows[r].n; i++)
			defer_call(rows[r].fn[i], rows[r].arg[i]);
		CHECK_EQ(trace.n, 0);
		defer_call_end();
		if (!trace_is(rows[r].want, rows[r].nwant))
			fprintf(stderr, "row \"%s\" wrong\n", rows[r].name);
		CHECK(trace_is(rows[r].want, rows[r].nwant));
	}
}

static void test_nesting(void)
{
	static const int want[] = { 1, 2, 3 };

	trace.n = 0;
	defer_call_begin();
	defer_call(record, &t1);
	defer_call_begin();
	defer_call(record, &t2);
	defer_call(record, &t1);
	defer_call_begin();
	defer_call(record, &t3);
	defer_call_end();
	CHECK_EQ(trace.n, 0);
	defer_call_end();
	CHECK_EQ(trace.n, 0); /* only the outermost end runs them */
	defer_call_end();
	CHECK(trace_is(want, 3));

	/* The state is empty afterwards: a new section starts clean. */
	trace.n = 0;
	defer_call_begin();
	defer_call_end();
	CHECK_EQ(trace.n, 0);
}

static void test_overflow(void)
{
	static struct tagged many[DEFER_CALL_MAX + 2];
	int i;

	for (i = 0; i < DEFER_CALL_MAX + 2; i++)
		many[i].tag = 100 + i;
	trace.n = 0;
	defer_call_begin();
	for (i = 0; i < DEFER_CALL_MAX; i++)
		defer_call(record, &many[i]);
	CHECK_EQ(trace.n, 0);
	defer_call(record, &many[0]); /* held pair: still collapsed */
	CHECK_EQ(trace.n, 0);
	defer_call(record, &many[DEFER_CALL_MAX]); /* full: runs at once */
	CHECK_EQ(trace.n, 1);
	CHECK_EQ(trace.tags[0], 100 + DEFER_CALL_MAX);
	defer_call(record, &many[DEFER_CALL_MAX + 1]);
	CHECK_EQ(trace.n, 2);
	defer_call_end();
	CHECK_EQ(trace.n, DEFER_CALL_MAX + 2);
	for (i = 0; i < DEFER_CALL_MAX; i++)
		CHECK_EQ(trace.tags[2 + i], 100 + i);
}

/* Callbacks that defer while the outermost end is running them. */
static void defer_again(void *opaque)
{
	(void)opaque;
	record(&t1);
	defer_call(record, &t2); /* section closed: runs at once */
	record(&t3);
}

static void nested_section(void *opaque)
{
	(void)opaque;
	defer_call_begin();
	defer_call(record, &t2);
	defer_call(record, &t2);
	CHECK_EQ(trace.n, 1);
	defer_call_end(); /* its own outermost end */
	record(&t3);
}

static void test_reentry(void)
{
	static const int want_again[] = { 1, 2, 3, 3 };
	static const int want_nested[] = { 1, 2, 3 };

	trace.n = 0;
	defer_call_begin();
	defer_call(defer_again, NULL);
	defer_call(record, &t3);
	defer_call_end();
	CHECK(trace_is(want_again, 4));

	trace.n = 0;
	defer_call_begin();
	defer_call(record, &t1);
	defer_call(nested_section, NULL);
	defer_call_end();
	CHECK(trace_is(want_nested, 3));
}

struct thread_arg {
	pthread_barrier_t *barrier;
	int tag;
	int seen_before_end; /* calls that ran before this thread's end */
	int seen_after_end;
};

/*
 * Two threads hold sections open at the same time and defer the same pair;
 * each thread's end runs only its own records, once.
 */
static void *thread_fn(void *p)
{
	struct thread_arg *a = p;
	struct tagged mine = { a->tag };

	trace.n = 0;
	pthread_barrier_wait(a->barrier);
	defer_call_begin();
	defer_call(record, &t1);
	defer_call(record, &mine);
	pthread_barrier_wait(a->barrier); /* both have deferred */
	if (a->tag == 20)
		defer_call_end(); /* the other thread's section stays open */
	pthread_barrier_wait(a->barrier);
	a->seen_before_end = trace.n;
	if (a->tag != 20)
		defer_call_end();
	a->seen_after_end = trace.n;
	if (trace.n == 2 && (trace.tags[0] != 1 || trace.tags[1] != a->tag))
		a->seen_after_end = -1;
	return NULL;
}

static void test_threads(void)
{
	pthread_barrier_t barrier;
	struct thread_arg a = { &barrier, 10, 0, 0 };
	struct thread_arg b = { &barrier, 20, 0, 0 };
	pthread_t ta, tb;

	trace.n = 0;
	CHECK_EQ(pthread_barrier_init(&barrier, NULL, 2), 0);
	CHECK_EQ(pthread_create(&ta, NULL, thread_fn, &a), 0);
	CHECK_EQ(pthread_create(&tb, NULL, thread_fn, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&barrier);
	CHECK_EQ(a.seen_before_end, 0);  /* b's end ran nothing of a's */
	CHECK_EQ(a.seen_after_end, 2);
	CHECK_EQ(b.seen_before_end, 2);
	CHECK_EQ(b.seen_after_end, 2);
	CHECK_EQ(trace.n, 0);            /* the main thread saw nothing */
}

int main(void)
{
	test_immediate();
	test_dedupe_order();
	test_nesting();
	test_overflow();
	test_reentry();
	test_threads();
	return test_done();
}
