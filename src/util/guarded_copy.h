/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memcpy() to or from a shared file mapping that survives the file
 * shrinking underneath it. A mapped page past the file's end, or one a full
 * tmpfs cannot back, raises SIGBUS on access; inside guarded_copy() that
 * fault ends the copy with -EFAULT instead of the process.
 *
 *	guarded_copy_init();                  (once, before threads copy)
 *	guarded_copy_thread();                (in each copying thread)
 *	if (guarded_copy(dst, map + off, len)) ... fail the request
 *
 * Only a fault inside the copy's own source or destination range is
 * caught; any other SIGBUS takes the default action, as without the
 * handler.
 */
#ifndef MICROVM_GUARDED_COPY_H
#define MICROVM_GUARDED_COPY_H

#include <stddef.h>

/**
 * guarded_copy_init() - install the process's SIGBUS handler, once.
 * Return: 0, -ENOTSUP in a ThreadSanitizer build (where a fault in the
 * copy cannot be caught), or -errno from sigaction().
 * Context: any thread; idempotent.
 */
int guarded_copy_init(void);

/**
 * guarded_copy_thread() - unblock SIGBUS in the calling thread.
 *
 * A synchronous SIGBUS raised while the signal is blocked kills the
 * process whatever its handler, so a thread that blocks every signal must
 * call this before it copies.
 *
 * Context: the copying thread, before it is confined (one system call).
 */
void guarded_copy_thread(void);

/**
 * guarded_copy() - memcpy(@dst, @src, @len), failing on a SIGBUS.
 * Return: 0, or -EFAULT when a page of either range could not be accessed
 * (some bytes may have been copied).
 * Context: a thread that called guarded_copy_thread(); not reentrant from
 * a signal handler.
 */
int guarded_copy(void *dst, const void *src, size_t len);

#endif
