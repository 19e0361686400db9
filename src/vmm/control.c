// SPDX-License-Identifier: Apache-2.0
/*
 * Hand-over of API requests from the control thread to main (control.h).
 * One request at a time: the control thread serves one connection's
 * request after another, and waits here for main's answer.
 */
#include "vmm/control.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

struct control {
	struct api_server *srv;
	struct api_ctx *ctx;
	int wake_fd; /* eventfd: a request waits for main */
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	const struct api_request *req; /* the waiting request, or NULL */
	struct api_response *resp;
	bool done;
	bool closing;
};

/* The control thread: hand the request to main and wait for it. */
static void control_handler(void *opaque, const struct api_request *req,
			    struct api_response *resp)
{
	struct control *c = opaque;

	pthread_mutex_lock(&c->lock);
	if (c->closing) {
		pthread_mutex_unlock(&c->lock);
		api_response_fault(resp, 400, "the microVM is shutting down");
		return;
	}
	c->req = req;
	c->resp = resp;
	c->done = false;
	if (eventfd_write(c->wake_fd, 1) < 0)
		log_error("API: cannot wake main");
	while (!c->done && !c->closing)
		pthread_cond_wait(&c->done_cond, &c->lock);
	if (!c->done)
		api_response_fault(resp, 400, "the microVM is shutting down");
	c->req = NULL;
	c->resp = NULL;
	pthread_mutex_unlock(&c->lock);
}

int control_open(struct control **out, const char *path,
		 struct api_ctx *ctx, char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done_cond, NULL);
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		ret = -errno;
		free(c);
		return ret;
	}
	ret = api_server_open(&c->srv, path, control_handler, c, 0, NULL,
			      err, errlen);
	if (ret) {
		close(c->wake_fd);
		free(c);
		return ret;
	}
	*out = c;
	return 0;
}

void control_set_max_body(struct control *c, size_t bytes)
{
	api_server_set_limits(c->srv, bytes, API_IDLE_MS_DEFAULT);
}

int control_listen_fd(const struct control *c)
{
	return api_server_listen_fd(c->srv);
}

void control_keep_socket(struct control *c)
{
	api_server_keep_path(c->srv);
}

int control_start(struct control *c)
{
	return api_server_start(c->srv);
}

/* Answer the waiting request, if any. Main thread. */
static void control_serve(struct control *c)
{
	eventfd_t n;

	(void)eventfd_read(c->wake_fd, &n);
	pthread_mutex_lock(&c->lock);
	if (c->req && !c->done) {
		/* The control thread is blocked until done: the request and
		 * its answer are ours meanwhile. */
		pthread_mutex_unlock(&c->lock);
		api_handle(c->ctx, c->req, c->resp);
		pthread_mutex_lock(&c->lock);
		c->done = true;
		pthread_cond_broadcast(&c->done_cond);
	}
	pthread_mutex_unlock(&c->lock);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int control_wait(struct control *c, int fd, uint64_t deadline_ns,
		 struct control_tick *t, unsigned int nt)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = c ? c->wake_fd : -1, .events = POLLIN },
		};
		uint64_t now = mono_ns(), until = deadline_ns;
		unsigned int i;
		int ms = -1;

		if (deadline_ns && now >= deadline_ns)
			return 0;
		for (i = 0; i < nt; i++) {
			struct control_tick *k = &t[i];

			if (!k->period_ms)
				continue;
			if (!k->next_ns)
				k->next_ns = now + k->period_ms * 1000000ull;
			if (now >= k->next_ns) {
				k->fn(k->opaque);
				k->next_ns = now + k->period_ms * 1000000ull;
			}
			if (!until || k->next_ns < until)
				until = k->next_ns;
		}
		if (until)
			ms = (int)((until - now + 999999) / 1000000);
		if (poll(p, 2, ms) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents)
			return 1;
		if (p[1].revents) {
			control_serve(c);
			return 2;
		}
	}
}

void control_close(struct control *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	pthread_cond_broadcast(&c->done_cond);
	pthread_mutex_unlock(&c->lock);
	api_server_stop(c->srv);
	api_server_free(c->srv);
	close(c->wake_fd);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->done_cond);
	free(c);
}
