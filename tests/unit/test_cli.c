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
#include "api/fc_config.h"
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
	{ { "--kernel", "k", "--cpus", "2,smt=maybe" }, CLI_ERROR,
	  "--cpus 2,smt=maybe: 'smt=maybe' is not smt=on or smt=off" },
	{ { "--kernel", "k", "--cpus", "2,numa=2" }, CLI_ERROR,
	  "'numa=2' is not" },
	{ { "--kernel", "k", "--cpus", "2," }, CLI_ERROR, "--cpus 2,: '' is" },
	{ { "--kernel", "k", "--cpus", "0,smt=on" }, CLI_ERROR,
	  "--cpus 0,smt=on: must be a number" },
	{ { "--kernel", "k", "--cpus", "12345678901234567890,smt=on" },
	  CLI_ERROR, "must be a number from 1 to 254" },
#if defined(__aarch64__)
	{ { "--kernel", "k", "--cpus", "2,smt=on" }, CLI_ERROR,
	  "--cpus 2,smt=on: smt=on is not supported on this architecture" },
#else
	{ { "--kernel", "k", "--cpus", "3,smt=on" }, CLI_ERROR,
	  "--cpus 3,smt=on: smt=on needs 1 or an even number of vCPUs" },
	{ { "--kernel", "k", "--cpus", "253,smt=on" }, CLI_ERROR,
	  "--cpus 253,smt=on" },
#endif
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

/* Parse a NULL-terminated argument list (after "microvm"), stdout muted. */
static enum cli_result parse_args(struct vm_config *cfg, char *err,
				  size_t errlen, const char *const *args)
{
	char *argv[32] = { (char *)"microvm" };
	int argc = 1, saved, devnull;
	enum cli_result res;

	while (argc < 31 && args[argc - 1]) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	memset(cfg, 0, sizeof(*cfg));
	err[0] = '\0';
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, STDOUT_FILENO);
	res = cli_parse(argc, argv, cfg, err, errlen);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(devnull);
	return res;
}

struct fc_bad_row {
	const char *args[8];
	const char *needle;
};

