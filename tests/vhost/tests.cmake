# SPDX-License-Identifier: Apache-2.0
# The vhost-blk module's tests (kernel/vhost-blk, tests/vhost/README.md).
# vhost_blk_selftest is the VMM and the guest driver at once against
# /dev/vhost-blk; it is linked statically so that it runs unchanged in the
# nested harness's L1. e2e.vhost.module (guest lane) takes the vhost_blk.ko
# that e2e.vhost.module_build (host lane) builds, the vhost-blk-module
# target's, and skips (77) without one for the L1 kernel or without the
# nested harness.
# vhost_blk_stress (tests/vhost/kasan) shares the simulated driver.
add_library(vblk_sim STATIC ${CMAKE_CURRENT_LIST_DIR}/vblk_sim.c)
target_include_directories(vblk_sim PUBLIC
	${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/kernel/vhost-blk)
foreach(prog vhost_blk_selftest vhost_blk_stress)
	if(prog STREQUAL vhost_blk_stress)
		set(src ${CMAKE_CURRENT_LIST_DIR}/kasan/vhost_blk_stress.c)
	else()
		set(src ${CMAKE_CURRENT_LIST_DIR}/${prog}.c)
	endif()
	add_executable(${prog} ${src})
	target_link_libraries(${prog} PRIVATE vblk_sim)
	# (The sanitizer runtimes do not link statically.)
	if(NOT MICROVM_SANITIZE AND NOT MICROVM_TSAN)
		target_link_options(${prog} PRIVATE -static)
	endif()
endforeach()

# Builds the module for KERNEL_VERSION (seconds when it is up to date);
# build.sh's exit 77 (headers or linux-source not installed) is the only
# skip; a compile error is a failure (make's own exit 2 included).
add_test(NAME e2e.vhost.module_build
	COMMAND ${CMAKE_SOURCE_DIR}/kernel/vhost-blk/build.sh ${KERNEL_VERSION}
	${VHOST_BLK_OUT})
set_tests_properties(e2e.vhost.module_build PROPERTIES LABELS e2e
	SKIP_RETURN_CODE 77 TIMEOUT 600 FIXTURES_SETUP vhost_blk_ko)

add_test(NAME e2e.vhost.module
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/module-test.sh
	--artifacts ${CMAKE_BINARY_DIR}/e2e-artifacts
	--module ${VHOST_BLK_KO}
	--selftest $<TARGET_FILE:vhost_blk_selftest>)
set_tests_properties(e2e.vhost.module PROPERTIES
	FIXTURES_REQUIRED "e2e;vhost_blk_ko"
	LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900 RESOURCE_LOCK e2e_vm)

# The KASAN tier (off by default; -DMICROVM_KASAN_TIER=ON).
include(${CMAKE_CURRENT_LIST_DIR}/kasan/tests.cmake)
