// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-net with engine=vhost against a fake /dev/vhost-net (a struct
 * vhost_sys that records every ioctl; fake_vhost.h): the features offered
 * (ring features only when vhost_net serves them, offloads kept), the
 * open per queue pair and its failure (one message naming the module,
 * nothing left open), DRIVER_OK handing each pair's rx and tx rings to
 * its own vhost_net with the tap attached to both (VHOST_NET_SET_BACKEND)
 * and the interrupts direct, only vhost_net's feature bits in
 * VHOST_SET_FEATURES, the control queue still the VMM's (VQ_PAIRS_SET
 * acked while the kernel serves the pairs), a driver without MQ refused,
 * pause and resume from the bases GET_VRING_BASE gave back, the tap
 * detached at reset, and rate limits refused.
 */
#include "net_driver.h"

#include <fcntl.h>
#include <signal.h>

#include "fake_vhost.h"
#include "log_capture.h"
#include "util/log.h"
#include "virtio/net_vhost.h"

#define FAKE_FD 93
#define FAKE_PATH "/nonexistent/fake-vhost-net"
#define MRG_F F(VIRTIO_NET_F_MRG_RXBUF) /* no INDIRECT_DESC: not offered */
#define MQ_F (F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ))

/* What the kernel's vhost_net offers (VHOST_NET_FEATURES less
 * INDIRECT_DESC, so that the filter shows). */
#define FEAT_KERNEL                                                      \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_EVENT_IDX) |                 \
	 F(VIRTIO_NET_F_MRG_RXBUF) | F(VHOST_F_LOG_ALL) |                 \
	 F(VHOST_NET_F_VIRTIO_NET_HDR) | F(24) /* NOTIFY_ON_EMPTY */)

static void fake_reset(void)
{
	fake_vhost_reset(FAKE_FD);
	fk.features = FEAT_KERNEL;
	fk.nr_rings = NET_VHOST_RINGS;
}

/* ---- a transport with direct interrupts ---- */

static atomic_int direct_on[MAXQ];

static void vh_direct_irq(struct virtio_dev *d, struct virtio_queue *q,
			  bool on)
{
	atomic_store(&direct_on[q->index], on);
	/* As the transports do: the eventfd goes to the device. */
	if (on)
		d->ops->call_changed(d, q, 70 + (int)q->index);
}

static const struct virtio_transport_ops vh_tops = {
	.name = "fake-vhost",
	.notify = fake_notify,
	.notify_config = fake_notify_config,
	.direct_irq = vh_direct_irq,
};

static const struct virtio_transport_ops no_direct_tops = {
	.name = "fake-nodirect",
	.notify = fake_notify,
	.notify_config = fake_notify_config,
};

static void vh_open(unsigned int pairs)
{
	fake_reset();
	drv_vhost_sys = &fake_sys;
	memset(direct_on, 0, sizeof(direct_on));
	dev_open(pairs, NULL);
	vdev.tops = &vh_tops;
}

static void vh_close(void)
{
	dev_close();
	drv_vhost_sys = NULL;
	CHECK_EQ(fk.open_fds, 0);
}

/* The @nth (from 0) logged call of @req on ring @index, or NULL. */
static const struct fake_call *nth_call(unsigned long req, int index,
					int nth)
{
	int i;

	for (i = 0; i < fk.n; i++)
		if (fk.log[i].req == req &&
		    (index < 0 || fk.log[i].index == (unsigned int)index) &&
		    !nth--)
			return &fk.log[i];
	return NULL;
}

static int count_calls(unsigned long req, int index, long long val)
{
	int i, n = 0;

	for (i = 0; i < fk.n; i++)
		n += fk.log[i].req == req &&
		     (index < 0 || fk.log[i].index == (unsigned int)index) &&
		     fk.log[i].val == val;
	return n;
}

/* The offer: vhost_net's ring features filtered, the rest kept. */
static void test_features(void)
{
	vh_open(1);
	CHECK_EQ(fk.opens, 1);
	CHECK(!strcmp(fk.path, NET_VHOST_DEVICE));
	CHECK(fk.owned);
	CHECK_EQ(count_calls(VHOST_SET_MEM_TABLE, -1, 0), 1);
	CHECK(vdev.host_features & F(VIRTIO_F_EVENT_IDX));
	CHECK(vdev.host_features & F(VIRTIO_NET_F_MRG_RXBUF));
	CHECK(!(vdev.host_features & F(VIRTIO_F_INDIRECT_DESC)));
	CHECK(vdev.host_features & F(VIRTIO_NET_F_GUEST_TSO4));
	CHECK(vdev.host_features & F(VIRTIO_NET_F_CSUM));
	CHECK(vdev.host_features & F(VIRTIO_NET_F_MAC));
	CHECK(!(vdev.host_features & MQ_F));
	vh_close();
	CHECK_EQ(fk.closes, 1);
}

