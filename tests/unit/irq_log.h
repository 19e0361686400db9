/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake interrupt line for the UART tests (irq_set_fn): it records the
 * last level and GSI, counts the calls, and counts a level reported twice
 * in a row, which a model that reports only changes never does.
 */
#ifndef MICROVM_TEST_IRQ_LOG_H
#define MICROVM_TEST_IRQ_LOG_H

#include <stdint.h>

struct irq_log {
	int level;
	int calls;
	int repeats; /* same level reported twice in a row: a bug */
	uint32_t gsi;
};

static inline void fake_irq(void *opaque, uint32_t gsi, int level)
{
	struct irq_log *l = opaque;

	if (l->calls && level == l->level)
		l->repeats++;
	l->level = level;
	l->gsi = gsi;
	l->calls++;
}

#endif
