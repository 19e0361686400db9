# SPDX-License-Identifier: Apache-2.0
# The arm64 build's tests (CMakeLists.txt includes this after the microvm
# binary, in place of the x86_64 tiers): the unit tests of the code both
# architectures share and of the arm64 pieces. A cross build runs them
# under qemu-user (tests/cross-aarch64.sh).
# Left out: the x86_64 machine's (ACPI, AML, the bzImage loader, and the
# exit, boot-time and pvpanic devices as x86 wires them, to I/O ports,
# the CPUID topology, the MP table and the acpi=off command line) and
# test_vm, whose fake KVM answers x86_64's register calls.
set(MICROVM_ARM64_NOT_BUILT test_acpi test_aml test_boot test_boottime
	test_cpuid_topo test_exitdev test_mptable test_pvpanic test_vm
	test_x86_cmdline)
file(GLOB MICROVM_ARM64_UNIT_SOURCES CONFIGURE_DEPENDS tests/unit/test_*.c)
foreach(src ${MICROVM_ARM64_UNIT_SOURCES})
	get_filename_component(name ${src} NAME_WE)
	if(name IN_LIST MICROVM_ARM64_NOT_BUILT)
		continue()
	endif()
	add_executable(${name} tests/unit/${name}.c)
	target_include_directories(${name} PRIVATE tests/unit)
	target_link_libraries(${name} PRIVATE microvm_core)
	# CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64) runs it on x86_64.
	add_test(NAME unit.${name} COMMAND ${name}
		WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
	set_tests_properties(unit.${name} PROPERTIES SKIP_RETURN_CODE 77
		TIMEOUT 300 LABELS unit)
endforeach()

# What qemu-user 7.2 (Debian 12) cannot run: it has no io_uring_setup
# (ENOSYS: the disk engines' tests), and a seccomp filter the test
# installs hangs the emulated process (test_confine ran past 300 s).
# CTest lists them as "Not Run (Disabled)"; a native arm64 host runs them.
if(CMAKE_CROSSCOMPILING_EMULATOR)
	set(MICROVM_QEMU_USER_CANNOT test_confine test_disk test_disk_open
		test_disk_overlay test_api_confine test_confine_vsock)
	foreach(name ${MICROVM_QEMU_USER_CANNOT})
		set_tests_properties(unit.${name} PROPERTIES DISABLED TRUE)
	endforeach()
	message(STATUS "aarch64 under ${CMAKE_CROSSCOMPILING_EMULATOR}: ${MICROVM_QEMU_USER_CANNOT} disabled (no io_uring, seccomp hangs)")
endif()

# The arm64 binary's --memory bound (510G, the guest memory map's) is
# checked before /dev/kvm is opened: one line naming the value, status 1.
# Under qemu-user in a cross build, natively otherwise.
add_test(NAME unit.memory_limit
	COMMAND ${CMAKE_SOURCE_DIR}/tests/cross/memory-limit.sh
		$<TARGET_FILE:microvm> ${CMAKE_CROSSCOMPILING_EMULATOR})
set_tests_properties(unit.memory_limit PROPERTIES LABELS unit TIMEOUT 60)
