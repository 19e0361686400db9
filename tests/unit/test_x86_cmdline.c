// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the x86_64 guest's final command line (cmdline.c): with
 * the word acpi=off among the kernel's parameters each virtio-mmio device
 * is appended as virtio_mmio.device=, before init's " -- " arguments;
 * without it nothing changes; a result that does not fit fails. One table
 * row per case.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "test.h"
#include "cmdline.h"
#include "layout.h"

#define DEV0 " virtio_mmio.device=4K@0xf0000000:16"
#define DEV1 " virtio_mmio.device=4K@0xf0001000:17"
#define DEV8 " virtio_mmio.device=4K@0xf0008000:5"

static const struct cmdline_mmio devs[] = {
	{ .base = 0xf0000000, .size = 0x1000, .gsi = 16 },
	{ .base = 0xf0001000, .size = 0x1000, .gsi = 17 },
	{ .base = 0xf0008000, .size = 0x1000, .gsi = 5 },
};

struct row {
	const char *in;
	unsigned int n;
	const char *want;
};

static const struct row rows[] = {
	/* No acpi=off: the DSDT describes them, nothing is added. */
	{ .in = "console=ttyS0", .n = 3, .want = "console=ttyS0" },
	{ .in = NULL, .n = 3, .want = "" },
	{ .in = "", .n = 3, .want = "" },
	{ .in = "acpi=offx acpi=of xacpi=off", .n = 3,
	  .want = "acpi=offx acpi=of xacpi=off" },
	/* After "--" it is init's argument, not the kernel's. */
	{ .in = "quiet -- acpi=off", .n = 1, .want = "quiet -- acpi=off" },
	/* acpi=off: one parameter per device, in slot order. */
	{ .in = "acpi=off", .n = 1, .want = "acpi=off" DEV0 },
	{ .in = "pci=off reboot=k panic=1 iommu=off net.ifnames=0 "
		"random.trust_cpu=on acpi=off console=ttyS0",
	  .n = 3,
	  .want = "pci=off reboot=k panic=1 iommu=off net.ifnames=0 "
		  "random.trust_cpu=on acpi=off console=ttyS0" DEV0 DEV1
		  DEV8 },
	{ .in = "acpi=off", .n = 0, .want = "acpi=off" },
	{ .in = "\tacpi=off  ", .n = 1, .want = "\tacpi=off" DEV0 "  " },
	/* Before init's arguments. */
	{ .in = "acpi=off root=/dev/vda -- -x y", .n = 2,
	  .want = "acpi=off root=/dev/vda" DEV0 DEV1 " -- -x y" },
	{ .in = "acpi=off --", .n = 1, .want = "acpi=off" DEV0 " --" },
	{ .in = "a --x acpi=off", .n = 1, .want = "a --x acpi=off" DEV0 },
};

static void test_rows(void)
{
	static char out[LAYOUT_CMDLINE_MAX];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ret = cmdline_add_mmio(rows[i].in, devs, rows[i].n, out,
				       sizeof(out));
		CHECK_EQ(ret, (long long)strlen(rows[i].want));
		CHECK(!strcmp(out, rows[i].want));
		if (strcmp(out, rows[i].want))
			fprintf(stderr, "row %zu: got '%s'\n", i, out);
	}
}

static void test_has_word(void)
{
	CHECK(cmdline_has_word("a acpi=off b", "acpi=off"));
	CHECK(cmdline_has_word("acpi=off", "acpi=off"));
	CHECK(!cmdline_has_word("acpi=offb", "acpi=off"));
	CHECK(!cmdline_has_word("a -- acpi=off", "acpi=off"));
	CHECK(!cmdline_has_word(NULL, "acpi=off"));
	CHECK(!cmdline_has_word("a", ""));
}

/* Exactly full fits; one byte less is -E2BIG, never a cut line. */
static void test_e2big(void)
{
	const char *want = "acpi=off" DEV0 " -- x";
	size_t need = strlen(want) + 1, size;
	char out[128];
	unsigned int bad = 0;

	CHECK_EQ(cmdline_add_mmio("acpi=off -- x", devs, 1, out, need),
		 (int)need - 1);
	CHECK(!strcmp(out, want));
	for (size = 0; size < need; size++)
		bad += cmdline_add_mmio("acpi=off -- x", devs, 1, out, size) !=
		       -E2BIG;
	CHECK_EQ(bad, 0);
	CHECK_EQ(cmdline_add_mmio("console=ttyS0", devs, 1, out, 13), -E2BIG);
}

/* A size that is not a whole KiB is written in bytes. */
static void test_sizes(void)
{
	struct cmdline_mmio odd = { .base = 0xf0002000, .size = 0x200,
				    .gsi = 6 };
	char out[128];

	CHECK(cmdline_add_mmio("acpi=off", &odd, 1, out, sizeof(out)) > 0);
	CHECK(!strcmp(out, "acpi=off virtio_mmio.device=512@0xf0002000:6"));
}

int main(void)
{
	test_rows();
	test_has_word();
	test_e2big();
	test_sizes();
	return test_done();
}
