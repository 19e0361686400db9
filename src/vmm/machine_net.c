// SPDX-License-Identifier: Apache-2.0
/*
 * The machine's network interfaces (--net, PUT /network-interfaces): for
 * each, the host tap's queue fds (virtio/tap.h), opened before the VM
 * exists and before main confines itself, then a virtio-net device on
 * them (virtio/net.h) on the transport the configuration names
 * (machine_virtio.h), attached after the vsock device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmds/mmds.h"
#include "virtio/net.h"
#include "virtio/tap.h"
#include "vmm/machine.h"
#include "vmm/machine_virtio.h"
#include "vmm/metrics.h"

_Static_assert(CONFIG_MAX_NET_PAIRS <= NET_MAX_QUEUE_PAIRS,
	       "--net queues takes what the device takes");
_Static_assert(CONFIG_MAX_NET_PAIRS <= NET_TAP_MAX_QUEUES,
	       "--net queues takes what a tap opens");

struct machine_net {
	struct machine_vdev mv;
	struct net_dev *dev;
	unsigned int pairs;            /* queue pairs: the tap's queues */
	int fds[CONFIG_MAX_NET_PAIRS]; /* the tap's queues until the
					* device owns them (then -1) */
	unsigned int nr_fds;
};

/* One line naming the interface, the tap and the cause, with the fix
 * for a refusal. */
static void tap_error(const struct config_net *nc, int ret, const char *why,
		      char *err, size_t errlen)
{
	snprintf(err, errlen, "network interface %s: %s%s", nc->iface_id, why,
		 ret == -EPERM || ret == -EACCES ?
		 " (creating a tap needs CAP_NET_ADMIN; or make it first: ip tuntap add NAME mode tap user USER, with multi_queue for queues > 1)" :
		 ret == -EBUSY || ret == -EINVAL ?
		 " (is it a tap, with multi_queue for queues > 1, and not in use?)" :
		 "");
}

/*
 * The tap's queues: as many as the interface asks, or with none asked
 * one per vCPU (as the disks' queues), and one when the tap exists
 * without multi_queue (TUNSETIFF refuses IFF_MULTI_QUEUE there).
 */
static int open_tap(struct machine *m, const struct config_net *nc,
		    struct machine_net *mn, char *why, size_t len)
{
	unsigned int want = m->cfg->cpus;
	int ret;

	if (nc->queue_pairs) {
		mn->pairs = nc->queue_pairs;
		return net_tap_open(nc->host_dev_name, mn->pairs, mn->fds,
				    why, len);
	}
	if (want > CONFIG_MAX_NET_PAIRS)
		want = CONFIG_MAX_NET_PAIRS;
	if (!want)
		want = 1;
	mn->pairs = want;
	ret = net_tap_open(nc->host_dev_name, want, mn->fds, why, len);
	if (ret != -EINVAL || want == 1)
		return ret;
	mn->pairs = 1;
	ret = net_tap_open(nc->host_dev_name, 1, mn->fds, why, len);
	if (!ret)
		log_info("network interface %s: tap %s has no multi_queue: "
			 "one queue pair, not one per vCPU", nc->iface_id,
			 nc->host_dev_name);
	return ret;
}

int machine_open_nets(struct machine *m, char *err, size_t errlen)
{
	char why[256];
	unsigned int i, k;
	int ret;

	if (!m->cfg->nr_nets)
		return 0;
	m->nets = calloc(m->cfg->nr_nets, sizeof(*m->nets));
	if (!m->nets) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->nr_nets = m->cfg->nr_nets;
	for (i = 0; i < m->nr_nets; i++) {
		const struct config_net *nc = &m->cfg->nets[i];
		struct machine_net *mn = &m->nets[i];

		for (k = 0; k < CONFIG_MAX_NET_PAIRS; k++)
			mn->fds[k] = -1;
		ret = open_tap(m, nc, mn, why, sizeof(why));
		if (ret) {
			tap_error(nc, ret, why, err, errlen);
			return ret;
		}
		mn->nr_fds = mn->pairs;
	}
	return 0;
}

