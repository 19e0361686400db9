// SPDX-License-Identifier: Apache-2.0
/*
 * Command-line parsing: sizes, --disk specs, and one row per rejected
 * input asserting that the message names the offending value.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>

#include "test.h"
#include "vmm/cli.h"

struct size_row {
	const char *in;
	int ret;
	uint64_t out;
};

static const struct size_row size_rows[] = {
	{ "512M", 0, 512ULL << 20 },
	{ "512", 0, 512ULL << 20 },
	{ "2G", 0, 2ULL << 30 },
	{ "2GiB", 0, 2ULL << 30 },
	{ "1024k", 0, 1ULL << 20 },
	{ "1T", 0, 1ULL << 40 },
	{ "0", 0, 0 },
	{ "", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
	{ "-1G", -EINVAL, 0 },
	{ "12X", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
	{ "17179869184T", -ERANGE, 0 },
};

static void test_sizes(void)
{
	size_t i;

	for (i = 0; i < sizeof(size_rows) / sizeof(size_rows[0]); i++) {
		uint64_t v = 0;
		int ret = cli_parse_size(size_rows[i].in, &v);

		CHECK_EQ(ret, size_rows[i].ret);
		if (!ret)
			CHECK(v == size_rows[i].out);
	}
}

static void test_disk_ok(void)
{
	struct disk_config d;
	char err[256];

	CHECK_EQ(cli_parse_disk("/x/root.raw", &d, err, sizeof(err)), 0);
	CHECK(!strcmp(d.path, "/x/root.raw"));
	CHECK(!d.readonly);
	CHECK_EQ(d.cache, CONFIG_CACHE_NONE);
	CHECK_EQ(d.transport, DISK_TRANSPORT_PCI);
	CHECK(!d.defer_off);
	config_disk_free(&d);

	CHECK_EQ(cli_parse_disk("a.img,defer=off", &d, err, sizeof(err)), 0);
	CHECK(d.defer_off);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,defer=off,defer=on", &d, err,
				sizeof(err)), 0);
	CHECK(!d.defer_off);
	CHECK(!d.poll_set);
	config_disk_free(&d);

	CHECK_EQ(cli_parse_disk("a.img,readonly=on,serial=abc,cache=unsafe,"
				"transport=mmio,queues=4,queue-size=128,"
				"poll-us=1000",
				&d, err, sizeof(err)), 0);
	CHECK(!strcmp(d.path, "a.img"));
	CHECK(d.readonly);
	CHECK(d.serial && !strcmp(d.serial, "abc"));
	CHECK_EQ(d.cache, CONFIG_CACHE_UNSAFE);
	CHECK_EQ(d.transport, DISK_TRANSPORT_MMIO);
	CHECK_EQ(d.queues, 4);
	CHECK_EQ(d.queue_size, 128);
	CHECK(d.poll_set);
	CHECK_EQ(d.poll_us, 1000);
	config_disk_free(&d);

	/* snapshot=on: page cache unless a cache mode is given. */
	CHECK_EQ(cli_parse_disk("a.img,snapshot=on", &d, err, sizeof(err)), 0);
	CHECK(d.snapshot);
	CHECK(!d.readonly);
	CHECK_EQ(d.cache, CONFIG_CACHE_WRITEBACK);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,cache=unsafe,snapshot=on", &d, err,
				sizeof(err)), 0);
	CHECK(d.snapshot);
	CHECK_EQ(d.cache, CONFIG_CACHE_UNSAFE);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,snapshot=off", &d, err, sizeof(err)), 0);
	CHECK(!d.snapshot);
	CHECK_EQ(d.cache, CONFIG_CACHE_NONE);
	config_disk_free(&d);

	/* Unset means the device default; 0 is "off", not unset. */
	CHECK_EQ(cli_parse_disk("a.img,poll-us=0", &d, err, sizeof(err)), 0);
	CHECK(d.poll_set);
	CHECK_EQ(d.poll_us, 0);
	CHECK(!d.coalesce_off);
	config_disk_free(&d);

	/* engine: io_uring by default; vhost on either transport. */
	CHECK_EQ(cli_parse_disk("a.img", &d, err, sizeof(err)), 0);
	CHECK_EQ(d.engine, CONFIG_ENGINE_URING);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,engine=vhost,transport=mmio,queues=8",
				&d, err, sizeof(err)), 0);
	CHECK_EQ(d.engine, CONFIG_ENGINE_VHOST);
	CHECK_EQ(d.cache, CONFIG_CACHE_NONE);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,engine=vhost,readonly=on,cache=none",
				&d, err, sizeof(err)), 0);
	CHECK_EQ(d.engine, CONFIG_ENGINE_VHOST);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,engine=vhost,cache=unsafe", &d, err,
				sizeof(err)), 0);
	CHECK_EQ(d.cache, CONFIG_CACHE_UNSAFE);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,engine=vhost,engine=io_uring,poll-us=5",
				&d, err, sizeof(err)), 0);
	CHECK_EQ(d.engine, CONFIG_ENGINE_URING);
	config_disk_free(&d);
	/* The module's workers poll too. */
	CHECK_EQ(cli_parse_disk("a.img,engine=vhost,poll-us=0", &d, err,
				sizeof(err)), 0);
	CHECK_EQ(d.engine, CONFIG_ENGINE_VHOST);
	CHECK(d.poll_set && d.poll_us == 0);
	config_disk_free(&d);

	/* irq-coalesce: on by default, off on mmio only (in any order). */
	CHECK_EQ(cli_parse_disk("a.img,irq-coalesce=off,transport=mmio", &d,
				err, sizeof(err)), 0);
	CHECK(d.coalesce_off);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,irq-coalesce=on", &d, err,
				sizeof(err)), 0);
	CHECK(!d.coalesce_off);
	config_disk_free(&d);

	/* irq-hold-us: off by default; irq-hold-max only beside it. */
	CHECK_EQ(cli_parse_disk("a.img", &d, err, sizeof(err)), 0);
	CHECK_EQ(d.irq_hold_us, 0);
	CHECK_EQ(d.irq_hold_max, 0);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,irq-hold-us=10000,irq-hold-max=65535,"
				"transport=mmio", &d, err, sizeof(err)), 0);
	CHECK_EQ(d.irq_hold_us, 10000);
	CHECK_EQ(d.irq_hold_max, 65535);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,irq-hold-max=8,irq-hold-us=50", &d,
				err, sizeof(err)), 0);
	CHECK_EQ(d.irq_hold_us, 50);
	CHECK_EQ(d.irq_hold_max, 8);
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,irq-hold-us=0,defer=off", &d, err,
				sizeof(err)), 0);
	CHECK(d.defer_off);
	config_disk_free(&d);

	/* iops, bps: N per second (size N, refill 1000 ms), and bursts. */
	CHECK_EQ(cli_parse_disk("a.img", &d, err, sizeof(err)), 0);
	CHECK(!rl_config_active(&d.rl));
	config_disk_free(&d);
	CHECK_EQ(cli_parse_disk("a.img,iops=200,bps=1048576,iops-burst=50,"
				"bps-burst=0", &d, err, sizeof(err)), 0);
	CHECK_EQ(d.rl.ops.size, 200);
	CHECK_EQ(d.rl.ops.refill_time_ms, 1000);
	CHECK_EQ(d.rl.ops.one_time_burst, 50);
	CHECK_EQ(d.rl.bandwidth.size, 1048576);
	CHECK_EQ(d.rl.bandwidth.refill_time_ms, 1000);
	CHECK_EQ(d.rl.bandwidth.one_time_burst, 0);
	config_disk_free(&d);
}

