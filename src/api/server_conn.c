// SPDX-License-Identifier: Apache-2.0
/*
 * One API connection on the control thread: read at most API_IN_CHUNK
 * bytes at a time, feed the parser, call the handler for each complete
 * request and write its answer without blocking. While an answer is
 * unwritten nothing more is read (the client's own socket buffer holds
 * what it pipelines), so a connection holds at most one chunk, one
 * parser (head and body, both bounded) and one answer.
 */
#include "api/server_priv.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

void api_conn_add(struct api_server *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct api_conn *c;
	unsigned int i;

	for (i = 0; i < API_MAX_CONNS && s->conn[i]; i++)
		;
	c = i < API_MAX_CONNS ? malloc(sizeof(*c)) : NULL;
	if (!c) {
		close(fd);
		return;
	}
	memset(c, 0, offsetof(struct api_conn, in));
	c->fd = fd;
	c->slot = i;
	c->events = EPOLLIN;
	c->deadline_ms = api_now_ms() + s->idle_ms;
	http_parser_init(&c->parser, s->max_body);
	ev.data.u64 = API_TAG_CONN0 + i;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		free(c);
		return;
	}
	s->conn[i] = c;
	s->nr_conns++;
}

void api_conn_close(struct api_server *s, struct api_conn *c)
{
	s->conn[c->slot] = NULL;
	s->nr_conns--;
	/* close() takes the fd out of the epoll set. */
	close(c->fd);
	http_parser_free(&c->parser);
	free(c->out);
	free(c);
}

/* Queue @head and @body (either may be empty) as the answer. */
static int queue_out(struct api_conn *c, const char *head, size_t head_len,
		     const char *body, size_t body_len)
{
	char *out;

	if (c->out)
		return -EBUSY;
	out = malloc(head_len + body_len);
	if (!out)
		return -ENOMEM;
	memcpy(out, head, head_len);
	if (body_len)
		memcpy(out + head_len, body, body_len);
	c->out = out;
	c->out_len = head_len + body_len;
	c->out_off = 0;
	return 0;
}

static void queue_response(struct api_server *s, struct api_conn *c,
			   struct api_response *r, bool keep_alive)
{
	size_t body_len = r->body ? strlen(r->body) : 0;
	char head[256];
	int n;

	if (r->status < 200 || r->status > 599) {
		free(r->body);
		api_response_fault(r, 500, "handler answered status %d",
				   r->status);
		body_len = strlen(r->body);
	}
	if (r->status == 204)
		body_len = 0;
	n = http_response_head(head, sizeof(head), r->status, body_len,
			       keep_alive);
	if (n < 0 || queue_out(c, head, (size_t)n, r->body, body_len))
		c->closing = true;
	if (!keep_alive)
		c->closing = true;
	free(r->body);
	r->body = NULL;
	c->deadline_ms = api_now_ms() + s->idle_ms;
}

static void answer_request(struct api_server *s, struct api_conn *c)
{
	const struct http_request *hr = &c->parser.req;
	struct api_request req = {
		.method = hr->method,
		.path = hr->path,
		.body = hr->body,
		.body_len = hr->body_len,
	};
	struct api_response resp = { .status = 0, .body = NULL };
	bool keep_alive = hr->keep_alive && !c->eof;

	s->fn(s->opaque, &req, &resp);
	queue_response(s, c, &resp, keep_alive);
	http_parser_reset(&c->parser);
	c->continue_sent = false;
}

static void answer_error(struct api_server *s, struct api_conn *c)
{
	struct api_response resp = { 0 };

	api_response_fault(&resp, 400, "%s", c->parser.error);
	queue_response(s, c, &resp, false);
}

/* Parse what is buffered until an answer is queued or input runs out. */
static void conn_process(struct api_server *s, struct api_conn *c)
{
	struct http_parser *p = &c->parser;
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	while (!c->out && !c->closing) {
		c->in_off += http_parser_feed(p, c->in + c->in_off,
					      c->in_len - c->in_off);
		if (p->state == HTTP_DONE) {
			answer_request(s, c);
		} else if (p->state == HTTP_ERROR) {
			answer_error(s, c);
		} else if (p->state == HTTP_BODY && p->req.expect_continue &&
			   !c->continue_sent) {
			c->continue_sent = true;
			if (queue_out(c, cont, sizeof(cont) - 1, NULL, 0))
				c->closing = true;
		} else {
			break; /* the parser wants more bytes */
		}
	}
	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
}

/* Write what the socket takes. Return: 0, or -1 when @c must close. */
static int conn_flush(struct api_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return c->closing ? -1 : 0;
}

/* Read one chunk, if all before it is parsed. Return: -1 to close. */
static int conn_read(struct api_conn *c)
{
	ssize_t n;

	if (c->in_len)
		return 0;
	do {
		n = recv(c->fd, c->in, sizeof(c->in), MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (n == 0)
		c->eof = true;
	c->in_len = (size_t)n;
	return 0;
}

/* Wait for what @c needs next: to write its answer, or to read. */
static int conn_rearm(struct api_server *s, struct api_conn *c)
{
	struct epoll_event ev = { .data.u64 = API_TAG_CONN0 + c->slot };

	ev.events = c->out ? EPOLLOUT : EPOLLIN;
	if (ev.events == c->events)
		return 0;
	c->events = ev.events;
	return epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

void api_conn_event(struct api_server *s, struct api_conn *c,
		    uint32_t events)
{
	if ((events & EPOLLERR) || ((events & EPOLLHUP) && !c->out &&
				    !(events & EPOLLIN)))
		goto close;
	if ((events & EPOLLIN) && conn_read(c))
		goto close;
	for (;;) {
		conn_process(s, c);
		if (!c->out)
			break;
		if (conn_flush(c))
			goto close;
		if (c->out)
			break; /* the socket is full: wait for EPOLLOUT */
	}
	/* The client shut its side and nothing is left to answer, or the
	 * answer could not be queued. */
	if ((c->eof || c->closing) && !c->out)
		goto close;
	if (conn_rearm(s, c))
		goto close;
	return;
close:
	api_conn_close(s, c);
}
