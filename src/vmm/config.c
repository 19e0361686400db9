// SPDX-License-Identifier: Apache-2.0
/*
 * Ownership of struct vm_config: every string in it is a heap copy, so a
 * config can be freed or copied whole. The API stages a change on a copy
 * and swaps it in only when the whole change is valid.
 */
#include "vmm/config.h"

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

void config_free(struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_disks && i < CONFIG_MAX_DISKS; i++)
		config_disk_free(&cfg->disks[i]);
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

int config_copy(struct vm_config *dst, const struct vm_config *src)
{
	unsigned int i;

	*dst = *src;
	dst->nr_disks = 0;
	dst->kernel = dst->initrd = dst->cmdline = dst->console = NULL;
	dst->memory_arg = dst->api_sock = dst->config_file = dst->id = NULL;
	dst->log_path = dst->log_module = dst->metrics_path = NULL;
	dst->metadata = NULL;
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
	    !dup_str(&dst->vsock.uds_path, src->vsock.uds_path) ||
	    !dup_str(&dst->vsock.vsock_id, src->vsock.vsock_id))
		goto err_free;
	for (i = 0; i < src->nr_disks && i < CONFIG_MAX_DISKS; i++) {
		if (config_disk_copy(&dst->disks[i], &src->disks[i]))
			goto err_free;
		dst->nr_disks = i + 1;
	}
	return 0;
err_free:
	config_free(dst);
	return -ENOMEM;
}
