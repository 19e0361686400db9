/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Firecracker's snapshot bodies (PUT /snapshot/create, PUT /snapshot/load)
 * parsed into typed requests for the machine. Parsing is strict as in
 * fc_config.h: an unknown field, a wrong type or a bad value is refused
 * with one message naming the field; nothing here opens a file.
 *
 *	struct fc_snapshot_load p;
 *
 *	if (!fc_parse_snapshot_load(body, len, &p, err, sizeof(err)))
 *		ret = act->snapshot_load(act->opaque, &p, err, sizeof(err));
 *	fc_snapshot_load_free(&p);   // after either outcome
 */
#ifndef MICROVM_API_FC_SNAPSHOT_H
#define MICROVM_API_FC_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/config.h"

/* snapshot_type: Firecracker's SnapshotType, Full by default. */
enum fc_snapshot_type {
	FC_SNAP_FULL,
	FC_SNAP_DIFF,
};

/* PUT /snapshot/create (Firecracker's SnapshotCreateParams). */
struct fc_snapshot_create {
	enum fc_snapshot_type type;
	char *snapshot_path; /* the microVM state file to write */
	char *mem_file_path; /* the guest memory file to write */
};

/* One of network_overrides: the tap interface @iface_id gets instead. */
struct fc_net_override {
	char *iface_id;      /* fc_valid_id() */
	char *host_dev_name; /* config_valid_tap_name() */
};

/*
 * Ours, one of drive_overrides (or --restore-drive): drive @drive_id gets
 * @path_on_host (NULL: keep the snapshot's) and, with @snapshot, a
 * throwaway overlay for its writes.
 */
struct fc_drive_override {
	char *drive_id;
	char *path_on_host;
	bool snapshot;
};

/* PUT /snapshot/load (Firecracker's SnapshotLoadParams). */
struct fc_snapshot_load {
	char *snapshot_path; /* the microVM state file to read */
	/* mem_backend.backend_path, or the deprecated mem_file_path */
	char *mem_path;
	bool mem_uffd;          /* backend_type Uffd (else File) */
	/* track_dirty_pages, or its deprecated alias enable_diff_snapshots */
	bool track_dirty_pages;
	bool resume_vm;         /* resume once loaded */
	bool clock_realtime;    /* KVM_CLOCK_REALTIME on restore (x86_64) */
	struct fc_net_override net_overrides[CONFIG_MAX_NETS];
	unsigned int nr_net_overrides;
	char *vsock_uds_path;   /* vsock_override.uds_path; NULL: none */
	struct fc_drive_override drive_overrides[CONFIG_MAX_DISKS]; /* ours */
	unsigned int nr_drive_overrides;
};

/**
 * fc_parse_snapshot_create() - parse PUT /snapshot/create: snapshot_path
 * and mem_file_path (required), snapshot_type "Full" (default) | "Diff".
 * Firecracker's removed "version" is an unknown field, as there.
 * @json/@len: the body
 * @out: filled on success
 * @err/@errlen: the fault message on failure
 * Return: 0 with @out filled (fc_snapshot_create_free() it), or
 * -EINVAL/-ENOMEM with @err set and @out empty. Context: any thread.
 */
int fc_parse_snapshot_create(const char *json, size_t len,
			     struct fc_snapshot_create *out, char *err,
			     size_t errlen);

/** fc_snapshot_create_free() - release @p's strings and empty it. */
void fc_snapshot_create_free(struct fc_snapshot_create *p);

/**
 * fc_parse_snapshot_load() - parse PUT /snapshot/load: snapshot_path
 * (required); exactly one of mem_backend {backend_type "File" | "Uffd",
 * backend_path} and the deprecated mem_file_path (a File backend);
 * track_dirty_pages, OR'd with its deprecated alias
 * enable_diff_snapshots; resume_vm; network_overrides (at most
 * CONFIG_MAX_NETS of {iface_id, host_dev_name}, no iface_id or tap
 * twice); vsock_override {uds_path}; clock_realtime; huge_pages
 * "Snapshot" (default) or "None" (microvm has no huge pages:
 * "Transparent" and "2M" are refused).
 * Return/Context: as fc_parse_snapshot_create(); free with
 * fc_snapshot_load_free().
 */
int fc_parse_snapshot_load(const char *json, size_t len,
			   struct fc_snapshot_load *out, char *err,
			   size_t errlen);

/** fc_snapshot_load_free() - release @p's strings and empty it. */
void fc_snapshot_load_free(struct fc_snapshot_load *p);

/**
 * fc_parse_drive_override_arg() - --restore-drive ID=PATH,
 * ID=PATH,snapshot=on or ID,snapshot=on into @out.
 * Return: 0 (fc_drive_override_free() it), or -EINVAL/-ENOMEM with one
 * line naming @arg. Context: any thread.
 */
int fc_parse_drive_override_arg(const char *arg,
				struct fc_drive_override *out, char *err,
				size_t errlen);

/**
 * fc_snapshot_config_override() - a snapshot's configuration (@json, as
 * fc_snapshot_config_json() wrote it) with @p's overrides put in: each
 * drive's path_on_host and snapshot, each interface's host_dev_name, the
 * vsock's uds_path. An override naming what the snapshot lacks is an
 * error.
 * Return: malloc'd JSON, or NULL with @err set. Context: any thread.
 */
char *fc_snapshot_config_override(const char *json, size_t len,
				  const struct fc_snapshot_load *p, char *err,
				  size_t errlen);

/** fc_drive_override_free() - release @o's strings and zero it. */
void fc_drive_override_free(struct fc_drive_override *o);

#endif
