/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Firecracker's API over the machine: one routing table of paths and
 * methods, each with the states it is allowed in. Runs on the main
 * thread (the machine's owner), never on the control thread that speaks
 * HTTP: src/vmm/control.c hands each request over.
 *
 * Answers follow Firecracker's: 204 with no body for a change made, 200
 * with a JSON body for a read, 400 with {"fault_message": "..."} for
 * anything refused, which then changes nothing.
 */
#ifndef MICROVM_API_HANDLERS_H
#define MICROVM_API_HANDLERS_H

#include <stddef.h>

#include "api/fc_config.h"
#include "api/fc_snapshot.h"
#include "api/server.h"

struct machine;
struct mmds;
struct vm_config;

/* What only main can do, behind the routes. Each: 0 or -errno with a
 * fault message in @err. */
struct api_actions {
	/* InstanceStart: finalize the configuration and boot. */
	int (*start)(void *opaque, char *err, size_t errlen);
	/* FlushMetrics. */
	int (*flush_metrics)(void *opaque, char *err, size_t errlen);
	/* SendCtrlAltDel. */
	int (*ctrl_alt_del)(void *opaque, char *err, size_t errlen);
	/* PATCH /drives/{id} of disk @index after boot. */
	int (*patch_drive)(void *opaque, unsigned int index,
			   const struct fc_drive_patch *p, char *err,
			   size_t errlen);
	/* PATCH /network-interfaces/{id} of interface @index after boot:
	 * its rate limiters. */
	int (*patch_net)(void *opaque, unsigned int index,
			 const struct fc_net_patch *p, char *err,
			 size_t errlen);
	/* PUT /metrics: open the path now (a FIFO must have a reader). */
	int (*open_metrics)(void *opaque, char *err, size_t errlen);
	/* PUT /logger: (re)open log_path and apply level and format. */
	int (*set_logger)(void *opaque, char *err, size_t errlen);
	/*
	 * PUT /snapshot/create on the paused machine: write @p's files. @err
	 * is the whole fault message, as Firecracker words its own ("Create
	 * snapshot error: ..."). NULL: a build without snapshots (400).
	 */
	int (*snapshot_create)(void *opaque,
			       const struct fc_snapshot_create *p, char *err,
			       size_t errlen);
	/*
	 * PUT /snapshot/load before boot, nothing boot-specific configured:
	 * restore the machine from @p (paused, or running with resume_vm).
	 * @err as above ("Load snapshot error: ..."). NULL: as above.
	 */
	int (*snapshot_load)(void *opaque, const struct fc_snapshot_load *p,
			     char *err, size_t errlen);
	void *opaque;
};

struct api_ctx {
	struct machine *m;      /* its state decides what is allowed */
	struct vm_config *cfg;  /* what pre-boot requests change */
	const struct api_actions *act;
	struct mmds *mmds;      /* the metadata store (PUT/PATCH/GET /mmds) */
};

/**
 * api_handle() - answer one request.  Context: main thread.
 */
void api_handle(struct api_ctx *ctx, const struct api_request *req,
		struct api_response *resp);

#endif
