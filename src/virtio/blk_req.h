/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-blk requests (virtio 1.2 §5.2.6): the guest ABI constants and a pure
 * parser that turns one popped descriptor chain into a checked request, or
 * into one distinct error, before anything is executed. The parser assumes
 * no layout (§2.7.4): header, data and status may be cut anywhere.
 *
 *	struct iovec iov[N];
 *	struct blk_req req = { .iov = iov, .iov_max = N };
 *	err = blk_req_parse(&elem, &limits, &req);
 *	if (err)  complete with blk_req_status(err) if req.status, else len 0
 *	else      execute req.type on req.sector/nsect/iov
 */
#ifndef MICROVM_BLK_REQ_H
#define MICROVM_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtio/virtq.h"

/* Device ID of a block device (virtio 1.2 §5). */
#define VIRTIO_ID_BLOCK 2

/* Feature bits (virtio 1.2 §5.2.3). */
#define VIRTIO_BLK_F_SIZE_MAX 1
#define VIRTIO_BLK_F_SEG_MAX 2
#define VIRTIO_BLK_F_GEOMETRY 4
#define VIRTIO_BLK_F_RO 5
#define VIRTIO_BLK_F_BLK_SIZE 6
#define VIRTIO_BLK_F_FLUSH 9
#define VIRTIO_BLK_F_TOPOLOGY 10
#define VIRTIO_BLK_F_CONFIG_WCE 11
#define VIRTIO_BLK_F_MQ 12
#define VIRTIO_BLK_F_DISCARD 13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

/* Request types (virtio 1.2 §5.2.6). */
#define VIRTIO_BLK_T_IN 0
#define VIRTIO_BLK_T_OUT 1
#define VIRTIO_BLK_T_FLUSH 4
#define VIRTIO_BLK_T_GET_ID 8
#define VIRTIO_BLK_T_GET_LIFETIME 10
#define VIRTIO_BLK_T_DISCARD 11
#define VIRTIO_BLK_T_WRITE_ZEROES 13
#define VIRTIO_BLK_T_SECURE_ERASE 14

/* Status byte values (virtio 1.2 §5.2.6). */
#define VIRTIO_BLK_S_OK 0
#define VIRTIO_BLK_S_IOERR 1
#define VIRTIO_BLK_S_UNSUPP 2

/* struct virtio_blk_discard_write_zeroes flags. */
#define VIRTIO_BLK_WZ_F_UNMAP 1u

#define VIRTIO_BLK_ID_BYTES 20
#define VIRTIO_BLK_HDR_BYTES 16 /* type, reserved, sector */
#define VIRTIO_BLK_DWZ_BYTES 16 /* one discard/write-zeroes segment */
#define BLK_SECTOR_SHIFT 9
#define BLK_SECTOR_SIZE (1u << BLK_SECTOR_SHIFT)

/**
 * enum blk_req_error - why blk_req_parse() refused a chain.
 *
 * blk_req_status() maps each to the status byte; NO_STATUS cannot be
 * reported (the chain has no writable byte) and is pushed with length 0.
 */
enum blk_req_error {
	BLK_REQ_OK,
	BLK_REQ_ERR_NO_STATUS,     /* no device-writable byte for status */
	BLK_REQ_ERR_HDR_SHORT,     /* readable area shorter than the header */
	BLK_REQ_ERR_TYPE,          /* unknown request type (UNSUPP) */
	BLK_REQ_ERR_NOT_OFFERED,   /* discard/write-zeroes not negotiated */
	BLK_REQ_ERR_IN_READABLE,   /* IN with readable data after the header */
	BLK_REQ_ERR_EXTRA_WRITABLE, /* OUT/DISCARD/WZ: writable data */
	BLK_REQ_ERR_DATA_ALIGN,    /* IN/OUT data not a multiple of 512 */
	BLK_REQ_ERR_RANGE,         /* sector + count beyond capacity */
	BLK_REQ_ERR_READONLY,      /* write-type request on a read-only disk */
	BLK_REQ_ERR_SEG_LEN,       /* DISCARD/WZ payload not n * 16, n >= 1 */
	BLK_REQ_ERR_SEG_COUNT,     /* more than one DISCARD/WZ segment */
	BLK_REQ_ERR_SEG_FLAGS,     /* unknown flag, or UNMAP on DISCARD */
	BLK_REQ_ERR_SEG_SECTORS,   /* num_sectors above the advertised max */
	BLK_REQ_ERR_TOO_MANY_IOV,  /* more data segments than iov_max */
	BLK_REQ_ERR_COUNT
};