struct disk_bad_row {
	const char *spec;
	const char *needle; /* must appear in the message */
};

static const struct disk_bad_row disk_bad_rows[] = {
	{ ",readonly=on", "no image path" },
	{ "a.img,bogus=1", "bogus" },
	{ "a.img,readonly=maybe", "maybe" },
	{ "a.img,cache=sometimes", "sometimes" },
	{ "a.img,transport=usb", "usb" },
	{ "a.img,queues=0", "queues" },
	{ "a.img,queues=x", "x" },
	{ "a.img,queue-size=100", "100" },
	{ "a.img,queue-size=4096", "4096" },
	{ "a.img,serial=123456789012345678901", "123456789012345678901" },
	{ "a.img,readonly", "readonly" },
	{ "a.img,defer=maybe", "bad value 'maybe' for defer" },
	{ "a.img,defer=1", "bad value '1' for defer" },
	{ "a.img,poll-us=1001", "poll-us '1001' must be 0 to 1000" },
	{ "a.img,poll-us=-1", "-1" },
	{ "a.img,poll-us=32us", "32us" },
	{ "a.img,snapshot=maybe", "bad value 'maybe' for snapshot" },
	{ "a.img,iops=0", "iops '0' must be 1 to" },
	{ "a.img,bps=1k", "bps '1k' must be 1 to" },
	{ "a.img,iops=9223372036854775808", "9223372036854775808" },
	{ "a.img,bps-burst=-1", "bps-burst '-1' must be 0 to" },
	{ "a.img,iops-burst=5", "iops-burst needs iops" },
	{ "a.img,iops=5,bps-burst=5", "bps-burst needs bps" },
	{ "a.img,engine=vhost,iops=100", "engine=vhost does not combine with iops" },
	{ "a.img,irq-coalesce=sometimes",
	  "bad value 'sometimes' for irq-coalesce" },
	{ "a.img,irq-coalesce=off", "irq-coalesce=off needs transport=mmio" },
	{ "a.img,transport=mmio,irq-coalesce=off,transport=pci",
	  "irq-coalesce=off needs transport=mmio" },
	{ "a.img,snapshot=on,cache=none",
	  "snapshot=on does not combine with cache=none" },
	{ "a.img,cache=none,snapshot=on",
	  "snapshot=on does not combine with cache=none" },
	{ "a.img,snapshot=on,readonly=on",
	  "snapshot=on and readonly=on exclude each other" },
	/* engine=: the value, and what vhost cannot honour. */
	{ "a.img,engine=spdk", "engine 'spdk' must be io_uring or vhost" },
	{ "a.img,engine=", "engine '' must be io_uring or vhost" },
	{ "a.img,engine=vhost,snapshot=on",
	  "engine=vhost does not combine with snapshot=on" },
	{ "a.img,snapshot=on,engine=vhost",
	  "engine=vhost does not combine with snapshot=on" },
	{ "a.img,engine=vhost,poll-us=1001",
	  "poll-us '1001' must be 0 to 1000" },
	{ "a.img,engine=vhost,defer=off",
	  "engine=vhost does not combine with defer" },
	{ "a.img,engine=vhost,transport=mmio,irq-coalesce=off",
	  "engine=vhost does not combine with irq-coalesce=off" },
	/* irq-hold-us and irq-hold-max: ranges, and what they need. */
	{ "a.img,irq-hold-us=10001", "irq-hold-us '10001' must be 0 to 10000" },
	{ "a.img,irq-hold-us=-5", "irq-hold-us '-5' must be 0 to 10000" },
	{ "a.img,irq-hold-us=50us", "irq-hold-us '50us' must be 0 to 10000" },
	{ "a.img,irq-hold-us=50,irq-hold-max=0",
	  "irq-hold-max '0' must be 1 to 65535" },
	{ "a.img,irq-hold-us=50,irq-hold-max=65536",
	  "irq-hold-max '65536' must be 1 to 65535" },
	{ "a.img,irq-hold-max=8", "irq-hold-max ends a hold early, so it needs irq-hold-us" },
	{ "a.img,irq-hold-us=50,defer=off",
	  "irq-hold-us holds a batch's interrupt, and defer=off has no batches" },
	{ "a.img,engine=vhost,irq-hold-us=50",
	  "engine=vhost does not combine with irq-hold-us" },
};

