/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The packet and connection core of virtio-vsock (virtio 1.2 §5.10) with
 * the "hybrid vsock" host side: packet header decode and checks, the
 * host's `CONNECT <port>\n` line, the connection table, each connection's
 * state machine and its credit accounting (§5.10.6.3). It makes no system
 * call: host sockets are reached through struct vsock_io_ops, so a fuzz
 * target or a unit test drives it with fakes, and the device (vsock.c)
 * with real sockets, from its one worker thread.
 *
 *	vsock_core_init(&vc, cid, &ops, dev);
 *	fd accepted on the listener:  vsock_core_host_accept(&vc, fd);
 *	a watched fd ready:           vsock_core_host_event(&vc, idx);
 *	each guest tx packet:         vsock_core_tx(&vc, hdr, iov, n, bytes);
 *	while vsock_core_rx_pending() and the guest has rx buffers:
 *		vsock_core_rx(&vc, hdr, iov, n, &len);
 *	each round:                   vsock_core_expire(&vc, now_ns);
 *	vsock_core_destroy(&vc);      (closes every host socket)
 *
 * Nothing a guest sends can make it grow: a fixed table of connections,
 * at most one buffer of VSOCK_BUF_ALLOC bytes each, control packets kept
 * as bits per connection, and a small ring of replies to strangers.
 */
#ifndef MICROVM_VIRTIO_VSOCK_CONN_H
#define MICROVM_VIRTIO_VSOCK_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Well-known CIDs (virtio 1.2 §5.10.4). */
#define VSOCK_HOST_CID 2
#define VSOCK_MIN_GUEST_CID 3

/* struct virtio_vsock_hdr, little-endian on the wire (§5.10.6). */
#define VSOCK_HDR_SIZE 44
#define VSOCK_TYPE_STREAM 1

enum vsock_op {
	VSOCK_OP_INVALID = 0,
	VSOCK_OP_REQUEST = 1,
	VSOCK_OP_RESPONSE = 2,
	VSOCK_OP_RST = 3,
	VSOCK_OP_SHUTDOWN = 4,
	VSOCK_OP_RW = 5,
	VSOCK_OP_CREDIT_UPDATE = 6,
	VSOCK_OP_CREDIT_REQUEST = 7,
};

/* OP_SHUTDOWN flags (§5.10.6.5). */
#define VSOCK_SHUTDOWN_RCV 1u
#define VSOCK_SHUTDOWN_SEND 2u

/* The bounds. */
#define VSOCK_MAX_CONNS 1024      /* live connections, both directions */
#define VSOCK_BUF_ALLOC (256u << 10) /* our receive buffer per connection */
#define VSOCK_MAX_PAYLOAD (64u << 10) /* one packet's payload, either way */
#define VSOCK_CREDIT_THRESHOLD (VSOCK_BUF_ALLOC / 4) /* forwarded bytes
						       * that earn an update */
#define VSOCK_STRAY_MAX 64        /* RST replies to unknown connections */
#define VSOCK_MAX_IOV 64          /* payload segments one packet uses */
#define VSOCK_LINE_MAX 32         /* "CONNECT 4294967295\n" is 19 bytes */
#define VSOCK_EPHEMERAL_BASE (UINT32_C(1) << 30) /* host ports we allocate */
#define VSOCK_REQUEST_TIMEOUT_NS (2000ull * 1000 * 1000)  /* guest answer */
#define VSOCK_SHUTDOWN_TIMEOUT_NS (2000ull * 1000 * 1000) /* guest RST */
#define VSOCK_LINE_TIMEOUT_NS (2000ull * 1000 * 1000) /* host's CONNECT */

struct vsock_hdr {
	uint64_t src_cid;
	uint64_t dst_cid;
	uint32_t src_port;
	uint32_t dst_port;
	uint32_t len;
	uint16_t type;
	uint16_t op;
	uint32_t flags;
	uint32_t buf_alloc;
	uint32_t fwd_cnt;
};

