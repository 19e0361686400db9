# SPDX-License-Identifier: Apache-2.0
# Crash-consistency tests (label crash): crash_blk runs the virtio-blk
# device and disk engine in a child process driven from fake guest memory,
# SIGKILLs it at a random point and checks that every flushed byte is in
# the image (see crash_blk.c and README.md). CI runs 10 kills per cache
# mode; the long run is `crash_blk --iterations 100`.
add_executable(crash_blk ${CMAKE_CURRENT_LIST_DIR}/crash_blk.c)
target_include_directories(crash_blk PRIVATE ${CMAKE_CURRENT_LIST_DIR}
	${CMAKE_CURRENT_LIST_DIR}/../unit)
target_link_libraries(crash_blk PRIVATE microvm_core)
foreach(mode writeback none)
	add_test(NAME crash.blk_sigkill_${mode}
		COMMAND crash_blk --mode ${mode} --iterations 10
		WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
	set_tests_properties(crash.blk_sigkill_${mode} PROPERTIES
		TIMEOUT 120 LABELS crash)
endforeach()
# The check is not vacuous: with each acknowledgement published before its
# batch is submitted, and the writer killed while it waits in that window
# (after 1 to 8 flushes, by the seed), every kill must be caught losing
# acknowledged bytes; the run fails when one is not.
add_test(NAME crash.blk_broken_ack_caught
	COMMAND crash_blk --mode none --iterations 10 --broken-ack
	WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(crash.blk_broken_ack_caught PROPERTIES TIMEOUT 120
	LABELS crash)
