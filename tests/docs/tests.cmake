# SPDX-License-Identifier: Apache-2.0
# docs.facts: the counted facts in the documents (fuzz targets, the block
# queue's slot size) are what tests/docs/facts.sh computes from this tree;
# a stale committed number fails here with the diff.
add_test(NAME docs.facts
	COMMAND env CC=${CMAKE_C_COMPILER} ${CMAKE_SOURCE_DIR}/tests/docs/facts.sh --check)
set_tests_properties(docs.facts PROPERTIES LABELS "unit;docs" TIMEOUT 60)