/**
 * enum vsock_hdr_err - why vsock_hdr_check() refused a guest packet.
 * The two CID errors drop the packet; the others are answered with RST.
 */
enum vsock_hdr_err {
	VSOCK_HDR_OK,
	VSOCK_HDR_SRC_CID,  /* src_cid is not the guest's CID */
	VSOCK_HDR_DST_CID,  /* dst_cid is not the host (2) */
	VSOCK_HDR_TYPE,     /* not SOCK_STREAM (no SEQPACKET offered) */
	VSOCK_HDR_OP,       /* op outside REQUEST .. CREDIT_REQUEST */
	VSOCK_HDR_LEN_MAX,  /* len above VSOCK_MAX_PAYLOAD */
	VSOCK_HDR_LEN_CHAIN, /* len above the bytes the chain carries */
	VSOCK_HDR_LEN_CTRL, /* a control packet (not RW) with a payload */
	VSOCK_HDR_ERR_COUNT
};

/**
 * vsock_hdr_decode() - the header in @b (VSOCK_HDR_SIZE bytes) into @h.
 * Context: any thread.
 */
void vsock_hdr_decode(const uint8_t *b, struct vsock_hdr *h);

/**
 * vsock_hdr_encode() - @h into @b (VSOCK_HDR_SIZE bytes), little-endian.
 * Context: any thread.
 */
void vsock_hdr_encode(uint8_t *b, const struct vsock_hdr *h);

/**
 * vsock_hdr_check() - is @h a packet this device takes from the guest?
 * @guest_cid: the guest's CID
 * @payload: bytes the chain carries after the header
 * Return: VSOCK_HDR_OK or the first failed check, in enum order.
 * Context: any thread.
 */
enum vsock_hdr_err vsock_hdr_check(const struct vsock_hdr *h,
				   uint64_t guest_cid, uint64_t payload);

/**
 * vsock_hdr_err_str() - short name of @err for logs ("unknown" if out of
 * range). Context: any thread.
 */
const char *vsock_hdr_err_str(enum vsock_hdr_err err);

/* The host program's first line, "CONNECT <port>\n" (decimal u32). */
struct vsock_line {
	char buf[VSOCK_LINE_MAX];
	unsigned int len;
};

/**
 * vsock_line_feed() - take bytes of the line from @p, up to and including
 * its '\n'; the rest of @p is not looked at.
 * @used: bytes of @p taken
 * @port: the port once the line is complete
 * Return: 1 complete (@port set), 0 more bytes needed, -EINVAL malformed
 * or longer than VSOCK_LINE_MAX (the connection is then closed).
 * Context: any thread.
 */
int vsock_line_feed(struct vsock_line *l, const char *p, size_t n,
		    size_t *used, uint32_t *port);

/* What a connection's host socket is watched for (vsock_io_ops.watch). */
#define VSOCK_WATCH_IN 1u
#define VSOCK_WATCH_OUT 2u

/*
 * The host side, the device's (real sockets) or a test's. @idx is the
 * connection's table index, the tag of its fd in the device's worker.
 * send/recv return bytes, 0 (recv: end of file), -EAGAIN, or -errno.
 */
struct vsock_io_ops {
	/* Connect to the host's listener for @port (<uds_path>_<port>). */
	int (*connect)(void *opaque, uint32_t port, int *fd);
	ssize_t (*send)(void *opaque, int fd, const struct iovec *iov,
			int iovcnt);
	ssize_t (*recv)(void *opaque, int fd, const struct iovec *iov,
			int iovcnt);
	/* Watch @fd for VSOCK_WATCH_* (0: not at all, not even a hangup). */
	void (*watch)(void *opaque, int fd, uint32_t idx, uint32_t events);
	/* Our side will send no more (shutdown(SHUT_WR)). */
	void (*shut_wr)(void *opaque, int fd);
	/* Stop watching and close @fd. */
	void (*close)(void *opaque, int fd, uint32_t idx);
};

