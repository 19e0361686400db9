// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the split virtqueue: the input is a guest. Its
 * bytes become guest RAM holding the rings at fixed offsets, plus a script
 * of 16-bit writes the "guest" makes between two pops. The device pops,
 * touches every segment it was given (ASan checks they lie inside RAM) and
 * pushes, for a bounded number of rounds. Any crash, hang or sanitizer
 * report is a bug in virtq.c; the checks below abort() on broken promises.
 *
 * Input layout:
 *	[0]      queue size (any value: virtq_start() must refuse bad ones)
 *	[1]      bit 0: INDIRECT_DESC, bit 1: EVENT_IDX, bits 2-3: max_segs
 *	[2]      n, the number of script entries
 *	[3..)    n entries of { le16 offset into RAM, le16 value }
 *	rest     the initial RAM image, zero-padded to FUZZ_RAM_SIZE
 */
#include "virtio/virtq.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_RAM_GPA 0x0ull /* small addresses hit RAM: more coverage */
#define FUZZ_RAM_SIZE 0x4000u
#define FUZZ_DESC_OFF 0x000u   /* 16 bytes per entry */
#define FUZZ_AVAIL_OFF 0x400u  /* 6 + 2 per entry */
#define FUZZ_USED_OFF 0x500u   /* 6 + 8 per entry */
#define FUZZ_MAX_ROUNDS 256
#define FUZZ_HEADER 3
#define FUZZ_SCRIPT_ENTRY 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

/* Read every device-readable byte and write every device-writable one;
 * check the totals virtq_pop() reported. */
static void fuzz_use(const uint8_t *ram, const struct virtq_elem *e)
{
	uint64_t out = 0, in = 0;
	unsigned int i;
	uint8_t acc = 0;

	if (e->nr_out + e->nr_in > e->max_segs)
		abort();
	for (i = 0; i < (unsigned int)(e->nr_out + e->nr_in); i++) {
		const struct virtq_seg *s = &e->segs[i];
		const uint8_t *p = s->addr;

		if (!s->len || (uintptr_t)p < (uintptr_t)ram ||
		    (uintptr_t)p - (uintptr_t)ram > FUZZ_RAM_SIZE - s->len)
			abort();
		if (i < e->nr_out) {
			out += s->len;
			acc ^= p[0] ^ p[s->len - 1];
		} else {
			in += s->len;
			memset(s->addr, 0xa5, s->len);
		}
	}
	if (out != e->out_len || in != e->in_len || !(out + in) ||
	    out + in > UINT32_MAX)
		abort();
	sink = acc;
}

/* The guest changes one ring or buffer word between two pops. */
static void fuzz_guest_write(uint8_t *ram, const uint8_t *entry)
{
	uint16_t off = (uint16_t)(entry[0] | entry[1] << 8);

	if (off <= FUZZ_RAM_SIZE - 2)
		memcpy(ram + off, entry + 2, 2);
}

static void fuzz_rounds(struct virtq *vq, uint8_t *ram, struct virtq_elem *e,
			const uint8_t *script, unsigned int nr_script)
{
	unsigned int round;

	for (round = 0; round < FUZZ_MAX_ROUNDS; round++) {
		int r;

		if (round < nr_script)
			fuzz_guest_write(ram,
					 script + FUZZ_SCRIPT_ENTRY * round);
		if (round % 8 == 0)
			virtq_notify_disable(vq);
		r = virtq_pop(vq, e);
		if (r == 1) {
			if (e->head >= vq->size)
				abort();
			fuzz_use(ram, e);
			virtq_push(vq, e->head, (uint32_t)e->in_len);
		} else if (r == -EBADMSG) {
			if (e->head >= vq->size || e->nr_out || e->nr_in ||
			    vq->broken)
				abort();
			virtq_push(vq, e->head, 0);
		} else if (r == -EIO) {
			/* Broken for good: nothing the guest writes helps. */
			if (!vq->broken || virtq_has_avail(vq) ||
			    virtq_pop(vq, e) != -EIO)
				abort();
			break;
		} else if (r != 0) {
			abort();
		}
		virtq_need_notify(vq);
		if (r == 0 && !virtq_notify_enable(vq) && round >= nr_script)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtq_seg segs[VIRTQ_MAX_SIZE];
	struct virtq_elem e = { .segs = segs };
	struct guest_mem gm = { .nr_regions = 0 };
	unsigned int nr_script;
	struct virtq vq;
	uint64_t features = 0;
	size_t skip, image;
	uint8_t *ram;

	if (size < FUZZ_HEADER)
		return 0;
	nr_script = data[2];
	skip = FUZZ_HEADER + (size_t)FUZZ_SCRIPT_ENTRY * nr_script;
	if (size < skip)
		return 0;
	image = size - skip < FUZZ_RAM_SIZE ? size - skip : FUZZ_RAM_SIZE;
	if (data[1] & 1)
		features |= 1ull << VIRTQ_F_INDIRECT_DESC;
	if (data[1] & 2)
		features |= 1ull << VIRTQ_F_EVENT_IDX;
	e.max_segs = (data[1] >> 2 & 3) == 3 ? 2 : VIRTQ_MAX_SIZE;

	/* Exactly FUZZ_RAM_SIZE bytes, so ASan flags any byte beyond. */
	ram = calloc(1, FUZZ_RAM_SIZE);
	if (!ram)
		return 0;
	memcpy(ram, data + skip, image);
	if (guest_mem_add_region(&gm, FUZZ_RAM_GPA, FUZZ_RAM_SIZE, ram) ||
	    virtq_start(&vq, &gm, data[0], FUZZ_RAM_GPA + FUZZ_DESC_OFF,
			FUZZ_RAM_GPA + FUZZ_AVAIL_OFF,
			FUZZ_RAM_GPA + FUZZ_USED_OFF, features)) {
		free(ram);
		return 0;
	}
	fuzz_rounds(&vq, ram, &e, data + FUZZ_HEADER, nr_script);
	if (vq.pops + vq.bad_chains != vq.pushes)
		abort();
	free(ram);
	return 0;
}
