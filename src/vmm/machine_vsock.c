// SPDX-License-Identifier: Apache-2.0
/*
 * The machine's vsock device (--vsock, PUT /vsock): a virtio-vsock
 * device (virtio/vsock.h) whose host side is Firecracker's hybrid vsock
 * or the kernel's vhost_vsock (engine=vhost), on the transport the
 * configuration names (machine_virtio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/vsock.h"
#include "virtio/vsock_vhost.h"
#include "vmm/machine.h"
#include "vmm/machine_virtio.h"

struct machine_vsock {
	struct machine_vdev mv;
	struct vsock_dev *dev;
};

/* One line for what vsock_dev_create() refused, naming the fix. */
static void vsock_create_error(const struct config_vsock *vc, int ret,
			       char *err, size_t errlen)
{
	if (vc->engine != CONFIG_VSOCK_VHOST)
		snprintf(err, errlen, "vsock uds_path %s: %s", vc->uds_path,
			 ret == -EADDRINUSE ?
			 "exists already (remove the old socket file)" :
			 strerror(-ret));
	else if (ret == -EADDRINUSE)
		snprintf(err, errlen,
			 "vsock engine=vhost: guest CID %llu is in use (another "
			 "VM or vhost-vsock user has it): choose another cid",
			 (unsigned long long)vc->guest_cid);
	else if (ret == -ENOENT || ret == -ENXIO || ret == -ENODEV)
		snprintf(err, errlen,
			 "vsock engine=vhost: no /dev/vhost-vsock: modprobe "
			 "vhost_vsock");
	else
		snprintf(err, errlen, "vsock engine=vhost (guest CID %llu): %s",
			 (unsigned long long)vc->guest_cid, strerror(-ret));
}

int machine_attach_vsock(struct machine *m, char *err, size_t errlen)
{
	const struct config_vsock *vc = &m->cfg->vsock;
	struct vsock_config c = {
		.guest_cid = vc->guest_cid,
		.uds_path = vc->uds_path,
		.engine = vc->engine == CONFIG_VSOCK_VHOST ?
			  VSOCK_ENGINE_VHOST : VSOCK_ENGINE_HYBRID,
	};
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
		vsock_create_error(vc, ret, err, errlen);
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

int machine_vsock_stats(struct machine *m, struct vsock_dev_stats *out)
{
	if (!m->vsock || !m->vsock->dev)
		return -ENODEV;
	vsock_dev_get_stats(m->vsock->dev, out);
	return 0;
}

unsigned int machine_vsock_fds(const struct machine *m)
{
	if (!m->vsock)
		return 0;
	/* engine=vhost: the ring-error eventfds, their epoll set and stop
	 * eventfd (vhost.c), at each start. */
	if (m->cfg->vsock.engine == CONFIG_VSOCK_VHOST)
		return VSOCK_VHOST_RINGS + 2;
	/* Each connection's socket, the worker's epoll set and doorbell. */
	return VSOCK_MAX_CONNS + 2;
}
