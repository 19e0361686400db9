# SPDX-License-Identifier: Apache-2.0
# Included by tests/e2e/tests.cmake (E2E_MICROVM, E2E_ARTIFACTS and
# e2e_add() come from there). What Firecracker's clients call, replayed
# against microvm on a real guest (replay-test.sh, replay-l1.sh): Kata's
# fc.go, firecracker-go-sdk's default handler chain, flintlock's
# --no-api --config-file start. What microvm refuses of a caller's exact
# calls is printed as a REPLAY-GAP line and the nearest call it takes
# is made instead.
foreach(caller kata gosdk flintlock)
	e2e_add(e2e.replay.${caller} auto ${CMAKE_CURRENT_LIST_DIR}/replay-test.sh
		--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS}
		--caller ${caller})
endforeach()
