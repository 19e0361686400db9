// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-kernel backend layer: the ioctl sequence every kernel vhost
 * device shares (<linux/vhost.h>): ownership, features, the VM's memory
 * table, each ring's size, addresses, base, kick and error eventfds, the
 * call eventfds, and the ring state taken back at stop. What a device
 * adds (its version check, its guest CID, its backend switch) comes
 * through its struct vhost_ops.
 */
#include "virtio/vhost.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/confine.h"
#include "util/evloop.h"
#include "virtio/virtio.h"

static int host_open(void *opaque, const char *path)
{
	int fd;

	(void)opaque;
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int host_ioctl(void *opaque, int fd, unsigned long req, void *arg)
{
	int ret;

	(void)opaque;
	ret = ioctl(fd, req, arg);
	return ret < 0 ? -errno : ret;
}

static void host_close(void *opaque, int fd)
{
	(void)opaque;
	close(fd);
}

const struct vhost_sys vhost_sys_host = {
	.open = host_open,
	.ioctl = host_ioctl,
	.close = host_close,
};

int vhost_ioctl(struct vhost_dev *v, unsigned long req, void *arg)
{
	return v->sys->ioctl(v->sys->opaque, v->fd, req, arg);
}

static int vh_open_device(struct vhost_dev *v, const char *path)
{
	int fd = v->sys->open(v->sys->opaque, path);

	if (fd >= 0) {
		v->fd = fd;
		return 0;
	}
	if (fd == -ENOENT || fd == -ENXIO || fd == -ENODEV)
		log_error("%s: engine=vhost: %s: %s: the %s module is "
			  "not loaded: %s", v->name, path, strerror(-fd),
			  v->ops->what, v->ops->fix_load);
	else if (fd == -EACCES || fd == -EPERM)
		log_error("%s: engine=vhost: %s: %s: microvm needs read-write "
			  "access to it (its group, or a udev rule)", v->name,
			  path, strerror(-fd));
	else
		log_error("%s: engine=vhost: cannot open %s: %s", v->name,
			  path, strerror(-fd));
	return fd;
}

static int vh_set_mem_table(struct vhost_dev *v, const struct guest_mem *gm)
{
	struct vhost_memory *mem;
	unsigned int i;
	int ret;

	mem = calloc(1, sizeof(*mem) +
			gm->nr_regions * sizeof(mem->regions[0]));
	if (!mem)
		return -ENOMEM;
	mem->nregions = gm->nr_regions;
	for (i = 0; i < gm->nr_regions; i++) {
		mem->regions[i].guest_phys_addr = gm->regions[i].gpa;
		mem->regions[i].memory_size = gm->regions[i].size;
		mem->regions[i].userspace_addr =
			(uintptr_t)gm->regions[i].host;
	}
	ret = vhost_ioctl(v, VHOST_SET_MEM_TABLE, mem);
	free(mem);
	if (ret < 0)
		log_error("%s: engine=vhost: VHOST_SET_MEM_TABLE (%u regions): "
			  "%s", v->name, gm->nr_regions, strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* VHOST_SET_OWNER, VHOST_GET_FEATURES (VERSION_1 required), the table. */
static int vh_own(struct vhost_dev *v, const struct guest_mem *gm)
{
	__u64 features = 0;
	int ret;

	ret = vhost_ioctl(v, VHOST_SET_OWNER, NULL);
	if (ret < 0) {
		log_error("%s: engine=vhost: VHOST_SET_OWNER: %s", v->name,
			  strerror(-ret));
		return ret;
	}
	ret = vhost_ioctl(v, VHOST_GET_FEATURES, &features);
	if (ret < 0) {
		log_error("%s: engine=vhost: VHOST_GET_FEATURES: %s", v->name,
			  strerror(-ret));
		return ret;
	}
	if (!(features & (1ull << VIRTIO_F_VERSION_1))) {
		log_error("%s: engine=vhost: the module does not serve "
			  "VIRTIO_F_VERSION_1 (features %#llx); %s",
			  v->name, (unsigned long long)features,
			  v->ops->fix_version);
		return -EPROTO;
	}
	v->features = features;
	return vh_set_mem_table(v, gm);
}

int vhost_open(struct vhost_dev *v, const struct vhost_sys *sys,
	       const struct vhost_ops *ops, void *opaque,
	       const struct guest_mem *gm, const char *path,
	       const char *name)
{
	char copy[sizeof(v->name)];
	unsigned int i;
	int ret;

	/* @name may be v->name itself. */
	snprintf(copy, sizeof(copy), "%s", name);
	memset(v, 0, sizeof(*v));
	v->sys = sys;
	v->ops = ops;
	v->opaque = opaque;
	v->fd = -1;
	memcpy(v->name, copy, sizeof(v->name));
	v->err_stop_fd = v->err_epfd = -1;
	for (i = 0; i < VHOST_MAX_RINGS; i++)
		v->err_fd[i] = -1;
	ret = vh_open_device(v, path);
	if (ret)
		return ret;
	ret = ops->probe ? ops->probe(v, path) : 0;
	if (ret)
		goto err_close;
	ret = vh_own(v, gm);
	if (ret)
		goto err_close;
	ret = ops->setup ? ops->setup(v) : 0;
	if (ret)
		goto err_close;
	return 0;

err_close:
	sys->close(sys->opaque, v->fd);
	v->fd = -1;
	return ret;
}

int vhost_set_call(struct vhost_dev *v, unsigned int index, int fd)
{
	struct vhost_vring_file f = { .index = index, .fd = fd };
	int ret;

	ret = vhost_ioctl(v, VHOST_SET_VRING_CALL, &f);
	if (ret < 0)
		log_ratelimited(&v->rl, LOG_WARN,
				"%s: queue %u: VHOST_SET_VRING_CALL: %s",
				v->name, index, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int vh_setup_ring(struct vhost_dev *v, unsigned int index,
			 const struct vhost_ring *r)
{
	struct vhost_vring_state num = { .index = index, .num = r->size };
	struct vhost_vring_state base = { .index = index, .num = r->base };
	struct vhost_vring_addr addr = {
		.index = index,
		.desc_user_addr = (uintptr_t)r->desc,
		.avail_user_addr = (uintptr_t)r->avail,
		.used_user_addr = (uintptr_t)r->used,
	};
	struct vhost_vring_file kick = { .index = index, .fd = r->kick_fd };
	const char *what;
	int ret;

	what = "VHOST_SET_VRING_NUM";
	ret = vhost_ioctl(v, VHOST_SET_VRING_NUM, &num);
	if (ret >= 0) {
		what = "VHOST_SET_VRING_ADDR";
		ret = vhost_ioctl(v, VHOST_SET_VRING_ADDR, &addr);
	}
	if (ret >= 0) {
		what = "VHOST_SET_VRING_BASE";
		ret = vhost_ioctl(v, VHOST_SET_VRING_BASE, &base);
	}
	if (ret >= 0) {
		what = "VHOST_SET_VRING_KICK";
		ret = vhost_ioctl(v, VHOST_SET_VRING_KICK, &kick);
	}
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: queue %u: %s: %s", v->name,
				index, what, strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- ring errors: VHOST_SET_VRING_ERR eventfds and their thread ---- */

static void *vh_err_thread(void *arg)
{
	struct vhost_dev *v = arg;
	uint64_t tags[VHOST_MAX_RINGS + 1];
	char name[16];
	int i, n;

	snprintf(name, sizeof(name), "%.9s-vherr", v->name);
	pthread_setname_np(pthread_self(), name);
	confine_thread(CONFINE_IO);
	for (;;) {
		n = evloop_wait(v->err_epfd, tags, VHOST_MAX_RINGS + 1, -1);
		for (i = 0; i < n; i++) {
			if (tags[i] == VHOST_MAX_RINGS)
				return NULL;
			if (evfd_drain(v->err_fd[tags[i]]) && v->err_fn)
				v->err_fn(v->err_opaque,
					  (unsigned int)tags[i]);
		}
	}
}

static void vh_err_close(struct vhost_dev *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vhost_vring_file f = { .index = i, .fd = -1 };

		if (v->err_fd[i] < 0)
			continue;
		vhost_ioctl(v, VHOST_SET_VRING_ERR, &f);
	}
	if (v->err_running) {
		evfd_signal(v->err_stop_fd);
		pthread_join(v->err_thread, NULL);
		v->err_running = false;
	}
	for (i = 0; i < VHOST_MAX_RINGS; i++) {
		if (v->err_fd[i] >= 0)
			close(v->err_fd[i]);
		v->err_fd[i] = -1;
	}
	if (v->err_epfd >= 0)
		close(v->err_epfd);
	if (v->err_stop_fd >= 0)
		close(v->err_stop_fd);
	v->err_epfd = v->err_stop_fd = -1;
}

/*
 * One error eventfd per ring and a thread that turns a signal into
 * err_fn(). Without them the rings are still served; a broken ring then
 * only stalls its queue, so a failure here is a warning.
 */
static void vh_err_open(struct vhost_dev *v, unsigned int n)
{
	sigset_t all, old;
	unsigned int i;
	int ret;

	v->err_stop_fd = evfd_new();
	v->err_epfd = evloop_new();
	ret = v->err_stop_fd < 0 ? v->err_stop_fd :
	      v->err_epfd < 0 ? v->err_epfd :
	      evloop_add(v->err_epfd, v->err_stop_fd, VHOST_MAX_RINGS);
	for (i = 0; !ret && i < n; i++) {
		struct vhost_vring_file f = { .index = i };

		v->err_fd[i] = f.fd = evfd_new();
		ret = f.fd < 0 ? f.fd : evloop_add(v->err_epfd, f.fd, i);
		if (!ret)
			ret = vhost_ioctl(v, VHOST_SET_VRING_ERR, &f);
	}
	if (!ret) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = -pthread_create(&v->err_thread, NULL, vh_err_thread, v);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		v->err_running = !ret;
	}
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_WARN,
				"%s: engine=vhost: no ring error reports (%s): "
				"a broken ring stalls its queue instead of "
				"NEEDS_RESET", v->name, strerror(-ret));
		vh_err_close(v, n);
	}
}

/* Detach rings [0, n): the kick fd back to none. */
static void vh_unset_rings(struct vhost_dev *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vhost_vring_file kick = { .index = i, .fd = -1 };

		vhost_ioctl(v, VHOST_SET_VRING_KICK, &kick);
	}
}

int vhost_start(struct vhost_dev *v, const struct vhost_ring *rings,
		unsigned int nr_rings, uint64_t features,
		const void *arg)
{
	__u64 f = features;
	unsigned int i;
	int ret;

	if (v->fd < 0 || v->serving || !nr_rings ||
	    nr_rings > VHOST_MAX_RINGS)
		return -EINVAL;
	ret = vhost_ioctl(v, VHOST_SET_FEATURES, &f);
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: VHOST_SET_FEATURES %#llx: "
				"%s",
				v->name, (unsigned long long)f,
				strerror(-ret));
		return ret;
	}
	for (i = 0; i < nr_rings; i++) {
		ret = vh_setup_ring(v, i, &rings[i]);
		if (ret) {
			vh_unset_rings(v, i);
			return ret;
		}
	}
	vh_err_open(v, nr_rings);
	ret = v->ops->backend_on(v, nr_rings, arg);
	if (ret < 0) {
		vh_err_close(v, nr_rings);
		vh_unset_rings(v, nr_rings);
		return ret;
	}
	v->nr_started = nr_rings;
	v->serving = true;
	v->starts++;
	return 0;
}

