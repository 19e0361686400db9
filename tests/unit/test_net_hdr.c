// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-net chain parsers (src/virtio/net_hdr.c) on chains built in
 * host memory: one table row per tx header error (virtio 1.2 §5.1.6.2)
 * and per control-queue error (§5.1.6.5), a test that every error code
 * has a row, and the iovecs of a good packet (header copied, num_buffers
 * zeroed, frame split across segments as the guest split it).
 */
#include <linux/virtio_net.h>
#include <stdbool.h>

#include "test.h"
#include "util/le.h"
#include "virtio/net_hdr.h"

#define F(bit) (1ull << (bit))
#define ALL_TX (F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |       \
		F(VIRTIO_NET_F_HOST_TSO6))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t buf[NET_MAX_PACKET + 64];
static struct virtq_seg segs[NET_MAX_SEGS + 2];

/* A chain of @nr_out readable segments over buf, @nr_in writable. */
static struct virtq_elem chain(uint64_t len, unsigned int nr_out,
			       unsigned int nr_in)
{
	struct virtq_elem e = { .segs = segs, .max_segs = NET_MAX_SEGS + 2 };
	uint64_t off = 0;
	unsigned int i;

	for (i = 0; i < nr_out; i++) {
		uint64_t l = i + 1 < nr_out ? len / nr_out : len - off;

		segs[i] = (struct virtq_seg){ buf + off, (uint32_t)l };
		off += l;
	}
	for (i = 0; i < nr_in; i++)
		segs[nr_out + i] = (struct virtq_seg){ buf + off + i, 1 };
	e.nr_out = (uint16_t)nr_out;
	e.nr_in = (uint16_t)nr_in;
	e.out_len = len;
	e.in_len = nr_in;
	return e;
}

static void hdr(uint8_t flags, uint8_t gso, uint16_t gso_size,
		uint16_t cstart, uint16_t coff)
{
	memset(buf, 0, NET_HDR_SIZE);
	buf[0] = flags;
	buf[1] = gso;
	le_put(buf + 4, 2, gso_size);
	le_put(buf + 6, 2, cstart);
	le_put(buf + 8, 2, coff);
	le_put(buf + 10, 2, 0x5555); /* num_buffers: must be zeroed */
}

struct tx_row {
	const char *what;
	uint8_t flags, gso;
	uint16_t gso_size, cstart, coff;
	uint64_t len;        /* out bytes, header included */
	unsigned int nr_out, nr_in;
	uint64_t features;
	enum net_tx_err want;
};

