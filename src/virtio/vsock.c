// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-vsock device (virtio 1.2 §5.10): the configuration space, the
 * listening Unix socket, and one queue worker (worker.h) that moves
 * packets between the rx/tx rings and the connection core (vsock_conn.c),
 * does the core's socket I/O (non-blocking, on the worker thread), and
 * delivers TRANSPORT_RESET through the event queue. Every chain is
 * bounds-checked by virtq.c; a short or misshapen chain fails alone.
 */
#include "virtio/vsock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/defer_call.h"
#include "util/le.h"
#include "util/log.h"
#include "virtio/worker.h"

/* Worker tags: connections are their table index, below these. */
#define TAG_RXQ (VSOCK_MAX_CONNS + 0ull)
#define TAG_TXQ (VSOCK_MAX_CONNS + 1ull)
#define TAG_EVQ (VSOCK_MAX_CONNS + 2ull)
#define TAG_LISTEN (VSOCK_MAX_CONNS + 3ull)

struct vsock_dev {
	struct virtio_dev *vdev;
	const struct guest_mem *gm;
	uint64_t guest_cid;
	char uds_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd;
	bool keep_path;         /* destroy leaves uds_path (confined) */
	struct vq_worker w;
	bool kicks_added;
	uint8_t config[VSOCK_CONFIG_BYTES];
	atomic_bool reset_req;  /* vsock_dev_send_reset() asked */
	/* The worker's: */
	struct vsock_core core;
	bool event_pending;     /* TRANSPORT_RESET owed to the guest */
	bool again;             /* a ring had more than one round's budget */
	struct virtq_seg segs[VSOCK_MAX_SEGS];
	struct log_ratelimit rl;
};

/* ---- host sockets, for the core (vsock_io_ops) ---- */

static int vsock_io_connect(void *opaque, uint32_t port, int *fd)
{
	struct vsock_dev *v = opaque;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n, s;

	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%" PRIu32,
		     v->uds_path, port);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* A Unix connect completes at once or fails (EAGAIN: backlog). */
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		n = -errno;
		close(s);
		return n;
	}
	*fd = s;
	return 0;
}

static ssize_t vsock_io_send(void *opaque, int fd, const struct iovec *iov,
			     int iovcnt)
{
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
			    .msg_iovlen = (size_t)iovcnt };
	ssize_t r;

	(void)opaque;
	r = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return r;
}

static ssize_t vsock_io_recv(void *opaque, int fd, const struct iovec *iov,
			     int iovcnt)
{
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
			    .msg_iovlen = (size_t)iovcnt };
	ssize_t r;

	(void)opaque;
	r = recvmsg(fd, &m, MSG_DONTWAIT);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return r;
}

/*
 * 0 takes the fd out of the epoll set: a hung-up socket would otherwise
 * be reported ready (EPOLLHUP) while nothing is to be done with it.
 */
static void vsock_io_watch(void *opaque, int fd, uint32_t idx,
			   uint32_t events)
{
	struct vsock_dev *v = opaque;
	uint32_t old = v->core.conns[idx].watching;
	uint32_t ev = (events & VSOCK_WATCH_IN ? EPOLLIN : 0) |
		      (events & VSOCK_WATCH_OUT ? EPOLLOUT : 0);
	int ret = 0;

	if (!ev) {
		if (old)
			ret = vq_worker_del_fd(&v->w, fd);
	} else if (!old) {
		ret = vq_worker_add_fd(&v->w, fd, idx); /* for EPOLLIN */
		if (!ret && ev != EPOLLIN)
			ret = vq_worker_watch(&v->w, fd, idx, ev);
	} else {
		ret = vq_worker_watch(&v->w, fd, idx, ev);
	}
	if (ret)
		log_ratelimited(&v->rl, LOG_WARN, "%s: epoll on a host socket: "
				"%s", v->vdev->name, strerror(-ret));
}

static void vsock_io_shut_wr(void *opaque, int fd)
{
	(void)opaque;
	(void)shutdown(fd, SHUT_WR);
}

static void vsock_io_close(void *opaque, int fd, uint32_t idx)
{
	struct vsock_dev *v = opaque;

	if (v->core.conns[idx].watching)
		(void)vq_worker_del_fd(&v->w, fd);
	close(fd);
}

