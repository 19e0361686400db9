// SPDX-License-Identifier: Apache-2.0
/*
 * A test helper for snapshot refusals that a checksum alone would catch:
 * it changes one field of a valid state file and writes a correct
 * checksum back, so that microvm's own checks (the CPU, the device
 * states) must find it.
 *
 *	snap-edit FILE cpuid   the first saved CPUID leaf 1 ecx: a feature
 *			       bit flipped (another CPU model; x86_64)
 *	snap-edit FILE idreg   the first saved ID register (MIDR_EL1): its
 *			       revision bit 0 flipped (another CPU; arm64)
 *	snap-edit FILE device NAME OFFSET
 *			       device NAME's state (after its name): the
 *			       byte at OFFSET flipped
 *
 * Exit: 0 edited, 1 usage or the section not found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap.h"

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* The CPU section: u32 n, then n of (fn, index, eax, ebx, ecx, edx). */
static uint8_t *cpuid_ecx(uint8_t *sect, size_t len)
{
	uint32_t n = len >= 4 ? get32(sect) : 0, i;

	for (i = 0; i < n && 4 + (i + 1) * 24ull <= len; i++) {
		uint8_t *e = sect + 4 + i * 24;

		if (get32(e) == 1)
			return e + 16;
	}
	return NULL;
}

/*
 * The arm64 CPU section: u32 KVM target, u32 n, then n of (u8 readable,
 * u64 value); the first is MIDR_EL1.
 */
static uint8_t *idreg_first(uint8_t *sect, size_t len)
{
	return len >= 17 && get32(sect + 4) > 0 ? sect + 9 : NULL;
}

int main(int argc, char **argv)
{
	uint8_t *buf, *hit = NULL;
	struct snap_reader r;
	struct snap_file f;
	size_t len, cur = 0;
	char err[256];
	uint32_t tag;
	FILE *fp;
	long sz;

	if (argc < 3 || (!strcmp(argv[2], "device") && argc < 5)) {
		fprintf(stderr, "usage: snap-edit FILE cpuid | FILE idreg | "
			"FILE device NAME OFFSET\n");
		return 1;
	}
	fp = fopen(argv[1], "r+b");
	if (!fp || fseek(fp, 0, SEEK_END) || (sz = ftell(fp)) <= 0 ||
	    fseek(fp, 0, SEEK_SET)) {
		perror(argv[1]);
		return 1;
	}
	len = (size_t)sz;
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, fp) != len) {
		perror("read");
		return 1;
	}
	if (snap_file_parse(buf, len, get32(buf + 20), &f, err, sizeof(err))) {
		fprintf(stderr, "snap-edit: %s\n", err);
		return 1;
	}
	while (!hit && snap_next_section(&f, &cur, &tag, &r) == 1) {
		uint8_t *p = buf + (r.p - buf);

		if (tag == SNAP_TAG_CPU && !strcmp(argv[2], "cpuid")) {
			hit = cpuid_ecx(p, r.len);
			if (hit)
				put32(hit, get32(hit) ^ (1u << 0)); /* SSE3 */
		} else if (tag == SNAP_TAG_CPU && !strcmp(argv[2], "idreg")) {
			hit = idreg_first(p, r.len);
			if (hit)
				*hit ^= 1;
		} else if (tag == SNAP_TAG_DEVICE &&
			   !strcmp(argv[2], "device") && r.len > 4 &&
			   get32(p) == strlen(argv[3]) &&
			   !memcmp(p + 4, argv[3], strlen(argv[3]))) {
			size_t off = 4 + strlen(argv[3]) +
				     strtoul(argv[4], NULL, 0);

			if (off < r.len) {
				hit = p + off;
				*hit ^= 0xff;
			}
		}
	}
	if (!hit) {
		fprintf(stderr, "snap-edit: nothing to edit for %s\n", argv[2]);
		return 1;
	}
	put32(buf + 32, snap_crc32(0, buf + SNAP_HEADER_LEN,
				   len - SNAP_HEADER_LEN));
	if (fseek(fp, 0, SEEK_SET) || fwrite(buf, 1, len, fp) != len ||
	    fclose(fp)) {
		perror("write");
		return 1;
	}
	free(buf);
	return 0;
}
