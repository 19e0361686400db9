# SPDX-License-Identifier: Apache-2.0
# virtio-blk real-guest tests (label e2e), included from tests.cmake after
# its e2e_add() and e2e.cli.* tests. Each e2e.disk.* test is one boot of
# disk-test.sh: root file system on a virtio disk, a raw data disk and a
# read-only disk, fio write/verify on every queue, host-side image checks.
# The e2e.cli.disk_locked* cases need lockhold, a helper that holds an OFD
# lock on an image.
add_executable(e2e_lockhold ${CMAKE_CURRENT_LIST_DIR}/lockhold.c)
foreach(case disk_locked disk_locked_readonly disk_locked_snapshot)
	if(TEST e2e.cli.${case})
		set_tests_properties(e2e.cli.${case} PROPERTIES ENVIRONMENT
			MICROVM_E2E_LOCKHOLD=$<TARGET_FILE:e2e_lockhold>)
	endif()
endforeach()

set(E2E_DISK ${CMAKE_CURRENT_LIST_DIR}/disk-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
# virtio-pci, one queue per vCPU (the default), an MSI-X vector each.
e2e_add(e2e.disk.pci_cpus8_mq auto ${E2E_DISK}
	--transport pci --cpus 8 --jobs 8)
# virtio-mmio (ACPI-described), four queues on one interrupt line.
e2e_add(e2e.disk.mmio_cpus4_queues4 auto ${E2E_DISK}
	--transport mmio --cpus 4 --queues 4 --jobs 4)

# Throwaway disks (--disk PATH,snapshot=on): the same guest scenario on
# snapshot root and data disks, host images byte-identical afterwards;
# the pair runs two microvms on one base at once.
set(E2E_SNAPSHOT ${CMAKE_CURRENT_LIST_DIR}/snapshot-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
e2e_add(e2e.disk.snapshot_pair_pci auto ${E2E_SNAPSHOT}
	--transport pci --cpus 2 --pair)
e2e_add(e2e.disk.snapshot_mmio auto ${E2E_SNAPSHOT}
	--transport mmio --cpus 2)

# engine=vhost (issue 10): the same scenario, every disk served by the
# vhost-blk module that L1 insmods before the VM and rmmods after it
# (disk-test.sh --vhost, vhost-l1.sh); nested only. The module comes
# from the vhost-blk-module target (kernel/vhost-blk) for the L1 kernel;
# without it the tests skip (77).
if(NOT DEFINED VHOST_BLK_KO)
	set(VHOST_BLK_KO ${CMAKE_BINARY_DIR}/kernel/vhost-blk/vhost_blk.ko)
endif()
e2e_add(e2e.vhost.disk_pci_cpus8_queues8 nested ${E2E_DISK}
	--transport pci --cpus 8 --queues 8 --jobs 8 --vhost ${VHOST_BLK_KO})
e2e_add(e2e.vhost.disk_pci_cpus2_queues1 nested ${E2E_DISK}
	--transport pci --cpus 2 --queues 1 --jobs 1 --vhost ${VHOST_BLK_KO})
e2e_add(e2e.vhost.disk_mmio_cpus2_queues1 nested ${E2E_DISK}
	--transport mmio --cpus 2 --queues 1 --jobs 1 --vhost ${VHOST_BLK_KO})
e2e_add(e2e.vhost.disk_mmio_cpus8_queues8 nested ${E2E_DISK}
	--transport mmio --cpus 8 --queues 8 --jobs 8 --vhost ${VHOST_BLK_KO})
# After e2e.vhost.module_build (tests/vhost/tests.cmake), which builds KO.
set_tests_properties(e2e.vhost.disk_pci_cpus8_queues8
	e2e.vhost.disk_pci_cpus2_queues1 e2e.vhost.disk_mmio_cpus2_queues1
	e2e.vhost.disk_mmio_cpus8_queues8 PROPERTIES
	FIXTURES_REQUIRED "e2e;vhost_blk_ko")

# The guest's I/O under the credentials of the user running microvm
# (creds-test.sh): in one L1, microvm as uid 1000 on a sparse image on an
# ext2 with half its blocks reserved for root; under engine=io_uring and
# engine=vhost the guest's writes fail with an I/O error where uid 1000's
# own writes stop, and root's reserve stays free.
e2e_add(e2e.vhost.creds nested ${E2E_DIR}/creds-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS}
	--vhost ${VHOST_BLK_KO})
set_tests_properties(e2e.vhost.creds PROPERTIES
	FIXTURES_REQUIRED "e2e;vhost_blk_ko" TIMEOUT 900)

# The per-drive rate limit (--disk ...,iops=N, ratelimit-test.sh): fio
# randread in the guest on a disk at iops=100 measures 100 IOPS within
# 10% after a ramp that spends the limit's full bucket, and --stats
# counts throttled requests on that disk; a disk without a limit in the
# same boot tells an emulator too slow to reach the limit (one more boot,
# then a skip) from a limit that holds the guest back too much (a failure).
e2e_add(e2e.disk.ratelimit_iops100 auto ${E2E_DIR}/ratelimit-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS} --iops 100)
