// SPDX-License-Identifier: Apache-2.0
/*
 * virtio-blk device (virtio 1.2 §5.2): the feature set, the configuration
 * space built once from the disk, the GET_ID serial, and the device ops that
 * start and stop one I/O thread per enabled queue (blk_queue.c).
 */
#include "virtio/blk.h"

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "snapshot/snap.h"
#include "util/le.h"
#include "util/log.h"
#include "virtio/blk_priv.h"

/* ---- virtio_dev_ops ---- */

/*
 * Queues [from, to) of the start: @on, their interrupts come from the
 * backend's writes to an eventfd the transport picks; off, back to
 * notify(), what the backend signalled being delivered.
 */
static void blk_direct_irq(struct blk_dev *b, unsigned int from,
			   unsigned int to, bool on)
{
	struct virtio_dev *vdev = b->vdev;
	unsigned int i;

	if (!b->be_ops->direct_irq)
		return;
	for (i = from; i < to; i++)
		vdev->tops->direct_irq(vdev, b->be_start.queues[i].q, on);
}

static void blk_stop(struct virtio_dev *vdev)
{
	struct blk_dev *b = vdev->dev;
	struct blk_backend_start *s = &b->be_start;
	unsigned int i;

	b->be_ops->stop(b, s);
	blk_direct_irq(b, 0, s->nr_queues, false);
	/* Where serving ended, for a later start without a reset. */
	for (i = 0; i < s->nr_queues; i++)
		s->queues[i].q->vq.last_avail_idx = s->queues[i].base;
	s->nr_queues = 0;
}

/* The seam's view of every enabled queue whose rings started. */
static void blk_fill_start(struct blk_dev *b)
{
	struct virtio_dev *vdev = b->vdev;
	struct blk_backend_start *s = &b->be_start;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->gm = b->gm;
	s->features = vdev->driver_features;
	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];
		struct blk_backend_queue *bq = &s->queues[s->nr_queues];

		if (!q->enabled || !q->vq.ready)
			continue;
		bq->q = q;
		bq->index = i;
		bq->size = q->vq.size;
		bq->desc = q->vq.desc;
		bq->avail = q->vq.avail;
		bq->used = q->vq.used;
		bq->base = q->vq.last_avail_idx;
		bq->kick_fd = q->kick_fd;
		s->nr_queues++;
	}
}

static int blk_start(struct virtio_dev *vdev)
{
	struct blk_dev *b = vdev->dev;
	uint64_t f = vdev->driver_features;
	unsigned int n;
	int ret;

	b->lim.discard = f & (1ull << VIRTIO_BLK_F_DISCARD);
	b->lim.write_zeroes = f & (1ull << VIRTIO_BLK_F_WRITE_ZEROES);
	blk_fill_start(b);
	if (b->be_ops->direct_irq && !vdev->tops->direct_irq) {
		log_ratelimited(&b->rl, LOG_ERROR,
				"%s: transport %s cannot take interrupts from "
				"%s", vdev->name, vdev->tops->name,
				b->be_ops->name);
		return -ENOTSUP;
	}
	n = b->be_start.nr_queues;
	blk_direct_irq(b, 0, n, true);
	ret = b->be_ops->start(b, &b->be_start);
	if (ret) {
		blk_direct_irq(b, 0, n, false);
		b->be_start.nr_queues = 0;
		return ret;
	}
	/* Queues the backend left out go back to notify(). */
	blk_direct_irq(b, b->be_start.nr_queues, n, false);
	return 0;
}

/* The transport re-pointed a directly signalled queue. */
static void blk_call_changed(struct virtio_dev *vdev, struct virtio_queue *q,
			     int fd)
{
	struct blk_dev *b = vdev->dev;

	if (b->be_ops->set_call)
		b->be_ops->set_call(b, q->index, fd);
}

