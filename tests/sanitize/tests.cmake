# SPDX-License-Identifier: Apache-2.0
# Sanitizer tier (label sanitize): each test configures a second build of
# the tree under one sanitizer in ${CMAKE_BINARY_DIR}/sanitize-<kind>,
# builds the unit tests it runs and runs them there with CTest, so one
# `ctest` in the main build covers all builds and ends on one summary.
#   sanitize.asan  every unit and crash test under ASan+UBSan (halt on the
#                  first report)
#   sanitize.tsan  the unit tests labelled 'threads' (I/O threads, defer
#                  call, console output, ...) under ThreadSanitizer
#   sanitize.asan_microvm  the ASan+UBSan microvm binary, a fixture for the
#                  e2e tests that boot a real guest under it (e2e.evil.asan_*)
# The fuzz tier needs no entry here: libFuzzer targets are always built
# with -fsanitize=fuzzer,address,undefined (tests/fuzz/tests.cmake).
# A sub-build sets MICROVM_SANITIZE_TIER=OFF so it does not recurse (the
# option and MICROVM_ASAN_DIR are set in tests/CMakeLists.txt).
if(NOT MICROVM_SANITIZE_TIER)
	return()
endif()

set(SAN_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/run.sh)
foreach(kind asan tsan)
	add_test(NAME sanitize.${kind}
		COMMAND ${SAN_SCRIPT} ${kind} ${PROJECT_SOURCE_DIR}
			${CMAKE_BINARY_DIR}/sanitize-${kind} ${CMAKE_C_COMPILER})
	set_tests_properties(sanitize.${kind} PROPERTIES LABELS sanitize
		TIMEOUT 1500 SKIP_RETURN_CODE 77)
endforeach()

add_test(NAME sanitize.asan_microvm
	COMMAND ${SAN_SCRIPT} asan-microvm ${PROJECT_SOURCE_DIR}
		${MICROVM_ASAN_DIR} ${CMAKE_C_COMPILER})
set_tests_properties(sanitize.asan_microvm PROPERTIES LABELS "sanitize;e2e"
	TIMEOUT 900 FIXTURES_SETUP asan_microvm)
