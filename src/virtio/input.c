// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-input keyboard (virtio 1.2 §5.8). The configuration space answers
 * the select/subsel pair the driver writes (§5.8.5); events wait in a small
 * ring until the guest has eventq buffers, and each buffer gets one
 * struct virtio_input_event (§5.8.6.1). Every ring access goes through
 * virtq.c; a malformed or short buffer fails that element alone, and every
 * loop is bounded by the queue size.
 */
#include "virtio/input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "snapshot/snap.h"
#include "util/le.h"

#define INPUT_NAME "microvm keyboard"
#define INPUT_SERIAL "microvm-kbd-0"
#define INPUT_VENDOR 0x0001
#define INPUT_PRODUCT 0x0001
#define INPUT_VERSION 0x0001
/* Segments of one eventq or statusq element; more fail the element. */
#define INPUT_MAX_SEGS 4

/* The keys it can press (EV_BITS, subsel EV_KEY). */
static const uint16_t input_keys[] = {
	VIRTIO_INPUT_KEY_LEFTCTRL,
	VIRTIO_INPUT_KEY_LEFTALT,
	VIRTIO_INPUT_KEY_DELETE,
	VIRTIO_INPUT_KEY_POWER,
};

#define KEY_EVENT(k, v) { VIRTIO_INPUT_EV_KEY, (k), (v) }
#define SYN_EVENT { VIRTIO_INPUT_EV_SYN, VIRTIO_INPUT_SYN_REPORT, 0 }

static const struct virtio_input_event cad_events[] = {
	KEY_EVENT(VIRTIO_INPUT_KEY_LEFTCTRL, 1),
	KEY_EVENT(VIRTIO_INPUT_KEY_LEFTALT, 1),
	KEY_EVENT(VIRTIO_INPUT_KEY_DELETE, 1),
	SYN_EVENT,
	KEY_EVENT(VIRTIO_INPUT_KEY_DELETE, 0),
	KEY_EVENT(VIRTIO_INPUT_KEY_LEFTALT, 0),
	KEY_EVENT(VIRTIO_INPUT_KEY_LEFTCTRL, 0),
	SYN_EVENT,
};

static uint8_t input_cfg_string(uint8_t *u, const char *s)
{
	size_t n = strlen(s);

	memcpy(u, s, n); /* each string is far below 128 bytes */
	return (uint8_t)n;
}

/* The size and payload for @select/@subsel; 0: nothing there (§5.8.5). */
static uint8_t input_cfg_fill(uint8_t select, uint8_t subsel, uint8_t *u)
{
	uint8_t size = 0;
	size_t i;

	switch (select) {
	case VIRTIO_INPUT_CFG_ID_NAME:
		if (!subsel)
			size = input_cfg_string(u, INPUT_NAME);
		break;
	case VIRTIO_INPUT_CFG_ID_SERIAL:
		if (!subsel)
			size = input_cfg_string(u, INPUT_SERIAL);
		break;
	case VIRTIO_INPUT_CFG_ID_DEVIDS:
		if (subsel)
			break;
		le_put(u + 0, 2, VIRTIO_INPUT_BUS_VIRTUAL);
		le_put(u + 2, 2, INPUT_VENDOR);
		le_put(u + 4, 2, INPUT_PRODUCT);
		le_put(u + 6, 2, INPUT_VERSION);
		size = 8;
		break;
	case VIRTIO_INPUT_CFG_EV_BITS:
		if (subsel != VIRTIO_INPUT_EV_KEY)
			break;
		for (i = 0; i < sizeof(input_keys) / sizeof(input_keys[0]);
		     i++) {
			uint16_t k = input_keys[i];

			u[k / 8] |= (uint8_t)(1u << (k % 8));
			if (k / 8 + 1u > size)
				size = (uint8_t)(k / 8 + 1);
		}
		break;
	default:
		/* UNSET, PROP_BITS (none), ABS_INFO (no axes), unknown. */
		break;
	}
	return size;
}

static void input_cfg_select_locked(struct virtio_input *in)
{
	uint8_t *u = in->cfg + VIRTIO_INPUT_CFG_OFF_U;

	memset(in->cfg + VIRTIO_INPUT_CFG_OFF_SIZE, 0,
	       sizeof(in->cfg) - VIRTIO_INPUT_CFG_OFF_SIZE);
	in->cfg[VIRTIO_INPUT_CFG_OFF_SIZE] =
		input_cfg_fill(in->cfg[0], in->cfg[1], u);
}

static void input_config_access(struct virtio_dev *vdev, uint64_t off,
				uint8_t *data, unsigned int len, bool is_write)
{
	struct virtio_input *in = vdev->dev;
	unsigned int i;

	if (!is_write) {
		memset(data, 0, len);
		if (off < sizeof(in->cfg) && len <= sizeof(in->cfg) - off)
			memcpy(data, in->cfg + off, len);
		return;
	}
	/* Only select (0) and subsel (1) are the driver's to write. */
	if (off > 1 || len > 2 - off)
		return;
	for (i = 0; i < len; i++)
		in->cfg[off + i] = data[i];
	input_cfg_select_locked(in);
}

