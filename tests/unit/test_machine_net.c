// SPDX-License-Identifier: Apache-2.0
/*
 * The machine's network interfaces before the VM (src/vmm/machine_net.c):
 * a tap that cannot be opened is one message naming the interface and
 * the tap; what was opened before a failure is closed by the undo step
 * (no descriptor left); an interface without a device has no metrics and
 * refuses a PATCH. The taps that open need root and /dev/net/tun, in a
 * private network namespace (that part is skipped without them).
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "virtio/tap.h"
#include "vmm/machine.h"
#include "vmm/metrics.h"

/* Descriptors open in this process now. */
static unsigned int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void add_net(struct vm_config *cfg, const char *id, const char *tap,
		    unsigned int pairs)
{
	struct config_net *n = &cfg->nets[cfg->nr_nets++];

	memset(n, 0, sizeof(*n));
	n->iface_id = strdup(id);
	n->host_dev_name = strdup(tap);
	n->queue_pairs = pairs;
}

static void machine_init(struct machine *m, struct vm_config *cfg)
{
	memset(m, 0, sizeof(*m));
	memset(cfg, 0, sizeof(*cfg));
	m->cfg = cfg;
}

/* "lo" is no tap: TUNSETIFF refuses it (EINVAL as root, EPERM as a
 * user), named with the interface. */
static void test_not_a_tap(void)
{
	struct vm_config cfg;
	struct machine m;
	char err[512] = "";
	unsigned int before = open_fds();

	machine_init(&m, &cfg);
	add_net(&cfg, "eth0", "lo", 1);
	CHECK(machine_open_nets(&m, err, sizeof(err)) < 0);
	if (!strstr(err, "network interface eth0: tap lo: "))
		fprintf(stderr, "not a tap: '%s'\n", err);
	CHECK(strstr(err, "network interface eth0: tap lo: ") != NULL);
	machine_close_nets(&m); /* the failed step's undo */
	CHECK(m.nets == NULL && m.nr_nets == 0);
	CHECK_EQ(open_fds(), before);
	config_free(&cfg);
}

/* No interface: nothing opened, nothing to close. */
static void test_none(void)
{
	struct vm_config cfg;
	struct machine m;
	char err[64] = "";

	machine_init(&m, &cfg);
	CHECK_EQ(machine_open_nets(&m, err, sizeof(err)), 0);
	CHECK(m.nets == NULL && m.nr_nets == 0);
	machine_close_nets(&m);
}

/* Real taps: a queue fd per pair; a later failure leaves none open. */
static void test_taps(void)
{
	struct metrics_net out[CONFIG_MAX_NETS];
	struct rl_config rl = { 0 };
	struct vm_config cfg;
	struct machine m;
	char err[512] = "";
	unsigned int before = open_fds();

	machine_init(&m, &cfg);
	add_net(&cfg, "eth0", "mvnet0", 2);
	add_net(&cfg, "eth1", "mvnet1", 1);
	CHECK_EQ(machine_open_nets(&m, err, sizeof(err)), 0);
	if (*err)
		fprintf(stderr, "taps: %s\n", err);
	CHECK_EQ(m.nr_nets, 2);
	CHECK_EQ(open_fds(), before + 3);
	/* Opened, no device yet: no metrics, a PATCH refused. */
	CHECK_EQ(machine_metrics_nets(&m, out, CONFIG_MAX_NETS), 0);
	CHECK_EQ(machine_patch_net(&m, 0, &rl, NULL, err, sizeof(err)),
		 -ENODEV);
	CHECK(strstr(err, "network interface eth0 has no device") != NULL);
	machine_close_nets(&m);
	CHECK_EQ(open_fds(), before);
	config_free(&cfg);

	/* The second fails: the first one's queues are closed too. */
	machine_init(&m, &cfg);
	add_net(&cfg, "eth0", "mvnet0", 4);
	add_net(&cfg, "eth1", "lo", 1);
	CHECK(machine_open_nets(&m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "network interface eth1: tap lo: ") != NULL);
	machine_close_nets(&m);
	CHECK_EQ(open_fds(), before);
	config_free(&cfg);
}

/* Can this process make taps (root, /dev/net/tun, a namespace of its
 * own, an emulator that passes the tap ioctls on)? */
static bool taps_work(void)
{
	char err[256];
	int fd;

	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) ||
	    unshare(CLONE_NEWNET))
		return false;
	if (net_tap_open("mvprobe", 1, &fd, err, sizeof(err))) {
		printf("%s\n", err);
		return false;
	}
	close(fd);
	return true;
}

int main(void)
{
	test_none();
	test_not_a_tap();
	if (taps_work())
		test_taps();
	else
		printf("skip: real taps (needs root, /dev/net/tun and a "
		       "network namespace)\n");
	return test_done();
}
