// SPDX-License-Identifier: Apache-2.0
/*
 * Tap queues for virtio-net (tap.h): /dev/net/tun opened once per queue
 * and attached to the interface with TUNSETIFF, the vnet header size set
 * to that of struct virtio_net_hdr_mrg_rxbuf (what VERSION_1 always
 * uses), and the receive offloads set from the negotiated features.
 */
#include "virtio/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "virtio/net_hdr.h"

static int tap_open_one(const char *ifname, bool mq, char *err,
			size_t errlen)
{
	struct ifreq ifr;
	int fd, hdr = NET_HDR_SIZE, ret;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "tap %s: /dev/net/tun: %s", ifname,
			 strerror(-ret));
		return ret;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR |
			(mq ? IFF_MULTI_QUEUE : 0);
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		ret = -errno;
		snprintf(err, errlen, "tap %s: TUNSETIFF: %s", ifname,
			 strerror(-ret));
		goto err_close;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr)) {
		ret = -errno;
		snprintf(err, errlen, "tap %s: TUNSETVNETHDRSZ %d: %s", ifname,
			 hdr, strerror(-ret));
		goto err_close;
	}
	/* Nothing offloaded until the guest says what it takes. */
	if (ioctl(fd, TUNSETOFFLOAD, 0ul)) {
		ret = -errno;
		snprintf(err, errlen, "tap %s: TUNSETOFFLOAD: %s", ifname,
			 strerror(-ret));
		goto err_close;
	}
	return fd;

err_close:
	close(fd);
	return ret;
}

int net_tap_open(const char *ifname, unsigned int queues, int *fds,
		 char *err, size_t errlen)
{
	unsigned int i;
	int fd;

	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "tap \"%s\": name must be 1 to %d bytes",
			 ifname ? ifname : "", IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (!queues || queues > NET_TAP_MAX_QUEUES) {
		snprintf(err, errlen, "tap %s: %u queues: must be 1 to %d",
			 ifname, queues, NET_TAP_MAX_QUEUES);
		return -EINVAL;
	}
	for (i = 0; i < queues; i++) {
		fd = tap_open_one(ifname, queues > 1, err, errlen);
		if (fd < 0)
			goto err_close;
		fds[i] = fd;
	}
	return 0;

err_close:
	while (i--)
		close(fds[i]);
	return fd;
}

unsigned int net_tap_offloads(uint64_t features)
{
	unsigned int off = 0;

	/* The kernel takes TSO only together with checksum offload. */
	if (!(features & (1ull << VIRTIO_NET_F_GUEST_CSUM)))
		return 0;
	off |= TUN_F_CSUM;
	if (features & (1ull << VIRTIO_NET_F_GUEST_TSO4))
		off |= TUN_F_TSO4;
	if (features & (1ull << VIRTIO_NET_F_GUEST_TSO6))
		off |= TUN_F_TSO6;
	return off;
}

int net_tap_set_queue(int fd, bool on)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = on ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE;
	if (ioctl(fd, TUNSETQUEUE, &ifr))
		return -errno;
	return 0;
}

int net_tap_set_offload(int fd, uint64_t features)
{
	unsigned long off = net_tap_offloads(features);

	if (ioctl(fd, TUNSETOFFLOAD, off))
		return -errno;
	return 0;
}
