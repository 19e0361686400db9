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

# Every CI run has the whole tier. e2e-arm64.disk_mmio and disk_pci (they
# boot, check the CPUs, write and verify a disk, and end through the exit
# register and poweroff) always run; the rest goes through tier.sh, which
# skips it (77, "Skipped" in CTest's list) with MICROVM_E2E_ARM64=quick.
set(E2E_ARM64_TIER ${E2E_ARM64_DIR}/tier.sh)
# The artifacts once as a fixture too, for image.arm64_debian_kernel
# (tests/CMakeLists.txt); in the tier's own lane, so never beside a test
# that prepares them itself.
add_test(NAME e2e-arm64.prepare
	COMMAND ${E2E_ARM64_DIR}/prepare.sh ${E2E_ARM64_ARTIFACTS})
set_tests_properties(e2e-arm64.prepare PROPERTIES LABELS "e2e;e2e-arm64"
	TIMEOUT 600 FIXTURES_SETUP e2e_arm64)
add_test(NAME e2e-arm64.l1_kvm
	COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/l1-kvm-test.sh
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
# boot_cpus8 once took 450 s and once failed (L2 still booting at
# microvm's --timeout 810, soft lockups on all 8 L2 vCPUs: 8 vCPUs on L1's
# 2, every one a TCG-emulated nested guest, with the boot log written a
# byte per nested exit). It now boots L2 with `quiet`: 19.8 s in CTest,
# 7-12 s in L1 (README has the runs); its bound stays the long one.
foreach(n 1 2 8)
	set(extra)
	if(n EQUAL 8)
		set(bound 840)
		set(extra --quiet)
	else()
		set(bound 480)
	endif()
	# CTest's bound: the L1 run's, plus the cross build and packing.
	math(EXPR ctest_bound "${bound} + 120")
	add_test(NAME e2e-arm64.boot_cpus${n}
		COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/boot-test.sh
			--artifacts ${E2E_ARM64_ARTIFACTS}
			--cross-build ${E2E_ARM64_CROSS} --cpus ${n}
			--timeout ${bound} ${extra})
	set_tests_properties(e2e-arm64.boot_cpus${n} PROPERTIES
		LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77
		TIMEOUT ${ctest_bound} RESOURCE_LOCK e2e_vm)
endforeach()
# disk_mmio, disk_pci: a 16 MiB read-write image of a known pattern as
# L2's vda; L2's md5 of vda must be L1's, then 8 parallel O_DIRECT writers
# (one per CPU) each write their pattern to their 2 MiB and both L2's
# read-back and L1's image after microvm exited must hold them; every
# queue L2 set up must have carried requests (--stats).
# disk_mmio: virtio-mmio (SPI through an irqfd), 1 vCPU, 1 queue; L2 ends
# by writing 7 to the exit register (0xf0100000) and microvm must exit 7;
# quiet (half its time in L1), disk_pci keeps the boot log on the PL011.
# disk_pci: virtio-pci (MSI-X through the ITS) with queues=8; Linux sets
# up a queue per possible CPU at most, so microvm has 8 vCPUs and L2
# boots 2 (maxcpus=2, a 2-vCPU boot's time) and brings the other 6
# online (PSCI CPU_ON) before writing; L2 powers off (PSCI SYSTEM_OFF)
# and microvm must exit 0.
add_test(NAME e2e-arm64.disk_mmio
	COMMAND ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 1 --disk mmio
		--end exit7 --quiet)
add_test(NAME e2e-arm64.disk_pci
	COMMAND ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 8 --maxcpus 2
		--disk pci --queues 8)
set_tests_properties(e2e-arm64.disk_mmio e2e-arm64.disk_pci PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
# reset: L2's reboot -f (PSCI SYSTEM_RESET) ends microvm with 0 (README
# "Exit status": a reboot is a clean end), and --verbose's last line must
# say "PSCI reset". quiet: its boot log proves nothing here.
add_test(NAME e2e-arm64.reset
	COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 1 --end reset --quiet)
set_tests_properties(e2e-arm64.reset PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
# cad: SendCtrlAltDel through the API ends the VM with 0: microvm's
# virtio-input keyboard (the arm64 machine's, with --api-sock) presses
# Ctrl-Alt-Del, L2's VT keyboard handler makes it SIGINT to its init
# (ctrl-alt-del sysctl 0), which prints it and powers off (boot-test.sh
# --end cad).
add_test(NAME e2e-arm64.cad
	COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 1 --end cad --quiet)
set_tests_properties(e2e-arm64.cad PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
# snapshot_pci: a snapshot of a running 2-vCPU guest and its restore in
# a new microvm (boot-test.sh --end snap): vCPU registers, the GICv3 with
# its ITS (the disk's MSI-X), the PL011, PL031, virtio-input and a
# virtio-blk on pci; the restored guest (PUT /snapshot/load) goes on
# counting and reading the disk from where it was, and ends on
# SendCtrlAltDel; a Diff of it over its base equals a Full of the same
# pause; two clones of that at once count on and share pages; six broken
# snapshots are refused (another CPU, corrupt, truncated, other version,
# short memory file, missing disk). L2 runs the newer kernel prepare.sh
# fetched (6.12: the device tree's VM generation ID is Linux 6.10's), so
# the VM generation ID is checked too: bound at boot, one interrupt and
# one reseed of L2's random pool per restore.
add_test(NAME e2e-arm64.snapshot_pci
	COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 2 --disk pci --end snap
		--l2-kernel new --quiet)
set_tests_properties(e2e-arm64.snapshot_pci PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
add_test(NAME e2e-arm64.timeout
	COMMAND ${E2E_ARM64_TIER} ${E2E_ARM64_DIR}/boot-test.sh
		--artifacts ${E2E_ARM64_ARTIFACTS}
		--cross-build ${E2E_ARM64_CROSS} --cpus 1 --hang 60)
set_tests_properties(e2e-arm64.timeout PROPERTIES
	LABELS "e2e;e2e-arm64" SKIP_RETURN_CODE 77 TIMEOUT 600
	RESOURCE_LOCK e2e_vm)
