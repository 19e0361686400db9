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
