// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-net device (virtio 1.2 §5.1): the features and configuration
 * space, the device ops (start: tap offloads from the negotiated
 * features, one worker per queue pair; stop: pause keeps a held packet
 * and a pending control ack, reset forgets them), creation, rate limits
 * and counters. The rings are served by net_queue.c.
 */
#include "virtio/net.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/le.h"
#include "virtio/net_priv.h"
#include "virtio/tap.h"

#define F(bit) (1ull << (bit))

/* Offered always; CTRL_VQ and MQ with more than one pair. */
#define NET_FEATURES                                                     \
	(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |             \
	 F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_MAC) |                     \
	 F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6) |       \
	 F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_TSO6) |         \
	 F(VIRTIO_NET_F_MRG_RXBUF) | F(VIRTIO_NET_F_STATUS) |            \
	 F(VIRTIO_F_EVENT_IDX) | F(VIRTIO_F_INDIRECT_DESC))

/* ---- virtio_dev_ops ---- */

/* The feature dependencies of §5.1.3.1 the driver must respect. */
static const char *net_features_bad(uint64_t f)
{
	if (f & (F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_TSO6)) &&
	    !(f & F(VIRTIO_NET_F_CSUM)))
		return "HOST_TSO without CSUM";
	if (f & (F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6)) &&
	    !(f & F(VIRTIO_NET_F_GUEST_CSUM)))
		return "GUEST_TSO without GUEST_CSUM";
	if (f & F(VIRTIO_NET_F_MQ) && !(f & F(VIRTIO_NET_F_CTRL_VQ)))
		return "MQ without CTRL_VQ";
	return NULL;
}

static int net_set_offloads(struct net_dev *n, uint64_t features)
{
	unsigned int off = net_tap_offloads(features), i;
	int ret;

	if (off == n->offloads)
		return 0; /* a resume: as they were */
	for (i = 0; i < n->pairs; i++) {
		ret = net_tap_set_offload(n->pair[i].tap_fd, features);
		if (ret == -ENOTTY)
			continue; /* not a tap: nothing to set */
		if (ret) {
			log_ratelimited(&n->rl, LOG_ERROR,
					"%s: TUNSETOFFLOAD 0x%x: %s",
					n->vdev->name, off, strerror(-ret));
			return ret;
		}
	}
	n->offloads = off;
	return 0;
}

static int net_add_kicks(struct net_pair *np)
{
	struct virtio_dev *vdev = np->n->vdev;
	struct virtio_queue *q[3] = { &vdev->queues[2 * np->idx],
				      &vdev->queues[2 * np->idx + 1], NULL };
	static const uint64_t tags[3] = { NET_TAG_RX, NET_TAG_TX,
					  NET_TAG_CTRL };
	unsigned int i;
	int ret;

	if (np->kicks_added)
		return 0;
	if (np->idx == 0 && np->n->has_ctrl)
		q[2] = &vdev->queues[2 * np->n->pairs];
	/* engine=vhost: the kernel takes the rx and tx kicks. */
	if (np->n->vhost)
		q[0] = q[1] = NULL;
	for (i = 0; i < 3; i++) {
		if (!q[i] || q[i]->kick_fd < 0)
			continue;
		ret = vq_worker_add_kick(&np->w, q[i], tags[i]);
		if (ret)
			return ret;
	}
	np->kicks_added = true;
	return 0;
}

static void net_stop_workers(struct net_dev *n, unsigned int upto)
{
	unsigned int i;

	for (i = upto; i--;) {
		vq_worker_stop(&n->pair[i].w);
		atomic_store(&n->pair[i].live, false);
	}
}

void net_tap_queues(struct net_dev *n, unsigned int active)
{
	unsigned int i;
	int ret;

	for (i = 1; i < n->pairs; i++) {
		struct net_pair *np = &n->pair[i];
		bool detach = i >= active;

		if (np->tap_detached == detach)
			continue;
		ret = net_tap_set_queue(np->tap_fd, !detach);
		if (ret == -ENOTTY)
			continue; /* not a tap: nothing to choose from */
		if (ret) {
			log_ratelimited(&n->rl, LOG_WARN,
					"%s: queue pair %u: TUNSETQUEUE %s: %s",
					n->vdev->name, i,
					detach ? "detach" : "attach",
					strerror(-ret));
			continue;
		}
		np->tap_detached = detach;
	}
}

static void net_stop_vhost(struct net_dev *n, unsigned int upto)
{
	unsigned int i;

	for (i = upto; i--;)
		net_vhost_stop(&n->pair[i].vh, n->vdev, i);
}

