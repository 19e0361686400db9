/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Firecracker's configuration objects (its API's PUT/PATCH bodies and its
 * --config-file) <-> struct vm_config. Parsing is strict, as Firecracker's
 * (serde deny_unknown_fields): an unknown field, a wrong type or a value
 * out of range is an error naming the object and the field.
 *
 * Every fc_put_*()/fc_patch_*()/fc_load_*() returns 0, or -EINVAL (-ENOMEM)
 * with a one-line fault message in @err and @cfg unchanged. They run on the
 * main (machine) thread: the API's handlers post them there. Sketch:
 *
 *	fc_put_boot_source(cfg, body, len, err, sizeof(err));  // per request
 *	...
 *	fc_finalize_config(cfg, err, sizeof(err));   // once, before booting
 */
#ifndef MICROVM_API_FC_CONFIG_H
#define MICROVM_API_FC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/ratelimit.h"
#include "vmm/config.h"

/* Firecracker's DEFAULT_KERNEL_CMDLINE (vmm_config/boot_source.rs): the
 * boot_args when PUT /boot-source gives none. No serial console (the
 * 8250 driver gets no ports), as with Firecracker. */
#define FC_DEFAULT_BOOT_ARGS "reboot=k panic=1 nomodule 8250.nr_uarts=0 " \
	"i8042.noaux i8042.nomux i8042.dumbkbd swiotlb=noforce"
/* Firecracker's default socket, used with --config-file or --id unless
 * --api-sock or --no-api says otherwise (the jailer's callers expect it
 * inside the chroot). */
#define FC_DEFAULT_API_SOCK "/run/firecracker.socket"
#define FC_CONFIG_FILE_MAX (1u << 20) /* bytes of a --config-file */
#define FC_ID_MAX 64                  /* drive_id and --id length */
#define FC_STRING_MAX 4096            /* any path or boot_args */
#define FC_MAX_MEM_MIB (1ULL << 24)   /* 16 TiB */

/**
 * fc_put_boot_source() - PUT /boot-source: kernel_image_path (required),
 * initrd_path, boot_args. Replaces the whole boot source; without
 * boot_args the kernel gets FC_DEFAULT_BOOT_ARGS (at fc_finalize_config()).
 * Return: 0 or -EINVAL/-ENOMEM with @err set; @cfg unchanged on error.
 * Context: main thread, before boot.
 */
int fc_put_boot_source(struct vm_config *cfg, const char *json, size_t len,
		       char *err, size_t errlen);

/**
 * fc_put_machine_config() - PUT /machine-config: vcpu_count and
 * mem_size_mib (required), smt (two threads per core: vcpu_count 1 or
 * even, and not on aarch64, as Firecracker), track_dirty_pages,
 * cpu_template ("None" only), huge_pages ("None" only). Fields not given
 * return to their defaults.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_machine_config(struct vm_config *cfg, const char *json,
			  size_t len, char *err, size_t errlen);

/**
 * fc_patch_machine_config() - PATCH /machine-config: the same fields, all
 * optional; only those given change.
 * Return/Context: as fc_put_boot_source().
 */
int fc_patch_machine_config(struct vm_config *cfg, const char *json,
			    size_t len, char *err, size_t errlen);

/**
 * fc_put_drive() - PUT /drives/@drive_id. Firecracker's fields (drive_id,
 * which must equal @drive_id; path_on_host; is_root_device; is_read_only;
 * partuuid; cache_type "Unsafe" (default) | "Writeback"; io_engine "Sync"
 * | "Async"; rate_limiter) and ours (transport "mmio" (default; "pci" with
 * --enable-pci) | "pci"; queues; queue_size; engine "io_uring" | "vhost";
 * poll_us; snapshot; serial; cache_type "None" = O_DIRECT). An existing
 * drive_id is replaced; at most CONFIG_MAX_DISKS; one root device.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_drive(struct vm_config *cfg, const char *drive_id,
		 const char *json, size_t len, char *err, size_t errlen);

/* A PATCH /drives/{id} after boot: what to change (NULL/false: nothing). */
struct fc_drive_patch {
	char *path_on_host;
	bool has_rl;
	struct rl_config rl; /* the drive's limits with the patch applied */
};

/**
 * fc_parse_drive_patch() - parse PATCH /drives/@drive_id (drive_id,
 * path_on_host, rate_limiter) against the drive in @cfg. A bucket absent
 * from rate_limiter keeps its current setting, as in Firecracker; one
 * given replaces it (size 0 or refill_time 0 turns it off). Refused on an
 * engine=vhost drive.
 * Return: 0 with @out filled (fc_drive_patch_free() it), or -EINVAL/
 * -ENOMEM with @err set and @out empty. Context: any thread; reads @cfg.
 */
int fc_parse_drive_patch(const struct vm_config *cfg, const char *drive_id,
			 const char *json, size_t len,
			 struct fc_drive_patch *out, char *err, size_t errlen);

/** fc_drive_patch_free() - release what fc_parse_drive_patch() filled. */
void fc_drive_patch_free(struct fc_drive_patch *p);

/**
 * fc_put_logger() - PUT /logger: log_path, level (Error, Warning, Info,
 * Debug, Trace, Off; any case), show_level, show_log_origin, module. The
 * fields given change, the others stay.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_logger(struct vm_config *cfg, const char *json, size_t len,
		  char *err, size_t errlen);

/**
 * fc_put_metrics() - PUT /metrics: metrics_path (required), emit_id.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_metrics(struct vm_config *cfg, const char *json, size_t len,
		   char *err, size_t errlen);

/**
 * fc_put_vsock() - PUT /vsock: guest_cid (3 .. 2^32-2) and uds_path
 * (required), vsock_id (accepted, unused), our optional transport
 * ("mmio", "pci"; default mmio, pci with --enable-pci). Replaces an
 * earlier one.
 * Return: 0, or -EINVAL with @err naming the field; @cfg unchanged on
 * error. Context: main thread, before boot.
 */
