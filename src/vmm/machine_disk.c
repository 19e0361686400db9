// SPDX-License-Identifier: Apache-2.0
/*
 * Disks of the machine: for each --disk, the image (virtio/disk.h), a
 * virtio-blk device on it (virtio/blk.h) and the transport that puts the
 * device on a bus. The three layers meet only here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/confine.h"
#include "virtio/blk.h"
#include "vmm/machine.h"
#include "vmm/machine_virtio.h"
#include "vmm/metrics.h"

#define DEFAULT_QUEUE_SIZE 256

_Static_assert(CONFIG_MAX_IRQ_HOLD_US == BLK_IRQ_HOLD_MAX_US,
	       "--disk irq-hold-us takes what the device takes");
_Static_assert(CONFIG_MAX_POLL_US == BLK_POLL_MAX_US,
	       "--disk poll-us takes what the device takes");

struct machine_disk {
	struct disk disk;
	bool disk_open;
	struct machine_vdev mv; /* the device on its bus */
	struct blk_dev *blk;
};

static const enum disk_cache cache_modes[] = {
	[CONFIG_CACHE_NONE] = DISK_CACHE_NONE,
	[CONFIG_CACHE_WRITEBACK] = DISK_CACHE_WRITEBACK,
	[CONFIG_CACHE_UNSAFE] = DISK_CACHE_UNSAFE,
};

/* MICROVM_SNAPSHOT_REFLINK=off: the cluster-map overlay even where the
 * file system could clone the image (for tests of that path). */
static bool snapshot_no_reflink(void)
{
	const char *v = getenv("MICROVM_SNAPSHOT_REFLINK");

	return v && !strcmp(v, "off");
}

static int machine_open_disk(struct machine *m, unsigned int i, char *err,
			     size_t errlen)
{
	const struct disk_config *dc = &m->cfg->disks[i];
	struct machine_disk *md = &m->disks[i];
	struct disk_opts o = {
		.path = dc->path,
		.readonly = dc->readonly,
		.cache = cache_modes[dc->cache],
		.engine = DISK_ENGINE_URING,
		.snapshot = dc->snapshot,
		.no_reflink = snapshot_no_reflink(),
	};
	int ret;

	ret = disk_open(&md->disk, &o, err, errlen);
	if (ret)
		return ret;
	md->disk_open = true;
	md->mv.transport = dc->transport;
	md->mv.coalesce_off = dc->coalesce_off;
	return 0;
}

static int machine_attach_disk(struct machine *m, unsigned int i, char *err,
			       size_t errlen)
{
	const struct disk_config *dc = &m->cfg->disks[i];
	struct machine_disk *md = &m->disks[i];
	struct blk_config bc = { .disk = &md->disk, .serial = dc->serial,
				 .defer_off = dc->defer_off,
				 .irq_hold_us = dc->irq_hold_us,
				 .irq_hold_max = dc->irq_hold_max,
				 .rl = dc->rl };
	char name[8];
	int ret;

	snprintf(name, sizeof(name), "vd%c", 'a' + i);
	bc.num_queues = dc->queues;
	if (!bc.num_queues)
		bc.num_queues = dc->transport == DISK_TRANSPORT_MMIO ?
					1 : m->cfg->cpus;
	if (bc.num_queues > VIRTIO_MAX_QUEUES)
		bc.num_queues = VIRTIO_MAX_QUEUES;
	bc.queue_size = dc->queue_size ? dc->queue_size : DEFAULT_QUEUE_SIZE;
	bc.engine = dc->engine == CONFIG_ENGINE_VHOST ? BLK_ENGINE_VHOST :
							BLK_ENGINE_THREADS;
	/*
	 * The module's workers poll only when asked (as vhost-net's
	 * busyloop_timeout): a polling kernel thread competes with the
	 * guest's vCPUs for the same CPUs, and in the measurements of
	 * BENCHMARKS.md section 5 it cost more exits than it saved.
	 */
	bc.poll_us = dc->poll_set ? dc->poll_us :
		     bc.engine == BLK_ENGINE_VHOST ? 0 : BLK_POLL_DEFAULT_US;
	ret = blk_dev_create(&md->blk, &md->mv.vdev, &bc, &m->vm.mem, name);
	if (ret) {
		snprintf(err, errlen, "disk %s: cannot create device%s: %s",
			 dc->path, bc.engine == BLK_ENGINE_VHOST ?
			 " (engine=vhost, see above)" : "", strerror(-ret));
		return ret;
	}
	return machine_vdev_attach(m, &md->mv, "disk", err, errlen);
}