#define LONG65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct fc_bad_row fc_bad_rows[] = {
	{ { "--id", "my_vm" }, "--id my_vm: must be 1 to 64 letters, digits or '-'" },
	/* --restore: the machine comes from the snapshot. */
	{ { "--restore", "/s", "--kernel", "k" },
	  "--restore /s: the machine comes from the snapshot; --kernel cannot be given with it" },
	{ { "--restore", "/s", "--disk", "a.img" },
	  "--disk cannot be given with it" },
	{ { "--restore", "/s", "--memory", "1G" },
	  "--memory cannot be given with it" },
	{ { "--restore", "" }, "--restore '': needs a file name" },
	{ { "--kernel", "k", "--restore-drive", "data=/x" },
	  "--restore-drive data=/x: only with --restore" },
	{ { "--base-file", "/b" },
	  "--base-file and --diff-file go together and alone" },
	{ { "--base-file", "/b", "--diff-file", "/d", "--kernel", "k" },
	  "--base-file and --diff-file go together and alone" },
	{ { "--id", "" }, "--id : must be 1 to 64" },
	{ { "--id", LONG65 }, "--id " LONG65 ": must be 1 to 64" },
	{ { "--no-api" }, "--no-api needs --config-file" },
	{ { "--no-api", "--api-sock", "/tmp/s", "--kernel", "k" },
	  "--no-api and --api-sock /tmp/s exclude each other" },
	{ { "--api-sock", "" }, "--api-sock '': needs a file name" },
	{ { "--api-sock", "/" LONG65 "/" LONG65 }, "longer than the 107 bytes" },
	{ { "--config-file", "" }, "--config-file '': needs a file name" },
	{ { "--config-file", "/nonexistent/fc.json", "--no-api" },
	  "--config-file /nonexistent/fc.json: cannot open" },
	{ { "--api-sock", "/tmp/s", "--level", "loud" },
	  "--level loud: must be Error, Warning, Info, Debug, Trace or Off" },
	{ { "--api-sock", "/tmp/s", "--http-api-max-payload-size", "0" },
	  "--http-api-max-payload-size 0: must be a number from 1 to" },
	{ { "--api-sock", "/tmp/s", "--start-time-us", "-1" },
	  "--start-time-us -1: must be a number" },
	{ { "--api-sock", "/tmp/s", "--parent-cpu-time-us", "1x" },
	  "--parent-cpu-time-us 1x" },
	{ { "--api-sock", "/tmp/s", "--log-path" }, "needs a value" },
	{ { "--kernel", "k", "--vsock", "cid=2,uds=/v" },
	  "--vsock cid=2,uds=/v: cid '2' must be 3 to 4294967294" },
	{ { "--kernel", "k", "--vsock", "cid=4294967295,uds=/v" },
	  "cid '4294967295' must be 3 to 4294967294" },
	{ { "--kernel", "k", "--vsock", "cid=-3,uds=/v" },
	  "cid '-3' must be" },
	{ { "--kernel", "k", "--vsock", "cid=3" },
	  "--vsock cid=3: needs cid=N and uds=PATH" },
	{ { "--kernel", "k", "--vsock", "uds=/v" }, "needs cid=N and uds" },
	{ { "--kernel", "k", "--vsock", "cid=3,uds=" }, "uds '' must be 1 to 96" },
	{ { "--kernel", "k", "--vsock", "cid=3,uds=/v,port=1" },
	  "--vsock cid=3,uds=/v,port=1: unknown key 'port'" },
	{ { "--kernel", "k", "--vsock", "cid=3,uds=/v,transport=usb" },
	  "transport 'usb' must be pci or mmio" },
	{ { "--kernel", "k", "--vsock", "cid=3,/v" }, "'/v' is not key=value" },
	{ { "--kernel", "k", "--vsock", "cid=3,uds=/v", "--vsock",
	    "cid=4,uds=/w" }, "one vsock device at most" },
	/* engine=vhost: the kernel's vhost_vsock, no Unix socket. */
	{ { "--kernel", "k", "--vsock", "cid=3,uds=/v,engine=vhost" },
	  "--vsock cid=3,uds=/v,engine=vhost: uds= and engine=vhost exclude each other" },
	{ { "--kernel", "k", "--vsock", "engine=vhost,uds=/v,cid=3" },
	  "uds= and engine=vhost exclude each other" },
	{ { "--kernel", "k", "--vsock", "engine=vhost" },
	  "--vsock engine=vhost: needs cid=N" },
	{ { "--kernel", "k", "--vsock", "cid=3,engine=kernel" },
	  "--vsock cid=3,engine=kernel: engine 'kernel' must be hybrid or vhost" },
	{ { "--kernel", "k", "--vsock", "cid=2,engine=vhost" },
	  "cid '2' must be 3 to 4294967294" },
	/* --net: one row per refusal, each naming the argument and value. */
	{ { "--kernel", "k", "--net", "id=eth0" },
	  "--net id=eth0: needs tap=NAME" },
	{ { "--kernel", "k", "--net", "tap=" },
	  "--net tap=: tap '' must be an interface name: 1 to 15 bytes" },
	{ { "--kernel", "k", "--net", "tap=tap0123456789abc" },
	  "tap 'tap0123456789abc' must be an interface name" },
	{ { "--kernel", "k", "--net", "tap=a/b" },
	  "tap 'a/b' must be an interface name" },
	{ { "--kernel", "k", "--net", "tap=a:1" },
	  "tap 'a:1' must be an interface name" },
	{ { "--kernel", "k", "--net", "tap=.." },
	  "tap '..' must be an interface name" },
	{ { "--kernel", "k", "--net", "tap=t0,id=eth-0" },
	  "--net tap=t0,id=eth-0: id 'eth-0' must be 1 to 64 letters, digits or '_'" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=06:00:00:00:00" },
	  "mac '06:00:00:00:00' is not of the form AA:BB:CC:DD:EE:FF" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=06:00:00:00:00:0g" },
	  "mac '06:00:00:00:00:0g' is not of the form" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=06-00-00-00-00-01" },
	  "mac '06-00-00-00-00-01' is not of the form" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=06:00:00:00:00:01:" },
	  "mac '06:00:00:00:00:01:' is not of the form" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=01:00:5e:00:00:01" },
	  "mac '01:00:5e:00:00:01' is a multicast or all-zero address" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=00:00:00:00:00:00" },
	  "is a multicast or all-zero address" },
	{ { "--kernel", "k", "--net", "tap=t0,queues=0" },
	  "--net tap=t0,queues=0: queues '0' must be 1 to 31" },
	{ { "--kernel", "k", "--net", "tap=t0,queues=32" },
	  "queues '32' must be 1 to 31" },
	{ { "--kernel", "k", "--net", "tap=t0,queues=-1" },
	  "queues '-1' must be 1 to 31" },
	{ { "--kernel", "k", "--net", "tap=t0,transport=usb" },
	  "--net tap=t0,transport=usb: transport 'usb' must be pci or mmio" },
	{ { "--kernel", "k", "--net", "tap=t0,vhost=on" },
	  "--net tap=t0,vhost=on: unknown key 'vhost'" },
	{ { "--kernel", "k", "--net", "tap=t0,engine=io_uring" },
	  "--net tap=t0,engine=io_uring: engine 'io_uring' must be user (microvm's queue threads) or vhost (the kernel's vhost_net)" },
	{ { "--kernel", "k", "--net", "tap=t0,t1" },
	  "--net tap=t0,t1: 't1' is not key=value" },
	{ { "--kernel", "k", "--net", "tap=t0,id=a", "--net", "tap=t1,id=a" },
	  "--net tap=t1,id=a: id 'a' is taken by another --net" },
	{ { "--kernel", "k", "--net", "tap=t0", "--net", "tap=t0" },
	  "--net tap=t0: tap 't0' is --net id=net0's already" },
	{ { "--kernel", "k", "--net", "tap=t0,mac=06:00:00:00:00:01", "--net",
	    "tap=t1,mac=06:00:00:00:00:01" },
	  "--net tap=t1,mac=06:00:00:00:00:01: the guest's MAC is --net id=net0's already" },
	{ { "--kernel", "k", "--net" }, "needs a value" },
};

