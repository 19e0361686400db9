# SPDX-License-Identifier: Apache-2.0
# Device-path benchmark (label bench): microvm-bench drives the real
# virtqueue, virtio-blk device, I/O threads and io_uring engine from a
# simulated guest driver and runs fio on the same file as the limit (see
# tests/bench/README.md). CTest only smoke-runs it (--quick): every
# scenario ran and the summary line is sane; no timing is checked.
add_executable(microvm-bench ${CMAKE_CURRENT_LIST_DIR}/microvm_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_driver.c
	${CMAKE_CURRENT_LIST_DIR}/bench_fio.c)
target_include_directories(microvm-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}
	${CMAKE_CURRENT_LIST_DIR}/../unit)
target_link_libraries(microvm-bench PRIVATE microvm_core Threads::Threads)
set_target_properties(microvm-bench PROPERTIES
	RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME bench.smoke
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/smoke.sh $<TARGET_FILE:microvm-bench>
	WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(bench.smoke PROPERTIES SKIP_RETURN_CODE 77
	TIMEOUT 300 LABELS bench)

# distro-boot.sh's summary (medians, systemd-analyze's time forms, exit
# reasons, interrupts, rounds won) on made-up records.
add_test(NAME bench.distro_summary
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/distro-summary-test.sh)
set_tests_properties(bench.distro_summary PROPERTIES LABELS unit TIMEOUT 60)