void vhost_stop(struct vhost_dev *v, struct vhost_ring *rings,
		unsigned int nr_rings)
{
	unsigned int i;
	int ret;

	if (!v->serving)
		return;
	/* Returns once every request in flight has been pushed. */
	v->ops->backend_off(v, v->nr_started);
	for (i = 0; i < v->nr_started; i++) {
		struct vhost_vring_state st = { .index = i };

		ret = vhost_ioctl(v, VHOST_GET_VRING_BASE, &st);
		if (ret < 0) {
			log_ratelimited(&v->rl, LOG_ERROR,
					"%s: engine=vhost: queue %u: "
					"VHOST_GET_VRING_BASE: %s", v->name, i,
					strerror(-ret));
			continue;
		}
		v->stop_base[i] = (uint16_t)st.num;
		if (rings && i < nr_rings)
			rings[i].base = (uint16_t)st.num;
	}
	vh_err_close(v, v->nr_started);
	vh_unset_rings(v, v->nr_started);
	v->serving = false;
}

/* Queues [first, first + n) of @vdev: interrupts direct (@on) or back
 * to notify(). */
static void vh_direct_irq(struct virtio_dev *vdev, unsigned int first,
			  unsigned int n, bool on)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		vdev->tops->direct_irq(vdev, &vdev->queues[first + i], on);
}

