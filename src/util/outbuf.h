/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bounded byte FIFO drained to a host fd by a thread of its own, so that
 * a producer (a vCPU emulating a UART) never waits for the fd's reader.
 * Bytes that do not fit are dropped and counted; output order is kept.
 * Closing flushes for a bounded time: a reader that never reads costs the
 * caller at most that long, never a hang.
 *
 * Usage sketch:
 *
 *	struct outbuf *ob = outbuf_new(STDOUT_FILENO, 65536, "console-out");
 *	outbuf_write(ob, &byte, 1);          // any thread, never blocks
 *	outbuf_close(ob, 1000, &final);      // teardown: flush <= 1 s, free
 */
#ifndef MICROVM_OUTBUF_H
#define MICROVM_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

struct outbuf;

struct outbuf_stats {
	uint64_t queued;  /* bytes accepted by outbuf_write() */
	uint64_t written; /* bytes the fd took */
	uint64_t dropped; /* lost: buffer full, fd failed, close timed out */
};

/**
 * outbuf_new() - a FIFO of @size bytes and the thread that drains it.
 * @fd: where the bytes go (blocking or not); the outbuf writes to a
 *	duplicate of it, so the caller keeps and closes @fd as it likes
 * @size: bytes held at most, at least 1
 * @thread_name: name of the drain thread (at most 15 characters)
 *
 * The drain thread runs outbuf_thread() with every signal blocked.
 *
 * Return: the outbuf, or NULL with errno set.
 * Context: setup.
 */
struct outbuf *outbuf_new(int fd, size_t size, const char *thread_name);

/**
 * outbuf_write() - queue bytes for the fd without waiting for it.
 * @ob: outbuf
 * @buf: bytes
 * @n: number of bytes
 *
 * Takes what fits and drops the rest (counted in outbuf_stats.dropped);
 * after a write error on the fd, or once closing began, drops everything.
 * Waits only for the outbuf's mutex, which no thread holds across I/O.
 *
 * Return: bytes queued, 0 to @n.
 * Context: any thread.
 */
size_t outbuf_write(struct outbuf *ob, const void *buf, size_t n);

/**
 * outbuf_stats() - the counters so far.
 * Context: any thread.
 */
void outbuf_stats(struct outbuf *ob, struct outbuf_stats *st);

/**
 * outbuf_close() - flush for at most @timeout_ms, stop the thread, free.
 * @ob: outbuf; no other thread may use it any more
 * @timeout_ms: how long to wait for the fd to take the queued bytes
 * @final: the final counters (may be NULL); what was still queued at the
 *	deadline counts as dropped
 *
 * A drain thread still blocked in write() at the deadline is left behind,
 * detached, and frees the outbuf itself when that write returns (at
 * process exit at the latest): a stalled reader never turns into a hang.
 *
 * Return: 0 when everything queued was written, -ETIMEDOUT when the
 * deadline passed with bytes queued, -EIO after a write error.
 * Context: teardown.
 */
int outbuf_close(struct outbuf *ob, unsigned int timeout_ms,
		 struct outbuf_stats *final);

#endif
