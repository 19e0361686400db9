// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for virtio-net chain parsing (src/virtio/net_hdr.c)
 * behind the real split ring (src/virtio/virtq.c): the input is the
 * negotiated features, the control queue's max pairs, then the guest's
 * descriptor table, avail ring and buffer bytes. Every chain popped is
 * parsed as a tx packet and as a control command, and the results are
 * checked: every iovec inside guest RAM, the iovecs summing to the
 * chain, the frame within NET_MAX_FRAME, the ack byte in RAM and
 * device-writable, a command accepted only when it is VQ_PAIRS_SET of a
 * value in range. A broken promise abort()s.
 */
#include <errno.h>
#include <linux/virtio_net.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/guest_mem.h"
#include "virtio/net_hdr.h"
#include "virtio/virtq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The fuzzed guest: one RAM region with the rings at its start. */
#define RAM_GPA 0x10000ull
#define RAM_SIZE 0x20000ull
#define QSZ 64
#define DESC_GPA RAM_GPA
#define AVAIL_GPA (RAM_GPA + 0x1000ull)
#define USED_GPA (RAM_GPA + 0x2000ull)
#define PREFIX 9 /* features (8), max pairs (1) */

static uint8_t ram[RAM_SIZE];

static bool in_ram(const void *p, size_t len)
{
	const uint8_t *b = p;

	return b >= ram && len <= RAM_SIZE &&
	       (size_t)(b - ram) <= RAM_SIZE - len;
}

static void check_tx(const struct virtq_elem *e, uint64_t features)
{
	struct net_tx_pkt pkt;
	uint64_t total = 0;
	unsigned int i;

	if (net_tx_parse(e, features, &pkt) != NET_TX_OK)
		return;
	if (e->nr_in || pkt.frame_len > NET_MAX_FRAME ||
	    pkt.frame_len < NET_MIN_FRAME || pkt.iovcnt > 1 + NET_MAX_SEGS ||
	    pkt.iov[0].iov_base != pkt.hdr || pkt.hdr[10] || pkt.hdr[11])
		abort();
	for (i = 1; i < pkt.iovcnt; i++) {
		if (!in_ram(pkt.iov[i].iov_base, pkt.iov[i].iov_len))
			abort();
		total += pkt.iov[i].iov_len;
	}
	if (total != pkt.frame_len || total + NET_HDR_SIZE != e->out_len)
		abort();
	if (pkt.hdr[1] != VIRTIO_NET_HDR_GSO_NONE &&
	    !(pkt.hdr[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		abort();
}

static void check_ctrl(const struct virtq_elem *e, unsigned int max_pairs)
{
	struct net_ctrl_cmd cmd;
	enum net_ctrl_err err = net_ctrl_parse(e, max_pairs, &cmd);

	if ((err == NET_CTRL_ERR_NO_ACK) != !cmd.ack)
		abort();
	if (cmd.ack && (!in_ram(cmd.ack, 1) || !e->nr_in))
		abort();
	if (err == NET_CTRL_OK &&
	    (cmd.class != VIRTIO_NET_CTRL_MQ || !cmd.pairs ||
	     cmd.pairs > max_pairs))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct virtq_seg segs[NET_MAX_SEGS];
	struct guest_mem gm = { 0 };
	uint64_t features = 0;
	unsigned int max_pairs, i;
	struct virtq vq = { 0 };
	struct virtq_elem e;
	int r;

	if (size < PREFIX)
		return 0;
	memcpy(&features, data, 8);
	features |= 1ull << VIRTQ_F_INDIRECT_DESC;
	max_pairs = data[8] % 40;
	data += PREFIX;
	size -= PREFIX;
	memset(ram, 0, sizeof(ram));
	memcpy(ram, data, size < RAM_SIZE ? size : RAM_SIZE);
	if (guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 0;
	/* virtq_start() zeroes the used ring; avail is the input's. */
	if (virtq_start(&vq, &gm, QSZ, DESC_GPA, AVAIL_GPA, USED_GPA, features))
		return 0;
	for (i = 0; i < 2 * QSZ; i++) {
		e.segs = segs;
		e.max_segs = NET_MAX_SEGS;
		r = virtq_pop(&vq, &e);
		if (r == 0 || r == -EIO)
			break;
		if (r < 0) {
			virtq_push(&vq, e.head, 0);
			continue;
		}
		check_tx(&e, features);
		check_ctrl(&e, max_pairs);
		virtq_push(&vq, e.head, 0);
	}
	return 0;
}