static void test_disk_bad(void)
{
	size_t i;

	for (i = 0; i < sizeof(disk_bad_rows) / sizeof(disk_bad_rows[0]);
	     i++) {
		struct disk_config d;
		char err[256] = "";

		CHECK_EQ(cli_parse_disk(disk_bad_rows[i].spec, &d, err,
					sizeof(err)), -EINVAL);
		CHECK(strstr(err, disk_bad_rows[i].needle) != NULL);
	}
}

struct argv_row {
	const char *args[8];
	enum cli_result res;
	const char *needle;
};

static const struct argv_row argv_rows[] = {
	{ { "--kernel", "k" }, CLI_RUN, NULL },
	{ { "--help" }, CLI_EXIT, NULL },
	{ { "--cpus", "2" }, CLI_ERROR, "--kernel" },
	{ { "--kernel", "k", "--cpus", "0" }, CLI_ERROR, "--cpus 0" },
	{ { "--kernel", "k", "--cpus", "1000" }, CLI_ERROR, "--cpus 1000" },
	{ { "--kernel", "k", "--cpus", "two" }, CLI_ERROR, "--cpus two" },
	{ { "--kernel", "k", "--memory", "1K" }, CLI_ERROR, "--memory 1K" },
	{ { "--kernel", "k", "--memory", "abc" }, CLI_ERROR, "--memory abc" },
	{ { "--kernel", "k", "--timeout", "0" }, CLI_ERROR, "--timeout 0" },
	{ { "--kernel", "k", "--frobnicate" }, CLI_ERROR, "--frobnicate" },
	{ { "--kernel", "k", "extra" }, CLI_ERROR, "extra" },
	{ { "--kernel", "k", "--disk", "x,foo=1" }, CLI_ERROR, "foo" },
	{ { "--kernel" }, CLI_ERROR, "--kernel" },
	{ { "--kernel", "k", "--seccomp", "maybe" }, CLI_ERROR,
	  "--seccomp maybe" },
	{ { "--kernel", "k", "--seccomp=" }, CLI_ERROR, "--seccomp " },
	{ { "--kernel", "k", "--seccomp", "ON" }, CLI_ERROR, "--seccomp ON" },
	{ { "--kernel", "k", "--console" }, CLI_ERROR, "--console" },
	{ { "--kernel", "k", "--console=" }, CLI_ERROR, "--console ''" },
};

