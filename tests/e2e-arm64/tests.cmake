# SPDX-License-Identifier: Apache-2.0
# The arm64 nested tier (label e2e-arm64): an emulated arm64 L1 machine
# (qemu-system-aarch64 TCG, virt with EL2 and GICv3) booting Debian's cloud
# arm64 kernel, where the arm64 microvm runs L2 guests. l1_kvm checks L1
# alone (/dev/kvm and the KVM calls the arm64 machine code needs); the
# rest (below) boots L2 guests under the cross-built arm64 microvm.
# prepare.sh (run by each test, cached) downloads the kernel and
# busybox-static for arm64 into ${CMAKE_BINARY_DIR}/e2e-arm64-artifacts.
# Exit status 77 = skipped.
set(E2E_ARM64_DIR ${CMAKE_CURRENT_LIST_DIR})
set(E2E_ARM64_ARTIFACTS ${CMAKE_BINARY_DIR}/e2e-arm64-artifacts)

# Every CI run: e2e-arm64.disk_mmio and disk_pci (they boot, check the
# CPUs and poweroff too). The rest is the full tier: tier.sh skips it
# (77, "Skipped" in CTest's list) unless MICROVM_E2E_ARM64=full.
set(E2E_ARM64_FULL ${E2E_ARM64_DIR}/tier.sh)
add_test(NAME e2e-arm64.l1_kvm
	COMMAND ${E2E_ARM64_FULL} ${E2E_ARM64_DIR}/l1-kvm-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS})
# RESOURCE_LOCK: tests/lanes.cmake moves them all to the second guest
# lane (one arm64 L1 at a time; they share the artifacts and the build).
set_tests_properties(e2e-arm64.l1_kvm PROPERTIES LABELS "e2e;e2e-arm64"
	SKIP_RETURN_CODE 77 TIMEOUT 600 RESOURCE_LOCK e2e_vm)

# The arm64 microvm itself (boot-test.sh): cross-built into
# E2E_ARM64_CROSS, run in the same L1 on Debian's kernel as L2 with a
# busybox initramfs. boot_cpus1/2/8: L2's /init runs with all CPUs online
# and its poweroff ends microvm with 0; timeout: L2 never powers off and
# --timeout 60 ends microvm with 124 (L2 booting or at /init by then,
# as the load allows) and --verbose dumps its vCPU.
set(E2E_ARM64_CROSS ${CMAKE_BINARY_DIR}/e2e-arm64-cross)
# 8 vCPUs on L1's 2 take much longer under TCG (450 s once on a busy
# machine): their L1 run may take 840 s.
foreach(n 1 2 8)
	if(n EQUAL 8)
		set(bound 840)
	else()
		set(bound 480)
	endif()
	# CTest's bound: the L1 run's, plus the cross build and packing.
	math(EXPR ctest_bound "${bound} + 120")
	add_test(NAME e2e-arm64.boot_cpus${n}
		COMMAND ${E2E_ARM64_FULL} ${E2E_ARM64_DIR}/boot-test.sh
			--artifacts ${E2E_ARM64_ARTIFACTS}
			--cross-build ${E2E_ARM64_CROSS} --cpus ${n}
			--timeout ${bound})
	set_tests_properties(e2e-arm64.boot_cpus${n} PROPERTIES
		LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77
		TIMEOUT ${ctest_bound} RESOURCE_LOCK e2e_vm)
endforeach()
# boot_cpus8 passed once (microvm 450 s in L1) and failed once (2026-12-02
# 06:58: L2 still booting at microvm's --timeout 810 s, soft lockups on
# all 8 L2 vCPUs: 8 vCPUs on L1's 2, every one a TCG-emulated nested
# guest, starve each other). Off until the 8-vCPU case is made reliable
# (L2's `quiet` to cut console exits, a 4-vCPU L1); CTest lists it as
# "Not Run (Disabled)" and `ctest -R e2e-arm64.boot_cpus8` still names it.
set_tests_properties(e2e-arm64.boot_cpus8 PROPERTIES DISABLED TRUE)
# disk_mmio, disk_pci: a 16 MiB read-only image of a known pattern as L2's
# vda over virtio-mmio (SPI through an irqfd) and virtio-pci (MSI-X
# through the ITS, 2 vCPUs so 2 queues); L2's md5 of vda must be L1's.
foreach(t mmio pci)
	if(t STREQUAL pci)
		set(n 2)
	else()
		set(n 1)
	endif()
	add_test(NAME e2e-arm64.disk_${t}
		COMMAND ${E2E_ARM64_DIR}/boot-test.sh
			--artifacts ${E2E_ARM64_ARTIFACTS}
			--cross-build ${E2E_ARM64_CROSS} --cpus ${n} --disk ${t})
	set_tests_properties(e2e-arm64.disk_${t} PROPERTIES
		LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
		RESOURCE_LOCK e2e_vm)
endforeach()
add_test(NAME e2e-arm64.timeout
	COMMAND ${E2E_ARM64_FULL} ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 1 --hang 60)
set_tests_properties(e2e-arm64.timeout PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
