// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end tests of the virtio-blk device (virtio 1.2 §5.2) through its
 * queue thread, once per disk engine: configuration space, each request
 * type against a temporary file, malformed requests, batching with one
 * interrupt per batch, a ring full of indirect chains, seg_max segments,
 * and EVENT_IDX interrupt suppression; all of it again with polling on.
 */
#include "blk_driver.h"

/* Any offset and width reads; writes change nothing (§4.2.2, §5.2.4). */
static void test_config_access(void)
{
	uint8_t c[BLK_CONFIG_BYTES], b[8], one;
	unsigned int i;

	cfg_read(0, c, sizeof(c));
	/* Byte-granular: every byte alone matches the full read. */
	for (i = 0; i < sizeof(c); i++) {
		cfg_read(i, &one, 1);
		CHECK_EQ(one, c[i]);
	}
	cfg_read(1, b, 3);
	CHECK(!memcmp(b, c + 1, 3));
	/* Reads running past the end see zeros. */
	memset(b, 0xaa, sizeof(b));
	cfg_read(BLK_CONFIG_BYTES - 2, b, 4);
	CHECK(b[0] == c[BLK_CONFIG_BYTES - 2] &&
	      b[1] == c[BLK_CONFIG_BYTES - 1] && !b[2] && !b[3]);
	memset(b, 0xaa, sizeof(b));
	cfg_read(UINT64_MAX - 1, b, 4);
	CHECK(!b[0] && !b[1] && !b[2] && !b[3]);
	/* Writes are ignored (no CONFIG_WCE offered). */
	memset(b, 0xff, sizeof(b));
	h.vdev.ops->config_access(&h.vdev, 0, b, 8, true);
	h.vdev.ops->config_access(&h.vdev, BLK_CFG_WRITEBACK, b, 1, true);
	cfg_read(0, b, 8);
	CHECK(!memcmp(b, c, 8));
	cfg_read(BLK_CFG_WRITEBACK, b, 1);
	CHECK_EQ(b[0], 0);
}

/* OUT then IN of a pattern; IN with status sharing the last data buffer. */
static void test_write_read(void)
{
	uint8_t pattern[4096];
	struct dseg s[3];
	uint16_t idx;

	fill_pattern(pattern, sizeof(pattern), 1);
	memcpy(host(data_gpa(0)), pattern, sizeof(pattern));
	CHECK_EQ(do_req(0, VIRTIO_BLK_T_OUT, 8, 4096, false), 1);
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
	CHECK(file_range_is(8 * 512, pattern, sizeof(pattern)));

	/* hdr split 8+8 | 1000 W | 3096 W + status in the same buffer */
	memset(host(data_gpa(1)), 0, 8192);
	hdr_put(1, VIRTIO_BLK_T_IN, 8);
	s[0] = (struct dseg){ hdr_gpa(1), 8, false };
	s[1] = (struct dseg){ data_gpa(1), 1000, true };
	s[2] = (struct dseg){ data_gpa(1) + 1000, 3096 + 1, true };
	idx = used_idx(0);
	/* The header in two pieces: 8 bytes here, 8 in descriptor 3. */
	chain_add(0, head_of(1), (struct dseg[]){
		{ hdr_gpa(1), 8, false }, { hdr_gpa(1) + 8, 8, false },
		s[1], s[2] }, 4);
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + 1)));
	CHECK_EQ(used_len(0, idx), 4096 + 1);
	CHECK_EQ(*(uint8_t *)host(data_gpa(1) + 4096), VIRTIO_BLK_S_OK);
	CHECK(!memcmp(host(data_gpa(1)), pattern, sizeof(pattern)));
}

