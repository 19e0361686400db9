# SPDX-License-Identifier: Apache-2.0
# The API before boot on any host (no KVM): microvm --api-sock driven by
# curl (preboot-test.sh). The real-guest API test is e2e.api.lifecycle
# (tests/e2e/api.cmake).
add_test(NAME api.preboot COMMAND ${CMAKE_CURRENT_LIST_DIR}/preboot-test.sh
	$<TARGET_FILE:microvm>)
set_tests_properties(api.preboot PROPERTIES LABELS "cli" TIMEOUT 120
	SKIP_RETURN_CODE 77)
