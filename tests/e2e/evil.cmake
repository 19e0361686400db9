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

# The hostile driver against engine=vhost (issue 10) is run by hand for
# now, `evil-test.sh --transport pci|mmio --vhost KO` (nested): against
# today's module 39 of 43 cases pass on pci and 35 of 39 on mmio, L1 stays
# up and the module unloads. The four failures are the module's (the vhost
# core's chain rules accept three malformed indirect chains; misaligned
# O_DIRECT buffers are not bounced, so huge_aliased fails), and a test that
# is known to fail does not go into CI. tests/e2e/README.md has the list.
