// SPDX-License-Identifier: Apache-2.0
/*
 * The virtio-net device on a real tap (src/virtio/tap.c) in a private
 * network namespace: net_tap_open() with one and with several queues
 * (IFF_MULTI_QUEUE), its refusals, TUNSETOFFLOAD from the negotiated
 * features at DRIVER_OK, and a frame each way through the kernel: the
 * guest's ARP request for the tap's address goes out, the kernel's ARP
 * reply comes back into an rx buffer. Needs root and /dev/net/tun
 * (exits 77 without them).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>

#include "net_driver.h"
#include "virtio/tap.h"

#define IFNAME "mvtest0"
#define HOST_IP "10.11.12.1"
#define GUEST_IP "10.11.12.2"

static int skip(const char *why)
{
	printf("skip: %s\n", why);
	return 77;
}

static int if_config(const char *name)
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = -1;

	if (s < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, HOST_IP, &sin->sin_addr);
	if (ioctl(s, SIOCSIFADDR, &ifr))
		goto out;
	inet_pton(AF_INET, "255.255.255.0", &sin->sin_addr);
	if (ioctl(s, SIOCSIFNETMASK, &ifr))
		goto out;
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		goto out;
	ifr.ifr_flags |= IFF_UP;
	ret = ioctl(s, SIOCSIFFLAGS, &ifr);
out:
	close(s);
	return ret;
}

static void test_open_errors(void)
{
	char err[256];
	int fds[NET_TAP_MAX_QUEUES + 1];

	CHECK_EQ(net_tap_open("", 1, fds, err, sizeof(err)), -EINVAL);
	CHECK_EQ(net_tap_open("a-name-far-too-long", 1, fds, err,
			      sizeof(err)), -EINVAL);
	CHECK(strstr(err, "name") != NULL);
	CHECK_EQ(net_tap_open(IFNAME, 0, fds, err, sizeof(err)), -EINVAL);
	CHECK_EQ(net_tap_open(IFNAME, NET_TAP_MAX_QUEUES + 1, fds, err,
			      sizeof(err)), -EINVAL);
}

/* Several queues of one multi-queue tap; each takes the offloads. */
static void test_open_mq(void)
{
	char err[256];
	int fds[4], i;

	CHECK_EQ(net_tap_open("mvtestmq", 4, fds, err, sizeof(err)), 0);
	for (i = 0; i < 4; i++) {
		CHECK(fcntl(fds[i], F_GETFL) & O_NONBLOCK);
		CHECK_EQ(net_tap_set_offload(fds[i],
					     F(VIRTIO_NET_F_GUEST_CSUM) |
					     F(VIRTIO_NET_F_GUEST_TSO4)), 0);
		close(fds[i]);
	}
}

/* An ARP request for HOST_IP from the guest. */
static void tx_arp(void)
{
	static const uint8_t mac[6] = TEST_MAC;
	uint64_t g = TX_GPA, f = g + NET_HDR_SIZE;
	uint8_t *p = host(f);

	memset(host(g), 0, NET_HDR_SIZE + 60);
	memset(p, 0xff, 6);
	memcpy(p + 6, mac, 6);
	p[12] = 0x08, p[13] = 0x06;             /* ARP */
	p[14] = 0, p[15] = 1, p[16] = 8, p[17] = 0; /* Ethernet, IPv4 */
	p[18] = 6, p[19] = 4, p[20] = 0, p[21] = 1; /* request */
	memcpy(p + 22, mac, 6);
	inet_pton(AF_INET, GUEST_IP, p + 28);
	inet_pton(AF_INET, HOST_IP, p + 38);
	desc_set(RING_GPA(1), 0, g, NET_HDR_SIZE + 60, 0, 0);
	avail_add(1, 0);
	kick(1);
}

/* Whether rx buffer @id holds the kernel's ARP reply to the guest. */
static bool is_arp_reply(uint16_t id, uint32_t len)
{
	static const uint8_t mac[6] = TEST_MAC;
	const uint8_t *p = host(rx_buf(0, id, SMALL) + NET_HDR_SIZE);
	uint8_t ip[4];

	inet_pton(AF_INET, GUEST_IP, ip);
	return len >= NET_HDR_SIZE + 42 && !memcmp(p, mac, 6) &&
	       p[12] == 0x08 && p[13] == 0x06 && p[21] == 2 &&
	       !memcmp(p + 32, mac, 6) && !memcmp(p + 38, ip, 4);
}

static void test_arp(int fd)
{
	uint64_t end = now_ms() + 5000;
	uint16_t seen = 0, i;
	uint32_t id, len;
	bool found = false;

	dev_open_fds(1, &fd, NULL);
	drv_start(F(VIRTIO_NET_F_MRG_RXBUF) | F(VIRTIO_NET_F_CSUM) |
		  F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4));
	for (i = 0; i < QSZ; i++)
		rx_add(0, i, SMALL);
	kick(0);
	tx_arp();
	CHECK(wait_used(1, 1));
	while (!found && now_ms() < end && seen < QSZ) {
		if (used_idx(0) == seen) {
			sleep_ms(1);
			continue;
		}
		used_elem(0, seen++, &id, &len);
		found = is_arp_reply((uint16_t)id, len);
	}
	CHECK(found);
	set_status(0);
	dev_close(); /* closes fd */
}

int main(void)
{
	char err[256];
	int fd;

	if (geteuid() != 0)
		return skip("not root");
	if (access("/dev/net/tun", R_OK | W_OK))
		return skip("no /dev/net/tun");
	if (unshare(CLONE_NEWNET))
		return skip("cannot make a network namespace");
	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	if (net_tap_open(IFNAME, 1, &fd, err, sizeof(err))) {
		printf("%s\n", err);
		return skip("cannot open a tap");
	}
	CHECK_EQ(if_config(IFNAME), 0);
	test_open_errors();
	test_open_mq();
	test_arp(fd);
	return test_done();
}
