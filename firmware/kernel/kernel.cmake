# SPDX-License-Identifier: Apache-2.0
# The project's guest kernel (firmware/kernel/README.md): the target
# guest-kernel runs build.sh, which leaves bzImage and the PVH vmlinux in
# ${CMAKE_BINARY_DIR}/firmware/kernel and does nothing (seconds) when its
# fragment, its scripts and the linux-source package are unchanged, so the
# target always runs and build.sh decides.
#
# Tests: firmware.kernel_check_config (unit) tests the checker on
# hand-made files; firmware.kernel builds the kernel (CTest fixture
# guest_kernel: a real-guest test that boots it says
# FIXTURES_REQUIRED guest_kernel); firmware.kernel_check_config_real runs
# the checker after real olddefconfig runs in the extracted tree;
# firmware.kernel_boot (e2e) boots the PVH vmlinux on pci and mmio (the
# latter from the disk, no initramfs) and bzImage on mmio ending through
# the exit device, with 8 vCPUs, through tests/e2e/run-guest.sh (three of
# boot-test.sh's six runs: bzImage from the disk on both transports is
# e2e.firmware.*'s).
set(GUEST_KERNEL_DIR ${CMAKE_BINARY_DIR}/firmware/kernel)
set(GUEST_KERNEL_BZIMAGE ${GUEST_KERNEL_DIR}/bzImage)
set(GUEST_KERNEL_VMLINUX ${GUEST_KERNEL_DIR}/vmlinux)
set(GUEST_KERNEL_SRC ${CMAKE_CURRENT_LIST_DIR})

add_custom_target(guest-kernel
	COMMAND ${GUEST_KERNEL_SRC}/build.sh ${GUEST_KERNEL_DIR}
	BYPRODUCTS ${GUEST_KERNEL_BZIMAGE} ${GUEST_KERNEL_VMLINUX}
	COMMENT "Guest kernel (firmware/kernel/build.sh)"
	USES_TERMINAL VERBATIM)

add_test(NAME firmware.kernel_check_config
	COMMAND ${GUEST_KERNEL_SRC}/test-check-config.sh)
set_tests_properties(firmware.kernel_check_config PROPERTIES
	TIMEOUT 60 LABELS "unit;firmware")

# A cold build is about 10 minutes on 2 shared cores (README.md); the
# limit leaves room for a loaded CI machine. A missing package or a bad
# fragment fails the test with the reason; it never skips.
add_test(NAME firmware.kernel
	COMMAND ${GUEST_KERNEL_SRC}/build.sh ${GUEST_KERNEL_DIR})
set_tests_properties(firmware.kernel PROPERTIES
	TIMEOUT 2400 LABELS firmware FIXTURES_SETUP guest_kernel)

add_test(NAME firmware.kernel_check_config_real
	COMMAND ${GUEST_KERNEL_SRC}/test-check-config.sh ${GUEST_KERNEL_DIR}/cache)
set_tests_properties(firmware.kernel_check_config_real PROPERTIES
	TIMEOUT 300 LABELS firmware FIXTURES_REQUIRED guest_kernel)

add_test(NAME firmware.kernel_boot
	COMMAND ${GUEST_KERNEL_SRC}/boot-test.sh --microvm $<TARGET_FILE:microvm>
		--kernel-dir ${GUEST_KERNEL_DIR}
		--artifacts ${CMAKE_BINARY_DIR}/e2e-artifacts --cpus 8
		vmlinux:pci bzImage:mmio:exit:7 vmlinux:mmio:diskroot)
set_tests_properties(firmware.kernel_boot PROPERTIES
	TIMEOUT 900 LABELS "e2e;firmware" SKIP_RETURN_CODE 77
	FIXTURES_REQUIRED "guest_kernel;e2e" RESOURCE_LOCK e2e_vm)

# Snapshot restores give the guest a new VM generation ID and the event
# that makes its vmgenid driver reseed the RNG (the project's kernel is
# the one with that driver).
add_test(NAME firmware.vmgenid
	COMMAND ${GUEST_KERNEL_SRC}/vmgenid-test.sh --microvm $<TARGET_FILE:microvm>
		--kernel-dir ${GUEST_KERNEL_DIR}
		--artifacts ${CMAKE_BINARY_DIR}/e2e-artifacts)
set_tests_properties(firmware.vmgenid PROPERTIES
	TIMEOUT 900 LABELS "e2e;firmware" SKIP_RETURN_CODE 77
	FIXTURES_REQUIRED "guest_kernel;e2e" RESOURCE_LOCK e2e_vm)
