# SPDX-License-Identifier: Apache-2.0
# Real-guest tests (label e2e): boot Debian's cloud kernel with a busybox
# initramfs under the microvm binary, on this host's /dev/kvm (direct) or
# inside an emulated L1 machine (nested); MICROVM_E2E_MODE=direct|nested|
# auto picks (auto: direct when /dev/kvm works). e2e.nested.* always run
# nested. The fixture e2e.prepare downloads and builds the guest pieces
# once into ${CMAKE_BINARY_DIR}/e2e-artifacts. Exit status 77 = skipped.
set(E2E_DIR ${CMAKE_CURRENT_LIST_DIR})
set(E2E_ARTIFACTS ${CMAKE_BINARY_DIR}/e2e-artifacts)
set(E2E_MICROVM $<TARGET_FILE:microvm>)

add_test(NAME e2e.prepare
	COMMAND ${E2E_DIR}/prepare.sh ${E2E_ARTIFACTS})
set_tests_properties(e2e.prepare PROPERTIES FIXTURES_SETUP e2e
	TIMEOUT 900 LABELS e2e)

# e2e_add(NAME MODE COMMAND...): one test needing the prepared artifacts;
# MODE is auto (the user's MICROVM_E2E_MODE applies) or nested.
function(e2e_add name mode)
	add_test(NAME ${name} COMMAND ${ARGN})
	set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED e2e
		LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900
		RESOURCE_LOCK e2e_vm)
	if(mode STREQUAL "nested")
		set_tests_properties(${name} PROPERTIES
			ENVIRONMENT MICROVM_E2E_MODE=nested)
	endif()
endfunction()

# The retry rule (lib.sh) on made-up harness output: no guest, no fixture.
add_test(NAME e2e.harness.retry_rule COMMAND ${E2E_DIR}/retry-rule-test.sh)
set_tests_properties(e2e.harness.retry_rule PROPERTIES LABELS "e2e;unit"
	TIMEOUT 60)

# The harness itself, with a tiny KVM guest instead of microvm.
e2e_add(e2e.harness.direct auto ${E2E_DIR}/harness-test.sh
	--artifacts ${E2E_ARTIFACTS} --mode direct)
e2e_add(e2e.harness.nested nested ${E2E_DIR}/harness-test.sh
	--artifacts ${E2E_ARTIFACTS})

# Boots: every one also checks dmesg for firmware errors and the
# --cmdline marker in /proc/cmdline (see boot-test.sh).
set(E2E_BOOT ${E2E_DIR}/boot-test.sh --microvm ${E2E_MICROVM}
	--artifacts ${E2E_ARTIFACTS})
e2e_add(e2e.boot.cpus1_256M_poweroff auto ${E2E_BOOT}
	--cpus 1 --memory 256 --end poweroff --status 0)
# With the console's writes coalesced in KVM's ring (--coalesced-pio:
# not the default under TCG), with input and output both ways.
e2e_add(e2e.boot.cpus2_1G_stdin_reboot auto ${E2E_BOOT}
	--cpus 2 --memory 1024 --stdin-line "stdin reaches the guest"
	--end reboot --status 0 --coalesced-pio)
e2e_add(e2e.boot.cpus8_512M_exit_port_42 auto ${E2E_BOOT}
	--cpus 8 --memory 512 --end port:42 --status 42)
# SMT (--cpus 4,smt=on; Firecracker's machine-config smt): two cores of
# two threads, CPUs 2k and 2k+1 siblings (guest/scenarios.sh topology).
e2e_add(e2e.boot.cpus4_smt auto ${E2E_BOOT}
	--cpus 4 --smt --memory 256 --end poweroff --status 0)
e2e_add(e2e.boot.cpus2_exit_mmio_7 auto ${E2E_BOOT}
	--cpus 2 --memory 256 --end mmio:7 --status 7)
# The ELF vmlinux through its PVH entry point instead of the bzImage.
e2e_add(e2e.boot.pvh_elf_cpus2 auto ${E2E_BOOT}
	--kernel vmlinux --cpus 2 --memory 256 --end poweroff --status 0)
