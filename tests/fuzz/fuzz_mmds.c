// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the metadata service's guest side (src/mmds):
 * the frames a hostile guest sends to its address, and the HTTP requests
 * they carry. The stack's SYN has sequence number 0x1000, so inputs can
 * complete the handshake. Input layout: byte 0 the version (bit 0: V2) and whether
 * requests ask for JSON, then records of [flags, time step, length,
 * length bytes of frame]. Flags: bit 0 makes the frame IPv4 to the
 * service (else as given), bit 1 makes it TCP to port 80 with a sane
 * header, bit 2 makes it a SYN. After each frame every frame the stack
 * has is pulled and checked (abort() when broken):
 * - it fits the buffer and is ARP (42 bytes) or IPv4 with a valid header
 *   checksum, the service's address as its source and a TCP checksum
 *   that verifies;
 * - at most MMDS_MAX_CONNS connections are open (created less destroyed);
 * - a round of pulls ends (the stack runs dry within a bounded count).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmds/mmds.h"

#define IP 0xa9fea9feu
#define PULLS_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t g16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint16_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += g16(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void check_frame(const uint8_t *f, size_t n, size_t cap)
{
	const uint8_t *ip;
	size_t ihl, tot;

	if (n > cap || n < 42)
		abort();
	if (g16(f + 12) == 0x0806) {
		if (n != 42)
			abort();
		return;
	}
	if (g16(f + 12) != 0x0800)
		abort();
	ip = f + 14;
	ihl = (size_t)(ip[0] & 15) * 4;
	tot = g16(ip + 2);
	if (ihl != 20 || tot + 14 != n || sum16(ip, ihl, 0) != 0xffff ||
	    ((uint32_t)g16(ip + 12) << 16 | g16(ip + 14)) != IP || ip[9] != 6)
		abort();
	if (sum16(ip + ihl, tot - ihl,
		  sum16(ip + 12, 8, 0) + 6u + (uint32_t)(tot - ihl)) != 0xffff)
		abort();
}

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char store[] =
		"{\"latest\":{\"meta-data\":{\"a\":\"b\",\"n\":1},"
		"\"user-data\":\"xyz\"}}";
	static uint8_t frame[2048], out[1600];
	struct mmds_config mc = { 0 };
	struct mmds_stats st;
	struct mmds_stack *s;
	struct mmds *m;
	uint64_t now = 1;
	size_t len, n;
	unsigned int k;

	if (size < 1)
		return 0;
	mc.version = (data[0] & 1) ? 2 : 1;
	mc.limit = 4096;
	if (mmds_create(&m, &mc) ||
	    mmds_put(m, store, sizeof(store) - 1, NULL, 0))
		abort();
	s = mmds_stack_create(m);
	if (!s)
		abort();
	mmds_stack_fix_iss(s, 0x1000); /* the seeds acknowledge 0x1001 */
	data++;
	size--;
	while (size >= 4) {
		uint8_t fl = data[0];

		now += (uint64_t)data[1] * 50000000ull; /* 0-12.75 s */
		len = (size_t)g16(data + 2);
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		if (len > sizeof(frame))
			len = sizeof(frame);
		memset(frame, 0, 64);
		memcpy(frame, data, len);
		data += len;
		size -= len;
		if (len < 54)
			len = 54;
		if (fl & 1) {
			frame[12] = 0x08;
			frame[13] = 0x00;
			set32(frame + 30, IP);
		}
		if (fl & 2) {
			frame[14] = 0x45;
			frame[16] = (uint8_t)((len - 14) >> 8);
			frame[17] = (uint8_t)(len - 14);
			frame[20] = frame[21] = 0;
			frame[23] = 6;
			frame[36] = 0;
			frame[37] = 80;
			frame[46] = (uint8_t)((frame[46] & 0xf0) | 0x50);
			if ((frame[46] >> 4) < 5)
				frame[46] = 0x50;
		}
		if (fl & 4)
			frame[47] = 0x02;
		(void)mmds_stack_tx(s, frame, len, now);
		for (k = 0; k < PULLS_MAX; k++) {
			n = mmds_stack_rx(s, out, sizeof(out), now);
			if (!n)
				break;
			check_frame(out, n, sizeof(out));
		}
		if (k == PULLS_MAX)
			abort();
		memset(&st, 0, sizeof(st));
		mmds_stack_stats(s, &st);
		if (st.connections_created - st.connections_destroyed >
		    MMDS_MAX_CONNS)
			abort();
	}
	mmds_stack_destroy(s);
	mmds_destroy(m);
	return 0;
}
