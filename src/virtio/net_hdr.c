// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-net chain parsing (net_hdr.h): the tx header rules of virtio 1.2
 * §5.1.6.2 checked against the negotiated features, and the control
 * queue's VIRTIO_NET_CTRL_MQ command (§5.1.6.5.5). Every guest field is
 * read once from a host copy; all sums are of 16-bit values in 32 bits.
 */
#include "virtio/net_hdr.h"

#include <linux/virtio_net.h>
#include <string.h>

#include "util/le.h"

#define F(bit) (1ull << (bit))

size_t net_copy_out(const struct virtq_elem *e, size_t off, uint8_t *dst,
		    size_t n)
{
	size_t done = 0;
	unsigned int s;

	for (s = 0; s < e->nr_out && done < n; s++) {
		size_t len = e->segs[s].len, k;

		if (off >= len) {
			off -= len;
			continue;
		}
		k = len - off < n - done ? len - off : n - done;
		memcpy(dst + done, (const uint8_t *)e->segs[s].addr + off, k);
		done += k;
		off = 0;
	}
	return done;
}

/* The header rules, on the host copy. */
static enum net_tx_err net_tx_check_hdr(const uint8_t *h, uint64_t features,
					uint32_t frame_len)
{
	uint8_t flags = h[0], gso = h[1];
	uint32_t gso_size = (uint32_t)le_get(h + 4, 2);
	uint32_t csum_start = (uint32_t)le_get(h + 6, 2);
	uint32_t csum_offset = (uint32_t)le_get(h + 8, 2);

	if (flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM)
		return NET_TX_ERR_FLAGS;
	if (flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!(features & F(VIRTIO_NET_F_CSUM)))
			return NET_TX_ERR_CSUM_FEATURE;
		if (csum_start + csum_offset + 2 > frame_len)
			return NET_TX_ERR_CSUM_RANGE;
	}
	switch (gso) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return NET_TX_OK;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		if (!(features & F(VIRTIO_NET_F_HOST_TSO4)))
			return NET_TX_ERR_GSO_FEATURE;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		if (!(features & F(VIRTIO_NET_F_HOST_TSO6)))
			return NET_TX_ERR_GSO_FEATURE;
		break;
	default: /* UDP (UFO), ECN, anything else: not offered */
		return NET_TX_ERR_GSO_TYPE;
	}
	if (!(flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return NET_TX_ERR_GSO_CSUM;
	if (!gso_size)
		return NET_TX_ERR_GSO_SIZE;
	return NET_TX_OK;
}

enum net_tx_err net_tx_parse(const struct virtq_elem *e, uint64_t features,
			     struct net_tx_pkt *out)
{
	size_t skip = NET_HDR_SIZE;
	uint64_t frame;
	enum net_tx_err err;
	unsigned int s, n = 1;

	if (e->nr_in)
		return NET_TX_ERR_WRITABLE;
	if (e->nr_out > NET_MAX_SEGS)
		return NET_TX_ERR_SEGS;
	if (e->out_len < NET_HDR_SIZE)
		return NET_TX_ERR_SHORT_HDR;
	frame = e->out_len - NET_HDR_SIZE;
	if (frame < NET_MIN_FRAME)
		return NET_TX_ERR_SHORT_FRAME;
	if (frame > NET_MAX_FRAME)
		return NET_TX_ERR_TOO_LONG;
	if (net_copy_out(e, 0, out->hdr, NET_HDR_SIZE) != NET_HDR_SIZE)
		return NET_TX_ERR_SHORT_HDR; /* out_len lied: cannot happen */
	err = net_tx_check_hdr(out->hdr, features, (uint32_t)frame);
	if (err)
		return err;
	/* num_buffers is the device's on rx; on tx it means nothing. */
	out->hdr[10] = out->hdr[11] = 0;
	out->iov[0] = (struct iovec){ out->hdr, NET_HDR_SIZE };
	for (s = 0; s < e->nr_out; s++) {
		size_t len = e->segs[s].len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		out->iov[n++] = (struct iovec){
			(uint8_t *)e->segs[s].addr + skip, len - skip };
		skip = 0;
	}
	out->iovcnt = n;
	out->frame_len = (uint32_t)frame;
	return NET_TX_OK;
}

enum net_ctrl_err net_ctrl_parse(const struct virtq_elem *e,
				 unsigned int max_pairs,
				 struct net_ctrl_cmd *out)
{
	uint8_t buf[NET_CTRL_MAX_OUT];
	size_t n;

	memset(out, 0, sizeof(*out));
	if (e->nr_in)
		out->ack = e->segs[e->nr_out].addr;
	else
		return NET_CTRL_ERR_NO_ACK;
	if (e->out_len < 2)
		return NET_CTRL_ERR_SHORT;
	if (e->out_len > NET_CTRL_MAX_OUT)
		return NET_CTRL_ERR_TOO_LONG;
	n = net_copy_out(e, 0, buf, (size_t)e->out_len);
	if (n < 2)
		return NET_CTRL_ERR_SHORT;
	out->class = buf[0];
	out->cmd = buf[1];
	if (out->class != VIRTIO_NET_CTRL_MQ)
		return NET_CTRL_ERR_CLASS;
	if (out->cmd != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET)
		return NET_CTRL_ERR_CMD;
	if (n != 4)
		return NET_CTRL_ERR_LEN;
	out->pairs = (uint16_t)le_get(buf + 2, 2);
	if (out->pairs < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN ||
	    out->pairs > max_pairs)
		return NET_CTRL_ERR_PAIRS;
	return NET_CTRL_OK;
}

static const char *const tx_err_names[NET_TX_ERR_COUNT] = {
	[NET_TX_OK] = "ok",
	[NET_TX_ERR_WRITABLE] = "writable segment",
	[NET_TX_ERR_SEGS] = "too many segments",
	[NET_TX_ERR_SHORT_HDR] = "short header",
	[NET_TX_ERR_SHORT_FRAME] = "short frame",
	[NET_TX_ERR_TOO_LONG] = "frame too long",
	[NET_TX_ERR_FLAGS] = "bad flags",
	[NET_TX_ERR_CSUM_FEATURE] = "checksum offload not negotiated",
	[NET_TX_ERR_CSUM_RANGE] = "checksum beyond the frame",
	[NET_TX_ERR_GSO_TYPE] = "gso type not offered",
	[NET_TX_ERR_GSO_FEATURE] = "gso not negotiated",
	[NET_TX_ERR_GSO_CSUM] = "gso without checksum offload",
	[NET_TX_ERR_GSO_SIZE] = "gso size 0",
};

static const char *const ctrl_err_names[NET_CTRL_ERR_COUNT] = {
	[NET_CTRL_OK] = "ok",
	[NET_CTRL_ERR_NO_ACK] = "no ack byte",
	[NET_CTRL_ERR_SHORT] = "short command",
	[NET_CTRL_ERR_TOO_LONG] = "command too long",
	[NET_CTRL_ERR_CLASS] = "class not offered",
	[NET_CTRL_ERR_CMD] = "command not offered",
	[NET_CTRL_ERR_LEN] = "bad data length",
	[NET_CTRL_ERR_PAIRS] = "queue pairs out of range",
};

const char *net_tx_err_str(enum net_tx_err err)
{
	return (unsigned int)err < NET_TX_ERR_COUNT ? tx_err_names[err] :
						      "unknown";
}

const char *net_ctrl_err_str(enum net_ctrl_err err)
{
	return (unsigned int)err < NET_CTRL_ERR_COUNT ? ctrl_err_names[err] :
							"unknown";
}