/* DRIVER_OK: each pair's rings to its vhost_net, the tap on both. */
static void test_start_mq(void)
{
	const struct fake_call *c;
	uint64_t set;
	unsigned int p, r;

	vh_open(2);
	CHECK_EQ(fk.opens, 2);
	CHECK(vdev.host_features & MQ_F);
	fk.n = 0;
	drv_start(MRG_F | F(VIRTIO_F_EVENT_IDX) | MQ_F);
	/* Two SET_FEATURES (one per device), only vhost_net's bits. */
	CHECK_EQ(count_calls(VHOST_SET_FEATURES, -1, 0), 0);
	c = nth_call(VHOST_SET_FEATURES, -1, 0);
	CHECK(c != NULL);
	set = c ? (uint64_t)c->val : 0;
	CHECK_EQ(set, F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_EVENT_IDX) |
			      F(VIRTIO_NET_F_MRG_RXBUF));
	CHECK(nth_call(VHOST_SET_FEATURES, -1, 1) != NULL);
	for (p = 0; p < 2; p++) {
		for (r = 0; r < NET_VHOST_RINGS; r++) {
			unsigned int q = 2 * p + r;

			c = nth_call(VHOST_SET_VRING_ADDR, (int)r, (int)p);
			CHECK(c && c->a[0] == (uintptr_t)host(RING_GPA(q)));
			c = nth_call(VHOST_SET_VRING_KICK, (int)r, (int)p);
			CHECK(c && c->val == vdev.queues[q].kick_fd);
			c = nth_call(VHOST_NET_SET_BACKEND, (int)r, (int)p);
			CHECK(c && c->val == tap[p][0]);
			CHECK(atomic_load(&direct_on[q]));
			c = nth_call(VHOST_SET_VRING_CALL, (int)r, (int)p);
			CHECK(c && c->val == 70 + (int)q);
		}
	}
	/* The control queue is the VMM's: its kick is not handed over,
	 * and VQ_PAIRS_SET is acked with the kernel serving both pairs. */
	CHECK(!atomic_load(&direct_on[4]));
	CHECK_EQ(set_pairs(2), VIRTIO_NET_OK);
	CHECK_EQ(set_pairs(9), VIRTIO_NET_ERR);
	/* Reset: the tap detached from every ring, interrupts back. */
	fk.n = 0;
	set_status(0);
	CHECK_EQ(count_calls(VHOST_NET_SET_BACKEND, -1, -1), 4);
	CHECK_EQ(count_calls(VHOST_GET_VRING_BASE, -1, 0), 4);
	for (r = 0; r < 4; r++)
		CHECK(!atomic_load(&direct_on[r]));
	vh_close();
	CHECK_EQ(fk.closes, 2);
}

/* Pause and resume go on from the bases the kernel gave back. */
static void test_pause_resume(void)
{
	const struct fake_call *c;

	vh_open(1);
	drv_start(MRG_F);
	fk.ring_base[0] = 17;
	fk.ring_base[1] = 5;
	fk.n = 0;
	virtio_dev_pause(&vdev);
	CHECK_EQ(count_calls(VHOST_NET_SET_BACKEND, -1, -1), 2);
	CHECK_EQ(vdev.queues[0].vq.last_avail_idx, 17);
	CHECK_EQ(vdev.queues[1].vq.last_avail_idx, 5);
	fk.n = 0;
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	c = nth_call(VHOST_SET_VRING_BASE, 0, 0);
	CHECK(c && c->val == 17);
	c = nth_call(VHOST_SET_VRING_BASE, 1, 0);
	CHECK(c && c->val == 5);
	CHECK_EQ(count_calls(VHOST_NET_SET_BACKEND, -1, tap[0][0]), 2);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	set_status(0);
	vh_close();
}

/* Refusals: a driver without MQ on two pairs, a transport without
 * direct interrupts, a backend the kernel refuses, rate limits, and a
 * missing device node. */
