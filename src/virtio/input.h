/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-input (virtio 1.2 §5.8, device id 18), a keyboard only: the
 * configuration space names it and announces the few keys it can press
 * (Ctrl, Alt, Delete, Power), the eventq carries key events to the guest
 * and the statusq (LED writes) is drained and ignored. There is no queue
 * thread: the VMM pushes events from its own thread, and the transport
 * hands the guest's queue notifications to the vCPU thread (ops->kick),
 * both under vdev->lock.
 *
 *	virtio_input_init(&kbd, gm, "kbd");     // then a transport
 *	...                                      // guest: DRIVER_OK
 *	virtio_input_ctrl_alt_del(&kbd);        // main, SendCtrlAltDel
 *	virtio_input_destroy(&kbd);             // after the transport's
 */
#ifndef MICROVM_VIRTIO_INPUT_H
#define MICROVM_VIRTIO_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "virtio/virtio.h"

#define VIRTIO_ID_INPUT 18

/* Configuration space (virtio 1.2 §5.8.4). */
#define VIRTIO_INPUT_CFG_UNSET 0x00
#define VIRTIO_INPUT_CFG_ID_NAME 0x01
#define VIRTIO_INPUT_CFG_ID_SERIAL 0x02
#define VIRTIO_INPUT_CFG_ID_DEVIDS 0x03
#define VIRTIO_INPUT_CFG_PROP_BITS 0x10
#define VIRTIO_INPUT_CFG_EV_BITS 0x11
#define VIRTIO_INPUT_CFG_ABS_INFO 0x12
#define VIRTIO_INPUT_CFG_OFF_SIZE 2
#define VIRTIO_INPUT_CFG_OFF_U 8
#define VIRTIO_INPUT_CFG_U_SIZE 128
#define VIRTIO_INPUT_CFG_SIZE (VIRTIO_INPUT_CFG_OFF_U + VIRTIO_INPUT_CFG_U_SIZE)

/* The evdev codes it uses (Linux's input-event-codes.h values). */
#define VIRTIO_INPUT_EV_SYN 0x00
#define VIRTIO_INPUT_EV_KEY 0x01
#define VIRTIO_INPUT_SYN_REPORT 0
#define VIRTIO_INPUT_KEY_LEFTCTRL 29
#define VIRTIO_INPUT_KEY_LEFTALT 56
#define VIRTIO_INPUT_KEY_DELETE 111
#define VIRTIO_INPUT_KEY_POWER 116
#define VIRTIO_INPUT_BUS_VIRTUAL 0x06

/* The queues (§5.8.2). */
#define VIRTIO_INPUT_EVENTQ 0
#define VIRTIO_INPUT_STATUSQ 1
#define VIRTIO_INPUT_QUEUE_SIZE 64

/* Bytes of one struct virtio_input_event {le16 type, code; le32 value}. */
#define VIRTIO_INPUT_EVENT_SIZE 8
/* Events kept while the guest has no eventq buffer; older ones dropped. */
#define VIRTIO_INPUT_PENDING 64

struct virtio_input_event {
	uint16_t type;
	uint16_t code;
	uint32_t value;
};

struct virtio_input_stats {
	uint64_t events_sent;    /* written into eventq buffers */
	uint64_t events_dropped; /* pushed out of the full pending buffer,
				  * or forgotten by a reset */
	uint64_t status_msgs;    /* statusq buffers drained */
	uint64_t bad_bufs;       /* elements failed: malformed, too short */
};

struct virtio_input {
	struct virtio_dev vdev; /* the device owns its core state */
	/* Under vdev.lock: */
	uint8_t cfg[VIRTIO_INPUT_CFG_SIZE]; /* select, subsel, size, u */
	struct virtio_input_event pending[VIRTIO_INPUT_PENDING];
	unsigned int pending_head; /* oldest event */
	unsigned int nr_pending;
	bool running;   /* between ops->start and ops->stop */
	bool driver_ok; /* the driver has set DRIVER_OK at least once */
	struct virtio_input_stats stats;
};

/**
 * virtio_input_init() - a keyboard on guest memory @gm, named @name in
 * messages; attach a transport next (virtio_mmio_init on &in->vdev).
 * Return: 0 or -errno.  Context: startup.
 */
int virtio_input_init(struct virtio_input *in, const struct guest_mem *gm,
		      const char *name);

/**
 * virtio_input_destroy() - stop the device; after the transport's
 * destroy. Context: teardown.
 */
void virtio_input_destroy(struct virtio_input *in);

/**
 * virtio_input_ctrl_alt_del() - press and release Left Ctrl, Left Alt and
 * Delete: what the guest's keyboard handler turns into its orderly
 * shutdown. Events the guest has no buffer for wait (bounded, the oldest
 * dropped first) until it adds buffers; a reset forgets them.
 * Return: 0, or -ENODEV when the guest's driver has never set DRIVER_OK
 * (no keyboard driver to read them).
 * Context: any thread but a vCPU's holding vdev.lock (main: the API).
 */
int virtio_input_ctrl_alt_del(struct virtio_input *in);

/**
 * virtio_input_get_stats() - a consistent copy of the counters.
 * Context: any thread.
 */
void virtio_input_get_stats(struct virtio_input *in,
			    struct virtio_input_stats *out);

#endif
