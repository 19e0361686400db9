// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the VM generation ID (src/devices/vmgenid.c): fresh IDs
 * differ from each other (and are not all zero); the snapshot state
 * round-trips and a machine that would announce a restore elsewhere (no
 * device, another interrupt) is refused naming both, as is a truncated
 * or overlong state; a restore writes a new ID and raises one edge, up
 * then down, on the device's interrupt, and a refused one neither.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/vmgenid.h"
#include "irq_log.h"
#include "snap_roundtrip.h"
#include "test.h"

static void test_new_id(void)
{
	static const uint8_t zero[VMGENID_SIZE];
	uint8_t a[VMGENID_SIZE], b[VMGENID_SIZE];
	char err[128];

	CHECK_EQ(vmgenid_new_id(a, err, sizeof(err)), 0);
	CHECK_EQ(vmgenid_new_id(b, err, sizeof(err)), 0);
	/* 2^-128 to fail by chance. */
	CHECK(memcmp(a, b, VMGENID_SIZE) != 0);
	CHECK(memcmp(a, zero, VMGENID_SIZE) != 0);
}

struct saved {
	bool on;
	uint32_t irq;
	bool extra; /* a byte after the state */
};

static void save(void *dev, struct snap_writer *w)
{
	struct saved *s = dev;

	vmgenid_save(w, s->on, s->irq);
	if (s->extra)
		snap_put_u8(w, 0);
}

/* vmgenid_check() of what @s saved, against @on and @irq. */
static int check(struct saved s, bool on, uint32_t irq, char *err,
		 size_t errlen)
{
	struct snap_rt rt;
	int ret;

	err[0] = 0;
	if (!snap_rt_make(&rt, save, &s)) {
		CHECK(!"writing the state");
		return -1;
	}
	ret = vmgenid_check(&rt.r, on, irq, "SPI", err, errlen);
	free(rt.buf);
	return ret;
}

static void test_state(void)
{
	struct saved s = { true, 3, false };
	struct snap_reader shortr;
	struct snap_rt rt;
	char err[256];

	CHECK_EQ(check(s, true, 3, err, sizeof(err)), 0);
	CHECK_EQ(check((struct saved){ false, 0, false }, false, 7, err,
		       sizeof(err)), 0);
	/* Another interrupt: both named. */
	CHECK_EQ(check(s, true, 4, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "(SPI 3) is not this machine's (SPI 4)") != NULL);
	/* The snapshot had the device, this machine has none; and back. */
	CHECK_EQ(check(s, false, 0, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "(SPI 3) is not this machine's (none 0)") != NULL);
	CHECK_EQ(check((struct saved){ false, 0, false }, true, 3, err,
		       sizeof(err)), -EINVAL);
	CHECK(strstr(err, "(none 0) is not this machine's (SPI 3)") != NULL);
	/* Malformed: a byte too many, a byte too few. */
	s.extra = true;
	CHECK_EQ(check(s, true, 3, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "VM generation ID: malformed state") != NULL);
	s.extra = false;
	CHECK(snap_rt_make(&rt, save, &s));
	shortr = snap_rt_short(&rt);
	err[0] = 0;
	CHECK_EQ(vmgenid_check(&shortr, true, 3, "SPI", err, sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, "malformed") != NULL);
	free(rt.buf);
}

/*
 * A restore: a new ID and one edge, up then down, on the device's
 * interrupt; a refused state or a machine without the device leaves
 * both alone.
 */
static void test_load(void)
{
	struct saved s = { true, 35, false };
	uint8_t id[VMGENID_SIZE], before[VMGENID_SIZE];
	struct irq_log l = { 0 };
	struct snap_rt rt;
	char err[256];

	memset(id, 0xa5, sizeof(id));
	memcpy(before, id, sizeof(id));
	CHECK(snap_rt_make(&rt, save, &s));
	CHECK_EQ(vmgenid_load(&rt.r, true, 35, "GSI", id, fake_irq, &l, err,
			      sizeof(err)), 0);
	free(rt.buf);
	CHECK(memcmp(id, before, sizeof(id)) != 0);
	CHECK_EQ(l.calls, 2);
	CHECK_EQ(l.level, 0);
	CHECK_EQ(l.gsi, 35);
	CHECK_EQ(l.repeats, 0);

	/* Another GSI: refused, nothing written or raised. */
	memcpy(before, id, sizeof(id));
	l = (struct irq_log){ 0 };
	CHECK(snap_rt_make(&rt, save, &s));
	CHECK_EQ(vmgenid_load(&rt.r, true, 36, "GSI", id, fake_irq, &l, err,
			      sizeof(err)), -EINVAL);
	free(rt.buf);
	CHECK(!memcmp(id, before, sizeof(id)));
	CHECK_EQ(l.calls, 0);

	/* No device on either side: accepted, no ID (NULL) and no edge. */
	s.on = false;
	CHECK(snap_rt_make(&rt, save, &s));
	CHECK_EQ(vmgenid_load(&rt.r, false, 0, "GSI", NULL, fake_irq, &l,
			      err, sizeof(err)), 0);
	free(rt.buf);
	CHECK_EQ(l.calls, 0);
}

int main(void)
{
	test_new_id();
	test_state();
	test_load();
	return test_done();
}