/*
 * --net: every key; the defaults (id: the first free netN; a MAC derived
 * from the id, locally administered and unicast, the same every time;
 * queue pairs left to the machine, one per vCPU; pci; engine user).
 */
static void test_net(void)
{
	static const char *const args[] = { "--kernel", "k",
		"--net", "id=net0,tap=tap0", "--net", "tap=tap1",
		"--net", "tap=tap2_456789abcd,id=eth_2,mac=AA:bb:cc:DD:ee:f0,queues=31,"
			 "transport=mmio,engine=vhost", NULL };
	static const uint8_t given[6] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0 };
	uint8_t mac[6], again[6], other[6];
	struct vm_config cfg;
	char err[512];

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), args), CLI_RUN);
	if (*err)
		fprintf(stderr, "test_net: %s\n", err);
	CHECK_EQ(cfg.nr_nets, 3);
	CHECK(!strcmp(cfg.nets[0].iface_id, "net0") &&
	      !strcmp(cfg.nets[0].host_dev_name, "tap0"));
	CHECK(!cfg.nets[0].mac_set && cfg.nets[0].queue_pairs == 0);
	CHECK(!cfg.nets[0].vhost);
	CHECK_EQ(cfg.nets[0].transport, DISK_TRANSPORT_PCI);
	CHECK(!rl_config_active(&cfg.nets[0].rx_rl) &&
	      !rl_config_active(&cfg.nets[0].tx_rl));
	CHECK(!strcmp(cfg.nets[1].iface_id, "net1") &&
	      !strcmp(cfg.nets[1].host_dev_name, "tap1"));
	CHECK(!strcmp(cfg.nets[2].iface_id, "eth_2"));
	/* IFNAMSIZ less the NUL: 15 bytes is the longest name. */
	CHECK(!strcmp(cfg.nets[2].host_dev_name, "tap2_456789abcd"));
	CHECK(cfg.nets[2].mac_set && !memcmp(cfg.nets[2].mac, given, 6));
	CHECK_EQ(cfg.nets[2].queue_pairs, 31);
	CHECK(cfg.nets[2].vhost);
	CHECK_EQ(cfg.nets[2].transport, DISK_TRANSPORT_MMIO);
	config_net_mac(&cfg.nets[0], mac);
	config_net_mac(&cfg.nets[0], again);
	config_net_mac(&cfg.nets[1], other);
	CHECK(mac[0] == 0x06 && mac[1] == 0x00);
	CHECK(!memcmp(mac, again, 6) && memcmp(mac, other, 6));
	config_net_mac(&cfg.nets[2], other);
	CHECK(!memcmp(other, given, 6));
	cli_free(&cfg);
}

