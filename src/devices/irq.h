/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one way a platform device raises an interrupt: it reports the level of
 * its output line through a callback the VMM gives it at init. Devices know
 * nothing of KVM; the VMM turns levels into KVM_IRQ_LINE calls or irqfds.
 */
#ifndef MICROVM_IRQ_H
#define MICROVM_IRQ_H

#include <stdint.h>

/*
 * Report that the line wired to @gsi is now at @level (0 or 1). Devices call
 * this only when the level changes, so the callee may forward it as is.
 */
typedef void (*irq_set_fn)(void *opaque, uint32_t gsi, int level);

#endif