/* Counters; written by the worker, read by any thread (metrics). */
struct vsock_stats {
	atomic_uint_fast64_t tx_packets;  /* guest -> host, taken */
	atomic_uint_fast64_t tx_bytes;    /* payload bytes of those */
	atomic_uint_fast64_t rx_packets;  /* host -> guest */
	atomic_uint_fast64_t rx_bytes;
	atomic_uint_fast64_t conns_host;  /* host programs that connected */
	atomic_uint_fast64_t conns_guest; /* guest REQUESTs served */
	atomic_uint_fast64_t conns_closed;
	atomic_uint_fast64_t conns_refused; /* table full, no listener, ... */
	atomic_uint_fast64_t rst_sent;
	atomic_uint_fast64_t rst_received;
	atomic_uint_fast64_t invalid;     /* packets refused by the checks */
	atomic_uint_fast64_t credit_violations; /* RW beyond our credit */
	atomic_uint_fast64_t stray_dropped; /* RST replies with no room */
	atomic_uint_fast64_t bad_lines;   /* CONNECT lines refused */
	atomic_uint_fast64_t timeouts;    /* guest did not answer in time */
	atomic_uint_fast64_t bad_bufs;    /* device: unusable chains */
	atomic_uint_fast64_t events_sent; /* device: TRANSPORT_RESET */
};

enum vsock_state {
	VSOCK_FREE,
	VSOCK_AWAIT_LINE,   /* host program connected, reading its line */
	VSOCK_REQUEST_SENT, /* our REQUEST to the guest, no answer yet */
	VSOCK_ESTABLISHED,
	VSOCK_CLOSING,      /* host EOF: SHUTDOWN sent, awaiting the RST */
	VSOCK_RST_PENDING,  /* host socket closed, our RST still to send */
};

/* Control packets a connection owes the guest (vsock_conn.pending). */
#define VSOCK_PEND_REQUEST 1u
#define VSOCK_PEND_RESPONSE 2u
#define VSOCK_PEND_CREDIT 4u
#define VSOCK_PEND_SHUTDOWN 8u

struct vsock_conn {
	enum vsock_state state;
	int fd;
	uint32_t local_port; /* the host side's */
	uint32_t peer_port;  /* the guest's */
	int32_t hnext;       /* hash chain */
	uint32_t pending;    /* VSOCK_PEND_* */
	bool in_rxq;         /* in the rx ready ring (stays with the slot) */
	bool readable;       /* the host socket has data to read */
	bool host_eof;
	bool shut_rcv;       /* the guest will receive no more */
	bool shut_send;      /* the guest will send no more */
	bool close_drained;  /* RST and close once the buffer is written */
	uint32_t watching;   /* VSOCK_WATCH_* as last told to ops->watch */
	/* Guest -> host: rx_cnt bytes taken, fwd_cnt written to the host
	 * socket; the difference sits in buf (§5.10.6.3). */
	uint32_t rx_cnt, fwd_cnt, fwd_sent;
	/* Host -> guest: tx_cnt bytes sent; the guest's last credit. */
	uint32_t tx_cnt, peer_buf_alloc, peer_fwd_cnt;
	uint8_t *buf;        /* ring of VSOCK_BUF_ALLOC bytes, or NULL */
	uint32_t buf_head, buf_len;
	uint64_t deadline;   /* ns; 0: none */
	struct vsock_line line;
};

