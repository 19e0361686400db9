// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's network interfaces into struct config_net: PUT
 * /network-interfaces/{iface_id} (and a config file's
 * "network-interfaces") before boot, PATCH /network-interfaces/{iface_id}
 * with new rate limiters after it. Firecracker's fields (iface_id,
 * host_dev_name, guest_mac, rx_rate_limiter, tx_rate_limiter) plus our
 * queues, transport and engine ("user", the default, or "vhost"); an
 * interface is checked whole, then inserted.
 */
#include "api/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config_priv.h"

static const char *const net_engine_names[] = { "user", "vhost", NULL };

/* The strings of an interface as views into the JSON. */
struct net_views {
	const char *iface_id, *tap;
};

/* A rate limiter key: null is none. */
static int net_rl(struct fc_ctx *c, const char *key, struct json_object *v,
		  struct rl_config *rl)
{
	char err[160];

	memset(rl, 0, sizeof(*rl));
	if (!v)
		return 0;
	if (fc_apply_rate_limiter(rl, key, v, c))
		return -EINVAL;
	if (rl_config_check(rl, err, sizeof(err)))
		return fc_fail(c, "%s: %s", key, err);
	return 0;
}

static int net_key(struct config_net *n, struct net_views *w,
		   const char *key, struct json_object *v, struct fc_ctx *c)
{
	const char *mac;
	unsigned int idx = 0;
	uint64_t q = 0;
	int ret;

	if (!strcmp(key, "iface_id"))
		return fc_get_str(c, key, v, &w->iface_id);
	if (!strcmp(key, "host_dev_name"))
		return fc_get_str(c, key, v, &w->tap);
	if (!strcmp(key, "guest_mac")) {
		if (!v)
			return 0;
		if (fc_get_str(c, key, v, &mac))
			return -EINVAL;
		ret = config_parse_mac(mac, n->mac);
		n->mac_set = !ret;
		if (ret == -EADDRNOTAVAIL)
			return fc_fail(c, "guest_mac \"%.64s\" is a multicast or all-zero address (the guest needs a unicast one)",
				       mac);
		if (ret)
			return fc_fail(c, "guest_mac \"%.64s\" is not of the form AA:BB:CC:DD:EE:FF",
				       mac);
		return 0;
	}
	if (!strcmp(key, "rx_rate_limiter"))
		return net_rl(c, key, v, &n->rx_rl);
	if (!strcmp(key, "tx_rate_limiter"))
		return net_rl(c, key, v, &n->tx_rl);
	if (!strcmp(key, "queues")) {
		ret = fc_get_u64(c, key, v, 1, CONFIG_MAX_NET_PAIRS, &q);
		n->queue_pairs = (unsigned int)q;
		return ret;
	}
	if (!strcmp(key, "transport")) {
		ret = fc_get_enum(c, key, v, fc_transport_names, false, &idx);
		n->transport = idx ? DISK_TRANSPORT_PCI : DISK_TRANSPORT_MMIO;
		return ret;
	}
	if (!strcmp(key, "engine")) {
		ret = fc_get_enum(c, key, v, net_engine_names, false, &idx);
		n->vhost = idx == 1;
		return ret;
	}
	return fc_unknown(c, key);
}

static int net_parse(struct config_net *n, struct net_views *w,
		     const struct vm_config *cfg, const char *path_id,
		     struct json_object *o, struct fc_ctx *c)
{
	int ret;

	memset(n, 0, sizeof(*n));
	memset(w, 0, sizeof(*w));
	n->queue_pairs = 0; /* one per vCPU, as --net's */
	n->transport = cfg->enable_pci ? DISK_TRANSPORT_PCI :
					 DISK_TRANSPORT_MMIO;
	if (fc_get_object(c, "network interface", o))
		return -EINVAL;
	json_object_object_foreach(o, key, v) {
		ret = net_key(n, w, key, v, c);
		if (ret)
			return ret;
	}
	if (!w->iface_id)
		return fc_fail(c, "iface_id is required");
	if (!fc_valid_id(w->iface_id))
		return fc_fail(c, "iface_id \"%.64s\" must be 1-%d letters, digits or '_'",
			       w->iface_id, FC_ID_MAX);
	if (path_id && strcmp(path_id, w->iface_id))
		return fc_fail(c, "iface_id \"%.64s\" differs from the path's \"%.64s\"",
			       w->iface_id, path_id);
	if (!w->tap)
		return fc_fail(c, "host_dev_name is required");
	if (n->vhost && (rl_config_active(&n->rx_rl) ||
			 rl_config_active(&n->tx_rl)))
		return fc_fail(c, "engine \"vhost\" takes no rx_rate_limiter or tx_rate_limiter: the kernel moves the packets");
	if (!config_valid_tap_name(w->tap))
		return fc_fail(c, "host_dev_name \"%.64s\" must be an interface name: 1 to %u bytes, no '/', ':' or spaces",
			       w->tap, CONFIG_NET_MAX_TAP_NAME);
	return 0;
}