static void test_flush_get_id_unsupp(void)
{
	uint8_t id[VIRTIO_BLK_ID_BYTES] = SERIAL;

	CHECK_EQ(do_req(2, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	CHECK_EQ(status_of(2), VIRTIO_BLK_S_OK);

	memset(host(data_gpa(3)), 0x77, 64);
	CHECK_EQ(do_req(3, VIRTIO_BLK_T_GET_ID, 0, 20, true), 21);
	CHECK_EQ(status_of(3), VIRTIO_BLK_S_OK);
	CHECK(!memcmp(host(data_gpa(3)), id, sizeof(id)));
	CHECK_EQ(*(uint8_t *)host(data_gpa(3) + 20), 0x77);

	CHECK_EQ(do_req(4, 77, 0, 0, false), 1);
	CHECK_EQ(status_of(4), VIRTIO_BLK_S_UNSUPP);
	CHECK_EQ(do_req(4, VIRTIO_BLK_T_GET_LIFETIME, 0, 8, true), 1);
	CHECK_EQ(status_of(4), VIRTIO_BLK_S_UNSUPP);
}

/* Out of range and malformed requests: IOERR or len 0, nothing written. */
static void test_bad_requests(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	uint64_t errors = atomic_load(&st->errors);
	uint8_t zero[1024] = { 0 };
	uint16_t idx;

	fill_pattern(host(data_gpa(5)), 1024, 5);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, CAP - 1, 1024, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK(file_range_is(DISK_BYTES - 1024, zero, sizeof(zero)));
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, UINT64_MAX, 512, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_IN, CAP, 512, true), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(do_req(5, VIRTIO_BLK_T_OUT, 0, 100, false), 1);
	CHECK_EQ(status_of(5), VIRTIO_BLK_S_IOERR);
	CHECK(file_range_is(0, zero, sizeof(zero)));

	/* No writable byte: nothing to report through, used len 0. */
	idx = used_idx(0);
	hdr_put(6, VIRTIO_BLK_T_FLUSH, 0);
	chain_add(0, head_of(6),
		  (struct dseg[]){ { hdr_gpa(6), 16, false } }, 1);
	/* A buffer outside guest RAM: virtq fails the chain (-EBADMSG). */
	hdr_put(7, VIRTIO_BLK_T_IN, 0);
	chain_add(0, head_of(7), (struct dseg[]){
		{ hdr_gpa(7), 16, false }, { BAD_GPA, 512, true },
		{ status_gpa(7), 1, true } }, 3);
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + 2)));
	CHECK_EQ(used_id(0, idx), head_of(6));
	CHECK_EQ(used_len(0, idx), 0);
	CHECK_EQ(used_id(0, idx + 1), head_of(7));
	CHECK_EQ(used_len(0, idx + 1), 0);
	CHECK_EQ(status_of(7), 0xff);
	CHECK_EQ(atomic_load(&st->errors) - errors, 6);
	CHECK(!(virtio_get_status(&h.vdev) & VIRTIO_STATUS_NEEDS_RESET));
}

/* WRITE_ZEROES and DISCARD, then IN reads zeros (§5.2.6.2). */
static void test_discard_write_zeroes(void)
{
	uint8_t zero[4096] = { 0 };

	if (!h.disk.can_write_zeroes || !h.disk.can_discard) {
		printf("note: %s: no discard/write-zeroes on /tmp, "
		       "skipping that part\n", disk_engine_name(engine));
		return;
	}
	fill_pattern(host(data_gpa(8)), 4096, 8);
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 64, 4096, false), 1);
	CHECK_EQ(status_of(8), VIRTIO_BLK_S_OK);
	dwz_add(9, VIRTIO_BLK_T_WRITE_ZEROES, 64, 8, VIRTIO_BLK_WZ_F_UNMAP);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_OK);
	memset(host(data_gpa(10)), 0x55, 4096);
	CHECK_EQ(do_req(10, VIRTIO_BLK_T_IN, 64, 4096, true), 4097);
	CHECK(!memcmp(host(data_gpa(10)), zero, sizeof(zero)));

	/* This backend punches a hole, which reads back as zeros. */
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 128, 4096, false), 1);
	dwz_add(9, VIRTIO_BLK_T_DISCARD, 128, 8, 0);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_OK);
	CHECK(file_range_is(128 * 512, zero, sizeof(zero)));
	/* UNMAP on DISCARD is UNSUPP (§5.2.6.2), nothing discarded. */
	CHECK_EQ(do_req(8, VIRTIO_BLK_T_OUT, 128, 4096, false), 1);
	dwz_add(9, VIRTIO_BLK_T_DISCARD, 128, 8, VIRTIO_BLK_WZ_F_UNMAP);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(9), VIRTIO_BLK_S_UNSUPP);
	CHECK(file_range_is(128 * 512, host(data_gpa(8)), 4096));
}