/* At most CONFIG_MAX_NETS interfaces: the ninth is refused by count. */
static void test_net_many(void)
{
	const char *args[2 + 2 * (CONFIG_MAX_NETS + 1) + 1] = { "--kernel",
								 "k" };
	static char taps[CONFIG_MAX_NETS + 1][8];
	struct vm_config cfg;
	char err[512];
	unsigned int i;

	for (i = 0; i <= CONFIG_MAX_NETS; i++) {
		snprintf(taps[i], sizeof(taps[i]), "tap=t%u", i);
		args[2 + 2 * i] = "--net";
		args[3 + 2 * i] = taps[i];
	}
	args[2 + 2 * i] = NULL;
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), args), CLI_ERROR);
	CHECK(strstr(err, "--net tap=t8: at most 8 network interfaces") !=
	      NULL);
	CHECK_EQ(cfg.nr_nets, CONFIG_MAX_NETS);
	cli_free(&cfg);
	args[2 + 2 * CONFIG_MAX_NETS] = NULL; /* eight: fine */
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), args), CLI_RUN);
	CHECK_EQ(cfg.nr_nets, CONFIG_MAX_NETS);
	cli_free(&cfg);
}

/* --vsock: the device's settings, pci unless transport=mmio. */
static void test_vsock(void)
{
	static const char *const one[] = { "--kernel", "k", "--vsock",
		"cid=3,uds=/tmp/v.sock", NULL };
	static const char *const mmio[] = { "--kernel", "k", "--vsock",
		"uds=/v,transport=mmio,cid=4294967294", NULL };
	struct vm_config cfg;
	char err[512];

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), one), CLI_RUN);
	CHECK(cfg.vsock.set && cfg.vsock.guest_cid == 3);
	CHECK(cfg.vsock.uds_path && !strcmp(cfg.vsock.uds_path, "/tmp/v.sock"));
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_PCI);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), mmio), CLI_RUN);
	CHECK(cfg.vsock.guest_cid == 4294967294ULL &&
	      cfg.vsock.transport == DISK_TRANSPORT_MMIO);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_HYBRID);
	cli_free(&cfg);
}

/* --vsock cid=N,engine=vhost: no uds; engine=hybrid is the default. */
static void test_vsock_engine(void)
{
	static const char *const vhost[] = { "--kernel", "k", "--vsock",
		"cid=7,engine=vhost", NULL };
	static const char *const vhost_mmio[] = { "--kernel", "k", "--vsock",
		"engine=vhost,transport=mmio,cid=3", NULL };
	static const char *const hybrid[] = { "--kernel", "k", "--vsock",
		"cid=3,uds=/v,engine=hybrid", NULL };
	struct vm_config cfg;
	char err[512];

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), vhost), CLI_RUN);
	CHECK(cfg.vsock.set && cfg.vsock.guest_cid == 7);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_VHOST);
	CHECK(cfg.vsock.uds_path == NULL);
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_PCI);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), vhost_mmio), CLI_RUN);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_VHOST);
	CHECK_EQ(cfg.vsock.transport, DISK_TRANSPORT_MMIO);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), hybrid), CLI_RUN);
	CHECK_EQ(cfg.vsock.engine, CONFIG_VSOCK_HYBRID);
	CHECK(cfg.vsock.uds_path && !strcmp(cfg.vsock.uds_path, "/v"));
	cli_free(&cfg);
}

static void test_fc_bad(void)
{
	size_t i;

	for (i = 0; i < sizeof(fc_bad_rows) / sizeof(fc_bad_rows[0]); i++) {
		struct vm_config cfg;
		char err[512];

		CHECK_EQ(parse_args(&cfg, err, sizeof(err),
				    fc_bad_rows[i].args), CLI_ERROR);
		if (!strstr(err, fc_bad_rows[i].needle))
			fprintf(stderr, "fc row %zu: '%s'\n", i, err);
		CHECK(strstr(err, fc_bad_rows[i].needle) != NULL);
		cli_free(&cfg);
	}
}

