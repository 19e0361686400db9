/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure part of virtio-net (virtio 1.2 §5.1): parsing what the guest
 * puts in a tx chain (struct virtio_net_hdr_mrg_rxbuf, then the frame)
 * and in a control-queue chain (class, command, data, ack), with one
 * error code per failure. Nothing here does I/O or keeps state: the
 * header is copied out of guest memory once and checked on that copy,
 * and the frame is described by iovecs into guest RAM for writev().
 *
 *	err = net_tx_parse(&elem, features, &pkt);     // pkt.hdr, pkt.iov
 *	err = net_ctrl_parse(&elem, max_pairs, &cmd);  // cmd.ack points
 */
#ifndef MICROVM_VIRTIO_NET_HDR_H
#define MICROVM_VIRTIO_NET_HDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtio/virtq.h"

/* The header with VERSION_1 always has num_buffers (§5.1.6): 12 bytes. */
#define NET_HDR_SIZE 12u
/* Shortest frame a tap takes: an Ethernet header. */
#define NET_MIN_FRAME 14u
/* Longest frame either way: 64 KiB of GSO payload, Ethernet and VLAN
 * headers (what Linux's virtio-net driver sizes big buffers for). */
#define NET_MAX_FRAME 65550u
#define NET_MAX_PACKET (NET_HDR_SIZE + NET_MAX_FRAME)
/* Segments of one chain; more fail the chain (virtq_pop). */
#define NET_MAX_SEGS 64u
/* Readable bytes of a control command (class, command, data). */
#define NET_CTRL_MAX_OUT 64u

enum net_tx_err {
	NET_TX_OK,
	NET_TX_ERR_WRITABLE,     /* a device-writable segment */
	NET_TX_ERR_SEGS,         /* more than NET_MAX_SEGS segments */
	NET_TX_ERR_SHORT_HDR,    /* fewer than NET_HDR_SIZE bytes */
	NET_TX_ERR_SHORT_FRAME,  /* frame below NET_MIN_FRAME */
	NET_TX_ERR_TOO_LONG,     /* frame above NET_MAX_FRAME */
	NET_TX_ERR_FLAGS,        /* flags other than NEEDS_CSUM */
	NET_TX_ERR_CSUM_FEATURE, /* NEEDS_CSUM without VIRTIO_NET_F_CSUM */
	NET_TX_ERR_CSUM_RANGE,   /* csum_start + csum_offset + 2 > frame */
	NET_TX_ERR_GSO_TYPE,     /* gso_type not NONE, TCPV4 or TCPV6 */
	NET_TX_ERR_GSO_FEATURE,  /* TCPV4/6 without HOST_TSO4/6 */
	NET_TX_ERR_GSO_CSUM,     /* GSO without NEEDS_CSUM (§5.1.6.2.1) */
	NET_TX_ERR_GSO_SIZE,     /* GSO with gso_size 0 */
	NET_TX_ERR_COUNT
};

/* A parsed tx packet: the checked header copy, then the frame. */
struct net_tx_pkt {
	uint8_t hdr[NET_HDR_SIZE]; /* num_buffers zeroed */
	struct iovec iov[1 + NET_MAX_SEGS]; /* iov[0] is @hdr */
	unsigned int iovcnt;
	uint32_t frame_len;
};

enum net_ctrl_err {
	NET_CTRL_OK,
	NET_CTRL_ERR_NO_ACK,    /* no writable byte: fail the chain */
	NET_CTRL_ERR_SHORT,     /* fewer than 2 readable bytes */
	NET_CTRL_ERR_TOO_LONG,  /* more than NET_CTRL_MAX_OUT */
	NET_CTRL_ERR_CLASS,     /* a class not offered */
	NET_CTRL_ERR_CMD,       /* a command of the MQ class not offered */
	NET_CTRL_ERR_LEN,       /* VQ_PAIRS_SET data not 2 bytes */
	NET_CTRL_ERR_PAIRS,     /* pairs outside 1 .. max_virtqueue_pairs */
	NET_CTRL_ERR_COUNT
};

struct net_ctrl_cmd {
	uint8_t class, cmd;
	uint16_t pairs;   /* VQ_PAIRS_SET */
	uint8_t *ack;     /* the first writable byte, or NULL */
};

/**
 * net_tx_parse() - check a popped tx chain and describe it for writev().
 * @e: the chain (segments in guest RAM, checked by virtq_pop())
 * @features: the negotiated feature bits
 * @out: the header copy and iovecs (pointing into @e's segments)
 * Return: NET_TX_OK or the first error found. Context: any thread.
 */
enum net_tx_err net_tx_parse(const struct virtq_elem *e, uint64_t features,
			     struct net_tx_pkt *out);

/**
 * net_ctrl_parse() - check a control-queue chain (§5.1.6.5): class and
 * command of the readable part, VIRTIO_NET_CTRL_MQ VQ_PAIRS_SET only.
 * @e: the chain
 * @max_pairs: max_virtqueue_pairs of the configuration space
 * @out: the command; out->ack is set whenever the chain has a writable
 *       byte (so that any error but NET_CTRL_ERR_NO_ACK is answered)
 * Return: NET_CTRL_OK or the first error found. Context: any thread.
 */
enum net_ctrl_err net_ctrl_parse(const struct virtq_elem *e,
				 unsigned int max_pairs,
				 struct net_ctrl_cmd *out);

/** net_tx_err_str(), net_ctrl_err_str() - short names, for logs. */
const char *net_tx_err_str(enum net_tx_err err);
const char *net_ctrl_err_str(enum net_ctrl_err err);

/**
 * net_copy_out() - copy @n bytes of the readable segments of @e from
 * byte @off into @dst. Return: bytes copied (less at the chain's end).
 */
size_t net_copy_out(const struct virtq_elem *e, size_t off, uint8_t *dst,
		    size_t n);

#endif