/* N requests, one kick: each completed once, fewer interrupts than N. */
static void test_batch(void)
{
	struct virtio_queue_stats *st = &h.vdev.queues[0].stats;
	uint64_t req0, sig0, bat0, kick0;
	unsigned int k, irq0, irqs;
	uint16_t idx;

	quiesce(0);
	req0 = atomic_load(&st->requests);
	sig0 = atomic_load(&st->signals);
	bat0 = atomic_load(&st->batches);
	kick0 = atomic_load(&st->kicks);
	irq0 = atomic_load(&notify_count[0]);
	idx = used_idx(0);
	for (k = 0; k < SLOTS; k++) {
		fill_pattern(host(data_gpa(k)), 1024, k);
		req_add(0, k, k & 1 ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT,
			256 + 2 * k, 1024, k & 1);
	}
	publish(0);
	kick(0);
	CHECK(wait_used(0, (uint16_t)(idx + SLOTS)));
	quiesce(0);
	CHECK(used_is_permutation(0, idx, SLOTS));
	for (k = 0; k < SLOTS; k++)
		CHECK_EQ(status_of(k), VIRTIO_BLK_S_OK);
	irqs = atomic_load(&notify_count[0]) - irq0;
	CHECK(irqs >= 1 && irqs < SLOTS);
	CHECK_EQ(atomic_load(&st->signals) - sig0, irqs);
	CHECK_EQ(atomic_load(&st->requests) - req0, SLOTS);
	CHECK(atomic_load(&st->batches) - bat0 >= irqs);
	CHECK_EQ(atomic_load(&st->kicks) - kick0, 1);
	/* Nothing more arrives later. */
	sleep_ms(20);
	CHECK_EQ(used_idx(0), (uint16_t)(idx + SLOTS));
}

/*
 * A ring full of indirect chains: as many requests in flight as there
 * are slots, so the thread runs out of slots and must resume on
 * completions alone (virtio 1.2 §2.7.5.3).
 */
static void test_full_ring_indirect(void)
{
	bool seen[QSZ] = { false };
	uint16_t idx = used_idx(0), i;
	unsigned int k;
	bool ok = true;

	for (k = 0; k < QSZ; k++) {
		struct dseg s[3] = {
			{ hdr_gpa(k), 16, false },
			{ DATA_GPA + 512ull * k, 512, true },
			{ status_gpa(k), 1, true },
		};

		hdr_put(k, VIRTIO_BLK_T_IN, k);
		table_put(IND_GPA + 64ull * k, s, 3);
		put_le(RING_GPA(0) + 16ull * k, IND_GPA + 64ull * k, 8);
		put_le(RING_GPA(0) + 16ull * k + 8, 48, 4);
		put_le(RING_GPA(0) + 16ull * k + 12, VIRTQ_DESC_F_INDIRECT, 2);
		put_le(RING_GPA(0) + AVAIL_OFF + 4 +
		       2ull * (drv_avail_idx[0]++ % QSZ), k, 2);
	}
	CHECK(go(0, QSZ));
	for (i = 0; i < QSZ; i++) {
		uint32_t id = used_id(0, (uint16_t)(idx + i));

		ok = ok && id < QSZ && !seen[id] &&
		     used_len(0, (uint16_t)(idx + i)) == 513;
		if (id < QSZ)
			seen[id] = true;
	}
	CHECK(ok);
	for (k = 0; k < QSZ; k++)
		ok = ok && status_of(k) == VIRTIO_BLK_S_OK;
	CHECK(ok);
}