static const struct vsock_io_ops vsock_io = {
	.connect = vsock_io_connect,
	.send = vsock_io_send,
	.recv = vsock_io_recv,
	.watch = vsock_io_watch,
	.shut_wr = vsock_io_shut_wr,
	.close = vsock_io_close,
};

/* ---- the rings ---- */

static void vsock_accept(struct vsock_dev *v)
{
	unsigned int i;

	for (i = 0; i < VSOCK_ACCEPT_BURST; i++) {
		int fd = accept4(v->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a connection that went away */
		if (vsock_core_host_accept(&v->core, fd))
			close(fd); /* the table is full */
	}
	v->again = true; /* more may wait in the backlog */
}

/* A started queue, or NULL. */
static struct virtq *vsock_vq(struct vsock_dev *v, unsigned int i)
{
	struct virtio_queue *q = &v->vdev->queues[i];

	return q->enabled && q->vq.ready && !q->vq.broken ? &q->vq : NULL;
}

/* Pop one chain; failed chains go back empty. 1, 0 (empty) or -EIO. */
static int vsock_pop(struct vsock_dev *v, struct virtq *vq,
		     struct virtq_elem *e)
{
	int r;

	e->segs = v->segs;
	e->max_segs = VSOCK_MAX_SEGS;
	r = virtq_pop(vq, e);
	if (r == -EIO)
		virtio_dev_broken(v->vdev, "vsock: broken ring");
	if (r == -EBADMSG) {
		atomic_fetch_add(&v->core.stats.bad_bufs, 1);
		virtq_push(vq, e->head, 0);
	}
	return r;
}

/* The device-readable part of a tx chain: header, then the payload. */
static void vsock_tx_one(struct vsock_dev *v, const struct virtq_elem *e)
{
	struct iovec iov[VSOCK_MAX_SEGS];
	uint8_t hdr[VSOCK_HDR_SIZE];
	size_t got = 0;
	unsigned int s;
	int n = 0;

	if (e->out_len < VSOCK_HDR_SIZE) {
		atomic_fetch_add(&v->core.stats.bad_bufs, 1);
		atomic_fetch_add(&v->core.stats.invalid, 1);
		return;
	}
	for (s = 0; s < e->nr_out; s++) {
		uint8_t *p = e->segs[s].addr;
		size_t len = e->segs[s].len, k = 0;

		if (got < VSOCK_HDR_SIZE) {
			k = VSOCK_HDR_SIZE - got < len ? VSOCK_HDR_SIZE - got :
							 len;
			memcpy(hdr + got, p, k);
			got += k;
		}
		if (k < len)
			iov[n++] = (struct iovec){ p + k, len - k };
	}
	vsock_core_tx(&v->core, hdr, iov, n, e->out_len - VSOCK_HDR_SIZE);
}

static void vsock_process_tx(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_TXQ];
	struct virtq *vq = vsock_vq(v, VSOCK_TXQ);
	unsigned int budget;
	struct virtq_elem e;
	int r;

	if (!vq)
		return;
	for (budget = vq->size; budget; budget--) {
		r = vsock_pop(v, vq, &e);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0)
			continue;
		vsock_tx_one(v, &e);
		virtq_push(vq, e.head, 0);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (!budget)
		v->again = true;
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

/* Write @n bytes of @src into the writable segments of @e from @off. */
static void vsock_put(const struct virtq_elem *e, size_t off,
		      const uint8_t *src, size_t n)
{
	unsigned int s;

	for (s = e->nr_out; s < e->nr_out + e->nr_in && n; s++) {
		size_t len = e->segs[s].len, k;

		if (off >= len) {
			off -= len;
			continue;
		}
		k = len - off < n ? len - off : n;
		memcpy((uint8_t *)e->segs[s].addr + off, src, k);
		src += k;
		n -= k;
		off = 0;
	}
}

/* One packet into an rx chain: 1, or 0 when the core had none after all. */
static int vsock_rx_one(struct vsock_dev *v, const struct virtq_elem *e,
			uint32_t *written)
{
	struct iovec iov[VSOCK_MAX_SEGS];
	uint8_t hdr[VSOCK_HDR_SIZE];
	size_t skip = VSOCK_HDR_SIZE;
	unsigned int s;
	uint32_t len;
	int n = 0;

	for (s = e->nr_out; s < e->nr_out + e->nr_in; s++) {
		size_t l = e->segs[s].len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		iov[n++] = (struct iovec){ (uint8_t *)e->segs[s].addr + skip,
					   l - skip };
		skip = 0;
	}
	if (!vsock_core_rx(&v->core, hdr, iov, n, &len))
		return 0;
	vsock_put(e, 0, hdr, sizeof(hdr));
	*written = VSOCK_HDR_SIZE + len;
	return 1;
}

static void vsock_process_rx(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_RXQ];
	struct virtq *vq = vsock_vq(v, VSOCK_RXQ);
	unsigned int budget;
	struct virtq_elem e;
	uint32_t written;
	int r;

	if (!vq)
		return;
	for (budget = vq->size; budget && vsock_core_rx_pending(&v->core);
	     budget--) {
		r = vsock_pop(v, vq, &e);
		if (r == 0 && virtq_notify_enable(vq))
			r = vsock_pop(v, vq, &e);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0)
			continue;
		if (e.nr_out || e.in_len < VSOCK_HDR_SIZE) {
			atomic_fetch_add(&v->core.stats.bad_bufs, 1);
			virtq_push(vq, e.head, 0);
			continue;
		}
		if (!vsock_rx_one(v, &e, &written)) {
			/*
			 * Nothing after all (the sockets had no data): give
			 * the chain back unused. Its avail entry is still
			 * the driver's published one, and the driver cannot
			 * reuse it before it is in the used ring.
			 */
			vq->last_avail_idx--;
			break;
		}
		virtq_push(vq, e.head, written);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (!budget)
		v->again = true;
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

static void vsock_process_event(struct vsock_dev *v)
{
	struct virtio_queue *q = &v->vdev->queues[VSOCK_EVQ];
	struct virtq *vq = vsock_vq(v, VSOCK_EVQ);
	uint8_t ev[VSOCK_EVENT_BYTES];
	unsigned int budget;
	struct virtq_elem e;
	int r;

	if (!vq || !v->event_pending)
		return;
	le_put(ev, 4, VSOCK_EVENT_TRANSPORT_RESET);
	for (budget = vq->size; budget && v->event_pending; budget--) {
		r = vsock_pop(v, vq, &e);
		if (r == 0 && virtq_notify_enable(vq))
			r = vsock_pop(v, vq, &e);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0)
			continue;
		if (e.nr_out || e.in_len < VSOCK_EVENT_BYTES) {
			atomic_fetch_add(&v->core.stats.bad_bufs, 1);
			virtq_push(vq, e.head, 0);
			continue;
		}
		vsock_put(&e, 0, ev, sizeof(ev));
		virtq_push(vq, e.head, VSOCK_EVENT_BYTES);
		v->event_pending = false;
		atomic_fetch_add(&v->core.stats.events_sent, 1);
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (virtq_need_notify(vq))
		virtio_queue_notify(q);
}

/* ---- the worker ---- */

static void vsock_round(void *opaque, const uint64_t *tags, unsigned int n,
			bool kicked)
{
	struct vsock_dev *v = opaque;
	unsigned int i;

	(void)kicked; /* every ring is looked at each round: cheap */
	v->again = false;
	defer_call_begin();
	vsock_core_expire(&v->core, clock_now_ns());
	if (atomic_exchange(&v->reset_req, false)) {
		vsock_core_reset(&v->core);
		v->event_pending = true;
	}
	for (i = 0; i < n; i++) {
		if (tags[i] == TAG_LISTEN)
			vsock_accept(v);
		else if (tags[i] < VSOCK_MAX_CONNS)
			vsock_core_host_event(&v->core, (uint32_t)tags[i]);
	}
	vsock_process_tx(v);
	vsock_process_rx(v);
	vsock_process_event(v);
	defer_call_end();
	if (v->again)
		vq_worker_wake(&v->w);
}

/* Sleep until the next connection deadline, or run its round now. */
static int64_t vsock_idle(void *opaque)
{
	struct vsock_dev *v = opaque;
	uint64_t next = v->core.next_deadline, now;

	if (!next)
		return -1;
	now = clock_now_ns();
	if (now < next)
		return (int64_t)(next - now);
	vsock_round(v, NULL, 0, false);
	return VQ_WORKER_AGAIN;
}

static const struct vq_worker_ops vsock_worker_ops = {
	.round = vsock_round,
	.idle = vsock_idle,
};

/* ---- virtio_dev_ops ---- */

static int vsock_add_kicks(struct vsock_dev *v)
{
	static const uint64_t tags[VSOCK_NUM_QUEUES] = { TAG_RXQ, TAG_TXQ,
							 TAG_EVQ };
	unsigned int i;
	int ret;

	if (v->kicks_added)
		return 0;
	for (i = 0; i < VSOCK_NUM_QUEUES; i++) {
		if (v->vdev->queues[i].kick_fd < 0)
			continue;
		ret = vq_worker_add_kick(&v->w, &v->vdev->queues[i], tags[i]);
		if (ret)
			return ret;
	}
	v->kicks_added = true;
	return 0;
}

static int vsock_start(struct virtio_dev *vdev)
{
	struct vsock_dev *v = vdev->dev;
	int ret;

	ret = vsock_add_kicks(v);
	if (ret)
		return ret;
	return vq_worker_start(&v->w);
}

static void vsock_stop(struct virtio_dev *vdev)
{
	struct vsock_dev *v = vdev->dev;

	vq_worker_stop(&v->w);
	/* A pause keeps the connections; a reset closes them all. */
	if (!vdev->paused) {
		vsock_core_reset(&v->core);
		v->event_pending = false;
	}
}

static void vsock_config_access(struct virtio_dev *vdev, uint64_t off,
				uint8_t *data, unsigned int len, bool is_write)
{
	struct vsock_dev *v = vdev->dev;
	unsigned int i;

	if (is_write)
		return; /* guest_cid is read-only */
	for (i = 0; i < len; i++)
		data[i] = off < VSOCK_CONFIG_BYTES &&
			  i < VSOCK_CONFIG_BYTES - off ? v->config[off + i] : 0;
}

static const struct virtio_dev_ops vsock_ops = {
	.name = "virtio-vsock",
	.device_id = VIRTIO_ID_VSOCK,
	.config_access = vsock_config_access,
	.start = vsock_start,
	.stop = vsock_stop,
};

/* ---- creation ---- */

static int vsock_check_config(const struct vsock_config *cfg,
			      const char *name)
{
	struct sockaddr_un sa;

	if (cfg->guest_cid < VSOCK_MIN_GUEST_CID ||
	    cfg->guest_cid >= UINT32_MAX) {
		log_error("%s: guest CID %" PRIu64 ": must be 3 to %u", name,
			  cfg->guest_cid, UINT32_MAX - 1);
		return -EINVAL;
	}
	if (!cfg->uds_path || !*cfg->uds_path) {
		log_error("%s: no uds_path", name);
		return -EINVAL;
	}
	/* <uds_path>_<port> must fit too. */
	if (strlen(cfg->uds_path) + sizeof("_4294967295") >
	    sizeof(sa.sun_path)) {
		log_error("%s: uds_path \"%s\" is longer than %zu bytes", name,
			  cfg->uds_path,
			  sizeof(sa.sun_path) - sizeof("_4294967295"));
		return -ENAMETOOLONG;
	}
	return 0;
}

static int vsock_listen(struct vsock_dev *v, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	memcpy(sa.sun_path, v->uds_path, strlen(v->uds_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, VSOCK_LISTEN_BACKLOG)) {
		ret = -errno;
		log_error("%s: cannot listen on %s: %s", name, v->uds_path,
			  strerror(-ret));
		close(fd);
		return ret;
	}
	v->listen_fd = fd;
	return 0;
}

int vsock_dev_create(struct vsock_dev **out, struct virtio_dev *vdev,
		     const struct vsock_config *cfg,
		     const struct guest_mem *gm, const char *name)
{
	char tname[16];
	struct vsock_dev *v;
	int ret;

	ret = vsock_check_config(cfg, name);
	if (ret)
		return ret;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->vdev = vdev;
	v->gm = gm;
	v->guest_cid = cfg->guest_cid;
	snprintf(v->uds_path, sizeof(v->uds_path), "%s", cfg->uds_path);
	le_put(v->config, 8, cfg->guest_cid);
	ret = vsock_core_init(&v->core, cfg->guest_cid, &vsock_io, v);
	if (ret)
		goto err_free;
	ret = vsock_listen(v, name);
	if (ret)
		goto err_core;
	snprintf(tname, sizeof(tname), "%s", name);
	ret = vq_worker_init(&v->w, &vsock_worker_ops, v, tname,
			     CONFINE_VSOCK);
	if (ret)
		goto err_unlink;
	ret = vq_worker_add_fd(&v->w, v->listen_fd, TAG_LISTEN);
	if (ret)
		goto err_worker;
	ret = virtio_dev_init(vdev, &vsock_ops, v, gm, VSOCK_NUM_QUEUES,
			      VSOCK_QUEUE_SIZE, 0, name);
	if (ret)
		goto err_worker;
	*out = v;
	return 0;

err_worker:
	vq_worker_destroy(&v->w);
err_unlink:
	close(v->listen_fd);
	unlink(v->uds_path);
err_core:
	vsock_core_destroy(&v->core);
err_free:
	free(v);
	return ret;
}

void vsock_dev_destroy(struct vsock_dev *v)
{
	if (!v)
		return;
	virtio_dev_destroy(v->vdev);
	vsock_core_destroy(&v->core); /* takes its fds out of the worker */
	vq_worker_destroy(&v->w);
	close(v->listen_fd);
	if (!v->keep_path)
		unlink(v->uds_path);
	free(v);
}

void vsock_dev_keep_path(struct vsock_dev *v)
{
	v->keep_path = true;
}

int vsock_dev_send_reset(struct vsock_dev *v)
{
	atomic_store(&v->reset_req, true);
	vq_worker_wake(&v->w);
	return 0;
}

void vsock_dev_get_stats(struct vsock_dev *v, struct vsock_dev_stats *o)
{
	struct vsock_stats *s = &v->core.stats;

	o->tx_packets = atomic_load(&s->tx_packets);
	o->tx_bytes = atomic_load(&s->tx_bytes);
	o->rx_packets = atomic_load(&s->rx_packets);
	o->rx_bytes = atomic_load(&s->rx_bytes);
	o->conns_host = atomic_load(&s->conns_host);
	o->conns_guest = atomic_load(&s->conns_guest);
	o->conns_closed = atomic_load(&s->conns_closed);
	o->conns_refused = atomic_load(&s->conns_refused);
	o->rst_sent = atomic_load(&s->rst_sent);
	o->rst_received = atomic_load(&s->rst_received);
	o->invalid = atomic_load(&s->invalid);
	o->credit_violations = atomic_load(&s->credit_violations);
	o->stray_dropped = atomic_load(&s->stray_dropped);
	o->bad_lines = atomic_load(&s->bad_lines);
	o->timeouts = atomic_load(&s->timeouts);
	o->bad_bufs = atomic_load(&s->bad_bufs);
	o->events_sent = atomic_load(&s->events_sent);
}

void vsock_dev_print_stats(struct vsock_dev *v, int fd)
{
	struct vsock_dev_stats s;

	vsock_dev_get_stats(v, &s);
	dprintf(fd,
		"microvm: stats %s vsock: tx-packets %" PRIu64
		" tx-bytes %" PRIu64 " rx-packets %" PRIu64 " rx-bytes %" PRIu64
		" conns-host %" PRIu64 " conns-guest %" PRIu64
		" conns-closed %" PRIu64 " conns-refused %" PRIu64 "\n",
		v->vdev->name, s.tx_packets, s.tx_bytes, s.rx_packets,
		s.rx_bytes, s.conns_host, s.conns_guest, s.conns_closed,
		s.conns_refused);
	dprintf(fd,
		"microvm: stats %s vsock: rst-sent %" PRIu64
		" rst-received %" PRIu64 " invalid %" PRIu64
		" credit-violations %" PRIu64 " stray-dropped %" PRIu64
		" bad-lines %" PRIu64 " timeouts %" PRIu64 " bad-bufs %" PRIu64
		" events %" PRIu64 "\n",
		v->vdev->name, s.rst_sent, s.rst_received, s.invalid,
		s.credit_violations, s.stray_dropped, s.bad_lines, s.timeouts,
		s.bad_bufs, s.events_sent);
	virtio_dev_print_stats(v->vdev, fd);
}
