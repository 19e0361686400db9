// SPDX-License-Identifier: Apache-2.0
/*
 * Ownership of struct vm_config: every string in it is a heap copy, so a
 * config can be freed or copied whole. The API stages a change on a copy
 * and swaps it in only when the whole change is valid.
 */
#include "vmm/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int config_check_smt(unsigned int cpus, bool smt)
{
	if (!smt)
		return 0;
#if defined(__aarch64__)
	(void)cpus;
	return -EOPNOTSUPP;
#else
	return cpus > 1 && cpus % 2 ? -EINVAL : 0;
#endif
}

void config_disk_free(struct disk_config *d)
{
	free(d->spec);
	free(d->drive_id);
	free(d->partuuid);
	free(d->path);
	free(d->serial);
	memset(d, 0, sizeof(*d));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int config_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];
	unsigned int i;
	int hi, lo;

	for (i = 0; i < 6; i++, s += 3) {
		hi = hex_digit(s[0]);
		lo = hi < 0 ? -1 : hex_digit(s[1]);
		if (lo < 0 || s[2] != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	/* The I/G bit (802-2014 §8.2): a group address is no station's. */
	if ((m[0] & 1) || !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
		return -EADDRNOTAVAIL;
	memcpy(mac, m, 6);
	return 0;
}

bool config_valid_tap_name(const char *s)
{
	size_t i;

	if (!s || !*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (i = 0; s[i]; i++)
		if (i >= CONFIG_NET_MAX_TAP_NAME || s[i] == '/' ||
		    s[i] == ':' || isspace((unsigned char)s[i]))
			return false;
	return true;
}

void config_net_mac(const struct config_net *n, uint8_t mac[6])
{
	const char *p = n->iface_id ? n->iface_id : "";
	uint32_t h = 2166136261u; /* FNV-1a */

	if (n->mac_set) {
		memcpy(mac, n->mac, 6);
		return;
	}
	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	/* 0x06: locally administered, unicast. */
	mac[0] = 0x06;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(h >> 24);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

bool config_mmds_on_net(const struct vm_config *cfg, const char *iface_id)
{
	unsigned int i;

	if (!cfg->mmds.set || !iface_id)
		return false;
	for (i = 0; i < cfg->mmds.nr_ifaces && i < CONFIG_MAX_NETS; i++)
		if (!strcmp(cfg->mmds.ifaces[i], iface_id))
			return true;
	return false;
}

int config_net_index(const struct vm_config *cfg, const char *iface_id)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_nets; i++)
		if (cfg->nets[i].iface_id &&
		    !strcmp(cfg->nets[i].iface_id, iface_id))
			return (int)i;
	return -1;
}

int config_net_clash(const struct vm_config *cfg, const struct config_net *n,
		     int self, const char **field)
{
	uint8_t mine[6], other[6];
	unsigned int i;

	config_net_mac(n, mine);
	for (i = 0; i < cfg->nr_nets; i++) {
		if ((int)i == self)
			continue;
		*field = "host_dev_name";
		if (!strcmp(cfg->nets[i].host_dev_name, n->host_dev_name))
			return (int)i;
		*field = "guest_mac";
		config_net_mac(&cfg->nets[i], other);
		if (!memcmp(mine, other, 6))
			return (int)i;
	}
	*field = NULL;
	return -1;
}

void config_net_free(struct config_net *n)
{
	free(n->iface_id);
	free(n->host_dev_name);
	memset(n, 0, sizeof(*n));
}

void config_free(struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_disks && i < CONFIG_MAX_DISKS; i++)
		config_disk_free(&cfg->disks[i]);
	for (i = 0; i < cfg->nr_nets && i < CONFIG_MAX_NETS; i++)
		config_net_free(&cfg->nets[i]);
	free(cfg->kernel);
	free(cfg->initrd);
	free(cfg->cmdline);
	free(cfg->console);
	free(cfg->memory_arg);
	free(cfg->api_sock);
	free(cfg->config_file);
	free(cfg->id);
	free(cfg->log_path);
	free(cfg->log_module);
	free(cfg->metrics_path);
	free(cfg->metadata);
	free(cfg->restore);
	free(cfg->rebase_base);
	free(cfg->rebase_diff);
	for (i = 0; i < cfg->nr_restore_drives && i < CONFIG_MAX_DISKS; i++)
		free(cfg->restore_drives[i]);
	for (i = 0; i < cfg->mmds.nr_ifaces && i < CONFIG_MAX_NETS; i++)
		free(cfg->mmds.ifaces[i]);
	free(cfg->vsock.uds_path);
	free(cfg->vsock.vsock_id);
	memset(cfg, 0, sizeof(*cfg));
}

/* *@dst = a copy of @s (NULL stays NULL); false when out of memory. */
static bool dup_str(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return !s || *dst;
}

int config_disk_copy(struct disk_config *dst, const struct disk_config *src)
{
	*dst = *src;
	dst->spec = dst->drive_id = dst->partuuid = NULL;
	dst->path = dst->serial = NULL;
	if (!dup_str(&dst->spec, src->spec) ||
	    !dup_str(&dst->drive_id, src->drive_id) ||
	    !dup_str(&dst->partuuid, src->partuuid) ||
	    !dup_str(&dst->path, src->path) ||
	    !dup_str(&dst->serial, src->serial)) {
		config_disk_free(dst);
		return -ENOMEM;
	}
	return 0;
}

int config_net_copy(struct config_net *dst, const struct config_net *src)
{
	*dst = *src;
	dst->iface_id = dst->host_dev_name = NULL;
	if (!dup_str(&dst->iface_id, src->iface_id) ||
	    !dup_str(&dst->host_dev_name, src->host_dev_name)) {
		config_net_free(dst);
		return -ENOMEM;
	}
	return 0;
}

int config_copy(struct vm_config *dst, const struct vm_config *src)
{
	unsigned int i;

	*dst = *src;
	dst->nr_disks = dst->nr_nets = dst->mmds.nr_ifaces = 0;
	dst->kernel = dst->initrd = dst->cmdline = dst->console = NULL;
	dst->memory_arg = dst->api_sock = dst->config_file = dst->id = NULL;
	dst->log_path = dst->log_module = dst->metrics_path = NULL;
	dst->metadata = dst->restore = NULL;
	dst->rebase_base = dst->rebase_diff = NULL;
	dst->nr_restore_drives = 0;
	dst->vsock.uds_path = dst->vsock.vsock_id = NULL;
	if (!dup_str(&dst->kernel, src->kernel) ||
	    !dup_str(&dst->initrd, src->initrd) ||
	    !dup_str(&dst->cmdline, src->cmdline) ||
	    !dup_str(&dst->console, src->console) ||
	    !dup_str(&dst->memory_arg, src->memory_arg) ||
	    !dup_str(&dst->api_sock, src->api_sock) ||
	    !dup_str(&dst->config_file, src->config_file) ||
	    !dup_str(&dst->id, src->id) ||
	    !dup_str(&dst->log_path, src->log_path) ||
	    !dup_str(&dst->log_module, src->log_module) ||
	    !dup_str(&dst->metrics_path, src->metrics_path) ||
	    !dup_str(&dst->metadata, src->metadata) ||
	    !dup_str(&dst->restore, src->restore) ||
	    !dup_str(&dst->rebase_base, src->rebase_base) ||
	    !dup_str(&dst->rebase_diff, src->rebase_diff) ||
	    !dup_str(&dst->vsock.uds_path, src->vsock.uds_path) ||
	    !dup_str(&dst->vsock.vsock_id, src->vsock.vsock_id))
		goto err_free;
	for (i = 0; i < src->nr_disks && i < CONFIG_MAX_DISKS; i++) {
		if (config_disk_copy(&dst->disks[i], &src->disks[i]))
			goto err_free;
		dst->nr_disks = i + 1;
	}
	for (i = 0; i < src->nr_nets && i < CONFIG_MAX_NETS; i++) {
		if (config_net_copy(&dst->nets[i], &src->nets[i]))
			goto err_free;
		dst->nr_nets = i + 1;
	}
	for (i = 0; i < src->nr_restore_drives && i < CONFIG_MAX_DISKS; i++) {
		if (!dup_str(&dst->restore_drives[i], src->restore_drives[i]))
			goto err_free;
		dst->nr_restore_drives = i + 1;
	}
	for (i = 0; i < src->mmds.nr_ifaces && i < CONFIG_MAX_NETS; i++) {
		if (!dup_str(&dst->mmds.ifaces[i], src->mmds.ifaces[i]))
			goto err_free;
		dst->mmds.nr_ifaces = i + 1;
	}
	return 0;
err_free:
	config_free(dst);
	return -ENOMEM;
}
