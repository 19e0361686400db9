// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-vsock packet headers (virtio 1.2 §5.10.6): decode and encode the
 * 44 little-endian bytes, check a guest's header before anything acts on
 * it (one error code per check), and parse the hybrid host side's
 * `CONNECT <port>\n` line. Pure functions: no state, no system calls.
 */
#include "virtio/vsock_conn.h"

#include <errno.h>

#include "util/le.h"

void vsock_hdr_decode(const uint8_t *b, struct vsock_hdr *h)
{
	h->src_cid = le_get(b + 0, 8);
	h->dst_cid = le_get(b + 8, 8);
	h->src_port = (uint32_t)le_get(b + 16, 4);
	h->dst_port = (uint32_t)le_get(b + 20, 4);
	h->len = (uint32_t)le_get(b + 24, 4);
	h->type = (uint16_t)le_get(b + 28, 2);
	h->op = (uint16_t)le_get(b + 30, 2);
	h->flags = (uint32_t)le_get(b + 32, 4);
	h->buf_alloc = (uint32_t)le_get(b + 36, 4);
	h->fwd_cnt = (uint32_t)le_get(b + 40, 4);
}

void vsock_hdr_encode(uint8_t *b, const struct vsock_hdr *h)
{
	le_put(b + 0, 8, h->src_cid);
	le_put(b + 8, 8, h->dst_cid);
	le_put(b + 16, 4, h->src_port);
	le_put(b + 20, 4, h->dst_port);
	le_put(b + 24, 4, h->len);
	le_put(b + 28, 2, h->type);
	le_put(b + 30, 2, h->op);
	le_put(b + 32, 4, h->flags);
	le_put(b + 36, 4, h->buf_alloc);
	le_put(b + 40, 4, h->fwd_cnt);
}

enum vsock_hdr_err vsock_hdr_check(const struct vsock_hdr *h,
				   uint64_t guest_cid, uint64_t payload)
{
	if (h->src_cid != guest_cid)
		return VSOCK_HDR_SRC_CID;
	if (h->dst_cid != VSOCK_HOST_CID)
		return VSOCK_HDR_DST_CID;
	if (h->type != VSOCK_TYPE_STREAM)
		return VSOCK_HDR_TYPE;
	if (h->op < VSOCK_OP_REQUEST || h->op > VSOCK_OP_CREDIT_REQUEST)
		return VSOCK_HDR_OP;
	if (h->len > VSOCK_MAX_PAYLOAD)
		return VSOCK_HDR_LEN_MAX;
	if (h->len > payload)
		return VSOCK_HDR_LEN_CHAIN;
	if (h->op != VSOCK_OP_RW && h->len)
		return VSOCK_HDR_LEN_CTRL;
	return VSOCK_HDR_OK;
}

const char *vsock_hdr_err_str(enum vsock_hdr_err err)
{
	static const char *const names[VSOCK_HDR_ERR_COUNT] = {
		[VSOCK_HDR_OK] = "ok",
		[VSOCK_HDR_SRC_CID] = "src_cid is not the guest's",
		[VSOCK_HDR_DST_CID] = "dst_cid is not the host's",
		[VSOCK_HDR_TYPE] = "type is not stream",
		[VSOCK_HDR_OP] = "unknown op",
		[VSOCK_HDR_LEN_MAX] = "len above the packet maximum",
		[VSOCK_HDR_LEN_CHAIN] = "len beyond the chain",
		[VSOCK_HDR_LEN_CTRL] = "payload on a control packet",
	};

	if ((unsigned int)err >= VSOCK_HDR_ERR_COUNT)
		return "unknown";
	return names[err];
}

/* "CONNECT " then 1 to 10 digits no greater than UINT32_MAX. */
static int vsock_line_parse(const struct vsock_line *l, uint32_t *port)
{
	static const char verb[] = "CONNECT ";
	const unsigned int nverb = sizeof(verb) - 1;
	uint64_t v = 0;
	unsigned int i;

	if (l->len <= nverb || l->len - nverb > 10)
		return -EINVAL;
	for (i = 0; i < nverb; i++)
		if (l->buf[i] != verb[i])
			return -EINVAL;
	for (; i < l->len; i++) {
		if (l->buf[i] < '0' || l->buf[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(l->buf[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*port = (uint32_t)v;
	return 0;
}

int vsock_line_feed(struct vsock_line *l, const char *p, size_t n,
		    size_t *used, uint32_t *port)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\n') {
			*used = i + 1;
			return vsock_line_parse(l, port) ? -EINVAL : 1;
		}
		if (l->len >= VSOCK_LINE_MAX) {
			*used = i;
			return -EINVAL;
		}
		l->buf[l->len++] = p[i];
	}
	*used = n;
	return 0;
}
