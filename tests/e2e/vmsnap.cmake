# SPDX-License-Identifier: Apache-2.0
# Included by tests/e2e/tests.cmake (E2E_MICROVM, E2E_ARTIFACTS and
# e2e_add() come from there). Snapshots of a running guest: create on a
# paused guest mid fio-verify, restore with --restore and with PUT
# /snapshot/load, clones at once, and the refusals of bad snapshots
# (vmsnap-test.sh, vmsnap-l1.sh). snap-edit changes one field of a state
# file and fixes its checksum, for the refusals microvm's own checks
# must make (another CPU, a device state).
add_executable(e2e_snap_edit ${CMAKE_CURRENT_LIST_DIR}/snap-edit.c
	${PROJECT_SOURCE_DIR}/src/snapshot/snap.c)
target_include_directories(e2e_snap_edit PRIVATE ${PROJECT_SOURCE_DIR}/src)
e2e_add(e2e.snapshot.restore auto ${CMAKE_CURRENT_LIST_DIR}/vmsnap-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS}
	--snap-edit $<TARGET_FILE:e2e_snap_edit>)
# Up to three boots (lib.sh's two retries on an emulator failure), each
# 170-250 s in a clean-clone run plus 120 s of silence before a retry.
set_tests_properties(e2e.snapshot.restore PROPERTIES TIMEOUT 1200)