/*
 * engine=vhost: every pair's rings to the kernel, then pair 0's worker
 * for the control queue. Without MQ the control queue would be queue 2,
 * pair 1's rx ring, which vhost_net serves: such a driver is refused.
 */
static int net_start_vhost(struct net_dev *n)
{
	struct virtio_dev *vdev = n->vdev;
	unsigned int i;
	int ret;

	if (n->has_ctrl &&
	    !(vdev->driver_features & F(VIRTIO_NET_F_MQ))) {
		log_ratelimited(&n->rl, LOG_WARN,
				"%s: engine=vhost with %u queue pairs needs a "
				"driver that takes VIRTIO_NET_F_MQ",
				vdev->name, n->pairs);
		return -EINVAL;
	}
	for (i = 0; i < n->pairs; i++) {
		ret = net_vhost_start(&n->pair[i].vh, vdev, i);
		if (ret)
			goto err_stop;
	}
	if (!n->has_ctrl)
		return 0;
	ret = net_add_kicks(&n->pair[0]);
	if (!ret) {
		atomic_store(&n->pair[0].live, true);
		ret = vq_worker_start(&n->pair[0].w);
		if (ret)
			atomic_store(&n->pair[0].live, false);
	}
	if (!ret)
		return 0;
err_stop:
	net_stop_vhost(n, i);
	return ret;
}

static int net_start(struct virtio_dev *vdev)
{
	struct net_dev *n = vdev->dev;
	const char *bad = net_features_bad(vdev->driver_features);
	unsigned int i;
	int ret;

	if (bad) {
		log_ratelimited(&n->rl, LOG_WARN, "%s: driver features: %s",
				vdev->name, bad);
		return -EINVAL;
	}
	ret = net_set_offloads(n, vdev->driver_features);
	if (ret)
		return ret;
	if (n->vhost)
		return net_start_vhost(n);
	for (i = 0; i < n->pairs; i++) {
		ret = net_add_kicks(&n->pair[i]);
		if (ret)
			goto err_stop;
		atomic_store(&n->pair[i].live, true);
		ret = vq_worker_start(&n->pair[i].w);
		if (ret) {
			atomic_store(&n->pair[i].live, false);
			goto err_stop;
		}
	}
	return 0;

err_stop:
	net_stop_workers(n, i);
	return ret;
}

static void net_stop(struct virtio_dev *vdev)
{
	struct net_dev *n = vdev->dev;
	unsigned int i;

	net_stop_workers(n, n->pairs);
	/* engine=vhost: the bases kept for a resume. */
	if (n->vhost)
		net_stop_vhost(n, n->pairs);
	/* A pause keeps what is held; a reset forgets it (§5.1.6.5.5:
	 * one pair again). */
	if (vdev->paused)
		return;
	for (i = 0; i < n->pairs; i++)
		net_pair_reset(&n->pair[i]);
	atomic_store(&n->active_pairs, 1);
	net_tap_queues(n, 1);
	atomic_fetch_add(&n->gen, 1);
	atomic_store(&n->ctrl_pending, false);
}

static void net_config_access(struct virtio_dev *vdev, uint64_t off,
			      uint8_t *data, unsigned int len, bool is_write)
{
	struct net_dev *n = vdev->dev;
	unsigned int i;

	if (is_write)
		return; /* mac is read-only with VERSION_1 (§5.1.4) */
	for (i = 0; i < len; i++)
		data[i] = off < NET_CONFIG_BYTES &&
			  i < NET_CONFIG_BYTES - off ? n->config[off + i] : 0;
}

/* engine=vhost: the transport re-pointed an rx or tx interrupt. */
static void net_call_changed(struct virtio_dev *vdev, struct virtio_queue *q,
			     int fd)
{
	struct net_dev *n = vdev->dev;

	if (n->vhost && q->index < 2 * n->pairs)
		vhost_set_call(&n->pair[q->index / 2].vh.dev, q->index % 2,
			       fd);
}

/*
 * Snapshot state: the configuration space (MAC, status, queue pairs) and
 * how many pairs the driver turned on (VQ_PAIRS_SET). What the taps
 * held is gone with the old process, as packets lost on a wire are.
 */
static int net_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen)
{
	struct net_dev *n = vdev->dev;

	if (n->vhost) {
		snprintf(err, errlen, "%s: engine=vhost interfaces cannot be "
			 "snapshotted yet", vdev->name);
		return -EOPNOTSUPP;
	}
	if (atomic_load(&n->ctrl_pending)) {
		snprintf(err, errlen, "%s: a control request is in flight; "
			 "resume and try again", vdev->name);
		return -EAGAIN;
	}
	snap_put_u32(w, NET_CONFIG_BYTES);
	snap_put_bytes(w, n->config, NET_CONFIG_BYTES);
	snap_put_u32(w, atomic_load(&n->active_pairs));
	return 0;
}

