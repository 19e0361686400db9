# SPDX-License-Identifier: Apache-2.0
# The guest root image (firmware/rootfs/build.sh): target guest-rootfs
# builds ${CMAKE_BINARY_DIR}/firmware/rootfs/root.raw, with busybox-static,
# init.sh and the exit-device helper microvm-exit (a static guest program,
# built here). Neither is part of ALL: a host without busybox-static or a
# static libc still builds microvm. The CTest fixture guest_rootfs (test
# firmware.rootfs) builds the target for the tests that boot it.
set(MICROVM_ROOTFS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(MICROVM_ROOTFS_OUT ${CMAKE_BINARY_DIR}/firmware/rootfs)
set(MICROVM_ROOTFS_SIZE "" CACHE STRING
	"guest-rootfs: image size (build.sh --size; empty: contents + 32 MiB)")
set(MICROVM_ROOTFS_ADD "" CACHE STRING
	"guest-rootfs: ;-list of SRC[:DEST] copied into root.raw (build.sh --add)")

add_executable(microvm_exit EXCLUDE_FROM_ALL
	${MICROVM_ROOTFS_DIR}/microvm-exit.c)
# Guest-side: only the memory map's constants, not the VMM's library.
target_include_directories(microvm_exit PRIVATE
	${PROJECT_SOURCE_DIR}/src/vmm/${MICROVM_ARCH})
target_link_options(microvm_exit PRIVATE -static)
set_target_properties(microvm_exit PROPERTIES OUTPUT_NAME microvm-exit
	RUNTIME_OUTPUT_DIRECTORY ${MICROVM_ROOTFS_OUT})

set(rootfs_args --exit-helper $<TARGET_FILE:microvm_exit>)
if(MICROVM_ROOTFS_SIZE)
	list(APPEND rootfs_args --size ${MICROVM_ROOTFS_SIZE})
endif()
foreach(spec ${MICROVM_ROOTFS_ADD})
	list(APPEND rootfs_args --add ${spec})
endforeach()
add_custom_command(OUTPUT ${MICROVM_ROOTFS_OUT}/root.raw
	COMMAND ${MICROVM_ROOTFS_DIR}/build.sh ${rootfs_args}
		${MICROVM_ROOTFS_OUT}/root.raw
	DEPENDS ${MICROVM_ROOTFS_DIR}/build.sh ${MICROVM_ROOTFS_DIR}/init.sh
		microvm_exit
	COMMENT "Building the guest root image firmware/rootfs/root.raw"
	VERBATIM)
add_custom_target(guest-rootfs DEPENDS ${MICROVM_ROOTFS_OUT}/root.raw)

add_test(NAME firmware.rootfs
	COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR}
		--target guest-rootfs)
set_tests_properties(firmware.rootfs PROPERTIES FIXTURES_SETUP guest_rootfs
	LABELS firmware TIMEOUT 300)

# build.sh itself, no guest: what the image holds (read back with
# debugfs), --add and --size, and its bad-input messages.
add_test(NAME unit.rootfs_build
	COMMAND ${PROJECT_SOURCE_DIR}/tests/unit/rootfs-build-test.sh
		${MICROVM_ROOTFS_DIR}/build.sh)
set_tests_properties(unit.rootfs_build PROPERTIES SKIP_RETURN_CODE 77
	LABELS "unit;firmware" TIMEOUT 120)
