/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A whole small file into memory, bounded: Firecracker's --config-file
 * and --metadata (FIFOs included, so the size is learned by reading).
 */
#ifndef MICROVM_UTIL_READFILE_H
#define MICROVM_UTIL_READFILE_H

#include <stddef.h>

/**
 * read_bounded() - the whole of @path, at most @max bytes.
 * Return: 0 with *@out (malloc'd) and *@len; -E2BIG when it holds more
 * than @max; else -errno, with *@step "open" or "read" (what failed).
 * Context: any thread that may open files.
 */
int read_bounded(const char *path, size_t max, char **out, size_t *len,
		 const char **step);

#endif