/* Byte-granular: any offset and width; writes are ignored (no WCE). */
static void blk_config_access(struct virtio_dev *vdev, uint64_t off,
			      uint8_t *data, unsigned int len, bool is_write)
{
	struct blk_dev *b = vdev->dev;
	unsigned int i;

	if (is_write)
		return;
	for (i = 0; i < len; i++)
		data[i] = off < BLK_CONFIG_BYTES &&
			  i < BLK_CONFIG_BYTES - off ? b->config[off + i] : 0;
}

/*
 * Snapshot state: the configuration space the driver read (capacity,
 * geometry, limits). A restore onto an image of another size is refused:
 * the guest's file systems were sized for this one.
 */
static int blk_save(struct virtio_dev *vdev, struct snap_writer *w,
		    char *err, size_t errlen)
{
	struct blk_dev *b = vdev->dev;

	if (b->be_ops->direct_irq) {
		snprintf(err, errlen, "%s: engine=%s disks cannot be "
			 "snapshotted yet (the kernel holds their rings)",
			 vdev->name, b->be_ops->name);
		return -EOPNOTSUPP;
	}
	snap_put_u32(w, BLK_CONFIG_BYTES);
	snap_put_bytes(w, b->config, BLK_CONFIG_BYTES);
	return 0;
}

static int blk_load(struct virtio_dev *vdev, struct snap_reader *r,
		    char *err, size_t errlen)
{
	struct blk_dev *b = vdev->dev;
	const uint8_t *cfg;
	uint32_t n = snap_get_u32(r);

	cfg = n == BLK_CONFIG_BYTES ? snap_get_ref(r, n) : NULL;
	if (!cfg) {
		snprintf(err, errlen, "%s: configuration space of %u bytes; "
			 "this build has %u", vdev->name, n, BLK_CONFIG_BYTES);
		return -EINVAL;
	}
	if (le_get(cfg, 8) != le_get(b->config, 8)) {
		snprintf(err, errlen, "%s: the snapshot's disk has %llu "
			 "sectors, this image %llu: a restore needs the same "
			 "disk size", vdev->name,
			 (unsigned long long)le_get(cfg, 8),
			 (unsigned long long)le_get(b->config, 8));
		return -EINVAL;
	}
	if (memcmp(cfg, b->config, BLK_CONFIG_BYTES)) {
		snprintf(err, errlen, "%s: the snapshot's disk has other "
			 "limits (block size, queues, discard) than this one",
			 vdev->name);
		return -EINVAL;
	}
	return 0;
}

static const struct virtio_dev_ops blk_ops = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.config_access = blk_config_access,
	.start = blk_start,
	.stop = blk_stop,
	.call_changed = blk_call_changed,
	.save = blk_save,
	.load = blk_load,
};

/* ---- creation ---- */

static void put_le16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Logical block size for the guest: the O_DIRECT block when there is one. */
static uint32_t blk_logical_block(const struct disk *d)
{
	if (d->direct && is_pow2(d->align) && d->align > BLK_SECTOR_SIZE &&
	    d->align <= 65536)
		return d->align;
	return BLK_SECTOR_SIZE;
}

