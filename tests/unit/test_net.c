// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-net device (virtio 1.2 §5.1) with its real workers, driven
 * by the in-test driver of net_driver.h on fake guest RAM with socketpairs
 * for tap queues: frames both ways byte for byte, mergeable rx buffers
 * (§5.1.6.4), no rx buffers (the tap is not read), malformed tx chains
 * that fail alone, VQ_PAIRS_SET (§5.1.6.5.5), the tx rate limit, pause
 * and resume mid-traffic, the configuration space and creation errors.
 */
#include "net_driver.h"

#define BASE_F (F(VIRTIO_F_INDIRECT_DESC))
#define MRG_F (BASE_F | F(VIRTIO_NET_F_MRG_RXBUF))

static uint8_t pbuf[NET_MAX_PACKET + 16];

/* --stats names the counters: @want is in the pair 0 line. */
static void check_stats_line(const char *want)
{
	char out[4096] = "";
	int p[2];
	ssize_t r;

	if (pipe(p))
		return;
	net_dev_print_stats(dev, p[1]);
	close(p[1]);
	r = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	CHECK(r > 0);
	CHECK(strstr(out, "microvm: stats eth0 net: pair 0 ") != NULL);
	if (!strstr(out, want))
		fprintf(stderr, "stats: %s", out);
	CHECK(strstr(out, want) != NULL);
}

/* §5.1.6.2: a frame the guest sends arrives on the tap as it was. */
static void test_tx_frames(void)
{
	unsigned int i;
	ssize_t r;

	dev_open(1, NULL);
	drv_start(BASE_F);
	for (i = 0; i < 4; i++)
		tx_add(0, (uint16_t)i, 60 + 500 * i, i);
	kick(1);
	CHECK(wait_used(1, 4));
	for (i = 0; i < 4; i++) {
		r = tap_recv(0, pbuf, sizeof(pbuf), 2000);
		CHECK_EQ(r, NET_HDR_SIZE + 60 + 500 * i);
		CHECK_EQ(pbuf[10] | pbuf[11], 0); /* num_buffers zeroed */
		CHECK(frame_ok(pbuf + NET_HDR_SIZE, 60 + 500 * i, i));
	}
	/* The interrupt follows the batch's last push. */
	for (i = 0; i < 2000 && !atomic_load(&notify_count[1]); i++)
		sleep_ms(1);
	CHECK(atomic_load(&notify_count[1]) > 0);
	check_stats_line("tx-packets 4 tx-bytes 3240 ");
	set_status(0);
	dev_close();
}

/* §5.1.6.3: one chain per packet without MRG_RXBUF; num_buffers 1. */
static void test_rx_frames(void)
{
	uint32_t id, len;
	unsigned int i;

	dev_open(1, NULL);
	drv_start(BASE_F);
	for (i = 0; i < 3; i++)
		rx_add(0, (uint16_t)i, BIG);
	kick(0);
	tap_send(0, 60, 1);
	tap_send(0, NET_MAX_FRAME, 2);
	CHECK(wait_used(0, 2));
	used_elem(0, 0, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, NET_HDR_SIZE + 60);
	CHECK_EQ(le_get(host(rx_buf(0, 0, BIG)) + 10, 2), 1);
	CHECK_EQ(*(uint8_t *)host(rx_buf(0, 0, BIG)),
		 VIRTIO_NET_HDR_F_DATA_VALID);
	CHECK(frame_ok(host(rx_buf(0, 0, BIG) + NET_HDR_SIZE), 60, 1));
	used_elem(0, 1, &id, &len);
	CHECK_EQ(id, 1);
	CHECK_EQ(len, NET_MAX_PACKET);
	CHECK(frame_ok(host(rx_buf(0, 1, BIG) + NET_HDR_SIZE), NET_MAX_FRAME,
		       2));
	set_status(0);
	dev_close();
}

