# SPDX-License-Identifier: Apache-2.0
# Crash consistency and host I/O faults with a real guest (label e2e),
# included from tests.cmake after its e2e_add(). The guest side is
# guest/crash-init.sh with guest/blkcrash.c; where microvm runs,
# blk-ctl.sh sets up the storage and acts on the guest's console.
set(E2E_CRASH ${CMAKE_CURRENT_LIST_DIR}/crash-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
# SIGKILL microvm while the guest writes and flushes; every acknowledged
# byte must be in the image (nested: on a loop device in L1 for O_DIRECT).
foreach(cache none writeback)
	e2e_add(e2e.crash.sigkill_${cache} auto ${E2E_CRASH} --cache ${cache})
endforeach()
# The check's self-check in a real guest: a writer that acknowledges a
# batch it never writes must be caught (crash-test.sh --broken-ack).
e2e_add(e2e.crash.sigkill_broken_ack_caught auto ${E2E_CRASH} --cache none
	--broken-ack)
# Host I/O faults in one boot: dm error and dm-flakey under vda, ENOSPC
# under vdb; the guest sees EIO and then success, microvm stays up and
# counts the failures in --stats. Nested only: it needs root (in L1).
e2e_add(e2e.nested.fault_dm_enospc nested
	${CMAKE_CURRENT_LIST_DIR}/fault-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
# engine=vhost (issue 10): SIGKILL microvm while the vhost-blk module
# serves the guest's writes and flushes, then rmmod must succeed within
# 5 s, the module leave /proc/modules and L1's kernel log hold no BUG,
# Oops or WARNING (vhost-l1.sh --rmmod-wait); the acknowledged bytes are
# checked as above. Nested only; 77 without vhost_blk.ko for L1's kernel.
# crash-test.sh --hold-open is its self-check (must fail: a held
# /dev/vhost-blk makes the rmmod fail).
if(NOT DEFINED VHOST_BLK_KO)
	set(VHOST_BLK_KO ${CMAKE_BINARY_DIR}/kernel/vhost-blk/vhost_blk.ko)
endif()
foreach(transport pci mmio)
	e2e_add(e2e.vhost.sigkill_${transport} nested ${E2E_CRASH}
		--transport ${transport} --vhost ${VHOST_BLK_KO})
	set_tests_properties(e2e.vhost.sigkill_${transport} PROPERTIES
		FIXTURES_REQUIRED "e2e;vhost_blk_ko")
endforeach()