static void test_refusals(void)
{
	struct rl_config rl = { .ops = { .size = 100,
					 .refill_time_ms = 1000 } };
	drv_start_refused = true;
	vh_open(2);
	fk.n = 0;
	drv_start(MRG_F | F(VIRTIO_NET_F_CTRL_VQ));
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK_EQ(count_calls(VHOST_NET_SET_BACKEND, -1, tap[0][0]), 0);
	CHECK(strstr(logged(), "needs a driver that takes VIRTIO_NET_F_MQ"));
	set_status(0);
	vh_close();

	vh_open(1);
	vdev.tops = &no_direct_tops;
	drv_start(MRG_F);
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET);
	CHECK(strstr(logged(), "cannot take interrupts from vhost_net"));
	set_status(0);
	vdev.tops = &vh_tops;
	fk.fail_req = VHOST_NET_SET_BACKEND;
	fk.fail_err = EBADFD;
	fk.fail_index = 1;
	fk.n = 0;
	drv_start(MRG_F);
	CHECK(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET);
	/* Ring 0 had the tap: it is detached again. */
	CHECK_EQ(count_calls(VHOST_NET_SET_BACKEND, 0, -1), 1);
	CHECK(strstr(logged(), "VHOST_NET_SET_BACKEND"));
	CHECK(!atomic_load(&direct_on[0]) && !atomic_load(&direct_on[1]));
	set_status(0);
	drv_start_refused = false;
	CHECK_EQ(net_dev_set_rate_limits(dev, &rl, NULL), -ENOTSUP);
	vh_close();

	/* At creation: a rate limit with engine=vhost, a missing node. */
	{
		struct net_config cfg = { .mac = TEST_MAC, .queue_pairs = 1,
					  .vhost = true,
					  .vhost_sys = &fake_sys };
		struct virtio_dev vd;
		struct net_dev *nd = NULL;
		int sp[2];

		CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp));
		cfg.tap_fds = sp;
		cfg.tx_rl = rl;
		fake_reset();
		CHECK_EQ(net_dev_create(&nd, &vd, &cfg, &gm, "eth9"),
			 -EINVAL);
		CHECK(strstr(logged(), "engine=vhost takes no rate limiter"));
		CHECK_EQ(fk.open_fds, 0);
		memset(&cfg.tx_rl, 0, sizeof(cfg.tx_rl));
		fake_reset();
		fk.open_err = -ENOENT;
		CHECK(net_dev_create(&nd, &vd, &cfg, &gm, "eth9") < 0);
		CHECK(strstr(logged(), "modprobe vhost_net"));
		CHECK_EQ(fk.open_fds, 0);
		close(sp[0]);
		close(sp[1]);
	}
}

/* Whether --stats' lines have @want. */
static bool stats_have(const char *want)
{
	char out[1024] = "";
	int p[2];
	ssize_t r;

	CHECK(!pipe(p));
	net_dev_print_stats(dev, p[1]);
	close(p[1]);
	r = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	CHECK(r > 0);
	if (!strstr(out, want))
		fprintf(stderr, "stats: %s", out);
	return strstr(out, want) != NULL;
}

/* --stats: the buffers each ring used while the kernel served it (it
 * counts nothing the VMM can read), kept over a reset and a restart,
 * across the used index's wrap. */
static void test_stats(void)
{
	vh_open(1);
	drv_start(MRG_F);
	put_le(RING_GPA(0) + USED_OFF + 2, 9, 2);
	put_le(RING_GPA(1) + USED_OFF + 2, 4, 2);
	CHECK(stats_have("microvm: stats eth0 net: pair 0 engine vhost "
			 "rx-used 9 tx-used 4 starts 1"));
	set_status(0);
	CHECK(stats_have("pair 0 engine vhost rx-used 9 tx-used 4 starts 1"));
	/* A new driver: 65530 buffers, a pause, then 9 more across the
	 * used index's wrap. */
	drv_start(MRG_F);
	put_le(RING_GPA(0) + USED_OFF + 2, 65530, 2);
	virtio_dev_pause(&vdev);
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	put_le(RING_GPA(0) + USED_OFF + 2, 3, 2);
	CHECK(stats_have("rx-used 65548 tx-used 4 starts 3"));
	set_status(0);
	vh_close();
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	log_capture(LOG_WARN);
	test_features();
	test_start_mq();
	test_pause_resume();
	test_refusals();
	test_stats();
	return test_done();
}