/* --api-sock alone: the API supplies the rest, Firecracker's defaults. */
static void test_fc_api_modes(void)
{
	static const char *const api_only[] = { "--api-sock", "/tmp/a.sock",
						NULL };
	static const char *const api_cli[] = {
		"--api-sock", "/tmp/a.sock", "--kernel", "k", "--disk", "r.raw",
		"--memory", "256M", NULL };
	static const char *const flags[] = {
		"--api-sock", "/tmp/a.sock", "--id", "vm-1", "--boot-timer",
		"--enable-pci", "--log-path", "/tmp/l", "--level", "debug",
		"--module", "api", "--show-level", "--show-log-origin",
		"--metrics-path", "/tmp/m", "--http-api-max-payload-size",
		"51200", "--start-time-us", "18446744073709551615",
		"--start-time-cpu-us", "7", "--parent-cpu-time-us", "8", NULL };
	struct vm_config cfg;
	char err[512];

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), api_only), CLI_RUN);
	CHECK(!cfg.kernel && !cfg.cmdline && !strcmp(cfg.api_sock, "/tmp/a.sock"));
	CHECK(cfg.memory == CONFIG_FC_DEFAULT_MEMORY && cfg.cpus == 1);
	CHECK(!strcmp(cfg.memory_arg, "128M"));
	cli_free(&cfg);
	/* Mixed: the command line's own defaults for its own --kernel. */
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), api_cli), CLI_RUN);
	CHECK(!strcmp(cfg.kernel, "k"));
	CHECK(!strcmp(cfg.cmdline, CLI_CMDLINE_ROOT_RW));
	CHECK(cfg.memory == 256ULL << 20);
	CHECK(cfg.nr_disks == 1 && !strcmp(cfg.disks[0].drive_id, "disk0"));
	CHECK_EQ(cfg.disks[0].transport, DISK_TRANSPORT_PCI);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), flags), CLI_RUN);
	CHECK(!strcmp(cfg.id, "vm-1") && cfg.boot_timer && cfg.enable_pci);
	CHECK(!strcmp(cfg.log_path, "/tmp/l") && !strcmp(cfg.log_module, "api"));
	CHECK_EQ(cfg.log_level, CONFIG_LOG_DEBUG);
	CHECK(cfg.log_show_level && cfg.log_show_origin);
	CHECK(!strcmp(cfg.metrics_path, "/tmp/m"));
	CHECK(cfg.api_max_payload == 51200);
	CHECK(cfg.start_time_us == UINT64_MAX);
	CHECK(cfg.start_time_cpu_us == 7 && cfg.parent_cpu_time_us == 8);
	cli_free(&cfg);
}

static char *write_config(const char *text)
{
	char *path = strdup("/tmp/test_cli_fc.XXXXXX");
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		close(fd);
	}
	return path;
}