static void blk_build_config(struct blk_dev *b, const struct blk_config *cfg)
{
	const struct disk *d = b->disk;
	uint32_t lbs = blk_logical_block(d), pbs = lbs, exp = 0;
	uint8_t *c = b->config;

	if (is_pow2(d->phys_block) && d->phys_block > lbs &&
	    d->phys_block <= 65536)
		pbs = d->phys_block;
	while ((lbs << exp) < pbs)
		exp++;
	memset(c, 0, BLK_CONFIG_BYTES);
	put_le64(c + BLK_CFG_CAPACITY, b->lim.capacity);
	put_le32(c + BLK_CFG_SIZE_MAX, BLK_SIZE_MAX);
	put_le32(c + BLK_CFG_SEG_MAX, cfg->queue_size - 2u);
	put_le32(c + BLK_CFG_BLK_SIZE, lbs);
	c[BLK_CFG_PHYS_BLOCK_EXP] = (uint8_t)exp;
	put_le16(c + BLK_CFG_MIN_IO_SIZE, (uint16_t)(1u << exp));
	put_le16(c + BLK_CFG_NUM_QUEUES, (uint16_t)cfg->num_queues);
	if (d->can_discard) {
		put_le32(c + BLK_CFG_MAX_DISCARD_SECTORS, BLK_DWZ_MAX_SECTORS);
		put_le32(c + BLK_CFG_MAX_DISCARD_SEG, 1);
		put_le32(c + BLK_CFG_DISCARD_ALIGNMENT,
			 pbs >> BLK_SECTOR_SHIFT);
	}
	if (d->can_write_zeroes) {
		put_le32(c + BLK_CFG_MAX_WZ_SECTORS, BLK_DWZ_MAX_SECTORS);
		put_le32(c + BLK_CFG_MAX_WZ_SEG, 1);
		/* A hole may stand in for zeros (the disk backend). */
		c[BLK_CFG_WZ_MAY_UNMAP] = d->can_discard;
	}
}

static uint64_t blk_features(const struct blk_config *cfg)
{
	const struct disk *d = cfg->disk;
	uint64_t f = 1ull << VIRTIO_F_VERSION_1 |
		     1ull << VIRTIO_F_EVENT_IDX |
		     1ull << VIRTIO_F_INDIRECT_DESC |
		     1ull << VIRTIO_BLK_F_SIZE_MAX |
		     1ull << VIRTIO_BLK_F_SEG_MAX |
		     1ull << VIRTIO_BLK_F_BLK_SIZE |
		     1ull << VIRTIO_BLK_F_TOPOLOGY |
		     1ull << VIRTIO_BLK_F_FLUSH;

	if (d->readonly)
		f |= 1ull << VIRTIO_BLK_F_RO;
	if (d->can_discard)
		f |= 1ull << VIRTIO_BLK_F_DISCARD;
	if (d->can_write_zeroes)
		f |= 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	if (cfg->num_queues > 1)
		f |= 1ull << VIRTIO_BLK_F_MQ;
	return f;
}

/* FNV-1a, 64 bits: a stable short fingerprint of the image. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Serial from the image identity: path, device and inode. */
static void blk_derive_serial(struct blk_dev *b)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct stat st;

	if (b->disk->path)
		h = fnv1a(h, b->disk->path, strlen(b->disk->path));
	if (!fstat(b->disk->fd, &st)) {
		h = fnv1a(h, &st.st_dev, sizeof(st.st_dev));
		h = fnv1a(h, &st.st_ino, sizeof(st.st_ino));
	}
	/* "microvm-" and 12 hex digits: exactly 20 bytes. */
	snprintf(b->serial, sizeof(b->serial), "microvm-%012" PRIx64,
		 (uint64_t)(h & 0xffffffffffffull));
}

static int blk_set_serial(struct blk_dev *b, const char *name,
			  const char *serial)
{
	size_t i, n;

	if (!serial) {
		blk_derive_serial(b);
		return 0;
	}
	n = strlen(serial);
	if (n > VIRTIO_BLK_ID_BYTES) {
		log_error("%s: serial \"%s\" is longer than %d bytes", name,
			  serial, VIRTIO_BLK_ID_BYTES);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (serial[i] < 0x20 || serial[i] > 0x7e) {
			log_error("%s: serial \"%s\" has a non-printable byte",
				  name, serial);
			return -EINVAL;
		}
	}
	memcpy(b->serial, serial, n);
	return 0;
}