int vhost_start_queues(struct vhost_dev *v, struct virtio_dev *vdev,
		       unsigned int first, unsigned int n, uint64_t features,
		       const void *arg)
{
	struct vhost_ring rings[VHOST_MAX_RINGS];
	unsigned int i;
	int ret;

	if (!vdev->tops->direct_irq) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: transport %s cannot take interrupts from "
				"%s", vdev->name, vdev->tops->name,
				v->ops->what);
		return -ENOTSUP;
	}
	if (!n || n > VHOST_MAX_RINGS || first + n > vdev->num_queues)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct virtio_queue *q = &vdev->queues[first + i];

		if (!q->enabled || !q->vq.ready) {
			log_ratelimited(&v->rl, LOG_ERROR,
					"%s: engine=vhost: queue %u is not "
					"enabled", vdev->name, first + i);
			return -EINVAL;
		}
		rings[i] = (struct vhost_ring){
			.size = q->vq.size,
			.desc = q->vq.desc,
			.avail = q->vq.avail,
			.used = q->vq.used,
			.base = q->vq.last_avail_idx,
			.kick_fd = q->kick_fd,
		};
	}
	/* Each ring's call fd before the kernel may signal it. */
	vh_direct_irq(vdev, first, n, true);
	ret = vhost_start(v, rings, n, features, arg);
	if (ret)
		vh_direct_irq(vdev, first, n, false);
	return ret;
}

void vhost_stop_queues(struct vhost_dev *v, struct virtio_dev *vdev,
		       unsigned int first, unsigned int n)
{
	struct vhost_ring rings[VHOST_MAX_RINGS];
	unsigned int i;

	if (!v->serving || n > VHOST_MAX_RINGS)
		return;
	for (i = 0; i < n; i++)
		rings[i].base = vdev->queues[first + i].vq.last_avail_idx;
	vhost_stop(v, rings, n);
	/* What the kernel signalled meanwhile is delivered. */
	vh_direct_irq(vdev, first, n, false);
	/* Where serving ended: a resume goes on from there. */
	for (i = 0; i < n; i++)
		vdev->queues[first + i].vq.last_avail_idx = rings[i].base;
}

void vhost_close(struct vhost_dev *v)
{
	if (v->fd < 0)
		return;
	vhost_stop(v, NULL, 0);
	v->sys->close(v->sys->opaque, v->fd);
	v->fd = -1;
}
