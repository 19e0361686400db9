// SPDX-License-Identifier: Apache-2.0
/*
 * Firecracker's mmds-config (PUT /mmds/config and the config file's
 * "mmds-config"): network_interfaces (required, each an interface
 * already configured, none on engine=vhost: the kernel would carry its
 * frames past the metadata service), version "V1" (default) or "V2",
 * ipv4_address (link-local, default 169.254.169.254) and imds_compat.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config.h"
#include "api/fc_config_priv.h"
#include "mmds/mmds.h"

static int mmds_ifaces(const struct vm_config *cfg, struct json_object *v,
		       struct config_mmds *out, struct fc_ctx *c)
{
	size_t i, n, k;
	const char *id;
	int idx;

	if (!v || !json_object_is_type(v, json_type_array))
		return fc_fail(c, "network_interfaces must be an array of "
			       "iface_ids");
	n = json_object_array_length(v);
	if (!n)
		return fc_fail(c, "The list of network interface IDs that "
			       "allow forwarding MMDS requests is empty.");
	if (n > CONFIG_MAX_NETS)
		return fc_fail(c, "network_interfaces names %zu interfaces; "
			       "there are at most %d", n, CONFIG_MAX_NETS);
	for (i = 0; i < n; i++) {
		if (fc_get_str(c, "network_interfaces",
			       json_object_array_get_idx(v, i), &id))
			return -EINVAL;
		idx = config_net_index(cfg, id);
		if (idx < 0)
			return fc_fail(c, "network interface %s: no such "
				       "iface_id (PUT /network-interfaces "
				       "first)", id);
		if (cfg->nets[idx].vhost)
			return fc_fail(c, "network interface %s: engine vhost "
				       "cannot serve MMDS (the kernel moves its "
				       "packets); use engine user", id);
		for (k = 0; k < out->nr_ifaces; k++)
			if (!strcmp(out->ifaces[k], id))
				return fc_fail(c, "network_interfaces names %s "
					       "twice", id);
		out->ifaces[out->nr_ifaces] = strdup(id);
		if (!out->ifaces[out->nr_ifaces])
			return fc_fail(c, "out of memory");
		out->nr_ifaces++;
	}
	return 0;
}

static int parse_ipv4(struct fc_ctx *c, struct json_object *v, uint32_t *out)
{
	struct in_addr a;
	const char *s;

	if (fc_get_str(c, "ipv4_address", v, &s))
		return -EINVAL;
	if (inet_pton(AF_INET, s, &a) != 1)
		return fc_fail(c, "ipv4_address %.64s is not an IPv4 address",
			       s);
	*out = ntohl(a.s_addr);
	if ((*out >> 16) != 0xa9fe || (*out & 0xffff) == 0 ||
	    (*out & 0xffff) == 0xffff)
		return fc_fail(c, "ipv4_address %.64s is not a link-local "
			       "unicast address (169.254.0.1 to "
			       "169.254.255.254)", s);
	return 0;
}

static void mmds_free(struct config_mmds *m)
{
	unsigned int i;

	for (i = 0; i < m->nr_ifaces; i++)
		free(m->ifaces[i]);
	memset(m, 0, sizeof(*m));
}

int fc_apply_mmds_config(struct vm_config *cfg, struct json_object *o,
			 struct fc_ctx *c)
{
	static const char *const versions[] = { "V1", "V2", NULL };
	struct config_mmds next = { .set = true, .version = 1,
				    .ipv4 = MMDS_DEFAULT_IPV4 };
	struct json_object *ifaces = NULL;
	unsigned int ver = 0;
	bool has_ifaces = false;
	int ret = 0;

	json_object_object_foreach(o, key, v) {
		if (ret)
			break;
		if (!strcmp(key, "network_interfaces")) {
			ifaces = v;
			has_ifaces = true;
		} else if (!strcmp(key, "version")) {
			ret = fc_get_enum(c, key, v, versions, false, &ver);
			next.version = ver + 1;
		} else if (!strcmp(key, "ipv4_address")) {
			ret = v ? parse_ipv4(c, v, &next.ipv4) : 0;
		} else if (!strcmp(key, "imds_compat")) {
			ret = fc_get_bool(c, key, v, &next.imds_compat);
		} else {
			ret = fc_unknown(c, key);
		}
	}
	if (!ret && !has_ifaces)
		ret = fc_fail(c, "missing field: network_interfaces");
	if (!ret)
		ret = mmds_ifaces(cfg, ifaces, &next, c);
	if (ret) {
		mmds_free(&next);
		return ret;
	}
	mmds_free(&cfg->mmds);
	cfg->mmds = next;
	return 0;
}

struct json_object *fc_mmds_config_object(const struct vm_config *cfg)
{
	struct json_object *o, *a;
	struct in_addr ip = { .s_addr = htonl(cfg->mmds.ipv4) };
	char buf[INET_ADDRSTRLEN] = "";
	unsigned int i;

	if (!cfg->mmds.set)
		return NULL;
	o = json_object_new_object();
	a = json_object_new_array();
	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	for (i = 0; i < cfg->mmds.nr_ifaces; i++)
		json_object_array_add(a, json_object_new_string(
						 cfg->mmds.ifaces[i]));
	json_object_object_add(o, "network_interfaces", a);
	fc_add_str(o, "version", cfg->mmds.version == 2 ? "V2" : "V1");
	inet_ntop(AF_INET, &ip, buf, sizeof(buf));
	fc_add_str(o, "ipv4_address", buf);
	fc_add_bool(o, "imds_compat", cfg->mmds.imds_compat);
	return o;
}
