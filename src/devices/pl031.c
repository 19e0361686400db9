// SPDX-License-Identifier: Apache-2.0
/*
 * PL031 real-time clock (pl031.h). The counter is never stored: it is
 * RTCLR plus the host seconds since RTCLR was loaded, modulo 2^32, so it
 * advances with the host's wall clock and costs nothing while the guest
 * does not look. A write of RTCLR or RTCMR re-arms the alarm timerfd for the
 * moment the counter will equal RTCMR (at most 2^32 - 1 s ahead, as the
 * hardware's 32-bit compare is).
 */
#include "devices/pl031.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/le.h"
#include "util/log.h"

#define RTCDR 0x000   /* data (counter), read only */
#define RTCMR 0x004   /* match */
#define RTCLR 0x008   /* load */
#define RTCCR 0x00c   /* control: bit 0 start (always running here) */
#define RTCIMSC 0x010 /* interrupt mask set/clear */
#define RTCRIS 0x014  /* raw interrupt status */
#define RTCMIS 0x018  /* masked interrupt status */
#define RTCICR 0x01c  /* interrupt clear, write only */
#define RTC_INT 0x1

/*
 * PeriphID0-3 at 0xfe0-0xfec, PCellID0-3 at 0xff0-0xffc: part 0x031,
 * designer 0x41 (ARM), revision 0, as Linux's AMBA bus matches
 * (0x00041031) before it binds rtc-pl031.
 */
static const uint8_t pl031_id[8] = {
	0x31, 0x10, 0x04, 0x00, 0x0d, 0xf0, 0x05, 0xb1,
};

static int64_t pl031_host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

static uint32_t pl031_counter_locked(struct pl031 *r)
{
	return r->lr + (uint32_t)(r->now() - r->base);
}

static void pl031_update_irq_locked(struct pl031 *r)
{
	int level = (r->ris & r->imsc & RTC_INT) != 0;

	if (level == r->irq_level)
		return;
	r->irq_level = level;
	if (r->irq)
		r->irq(r->irq_opaque, r->gsi, level);
}

