# SPDX-License-Identifier: Apache-2.0
# The virtio-net device on a real guest (label e2e), included from
# tests.cmake: net-test.sh boots the test kernel and initramfs (its
# virtio_net module) with --net over a multi-queue tap that microvm
# creates, one L1 boot when nested (net-l1.sh, in a network namespace of
# its own), one microvm run per --run: ping both ways and 4 MiB of TCP
# each way per vCPU, every byte checked at both ends, each queue pair
# carrying traffic both ways.
# e2e.net.tap: 2 vCPUs, one queue pair each (the default): the VMM's own
# queue workers and the kernel's vhost_net, each on virtio-mmio and on
# virtio-pci with MSI-X; 4 queue pairs for 2 vCPUs (the guest takes 2:
# the tap must send to those only); then the VMM's workers from a
# Firecracker config
# file whose interface has rx and tx bandwidth limiters of 256 KiB/s
# (1 MiB per flow: 8 s each way), each direction measured within 10% of
# it. The limit is a
# fifth of what this engine moves unlimited in the emulator (about
# 1.4 MB/s guest to host, 2.4 MB/s back, on the 2-core machine).
e2e_add(e2e.net.tap auto ${CMAKE_CURRENT_LIST_DIR}/net-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS} --cpus 2
	--run mmio:transport=mmio --run pci-vhost:transport=pci,engine=vhost
	--run pci:transport=pci --run mmio-vhost:transport=mmio,engine=vhost
	--run pci-4pairs:transport=pci,queues=4
	--run limited:config-file,rate=262144,bytes=1048576)