int fc_apply_net(struct vm_config *cfg, const char *path_id,
		 struct json_object *o, struct fc_ctx *c)
{
	struct net_views w;
	struct config_net n;
	const char *field;
	int idx, other, ret;

	ret = net_parse(&n, &w, cfg, path_id, o, c);
	if (ret)
		return ret;
	n.iface_id = (char *)w.iface_id; /* views, for the checks only */
	n.host_dev_name = (char *)w.tap;
	idx = config_net_index(cfg, w.iface_id);
	other = config_net_clash(cfg, &n, idx, &field);
	if (other >= 0 && !strcmp(field, "host_dev_name"))
		return fc_fail(c, "host_dev_name \"%s\" is network interface \"%s\"'s already",
			       w.tap, cfg->nets[other].iface_id);
	if (other >= 0)
		return fc_fail(c, "guest_mac: network interface \"%s\" has this MAC already",
			       cfg->nets[other].iface_id);
	if (idx < 0 && cfg->nr_nets >= CONFIG_MAX_NETS)
		return fc_fail(c, "at most %d network interfaces",
			       CONFIG_MAX_NETS);
	n.iface_id = strdup(w.iface_id);
	n.host_dev_name = strdup(w.tap);
	if (!n.iface_id || !n.host_dev_name) {
		config_net_free(&n);
		return fc_fail(c, "out of memory");
	}
	if (idx < 0)
		idx = (int)cfg->nr_nets++;
	else
		config_net_free(&cfg->nets[idx]);
	cfg->nets[idx] = n;
	return 0;
}

/* The context of a request on @iface_id, and the path id's check. */
static int net_ctx(struct fc_ctx *c, const char *iface_id, char *err,
		   size_t errlen)
{
	fc_ctx_init(c, err, errlen, "network interface \"%.64s\"",
		    iface_id ? iface_id : "");
	if (!iface_id || !fc_valid_id(iface_id))
		return fc_fail(c, "the path's iface_id must be 1-%d letters, digits or '_'",
			       FC_ID_MAX);
	return 0;
}

int fc_put_net(struct vm_config *cfg, const char *iface_id,
	       const char *json, size_t len, char *err, size_t errlen)
{
	struct json_object *o;
	struct fc_ctx c;
	int ret;

	if (net_ctx(&c, iface_id, err, errlen))
		return -EINVAL;
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	ret = fc_apply_net(cfg, iface_id, o, &c);
	json_object_put(o);
	return ret;
}

static int patch_fields(const struct config_net *n, const char *iface_id,
			struct json_object *o, struct fc_net_patch *out,
			struct fc_ctx *c)
{
	const char *id = NULL;
	int ret = 0;

	out->rx = n->rx_rl;
	out->tx = n->tx_rl;
	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "iface_id")) {
			ret = fc_get_str(c, key, v, &id);
		} else if (!strcmp(key, "rx_rate_limiter") && v) {
			ret = fc_apply_rate_limiter(&out->rx, key, v, c);
			out->has_rx = true;
		} else if (!strcmp(key, "tx_rate_limiter") && v) {
			ret = fc_apply_rate_limiter(&out->tx, key, v, c);
			out->has_tx = true;
		} else if (strcmp(key, "rx_rate_limiter") &&
			   strcmp(key, "tx_rate_limiter")) {
			ret = fc_unknown(c, key);
		}
		if (ret)
			return ret;
	}
	if (!id)
		return fc_fail(c, "iface_id is required");
	if (strcmp(id, iface_id))
		return fc_fail(c, "iface_id \"%.64s\" differs from the path's \"%.64s\"",
			       id, iface_id);
	return 0;
}

int fc_parse_net_patch(const struct vm_config *cfg, const char *iface_id,
		       const char *json, size_t len,
		       struct fc_net_patch *out, char *err, size_t errlen)
{
	struct json_object *o;
	struct fc_ctx c;
	char msg[160];
	int idx, ret;

	memset(out, 0, sizeof(*out));
	if (net_ctx(&c, iface_id, err, errlen))
		return -EINVAL;
	idx = config_net_index(cfg, iface_id);
	if (idx < 0)
		return fc_fail(&c, "no such network interface");
	o = fc_parse_object(&c, json, len);
	if (!o)
		return -EINVAL;
	ret = patch_fields(&cfg->nets[idx], iface_id, o, out, &c);
	json_object_put(o);
	if (!ret && ((out->has_rx && rl_config_check(&out->rx, msg,
						     sizeof(msg))) ||
		     (out->has_tx && rl_config_check(&out->tx, msg,
						     sizeof(msg)))))
		ret = fc_fail(&c, "%s", msg);
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}