/* Arm the alarm for when the counter next equals RTCMR. */
static void pl031_arm_locked(struct pl031 *r)
{
	uint32_t ahead = r->mr - pl031_counter_locked(r);
	struct itimerspec its = { 0 };

	if (!ahead) {
		r->ris |= RTC_INT;
		r->alarm_at = 0;
		its.it_value.tv_sec = 0; /* disarm */
	} else if (r->timer_fd < 0) {
		return; /* no alarm (pl031_init()) */
	} else {
		r->alarm_at = r->now() + ahead;
		its.it_value.tv_sec = (time_t)r->alarm_at;
	}
	if (r->timer_fd >= 0 &&
	    timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		log_warn("rtc: arming the alarm: %s", strerror(errno));
}

static uint32_t pl031_read_locked(struct pl031 *r, unsigned int off)
{
	if (off >= 0xfe0)
		return pl031_id[(off - 0xfe0) / 4];
	switch (off) {
	case RTCDR:
		return pl031_counter_locked(r);
	case RTCMR:
		return r->mr;
	case RTCLR:
		return r->lr;
	case RTCCR:
		return 1;
	case RTCIMSC:
		return r->imsc;
	case RTCRIS:
		return r->ris;
	case RTCMIS:
		return r->ris & r->imsc;
	default:
		return 0;
	}
}

static void pl031_write_locked(struct pl031 *r, unsigned int off,
			       uint32_t val)
{
	switch (off) {
	case RTCMR:
		r->mr = val;
		pl031_arm_locked(r);
		break;
	case RTCLR:
		r->lr = val;
		r->base = r->now();
		pl031_arm_locked(r);
		break;
	case RTCIMSC:
		r->imsc = val & RTC_INT;
		break;
	case RTCICR:
		r->ris &= ~(val & RTC_INT);
		break;
	default:
		/* RTCDR, RTCRIS, RTCMIS, the IDs: read only; RTCCR: runs. */
		break;
	}
}

void pl031_access(void *opaque, uint64_t off, uint8_t *data, unsigned int len,
		  bool is_write)
{
	struct pl031 *r = opaque;
	unsigned int n = len > 8 ? 8 : len;

	if (!is_write)
		memset(data, 0, n);
	if (off >= PL031_MMIO_SIZE || (off & 3) || !n)
		return;
	pthread_mutex_lock(&r->lock);
	if (is_write)
		pl031_write_locked(r, (unsigned int)off,
				   (uint32_t)le_get(data, n > 4 ? 4 : n));
	else
		le_put(data, n > 4 ? 4 : n,
		       pl031_read_locked(r, (unsigned int)off));
	pl031_update_irq_locked(r);
	pthread_mutex_unlock(&r->lock);
}

int pl031_timer_fd(const struct pl031 *r)
{
	return r->timer_fd;
}

void pl031_timer_fired(struct pl031 *r)
{
	uint64_t n;

	if (r->timer_fd < 0)
		return;
	/* Non-blocking: a re-arm since the wakeup leaves nothing to read. */
	if (read(r->timer_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("rtc: reading the alarm timer: %s", strerror(errno));
	pthread_mutex_lock(&r->lock);
	/* Late is fine: the counter may have passed RTCMR since. */
	if (r->alarm_at && r->now() >= r->alarm_at) {
		r->ris |= RTC_INT;
		r->alarm_at = 0;
	}
	pl031_update_irq_locked(r);
	pthread_mutex_unlock(&r->lock);
}

int pl031_init(struct pl031 *r, irq_set_fn irq, void *irq_opaque,
	       uint32_t gsi, bool alarm)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->irq = irq;
	r->irq_opaque = irq_opaque;
	r->gsi = gsi;
	r->now = pl031_host_now;
	r->base = r->now();
	r->lr = (uint32_t)r->base;
	r->timer_fd = -1;
	if (alarm) {
		r->timer_fd = timerfd_create(CLOCK_REALTIME,
					     TFD_NONBLOCK | TFD_CLOEXEC);
		if (r->timer_fd < 0)
			return -errno;
	}
	ret = pthread_mutex_init(&r->lock, NULL);
	if (ret) {
		if (r->timer_fd >= 0)
			close(r->timer_fd);
		r->timer_fd = -1;
		return -ret;
	}
	return 0;
}

void pl031_destroy(struct pl031 *r)
{
	pthread_mutex_destroy(&r->lock);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
	r->timer_fd = -1;
}

/*
 * The counter as an offset from the host's wall clock: restored, it goes
 * on from the host's time then, as a battery-backed clock does across a
 * suspend, and the guest's hctosys after a restore reads the real date.
 */
void pl031_save(struct pl031 *r, struct snap_writer *w)
{
	pthread_mutex_lock(&r->lock);
	snap_put_u64(w, (uint64_t)((int64_t)pl031_counter_locked(r) -
				   r->now()));
	snap_put_u32(w, r->mr);
	snap_put_u8(w, r->imsc);
	snap_put_u8(w, r->ris);
	pthread_mutex_unlock(&r->lock);
}

int pl031_load(struct pl031 *r, struct snap_reader *rd)
{
	int64_t offset = (int64_t)snap_get_u64(rd);
	uint32_t mr = snap_get_u32(rd);
	uint8_t imsc = snap_get_u8(rd), ris = snap_get_u8(rd);

	if (rd->bad || !snap_reader_done(rd))
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	r->base = r->now();
	r->lr = (uint32_t)(r->base + offset);
	r->imsc = imsc & RTC_INT;
	r->ris = ris & RTC_INT;
	r->mr = mr;
	if (mr)
		pl031_arm_locked(r);
	pl031_update_irq_locked(r);
	pthread_mutex_unlock(&r->lock);
	return 0;
}
