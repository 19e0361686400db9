// SPDX-License-Identifier: Apache-2.0
/*
 * Bounded output FIFO with a drain thread. Producers copy into a ring under
 * the mutex and wake the thread when the ring goes from empty to non-empty;
 * the thread writes the oldest contiguous run straight from the ring with
 * the mutex dropped (producers only ever fill free space, so the run it
 * writes stays put) and then consumes what the fd took. Nothing holds the
 * mutex across write(), so a stalled reader stalls only the drain thread.
 */
#include "util/outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/confine.h"
#include "util/log.h"

/* One write() at most this much: a pipe takes it whole when not full. */
#define OUTBUF_CHUNK 4096
/* A non-blocking fd that is full is polled again after this long. */
#define OUTBUF_POLL_MS 20

struct outbuf {
	pthread_mutex_t lock;  /* guards everything below but fd and size */
	pthread_cond_t wake;   /* data queued, or closing began */
	pthread_cond_t exited; /* the thread is about to return */
	pthread_t thread;
	int fd;
	bool closing;          /* outbuf_close() began: drain, then end */
	bool abandon;          /* close deadline passed: end after this write */
	bool thread_done;
	bool failed;           /* the fd returned an error: drop from now on */
	size_t size, head, count;
	struct outbuf_stats st;
	char name[16];
	uint8_t buf[];
};

static void outbuf_consume_locked(struct outbuf *ob, size_t n)
{
	ob->head = (ob->head + n) % ob->size;
	ob->count -= n;
}

static void outbuf_free(struct outbuf *ob)
{
	close(ob->fd);
	pthread_cond_destroy(&ob->exited);
	pthread_cond_destroy(&ob->wake);
	pthread_mutex_destroy(&ob->lock);
	free(ob);
}

/* One write of @n bytes at @p. Return: bytes taken, 0 to retry, -errno. */
static ssize_t outbuf_emit(struct outbuf *ob, const uint8_t *p, size_t n)
{
	struct pollfd pfd = { .fd = ob->fd, .events = POLLOUT };
	ssize_t w = write(ob->fd, p, n);

	if (w >= 0)
		return w;
	if (errno == EINTR)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		/* Non-blocking fd, full: wait a little, then re-check. */
		poll(&pfd, 1, OUTBUF_POLL_MS);
		return 0;
	}
	return -errno;
}

/*
 * The drain thread (seccomp thread class: console). Ends once closing and
 * empty, when abandoned at the close deadline, or never before closing.
 */
static void *outbuf_thread(void *arg)
{
	struct outbuf *ob = arg;
	const uint8_t *p;
	bool own;
	ssize_t w;
	size_t n;

	pthread_setname_np(pthread_self(), ob->name);
	/* The console's output thread (a no-op unless microvm confines). */
	confine_thread(CONFINE_CONSOLE);
	pthread_mutex_lock(&ob->lock);
	for (;;) {
		while (!ob->count && !ob->closing)
			pthread_cond_wait(&ob->wake, &ob->lock);
		if (!ob->count || ob->abandon)
			break;
		n = ob->size - ob->head;
		if (n > ob->count)
			n = ob->count;
		if (n > OUTBUF_CHUNK)
			n = OUTBUF_CHUNK;
		p = ob->buf + ob->head;
		pthread_mutex_unlock(&ob->lock);
		w = outbuf_emit(ob, p, n);
		pthread_mutex_lock(&ob->lock);
		if (w > 0) {
			outbuf_consume_locked(ob, (size_t)w);
			ob->st.written += (uint64_t)w;
		} else if (w < 0) {
			/* EPIPE, EIO, ...: later output has nowhere to go. */
			ob->failed = true;
			ob->st.dropped += ob->count;
			outbuf_consume_locked(ob, ob->count);
			/* Not under the lock: stderr may be as slow. */
			pthread_mutex_unlock(&ob->lock);
			if (w != -EPIPE)
				log_warn("%s: write failed: %s; output dropped "
					 "from now on", ob->name,
					 strerror((int)-w));
			pthread_mutex_lock(&ob->lock);
		}
	}
	/* Empty here unless abandoned, and then outbuf_close() counted it. */
	ob->thread_done = true;
	own = ob->abandon;
	pthread_cond_broadcast(&ob->exited);
	pthread_mutex_unlock(&ob->lock);
	if (own)
		outbuf_free(ob); /* outbuf_close() returned long ago */
	return NULL;
}