static int net_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen)
{
	struct net_dev *n = vdev->dev;
	uint32_t len = snap_get_u32(r), active;
	const uint8_t *cfg;

	cfg = len == NET_CONFIG_BYTES ? snap_get_ref(r, len) : NULL;
	active = snap_get_u32(r);
	if (!cfg || r->bad || !active || active > n->pairs) {
		snprintf(err, errlen, "%s: malformed state (%u active queue "
			 "pairs of %u)", vdev->name, active, n->pairs);
		return -EINVAL;
	}
	if (memcmp(cfg, n->config, NET_CONFIG_BYTES)) {
		snprintf(err, errlen, "%s: the snapshot's interface has "
			 "another MAC address or queue count", vdev->name);
		return -EINVAL;
	}
	atomic_store(&n->active_pairs, active);
	net_tap_queues(n, active);
	return 0;
}

static const struct virtio_dev_ops net_ops = {
	.name = "virtio-net",
	.device_id = VIRTIO_ID_NET,
	.config_access = net_config_access,
	.start = net_start,
	.stop = net_stop,
	.call_changed = net_call_changed,
	.save = net_save,
	.load = net_load,
};

/* ---- creation ---- */

static int net_check_config(const struct net_config *cfg, const char *name)
{
	char err[160];
	unsigned int i;
	uint16_t qs = cfg->queue_size;

	if (!cfg->queue_pairs || cfg->queue_pairs > NET_MAX_QUEUE_PAIRS) {
		log_error("%s: %u queue pairs: must be 1 to %u", name,
			  cfg->queue_pairs, NET_MAX_QUEUE_PAIRS);
		return -EINVAL;
	}
	if (qs && (qs < 2 || qs > VIRTQ_MAX_SIZE || (qs & (qs - 1)))) {
		log_error("%s: queue size %u: must be a power of two, 2 to %u",
			  name, qs, VIRTQ_MAX_SIZE);
		return -EINVAL;
	}
	if (cfg->mac[0] & 1) {
		log_error("%s: MAC %02x:%02x:%02x:%02x:%02x:%02x is a "
			  "multicast address", name, cfg->mac[0], cfg->mac[1],
			  cfg->mac[2], cfg->mac[3], cfg->mac[4], cfg->mac[5]);
		return -EINVAL;
	}
	for (i = 0; i < cfg->queue_pairs; i++) {
		if (!cfg->tap_fds || cfg->tap_fds[i] < 0) {
			log_error("%s: queue pair %u has no tap fd", name, i);
			return -EBADF;
		}
	}
	if (rl_config_check(&cfg->rx_rl, err, sizeof(err)) ||
	    rl_config_check(&cfg->tx_rl, err, sizeof(err))) {
		log_error("%s: rate limiter: %s", name, err);
		return -EINVAL;
	}
	if (cfg->vhost && (rl_config_active(&cfg->rx_rl) ||
			   rl_config_active(&cfg->tx_rl))) {
		log_error("%s: engine=vhost takes no rate limiter: the kernel "
			  "moves the packets (leave engine=vhost out to limit "
			  "them)", name);
		return -EINVAL;
	}
	return 0;
}

static int net_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -errno;
	return 0;
}

static void net_fill_config(struct net_dev *n, const struct net_config *cfg)
{
	memcpy(n->config, cfg->mac, 6);
	le_put(n->config + 6, 2, VIRTIO_NET_S_LINK_UP);
	le_put(n->config + 8, 2, cfg->queue_pairs);
	le_put(n->config + 10, 2, NET_MTU);
}

/* Pair @i's worker and packet buffer; with engine=vhost its vhost_net
 * and no tap events for the worker. */
