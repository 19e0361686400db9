// SPDX-License-Identifier: Apache-2.0
/*
 * UART transmit side: an outbuf while the output is open, counters once it
 * is closed. Closing takes the outbuf out from under the lock first, so a
 * vCPU transmitting meanwhile drops (and counts) instead of waiting for a
 * flush that may last the whole timeout.
 */
#include "devices/uart_tx.h"

#include <errno.h>
#include <string.h>

int uart_tx_init(struct uart_tx *t, int fd, size_t buf_size)
{
	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return 0;
	t->out = outbuf_new(fd, buf_size, "console-out");
	return t->out ? 0 : -errno;
}

void uart_tx_put_locked(struct uart_tx *t, uint8_t byte)
{
	/* Never waits for the reader: a full buffer drops (and counts). */
	if (t->out)
		outbuf_write(t->out, &byte, 1);
	else if (t->closed)
		t->final.dropped++;
}

int uart_tx_close(struct uart_tx *t, pthread_mutex_t *lock,
		  unsigned int timeout_ms)
{
	struct outbuf_stats st;
	struct outbuf *out;
	int ret;

	pthread_mutex_lock(lock);
	out = t->out;
	t->out = NULL;
	t->closed = true;
	pthread_mutex_unlock(lock);
	if (!out)
		return 0;
	ret = outbuf_close(out, timeout_ms, &st);
	pthread_mutex_lock(lock);
	t->final.queued += st.queued;
	t->final.written += st.written;
	t->final.dropped += st.dropped;
	pthread_mutex_unlock(lock);
	return ret;
}

void uart_tx_stats(struct uart_tx *t, pthread_mutex_t *lock,
		   struct outbuf_stats *st)
{
	pthread_mutex_lock(lock);
	if (t->out)
		outbuf_stats(t->out, st);
	else
		*st = t->final;
	pthread_mutex_unlock(lock);
}
