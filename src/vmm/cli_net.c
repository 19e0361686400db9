// SPDX-License-Identifier: Apache-2.0
/*
 * --net tap=NAME[,id=ID][,mac=MAC][,queues=N][,transport=pci|mmio]
 * [,engine=user|vhost]: one
 * network interface of the command line into cfg->nets, checked whole
 * (each key, then the interface against the others) before it is added.
 * Every refusal is one message naming the argument and the bad value.
 */
#include "vmm/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fc_config.h"

/* An unsigned decimal without sign or spaces; -EINVAL otherwise. */
static int net_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return *end || errno || *out > max ? -EINVAL : 0;
}

/* *@dst = a copy of @s, the old one freed. */
static int net_set_str(char **dst, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static int net_key(struct config_net *n, const char *arg, const char *key,
		   const char *val, char *err, size_t errlen)
{
	unsigned long q;
	int ret;

	if (!strcmp(key, "tap")) {
		if (config_valid_tap_name(val))
			return net_set_str(&n->host_dev_name, val);
		snprintf(err, errlen,
			 "--net %s: tap '%s' must be an interface name: 1 to %u bytes, no '/', ':' or spaces",
			 arg, val, CONFIG_NET_MAX_TAP_NAME);
	} else if (!strcmp(key, "id")) {
		if (fc_valid_id(val))
			return net_set_str(&n->iface_id, val);
		snprintf(err, errlen,
			 "--net %s: id '%s' must be 1 to %d letters, digits or '_'",
			 arg, val, FC_ID_MAX);
	} else if (!strcmp(key, "mac")) {
		ret = config_parse_mac(val, n->mac);
		n->mac_set = !ret;
		if (!ret)
			return 0;
		snprintf(err, errlen, ret == -EADDRNOTAVAIL ?
			 "--net %s: mac '%s' is a multicast or all-zero address (the guest needs a unicast one)" :
			 "--net %s: mac '%s' is not of the form AA:BB:CC:DD:EE:FF",
			 arg, val);
	} else if (!strcmp(key, "queues")) {
		if (!net_uint(val, CONFIG_MAX_NET_PAIRS, &q) && q) {
			n->queue_pairs = (unsigned int)q;
			return 0;
		}
		snprintf(err, errlen, "--net %s: queues '%s' must be 1 to %u",
			 arg, val, CONFIG_MAX_NET_PAIRS);
	} else if (!strcmp(key, "engine")) {
		if (!strcmp(val, "user") || !strcmp(val, "vhost")) {
			n->vhost = val[0] == 'v';
			return 0;
		}
		snprintf(err, errlen,
			 "--net %s: engine '%s' must be user (microvm's queue threads) or vhost (the kernel's vhost_net)",
			 arg, val);
	} else if (!strcmp(key, "transport")) {
		if (!strcmp(val, "pci") || !strcmp(val, "mmio")) {
			n->transport = val[0] == 'p' ? DISK_TRANSPORT_PCI :
						       DISK_TRANSPORT_MMIO;
			return 0;
		}
		snprintf(err, errlen,
			 "--net %s: transport '%s' must be pci or mmio", arg,
			 val);
	} else {
		snprintf(err, errlen, "--net %s: unknown key '%s'", arg, key);
	}
	return -EINVAL;
}

/* The first "netN" no interface has: the default id. */
static int net_default_id(const struct vm_config *cfg, struct config_net *n)
{
	char id[16];
	unsigned int k;

	for (k = 0;; k++) {
		snprintf(id, sizeof(id), "net%u", k);
		if (config_net_index(cfg, id) < 0)
			return net_set_str(&n->iface_id, id);
	}
}

/* The interface against the others: a tap, id or MAC of its own. */
static int net_check(const struct vm_config *cfg, struct config_net *n,
		     const char *arg, char *err, size_t errlen)
{
	const char *field;
	int other;

	if (!n->host_dev_name) {
		snprintf(err, errlen, "--net %s: needs tap=NAME", arg);
		return -EINVAL;
	}
	if (!n->iface_id && net_default_id(cfg, n))
		return -ENOMEM;
	if (config_net_index(cfg, n->iface_id) >= 0) {
		snprintf(err, errlen,
			 "--net %s: id '%s' is taken by another --net", arg,
			 n->iface_id);
		return -EINVAL;
	}
	other = config_net_clash(cfg, n, -1, &field);
	if (other >= 0 && !strcmp(field, "host_dev_name"))
		snprintf(err, errlen,
			 "--net %s: tap '%s' is --net id=%s's already (one interface per tap)",
			 arg, n->host_dev_name, cfg->nets[other].iface_id);
	else if (other >= 0)
		snprintf(err, errlen,
			 "--net %s: the guest's MAC is --net id=%s's already",
			 arg, cfg->nets[other].iface_id);
	if (other >= 0)
		return -EINVAL;
	return 0;
}

int cli_net_option(const char *arg, struct vm_config *cfg, char *err,
		   size_t errlen)
{
	struct config_net n = { .queue_pairs = 0 }; /* one per vCPU */
	char *copy, *tok, *eq, *save = NULL;
	int ret = 0;

	if (cfg->nr_nets >= CONFIG_MAX_NETS) {
		snprintf(err, errlen, "--net %s: at most %d network interfaces",
			 arg, CONFIG_MAX_NETS);
		return -EINVAL;
	}
	copy = strdup(arg);
	if (!copy)
		ret = -ENOMEM;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, errlen,
				 "--net %s: '%s' is not key=value", arg, tok);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = net_key(&n, arg, tok, eq + 1, err, errlen);
	}
	free(copy);
	if (!ret)
		ret = net_check(cfg, &n, arg, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret) {
		config_net_free(&n);
		return ret;
	}
	cfg->nets[cfg->nr_nets++] = n;
	return 0;
}
