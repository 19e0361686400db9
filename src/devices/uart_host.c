// SPDX-License-Identifier: Apache-2.0
/*
 * The host side the UART models share (uart_host.h): lock, output,
 * room eventfd, interrupt line.
 */
#include "devices/uart_host.h"

#include <errno.h>
#include <unistd.h>

#include "util/evloop.h"

int uart_host_init(struct uart_host *h, int out_fd, size_t buf_size,
		   irq_set_fn irq, void *irq_opaque, uint32_t gsi)
{
	int ret;

	h->irq = irq;
	h->irq_opaque = irq_opaque;
	h->gsi = gsi;
	h->room_fd = evfd_new();
	if (h->room_fd < 0)
		return h->room_fd;
	ret = pthread_mutex_init(&h->lock, NULL);
	if (ret)
		goto err_close;
	if (out_fd >= 0) {
		h->out = outbuf_new(out_fd, buf_size, "console-out");
		if (!h->out) {
			ret = errno;
			goto err_mutex;
		}
	}
	return 0;

err_mutex:
	pthread_mutex_destroy(&h->lock);
err_close:
	close(h->room_fd);
	h->room_fd = -1;
	return -ret;
}

void uart_host_put_locked(struct uart_host *h, uint8_t byte)
{
	if (h->out)
		outbuf_write(h->out, &byte, 1);
	else if (h->closed)
		h->final.dropped++;
}

void uart_host_irq_locked(struct uart_host *h, int level)
{
	if (level == h->irq_level)
		return;
	h->irq_level = level;
	if (h->irq)
		h->irq(h->irq_opaque, h->gsi, level);
}

void uart_host_room_locked(struct uart_host *h, bool room)
{
	if (!h->room_wanted || !room)
		return;
	h->room_wanted = false;
	evfd_signal(h->room_fd);
}

int uart_host_close_output(struct uart_host *h, unsigned int timeout_ms)
{
	struct outbuf_stats st;
	struct outbuf *out;
	int ret;

	pthread_mutex_lock(&h->lock);
	out = h->out;
	h->out = NULL;
	h->closed = true;
	pthread_mutex_unlock(&h->lock);
	if (!out)
		return 0;
	ret = outbuf_close(out, timeout_ms, &st);
	pthread_mutex_lock(&h->lock);
	h->final.queued += st.queued;
	h->final.written += st.written;
	h->final.dropped += st.dropped;
	pthread_mutex_unlock(&h->lock);
	return ret;
}

void uart_host_stats(struct uart_host *h, struct outbuf_stats *st)
{
	pthread_mutex_lock(&h->lock);
	if (h->out)
		outbuf_stats(h->out, st);
	else
		*st = h->final;
	pthread_mutex_unlock(&h->lock);
}

void uart_host_destroy(struct uart_host *h, unsigned int timeout_ms)
{
	uart_host_close_output(h, timeout_ms);
	pthread_mutex_destroy(&h->lock);
	if (h->room_fd >= 0)
		close(h->room_fd);
	h->room_fd = -1;
}