e2e_add(e2e.boot.timeout_3s auto ${E2E_BOOT}
	--cpus 1 --memory 256 --end hang --vm-timeout 3 --status 124
	--no-guest-result --min-seconds 3)
# 64 vCPUs, all brought online. Nested, bringing 64 emulated vCPUs up
# takes 150 s of L1 time beside one other test, and went past the
# default 240 s --timeout in a clean .ci/run beside the guest-kernel
# build (the guest had passed every check; its power-down follows its
# PASS within a second): give it 420 s.
e2e_add(e2e.boot.cpus64_1G auto ${E2E_BOOT}
	--cpus 64 --memory 1024 --end poweroff --status 0 --vm-timeout 420)
# SIGTERM ends microvm cleanly with 128+15, vCPUs running.
e2e_add(e2e.boot.sigterm_cpus2 auto ${E2E_BOOT}
	--cpus 2 --memory 256 --end hang --sigterm-after 4 --status 143
	--no-guest-result --min-seconds 4)
e2e_add(e2e.nested.cpus2_stdin_poweroff nested ${E2E_BOOT}
	--cpus 2 --memory 256 --stdin-line "stdin reaches the nested guest"
	--end poweroff --status 0)
# --console FILE: the guest's output (marker, stdin echo, results) in
# FILE, none of it on stdout, and stdin still reaches the guest.
e2e_add(e2e.boot.console_file_stdin auto ${E2E_BOOT}
	--cpus 1 --memory 256 --stdin-line "stdin with --console FILE"
	--console-file --end port:9 --status 9)

# A guest kernel panic (sysrq c, panic=-1) ends microvm with status 122
# through pvpanic instead of a reboot's 0: Debian's kernel, its pvpanic
# modules loaded from the test initramfs.
e2e_add(e2e.panic.debian_cpus2 auto ${E2E_DIR}/panic-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS} --cpus 2)

# Bad command lines: a non-zero exit and one stderr line naming the value.
execute_process(COMMAND ${E2E_DIR}/bad-input.sh --list
	OUTPUT_VARIABLE E2E_BAD_INPUT_CASES OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(E2E_BAD_INPUT_CASES)
foreach(case ${E2E_BAD_INPUT_CASES})
	add_test(NAME e2e.cli.${case} COMMAND ${E2E_DIR}/bad-input.sh
		--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS} ${case})
	set_tests_properties(e2e.cli.${case} PROPERTIES FIXTURES_REQUIRED e2e
		LABELS "e2e;cli" TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()

# virtio-blk disks: boots from a virtio root disk, multi-queue fio.
include(${E2E_DIR}/disk.cmake)

# A hostile driver inside the guest: malformed rings, registers, huge
# aliased requests (see evil-test.sh).
include(${E2E_DIR}/evil.cmake)
# seccomp: every thread confined, forbidden calls end microvm.
include(${E2E_DIR}/seccomp.cmake)
# The Firecracker-compatible API and the VM lifecycle on a real guest.
include(${E2E_DIR}/api.cmake)
# What Firecracker's clients (Kata, firecracker-go-sdk, flintlock) call.
include(${E2E_DIR}/replay.cmake)
# Crash consistency (SIGKILL mid-write) and host I/O faults.
include(${E2E_DIR}/crash.cmake)
# The real-guest benchmark's smoke run (label bench, not e2e: it measures,
# and is no test of behaviour beyond "every piece runs").
include(${E2E_DIR}/../bench/guest-fio.cmake)
# Boot-time marks and --stats startup time.
include(${E2E_DIR}/boottime.cmake)
# The project's kernel booting from a firmware/rootfs image, no initramfs.
include(${E2E_DIR}/firmware.cmake)
# virtio-vsock's hybrid host side on the project's kernel (after
# firmware.cmake: its kernel).
include(${E2E_DIR}/vsock.cmake)
# The virtio-net device (e2e.net.*).
include(${E2E_DIR}/net.cmake)
# Snapshots of running guests: create, restore, clones (e2e.snapshot.*).
include(${E2E_DIR}/vmsnap.cmake)
