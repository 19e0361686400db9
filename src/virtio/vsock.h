/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-vsock (virtio 1.2 §5.10, device id 19) with the "hybrid vsock"
 * host side of Firecracker, Cloud Hypervisor and Kata: the device listens
 * on a Unix socket at uds_path; a host program connects there and writes
 * `CONNECT <port>\n` to reach guest port <port> (answered `OK <hostport>\n`
 * once the guest accepts), and a guest connecting to host port P reaches
 * the Unix socket `<uds_path>_<P>`. One worker thread (worker.h, seccomp
 * class CONFINE_VSOCK) serves the rx, tx and event queues and every host
 * socket; the packet and connection logic is vsock_conn.c.
 *
 *	confine_policy_vsock(true);                  // before confine_prepare
 *	vsock_dev_create(&v, &vdev, &cfg, &gm, "vsock"); // binds uds_path
 *	virtio_mmio_init(&t, &vdev, ...);            // the transport
 *	... DRIVER_OK starts the worker, reset stops it and closes every
 *	    connection; pause/resume keep them ...
 *	vsock_dev_send_reset(v);                     // after a restore
 *	virtio_mmio_destroy(&t);
 *	vsock_dev_destroy(v);                        // unlinks uds_path
 */
#ifndef MICROVM_VIRTIO_VSOCK_H
#define MICROVM_VIRTIO_VSOCK_H

#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/virtio.h"
#include "virtio/vsock_conn.h"

#define VIRTIO_ID_VSOCK 19

/* The queues (§5.10.2). */
#define VSOCK_RXQ 0
#define VSOCK_TXQ 1
#define VSOCK_EVQ 2
#define VSOCK_NUM_QUEUES 3
#define VSOCK_QUEUE_SIZE 256
/* Segments of one chain; more fail the chain. */
#define VSOCK_MAX_SEGS VSOCK_MAX_IOV
/* Host programs accepted per round (the rest wait in the backlog). */
#define VSOCK_ACCEPT_BURST 16
#define VSOCK_LISTEN_BACKLOG 128

/* Configuration space: le64 guest_cid (§5.10.4). */
#define VSOCK_CONFIG_BYTES 8

/* struct virtio_vsock_event (§5.10.6.7). */
#define VSOCK_EVENT_TRANSPORT_RESET 0
#define VSOCK_EVENT_BYTES 4

struct vsock_config {
	uint64_t guest_cid;   /* 3 .. 0xfffffffe */
	const char *uds_path; /* not yet existing; room for "_4294967295" */
};

/* A consistent-enough copy of the counters (each read atomically). */
struct vsock_dev_stats {
	uint64_t tx_packets, tx_bytes; /* guest -> host */
	uint64_t rx_packets, rx_bytes; /* host -> guest */
	uint64_t conns_host, conns_guest, conns_closed, conns_refused;
	uint64_t rst_sent, rst_received;
	uint64_t invalid, credit_violations, stray_dropped, bad_lines;
	uint64_t timeouts, bad_bufs, events_sent;
};

struct vsock_dev;

/**
 * vsock_dev_create() - a vsock device for the guest @cfg->guest_cid:
 * checks the configuration, binds and listens on @cfg->uds_path (so that
 * it happens before the process confines itself), and initialises @vdev
 * (virtio_dev_init(), 3 queues); attach a transport next.
 * @out: the device
 * @vdev: core state, owned by the caller, filled here
 * @gm: guest memory
 * @name: for messages and the worker thread's name
 * Return: 0 or -errno, with one message naming the bad value (a CID out
 * of range, a path too long or already there). Context: startup.
 */
int vsock_dev_create(struct vsock_dev **out, struct virtio_dev *vdev,
		     const struct vsock_config *cfg,
		     const struct guest_mem *gm, const char *name);

/**
 * vsock_dev_destroy() - stop the device, close every connection and the
 * listener, and unlink uds_path (unless vsock_dev_keep_path() was
 * called); after the transport's destroy. NULL is ignored.
 * Context: teardown.
 */
void vsock_dev_destroy(struct vsock_dev *v);

/**
 * vsock_dev_keep_path() - leave uds_path in place at destroy: for a
 * caller whose thread may no longer unlink (confined: the seccomp policy
 * allows no unlink), as Firecracker leaves its socket for whoever
 * started it to remove.
 * Context: main thread, before vsock_dev_destroy().
 */
void vsock_dev_keep_path(struct vsock_dev *v);

/**
 * vsock_dev_send_reset() - tell the guest VIRTIO_VSOCK_EVENT_TRANSPORT_RESET
 * (§5.10.6.7), as after a snapshot restore: every connection is closed
 * and the event goes into the next event queue buffer (once, however
 * often this is called before the guest takes it).
 * Return: 0.  Context: any thread but the worker; the worker acts on it
 * at its next round (at once when running, else when it starts).
 */
int vsock_dev_send_reset(struct vsock_dev *v);

/**
 * vsock_dev_get_stats() - the counters, for metrics.
 * Context: any thread.
 */
void vsock_dev_get_stats(struct vsock_dev *v, struct vsock_dev_stats *out);

/**
 * vsock_dev_print_stats() - the counters as "microvm: stats <name> vsock:"
 * lines, then each queue's (virtio_dev_print_stats()).
 * Context: any thread.
 */
void vsock_dev_print_stats(struct vsock_dev *v, int fd);

#endif
