// SPDX-License-Identifier: Apache-2.0
/*
 * The network interfaces in a metrics line (metrics_priv.h): "net", the
 * sums over the interfaces, and "net_<iface_id>" for each, as Firecracker
 * names them, under its NetDeviceMetrics names where ours count the same
 * thing, then ours. Deltas since the last line that went out.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/metrics_priv.h"

#define NS(f) offsetof(struct net_dev_stats, f)
#define NONE ((size_t)-1)

/* Each key: the sum of one or two counters of struct net_dev_stats. */
struct net_key {
	const char *name;
	size_t a, b;
};

static const struct net_key net_keys[] = {
	/* Firecracker's. */
	{ "rx_bytes_count", NS(rx_bytes), NONE },
	{ "rx_packets_count", NS(rx_packets), NONE },
	{ "rx_fails", NS(rx_errors), NS(rx_drops) },
	{ "rx_rate_limiter_throttled", NS(rx_throttled), NONE },
	{ "tx_bytes_count", NS(tx_bytes), NONE },
	{ "tx_packets_count", NS(tx_packets), NONE },
	{ "tx_fails", NS(tx_errors), NS(tx_drops) },
	{ "tx_malformed_frames", NS(tx_errors), NONE },
	{ "tap_write_fails", NS(tx_drops), NONE },
	{ "tx_rate_limiter_throttled", NS(tx_throttled), NONE },
	/* Ours: rx_fails and tx_fails apart, the control queue. */
	{ "rx_dropped", NS(rx_drops), NONE },
	{ "rx_errors", NS(rx_errors), NONE },
	{ "tx_dropped", NS(tx_drops), NONE },
	{ "ctrl_commands", NS(ctrl_ok), NONE },
	{ "ctrl_fails", NS(ctrl_err), NONE },
};
#define NR_NET_KEYS (sizeof(net_keys) / sizeof(net_keys[0]))

/* Firecracker's "mmds" group: the metadata service over every interface
 * that serves it. */
static const struct net_key mmds_keys[] = {
	{ "rx_accepted", NS(mmds.rx_accepted), NONE },
	{ "rx_accepted_err", NS(mmds.rx_accepted_err), NONE },
	{ "rx_bad_eth", NS(mmds.rx_bad_eth), NONE },
	{ "rx_count", NS(mmds.rx_count), NONE },
	{ "tx_bytes", NS(mmds.tx_bytes), NONE },
	{ "tx_count", NS(mmds.tx_count), NONE },
	{ "tx_errors", NS(mmds.tx_errors), NONE },
	{ "tx_frames", NS(mmds.tx_frames), NONE },
	{ "connections_created", NS(mmds.connections_created), NONE },
	{ "connections_destroyed", NS(mmds.connections_destroyed), NONE },
};
#define NR_MMDS_KEYS (sizeof(mmds_keys) / sizeof(mmds_keys[0]))

static uint64_t field(const struct net_dev_stats *s, size_t off)
{
	uint64_t v;

	if (off == NONE)
		return 0;
	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

/* Key @k of interface @i since the last line; a counter that restarted
 * (a device made again) reports all it has. */
static uint64_t net_delta(const struct metrics *mt, unsigned int i,
			  const struct net_key *key)
{
	uint64_t cur = field(&mt->net[i], key->a) + field(&mt->net[i], key->b);
	uint64_t old = field(&mt->net_reported[i], key->a) +
		       field(&mt->net_reported[i], key->b);

	return cur >= old ? cur - old : cur;
}

void metrics_snap_nets(struct metrics *mt, const struct metrics_source *src)
{
	unsigned int i, n = src->nets ? src->nr_nets : 0;

	if (n > CONFIG_MAX_NETS)
		n = CONFIG_MAX_NETS;
	if (n != mt->nr_nets)
		memset(mt->net_reported, 0, sizeof(mt->net_reported));
	mt->nr_nets = n;
	for (i = 0; i < n; i++)
		mt->net[i] = src->nets[i].stats;
}

void metrics_commit_nets(struct metrics *mt)
{
	memcpy(mt->net_reported, mt->net, sizeof(mt->net));
}

int metrics_add_nets(struct metrics *mt, const struct metrics_source *src,
		     struct json_object *root)
{
	uint64_t agg[NR_NET_KEYS] = { 0 }, d;
	struct json_object *o;
	unsigned int i, k;
	char key[80];

	if (!mt->nr_nets)
		return 0;
	for (i = 0; i < mt->nr_nets; i++) {
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		for (k = 0; k < NR_NET_KEYS; k++) {
			d = net_delta(mt, i, &net_keys[k]);
			agg[k] += d;
			json_object_object_add(o, net_keys[k].name,
					       json_object_new_uint64(d));
		}
		snprintf(key, sizeof(key), "net_%s", src->nets[i].id);
		json_object_object_add(root, key, o);
	}
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	for (k = 0; k < NR_NET_KEYS; k++)
		json_object_object_add(o, net_keys[k].name,
				       json_object_new_uint64(agg[k]));
	json_object_object_add(root, "net", o);
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	for (k = 0; k < NR_MMDS_KEYS; k++) {
		for (d = 0, i = 0; i < mt->nr_nets; i++)
			d += net_delta(mt, i, &mmds_keys[k]);
		json_object_object_add(o, mmds_keys[k].name,
				       json_object_new_uint64(d));
	}
	json_object_object_add(root, "mmds", o);
	return 0;
}