static int net_pair_init(struct net_dev *n, unsigned int i, int fd,
			 const struct net_config *cfg,
			 const struct guest_mem *gm, const char *name)
{
	struct net_pair *np = &n->pair[i];
	char tname[16];
	int ret;

	np->n = n;
	np->idx = i;
	np->tap_fd = fd;
	np->w.epfd = np->w.wake_fd = -1;
	ret = net_nonblock(fd);
	if (ret)
		return ret;
	np->pkt = malloc(NET_MAX_PACKET + 1);
	if (!np->pkt)
		return -ENOMEM;
	snprintf(tname, sizeof(tname), "%s-q%u", name, i);
	ret = vq_worker_init(&np->w, &net_worker_ops, np, tname, CONFINE_NET);
	if (ret)
		return ret;
	if (n->vhost) {
		ret = net_vhost_open(&np->vh,
				     cfg->vhost_sys ? cfg->vhost_sys :
						      &vhost_sys_host,
				     gm, fd, name);
		np->vh_open = !ret;
		np->watching = NET_TAP_UNWATCHED;
		return ret;
	}
	ret = vq_worker_add_fd(&np->w, fd, NET_TAG_TAP);
	if (ret)
		return ret;
	np->watching = EPOLLIN; /* evloop_add() */
	return 0;
}

static void net_free(struct net_dev *n)
{
	unsigned int i;

	for (i = 0; i < n->pairs; i++) {
		if (n->pair[i].vh_open)
			net_vhost_close(&n->pair[i].vh);
		vq_worker_destroy(&n->pair[i].w);
		free(n->pair[i].pkt);
		free(n->pair[i].mmds_buf);
	}
	mmds_stack_destroy(n->mmds);
	rl_destroy(&n->rx_rl);
	rl_destroy(&n->tx_rl);
	free(n);
}

int net_dev_create(struct net_dev **out, struct virtio_dev *vdev,
		   const struct net_config *cfg, const struct guest_mem *gm,
		   const char *name)
{
	uint64_t features = NET_FEATURES;
	unsigned int i, nq;
	struct net_dev *n;
	int ret;

	ret = net_check_config(cfg, name);
	if (ret)
		return ret;
	if (cfg->mmds && cfg->vhost) {
		log_error("%s: MMDS needs engine user (vhost_net would carry "
			  "its frames to the tap)", name);
		return -EINVAL;
	}
	n = calloc(1, sizeof(*n) + cfg->queue_pairs * sizeof(n->pair[0]));
	if (!n)
		return -ENOMEM;
	n->vdev = vdev;
	n->pairs = cfg->queue_pairs;
	n->has_ctrl = n->pairs > 1;
	n->vhost = cfg->vhost;
	n->offloads = ~0u;
	atomic_store(&n->active_pairs, 1);
	net_fill_config(n, cfg);
	if (cfg->mmds) {
		n->mmds = mmds_stack_create(cfg->mmds);
		if (!n->mmds) {
			free(n);
			return -ENOMEM;
		}
	}
	rl_init(&n->rx_rl, &cfg->rx_rl);
	rl_init(&n->tx_rl, &cfg->tx_rl);
	for (i = 0; i < n->pairs; i++)
		n->pair[i].w.epfd = n->pair[i].w.wake_fd = -1;
	for (i = 0; i < n->pairs; i++) {
		ret = net_pair_init(n, i, cfg->tap_fds[i], cfg, gm, name);
		if (ret) {
			log_error("%s: queue pair %u: %s", name, i,
				  strerror(-ret));
			goto err_free;
		}
	}
	if (n->has_ctrl)
		features |= F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ);
	if (n->vhost)
		features = net_vhost_features(&n->pair[0].vh, features);
	nq = 2 * n->pairs + (n->has_ctrl ? 1 : 0);
	ret = virtio_dev_init(vdev, &net_ops, n, gm, nq,
			      cfg->queue_size ? cfg->queue_size :
						NET_QUEUE_SIZE,
			      features, name);
	if (ret)
		goto err_free;
	/* One pair until the driver asks for more (§5.1.6.5.5). */
	net_tap_queues(n, 1);
	*out = n;
	return 0;

err_free:
	net_free(n);
	return ret;
}

void net_dev_destroy(struct net_dev *n)
{
	unsigned int i;

	if (!n)
		return;
	virtio_dev_destroy(n->vdev);
	for (i = 0; i < n->pairs; i++)
		close(n->pair[i].tap_fd);
	net_free(n);
}

int net_dev_set_rate_limits(struct net_dev *n, const struct rl_config *rx,
			    const struct rl_config *tx)
{
	char err[160];
	unsigned int i;

	if (n->vhost) {
		log_error("%s: engine=vhost takes no rate limiter",
			  n->vdev->name);
		return -ENOTSUP;
	}
	if ((rx && rl_config_check(rx, err, sizeof(err))) ||
	    (tx && rl_config_check(tx, err, sizeof(err)))) {
		log_error("%s: rate limiter: %s", n->vdev->name, err);
		return -EINVAL;
	}
	if (rx)
		rl_set(&n->rx_rl, rx);
	if (tx)
		rl_set(&n->tx_rl, tx);
	atomic_fetch_add(&n->rl_gen, 1);
	for (i = 0; i < n->pairs; i++)
		net_pair_wake(&n->pair[i]);
	return 0;
}