/* --config-file: applied last; --id implies Firecracker's socket. */
static void test_fc_config_file(void)
{
	char *with_boot = write_config(
		"{\"boot-source\":{\"kernel_image_path\":\"/fc/vmlinux\"},"
		"\"drives\":[{\"drive_id\":\"rootfs\",\"path_on_host\":"
		"\"/fc/root.ext4\",\"is_root_device\":true}],"
		"\"machine-config\":{\"vcpu_count\":2,\"mem_size_mib\":64}}");
	char *no_boot = write_config("{\"network-interfaces\":[{\"iface_id\":"
				     "\"eth0\",\"host_dev_name\":\"tap0\"}]}");
	const char *jailer[] = { "--id", "vm-2", "--start-time-us", "1",
				 "--config-file", with_boot, NULL };
	const char *flint[] = { "--id", "vm-3", "--boot-timer", "--no-api",
				"--config-file", with_boot, NULL };
	const char *mixed[] = { "--kernel", "k", "--disk", "d.raw",
				"--config-file", with_boot, NULL };
	const char *empty[] = { "--no-api", "--config-file", no_boot, NULL };
	struct vm_config cfg;
	char err[512];

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), jailer), CLI_RUN);
	CHECK(cfg.api_sock && !strcmp(cfg.api_sock, FC_DEFAULT_API_SOCK));
	CHECK(!strcmp(cfg.kernel, "/fc/vmlinux") && !cfg.cmdline);
	CHECK(cfg.cpus == 2 && cfg.memory == 64ULL << 20);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), flint), CLI_RUN);
	CHECK(!cfg.api_sock && cfg.no_api && cfg.boot_timer);
	CHECK(cfg.nr_disks == 1 && cfg.disks[0].is_root);
	cli_free(&cfg);
	/* The file's boot source replaces --kernel, its drives come after
	 * --disk's, and fc_finalize_config() puts the root first. */
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), mixed), CLI_RUN);
	CHECK(!strcmp(cfg.kernel, "/fc/vmlinux") && !cfg.cmdline);
	CHECK(!cfg.api_sock && cfg.nr_disks == 2);
	CHECK(!strcmp(cfg.disks[0].drive_id, "disk0"));
	CHECK(!strcmp(cfg.disks[1].drive_id, "rootfs"));
	CHECK_EQ(fc_finalize_config(&cfg, err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.disks[0].drive_id, "rootfs"));
	CHECK(!strcmp(cfg.cmdline, FC_DEFAULT_BOOT_ARGS " root=/dev/vda rw"));
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), empty), CLI_ERROR);
	CHECK(strstr(err, "no \"boot-source\", and no --kernel or --api-sock") != NULL);
	cli_free(&cfg);
	unlink(with_boot);
	unlink(no_boot);
	free(with_boot);
	free(no_boot);
}

/* GET /vm/config of a command-line configuration loads back the same. */
static void test_cli_vm_config(void)
{
	static const char *const args[] = {
		"--kernel", "k", "--cpus", "3", "--memory", "300M", "--disk",
		"r.raw,serial=S,queues=2,queue-size=128,poll-us=0", "--disk",
		"d.raw,readonly=on,cache=writeback,transport=mmio,engine=vhost",
		"--net", "tap=tap0", "--net",
		"tap=tap1,id=eth1,mac=06:00:ac:10:00:02,queues=2,transport=mmio,"
		"engine=vhost", NULL };
	struct vm_config cfg, back;
	char err[512], *json, *again, *path;

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), args), CLI_RUN);
	json = fc_vm_config_json(&cfg);
	CHECK(json != NULL);
	path = write_config(json);
	memset(&back, 0, sizeof(back));
	CHECK_EQ(fc_load_config_file(&back, path, err, sizeof(err)), 0);
	again = fc_vm_config_json(&back);
	CHECK(again && !strcmp(json, again));
	CHECK(back.cpus == 3 && back.memory == 300ULL << 20);
	CHECK(!strcmp(back.cmdline, CLI_CMDLINE_ROOT_RW));
	CHECK(back.nr_disks == 2 && !strcmp(back.disks[0].drive_id, "disk0"));
	CHECK_EQ(back.disks[0].cache, CONFIG_CACHE_NONE);
	CHECK_EQ(back.disks[0].transport, DISK_TRANSPORT_PCI);
	CHECK_EQ(back.disks[1].engine, CONFIG_ENGINE_VHOST);
	CHECK(strstr(json, "\"network-interfaces\":[{\"iface_id\":\"net0\","
		     "\"host_dev_name\":\"tap0\","
		     "\"transport\":\"pci\"},{\"iface_id\":\"eth1\","
		     "\"host_dev_name\":\"tap1\",\"guest_mac\":"
		     "\"06:00:ac:10:00:02\",\"queues\":2,"
		     "\"transport\":\"mmio\",\"engine\":\"vhost\"}]") != NULL);
	CHECK(back.nr_nets == 2 && !back.nets[0].mac_set &&
	      back.nets[1].mac_set && back.nets[1].queue_pairs == 2);
	CHECK(!back.nets[0].vhost && back.nets[1].vhost &&
	      !back.nets[0].queue_pairs);
	unlink(path);
	free(path);
	free(json);
	free(again);
	config_free(&back);
	cli_free(&cfg);
}

/* --cpus N,smt=on|off: the count and smt, GET /vm/config's "smt"; a
 * later --cpus without it turns it off. */