/* §5.1.6.4: a packet spans several mergeable buffers, num_buffers set. */
static void test_rx_mergeable(void)
{
	uint32_t id, len, total = 0;
	uint16_t i;

	dev_open(1, NULL);
	drv_start(MRG_F);
	for (i = 0; i < 8; i++)
		rx_add(0, i, SMALL);
	kick(0);
	tap_send(0, 3000, 5); /* 3012 bytes: three buffers */
	CHECK(wait_used(0, 3));
	CHECK_EQ(le_get(host(rx_buf(0, 0, SMALL)) + 10, 2), 3);
	for (i = 0; i < 3; i++) {
		used_elem(0, i, &id, &len);
		CHECK_EQ(id, i);
		CHECK_EQ(len, i < 2 ? SMALL : 3012 - 2 * SMALL);
		total += len;
	}
	CHECK_EQ(total, 3012);
	/* The buffers are consecutive in RAM here: the frame reads whole. */
	CHECK(frame_ok(host(rx_buf(0, 0, SMALL) + NET_HDR_SIZE), 3000, 5));
	/* A small one next takes one buffer. */
	tap_send(0, 100, 6);
	CHECK(wait_used(0, 4));
	used_elem(0, 3, &id, &len);
	CHECK_EQ(id, 3);
	CHECK_EQ(len, NET_HDR_SIZE + 100);
	CHECK_EQ(le_get(host(rx_buf(0, 3, SMALL)) + 10, 2), 1);
	set_status(0);
	dev_close();
}

/* Bytes waiting for the device on the tap. */
static int tap_pending(unsigned int pair)
{
	int n = -1;

	if (ioctl(tap[pair][0], SIOCINQ, &n))
		return -1;
	return n;
}

/* No rx buffers: the tap is not read, nothing is held; a kick resumes. */
static void test_rx_no_buffers(void)
{
	struct net_dev_stats st;
	uint32_t id, len;
	uint16_t i;

	dev_open(1, NULL);
	drv_start(MRG_F);
	tap_send(0, 100, 1);
	tap_send(0, 200, 2);
	tap_send(0, 300, 3);
	sleep_ms(100);
	/* All three still in the socket (SIOCINQ: bytes queued). */
	CHECK_EQ(tap_pending(0), 3 * NET_HDR_SIZE + 600);
	CHECK_EQ(used_idx(0), 0);
	/* Not enough for the packet: still held back, nothing lost. */
	rx_add(0, 0, 8);
	kick(0);
	sleep_ms(50);
	CHECK_EQ(used_idx(0), 0);
	for (i = 1; i < 4; i++)
		rx_add(0, i, SMALL);
	kick(0);
	CHECK(wait_used(0, 4));
	used_elem(0, 0, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 8);
	used_elem(0, 1, &id, &len);
	CHECK_EQ(id, 1);
	CHECK_EQ(len, NET_HDR_SIZE + 100 - 8);
	used_elem(0, 3, &id, &len);
	CHECK_EQ(id, 3);
	CHECK_EQ(len, NET_HDR_SIZE + 300);
	CHECK(frame_ok(host(rx_buf(0, 3, SMALL) + NET_HDR_SIZE), 300, 3));
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.rx_packets, 3);
	CHECK_EQ(st.rx_drops, 0);
	set_status(0);
	dev_close();
}

/* Without MRG_RXBUF a buffer too small drops the packet, not the chain. */
static void test_rx_too_small(void)
{
	struct net_dev_stats st;
	uint32_t id, len;

	dev_open(1, NULL);
	drv_start(BASE_F);
	rx_add(0, 0, 1500);
	kick(0);
	tap_send(0, 3000, 1);
	tap_send(0, 1000, 2);
	CHECK(wait_used(0, 1));
	used_elem(0, 0, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, NET_HDR_SIZE + 1000);
	CHECK(frame_ok(host(rx_buf(0, 0, 1500) + NET_HDR_SIZE), 1000, 2));
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.rx_drops, 1);
	CHECK_EQ(st.rx_packets, 1);
	set_status(0);
	dev_close();
}