/* What the device offers and the driver negotiated, for the checks. */
struct blk_req_limits {
	uint64_t capacity;       /* 512-byte sectors */
	bool readonly;           /* VIRTIO_BLK_F_RO offered */
	bool discard;            /* VIRTIO_BLK_F_DISCARD negotiated */
	bool write_zeroes;       /* VIRTIO_BLK_F_WRITE_ZEROES negotiated */
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
};

/* A parsed request. The caller sets @iov and @iov_max before parsing. */
struct blk_req {
	uint32_t type;     /* VIRTIO_BLK_T_* from the header */
	uint64_t sector;   /* IN/OUT: header; DISCARD/WZ: the segment's */
	uint64_t nsect;    /* IN/OUT: data / 512; DISCARD/WZ: the segment's */
	uint32_t flags;    /* DISCARD/WZ segment flags */
	uint8_t *status;   /* host address of the status byte, or NULL */
	struct iovec *iov; /* IN/OUT/GET_ID data area, sliced from the chain */
	unsigned int iov_max;
	unsigned int iovcnt;
	uint64_t data_len; /* bytes covered by @iov */
};

/**
 * blk_req_parse() - check one descriptor chain and describe its request.
 * @e: chain from virtq_pop() (readable segments first, then writable)
 * @lim: capacity, read-only flag and negotiated discard/write-zeroes limits
 * @out: request out; @out->iov and @out->iov_max must be set
 *
 * The header (16 bytes, may span segments) and a DISCARD/WRITE_ZEROES
 * segment are copied out of guest memory once, then checked. The status is
 * the last device-writable byte; @out->status points to it as soon as it is
 * known, also on failure. Data iovecs are slices of the segments: for OUT
 * the readable bytes after the header, for IN the writable bytes before the
 * status, for GET_ID the first up to 20 of those.
 *
 * Decisions where the spec leaves room: FLUSH ignores its sector and any
 * data (§5.2.6.2 says the driver should send none); GET_ID ignores readable
 * data after the header and fills what fits of 20 bytes; zero-length IN and
 * OUT are valid no-ops (their sector must still be <= capacity); an IN with
 * readable data after the header, or an OUT, DISCARD or WRITE_ZEROES with
 * writable bytes besides the status, is an error (IOERR): the driver broke
 * §5.2.6.2 and guessing its intent could move data the wrong way.
 *
 * Return: BLK_REQ_OK, or the first check that failed.
 * Context: any thread; touches only @out and the chain's guest memory.
 */
enum blk_req_error blk_req_parse(const struct virtq_elem *e,
				 const struct blk_req_limits *lim,
				 struct blk_req *out);

/**
 * blk_req_status() - status byte reporting a parse error.
 * @err: error from blk_req_parse()
 * Return: VIRTIO_BLK_S_UNSUPP for requests the device does not support
 * (unknown type, not negotiated, flags, segment count), VIRTIO_BLK_S_OK for
 * BLK_REQ_OK, VIRTIO_BLK_S_IOERR otherwise. Context: any thread.
 */
uint8_t blk_req_status(enum blk_req_error err);

/**
 * blk_req_error_str() - short description of @err, for logs.
 * Return: a static string, "unknown" out of range. Context: any thread.
 */
const char *blk_req_error_str(enum blk_req_error err);

#endif