void net_dev_get_stats(struct net_dev *n, struct net_dev_stats *o)
{
	unsigned int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < n->pairs; i++) {
		struct net_pair_stats *s = &n->pair[i].st;

		o->rx_packets += atomic_load(&s->rx_packets);
		o->rx_bytes += atomic_load(&s->rx_bytes);
		o->rx_drops += atomic_load(&s->rx_drops);
		o->rx_errors += atomic_load(&s->rx_errors);
		o->rx_throttled += atomic_load(&s->rx_throttled);
		o->tx_packets += atomic_load(&s->tx_packets);
		o->tx_bytes += atomic_load(&s->tx_bytes);
		o->tx_drops += atomic_load(&s->tx_drops);
		o->tx_errors += atomic_load(&s->tx_errors);
		o->tx_throttled += atomic_load(&s->tx_throttled);
	}
	o->ctrl_ok = atomic_load(&n->ctrl_ok);
	o->ctrl_err = atomic_load(&n->ctrl_err);
	if (n->mmds)
		mmds_stack_stats(n->mmds, &o->mmds);
}

/*
 * engine=vhost: the kernel keeps no counters the VMM can read; the rings'
 * used indices say how many buffers each filled (rx) or sent (tx).
 */
static void net_print_vhost_stats(struct net_dev *n, int fd)
{
	struct virtio_dev *vdev = n->vdev;
	unsigned int i;

	for (i = 0; i < n->pairs; i++) {
		const struct net_vhost *nv = &n->pair[i].vh;

		dprintf(fd,
			"microvm: stats %s net: pair %u engine vhost rx-used "
			"%" PRIu64 " tx-used %" PRIu64 " starts %" PRIu64 "\n",
			vdev->name, i, net_vhost_used(nv, vdev, i, 0),
			net_vhost_used(nv, vdev, i, 1), nv->dev.starts);
	}
}

void net_dev_print_stats(struct net_dev *n, int fd)
{
	unsigned int i;

	if (n->vhost)
		net_print_vhost_stats(n, fd);
	for (i = 0; i < n->pairs && !n->vhost; i++) {
		struct net_pair_stats *s = &n->pair[i].st;

		dprintf(fd,
			"microvm: stats %s net: pair %u rx-packets %" PRIu64
			" rx-bytes %" PRIu64 " rx-drops %" PRIu64
			" rx-errors %" PRIu64 " rx-throttled %" PRIu64
			" tx-packets %" PRIu64 " tx-bytes %" PRIu64
			" tx-drops %" PRIu64 " tx-errors %" PRIu64
			" tx-throttled %" PRIu64 "\n",
			n->vdev->name, i, (uint64_t)atomic_load(&s->rx_packets),
			(uint64_t)atomic_load(&s->rx_bytes),
			(uint64_t)atomic_load(&s->rx_drops),
			(uint64_t)atomic_load(&s->rx_errors),
			(uint64_t)atomic_load(&s->rx_throttled),
			(uint64_t)atomic_load(&s->tx_packets),
			(uint64_t)atomic_load(&s->tx_bytes),
			(uint64_t)atomic_load(&s->tx_drops),
			(uint64_t)atomic_load(&s->tx_errors),
			(uint64_t)atomic_load(&s->tx_throttled));
	}
	if (n->has_ctrl)
		dprintf(fd,
			"microvm: stats %s net: control ok %" PRIu64
			" err %" PRIu64 " active-pairs %u\n",
			n->vdev->name, (uint64_t)atomic_load(&n->ctrl_ok),
			(uint64_t)atomic_load(&n->ctrl_err),
			atomic_load(&n->active_pairs));
	if (n->mmds) {
		struct mmds_stats ms = { 0 };

		mmds_stack_stats(n->mmds, &ms);
		dprintf(fd,
			"microvm: stats %s mmds: rx-frames %" PRIu64
			" rx-accepted %" PRIu64 " rx-bad %" PRIu64
			" tx-frames %" PRIu64 " tx-bytes %" PRIu64
			" tx-errors %" PRIu64 " connections %" PRIu64
			" closed %" PRIu64 "\n",
			n->vdev->name, ms.rx_count, ms.rx_accepted,
			ms.rx_bad_eth + ms.rx_accepted_err, ms.tx_frames,
			ms.tx_bytes, ms.tx_errors, ms.connections_created,
			ms.connections_destroyed);
	}
	virtio_dev_print_stats(n->vdev, fd);
}