/* Malformed tx chains fail alone (used len 0); the good ones go out. */
static void test_tx_malformed(void)
{
	uint64_t table = RING_GPA(1), g = RX_GPA;
	struct net_dev_stats st;
	uint32_t id, len;
	unsigned int i;
	ssize_t r;

	dev_open(1, NULL);
	drv_start(BASE_F);
	memset(host(g), 0, NET_HDR_SIZE);
	tx_add(0, 0, 100, 1);                           /* heads 0, 1 */
	desc_set(table, 10, g, 200, VIRTQ_DESC_F_WRITE, 0); /* writable */
	avail_add(1, 10);
	desc_set(table, 11, g, NET_MAX_PACKET + 1, 0, 0); /* too long */
	avail_add(1, 11);
	/* too many segments: an indirect table of NET_MAX_SEGS + 1
	 * (more than the queue size too) */
	for (i = 0; i <= NET_MAX_SEGS; i++)
		desc_set(IND_GPA, (uint16_t)i, g + 16 * i, 16,
			 i < NET_MAX_SEGS ? VIRTQ_DESC_F_NEXT : 0,
			 (uint16_t)(i + 1));
	desc_set(table, 12, IND_GPA, 16 * (NET_MAX_SEGS + 1),
		 VIRTQ_DESC_F_INDIRECT, 0);
	avail_add(1, 12);
	desc_set(table, 13, g, 8, 0, 0);                /* short header */
	avail_add(1, 13);
	put_le(g + 20 * 1024, 0x0401, 2); /* NEEDS_CSUM, GSO: no CSUM */
	desc_set(table, 14, g + 20 * 1024, 200, 0, 0);
	avail_add(1, 14);
	tx_add(0, 2, 300, 2);                           /* heads 4, 5 */
	kick(1);
	CHECK(wait_used(1, 7));
	for (i = 0; i < 7; i++) {
		used_elem(1, (uint16_t)i, &id, &len);
		CHECK_EQ(len, 0);
	}
	r = tap_recv(0, pbuf, sizeof(pbuf), 2000);
	CHECK_EQ(r, NET_HDR_SIZE + 100);
	r = tap_recv(0, pbuf, sizeof(pbuf), 2000);
	CHECK_EQ(r, NET_HDR_SIZE + 300);
	CHECK(frame_ok(pbuf + NET_HDR_SIZE, 300, 2));
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 50), -1);
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.tx_packets, 2);
	CHECK_EQ(st.tx_errors, 4); /* the fifth failed in virtq_pop */
	CHECK_EQ(vdev.queues[1].stats.errors, 5);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	set_status(0);
	dev_close();
}

/* §5.1.6.5.5: only the pairs VQ_PAIRS_SET chose carry traffic. */
static void test_mq(void)
{
	uint64_t mq = MRG_F | F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ);
	uint8_t d[4] = { 0 };
	uint16_t i;

	dev_open(2, NULL);
	CHECK(vdev.host_features & F(VIRTIO_NET_F_MQ));
	CHECK_EQ(nr_queues, 5);
	drv_start(mq);
	for (i = 0; i < 4; i++)
		rx_add(1, i, SMALL);
	kick(2);
	tx_add(1, 0, 100, 1);
	kick(3);
	tap_send(1, 100, 2);
	sleep_ms(100);
	/* One pair until the driver says otherwise. */
	CHECK_EQ(used_idx(2), 0);
	CHECK_EQ(used_idx(3), 0);
	CHECK_EQ(tap_recv(1, pbuf, sizeof(pbuf), 10), -1);
	/* Bad values are refused and change nothing. */
	CHECK_EQ(set_pairs(0), VIRTIO_NET_ERR);
	CHECK_EQ(set_pairs(3), VIRTIO_NET_ERR);
	CHECK_EQ(set_pairs(0x8000), VIRTIO_NET_ERR);
	CHECK_EQ(ctrl_cmd(VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET,
			  d, 3), VIRTIO_NET_ERR);
	CHECK_EQ(ctrl_cmd(VIRTIO_NET_CTRL_RX, 0, d, 1), VIRTIO_NET_ERR);
	sleep_ms(50);
	CHECK_EQ(used_idx(2), 0);
	CHECK_EQ(set_pairs(2), VIRTIO_NET_OK);
	CHECK(wait_used(2, 1));
	CHECK(wait_used(3, 1));
	CHECK(frame_ok(host(rx_buf(1, 0, SMALL) + NET_HDR_SIZE), 100, 2));
	CHECK_EQ(tap_recv(1, pbuf, sizeof(pbuf), 2000), NET_HDR_SIZE + 100);
	CHECK(frame_ok(pbuf + NET_HDR_SIZE, 100, 1));
	/* Back to one: pair 1 is quiet again once the ack is in. */
	CHECK_EQ(set_pairs(1), VIRTIO_NET_OK);
	tap_send(1, 100, 3);
	sleep_ms(100);
	CHECK_EQ(used_idx(2), 1);
	CHECK_EQ(set_pairs(2), VIRTIO_NET_OK);
	CHECK(wait_used(2, 2));
	/* A reset: one pair again (§5.1.6.5.5). */
	set_status(0);
	drv_start(mq);
	rx_add(1, 0, SMALL);
	kick(2);
	tap_send(1, 100, 4);
	sleep_ms(100);
	CHECK_EQ(used_idx(2), 0);
	set_status(0);
	dev_close();
}