/* Write @ev into the device-writable segments of @elem (>= 8 bytes). */
static void input_event_put(const struct virtq_elem *elem,
			    const struct virtio_input_event *ev)
{
	uint8_t buf[VIRTIO_INPUT_EVENT_SIZE];
	size_t done = 0;
	unsigned int s;

	le_put(buf + 0, 2, ev->type);
	le_put(buf + 2, 2, ev->code);
	le_put(buf + 4, 4, ev->value);
	for (s = elem->nr_out; s < elem->nr_out + elem->nr_in &&
	     done < sizeof(buf); s++) {
		size_t n = elem->segs[s].len;

		if (n > sizeof(buf) - done)
			n = sizeof(buf) - done;
		memcpy(elem->segs[s].addr, buf + done, n);
		done += n;
	}
}

/*
 * Pop the next usable eventq element into @elem. Elements that fail
 * (malformed chain, a device-readable part, under 8 writable bytes) go
 * back with 0 bytes written. Return: 1, 0 when none is left, -EIO when
 * the ring is broken.
 */
static int input_pop_event_buf(struct virtio_input *in, struct virtq *vq,
			       struct virtq_elem *elem, unsigned int *budget)
{
	int r;

	while (*budget) {
		--*budget;
		r = virtq_pop(vq, elem);
		if (r <= 0 && r != -EBADMSG)
			return r;
		if (r == 1 && !elem->nr_out &&
		    elem->in_len >= VIRTIO_INPUT_EVENT_SIZE)
			return 1;
		in->stats.bad_bufs++;
		virtq_push(vq, elem->head, 0);
	}
	return 0;
}

/* Move pending events into eventq buffers; one interrupt for them all. */
static void input_flush_locked(struct virtio_input *in)
{
	struct virtio_queue *q = &in->vdev.queues[VIRTIO_INPUT_EVENTQ];
	struct virtq_seg segs[INPUT_MAX_SEGS];
	struct virtq_elem elem = { .segs = segs, .max_segs = INPUT_MAX_SEGS };
	unsigned int budget = q->vq.size;
	uint64_t pushes = q->vq.pushes;
	int r = 0;

	if (!in->running || !q->vq.ready)
		return;
	while (in->nr_pending) {
		r = input_pop_event_buf(in, &q->vq, &elem, &budget);
		if (r <= 0)
			break;
		input_event_put(&elem, &in->pending[in->pending_head]);
		virtq_push(&q->vq, elem.head, VIRTIO_INPUT_EVENT_SIZE);
		in->pending_head = (in->pending_head + 1) % VIRTIO_INPUT_PENDING;
		in->nr_pending--;
		in->stats.events_sent++;
		atomic_fetch_add(&q->stats.requests, 1);
	}
	if (r == -EIO)
		virtio_dev_broken(&in->vdev, "eventq: broken ring");
	if (q->vq.pushes != pushes && virtq_need_notify(&q->vq))
		virtio_queue_notify(q);
}

/* The driver's LED updates: taken and handed back unread (§5.8.6.2). */
static void input_drain_status_locked(struct virtio_input *in)
{
	struct virtio_queue *q = &in->vdev.queues[VIRTIO_INPUT_STATUSQ];
	struct virtq_seg segs[INPUT_MAX_SEGS];
	struct virtq_elem elem = { .segs = segs, .max_segs = INPUT_MAX_SEGS };
	unsigned int budget = q->vq.size;
	uint64_t pushes = q->vq.pushes;
	int r;

	if (!in->running || !q->vq.ready)
		return;
	while (budget--) {
		r = virtq_pop(&q->vq, &elem);
		if (r == 0)
			break;
		if (r == -EIO) {
			virtio_dev_broken(&in->vdev, "statusq: broken ring");
			break;
		}
		if (r == -EBADMSG)
			in->stats.bad_bufs++;
		else
			in->stats.status_msgs++;
		virtq_push(&q->vq, elem.head, 0);
	}
	if (q->vq.pushes != pushes && virtq_need_notify(&q->vq))
		virtio_queue_notify(q);
}

static void input_kick(struct virtio_dev *vdev, struct virtio_queue *q)
{
	struct virtio_input *in = vdev->dev;

	atomic_fetch_add(&q->stats.kicks, 1);
	if (q->index == VIRTIO_INPUT_EVENTQ)
		input_flush_locked(in);
	else
		input_drain_status_locked(in);
}

static void input_forget_locked(struct virtio_input *in)
{
	in->stats.events_dropped += in->nr_pending;
	in->nr_pending = 0;
	in->pending_head = 0;
}

