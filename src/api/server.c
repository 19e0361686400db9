// SPDX-License-Identifier: Apache-2.0
/*
 * The API server's socket, control thread and event loop. The thread
 * confines itself (CONFINE_CONTROL) and then waits in epoll on the
 * listening socket, at most API_MAX_CONNS connections, a stop eventfd and
 * a timerfd for the tick; connection deadlines are the epoll timeout.
 * Every descriptor it uses is made by api_server_open() on the main
 * thread before the filters exist: the thread itself only accepts,
 * receives, sends, closes and waits.
 */
#include "api/server.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "api/server_priv.h"
#include "util/confine.h"

#define API_EVENTS 16
/* After EMFILE and the like, try accepting again this much later. */
#define API_ACCEPT_RETRY_MS 100

uint64_t api_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int bind_socket(struct api_server *s, const char *path, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	if (!path[0] || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "api socket path '%s': empty or longer "
			 "than %zu bytes", path, sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	strcpy(sa.sun_path, path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "api socket: %s", strerror(-ret));
		return ret;
	}
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		snprintf(err, errlen, "api socket %s: %s", path,
			 ret == -EADDRINUSE ? "Address in use (remove the "
			 "file or choose another path)" : strerror(-ret));
		return ret;
	}
	strcpy(s->path, path);
	if (listen(s->listen_fd, API_MAX_CONNS)) {
		ret = -errno;
		snprintf(err, errlen, "api socket %s: listen: %s", path,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

static int make_fds(struct api_server *s, char *err, size_t errlen)
{
	int ret;

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->tick_ms)
		s->tick_fd = timerfd_create(CLOCK_MONOTONIC,
					    TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->stop_fd < 0 || (s->tick_ms && s->tick_fd < 0)) {
		ret = -errno;
		snprintf(err, errlen, "api server: %s", strerror(-ret));
		return ret;
	}
	ret = epoll_add(s->epoll_fd, s->listen_fd, API_TAG_LISTEN);
	if (!ret)
		ret = epoll_add(s->epoll_fd, s->stop_fd, API_TAG_STOP);
	if (!ret && s->tick_ms)
		ret = epoll_add(s->epoll_fd, s->tick_fd, API_TAG_TICK);
	if (ret)
		snprintf(err, errlen, "api server: epoll: %s", strerror(-ret));
	return ret;
}

static void close_fds(struct api_server *s)
{
	int *fds[] = { &s->listen_fd, &s->epoll_fd, &s->stop_fd, &s->tick_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	if (s->path[0])
		unlink(s->path);
	s->path[0] = '\0';
}

void api_server_keep_path(struct api_server *s)
{
	s->path[0] = '\0';
}

int api_server_open(struct api_server **out, const char *sock_path,
		    api_handler_fn *fn, void *opaque,
		    unsigned int tick_ms, void (*tick)(void *opaque),
		    char *err, size_t errlen)
{
	struct api_server *s;
	int ret;

	if (!fn || (tick_ms && !tick)) {
		snprintf(err, errlen, "api server: no handler or no tick");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "api server: out of memory");
		return -ENOMEM;
	}
	s->listen_fd = s->epoll_fd = s->stop_fd = s->tick_fd = -1;
	s->fn = fn;
	s->opaque = opaque;
	s->tick_ms = tick ? tick_ms : 0;
	s->tick = tick;
	s->max_body = HTTP_BODY_MAX_DEFAULT;
	s->idle_ms = API_IDLE_MS_DEFAULT;
	ret = bind_socket(s, sock_path, err, errlen);
	if (!ret)
		ret = make_fds(s, err, errlen);
	if (ret) {
		close_fds(s);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void api_server_set_limits(struct api_server *s, size_t max_body,
			   unsigned int idle_ms)
{
	if (max_body)
		s->max_body = max_body;
	if (idle_ms)
		s->idle_ms = idle_ms;
}

int api_server_listen_fd(const struct api_server *s)
{
	return s->listen_fd;
}

/* Stop or restart accepting (the backlog holds who waits meanwhile). */
static void listen_pause(struct api_server *s, bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN,
				  .data.u64 = API_TAG_LISTEN };

	if (s->listen_paused == pause)
		return;
	if (!epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, s->listen_fd, &ev))
		s->listen_paused = pause;
}

static void accept_all(struct api_server *s)
{
	while (s->nr_conns < API_MAX_CONNS) {
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			api_conn_add(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			/* EMFILE, ENOBUFS...: wait, rather than spin. */
			s->listen_retry_ms = api_now_ms() + API_ACCEPT_RETRY_MS;
			listen_pause(s, true);
		}
		return;
	}
	listen_pause(s, true);
}

/* Close connections past their deadline; return ms to the next one. */
static int expire(struct api_server *s)
{
	uint64_t now = api_now_ms(), next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < API_MAX_CONNS; i++) {
		struct api_conn *c = s->conn[i];

		if (c && c->deadline_ms <= now)
			api_conn_close(s, c);
		else if (c && c->deadline_ms < next)
			next = c->deadline_ms;
	}
	if (s->listen_paused && s->nr_conns < API_MAX_CONNS) {
		if (s->listen_retry_ms <= now)
			listen_pause(s, false);
		else if (s->listen_retry_ms < next)
			next = s->listen_retry_ms;
	}
	if (next == UINT64_MAX)
		return -1;
	return next - now > 60000 ? 60000 : (int)(next - now);
}

