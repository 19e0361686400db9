# SPDX-License-Identifier: Apache-2.0
# Fuzz targets (libFuzzer). With clang each target is built with
# -fsanitize=fuzzer,address,undefined and the library sources it needs
# compiled straight in (microvm_core has no fuzzer instrumentation), and a
# short run is registered as CTest `fuzz.<x>` for fuzz_<x>.c. With other
# compilers the target is linked to fuzz_replay.c and `fuzz.<x>_replay` runs
# the checked-in seed corpus once, under the tree's sanitizer flags.
set(MICROVM_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
# Seconds per target in the short run: 17 targets keep the tier near
# about 2 minutes of CI wall time (tests/fuzz/README.md has the costs).
set(MICROVM_FUZZ_SECONDS 6)

find_program(MICROVM_CLANG clang)
# gen/revision.c (the top directory's target microvm_revision writes it)
# for the targets that compile the command line in.
set_source_files_properties(${MICROVM_GEN_DIR}/revision.c PROPERTIES
	GENERATED TRUE)
# The clang build below is a custom command: list the headers it reads so
# that editing one rebuilds the targets (CMake scans only its own builds).
file(GLOB_RECURSE MICROVM_FUZZ_HEADERS CONFIGURE_DEPENDS
	${MICROVM_FUZZ_DIR}/*.h ${PROJECT_SOURCE_DIR}/src/*.h)

# Libraries every target may need: threads are started by the blk queue
# and the UART's output buffer, and each such thread confines itself
# through util/confine.c (libseccomp), which names each thread's log
# lines (util/log.c).
set(MICROVM_FUZZ_LIBS ${SECCOMP_LINK_LIBRARIES} ${JSONC_LINK_LIBRARIES}
	-lpthread)
set(MICROVM_FUZZ_CONFINE util/confine.c util/confine_policy.c util/log.c)
# The Firecracker objects and config file (json-c), and what they fill.
set(MICROVM_FUZZ_FC_CONFIG api/fc_config.c api/fc_drive.c api/fc_net.c
	api/fc_mmds.c util/readfile.c
	api/fc_config_file.c api/fc_config_out.c api/fc_json.c vmm/config.c
	util/ratelimit.c util/clock.c)

# With a non-clang tree compiler, a clang on PATH still builds the
# libFuzzer target (outside CMake's toolchain), so the short fuzz run
# happens in every build that has clang installed, CI's included.
function(microvm_fuzz_with_clang name short lib_sources seeds)
	if(NOT MICROVM_CLANG)
		return()
	endif()
	set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}_clang)
	set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
	file(MAKE_DIRECTORY ${corpus})
	add_custom_command(OUTPUT ${out}
		COMMAND ${MICROVM_CLANG} -g -O1 -D_GNU_SOURCE
			-fsanitize=fuzzer,address,undefined
			-fno-sanitize-recover=undefined
			-I${PROJECT_SOURCE_DIR}/src
			-I${PROJECT_SOURCE_DIR}/kernel/vhost-blk/uapi
			-I${MICROVM_GEN_DIR}
			${MICROVM_FUZZ_DIR}/${name}.c ${lib_sources}
			${MICROVM_FUZZ_LIBS} -o ${out}
		DEPENDS ${MICROVM_FUZZ_DIR}/${name}.c ${lib_sources}
			${MICROVM_FUZZ_HEADERS}
		COMMENT "Building ${name} with clang/libFuzzer")
	add_custom_target(${name}_clang_build ALL DEPENDS ${out})
	add_dependencies(${name}_clang_build microvm_revision)
	add_test(NAME fuzz.${short} COMMAND ${out}
		-max_total_time=${MICROVM_FUZZ_SECONDS} -max_len=20000
		-print_final_stats=1 ${corpus} ${seeds})
	set_tests_properties(fuzz.${short} PROPERTIES TIMEOUT 120
		LABELS fuzz)
endfunction()

# microvm_fuzz_target(<name> <library sources relative to src/>...)
# builds tests/fuzz/<name>.c; seeds live in tests/fuzz/corpus/<name>/.
function(microvm_fuzz_target name)
	set(lib_sources)
	foreach(src ${ARGN})
		list(APPEND lib_sources ${PROJECT_SOURCE_DIR}/src/${src})
	endforeach()
	# The command line prints the git revision (--version).
	if("vmm/cli.c" IN_LIST ARGN)
		list(APPEND lib_sources ${MICROVM_GEN_DIR}/revision.c)
	endif()
	set(seeds ${MICROVM_FUZZ_DIR}/corpus/${name})
	string(REGEX REPLACE "^fuzz_" "" short ${name})
	if(NOT EXISTS ${seeds})
		set(seeds)
	endif()

	if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
		set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
		file(MAKE_DIRECTORY ${corpus})
		add_executable(${name} ${MICROVM_FUZZ_DIR}/${name}.c
			${lib_sources})
		target_include_directories(${name} PRIVATE
			${PROJECT_SOURCE_DIR}/src
			${PROJECT_SOURCE_DIR}/kernel/vhost-blk/uapi
			${MICROVM_GEN_DIR})
		target_compile_options(${name} PRIVATE -g -O1
			-fsanitize=fuzzer,address,undefined
			-fno-sanitize-recover=undefined)
		target_link_options(${name} PRIVATE
			-fsanitize=fuzzer,address,undefined)
		target_link_libraries(${name} PRIVATE ${MICROVM_FUZZ_LIBS})
		# New inputs go to the build tree; the seeds stay read-only.
		add_test(NAME fuzz.${short} COMMAND ${name}
			-max_total_time=${MICROVM_FUZZ_SECONDS} -max_len=20000
			-print_final_stats=1 ${corpus} ${seeds})
		set_tests_properties(fuzz.${short} PROPERTIES
			TIMEOUT 120 LABELS fuzz)
	else()
		microvm_fuzz_with_clang(${name} ${short} "${lib_sources}"
			"${seeds}")
		if(NOT seeds)
			return()
		endif()
		add_executable(${name}_replay ${MICROVM_FUZZ_DIR}/${name}.c
			${MICROVM_FUZZ_DIR}/fuzz_replay.c ${lib_sources})
		add_dependencies(${name}_replay microvm_revision)
		target_include_directories(${name}_replay PRIVATE
			${PROJECT_SOURCE_DIR}/src
			${PROJECT_SOURCE_DIR}/kernel/vhost-blk/uapi
			${MICROVM_GEN_DIR})
		target_link_libraries(${name}_replay PRIVATE
			${MICROVM_FUZZ_LIBS})
		add_test(NAME fuzz.${short}_replay COMMAND ${name}_replay
			${seeds})
		set_tests_properties(fuzz.${short}_replay PROPERTIES
			TIMEOUT 120 LABELS fuzz)
	endif()
endfunction()

# fuzz_virtq compiles virtio/virtq.c itself, with its guest reads hooked.
microvm_fuzz_target(fuzz_virtq util/guest_mem.c)
microvm_fuzz_target(fuzz_blk virtio/blk.c virtio/blk_queue.c virtio/worker.c
	virtio/blk_backend.c virtio/blk_vhost.c virtio/vhost.c
	virtio/blk_poll.c virtio/blk_req.c virtio/disk_queue.c virtio/disk_req.c
	virtio/disk_overlay.c
	virtio/virtio.c virtio/virtq.c util/guest_mem.c util/evloop.c
	util/defer_call.c util/guarded_copy.c
	util/ratelimit.c util/clock.c snapshot/snap.c
	${MICROVM_FUZZ_CONFINE})
microvm_fuzz_target(fuzz_mmio virtio/mmio.c virtio/virtio.c virtio/virtq.c
	util/guest_mem.c util/evloop.c util/log.c util/defer_call.c
	snapshot/snap.c)
microvm_fuzz_target(fuzz_virtio_pci devices/pci.c virtio/pci.c snapshot/snap.c
	virtio/pci_msix.c virtio/virtio.c virtio/virtq.c vmm/bus.c
	util/guest_mem.c util/evloop.c util/log.c util/defer_call.c)
microvm_fuzz_target(fuzz_pci devices/pci.c virtio/pci.c virtio/pci_msix.c snapshot/snap.c
	virtio/virtio.c virtio/virtq.c vmm/bus.c util/guest_mem.c
	util/evloop.c util/log.c util/defer_call.c)
microvm_fuzz_target(fuzz_boot vmm/x86_64/boot.c vmm/x86_64/boot_bzimage.c
	vmm/x86_64/boot_elf.c util/guest_mem.c)
microvm_fuzz_target(fuzz_cli vmm/cli.c vmm/cli_net.c ${MICROVM_FUZZ_FC_CONFIG}
	${MICROVM_FUZZ_CONFINE})
microvm_fuzz_target(fuzz_fc_config ${MICROVM_FUZZ_FC_CONFIG})
# The arm64 console, on its own (no bus: the model decodes its whole page).
microvm_fuzz_target(fuzz_pl011 devices/pl011.c devices/uart_host.c snapshot/snap.c
	util/clock.c util/evloop.c util/outbuf.c
	${MICROVM_FUZZ_CONFINE})
microvm_fuzz_target(fuzz_platform vmm/bus.c devices/serial.c devices/uart_host.c
	devices/i8042.c devices/exitdev.c devices/boottime.c devices/pvpanic.c snapshot/snap.c
	util/clock.c
	util/evloop.c util/outbuf.c ${MICROVM_FUZZ_CONFINE})
# The API's HTTP request parser, on its own (no socket, no thread).
microvm_fuzz_target(fuzz_http api/http.c)
# The API's routes and states over Firecracker's objects (fake actions).
microvm_fuzz_target(fuzz_api api/handlers.c api/fc_snapshot.c api/server.c api/server_conn.c
	api/http.c mmds/mmds_store.c ${MICROVM_FUZZ_FC_CONFIG}
	${MICROVM_FUZZ_CONFINE})
# The metadata service's guest-facing stack and HTTP answers, on their
# own: a hostile guest's frames in, every frame out checked.
microvm_fuzz_target(fuzz_mmds mmds/mmds_stack.c mmds/mmds_store.c
	util/readfile.c)
# The vsock packet and connection core, on its own (fake host sockets).
microvm_fuzz_target(fuzz_vsock virtio/vsock_conn.c virtio/vsock_pkt.c
	virtio/vsock_hdr.c)
microvm_fuzz_target(fuzz_net virtio/net_hdr.c virtio/virtq.c
	util/guest_mem.c)
# The snapshot state file (a restore's input): header, CRC, section
# framing and the readers, with bodies wrapped in a correct header.
microvm_fuzz_target(fuzz_snap snapshot/snap.c)
# The per-device loaders of a snapshot's DEVICE sections (virtio core on
# mmio and pci, the UART, the i8042): any payload, and valid saved
# states of driven devices with patches.
microvm_fuzz_target(fuzz_snap_dev virtio/virtio.c virtio/virtio_snap.c
	virtio/virtq.c virtio/mmio.c virtio/pci.c virtio/pci_msix.c
	devices/pci.c vmm/bus.c devices/serial.c devices/uart_host.c
	devices/i8042.c snapshot/snap.c util/guest_mem.c util/evloop.c
	util/defer_call.c util/outbuf.c util/clock.c
	${MICROVM_FUZZ_CONFINE})
