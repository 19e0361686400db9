# SPDX-License-Identifier: Apache-2.0
# bench.guest_smoke: guest-fio.sh --quick, fio for 2 s in an L2 guest under
# microvm and under QEMU's microvm machine in one L1 (virtio-pci, 1 queue).
# It passes when both runs produce their counters; the numbers are not
# checked (a benchmark, and emulated). 77 (skipped) where QEMU, fio, the
# e2e artifacts or null_blk are missing.
add_test(NAME bench.guest_smoke COMMAND ${CMAKE_CURRENT_LIST_DIR}/guest-fio.sh
	--quick --microvm $<TARGET_FILE:microvm> --artifacts ${E2E_ARTIFACTS})
set_tests_properties(bench.guest_smoke PROPERTIES FIXTURES_REQUIRED e2e
	LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 900 RESOURCE_LOCK e2e_vm
	# One L1 vCPU: what keeps the emulator's failures rare
	# (tests/e2e/README.md); the smoke run checks pieces, not batching.
	ENVIRONMENT MICROVM_E2E_L1_CPUS=1)
