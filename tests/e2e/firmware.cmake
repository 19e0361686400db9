# SPDX-License-Identifier: Apache-2.0
# The project's guest kernel booting from a firmware/rootfs image with no
# initramfs (label e2e), included from tests.cmake: e2e.firmware.pci and
# e2e.firmware.mmio, each one run of firmware-test.sh (one L1 boot when
# nested, two L2 boots: 8 vCPUs with the default command line, 1 vCPU with
# a command after "--"), and e2e.firmware.acpi_off, one run of
# acpi-off-test.sh (Kata's kernel parameters with acpi=off, 2 vCPUs, 9
# virtio-mmio disks). The kernel is the guest-kernel target's bzImage;
# where this tree has no such target the tests skip (77) while the kernel
# is absent, and MICROVM_E2E_FIRMWARE_KERNEL may name another one.
set(MICROVM_E2E_FIRMWARE_KERNEL "" CACHE FILEPATH
	"bzImage for e2e.firmware.* (default: the guest-kernel target's)")
if(MICROVM_E2E_FIRMWARE_KERNEL)
	set(fw_kernel ${MICROVM_E2E_FIRMWARE_KERNEL})
	set(fw_require)
else()
	set(fw_kernel ${CMAKE_BINARY_DIR}/firmware/kernel/bzImage)
	# Decided when the build system is generated: firmware/kernel may
	# be included after tests/.
	set(fw_require $<$<TARGET_EXISTS:guest-kernel>:--require-kernel>)
endif()
foreach(transport pci mmio)
	e2e_add(e2e.firmware.${transport} auto
		${E2E_DIR}/firmware-test.sh --microvm ${E2E_MICROVM}
		--artifacts ${E2E_ARTIFACTS} --kernel ${fw_kernel}
		--exit-helper $<TARGET_FILE:microvm_exit>
		--transport ${transport} ${fw_require})
	# guest_kernel (test firmware.kernel) builds the kernel and
	# guest_rootfs the exit helper; a fixture no test sets up is a no-op.
	set_tests_properties(e2e.firmware.${transport} PROPERTIES
		FIXTURES_REQUIRED "e2e;guest_kernel;guest_rootfs")
endforeach()
e2e_add(e2e.firmware.acpi_off auto
	${E2E_DIR}/acpi-off-test.sh --microvm ${E2E_MICROVM}
	--artifacts ${E2E_ARTIFACTS} --kernel ${fw_kernel}
	--exit-helper $<TARGET_FILE:microvm_exit> ${fw_require})
set_tests_properties(e2e.firmware.acpi_off PROPERTIES
	FIXTURES_REQUIRED "e2e;guest_kernel;guest_rootfs")
