// SPDX-License-Identifier: Apache-2.0
/*
 * The machine's vsock device (--vsock, PUT /vsock): a virtio-vsock
 * device (virtio/vsock.h) whose host side is Firecracker's hybrid vsock,
 * on the transport the configuration names (machine_virtio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/vsock.h"
#include "vmm/machine.h"
#include "vmm/machine_virtio.h"

struct machine_vsock {
	struct machine_vdev mv;
	struct vsock_dev *dev;
};

int machine_attach_vsock(struct machine *m, char *err, size_t errlen)
{
	const struct config_vsock *vc = &m->cfg->vsock;
	struct vsock_config c = { .guest_cid = vc->guest_cid,
				  .uds_path = vc->uds_path };
	struct machine_vsock *mvs;
	int ret;

	if (!vc->set)
		return 0;
	mvs = calloc(1, sizeof(*mvs));
	if (!mvs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->vsock = mvs;
	mvs->mv.transport = vc->transport;
	ret = vsock_dev_create(&mvs->dev, &mvs->mv.vdev, &c, &m->vm.mem,
			       "vsock");
	if (ret) {
		snprintf(err, errlen, "vsock uds_path %s: %s", vc->uds_path,
			 ret == -EADDRINUSE ?
			 "exists already (remove the old socket file)" :
			 strerror(-ret));
		return ret;
	}
	return machine_vdev_attach(m, &mvs->mv, "vsock", err, errlen);
}

void machine_detach_vsock(struct machine *m)
{
	struct machine_vsock *mvs = m->vsock;

	if (!mvs)
		return;
	machine_vdev_detach(&mvs->mv);
	if (mvs->dev)
		vsock_dev_destroy(mvs->dev);
	free(mvs);
	m->vsock = NULL;
}

void machine_vsock_keep_path(struct machine *m)
{
	if (m->vsock && m->vsock->dev)
		vsock_dev_keep_path(m->vsock->dev);
}

void machine_vsock_print_stats(struct machine *m, int fd)
{
	if (!m->vsock || !m->vsock->dev)
		return;
	virtio_dev_print_stats(&m->vsock->mv.vdev, fd);
	vsock_dev_print_stats(m->vsock->dev, fd);
}

unsigned int machine_vsock_fds(const struct machine *m)
{
	/* Each connection's socket, the worker's epoll set and doorbell. */
	return m->vsock ? VSOCK_MAX_CONNS + 2 : 0;
}