static void test_cpus_smt(void)
{
#if !defined(__aarch64__)
	static const char *const four[] = { "--kernel", "k", "--cpus",
					    "4,smt=on", NULL };
	static const char *const one[] = { "--kernel", "k", "--cpus",
					   "1,smt=on", NULL };
	static const char *const again[] = { "--kernel", "k", "--cpus",
					     "4,smt=on", "--cpus", "3", NULL };
	struct vm_config cfg;
	char err[256], *json;

	CHECK_EQ(parse_args(&cfg, err, sizeof(err), four), CLI_RUN);
	CHECK(cfg.cpus == 4 && cfg.smt);
	json = fc_vm_config_json(&cfg);
	CHECK(json && strstr(json, "\"vcpu_count\":4,") &&
	      strstr(json, "\"smt\":true"));
	free(json);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), one), CLI_RUN);
	CHECK(cfg.cpus == 1 && cfg.smt);
	cli_free(&cfg);
	CHECK_EQ(parse_args(&cfg, err, sizeof(err), again), CLI_RUN);
	CHECK(cfg.cpus == 3 && !cfg.smt);
	cli_free(&cfg);
#endif
}

/*
 * --version as Kata's fc.go reads it: the first line's second word, less
 * a leading 'v', must be a semantic version of at least 0.21.1.
 */
static void test_version(void)
{
	char *argv[2] = { (char *)"microvm", (char *)"--version" };
	char path[] = "/tmp/test_cli_version.XXXXXX", line[128] = "";
	unsigned int major = 0, minor = 0, patch = 0;
	struct vm_config cfg;
	char err[256], word[64] = "", *v;
	int fd = mkstemp(path), saved;
	FILE *f;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	memset(&cfg, 0, sizeof(cfg));
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	CHECK_EQ(cli_parse(2, argv, &cfg, err, sizeof(err)), CLI_EXIT);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	cli_free(&cfg);
	f = fdopen(fd, "r");
	rewind(f);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	unlink(path);
	CHECK(sscanf(line, "%*s %63s", word) == 1);
	v = word[0] == 'v' ? word + 1 : word;
	CHECK(sscanf(v, "%u.%u.%u", &major, &minor, &patch) == 3);
	CHECK(major > 0 || minor > 21 || (minor == 21 && patch >= 1));
	CHECK(!strncmp(line, "microvm v", 9));
	/* The version, then the git revision in parentheses. */
	CHECK(!strncmp(line + 9, MICROVM_VERSION " (git ",
		       strlen(MICROVM_VERSION) + 6));
	CHECK(strlen(line) > 9 + strlen(MICROVM_VERSION) + 8);
	CHECK(!strcmp(line + strlen(line) - 2, ")\n"));
}

/* @s with every run of blanks and newlines made one space, in @out. */
static void squeeze(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++) {
		if (*s == ' ' || *s == '\n') {
			if (o && out[o - 1] == ' ')
				continue;
			out[o++] = ' ';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

/*
 * --help's text is rendered from docs/cli.txt at build time, with the
 * values of the C macros it names read from the headers by
 * docs/cli-doc.awk: the program's own macros must be what it says.
 */
static void test_usage_macros(void)
{
	static char text[32768];
	const char *want[] = {
		"(default " CONFIG_DEFAULT_MEMORY_ARG ")",
		"imply " FC_DEFAULT_API_SOCK " unless",
		"boot_args \"" FC_DEFAULT_BOOT_ARGS "\" plus",
		"print \"microvm v" MICROVM_VERSION " (git REVISION)\"",
	};
	size_t i;

	CHECK(strlen(cli_usage()) < sizeof(text) - 1);
	squeeze(cli_usage(), text, sizeof(text));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(text, want[i]))
			printf("--help lacks '%s'\n", want[i]);
		CHECK(strstr(text, want[i]) != NULL);
	}
	CHECK(!strncmp(text, "Usage: microvm --kernel IMAGE", 29));
}

int main(void)
{
	test_net();
	test_net_many();
	test_vsock();
	test_vsock_engine();
	test_sizes();
	test_memory();
	test_disk_ok();
	test_disk_bad();
	test_argv();
	test_default_cmdline();
	test_seccomp();
	test_console();
	test_fc_bad();
	test_fc_api_modes();
	test_fc_config_file();
	test_cli_vm_config();
	test_cpus_smt();
	test_version();
	test_usage_macros();
	return test_done();
}
