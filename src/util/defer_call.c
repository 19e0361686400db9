// SPDX-License-Identifier: Apache-2.0
/*
 * Thread-local section state: a nesting depth and a small array of distinct
 * (fn, opaque) pairs. The outermost end moves the pairs out of the thread
 * state before calling them, so callbacks see a closed, empty section.
 */
#include "util/defer_call.h"

#include <assert.h>
#include <stddef.h>

struct defer_entry {
	void (*fn)(void *);
	void *opaque;
};

struct defer_state {
	unsigned int depth;
	unsigned int nr;
	struct defer_entry entries[DEFER_CALL_MAX];
};

static _Thread_local struct defer_state defer_state;

void defer_call_begin(void)
{
	defer_state.depth++;
	assert(defer_state.depth != 0);
}

void defer_call_end(void)
{
	struct defer_entry run[DEFER_CALL_MAX];
	struct defer_state *st = &defer_state;
	unsigned int i, nr;

	assert(st->depth > 0);
	if (--st->depth > 0)
		return;

	/*
	 * Take the pairs out first: a callback may defer or open a section of
	 * its own, and must find this thread's state closed and empty.
	 */
	nr = st->nr;
	for (i = 0; i < nr; i++)
		run[i] = st->entries[i];
	st->nr = 0;

	for (i = 0; i < nr; i++)
		run[i].fn(run[i].opaque);
}

void defer_call(void (*fn)(void *), void *opaque)
{
	struct defer_state *st = &defer_state;
	unsigned int i;

	if (st->depth == 0) {
		fn(opaque);
		return;
	}
	for (i = 0; i < st->nr; i++)
		if (st->entries[i].fn == fn && st->entries[i].opaque == opaque)
			return;
	if (st->nr == DEFER_CALL_MAX) {
		fn(opaque);
		return;
	}
	st->entries[st->nr].fn = fn;
	st->entries[st->nr].opaque = opaque;
	st->nr++;
}
