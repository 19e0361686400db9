# SPDX-License-Identifier: Apache-2.0
# Included by tests/e2e/tests.cmake (E2E_MICROVM, E2E_ARTIFACTS and
# e2e_add() come from there). The Firecracker-compatible API on a real
# guest: microvm --api-sock alone, booted and driven by curl as
# Firecracker's getting-started guide does (api-test.sh, api-l1.sh).
e2e_add(e2e.api.lifecycle auto ${CMAKE_CURRENT_LIST_DIR}/api-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
# Pause/resume on virtio-pci with both engines (api-pause-l1.sh): fio
# verify on an io_uring drive and an engine=vhost drive at once across
# 20 checked cycles, and a drive swap on the paused machine. Nested
# only: L1 loads the vhost-blk module (VHOST_BLK_KO, set in disk.cmake,
# built by e2e.vhost.module_build); without it the test skips (77).
e2e_add(e2e.api.pause_pci_vhost nested ${CMAKE_CURRENT_LIST_DIR}/api-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS}
	--pci-vhost ${VHOST_BLK_KO})
set_tests_properties(e2e.api.pause_pci_vhost PROPERTIES
	FIXTURES_REQUIRED "e2e;vhost_blk_ko")