/* seg_max data segments in one request (config seg_max = QSZ - 2). */
static void test_seg_max(void)
{
	struct dseg s[QSZ];
	uint8_t *file = malloc((QSZ - 2) * 512);
	unsigned int i;
	int fd;

	fill_pattern(file, (QSZ - 2) * 512, 7);
	fd = open(h.path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, file, (QSZ - 2) * 512, 512 * 512) ==
			 (QSZ - 2) * 512);
	close(fd);
	hdr_put(0, VIRTIO_BLK_T_IN, 512);
	s[0] = (struct dseg){ hdr_gpa(0), 16, false };
	for (i = 1; i < QSZ - 1; i++)
		s[i] = (struct dseg){ BIG_DATA_GPA + 512ull * (i - 1), 512,
				      true };
	s[QSZ - 1] = (struct dseg){ status_gpa(0), 1, true };
	table_put(IND_BIG_GPA, s, QSZ);
	memset(host(BIG_DATA_GPA), 0, (QSZ - 2) * 512);
	put_le(RING_GPA(0), IND_BIG_GPA, 8);
	put_le(RING_GPA(0) + 8, 16 * QSZ, 4);
	put_le(RING_GPA(0) + 12, VIRTQ_DESC_F_INDIRECT, 2);
	put_le(RING_GPA(0) + AVAIL_OFF + 4 + 2ull * (drv_avail_idx[0]++ % QSZ),
	       0, 2);
	CHECK(go(0, 1));
	CHECK_EQ(status_of(0), VIRTIO_BLK_S_OK);
	CHECK_EQ(used_len(0, (uint16_t)(used_idx(0) - 1)), (QSZ - 2) * 512 + 1);
	CHECK(!memcmp(host(BIG_DATA_GPA), file, (QSZ - 2) * 512));
	free(file);
}

/* With EVENT_IDX and used_event far ahead: no interrupt at all (§2.7.7.2). */
static void test_event_idx(void)
{
	unsigned int k, irq0;

	set_status(0);
	drv_start(h.vdev.host_features);
	set_used_event(0, 0x8000);
	irq0 = atomic_load(&notify_count[0]);
	for (k = 0; k < SLOTS; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
	publish(0);
	kick(0);
	CHECK(wait_used(0, SLOTS));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 0);
	CHECK(used_is_permutation(0, 0, SLOTS));

	/* used_event = the next entry: the next push must interrupt. */
	set_used_event(0, SLOTS);
	req_add(0, 0, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	publish(0);
	kick(0);
	CHECK(wait_used(0, SLOTS + 1));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 1);
	set_status(0);
	drv_start(default_features());
}

/*
 * defer=off: each completion signals as it is pushed, one interrupt per
 * request of a single kick, yet the driver's suppression still holds:
 * NO_INTERRUPT, and with EVENT_IDX a used_event far ahead (§2.7.7).
 */
static void test_defer_off(void)
{
	struct virtio_queue_stats *st;
	unsigned int k, irq0;
	uint64_t sig0;
	uint16_t idx;

	dev_defer_off = true;
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		dev_defer_off = false;
		return;
	}
	dev_defer_off = false;
	drv_start(default_features());
	st = &h.vdev.queues[0].stats;
	sig0 = atomic_load(&st->signals);
	irq0 = atomic_load(&notify_count[0]);
	for (k = 0; k < SLOTS; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
	CHECK(go(0, SLOTS));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, SLOTS);
	CHECK_EQ(atomic_load(&st->signals) - sig0, SLOTS);

	/* The driver asks for no interrupts: none, deferral or not. */
	put_le(RING_GPA(0) + AVAIL_OFF, VIRTQ_AVAIL_F_NO_INTERRUPT, 2);
	irq0 = atomic_load(&notify_count[0]);
	idx = used_idx(0);
	for (k = 0; k < SLOTS; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
	CHECK(go(0, SLOTS));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 0);
	CHECK(used_is_permutation(0, idx, SLOTS));

	set_status(0);
	drv_start(h.vdev.host_features);
	set_used_event(0, 0x8000);
	irq0 = atomic_load(&notify_count[0]);
	for (k = 0; k < SLOTS; k++)
		req_add(0, k, VIRTIO_BLK_T_IN, k, 512, true);
	CHECK(go(0, SLOTS));
	quiesce(0);
	CHECK_EQ(atomic_load(&notify_count[0]) - irq0, 0);
	dev_close();
}

static void run_engine(void)
{
	if (dev_open(false, 1, SERIAL)) {
		CHECK(0);
		return;
	}
	test_config();
	test_config_access();
	drv_start(default_features());
	test_write_read();
	test_flush_get_id_unsupp();
	test_bad_requests();
	test_discard_write_zeroes();
	test_batch();
	test_full_ring_indirect();
	test_seg_max();
	test_event_idx();
	dev_close();
	test_defer_off();
}

int main(void)
{
	return blk_test_main_with(run_engine, true);
}