/* §5.1.2: CTRL_VQ without MQ puts the control queue at index 2, and
 * no VQ_PAIRS_SET is accepted there. */
static void test_ctrl_without_mq(void)
{
	dev_open(2, NULL);
	drv_start(MRG_F | F(VIRTIO_NET_F_CTRL_VQ));
	ctrl_q = 2;
	CHECK_EQ(set_pairs(1), VIRTIO_NET_ERR);
	CHECK_EQ(set_pairs(2), VIRTIO_NET_ERR);
	ctrl_q = 0;
	CHECK_EQ(used_idx(4), 0);
	rx_add(0, 0, SMALL);
	kick(0);
	tap_send(0, 100, 1);
	CHECK(wait_used(0, 1));
	set_status(0);
	dev_close();
}

/* The tx limit holds chains in the ring until tokens are due. */
static void test_tx_rate_limit(void)
{
	struct rl_config rl = {
		.ops = { .size = 1, .refill_time_ms = 100000 },
	};
	struct rl_config off = { 0 };
	struct net_dev_stats st;
	unsigned int i;

	dev_open(1, &rl);
	drv_start(BASE_F);
	for (i = 0; i < 3; i++)
		tx_add(0, (uint16_t)i, 100, i);
	kick(1);
	CHECK(wait_used(1, 1));
	sleep_ms(100);
	CHECK_EQ(used_idx(1), 1);
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.tx_throttled, 1);
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 10), NET_HDR_SIZE + 100);
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 10), -1);
	/* A faster bucket: the rest go once it refills (100 ms). */
	rl.ops.refill_time_ms = 100;
	CHECK_EQ(net_dev_set_rate_limits(dev, NULL, &rl), 0);
	CHECK(wait_used(1, 3));
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 10), NET_HDR_SIZE + 100);
	CHECK(frame_ok(pbuf + NET_HDR_SIZE, 100, 1));
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 10), NET_HDR_SIZE + 100);
	CHECK(frame_ok(pbuf + NET_HDR_SIZE, 100, 2));
	rl.ops.size = RL_TOKENS_MAX + 1;
	CHECK_EQ(net_dev_set_rate_limits(dev, NULL, &rl), -EINVAL);
	CHECK_EQ(net_dev_set_rate_limits(dev, &off, &off), 0);
	set_status(0);
	dev_close();
}

/* The rx limit stops reading the tap until tokens are due. */
static void test_rx_rate_limit(void)
{
	struct rl_config rl = {
		.bandwidth = { .size = 1000, .refill_time_ms = 100000 },
	};
	struct net_dev_stats st;
	uint16_t i;

	dev_open(1, NULL);
	CHECK_EQ(net_dev_set_rate_limits(dev, &rl, NULL), 0);
	drv_start(MRG_F);
	for (i = 0; i < 8; i++)
		rx_add(0, i, SMALL);
	kick(0);
	for (i = 0; i < 4; i++)
		tap_send(0, 600, i);
	CHECK(wait_used(0, 1));
	sleep_ms(100);
	CHECK_EQ(used_idx(0), 1);
	/* One held by the device, the other two still in the tap. */
	CHECK_EQ(tap_pending(0), 2 * (NET_HDR_SIZE + 600));
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.rx_throttled, 1);
	rl.bandwidth.refill_time_ms = 50;
	CHECK_EQ(net_dev_set_rate_limits(dev, &rl, NULL), 0);
	CHECK(wait_used(0, 4));
	for (i = 0; i < 4; i++)
		CHECK(frame_ok(host(rx_buf(0, i, SMALL) + NET_HDR_SIZE), 600,
			       i));
	set_status(0);
	dev_close();
}