static void tick_fired(struct api_server *s)
{
	uint64_t n;

	if (read(s->tick_fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		s->tick(s->opaque);
}

static void arm_tick(struct api_server *s)
{
	struct itimerspec its = {
		.it_value.tv_sec = s->tick_ms / 1000,
		.it_value.tv_nsec = (long)(s->tick_ms % 1000) * 1000000,
	};

	if (!s->tick_ms)
		return;
	its.it_interval = its.it_value;
	timerfd_settime(s->tick_fd, 0, &its, NULL);
}

static void *api_thread(void *arg)
{
	struct api_server *s = arg;
	struct epoll_event ev[API_EVENTS];
	int i, n, timeout = -1;

	pthread_setname_np(pthread_self(), "api");
	confine_thread(CONFINE_CONTROL);
	arm_tick(s);
	for (;;) {
		n = epoll_wait(s->epoll_fd, ev, API_EVENTS, timeout);
		for (i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			struct api_conn *c;

			if (tag == API_TAG_STOP)
				return NULL;
			if (tag == API_TAG_TICK)
				tick_fired(s);
			else if (tag == API_TAG_LISTEN)
				accept_all(s);
			else if (tag - API_TAG_CONN0 < API_MAX_CONNS &&
				 (c = s->conn[tag - API_TAG_CONN0]))
				api_conn_event(s, c, ev[i].events);
		}
		timeout = expire(s);
	}
}

int api_server_start(struct api_server *s)
{
	sigset_t all, old;
	int ret;

	if (s->started || s->listen_fd < 0)
		return -EINVAL;
	/* Signals are for the vCPU threads: block them all in ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&s->thread, NULL, api_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		s->started = true;
	return ret;
}

void api_server_stop(struct api_server *s)
{
	uint64_t one = 1;
	unsigned int i;

	if (s->started) {
		if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
			abort(); /* an eventfd below its maximum takes it */
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	for (i = 0; i < API_MAX_CONNS; i++)
		if (s->conn[i])
			api_conn_close(s, s->conn[i]);
	close_fds(s);
}

void api_server_free(struct api_server *s)
{
	if (!s)
		return;
	api_server_stop(s);
	free(s);
}

void api_response_json(struct api_response *r, int status,
		       char *malloced_json)
{
	r->status = status;
	r->body = malloced_json;
}

void api_response_fault(struct api_response *r, int status, const char *fmt,
			...)
{
	struct json_object *o, *msg;
	char text[1024];
	const char *json;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	r->status = status;
	r->body = NULL;
	o = json_object_new_object();
	msg = json_object_new_string(text);
	if (o && msg && !json_object_object_add(o, "fault_message", msg)) {
		msg = NULL;
		json = json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		r->body = json ? strdup(json) : NULL;
	}
	json_object_put(msg);
	json_object_put(o);
}