#define NC VIRTIO_NET_HDR_F_NEEDS_CSUM
static const struct tx_row tx_rows[] = {
	{ .what = "plain", .len = 12 + 60, .nr_out = 2, .want = NET_TX_OK },
	{ .what = "tso4", .flags = NC, .gso = VIRTIO_NET_HDR_GSO_TCPV4,
	  .gso_size = 1448, .cstart = 34, .coff = 16, .len = 12 + 9000,
	  .nr_out = 3, .features = ALL_TX, .want = NET_TX_OK },
	{ .what = "largest", .len = NET_MAX_PACKET, .nr_out = 4,
	  .want = NET_TX_OK },
	{ .what = "writable", .len = 72, .nr_out = 1, .nr_in = 1,
	  .want = NET_TX_ERR_WRITABLE },
	{ .what = "segments", .len = 12 + 4000, .nr_out = NET_MAX_SEGS + 1,
	  .want = NET_TX_ERR_SEGS },
	{ .what = "short header", .len = 11, .nr_out = 1,
	  .want = NET_TX_ERR_SHORT_HDR },
	{ .what = "short frame", .len = 12 + 13, .nr_out = 1,
	  .want = NET_TX_ERR_SHORT_FRAME },
	{ .what = "too long", .len = NET_MAX_PACKET + 1, .nr_out = 2,
	  .want = NET_TX_ERR_TOO_LONG },
	{ .what = "data valid", .flags = VIRTIO_NET_HDR_F_DATA_VALID,
	  .len = 72, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_FLAGS },
	{ .what = "csum unnegotiated", .flags = NC, .len = 72, .nr_out = 1,
	  .want = NET_TX_ERR_CSUM_FEATURE },
	{ .what = "csum beyond", .flags = NC, .cstart = 50, .coff = 9,
	  .len = 72, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_CSUM_RANGE },
	{ .what = "csum max", .flags = NC, .cstart = 0xffff, .coff = 0xffff,
	  .len = 72, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_CSUM_RANGE },
	{ .what = "ufo", .flags = NC, .gso = VIRTIO_NET_HDR_GSO_UDP,
	  .gso_size = 1000, .len = 3000, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_GSO_TYPE },
	{ .what = "ecn", .flags = NC,
	  .gso = VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN,
	  .gso_size = 1000, .len = 3000, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_GSO_TYPE },
	{ .what = "tso6 unnegotiated", .flags = NC,
	  .gso = VIRTIO_NET_HDR_GSO_TCPV6, .gso_size = 1000, .len = 3000,
	  .nr_out = 1, .features = F(VIRTIO_NET_F_CSUM),
	  .want = NET_TX_ERR_GSO_FEATURE },
	{ .what = "gso no csum", .gso = VIRTIO_NET_HDR_GSO_TCPV4,
	  .gso_size = 1000, .len = 3000, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_GSO_CSUM },
	{ .what = "gso size 0", .flags = NC, .gso = VIRTIO_NET_HDR_GSO_TCPV6,
	  .len = 3000, .nr_out = 1, .features = ALL_TX,
	  .want = NET_TX_ERR_GSO_SIZE },
};

static void test_tx_rows(void)
{
	bool seen[NET_TX_ERR_COUNT] = { false };
	struct net_tx_pkt pkt;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(tx_rows); i++) {
		const struct tx_row *r = &tx_rows[i];
		struct virtq_elem e;
		enum net_tx_err got;
		size_t total = 0;

		hdr(r->flags, r->gso, r->gso_size, r->cstart, r->coff);
		e = chain(r->len, r->nr_out, r->nr_in);
		got = net_tx_parse(&e, r->features, &pkt);
		if (got != r->want)
			fprintf(stderr, "row %s: %s\n", r->what,
				net_tx_err_str(got));
		CHECK_EQ(got, r->want);
		seen[r->want] = true;
		if (got != NET_TX_OK)
			continue;
		CHECK(pkt.iov[0].iov_base == pkt.hdr);
		CHECK_EQ(pkt.hdr[10] | pkt.hdr[11], 0);
		CHECK(!memcmp(pkt.hdr, buf, 10));
		for (k = 0; k < pkt.iovcnt; k++)
			total += pkt.iov[k].iov_len;
		CHECK_EQ(total, r->len);
		CHECK_EQ(pkt.frame_len, r->len - NET_HDR_SIZE);
		/* The frame starts right after the guest's header. */
		CHECK(pkt.iov[1].iov_base == buf + NET_HDR_SIZE);
	}
	for (i = 0; i < NET_TX_ERR_COUNT; i++) {
		if (!seen[i])
			fprintf(stderr, "tx error %s has no row\n",
				net_tx_err_str(i));
		CHECK(seen[i]);
	}
}

/* A header split 5 + 7 across segments is copied whole. */
static void test_tx_split_header(void)
{
	struct virtq_elem e = chain(12 + 100, 1, 0);
	struct net_tx_pkt pkt;

	hdr(0, 0, 0, 0, 0);
	buf[2] = 0x34; /* hdr_len */
	segs[0] = (struct virtq_seg){ buf, 5 };
	segs[1] = (struct virtq_seg){ buf + 5, 107 };
	e.nr_out = 2;
	CHECK_EQ(net_tx_parse(&e, 0, &pkt), NET_TX_OK);
	CHECK_EQ(pkt.hdr[2], 0x34);
	CHECK_EQ(pkt.iovcnt, 2);
	CHECK(pkt.iov[1].iov_base == buf + 12);
	CHECK_EQ(pkt.iov[1].iov_len, 100);
}