/* Interface @i's device, from its open tap, on its transport. */
static int attach_net(struct machine *m, unsigned int i, char *err,
		      size_t errlen)
{
	const struct config_net *nc = &m->cfg->nets[i];
	struct machine_net *mn = &m->nets[i];
	struct net_config c = {
		.queue_pairs = mn->pairs,
		.tap_fds = mn->fds,
		.rx_rl = nc->rx_rl,
		.tx_rl = nc->tx_rl,
		.vhost = nc->vhost,
	};
	char name[16];
	unsigned int k;
	int ret;

	config_net_mac(nc, c.mac);
	if (config_mmds_on_net(m->cfg, nc->iface_id)) {
		if (nc->vhost) {
			snprintf(err, errlen, "network interface %s: engine "
				 "vhost cannot serve MMDS (mmds-config names "
				 "it; the kernel moves its packets)",
				 nc->iface_id);
			return -EINVAL;
		}
		c.mmds = m->mmds;
	}
	snprintf(name, sizeof(name), "net%u", i);
	mn->mv.transport = nc->transport;
	ret = net_dev_create(&mn->dev, &mn->mv.vdev, &c, &m->vm.mem, name);
	if (ret) {
		snprintf(err, errlen, "network interface %s (tap %s%s): %s",
			 nc->iface_id, nc->host_dev_name,
			 nc->vhost ? ", engine vhost" : "", strerror(-ret));
		return ret;
	}
	for (k = 0; k < mn->nr_fds; k++)
		mn->fds[k] = -1; /* the device's now */
	mn->nr_fds = 0;
	return machine_vdev_attach(m, &mn->mv, "net", err, errlen);
}

int machine_attach_nets(struct machine *m, char *err, size_t errlen)
{
	const struct config_mmds *mc = &m->cfg->mmds;
	unsigned int i;
	int ret;

	if (mc->set && m->mmds) {
		struct mmds_config c = {
			.version = mc->version,
			.ipv4 = mc->ipv4,
			.imds_compat = mc->imds_compat,
		};

		mmds_configure(m->mmds, &c);
	}
	for (i = 0; i < m->nr_nets; i++) {
		ret = attach_net(m, i, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

void machine_detach_nets(struct machine *m)
{
	unsigned int i = m->nr_nets;

	while (i-- > 0) {
		struct machine_net *mn = &m->nets[i];

		machine_vdev_detach(&mn->mv);
		if (mn->dev)
			net_dev_destroy(mn->dev); /* closes the tap's fds */
		mn->dev = NULL;
	}
}

void machine_close_nets(struct machine *m)
{
	unsigned int i = m->nr_nets, k;

	machine_detach_nets(m);
	while (i-- > 0)
		for (k = 0; k < m->nets[i].nr_fds; k++)
			close(m->nets[i].fds[k]);
	free(m->nets);
	m->nets = NULL;
	m->nr_nets = 0;
}

void machine_net_print_stats(struct machine *m, int fd)
{
	unsigned int i;

	for (i = 0; i < m->nr_nets; i++) {
		const struct config_net *nc = &m->cfg->nets[i];
		struct machine_net *mn = &m->nets[i];

		if (!mn->dev)
			continue;
		dprintf(fd, "microvm: stats %s net: iface %s tap %s pairs %u "
			"engine %s\n", mn->mv.vdev.name, nc->iface_id,
			nc->host_dev_name, mn->pairs,
			nc->vhost ? "vhost" : "user");
		net_dev_print_stats(mn->dev, fd);
	}
}

unsigned int machine_metrics_nets(struct machine *m, struct metrics_net *out,
				  unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < m->nr_nets && n < max; i++) {
		if (!m->nets[i].dev)
			continue;
		out[n].id = m->cfg->nets[i].iface_id;
		net_dev_get_stats(m->nets[i].dev, &out[n].stats);
		n++;
	}
	return n;
}

int machine_patch_net(struct machine *m, unsigned int index,
		      const struct rl_config *rx, const struct rl_config *tx,
		      char *err, size_t errlen)
{
	struct config_net *nc;
	int ret;

	if (index >= m->nr_nets || !m->nets[index].dev) {
		snprintf(err, errlen, "network interface %s has no device",
			 index < m->cfg->nr_nets ?
			 m->cfg->nets[index].iface_id : "?");
		return -ENODEV;
	}
	nc = &m->cfg->nets[index];
	if (nc->vhost) {
		snprintf(err, errlen,
			 "network interface %s: engine vhost takes no rate limiter (the kernel moves the packets)",
			 nc->iface_id);
		return -ENOTSUP;
	}
	ret = net_dev_set_rate_limits(m->nets[index].dev, rx, tx);
	if (ret) {
		snprintf(err, errlen,
			 "network interface %s: cannot apply the rate limiters: %s",
			 nc->iface_id, strerror(-ret));
		return ret;
	}
	if (rx)
		nc->rx_rl = *rx;
	if (tx)
		nc->tx_rl = *tx;
	return 0;
}
