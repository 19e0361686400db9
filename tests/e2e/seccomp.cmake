# SPDX-License-Identifier: Apache-2.0
# seccomp confinement in real guests (label e2e), included from tests.cmake.
# e2e.seccomp.selftest_*: a forbidden call from each thread class
# (MICROVM_SECCOMP_SELFTEST) ends microvm by SIGSYS with one clear line;
# e2e.seccomp.threads_*: every thread shows "Seccomp: 2" while a guest
# does disk I/O, and I/O, reboot and poweroff work under the filters.
set(E2E_SECCOMP ${CMAKE_CURRENT_LIST_DIR}/seccomp-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
foreach(class main vcpu io console)
	e2e_add(e2e.seccomp.selftest_${class} auto ${E2E_SECCOMP}
		--class ${class})
endforeach()
e2e_add(e2e.seccomp.selftest_vcpu_kill auto ${E2E_SECCOMP}
	--class vcpu --seccomp kill)
# The probe samples /proc/PID/task/*/status inside L1 (or on the host)
# while the guest runs fio on its data disk, one boot per transport.
set(E2E_DISK_PROBE ${CMAKE_CURRENT_LIST_DIR}/disk-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS} --seccomp-probe)
e2e_add(e2e.seccomp.threads_pci_reboot auto ${E2E_DISK_PROBE}
	--transport pci --cpus 2 --jobs 2 --end reboot)
e2e_add(e2e.seccomp.threads_mmio_poweroff auto ${E2E_DISK_PROBE}
	--transport mmio --cpus 2 --queues 2 --jobs 2 --end poweroff)
