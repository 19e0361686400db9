# SPDX-License-Identifier: Apache-2.0
# Included by tests/e2e/tests.cmake (E2E_MICROVM, E2E_ARTIFACTS and
# e2e_add() come from there). The Firecracker-compatible API on a real
# guest: microvm --api-sock alone, booted and driven by curl as
# Firecracker's getting-started guide does (api-test.sh, api-l1.sh).
e2e_add(e2e.api.lifecycle auto ${CMAKE_CURRENT_LIST_DIR}/api-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