int fc_put_vsock(struct vm_config *cfg, const char *json, size_t len,
		 char *err, size_t errlen);

/**
 * fc_put_net() - PUT /network-interfaces/@iface_id: Firecracker's fields
 * (iface_id, which must equal @iface_id; host_dev_name, the tap, opened at
 * InstanceStart; guest_mac "AA:BB:CC:DD:EE:FF", unicast, default
 * config_net_mac()'s; rx_rate_limiter; tx_rate_limiter) and ours (queues:
 * queue pairs, 1 .. CONFIG_MAX_NET_PAIRS, default 1; transport "mmio"
 * (default; "pci" with --enable-pci) | "pci"). An existing iface_id is
 * replaced; no two interfaces share a tap or a MAC; at most
 * CONFIG_MAX_NETS.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_net(struct vm_config *cfg, const char *iface_id,
	       const char *json, size_t len, char *err, size_t errlen);

/* A PATCH /network-interfaces/{id} after boot: the limits to set. */
struct fc_net_patch {
	bool has_rx, has_tx;   /* false: that direction unchanged */
	struct rl_config rx, tx; /* the interface's limits, patch applied */
};

/**
 * fc_parse_net_patch() - parse PATCH /network-interfaces/@iface_id
 * (iface_id, rx_rate_limiter, tx_rate_limiter) against the interface in
 * @cfg. A bucket absent from a limiter keeps its setting, as in
 * Firecracker; one given replaces it (size 0 or refill_time 0 turns it
 * off).
 * Return: 0 with @out filled, or -EINVAL with @err set and @out empty.
 * Context: any thread; reads @cfg.
 */
int fc_parse_net_patch(const struct vm_config *cfg, const char *iface_id,
		       const char *json, size_t len,
		       struct fc_net_patch *out, char *err, size_t errlen);

/**
 * fc_put_mmds_config() - PUT /mmds/config: network_interfaces (required:
 * iface_ids already configured, none with engine=vhost), version "V1"
 * (default) | "V2", ipv4_address (link-local; default 169.254.169.254),
 * imds_compat. Replaces an earlier one.
 * Return/Context: as fc_put_boot_source().
 */
int fc_put_mmds_config(struct vm_config *cfg, const char *json, size_t len,
		       char *err, size_t errlen);

/**
 * fc_load_config_file() - apply Firecracker's --config-file @path: the
 * objects "boot-source", "machine-config", "drives" (an array of PUT
 * /drives bodies), "network-interfaces" (an array of PUT
 * /network-interfaces bodies), "vsock", "logger", "metrics",
 * "mmds-config" (after the interfaces); "balloon", "cpu-config",
 * "entropy", "pmem" and "memory-hotplug" only absent, null or empty
 * (microvm has none of these devices). At most FC_CONFIG_FILE_MAX
 * bytes. Errors name @path and the field.
 * Return/Context: as fc_put_boot_source() (startup).
 */
int fc_load_config_file(struct vm_config *cfg, const char *path, char *err,
			size_t errlen);

/**
 * fc_load_config_json() - as fc_load_config_file(), from the document
 * @json (@len bytes) that messages call @origin.
 * Return/Context: as fc_load_config_file().
 */
int fc_load_config_json(struct vm_config *cfg, const char *json, size_t len,
			const char *origin, char *err, size_t errlen);

/**
 * fc_snapshot_config_json() - the machine's part of @cfg for a snapshot:
 * "machine-config", "drives", "network-interfaces", "vsock" and
 * "mmds-config", which fc_load_config_json() takes back; no boot source,
 * logger or metrics (a restored process has its own).
 * Return: malloc'd JSON, or NULL when out of memory. Context: any thread.
 */
char *fc_snapshot_config_json(const struct vm_config *cfg);

/**
 * fc_vm_config_json() - GET /vm/config: @cfg in the config file's shape
 * (fc_load_config_file() of it gives back the same configuration).
 * Return: malloc'd JSON, or NULL when out of memory. Context: any thread.
 */
char *fc_vm_config_json(const struct vm_config *cfg);

/**
 * fc_machine_config_json() - GET /machine-config: the effective vcpu_count,
 * mem_size_mib, smt, track_dirty_pages, huge_pages.
 * Return: malloc'd JSON, or NULL when out of memory. Context: any thread.
 */
char *fc_machine_config_json(const struct vm_config *cfg);

/** fc_disk_index() - the index of drive @drive_id in @cfg, or -1. */
int fc_disk_index(const struct vm_config *cfg, const char *drive_id);

/**
 * fc_finalize_config() - the last step before booting, as Firecracker's
 * builder: a kernel must be set; the root device (if any) moves to the
 * first slot, so it is /dev/vda; the command line (FC_DEFAULT_BOOT_ARGS
 * when none was given) gets " root=/dev/vda" or " root=PARTUUID=<uuid>",
 * then " ro" or " rw". A config with no root device and a command line
 * (the plain command line's) is left as it is. Call it once.
 * Return: 0 or -EINVAL/-ENOMEM with @err set. Context: main thread.
 */
int fc_finalize_config(struct vm_config *cfg, char *err, size_t errlen);

/**
 * fc_valid_id() - is @s a drive_id Firecracker takes: 1-FC_ID_MAX of
 * [A-Za-z0-9_]?
 */
bool fc_valid_id(const char *s);

#endif
