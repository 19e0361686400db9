/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Firecracker objects applied from parsed JSON: shared by the API's
 * bodies (fc_config.c) and the config file (fc_config_file.c). Each
 * leaves @cfg unchanged on error. Private to src/api.
 */
#ifndef MICROVM_API_FC_CONFIG_PRIV_H
#define MICROVM_API_FC_CONFIG_PRIV_H

#include <stdbool.h>

#include "api/fc_json.h"
#include "vmm/config.h"

int fc_apply_boot_source(struct vm_config *cfg, struct json_object *o,
			 struct fc_ctx *c);
int fc_apply_machine_config(struct vm_config *cfg, struct json_object *o,
			    bool put, struct fc_ctx *c);
/* @path_id: the id in the request's path, or NULL (config file). */
int fc_apply_drive(struct vm_config *cfg, const char *path_id,
		   struct json_object *o, struct fc_ctx *c);
int fc_apply_logger(struct vm_config *cfg, struct json_object *o,
		    struct fc_ctx *c);
int fc_apply_metrics(struct vm_config *cfg, struct json_object *o,
		     struct fc_ctx *c);
int fc_apply_vsock(struct vm_config *cfg, struct json_object *o,
		   struct fc_ctx *c);
/* A rate limiter object onto @rl (buckets absent from it unchanged);
 * @name ("rate_limiter", "rx_rate_limiter", ...) for messages. */
int fc_apply_rate_limiter(struct rl_config *rl, const char *name,
			  struct json_object *o, struct fc_ctx *c);
/* A network interface (PUT /network-interfaces, the config file's
 * "network-interfaces"); @path_id: the id in the request's path, or NULL
 * (config file). */
int fc_apply_net(struct vm_config *cfg, const char *path_id,
		 struct json_object *o, struct fc_ctx *c);

/* mmds-config (fc_mmds.c): network_interfaces must name interfaces
 * already in @cfg. */
int fc_apply_mmds_config(struct vm_config *cfg, struct json_object *o,
			 struct fc_ctx *c);
/* mmds-config as GET /vm/config shows it; NULL when not set. */
struct json_object *fc_mmds_config_object(const struct vm_config *cfg);

/* Names shared by parsing and output. */
extern const char *const fc_log_level_names[]; /* by enum config_log_level - 1 */
/* Our transport key of drives, vsock and network interfaces: index 0
 * mmio, 1 pci. */
extern const char *const fc_transport_names[];

#endif
