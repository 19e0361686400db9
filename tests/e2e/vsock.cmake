# SPDX-License-Identifier: Apache-2.0
# The virtio-vsock device with Firecracker's hybrid host side on a real
# guest (label e2e), included from tests.cmake: e2e.vsock.hybrid, one run
# of vsock-test.sh (one L1 boot when nested) that boots the project's
# kernel (its AF_VSOCK driver built in) from a firmware/rootfs image on
# 2 vCPUs with --vsock over virtio-mmio, then over virtio-pci, in
# sequence: the Kata agent's CONNECT 1024 replayed, 4 MiB each way from
# either end, 64 connections at once, and a reader that never reads
# (back-pressure within the credit, no memory growth); then the same
# with engine=vhost on virtio-pci, the kernel's vhost_vsock carrying the
# streams to L1's AF_VSOCK sockets. The kernel is the
# one firmware.cmake names (fw_kernel, fw_require).
e2e_add(e2e.vsock.hybrid auto
	${E2E_DIR}/vsock-test.sh --microvm ${E2E_MICROVM}
	--artifacts ${E2E_ARTIFACTS} --kernel ${fw_kernel}
	--exit-helper $<TARGET_FILE:microvm_exit>
	--transport mmio --transport pci --transport pci-vhost ${fw_require})
# guest_kernel (test firmware.kernel) builds the kernel and guest_rootfs
# the exit helper; a fixture no test sets up is a no-op.
set_tests_properties(e2e.vsock.hybrid PROPERTIES
	FIXTURES_REQUIRED "e2e;guest_kernel;guest_rootfs")