int machine_open_disks(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	if (!m->cfg->nr_disks)
		return 0;
	m->disks = calloc(m->cfg->nr_disks, sizeof(*m->disks));
	if (!m->disks) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < m->cfg->nr_disks; i++) {
		m->nr_disks = i + 1;
		ret = machine_open_disk(m, i, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int machine_attach_disks(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	for (i = 0; i < m->nr_disks; i++) {
		ret = machine_attach_disk(m, i, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* Discard and write-zeroes ioctls on the disks' descriptors only. */
int machine_confine_disks(struct machine *m, char *err, size_t errlen)
{
	int fds[CONFINE_MAX_DISK_FDS];
	unsigned int i, n = 0;

	for (i = 0; i < m->nr_disks && n < CONFINE_MAX_DISK_FDS; i++)
		if (m->disks[i].disk_open)
			fds[n++] = m->disks[i].disk.fd;
	if (i < m->nr_disks) {
		snprintf(err, errlen, "seccomp: %u disks: at most %d",
			 m->nr_disks, CONFINE_MAX_DISK_FDS);
		return -E2BIG;
	}
	return confine_disk_fds(fds, n, err, errlen);
}

void machine_detach_disks(struct machine *m)
{
	unsigned int i = m->nr_disks;

	while (i-- > 0) {
		struct machine_disk *md = &m->disks[i];

		machine_vdev_detach(&md->mv);
		if (md->blk)
			blk_dev_destroy(md->blk);
		md->blk = NULL;
	}
	m->nr_devs = 0; /* all are going: the vsock and net devices,
			 * attached after the disks, are detached before
			 * them, the platform devices next (init-step undo) */
}

/*
 * A snapshot's disks must hold every write the guest saw complete: the
 * memory file about to be written believes them done, and a restore on
 * another boot of the host (or after a crash) reads the image, not this
 * host's page cache. The devices are paused, so nothing is in flight.
 */
int machine_sync_disks(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < m->nr_disks; i++) {
		const struct machine_disk *md = &m->disks[i];

		if (!md->disk_open || md->disk.readonly)
			continue;
		if (fsync(md->disk.fd) < 0) {
			int e = errno;

			snprintf(err, errlen, "drive %s: cannot sync %s: %s",
				 m->cfg->disks[i].drive_id,
				 m->cfg->disks[i].path, strerror(e));
			return -e;
		}
	}
	return 0;
}

void machine_close_disks(struct machine *m)
{
	unsigned int i = m->nr_disks;

	machine_detach_disks(m);
	while (i-- > 0)
		if (m->disks[i].disk_open)
			disk_close(&m->disks[i].disk);
	free(m->disks);
	m->disks = NULL;
	m->nr_disks = 0;
}

/*
 * The image's failed requests per operation, bounces, continuations,
 * io_uring submissions, transfers made in the queue thread (a
 * memory-backed image) and (snapshot disks) clusters copied up.
 */
static void disk_print_stats(struct machine_disk *md, int fd)
{
	struct disk_stats *s = &md->disk.stats;

	dprintf(fd,
		"microvm: stats %s disk: read-errors %llu write-errors %llu "
		"flush-errors %llu discard-errors %llu write-zeroes-errors "
		"%llu bounced %llu bounce-waits %llu resubmits %llu "
		"uring-enters %llu mapped %d inline-rw %llu copy-ups %llu\n",
		md->mv.vdev.name,
		(unsigned long long)atomic_load(&s->errors[DISK_OP_READ]),
		(unsigned long long)atomic_load(&s->errors[DISK_OP_WRITE]),
		(unsigned long long)atomic_load(&s->errors[DISK_OP_FLUSH]),
		(unsigned long long)atomic_load(&s->errors[DISK_OP_DISCARD]),
		(unsigned long long)atomic_load(
			&s->errors[DISK_OP_WRITE_ZEROES]),
		(unsigned long long)atomic_load(&s->bounced),
		(unsigned long long)atomic_load(&s->bounce_waits),
		(unsigned long long)atomic_load(&s->resubmits),
		(unsigned long long)atomic_load(&s->enters),
		md->disk.map != NULL,
		(unsigned long long)atomic_load(&s->inline_calls),
		(unsigned long long)atomic_load(&s->copy_ups));
}

unsigned int machine_metrics_drives(struct machine *m,
				    struct metrics_drive *out,
				    unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < m->nr_disks && n < max; i++) {
		struct machine_disk *md = &m->disks[i];

		if (!md->blk)
			continue;
		/* The API's drive_id (block_rootfs), as Firecracker names
		 * it; the device name for a --disk without one. */
		out[n].id = m->cfg->disks[i].drive_id ?
				    m->cfg->disks[i].drive_id : md->mv.vdev.name;
		out[n].vdev = &md->mv.vdev;
		out[n].disk = &md->disk.stats;
		n++;
	}
	return n;
}

void machine_print_stats(struct machine *m, int fd)
{
	uint64_t first_run = atomic_load(&m->vm.first_run_ns);
	char ms[CLOCK_MS_LEN];
	unsigned int i;

	if (first_run)
		dprintf(fd, "microvm: stats startup: first KVM_RUN after %s "
			"ms\n", clock_format_ms(ms, sizeof(ms), first_run));
	else
		dprintf(fd, "microvm: stats startup: vCPU 0 has not entered "
			"KVM_RUN\n");

	for (i = 0; i < m->nr_disks; i++) {
		if (!m->disks[i].blk)
			continue;
		virtio_dev_print_stats(&m->disks[i].mv.vdev, fd);
		blk_dev_print_stats(m->disks[i].blk, fd);
		disk_print_stats(&m->disks[i], fd);
	}
	machine_vsock_print_stats(m, fd);
	machine_net_print_stats(m, fd);
	arch_machine_print_stats(m, fd);
	vm_print_stats(&m->vm, fd);
	if (m->metrics)
		metrics_print_stats(m->metrics, fd);
}

/*
 * PATCH /drives/{id} path_on_host: the new image opened as the old one
 * was (same cache mode and read-only flag), the device paused (requests
 * taken complete on the old image), its queues re-pointed, the old image
 * flushed and closed, the new capacity announced, the device resumed.
 * Requests the guest queued meanwhile go to the new image. The device's
 * negotiated features stay: a read-only drive stays read-only.
 * PATCHing a drive to the file it already has (the same inode: the same
 * path, a link, a bind mount) reopens it the same way, for Firecracker's
 * "rescan": the guest is told the file's new size.
 */
static int machine_swap_disk(struct machine *m, unsigned int index,
			     const char *path, char *err, size_t errlen)
{
	struct disk_config *dc = &m->cfg->disks[index];
	struct machine_disk *md = &m->disks[index];
	struct disk_opts o = {
		.path = path,
		.readonly = dc->readonly,
		.cache = cache_modes[dc->cache],
		.engine = md->disk.engine,
	};
	struct disk nd, old;
	struct statx now, st;
	bool parked, held;
	char *copy;
	int ret;

	if (md->disk.snapshot) {
		snprintf(err, errlen, "drive %s: a snapshot=on drive cannot "
			 "change its image", dc->drive_id);
		return -ENOTSUP;
	}
	/* Its own file: our lock would refuse the second open. (statx:
	 * main's filter has no path-taking stat.) */
	o.relock = !statx(AT_FDCWD, path, 0, STATX_INO, &st) &&
		   !statx(md->disk.fd, "", AT_EMPTY_PATH, STATX_INO, &now) &&
		   st.stx_dev_major == now.stx_dev_major &&
		   st.stx_dev_minor == now.stx_dev_minor &&
		   st.stx_ino == now.stx_ino;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	ret = disk_open(&nd, &o, err, errlen);
	if (ret) {
		free(copy);
		return ret;
	}
	/* The vCPUs park too (if running): no register write may start or
	 * reset the device halfway through the swap. */
	/* A paused machine's device is paused already and stays so. */
	held = atomic_load(&m->state) == MACHINE_PAUSED;
	parked = atomic_load(&m->state) == MACHINE_RUNNING;
	if (parked && vm_pause_vcpus(&m->vm, 5000)) {
		snprintf(err, errlen, "drive %s: the vCPUs did not stop for the "
			 "swap; nothing changed", dc->drive_id);
		disk_close(&nd);
		free(copy);
		return -EBUSY;
	}
	virtio_dev_pause(&md->mv.vdev);
	ret = blk_dev_replace_file(md->blk, nd.fd, md->disk.fd);
	if (ret) {
		snprintf(err, errlen, "drive %s: cannot switch its queues to "
			 "%s: %s", dc->drive_id, path, strerror(-ret));
		if (!held)
			virtio_dev_resume(&md->mv.vdev);
		if (parked)
			vm_resume_vcpus(&m->vm);
		disk_close(&nd);
		free(copy);
		return ret;
	}
	old = md->disk;
	md->disk = nd;
	disk_close(&old); /* every request it took has completed */
	if (o.relock && disk_relock(&md->disk, err, errlen))
		log_warn("drive %s: %s; it stays open unlocked", dc->drive_id,
			 err);
	blk_dev_disk_changed(md->blk);
	if (!held && virtio_dev_resume(&md->mv.vdev))
		log_error("drive %s: not serving after the swap",
			  dc->drive_id);
	if (parked)
		vm_resume_vcpus(&m->vm);
	free(dc->path);
	dc->path = copy;
	log_info("drive %s: now %s, %llu bytes", dc->drive_id, path,
		 (unsigned long long)md->disk.size);
	return 0;
}

int machine_patch_disk(struct machine *m, unsigned int index,
		       const char *path, const struct rl_config *rl,
		       char *err, size_t errlen)
{
	struct disk_config *dc = &m->cfg->disks[index];
	struct machine_disk *md = &m->disks[index];
	int ret;

	if (index >= m->nr_disks || !md->blk) {
		snprintf(err, errlen, "drive %s has no device", dc->drive_id);
		return -ENODEV;
	}
	if (path) {
		ret = machine_swap_disk(m, index, path, err, errlen);
		if (ret)
			return ret;
	}
	if (rl) {
		ret = blk_dev_set_rate_limit(md->blk, rl);
		if (ret) {
			snprintf(err, errlen, "drive %s: cannot apply the rate "
				 "limiter: %s", dc->drive_id,
				 ret == -ENOTSUP ? "engine=vhost cannot honour "
				 "one" : strerror(-ret));
			return ret;
		}
		dc->rl = *rl;
	}
	return 0;
}
