# SPDX-License-Identifier: Apache-2.0
# A hostile driver in a real guest (label e2e), included from tests.cmake
# after its e2e_add(): each e2e.evil.* test is one boot of evil-test.sh,
# guest/evilblk.c driving a data disk, a read-only disk and a null_blk
# disk (cache=none) on one transport with no virtio driver bound, one
# EVIL-CASE verdict per case, and microvm's peak RSS checked. In a build
# configured with -DMICROVM_SANITIZE=ON the same tests run the ASan+UBSan
# microvm and fail on any sanitizer report.
set(E2E_EVIL ${CMAKE_CURRENT_LIST_DIR}/evil-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
e2e_add(e2e.evil.pci auto ${E2E_EVIL} --transport pci)
e2e_add(e2e.evil.mmio auto ${E2E_EVIL} --transport mmio)

# The same boot against an ASan+UBSan microvm, any report failing it:
# this build's own binary under -DMICROVM_SANITIZE=ON, else the one named
# by -DMICROVM_E2E_ASAN_MICROVM=PATH, else the sanitizer tier's
# (sanitize.asan_microvm builds it first); skipped (exit 77) when there is
# none.
set(MICROVM_E2E_ASAN_MICROVM "" CACHE FILEPATH
	"an ASan+UBSan microvm binary for e2e.evil.asan_*")
if(MICROVM_SANITIZE)
	set(E2E_EVIL_ASAN ${E2E_MICROVM})
elseif(MICROVM_E2E_ASAN_MICROVM)
	set(E2E_EVIL_ASAN "${MICROVM_E2E_ASAN_MICROVM}")
elseif(MICROVM_SANITIZE_TIER)
	set(E2E_EVIL_ASAN ${MICROVM_ASAN_DIR}/microvm)
endif()
e2e_add(e2e.evil.asan_pci auto ${CMAKE_CURRENT_LIST_DIR}/evil-test.sh
	"--asan=${E2E_EVIL_ASAN}" --artifacts ${E2E_ARTIFACTS}
	--transport pci)
if(NOT MICROVM_SANITIZE AND NOT MICROVM_E2E_ASAN_MICROVM AND
   MICROVM_SANITIZE_TIER)
	set_tests_properties(e2e.evil.asan_pci PROPERTIES
		FIXTURES_REQUIRED "e2e;asan_microvm")
endif()

# The hostile driver against engine=vhost (issue 10): every disk served by
# the vhost-blk module in L1 (evil-test.sh --vhost, vhost-l1.sh insmods it
# before the VM, rmmods it after and fails on any BUG/Oops/WARNING);
# nested only, skipped (77) without the module built for the L1 kernel.
# The module walks each chain under the userspace device's rules and
# serves misaligned O_DIRECT requests through each worker's 256 KiB bounce
# buffer, chunk by chunk, so every case passes (44 on pci, 40 on mmio),
# the 16 aliased ~248 MiB writes of huge_split_writes included (19 s
# nested on mmio; the module's old page-cache path completed none in the
# case's 120 s). Two huge requests (a write and a read) in huge_aliased,
# not four: the module allocates nothing per request, so more in flight
# test no more. The KO is the vhost-blk-module target's (VHOST_BLK_KO,
# set in disk.cmake), which e2e.vhost.module_build builds first.
e2e_add(e2e.vhost.evil_pci nested ${E2E_EVIL} --transport pci --huge 2
	--vhost ${VHOST_BLK_KO})
e2e_add(e2e.vhost.evil_mmio nested ${E2E_EVIL} --transport mmio --huge 2
	--vhost ${VHOST_BLK_KO})
set_tests_properties(e2e.vhost.evil_pci e2e.vhost.evil_mmio PROPERTIES
	FIXTURES_REQUIRED "e2e;vhost_blk_ko")