/* A rate limit the limiter takes, on an engine that can honour it. */
static int blk_check_rl(const struct rl_config *rl, enum blk_engine engine,
			const char *name)
{
	char err[128];

	if (rl_config_check(rl, err, sizeof(err))) {
		log_error("%s: rate limit: %s", name, err);
		return -EINVAL;
	}
	if (engine == BLK_ENGINE_VHOST && rl_config_active(rl)) {
		log_error("%s: a rate limit needs the VMM's queue threads: "
			  "engine=vhost cannot honour it", name);
		return -ENOTSUP;
	}
	return 0;
}

static int blk_check_config(const struct blk_config *cfg, const char *name)
{
	if (!cfg->disk) {
		log_error("%s: no disk", name);
		return -EINVAL;
	}
	if (!cfg->num_queues || cfg->num_queues > VIRTIO_MAX_QUEUES) {
		log_error("%s: %u queues: must be 1 to %d", name,
			  cfg->num_queues, VIRTIO_MAX_QUEUES);
		return -EINVAL;
	}
	if (cfg->queue_size < 2 || cfg->queue_size > VIRTQ_MAX_SIZE ||
	    !is_pow2(cfg->queue_size)) {
		log_error("%s: queue size %u: must be a power of two from 2 "
			  "to %d", name, cfg->queue_size, VIRTQ_MAX_SIZE);
		return -EINVAL;
	}
	if (cfg->poll_us > BLK_POLL_MAX_US) {
		log_error("%s: poll %u us: must be 0 to %u", name,
			  cfg->poll_us, BLK_POLL_MAX_US);
		return -EINVAL;
	}
	if (cfg->irq_hold_us > BLK_IRQ_HOLD_MAX_US) {
		log_error("%s: interrupt hold %u us: must be 0 to %u", name,
			  cfg->irq_hold_us, BLK_IRQ_HOLD_MAX_US);
		return -EINVAL;
	}
	if (blk_check_rl(&cfg->rl, cfg->engine, name))
		return -EINVAL;
	if (cfg->irq_hold_us &&
	    (cfg->defer_off || cfg->engine == BLK_ENGINE_VHOST)) {
		log_error("%s: an interrupt hold needs deferred signalling "
			  "in the VMM's queue threads (not %s)", name,
			  cfg->defer_off ? "defer off" : "the vhost engine");
		return -EINVAL;
	}
	return 0;
}

int blk_dev_create(struct blk_dev **out, struct virtio_dev *vdev,
		   const struct blk_config *cfg, const struct guest_mem *gm,
		   const char *name)
{
	struct blk_dev *b;
	unsigned int i;
	int ret;

	ret = blk_check_config(cfg, name);
	if (ret)
		return ret;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->vdev = vdev;
	b->disk = cfg->disk;
	b->gm = gm;
	b->be_ops = cfg->engine == BLK_ENGINE_VHOST ? &blk_backend_vhost :
						      &blk_backend_threads;
	b->vhost_sys = cfg->vhost_sys;
	b->defer_off = cfg->defer_off;
	b->num_queues = cfg->num_queues;
	b->queue_size = (uint16_t)cfg->queue_size;
	b->poll_max_ns = (uint64_t)cfg->poll_us * 1000;
	b->hold_ns = (uint64_t)cfg->irq_hold_us * 1000;
	b->hold_max = cfg->irq_hold_max ? cfg->irq_hold_max : cfg->queue_size;
	rl_init(&b->limiter, &cfg->rl);
	ret = blk_set_serial(b, name, cfg->serial);
	if (ret)
		goto err_free;
	if (b->disk->size % BLK_SECTOR_SIZE)
		log_warn("%s: disk size %" PRIu64 " is not a multiple of 512: "
			 "the last %" PRIu64 " bytes are not visible", name,
			 b->disk->size, b->disk->size % BLK_SECTOR_SIZE);
	b->lim.capacity = b->disk->size >> BLK_SECTOR_SHIFT;
	b->lim.readonly = b->disk->readonly;
	b->lim.max_discard_sectors = BLK_DWZ_MAX_SECTORS;
	b->lim.max_write_zeroes_sectors = BLK_DWZ_MAX_SECTORS;
	blk_build_config(b, cfg);
	for (i = 0; i < VIRTIO_MAX_QUEUES; i++) {
		b->queues[i].b = b;
		b->queues[i].w.epfd = b->queues[i].w.wake_fd = -1;
	}
	snprintf(b->vhost.name, sizeof(b->vhost.name), "%s", name);
	if (b->be_ops->open) {
		ret = b->be_ops->open(b);
		if (ret)
			goto err_free;
	}
	ret = virtio_dev_init(vdev, &blk_ops, b, gm, cfg->num_queues,
			      cfg->queue_size,
			      b->be_ops->features(b, blk_features(cfg)), name);
	if (ret)
		goto err_close;
	*out = b;
	return 0;

err_close:
	if (b->be_ops->close)
		b->be_ops->close(b);
err_free:
	rl_destroy(&b->limiter);
	free(b);
	return ret;
}