struct vsock_core {
	const struct vsock_io_ops *ops;
	void *opaque;
	uint64_t guest_cid;
	uint64_t now;         /* ns, from the last vsock_core_expire() */
	uint64_t next_deadline; /* earliest connection deadline; 0: none */
	struct vsock_conn *conns; /* VSOCK_MAX_CONNS */
	int32_t *hash;        /* VSOCK_HASH_SIZE chain heads */
	uint16_t *free_idx;   /* stack of free slots */
	unsigned int nr_free;
	uint16_t *rxq;        /* ring of slots with something for the guest */
	unsigned int rxq_head, rxq_len;
	struct {
		uint32_t local_port, peer_port;
	} stray[VSOCK_STRAY_MAX];
	unsigned int stray_head, stray_len;
	uint32_t next_port;   /* next ephemeral port to try */
	struct vsock_stats stats;
};

/**
 * vsock_core_init() - an empty table for the guest @guest_cid.
 * Return: 0 or -ENOMEM.  Context: device setup.
 */
int vsock_core_init(struct vsock_core *vc, uint64_t guest_cid,
		    const struct vsock_io_ops *ops, void *opaque);

/**
 * vsock_core_destroy() - vsock_core_reset(), then free the table.
 * Context: device teardown (the worker stopped).
 */
void vsock_core_destroy(struct vsock_core *vc);

/**
 * vsock_core_reset() - close every connection's host socket and forget
 * them, and every reply owed (device reset, TRANSPORT_RESET). Counters
 * stay. Context: the worker, or any thread while it is stopped.
 */
void vsock_core_reset(struct vsock_core *vc);

/**
 * vsock_core_host_accept() - a host program connected (@fd, non-blocking):
 * read its CONNECT line next, within VSOCK_LINE_TIMEOUT_NS. At
 * VSOCK_MAX_CONNS it is refused.
 * Return: 0, or -ENOSPC (the caller closes @fd).  Context: the worker.
 */
int vsock_core_host_accept(struct vsock_core *vc, int fd);

/**
 * vsock_core_host_event() - connection @idx's socket is ready for what it
 * was watched for (or hung up). Context: the worker.
 */
void vsock_core_host_event(struct vsock_core *vc, uint32_t idx);

/**
 * vsock_core_tx() - one packet from the guest's tx queue.
 * @hdr: its VSOCK_HDR_SIZE header bytes (a copy, not guest memory)
 * @iov: the payload that follows it in the chain (guest memory), @bytes
 *       in all; only hdr.len of them are the packet's
 * Context: the worker.
 */
void vsock_core_tx(struct vsock_core *vc, const uint8_t *hdr,
		   const struct iovec *iov, int iovcnt, uint64_t bytes);

/**
 * vsock_core_rx_pending() - is anything owed to the guest?
 * Context: the worker.
 */
bool vsock_core_rx_pending(const struct vsock_core *vc);

/**
 * vsock_core_rx() - the next packet for the guest: its header into @hdr,
 * its payload (at most VSOCK_MAX_PAYLOAD, within the guest's credit)
 * read from a host socket into @iov.
 * @len: payload bytes written
 * Return: 1 a packet, 0 nothing after all (sockets had no data).
 * Context: the worker.
 */
int vsock_core_rx(struct vsock_core *vc, uint8_t *hdr,
		  const struct iovec *iov, int iovcnt, uint32_t *len);

/**
 * vsock_core_expire() - take the time (monotonic ns) and act on
 * connections whose deadline passed: a host program that does not send
 * its CONNECT line, no answer to our REQUEST, no RST after our SHUTDOWN,
 * a host that does not read what it was sent.
 * Return: the earliest deadline left, or 0 for none.  Context: the worker.
 */
uint64_t vsock_core_expire(struct vsock_core *vc, uint64_t now);

/**
 * vsock_core_nr_conns() - live connections (slots in use).
 */
unsigned int vsock_core_nr_conns(const struct vsock_core *vc);

/**
 * vsock_core_find() - the slot of the connection (@local_port, @peer_port)
 * or -1. For tests and the device's stats. Context: the worker.
 */
int vsock_core_find(const struct vsock_core *vc, uint32_t local_port,
		    uint32_t peer_port);

#endif
