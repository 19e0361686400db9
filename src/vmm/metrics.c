// SPDX-License-Identifier: Apache-2.0
/*
 * Metrics streams (metrics.h): a line is written whole or not at all, and
 * the snapshot it reported becomes the next line's base only once it went
 * out (metrics_line.c makes the line); plus the machine's own stream.
 */
#include "vmm/metrics.h"


#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "virtio/vsock.h"
#include "vmm/machine.h"
#include "vmm/metrics_priv.h"

struct metrics *metrics_new(int status_fd)
{
	struct metrics *mt = calloc(1, sizeof(*mt));

	if (!mt)
		return NULL;
	pthread_mutex_init(&mt->lock, NULL);
	mt->status_fd = status_fd;
	mt->owner = gettid();
	mt->rest_fd = -1;
	return mt;
}

void metrics_free(struct metrics *mt)
{
	if (!mt)
		return;
	metrics_free_drives(mt);
	free(mt->vcpu.base);
	free(mt->rest);
	if (mt->status_fd >= 0)
		close(mt->status_fd);
	pthread_mutex_destroy(&mt->lock);
	free(mt);
}

void metrics_get_totals(struct metrics *mt, struct metrics_totals *out)
{
	pthread_mutex_lock(&mt->lock);
	*out = mt->totals;
	pthread_mutex_unlock(&mt->lock);
}

void metrics_print_stats(struct metrics *mt, int fd)
{
	struct metrics_totals t;

	metrics_get_totals(mt, &t);
	dprintf(fd, "microvm: stats metrics: lines %llu dropped %llu fails "
		"%llu\n", (unsigned long long)t.lines,
		(unsigned long long)t.dropped, (unsigned long long)t.fails);
}

/* ---- writing ---- */

/*
 * The rest of an earlier line first. Return: 0 when nothing is left of
 * it, -EAGAIN while some still waits, or -errno.
 */
static int rest_flush(struct metrics *mt, int fd)
{
	ssize_t n;

	if (!mt->rest)
		return 0;
	/* Another destination: the old one keeps its torn line. */
	while (mt->rest_fd == fd && mt->rest_off < mt->rest_len) {
		n = write(fd, mt->rest + mt->rest_off,
			  mt->rest_len - mt->rest_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		if (n == 0)
			return -EAGAIN;
		mt->rest_off += (size_t)n;
	}
	free(mt->rest);
	mt->rest = NULL;
	return 0;
}

/*
 * Write @line (taken: freed or kept as the rest). Return: 0 when it went
 * out or its rest is kept, -EAGAIN when none of it fit, or -errno.
 */
static int line_put(struct metrics *mt, int fd, char *line, size_t len)
{
	size_t off = 0;
	ssize_t n = 0;
	int err = EAGAIN;

	while (off < len) {
		n = write(fd, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EAGAIN;
			break;
		}
		off += (size_t)n;
	}
	if (off == len || off == 0) {
		free(line);
		if (off == len)
			return 0;
		return err == EWOULDBLOCK ? -EAGAIN : -err;
	}
	mt->rest = line;
	mt->rest_len = len;
	mt->rest_off = off;
	mt->rest_fd = fd;
	return 0;
}

int metrics_emit(struct metrics *mt, const struct metrics_source *src,
		 int fd)
{
	size_t len = 0;
	char *line;
	int ret;

	pthread_mutex_lock(&mt->lock);
	ret = metrics_snap(mt, src);
	if (ret)
		goto out;
	ret = rest_flush(mt, fd);
	if (!ret) {
		line = metrics_line(mt, src, &len);
		ret = line ? line_put(mt, fd, line, len) : -ENOMEM;
	}
	if (!ret) {
		mt->totals.lines++;
		metrics_snap_commit(mt);
	} else if (ret == -EAGAIN) {
		mt->totals.dropped++;
	} else {
		mt->totals.fails++;
	}
out:
	pthread_mutex_unlock(&mt->lock);
	return ret;
}

int metrics_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK |
				    O_CLOEXEC, 0600);

	if (fd < 0) {
		fd = -errno;
		snprintf(err, errlen, "metrics path %s: %s", path,
			 strerror(-fd));
	}
	return fd;
}

/* ---- the machine's stream ---- */

int metrics_init(struct machine *m)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	m->metrics = metrics_new(fd);
	if (!m->metrics) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	return 0;
}

void metrics_exit(struct machine *m)
{
	metrics_free(m->metrics);
	m->metrics = NULL;
}

int metrics_write(struct machine *m, int fd)
{
	struct metrics_drive drives[CONFIG_MAX_DISKS];
	struct metrics_net nets[CONFIG_MAX_NETS];
	struct vsock_dev_stats vs;
	struct metrics_source src = {
		.drives = drives,
		.nets = nets,
		.vcpus = m->vm.vcpus,
		.nr_vcpus = m->vm.ncpus,
	};

	if (!m->metrics)
		return -ENODEV;
	if (!machine_vsock_stats(m, &vs))
		src.vsock = &vs;
	src.nr_drives = machine_metrics_drives(m, drives, CONFIG_MAX_DISKS);
	src.nr_nets = machine_metrics_nets(m, nets, CONFIG_MAX_NETS);
	return metrics_emit(m->metrics, &src, fd);
}