void blk_dev_destroy(struct blk_dev *b)
{
	unsigned int i;

	if (!b)
		return;
	virtio_dev_destroy(b->vdev);
	for (i = 0; i < VIRTIO_MAX_QUEUES; i++)
		assert(!b->queues[i].w.running);
	if (b->be_ops->close)
		b->be_ops->close(b);
	rl_destroy(&b->limiter);
	free(b);
}

int blk_dev_set_rate_limit(struct blk_dev *b, const struct rl_config *rl)
{
	bool vhost = b->be_ops == &blk_backend_vhost;
	unsigned int i;
	int ret;

	ret = blk_check_rl(rl, vhost ? BLK_ENGINE_VHOST : BLK_ENGINE_THREADS,
			   b->vdev->name);
	if (ret)
		return ret;
	rl_set(&b->limiter, rl);
	/* A thread asleep until tokens due under the old limit. */
	pthread_mutex_lock(&b->vdev->lock);
	for (i = 0; i < b->num_queues; i++)
		blk_queue_wake(&b->queues[i]);
	pthread_mutex_unlock(&b->vdev->lock);
	return 0;
}

const char *blk_dev_serial(const struct blk_dev *b)
{
	return b->serial;
}

void blk_dev_print_stats(struct blk_dev *b, int fd)
{
	if (b->be_ops->print_stats)
		b->be_ops->print_stats(b, fd);
}

int blk_dev_replace_file(struct blk_dev *b, int fd, int old_fd)
{
	unsigned int i;
	int ret = 0;

	if (b->be_ops != &blk_backend_threads)
		return 0; /* vhost: each start hands the module disk->fd */
	for (i = 0; i < b->num_queues; i++) {
		if (!b->queues[i].dq)
			continue;
		ret = disk_queue_replace_file(b->queues[i].dq, fd);
		if (ret)
			break;
	}
	if (ret)
		while (i-- > 0)
			if (b->queues[i].dq)
				(void)disk_queue_replace_file(b->queues[i].dq,
							      old_fd);
	return ret;
}

void blk_dev_disk_changed(struct blk_dev *b)
{
	uint64_t cap = b->disk->size >> BLK_SECTOR_SHIFT;

	if (b->disk->size % BLK_SECTOR_SIZE)
		log_warn("%s: disk size %" PRIu64 " is not a multiple of 512: "
			 "the last %" PRIu64 " bytes are not visible",
			 b->vdev->name, b->disk->size,
			 b->disk->size % BLK_SECTOR_SIZE);
	/* Register reads of the configuration space hold vdev->lock. */
	pthread_mutex_lock(&b->vdev->lock);
	__atomic_store_n(&b->lim.capacity, cap, __ATOMIC_RELEASE);
	put_le64(b->config + BLK_CFG_CAPACITY, cap);
	pthread_mutex_unlock(&b->vdev->lock);
	virtio_config_changed(b->vdev);
}