struct ctrl_row {
	const char *what;
	uint8_t bytes[8];
	unsigned int len, nr_in;
	enum net_ctrl_err want;
	uint16_t pairs;
};

static const struct ctrl_row ctrl_rows[] = {
	{ .what = "set 2", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 2, 0 }, .len = 4,
	  .nr_in = 1, .want = NET_CTRL_OK, .pairs = 2 },
	{ .what = "set max", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 4, 0 },
	  .len = 4, .nr_in = 1, .want = NET_CTRL_OK, .pairs = 4 },
	{ .what = "no ack", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 2, 0 },
	  .len = 4, .want = NET_CTRL_ERR_NO_ACK },
	{ .what = "short", .bytes = { VIRTIO_NET_CTRL_MQ }, .len = 1,
	  .nr_in = 1, .want = NET_CTRL_ERR_SHORT },
	{ .what = "too long", .len = NET_CTRL_MAX_OUT + 1, .nr_in = 1,
	  .bytes = { VIRTIO_NET_CTRL_MQ }, .want = NET_CTRL_ERR_TOO_LONG },
	{ .what = "rx class", .bytes = { VIRTIO_NET_CTRL_RX, 0, 1 }, .len = 3,
	  .nr_in = 1, .want = NET_CTRL_ERR_CLASS },
	{ .what = "rss", .bytes = { VIRTIO_NET_CTRL_MQ, 1 }, .len = 2,
	  .nr_in = 1, .want = NET_CTRL_ERR_CMD },
	{ .what = "data 1", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 2 }, .len = 3,
	  .nr_in = 1, .want = NET_CTRL_ERR_LEN },
	{ .what = "data 3", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 2, 0, 0 },
	  .len = 5, .nr_in = 1, .want = NET_CTRL_ERR_LEN },
	{ .what = "zero", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 0, 0 }, .len = 4,
	  .nr_in = 1, .want = NET_CTRL_ERR_PAIRS },
	{ .what = "above max", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 5, 0 },
	  .len = 4, .nr_in = 1, .want = NET_CTRL_ERR_PAIRS },
	{ .what = "0x8000", .bytes = { VIRTIO_NET_CTRL_MQ, 0, 0, 0x80 },
	  .len = 4, .nr_in = 1, .want = NET_CTRL_ERR_PAIRS },
};

static void test_ctrl_rows(void)
{
	bool seen[NET_CTRL_ERR_COUNT] = { false };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctrl_rows); i++) {
		const struct ctrl_row *r = &ctrl_rows[i];
		struct net_ctrl_cmd cmd;
		struct virtq_elem e;
		enum net_ctrl_err got;

		memset(buf, 0, 128);
		memcpy(buf, r->bytes, sizeof(r->bytes));
		e = chain(r->len, 1, r->nr_in);
		got = net_ctrl_parse(&e, 4, &cmd);
		if (got != r->want)
			fprintf(stderr, "row %s: %s\n", r->what,
				net_ctrl_err_str(got));
		CHECK_EQ(got, r->want);
		seen[r->want] = true;
		/* Every answerable error has its ack byte. */
		CHECK(r->nr_in ? cmd.ack == buf + r->len : cmd.ack == NULL);
		if (got == NET_CTRL_OK)
			CHECK_EQ(cmd.pairs, r->pairs);
	}
	for (i = 0; i < NET_CTRL_ERR_COUNT; i++) {
		if (!seen[i])
			fprintf(stderr, "ctrl error %s has no row\n",
				net_ctrl_err_str(i));
		CHECK(seen[i]);
	}
	CHECK(!strcmp(net_tx_err_str(NET_TX_ERR_COUNT), "unknown"));
	CHECK(!strcmp(net_ctrl_err_str(NET_CTRL_ERR_COUNT), "unknown"));
}

int main(void)
{
	test_tx_rows();
	test_tx_split_header();
	test_ctrl_rows();
	return test_done();
}