static int outbuf_start(struct outbuf *ob)
{
	sigset_t all, old;
	int ret;

	/* The thread inherits a full mask: no signal is ever handled there. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&ob->thread, NULL, outbuf_thread, ob);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

struct outbuf *outbuf_new(int fd, size_t size, const char *thread_name)
{
	pthread_condattr_t ca;
	struct outbuf *ob;
	int ret;

	if (fd < 0 || !size) {
		errno = EINVAL;
		return NULL;
	}
	ob = calloc(1, sizeof(*ob) + size);
	if (!ob)
		return NULL;
	/* Our own descriptor: the caller may close @fd whenever it likes. */
	ob->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ob->fd < 0) {
		free(ob);
		return NULL;
	}
	ob->size = size;
	snprintf(ob->name, sizeof(ob->name), "%s", thread_name);
	pthread_mutex_init(&ob->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ob->wake, NULL);
	pthread_cond_init(&ob->exited, &ca);
	pthread_condattr_destroy(&ca);
	ret = outbuf_start(ob);
	if (ret)
		goto err_free;
	return ob;

err_free:
	outbuf_free(ob);
	errno = -ret;
	return NULL;
}

size_t outbuf_write(struct outbuf *ob, const void *buf, size_t n)
{
	size_t take = 0, tail, first;

	pthread_mutex_lock(&ob->lock);
	if (!ob->failed && !ob->closing) {
		take = ob->size - ob->count;
		if (take > n)
			take = n;
		tail = (ob->head + ob->count) % ob->size;
		first = ob->size - tail < take ? ob->size - tail : take;
		memcpy(ob->buf + tail, buf, first);
		memcpy(ob->buf, (const uint8_t *)buf + first, take - first);
		if (take && !ob->count)
			pthread_cond_signal(&ob->wake);
		ob->count += take;
	}
	ob->st.queued += take;
	ob->st.dropped += n - take;
	pthread_mutex_unlock(&ob->lock);
	return take;
}

void outbuf_stats(struct outbuf *ob, struct outbuf_stats *st)
{
	pthread_mutex_lock(&ob->lock);
	*st = ob->st;
	pthread_mutex_unlock(&ob->lock);
}

static void deadline_after(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int outbuf_close(struct outbuf *ob, unsigned int timeout_ms,
		 struct outbuf_stats *final)
{
	struct outbuf_stats st;
	struct timespec until;
	char name[16];
	pthread_t thread;
	bool done;
	int ret;

	deadline_after(&until, timeout_ms);
	pthread_mutex_lock(&ob->lock);
	ob->closing = true;
	pthread_cond_signal(&ob->wake);
	while (!ob->thread_done &&
	       pthread_cond_timedwait(&ob->exited, &ob->lock, &until) !=
		       ETIMEDOUT)
		;
	done = ob->thread_done;
	if (!done) {
		/* Blocked in write(): whatever is still queued is lost. */
		ob->abandon = true;
		ob->st.dropped += ob->count;
	}
	st = ob->st;
	ret = ob->failed ? -EIO : done ? 0 : -ETIMEDOUT;
	memcpy(name, ob->name, sizeof(name));
	thread = ob->thread;
	pthread_mutex_unlock(&ob->lock);
	if (final)
		*final = st;
	if (!done) {
		/* From here on the thread owns @ob and frees it at its end. */
		pthread_detach(thread);
		log_warn("%s: output not taken within %u ms; %llu bytes "
			 "dropped", name, timeout_ms,
			 (unsigned long long)st.dropped);
		return ret;
	}
	pthread_join(thread, NULL);
	outbuf_free(ob);
	return ret;
}