/* Pause and resume mid-traffic: nothing lost, nothing twice. */
static void test_pause_resume(void)
{
	const unsigned int rounds = 8, per = 24;
	unsigned int r, i, seen_tx = 0;
	uint16_t rx_used = 0;
	uint32_t id, len;
	ssize_t got;

	dev_open(1, NULL);
	drv_start(MRG_F | F(VIRTIO_F_EVENT_IDX));
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < per; i++) {
			unsigned int k = r * per + i;

			rx_add(0, (uint16_t)(k % QSZ), SMALL);
			tx_add(0, (uint16_t)(k % (QSZ / 2)), 200, k);
			if (i == per / 2) {
				kick(0);
				kick(1);
				virtio_dev_pause(&vdev);
			}
			tap_send(0, 500, k);
		}
		kick(0);
		kick(1);
		sleep_ms(5);
		CHECK_EQ(virtio_dev_resume(&vdev), 0);
		CHECK(wait_used(0, (uint16_t)((r + 1) * per)));
		CHECK(wait_used(1, (uint16_t)((r + 1) * per)));
		for (; rx_used < (r + 1) * per; rx_used++) {
			used_elem(0, rx_used, &id, &len);
			CHECK_EQ(len, NET_HDR_SIZE + 500);
			CHECK(frame_ok(host(rx_buf(0, (uint16_t)id, SMALL) +
					    NET_HDR_SIZE), 500, rx_used));
		}
		for (; seen_tx < (r + 1) * per; seen_tx++) {
			got = tap_recv(0, pbuf, sizeof(pbuf), 2000);
			CHECK_EQ(got, NET_HDR_SIZE + 200);
			CHECK(frame_ok(pbuf + NET_HDR_SIZE, 200, seen_tx));
		}
	}
	CHECK_EQ(tap_recv(0, pbuf, sizeof(pbuf), 20), -1);
	set_status(0);
	dev_close();
}

static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The tap's far end goes away: no busy loop on a tap that stays
 * "readable" (end of file), and tx chains still complete (dropped). */
static void test_tap_hangup(void)
{
	struct net_dev_stats st;
	uint64_t cpu;

	dev_open(1, NULL);
	drv_start(BASE_F);
	rx_add(0, 0, SMALL);
	kick(0);
	close(tap[0][1]);
	tap[0][1] = -1;
	sleep_ms(20);
	cpu = cpu_ms();
	sleep_ms(300);
	cpu = cpu_ms() - cpu;
	if (cpu >= 100)
		fprintf(stderr, "tap hangup: %llu ms of CPU in 300 ms\n",
			(unsigned long long)cpu);
	CHECK(cpu < 100);
	tx_add(0, 0, 100, 1);
	kick(1);
	CHECK(wait_used(1, 1));
	net_dev_get_stats(dev, &st);
	CHECK_EQ(st.tx_drops, 1);
	CHECK_EQ(st.rx_errors, 1);
	CHECK_EQ(used_idx(0), 0);
	set_status(0);
	dev_close();
}

/* §5.1.4: mac, status, max_virtqueue_pairs, mtu; writes ignored. */
static void test_config(void)
{
	uint8_t c[16], w[2] = { 1, 2 };

	dev_open(2, NULL);
	vdev.ops->config_access(&vdev, 6, w, 2, true);
	vdev.ops->config_access(&vdev, 0, c, sizeof(c), false);
	CHECK(!memcmp(c, "\x52\x54\x00\x12\x34\x56", 6));
	CHECK_EQ(le_get(c + 6, 2), VIRTIO_NET_S_LINK_UP);
	CHECK_EQ(le_get(c + 8, 2), 2);
	CHECK_EQ(le_get(c + 10, 2), NET_MTU);
	CHECK_EQ(c[12] | c[13] | c[14] | c[15], 0);
	CHECK_EQ(vdev.ops->device_id, VIRTIO_ID_NET);
	dev_close();
}

static void test_create_errors(void)
{
	int fds[NET_MAX_QUEUE_PAIRS + 1] = { 0 };
	struct net_config ok = { .mac = { 2 }, .queue_pairs = 1,
				 .tap_fds = fds };
	struct net_config c;
	struct net_dev *n = NULL;
	struct virtio_dev vd;

	c = ok;
	c.queue_pairs = 0;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EINVAL);
	c.queue_pairs = NET_MAX_QUEUE_PAIRS + 1;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EINVAL);
	c = ok;
	c.queue_size = 100;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EINVAL);
	c = ok;
	c.mac[0] = 1;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EINVAL);
	c = ok;
	fds[0] = -1;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EBADF);
	c.tx_rl.bandwidth.size = RL_TOKENS_MAX + 1;
	c.tx_rl.bandwidth.refill_time_ms = 1;
	fds[0] = 0;
	CHECK_EQ(net_dev_create(&n, &vd, &c, &gm, "e"), -EINVAL);
	CHECK(n == NULL);
}

int main(void)
{
	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	test_config();
	test_create_errors();
	test_tx_frames();
	test_rx_frames();
	test_rx_mergeable();
	test_rx_no_buffers();
	test_rx_too_small();
	test_tx_malformed();
	test_mq();
	test_ctrl_without_mq();
	test_tx_rate_limit();
	test_rx_rate_limit();
	test_pause_resume();
	test_tap_hangup();
	return test_done();
}
