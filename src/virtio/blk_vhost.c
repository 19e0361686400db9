// SPDX-License-Identifier: Apache-2.0
/*
 * The vhost-blk queue backend: sets up /dev/vhost-blk (the project's
 * kernel module) with the VM's memory table and each queue's rings, kick
 * and call eventfds, hands it the image, and takes the ring state back at
 * reset or exit. The order of the ioctls is the one the ABI header gives
 * (kernel/vhost-blk/uapi/vhost_blk.h).
 */
#include "virtio/blk_vhost.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/confine.h"
#include "util/evloop.h"
#include "vhost_blk.h"
#include "virtio/blk_req.h"

#define BLK_VHOST_FIX_LOAD                                               \
	"modprobe vhost_blk, or insmod the vhost_blk.ko "                    \
	"that the build target vhost-blk-module builds (kernel/vhost-blk/"   \
	"README lists the supported kernels); or use engine=io_uring"

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

const struct blk_vhost_sys blk_vhost_sys_host = {
	.open = host_open,
	.ioctl = host_ioctl,
	.close = host_close,
};

static int vh_ioctl(struct blk_vhost *v, unsigned long req, void *arg)
{
	return v->sys->ioctl(v->sys->opaque, v->fd, req, arg);
}

static int vh_open_device(struct blk_vhost *v, const char *path)
{
	int fd = v->sys->open(v->sys->opaque, path);

	if (fd >= 0) {
		v->fd = fd;
		return 0;
	}
	if (fd == -ENOENT || fd == -ENXIO || fd == -ENODEV)
		log_error("%s: engine=vhost: %s: %s: the vhost-blk module is "
			  "not loaded: %s", v->name, path, strerror(-fd),
			  BLK_VHOST_FIX_LOAD);
	else if (fd == -EACCES || fd == -EPERM)
		log_error("%s: engine=vhost: %s: %s: microvm needs read-write "
			  "access to it (its group, or a udev rule)", v->name,
			  path, strerror(-fd));
	else
		log_error("%s: engine=vhost: cannot open %s: %s", v->name,
			  path, strerror(-fd));
	return fd;
}

static int vh_check_version(struct blk_vhost *v, const char *path)
{
	__u32 ver = 0;
	int ret;

	ret = vh_ioctl(v, VHOST_BLK_GET_VERSION, &ver);
	if (ret == -ENOTTY || ret == -EINVAL) {
		log_error("%s: engine=vhost: %s is not the project's vhost-blk "
			  "device (VHOST_BLK_GET_VERSION: %s): %s", v->name,
			  path, strerror(-ret), BLK_VHOST_FIX_LOAD);
		return -ENODEV;
	}
	if (ret < 0) {
		log_error("%s: engine=vhost: %s: VHOST_BLK_GET_VERSION: %s",
			  v->name, path, strerror(-ret));
		return ret;
	}
	if (ver != VHOST_BLK_API_VERSION) {
		log_error("%s: engine=vhost: %s speaks ABI version %u, this "
			  "microvm version %u: rebuild the module from this "
			  "tree (build target vhost-blk-module) and reload it "
			  "(rmmod vhost_blk; insmod build/.../vhost_blk.ko)",
			  v->name, path, ver, VHOST_BLK_API_VERSION);
		return -EPROTO;
	}
	return 0;
}

static int vh_set_mem_table(struct blk_vhost *v, const struct guest_mem *gm)
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
	ret = vh_ioctl(v, VHOST_SET_MEM_TABLE, mem);
	free(mem);
	if (ret < 0)
		log_error("%s: engine=vhost: VHOST_SET_MEM_TABLE (%u regions): "
			  "%s", v->name, gm->nr_regions, strerror(-ret));
	return ret < 0 ? ret : 0;
}

int blk_vhost_open(struct blk_vhost *v, const struct blk_vhost_sys *sys,
		   const struct guest_mem *gm, const char *name)
{
	const char *path = getenv("MICROVM_VHOST_BLK_DEVICE");
	char copy[sizeof(v->name)];
	__u64 features = 0;
	int ret;

	/* @name may be v->name itself. */
	snprintf(copy, sizeof(copy), "%s", name);
	memset(v, 0, sizeof(*v));
	v->sys = sys;
	v->fd = -1;
	memcpy(v->name, copy, sizeof(v->name));
	name = v->name;
	v->err_stop_fd = v->err_epfd = -1;
	for (unsigned int i = 0; i < VIRTIO_MAX_QUEUES; i++)
		v->err_fd[i] = -1;
	if (!path || !*path)
		path = BLK_VHOST_DEVICE;
	ret = vh_open_device(v, path);
	if (ret)
		return ret;
	ret = vh_check_version(v, path);
	if (ret)
		goto err_close;
	ret = vh_ioctl(v, VHOST_SET_OWNER, NULL);
	if (ret < 0) {
		log_error("%s: engine=vhost: VHOST_SET_OWNER: %s", name,
			  strerror(-ret));
		goto err_close;
	}
	ret = vh_ioctl(v, VHOST_GET_FEATURES, &features);
	if (ret < 0) {
		log_error("%s: engine=vhost: VHOST_GET_FEATURES: %s", name,
			  strerror(-ret));
		goto err_close;
	}
	if (!(features & (1ull << VIRTIO_F_VERSION_1))) {
		log_error("%s: engine=vhost: the module does not serve "
			  "VIRTIO_F_VERSION_1 (features %#llx); rebuild it "
			  "from this tree (build target vhost-blk-module)",
			  name, (unsigned long long)features);
		ret = -EPROTO;
		goto err_close;
	}
	v->features = features;
	ret = vh_set_mem_table(v, gm);
	if (ret)
		goto err_close;
	return 0;

err_close:
	sys->close(sys->opaque, v->fd);
	v->fd = -1;
	return ret;
}

