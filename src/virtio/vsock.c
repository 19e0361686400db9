// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-vsock device (virtio 1.2 §5.10): the configuration space, the
 * listening Unix socket, the core's socket I/O (non-blocking, on the
 * worker thread), the device ops that start and stop the one queue worker
 * whose rounds are vsock_queue.c's, TRANSPORT_RESET requests and the
 * counters. With engine=vhost the kernel serves rx and tx
 * (vsock_vhost.c) and the worker only the event queue: no listening
 * socket, no connections.
 */
#include "virtio/vsock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/le.h"
#include "util/log.h"
#include "virtio/vsock_dev.h"

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

/* ---- virtio_dev_ops ---- */

static int vsock_add_kicks(struct vsock_dev *v)
{
	static const uint64_t tags[VSOCK_NUM_QUEUES] = { TAG_RXQ, TAG_TXQ,
							 TAG_EVQ };
	unsigned int i;
	int ret;

	if (v->kicks_added)
		return 0;
	/* engine=vhost: the kernel takes the rx and tx kicks. */
	for (i = v->vhost ? VSOCK_EVQ : 0; i < VSOCK_NUM_QUEUES; i++) {
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
	/* A new driver (not a resume) starts with no connections, even
	 * after a reset that found the device paused (no stop then). */
	if (!vdev->paused) {
		vsock_core_reset(&v->core);
		v->event_pending = false;
	}
	if (v->vhost) {
		ret = vsock_vhost_start(&v->vh, vdev);
		if (ret)
			return ret;
	}
	ret = vq_worker_start(&v->w);
	if (ret && v->vhost)
		vsock_vhost_stop(&v->vh, vdev);
	return ret;
}

static void vsock_stop(struct virtio_dev *vdev)
{
	struct vsock_dev *v = vdev->dev;

	vq_worker_stop(&v->w);
	/* engine=vhost: the bases kept for a resume. */
	if (v->vhost)
		vsock_vhost_stop(&v->vh, vdev);
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

/* engine=vhost: the transport re-pointed rx's or tx's interrupt. */
static void vsock_call_changed(struct virtio_dev *vdev,
			       struct virtio_queue *q, int fd)
{
	struct vsock_dev *v = vdev->dev;

	if (v->vhost)
		vhost_set_call(&v->vh.dev, q->index, fd);
}

/*
 * Snapshot state: the configuration (the guest's CID). Connections do not
 * survive a restore: their host ends were the old process's. The loaded
 * device tells the guest VIRTIO_VSOCK_EVENT_TRANSPORT_RESET (virtio 1.2
 * §5.10.6.7) as it starts, and the driver drops them all.
 */
static int vsock_save(struct virtio_dev *vdev, struct snap_writer *w,
		      char *err, size_t errlen)
{
	struct vsock_dev *v = vdev->dev;

	if (v->vhost) {
		snprintf(err, errlen, "%s: engine=vhost vsock cannot be "
			 "snapshotted yet", vdev->name);
		return -EOPNOTSUPP;
	}
	snap_put_u32(w, VSOCK_CONFIG_BYTES);
	snap_put_bytes(w, v->config, VSOCK_CONFIG_BYTES);
	return 0;
}

static int vsock_load(struct virtio_dev *vdev, struct snap_reader *r,
		      char *err, size_t errlen)
{
	struct vsock_dev *v = vdev->dev;
	uint32_t len = snap_get_u32(r);
	const uint8_t *cfg;

	cfg = len == VSOCK_CONFIG_BYTES ? snap_get_ref(r, len) : NULL;
	if (!cfg) {
		snprintf(err, errlen, "%s: malformed state", vdev->name);
		return -EINVAL;
	}
	if (memcmp(cfg, v->config, VSOCK_CONFIG_BYTES)) {
		snprintf(err, errlen, "%s: the snapshot's guest CID differs "
			 "from this device's", vdev->name);
		return -EINVAL;
	}
	return vsock_dev_send_reset(v);
}

static const struct virtio_dev_ops vsock_ops = {
	.name = "virtio-vsock",
	.device_id = VIRTIO_ID_VSOCK,
	.config_access = vsock_config_access,
	.start = vsock_start,
	.stop = vsock_stop,
	.call_changed = vsock_call_changed,
	.save = vsock_save,
	.load = vsock_load,
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
	if (cfg->engine == VSOCK_ENGINE_VHOST) {
		if (cfg->uds_path && *cfg->uds_path) {
			log_error("%s: uds_path \"%s\" and engine=vhost exclude "
				  "each other: the host reaches the guest with "
				  "AF_VSOCK at CID %" PRIu64, name,
				  cfg->uds_path, cfg->guest_cid);
			return -EINVAL;
		}
		return 0;
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

/*
 * A socket file at @sa that nobody listens on is what an earlier run
 * left (a confined VMM cannot unlink at exit): remove it. Anything else
 * there stays, and the bind fails.
 */
static bool vsock_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(sa->sun_path, &st) || !S_ISSOCK(st.st_mode))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	r = r && errno == ECONNREFUSED;
	close(fd);
	return r && !unlink(sa->sun_path);
}

static int vsock_listen(struct vsock_dev *v, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	memcpy(sa.sun_path, v->uds_path, strlen(v->uds_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (ret && errno == EADDRINUSE && vsock_stale(&sa))
		ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (ret || listen(fd, VSOCK_LISTEN_BACKLOG)) {
		ret = -errno;
		log_error("%s: cannot listen on %s: %s", name, v->uds_path,
			  strerror(-ret));
		close(fd);
		return ret;
	}
	v->listen_fd = fd;
	return 0;
}

/* What engine=vhost offers, if the kernel serves it: the event queue is
 * ours (virtq.c), rx and tx the kernel's. */
#define VSOCK_VHOST_OFFER                                                \
	(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_EVENT_IDX |          \
	 1ull << VIRTIO_F_INDIRECT_DESC | 1ull << VSOCK_F_SEQPACKET)

/* The host side: the listening socket (hybrid) or the kernel (vhost). */
static int vsock_open_host(struct vsock_dev *v, const struct vsock_config *cfg,
			   const char *name)
{
	if (!v->vhost)
		return vsock_listen(v, name);
	return vsock_vhost_open(&v->vh,
				cfg->vhost_sys ? cfg->vhost_sys :
						 &vhost_sys_host,
				v->gm, cfg->guest_cid, name);
}

static void vsock_close_host(struct vsock_dev *v)
{
	if (v->vhost) {
		vsock_vhost_close(&v->vh);
		return;
	}
	close(v->listen_fd);
	/* Kept, a stale socket file is replaced by the next create at this
	 * path (vsock_stale()). */
	if (!v->keep_path)
		unlink(v->uds_path);
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
	v->vhost = cfg->engine == VSOCK_ENGINE_VHOST;
	v->listen_fd = -1;
	if (!v->vhost)
		snprintf(v->uds_path, sizeof(v->uds_path), "%s",
			 cfg->uds_path);
	le_put(v->config, 8, cfg->guest_cid);
	ret = vsock_core_init(&v->core, cfg->guest_cid, &vsock_io, v);
	if (ret)
		goto err_free;
	ret = vsock_open_host(v, cfg, name);
	if (ret)
		goto err_core;
	snprintf(tname, sizeof(tname), "%s", name);
	ret = vq_worker_init(&v->w, &vsock_worker_ops, v, tname,
			     CONFINE_VSOCK);
	if (ret)
		goto err_host;
	if (!v->vhost)
		ret = vq_worker_add_fd(&v->w, v->listen_fd, TAG_LISTEN);
	if (ret)
		goto err_worker;
	ret = virtio_dev_init(vdev, &vsock_ops, v, gm, VSOCK_NUM_QUEUES,
			      VSOCK_QUEUE_SIZE,
			      v->vhost ? vsock_vhost_features(&v->vh,
							      VSOCK_VHOST_OFFER)
				       : 0,
			      name);
	if (ret)
		goto err_worker;
	*out = v;
	return 0;

err_worker:
	vq_worker_destroy(&v->w);
err_host:
	vsock_close_host(v);
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
	vsock_close_host(v);
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
	/* engine=vhost: the kernel keeps the rx/tx counters; the ring
	 * positions at the last stop and the starts are what we know. */
	if (v->vhost)
		dprintf(fd,
			"microvm: stats %s vsock: engine vhost starts %" PRIu64
			" rx-avail-at-stop %u tx-avail-at-stop %u\n",
			v->vdev->name, v->vh.dev.starts,
			(unsigned int)v->vh.dev.stop_base[VSOCK_RXQ],
			(unsigned int)v->vh.dev.stop_base[VSOCK_TXQ]);
}
