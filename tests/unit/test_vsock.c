// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-vsock device (virtio 1.2 §5.10) with its real worker thread
 * and real Unix sockets in a temporary directory, driven by an in-test
 * guest driver on fake guest RAM: host programs that CONNECT and guest
 * REQUESTs to <uds>_<port>, data both ways checked byte for byte, a guest
 * that stops reading (host data stops at its credit, §5.10.6.3), many
 * connections at once, pause and resume mid-transfer, TRANSPORT_RESET
 * (§5.10.6.7), a device reset, hostile chains, and creation errors.
 */
#include "vsock_driver.h"

/* ---- tests ---- */

static void test_config_and_create(void)
{
	struct vsock_config bad_cid = { .guest_cid = 2, .uds_path = uds };
	struct vsock_config big_cid = { .guest_cid = UINT32_MAX,
					.uds_path = uds };
	char longp[120];
	struct vsock_config long_path = { .guest_cid = CID,
					  .uds_path = longp };
	struct virtio_dev vd2;
	struct vsock_dev *d2;
	uint8_t b[8];
	struct stat st;

	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &bad_cid, &gm, "x"), -EINVAL);
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &big_cid, &gm, "x"), -EINVAL);
	CHECK_EQ(vsock_dev_create(&d2, &vd2, &long_path, &gm, "x"),
		 -ENAMETOOLONG);
	dev_open();
	CHECK(!stat(uds, &st) && S_ISSOCK(st.st_mode));
	/* uds_path is taken: a second device refuses it. */
	{
		struct vsock_config same = { .guest_cid = 4, .uds_path = uds };

		CHECK_EQ(vsock_dev_create(&d2, &vd2, &same, &gm, "x"),
			 -EADDRINUSE);
	}
	CHECK_EQ(vdev.ops->device_id, VIRTIO_ID_VSOCK);
	CHECK_EQ(vdev.num_queues, 3);
	CHECK_EQ(vdev.host_features, F(VIRTIO_F_VERSION_1));
	/* le64 guest_cid (§5.10.4), read-only. */
	vdev.ops->config_access(&vdev, 0, b, 8, false);
	CHECK_EQ(le_get(b, 8), CID);
	memset(b, 0xff, 8);
	vdev.ops->config_access(&vdev, 0, b, 8, true);
	vdev.ops->config_access(&vdev, 4, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0);
	vdev.ops->config_access(&vdev, 8, b, 4, false);
	CHECK_EQ(le_get(b, 4), 0);
	dev_close();
	CHECK(stat(uds, &st) && errno == ENOENT);
	/* Kept, the file stays, stale: the next device there replaces it. */
	dev_open();
	vsock_dev_keep_path(dev);
	dev_close();
	CHECK(!stat(uds, &st) && S_ISSOCK(st.st_mode));
	dev_open();
	CHECK(dev != NULL);
	dev_close();
	/* A regular file there is not ours to remove. */
	unlink(uds);
	{
		int f = open(uds, O_CREAT | O_WRONLY, 0600);
		struct vsock_config cfg = { .guest_cid = CID, .uds_path = uds };

		CHECK(f >= 0);
		close(f);
		CHECK_EQ(vsock_dev_create(&d2, &vd2, &cfg, &gm, "x"),
			 -EADDRINUSE);
		CHECK(!stat(uds, &st) && S_ISREG(st.st_mode));
		unlink(uds);
	}
}

static void test_host_initiated(void)
{
	struct pkt p;
	uint32_t hp;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	host_to_guest_data(fd, 52, hp, 100000, 1);
	guest_to_host(fd, 52, hp, 200000, 2);
	CHECK_EQ(stats().conns_host, 1);
	CHECK_EQ(stats().tx_bytes, 200000);
	CHECK_EQ(stats().rx_bytes, 100000);
	/* The host program leaves: SHUTDOWN, the guest's RST ends it. */
	close(fd);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_SHUTDOWN);
	tx_op(52, hp, VSOCK_OP_RST, 0);
	/* No guest listener: RST closes the host program. */
	fd = unix_connect(uds);
	CHECK_EQ(write(fd, "CONNECT 53\n", 11), 11);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	tx_op(53, p.h.src_port, VSOCK_OP_RST, 0);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	/* A bad line: closed at once, the guest hears nothing. */
	fd = unix_connect(uds);
	CHECK_EQ(write(fd, "CONNECT x\n", 10), 10);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	CHECK(!rx_ctl(&p, 100));
	CHECK_EQ(stats().bad_lines, 1);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	dev_close();
}

