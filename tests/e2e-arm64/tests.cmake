# SPDX-License-Identifier: Apache-2.0
# The arm64 nested tier (label e2e-arm64): an emulated arm64 L1 machine
# (qemu-system-aarch64 TCG, virt with EL2 and GICv3) booting Debian's cloud
# arm64 kernel, where the arm64 microvm will run. Today it checks L1 alone:
# /dev/kvm and the KVM calls the arm64 machine code needs. prepare.sh (run
# by the test, cached) downloads the kernel and busybox-static for arm64
# into ${CMAKE_BINARY_DIR}/e2e-arm64-artifacts. Exit status 77 = skipped.
set(E2E_ARM64_DIR ${CMAKE_CURRENT_LIST_DIR})
set(E2E_ARM64_ARTIFACTS ${CMAKE_BINARY_DIR}/e2e-arm64-artifacts)

add_test(NAME e2e-arm64.l1_kvm
	COMMAND ${E2E_ARM64_DIR}/l1-kvm-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS})
# RESOURCE_LOCK e2e_vm: one emulated machine at a time, as tests/e2e.
set_tests_properties(e2e-arm64.l1_kvm PROPERTIES LABELS "e2e;e2e-arm64"
	SKIP_RETURN_CODE 77 TIMEOUT 600 RESOURCE_LOCK e2e_vm)