/* Bits the VMM answers alone, from its configuration space. */
#define BLK_VHOST_VMM_FEATURES                                           \
	(1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |      \
	 1ull << VIRTIO_BLK_F_GEOMETRY | 1ull << VIRTIO_BLK_F_RO |           \
	 1ull << VIRTIO_BLK_F_BLK_SIZE | 1ull << VIRTIO_BLK_F_TOPOLOGY |     \
	 1ull << VIRTIO_BLK_F_MQ)

uint64_t blk_vhost_features(const struct blk_vhost *v, uint64_t offered)
{
	return offered & (v->features | BLK_VHOST_VMM_FEATURES);
}

int blk_vhost_set_call(struct blk_vhost *v, unsigned int index, int fd)
{
	struct vhost_vring_file f = { .index = index, .fd = fd };
	int ret;

	ret = vh_ioctl(v, VHOST_SET_VRING_CALL, &f);
	if (ret < 0)
		log_ratelimited(&v->rl, LOG_WARN,
				"%s: queue %u: VHOST_SET_VRING_CALL: %s",
				v->name, index, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int vh_setup_ring(struct blk_vhost *v,
			 const struct blk_backend_queue *bq)
{
	struct vhost_vring_state num = { .index = bq->index, .num = bq->size };
	struct vhost_vring_state base = { .index = bq->index,
					  .num = bq->base };
	struct vhost_vring_addr addr = {
		.index = bq->index,
		.desc_user_addr = (uintptr_t)bq->desc,
		.avail_user_addr = (uintptr_t)bq->avail,
		.used_user_addr = (uintptr_t)bq->used,
	};
	struct vhost_vring_file kick = { .index = bq->index,
					 .fd = bq->kick_fd };
	const char *what;
	int ret;

	what = "VHOST_SET_VRING_NUM";
	ret = vh_ioctl(v, VHOST_SET_VRING_NUM, &num);
	if (ret >= 0) {
		what = "VHOST_SET_VRING_ADDR";
		ret = vh_ioctl(v, VHOST_SET_VRING_ADDR, &addr);
	}
	if (ret >= 0) {
		what = "VHOST_SET_VRING_BASE";
		ret = vh_ioctl(v, VHOST_SET_VRING_BASE, &base);
	}
	if (ret >= 0) {
		what = "VHOST_SET_VRING_KICK";
		ret = vh_ioctl(v, VHOST_SET_VRING_KICK, &kick);
	}
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: queue %u: %s: %s", v->name,
				bq->index, what, strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- ring errors: VHOST_SET_VRING_ERR eventfds and their thread ---- */

static void *vh_err_thread(void *arg)
{
	struct blk_vhost *v = arg;
	uint64_t tags[VIRTIO_MAX_QUEUES + 1];
	char name[16];
	int i, n;

	snprintf(name, sizeof(name), "%.9s-vherr", v->name);
	pthread_setname_np(pthread_self(), name);
	confine_thread(CONFINE_IO);
	for (;;) {
		n = evloop_wait(v->err_epfd, tags, VIRTIO_MAX_QUEUES + 1, -1);
		for (i = 0; i < n; i++) {
			if (tags[i] == VIRTIO_MAX_QUEUES)
				return NULL;
			if (evfd_drain(v->err_fd[tags[i]]) && v->err_fn)
				v->err_fn(v->err_opaque,
					  (unsigned int)tags[i]);
		}
	}
}

static void vh_err_close(struct blk_vhost *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vhost_vring_file f = { .index = i, .fd = -1 };

		if (v->err_fd[i] < 0)
			continue;
		vh_ioctl(v, VHOST_SET_VRING_ERR, &f);
	}
	if (v->err_running) {
		evfd_signal(v->err_stop_fd);
		pthread_join(v->err_thread, NULL);
		v->err_running = false;
	}
	for (i = 0; i < VIRTIO_MAX_QUEUES; i++) {
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
static void vh_err_open(struct blk_vhost *v, unsigned int n)
{
	sigset_t all, old;
	unsigned int i;
	int ret;

	v->err_stop_fd = evfd_new();
	v->err_epfd = evloop_new();
	ret = v->err_stop_fd < 0 ? v->err_stop_fd :
	      v->err_epfd < 0 ? v->err_epfd :
	      evloop_add(v->err_epfd, v->err_stop_fd, VIRTIO_MAX_QUEUES);
	for (i = 0; !ret && i < n; i++) {
		struct vhost_vring_file f = { .index = i };

		v->err_fd[i] = f.fd = evfd_new();
		ret = f.fd < 0 ? f.fd : evloop_add(v->err_epfd, f.fd, i);
		if (!ret)
			ret = vh_ioctl(v, VHOST_SET_VRING_ERR, &f);
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

static int vh_set_backend(struct blk_vhost *v,
			  const struct vhost_blk_backend *be)
{
	return vh_ioctl(v, VHOST_BLK_SET_BACKEND, (void *)be);
}

/* Detach the rings of queues [0, n): the kick fd back to none. */
static void vh_unset_rings(struct blk_vhost *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vhost_vring_file kick = { .index = i, .fd = -1 };

		vh_ioctl(v, VHOST_SET_VRING_KICK, &kick);
	}
}

int blk_vhost_start(struct blk_vhost *v, const struct blk_backend_start *s,
		    const struct blk_vhost_image *img)
{
	struct vhost_blk_backend be;
	__u64 features = s->features;
	unsigned int i;
	int ret;

	if (v->serving || !s->nr_queues)
		return -EINVAL;
	ret = vh_ioctl(v, VHOST_SET_FEATURES, &features);
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: VHOST_SET_FEATURES %#llx: "
				"%s",
				v->name, (unsigned long long)features,
				strerror(-ret));
		return ret;
	}
	for (i = 0; i < s->nr_queues; i++) {
		ret = vh_setup_ring(v, &s->queues[i]);
		if (ret) {
			vh_unset_rings(v, i);
			return ret;
		}
	}
	vh_err_open(v, s->nr_queues);
	memset(&be, 0, sizeof(be));
	be.fd = img->fd;
	be.flags = (img->readonly ? VHOST_BLK_F_READONLY : 0) |
		   (img->no_flush ? VHOST_BLK_F_NO_FLUSH : 0);
	be.capacity = img->capacity;
	be.num_queues = s->nr_queues;
	be.num_workers = 0;
	be.poll_us = img->poll_us;
	/* NUL-padded, not NUL-terminated: 20 bytes is a valid serial. */
	if (img->serial)
		memcpy(be.serial, img->serial,
		       strnlen(img->serial, sizeof(be.serial)));
	ret = vh_set_backend(v, &be);
	if (ret < 0) {
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: the module cannot serve the "
				"image (VHOST_BLK_SET_BACKEND: %s): it takes "
				"regular files and block devices, on the "
				"kernels kernel/vhost-blk/README lists; or use "
				"engine=io_uring", v->name,
				strerror(-ret));
		vh_err_close(v, s->nr_queues);
		vh_unset_rings(v, s->nr_queues);
		return ret;
	}
	v->nr_started = s->nr_queues;
	v->serving = true;
	v->starts++;
	return 0;
}

void blk_vhost_stop(struct blk_vhost *v, struct blk_backend_start *s)
{
	struct vhost_blk_backend be;
	unsigned int i;
	int ret;

	if (!v->serving)
		return;
	memset(&be, 0, sizeof(be));
	be.fd = -1;
	/* Returns once every request in flight has been pushed. */
	ret = vh_set_backend(v, &be);
	if (ret < 0)
		log_ratelimited(&v->rl, LOG_ERROR,
				"%s: engine=vhost: stopping: "
				"VHOST_BLK_SET_BACKEND -1: %s", v->name,
				strerror(-ret));
	for (i = 0; i < v->nr_started; i++) {
		struct vhost_vring_state st = { .index = i };

		ret = vh_ioctl(v, VHOST_GET_VRING_BASE, &st);
		if (ret < 0) {
			log_ratelimited(&v->rl, LOG_ERROR,
					"%s: engine=vhost: queue %u: "
					"VHOST_GET_VRING_BASE: %s", v->name, i,
					strerror(-ret));
			continue;
		}
		v->stop_base[i] = (uint16_t)st.num;
		if (s && i < s->nr_queues)
			s->queues[i].base = (uint16_t)st.num;
	}
	vh_err_close(v, v->nr_started);
	vh_unset_rings(v, v->nr_started);
	v->serving = false;
}

void blk_vhost_close(struct blk_vhost *v)
{
	if (v->fd < 0)
		return;
	blk_vhost_stop(v, NULL);
	v->sys->close(v->sys->opaque, v->fd);
	v->fd = -1;
}
