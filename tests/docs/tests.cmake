# SPDX-License-Identifier: Apache-2.0
# docs.facts: the counted facts in the documents (fuzz targets, the block
# queue's slot size, and in a default-configured gcc build the tests per
# tier) are what tests/docs/facts.sh computes from this tree; a stale
# committed number fails here with the diff. After adding or removing a
# test: BUILD=build tests/docs/facts.sh (in a default build) rewrites them.
set(MICROVM_FACTS_ENV CC=${CMAKE_C_COMPILER})
if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MICROVM_SANITIZE_TIER
   AND NOT MICROVM_SANITIZE AND NOT MICROVM_TSAN)
	list(APPEND MICROVM_FACTS_ENV BUILD=${CMAKE_BINARY_DIR})
endif()
add_test(NAME docs.facts
	COMMAND env ${MICROVM_FACTS_ENV} ${CMAKE_SOURCE_DIR}/tests/docs/facts.sh --check)
set_tests_properties(docs.facts PROPERTIES LABELS "unit;docs" TIMEOUT 60)

# docs.cli: --help, the man page, the bash completion and README.md's
# usage tables all come from docs/cli.txt and agree with cli.c
# (tests/docs/cli-doc-test.sh).
add_test(NAME docs.cli
	COMMAND ${CMAKE_SOURCE_DIR}/tests/docs/cli-doc-test.sh
		$<TARGET_FILE:microvm> ${MICROVM_GEN_DIR})
set_tests_properties(docs.cli PROPERTIES LABELS "unit;docs" TIMEOUT 60)