static int input_start(struct virtio_dev *vdev)
{
	struct virtio_input *in = vdev->dev;

	/* A new driver (not a resume) gets no keys pressed before it. */
	if (!vdev->paused)
		input_forget_locked(in);
	in->running = true;
	in->driver_ok = true;
	input_flush_locked(in);
	input_drain_status_locked(in);
	return 0;
}

static void input_stop(struct virtio_dev *vdev)
{
	struct virtio_input *in = vdev->dev;

	in->running = false;
	/* A pause keeps the events for the resume; a reset forgets them. */
	if (!vdev->paused)
		input_forget_locked(in);
}

/*
 * Snapshot state: the configuration the driver selected, whether a
 * driver ever set DRIVER_OK, and the key events still waiting for an
 * eventq buffer (a Ctrl-Alt-Del half delivered when the guest paused).
 */
static int input_save(struct virtio_dev *vdev, struct snap_writer *w,
		      char *err, size_t errlen)
{
	struct virtio_input *in = vdev->dev;
	unsigned int i;

	(void)err;
	(void)errlen;
	snap_put_u8(w, in->cfg[0]);
	snap_put_u8(w, in->cfg[1]);
	snap_put_u8(w, in->driver_ok);
	snap_put_u32(w, in->nr_pending);
	for (i = 0; i < in->nr_pending; i++) {
		const struct virtio_input_event *ev =
			&in->pending[(in->pending_head + i) %
				     VIRTIO_INPUT_PENDING];

		snap_put_u16(w, ev->type);
		snap_put_u16(w, ev->code);
		snap_put_u32(w, ev->value);
	}
	return 0;
}

static int input_load(struct virtio_dev *vdev, struct snap_reader *r,
		      char *err, size_t errlen)
{
	struct virtio_input *in = vdev->dev;
	struct virtio_input_event ev[VIRTIO_INPUT_PENDING];
	uint8_t select = snap_get_u8(r), subsel = snap_get_u8(r);
	bool driver_ok = snap_get_u8(r) != 0;
	uint32_t n = snap_get_u32(r), i;

	if (r->bad || n > VIRTIO_INPUT_PENDING) {
		snprintf(err, errlen, "%s: malformed keyboard state",
			 vdev->name);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		ev[i].type = snap_get_u16(r);
		ev[i].code = snap_get_u16(r);
		ev[i].value = snap_get_u32(r);
	}
	if (r->bad) {
		snprintf(err, errlen, "%s: malformed keyboard state",
			 vdev->name);
		return -EINVAL;
	}
	in->cfg[0] = select;
	in->cfg[1] = subsel;
	input_cfg_select_locked(in);
	in->driver_ok = driver_ok;
	in->pending_head = 0;
	in->nr_pending = n;
	for (i = 0; i < n; i++)
		in->pending[i] = ev[i];
	return 0;
}

static const struct virtio_dev_ops input_ops = {
	.name = "virtio-input",
	.device_id = VIRTIO_ID_INPUT,
	.config_access = input_config_access,
	.start = input_start,
	.stop = input_stop,
	.kick = input_kick,
	.save = input_save,
	.load = input_load,
};

int virtio_input_init(struct virtio_input *in, const struct guest_mem *gm,
		      const char *name)
{
	int ret;

	memset(in, 0, sizeof(*in));
	ret = virtio_dev_init(&in->vdev, &input_ops, in, gm, 2,
			      VIRTIO_INPUT_QUEUE_SIZE, 0, name);
	if (ret)
		return ret;
	input_cfg_select_locked(in);
	return 0;
}

void virtio_input_destroy(struct virtio_input *in)
{
	virtio_dev_destroy(&in->vdev);
}

/* Queue @n events, dropping the oldest beyond VIRTIO_INPUT_PENDING. */
static void input_queue_locked(struct virtio_input *in,
			       const struct virtio_input_event *ev,
			       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (in->nr_pending == VIRTIO_INPUT_PENDING) {
			in->pending_head =
				(in->pending_head + 1) % VIRTIO_INPUT_PENDING;
			in->nr_pending--;
			in->stats.events_dropped++;
		}
		in->pending[(in->pending_head + in->nr_pending) %
			    VIRTIO_INPUT_PENDING] = ev[i];
		in->nr_pending++;
	}
}

int virtio_input_ctrl_alt_del(struct virtio_input *in)
{
	int ret = 0;

	pthread_mutex_lock(&in->vdev.lock);
	if (!in->driver_ok) {
		ret = -ENODEV;
	} else {
		input_queue_locked(in, cad_events,
				   sizeof(cad_events) / sizeof(cad_events[0]));
		input_flush_locked(in);
	}
	pthread_mutex_unlock(&in->vdev.lock);
	return ret;
}

void virtio_input_get_stats(struct virtio_input *in,
			    struct virtio_input_stats *out)
{
	pthread_mutex_lock(&in->vdev.lock);
	*out = in->stats;
	pthread_mutex_unlock(&in->vdev.lock);
}