static void test_guest_initiated(void)
{
	char path[100];
	struct pkt p;
	int lfd, fd;

	dev_open();
	drv_start();
	snprintf(path, sizeof(path), "%s_5000", uds);
	lfd = unix_listen(path);
	CHECK(lfd >= 0);
	tx_op(1234, 5000, VSOCK_OP_REQUEST, 0);
	CHECK(rx(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RESPONSE);
	CHECK_EQ(p.h.src_port, 5000);
	CHECK_EQ(p.h.dst_port, 1234);
	fd = accept(lfd, NULL, NULL);
	CHECK(fd >= 0);
	guest_to_host(fd, 1234, 5000, 50000, 3);
	host_to_guest_data(fd, 1234, 5000, 50000, 4);
	/* The guest closes: SHUTDOWN both, RST back, the socket closes. */
	tx_op(1234, 5000, VSOCK_OP_SHUTDOWN,
	      VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	/* No listener at <uds>_5001: RST. */
	tx_op(1235, 5001, VSOCK_OP_REQUEST, 0);
	CHECK(rx_ctl(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK_EQ(p.h.dst_port, 1235);
	/* Another CID or a SEQPACKET request: no connection. */
	{
		struct vsock_hdr h = ghdr(1236, 5000, VSOCK_OP_REQUEST);

		h.dst_cid = 5;
		tx(h, NULL, 0);
		CHECK(!rx_ctl(&p, 100));
		h = ghdr(1236, 5000, VSOCK_OP_REQUEST);
		h.type = 2;
		tx(h, NULL, 0);
		CHECK(rx_ctl(&p, 5000));
		CHECK_EQ(p.h.op, VSOCK_OP_RST);
	}
	CHECK_EQ(stats().conns_guest, 1);
	CHECK_EQ(stats().invalid, 2);
	close(lfd);
	unlink(path);
	dev_close();
}

/* A guest that stops reading: host data stops at its credit. */
static void test_credit_stop(void)
{
	static uint8_t junk[1 << 16];
	struct vsock_hdr h;
	size_t got = 0, wrote = 0;
	struct pkt p;
	uint32_t hp;
	int fd, fl;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 10000;
	tx(h, NULL, 0);
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	/* Write until the socket is full: nothing grows behind it. */
	for (;;) {
		ssize_t r = write(fd, junk, sizeof(junk));

		if (r <= 0)
			break;
		wrote += (size_t)r;
		if (wrote > (64u << 20))
			break;
	}
	CHECK(wrote < (64u << 20));
	while (rx(&p, 300))
		if (p.h.op == VSOCK_OP_RW)
			got += p.h.len;
	CHECK_EQ(got, 10000);
	CHECK(!rx(&p, 200));
	/* It reads 10000: 10000 more come. */
	h = ghdr(52, hp, VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 10000;
	h.fwd_cnt = 10000;
	tx(h, NULL, 0);
	got = 0;
	while (rx(&p, 300))
		if (p.h.op == VSOCK_OP_RW)
			got += p.h.len;
	CHECK_EQ(got, 10000);
	close(fd);
	dev_close();
}

static void test_many(void)
{
	enum { N = 40 };
	int fd[N];
	uint32_t hp[N];
	unsigned int i;

	dev_open();
	drv_start();
	for (i = 0; i < N; i++)
		fd[i] = host_to_guest(100 + i, &hp[i]);
	for (i = 0; i < N; i++)
		CHECK(hp[i] != hp[(i + 1) % N]);
	for (i = 0; i < N; i++) {
		guest_to_host(fd[i], 100 + i, hp[i], 5000, i);
		host_to_guest_data(fd[i], 100 + i, hp[i], 5000, i + 100);
	}
	CHECK_EQ(stats().conns_host, N);
	for (i = 0; i < N; i++)
		close(fd[i]);
	dev_close();
}

/* Pause and resume mid-transfer: nothing lost, nothing replayed. */
static void test_pause_resume(void)
{
	static uint8_t src[60000], got[60000];
	size_t have = 0;
	struct pkt p;
	uint32_t hp;
	uint16_t want;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	pattern(src, sizeof(src), 9);
	CHECK_EQ(write(fd, src, 20000), 20000);
	while (have < 8000 && rx(&p, 5000)) {
		CHECK_EQ(p.h.op, VSOCK_OP_RW);
		memcpy(got + have, p.data, p.h.len);
		have += p.h.len;
	}
	virtio_dev_pause(&vdev);
	/* Meanwhile: host data, and a guest packet that waits in the ring. */
	CHECK_EQ(write(fd, src + 20000, 40000), 40000);
	want = (uint16_t)(drv_avail[VSOCK_TXQ] + 1);
	memcpy(host(TXDATA_GPA), "paused", 6);
	{
		struct vsock_hdr h = ghdr(52, hp, VSOCK_OP_RW);

		h.len = 6;
		vsock_hdr_encode(host(TXHDR_GPA), &h);
	}
	desc_set(VSOCK_TXQ, 0, TXHDR_GPA, VSOCK_HDR_SIZE, VIRTQ_DESC_F_NEXT,
		 1);
	desc_set(VSOCK_TXQ, 1, TXDATA_GPA, 6, 0, 0);
	avail_add(VSOCK_TXQ, 0);
	kick(VSOCK_TXQ);
	sleep_ms(100);
	CHECK(used_idx(VSOCK_TXQ) != want); /* not served while paused */
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	while (have < sizeof(src) && rx(&p, 5000)) {
		if (p.h.op != VSOCK_OP_RW)
			continue;
		if (have + p.h.len > sizeof(src))
			break;
		memcpy(got + have, p.data, p.h.len);
		have += p.h.len;
	}
	CHECK_EQ(have, sizeof(src));
	CHECK(!memcmp(src, got, sizeof(src)));
	{
		char b[8] = { 0 };

		CHECK_EQ(read_n(fd, b, 6), 6);
		CHECK(!memcmp(b, "paused", 6));
	}
	CHECK_EQ(used_idx(VSOCK_TXQ), want);
	drv_used[VSOCK_TXQ] = want;
	close(fd);
	dev_close();
}

/* TRANSPORT_RESET (§5.10.6.7): the event, and every connection closed. */
static void test_transport_reset(void)
{
	uint64_t end;
	uint32_t hp, id, len;
	int fd;

	dev_open();
	drv_start();
	fd = host_to_guest(52, &hp);
	put_le(EVBUF_GPA, 0xffffffff, 4);
	desc_set(VSOCK_EVQ, 0, EVBUF_GPA, 4, VIRTQ_DESC_F_WRITE, 0);
	avail_add(VSOCK_EVQ, 0);
	kick(VSOCK_EVQ);
	sleep_ms(20);
	CHECK_EQ(used_idx(VSOCK_EVQ), 0); /* nothing to say yet */
	CHECK_EQ(vsock_dev_send_reset(dev), 0);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_EVQ) != 1 && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(used_idx(VSOCK_EVQ), 1);
	used_elem(VSOCK_EVQ, 0, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 4);
	CHECK_EQ(le_get(host(EVBUF_GPA), 4), VSOCK_EVENT_TRANSPORT_RESET);
	CHECK(host_sees_eof(fd, 5000));
	CHECK_EQ(stats().events_sent, 1);
	CHECK(atomic_load(&notify_count[VSOCK_EVQ]) >= 1);
	close(fd);
	/* A device reset closes connections too. */
	fd = host_to_guest(53, &hp);
	set_status(0);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	dev_close();
}

/* Hostile chains fail alone; the device keeps working. */
static void test_hostile(void)
{
	static uint8_t big[4096];
	struct pkt p = { .h.op = 0 };
	uint64_t end;
	uint32_t hp, id, len;
	uint16_t want;
	unsigned int i;
	int fd;

	dev_open();
	rx_first_len = 20; /* too small for a header */
	drv_start();
	rx_first_len = RXBUF_LEN;
	/* A tx chain shorter than a header, one outside guest RAM. */
	want = (uint16_t)(drv_avail[VSOCK_TXQ] + 2);
	desc_set(VSOCK_TXQ, 0, TXHDR_GPA, 10, 0, 0);
	avail_add(VSOCK_TXQ, 0);
	desc_set(VSOCK_TXQ, 1, RAM_GPA + RAM_SIZE, 64, 0, 0);
	avail_add(VSOCK_TXQ, 1);
	kick(VSOCK_TXQ);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_TXQ) != want && now_ms() < end)
		sleep_ms(1);
	CHECK_EQ(used_idx(VSOCK_TXQ), want);
	drv_used[VSOCK_TXQ] = want;
	CHECK_EQ(stats().bad_bufs, 2);
	/* The small rx buffer comes back empty, the REQUEST in the next. */
	fd = unix_connect(uds);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "CONNECT 52\n", 11), 11);
	end = now_ms() + 5000;
	while (used_idx(VSOCK_RXQ) == 0 && now_ms() < end)
		sleep_ms(1);
	used_elem(VSOCK_RXQ, drv_used[VSOCK_RXQ]++, &id, &len);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 0);
	rx_add(0);
	CHECK(rx(&p, 5000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	CHECK_EQ(stats().bad_bufs, 3);
	tx_op(52, p.h.src_port, VSOCK_OP_RESPONSE, 0);
	hp = p.h.src_port;
	CHECK_EQ(read_n(fd, big, 3), 3); /* "OK " */
	CHECK(!memcmp(big, "OK ", 3));
	read_n(fd, big, strlen("1073741824\n"));
	guest_to_host(fd, 52, hp, 1000, 5);
	/* A guest beyond our credit (§5.10.6.3): the host program reads
	 * nothing, its socket then our 256 KiB fill, and it is reset. */
	for (i = 0; i < 4096 && stats().credit_violations == 0; i++)
		tx(ghdr(52, hp, VSOCK_OP_RW), big, sizeof(big));
	CHECK_EQ(stats().credit_violations, 1);
	CHECK(i > VSOCK_BUF_ALLOC / sizeof(big));
	while (rx(&p, 500) && p.h.op != VSOCK_OP_RST)
		;
	CHECK_EQ(p.h.op, VSOCK_OP_RST);
	CHECK(host_sees_eof(fd, 5000));
	close(fd);
	CHECK(!(virtio_get_status(&vdev) & VIRTIO_STATUS_NEEDS_RESET));
	dev_close();
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	snprintf(dir, sizeof(dir), "%s/test_vsock.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(uds, sizeof(uds), "%s/v.sock", dir);
	test_config_and_create();
	test_host_initiated();
	test_guest_initiated();
	test_credit_stop();
	test_many();
	test_pause_resume();
	test_transport_reset();
	test_hostile();
	unlink(uds);
	rmdir(dir);
	free(ram);
	return test_done();
}