/* --console FILE is kept as given; without it the console is stdout. */
static void test_console(void)
{
	char *argv[5] = { (char *)"microvm", (char *)"--kernel", (char *)"k",
			  (char *)"--console", (char *)"/tmp/guest.log" };
	struct vm_config cfg;
	char err[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	CHECK_EQ(cli_parse(5, argv, &cfg, err, sizeof(err)), CLI_RUN);
	CHECK(cfg.console && !strcmp(cfg.console, "/tmp/guest.log"));
	cli_free(&cfg);
	memset(&cfg, 0, sizeof(cfg));
	CHECK_EQ(cli_parse(3, argv, &cfg, err, sizeof(err)), CLI_RUN);
	CHECK(cfg.console == NULL);
	cli_free(&cfg);
}

/*
 * The default command line: the root is named only when there is a disk to
 * boot from and no initramfs; --cmdline always wins as given.
 */
static void test_default_cmdline(void)
{
	static const struct {
		const char *args[8];
		const char *cmdline;
	} rows[] = {
		{ { "--kernel", "k" }, CLI_CMDLINE_CONSOLE },
		{ { "--kernel", "k", "--disk", "root.raw" },
		  CLI_CMDLINE_ROOT_RW },
		{ { "--kernel", "k", "--disk", "root.raw", "--disk", "d.raw" },
		  CLI_CMDLINE_ROOT_RW },
		{ { "--kernel", "k", "--disk", "root.raw,readonly=on",
		    "--disk", "d.raw" }, CLI_CMDLINE_ROOT_RO },
		{ { "--kernel", "k", "--disk", "root.raw",
		    "--disk", "d.raw,readonly=on" },
		  CLI_CMDLINE_ROOT_RW },
		{ { "--kernel", "k", "--disk", "r.raw,transport=mmio" },
		  CLI_CMDLINE_ROOT_RW },
		{ { "--kernel", "k", "--initrd", "i", "--disk", "root.raw" },
		  CLI_CMDLINE_CONSOLE },
		{ { "--kernel", "k", "--disk", "root.raw", "--cmdline",
		    "console=ttyS0 root=/dev/vdb" }, "console=ttyS0 root=/dev/vdb" },
		{ { "--kernel", "k", "--disk", "root.raw", "--cmdline", "" },
		  "" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *argv[10] = { (char *)"microvm" };
		struct vm_config cfg;
		char err[256] = "";
		int argc = 1;

		memset(&cfg, 0, sizeof(cfg));
		while (argc < 9 && rows[i].args[argc - 1]) {
			argv[argc] = (char *)rows[i].args[argc - 1];
			argc++;
		}
		CHECK_EQ(cli_parse(argc, argv, &cfg, err, sizeof(err)),
			 CLI_RUN);
		if (cfg.cmdline && strcmp(cfg.cmdline, rows[i].cmdline))
			fprintf(stderr, "row %zu: cmdline '%s'\n", i,
				cfg.cmdline);
		CHECK(cfg.cmdline && !strcmp(cfg.cmdline, rows[i].cmdline));
		cli_free(&cfg);
	}
}

/* --seccomp=MODE: each mode, and "on" when it is not given. */
static void test_seccomp(void)
{
	static const struct {
		const char *arg;
		enum confine_mode mode;
	} rows[] = {
		{ NULL, CONFINE_ON },
		{ "--seccomp=on", CONFINE_ON },
		{ "--seccomp=kill", CONFINE_KILL },
		{ "--seccomp=log", CONFINE_LOG },
		{ "--seccomp=off", CONFINE_OFF },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *argv[4] = { (char *)"microvm", (char *)"--kernel",
				  (char *)"k", (char *)rows[i].arg };
		struct vm_config cfg;
		char err[256] = "";

		memset(&cfg, 0, sizeof(cfg));
		CHECK_EQ(cli_parse(rows[i].arg ? 4 : 3, argv, &cfg, err,
				   sizeof(err)), CLI_RUN);
		CHECK_EQ(cfg.seccomp, rows[i].mode);
		if (rows[i].arg)
			CHECK(!strcmp(confine_mode_name(cfg.seccomp),
				      rows[i].arg + strlen("--seccomp=")));
		cli_free(&cfg);
	}
}

static void test_argv(void)
{
	size_t i;

	for (i = 0; i < sizeof(argv_rows) / sizeof(argv_rows[0]); i++) {
		char *argv[10] = { (char *)"microvm" };
		struct vm_config cfg;
		char err[256] = "";
		int argc = 1, saved, devnull;
		enum cli_result res;

		memset(&cfg, 0, sizeof(cfg));
		while (argc < 9 && argv_rows[i].args[argc - 1]) {
			argv[argc] = (char *)argv_rows[i].args[argc - 1];
			argc++;
		}
		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, STDOUT_FILENO); /* --help prints its text */
		res = cli_parse(argc, argv, &cfg, err, sizeof(err));
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		close(devnull);
		CHECK_EQ(res, argv_rows[i].res);
		if (argv_rows[i].needle) {
			if (!strstr(err, argv_rows[i].needle))
				fprintf(stderr, "row %zu: message '%s'\n", i,
					err);
			CHECK(strstr(err, argv_rows[i].needle) != NULL);
		}
		if (res == CLI_RUN) {
			CHECK_EQ(cfg.cpus, 1);
			CHECK(cfg.memory == CONFIG_DEFAULT_MEMORY);
			CHECK(!strcmp(cfg.cmdline, CLI_CMDLINE_CONSOLE));
			CHECK(cfg.console == NULL);
		}
		cli_free(&cfg);
	}
}

struct memory_row {
	const char *arg;
	enum cli_result res;
	uint64_t memory;
	bool merge;
	const char *needle;
};

/* --memory SIZE[,merge=on|off]: KSM page merging is opt-in only. */
static const struct memory_row memory_rows[] = {
	{ .arg = "256M", .res = CLI_RUN, .memory = 256ULL << 20 },
	{ .arg = "256M,merge=on", .res = CLI_RUN, .memory = 256ULL << 20,
	  .merge = true },
	{ .arg = "1G,merge=off", .res = CLI_RUN, .memory = 1ULL << 30 },
	{ .arg = "1G,merge=on,merge=off", .res = CLI_RUN,
	  .memory = 1ULL << 30 },
	{ .arg = "256M,merge=maybe", .res = CLI_ERROR,
	  .needle = "--memory 256M,merge=maybe: bad value 'maybe' for merge" },
	{ .arg = "256M,dedup=on", .res = CLI_ERROR,
	  .needle = "unknown key 'dedup'" },
	{ .arg = "256M,merge", .res = CLI_ERROR,
	  .needle = "'merge' is not key=value" },
	{ .arg = "256M,", .res = CLI_ERROR, .needle = "--memory 256M," },
	{ .arg = ",merge=on", .res = CLI_ERROR,
	  .needle = "--memory ,merge=on: not a size" },
	{ .arg = "1K,merge=on", .res = CLI_ERROR, .needle = "too small" },
};

static void test_memory(void)
{
	size_t i;

	for (i = 0; i < sizeof(memory_rows) / sizeof(memory_rows[0]); i++) {
		const struct memory_row *r = &memory_rows[i];
		char *argv[] = { (char *)"microvm", (char *)"--kernel",
				 (char *)"k", (char *)"--memory",
				 (char *)r->arg, NULL };
		struct vm_config cfg;
		char err[256] = "";
		enum cli_result res;

		memset(&cfg, 0, sizeof(cfg));
		res = cli_parse(5, argv, &cfg, err, sizeof(err));
		CHECK_EQ(res, r->res);
		if (res != r->res || (r->needle && !strstr(err, r->needle)))
			fprintf(stderr, "--memory %s: result %d, message "
				"'%s'\n", r->arg, res, err);
		if (r->needle)
			CHECK(strstr(err, r->needle) != NULL);
		if (r->res == CLI_RUN && res == CLI_RUN) {
			CHECK(cfg.memory == r->memory);
			CHECK_EQ(cfg.memory_merge, r->merge);
		}
		cli_free(&cfg);
	}
}

int main(void)
{
	test_sizes();
	test_memory();
	test_disk_ok();
	test_disk_bad();
	test_argv();
	test_default_cmdline();
	test_seccomp();
	test_console();
	return test_done();
}
