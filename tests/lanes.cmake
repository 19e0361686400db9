# SPDX-License-Identifier: Apache-2.0
# Lanes for `ctest -j 2` (tests/run-all.sh): the real-guest tests hold
# RESOURCE_LOCK e2e_vm (one emulated L1 machine at a time, one core), and
# every other test of this directory gets RESOURCE_LOCK host_cpu, so at
# most one host-side test (the guest-kernel build, the sanitizer builds,
# fuzzing, unit tests) runs beside the one guest. A test whose result
# depends on having the machine to itself (timing, polling) names every
# lock in MICROVM_EXCLUSIVE_TESTS and runs alone.
set(MICROVM_EXCLUSIVE_TESTS unit.test_blk_poll bench.smoke)
# The guest lane's own setup: in the host lane it would wait behind the
# guest-kernel build and hold every guest test up.
set(MICROVM_GUEST_LANE_TESTS e2e.prepare)
# Guests of 8 and more vCPUs wait for the guest-kernel build (the host
# lane's longest test, 13 min on 2 cores): beside it their vCPUs, threads
# of one emulated L1, are preempted while holding locks and spinning on
# IPIs, and a 64-vCPU boot took 256 s there against about 100 s after it.
# The guest lane meanwhile runs the small guests. Only an order: these
# still run if the build fails or is not registered.
set(MICROVM_AFTER_KERNEL_TESTS e2e.boot.cpus64_1G e2e.disk.pci_cpus8_mq
	e2e.boot.cpus8_512M_exit_port_42 e2e.vhost.disk_pci_cpus8_queues8
	e2e.vhost.disk_mmio_cpus8_queues8 e2e-arm64.boot_cpus8)
# A second guest lane (RESOURCE_LOCK e2e_vm2) for the guests that start
# only after the guest-kernel build: by then little host-side work is
# left, and with one guest lane the second core sat idle for the last
# 20 minutes of the suite. These run beside the first lane's guest (two
# single-vCPU L1 machines, one core each) or beside a host-side test,
# never both (ctest -j 2). About 600 s of guests, which balances the
# first lane's remainder against this lane plus the host tests left.
# The arm64 tier runs there too, all of it in this one lane: its tests
# share prepare.sh's artifacts and the arm64 microvm's build directory,
# and its L1 (two emulated CPUs) is best kept off the kernel build.
set(MICROVM_GUEST_LANE2_TESTS ${MICROVM_AFTER_KERNEL_TESTS}
	firmware.kernel_boot e2e.firmware.pci e2e.firmware.mmio
	e2e.firmware.acpi_off e2e-arm64.prepare
	e2e-arm64.l1_kvm e2e-arm64.boot_cpus1 e2e-arm64.boot_cpus2
	e2e-arm64.timeout e2e-arm64.disk_mmio e2e-arm64.disk_pci e2e-arm64.reset
	e2e-arm64.cad)

# The host lane's builds (the guest kernel, the sanitizer builds; the
# cross build already defaults to one job) run one compiler at a time
# (MICROVM_KERNEL_JOBS=1, MICROVM_JOBS=1): beside them the guest lane's
# emulated L1 owns the other core, and a make -j2 there put three busy
# threads on two cores, preempting the guests' vCPUs (nested guests spin
# on IPIs and locks when preempted: e2e.evil.pci took 237 s beside the
# kernel build against 60 s alone). A test that runs alone
# (MICROVM_EXCLUSIVE_TESTS) keeps every core.
set(MICROVM_HOST_LANE_ENV MICROVM_KERNEL_JOBS=1 MICROVM_JOBS=1)

# Every test also gets its own name (MICROVM_TEST_NAME) and the file that
# counts retries (MICROVM_RETRY_LOG): a script that boots again after an
# emulator failure appends a line there (tests/e2e/lib.sh,
# e2e_count_retry) and tests/run-all.sh prints them in its summary.
set(MICROVM_RETRY_LOG ${CMAKE_BINARY_DIR}/retries.log)

function(test_lanes)
	get_property(tests DIRECTORY PROPERTY TESTS)
	foreach(t ${tests})
		get_test_property(${t} ENVIRONMENT env)
		if(NOT env)
			set(env)
		endif()
		list(APPEND env MICROVM_TEST_NAME=${t}
			MICROVM_RETRY_LOG=${MICROVM_RETRY_LOG})
		set_tests_properties(${t} PROPERTIES ENVIRONMENT "${env}")
		get_test_property(${t} RESOURCE_LOCK locks)
		if(t IN_LIST MICROVM_EXCLUSIVE_TESTS)
			set_tests_properties(${t} PROPERTIES
				RESOURCE_LOCK "host_cpu;e2e_vm;e2e_vm2")
		elseif(t IN_LIST MICROVM_GUEST_LANE2_TESTS)
			set_tests_properties(${t} PROPERTIES RESOURCE_LOCK e2e_vm2)
		elseif(t IN_LIST MICROVM_GUEST_LANE_TESTS)
			set_tests_properties(${t} PROPERTIES RESOURCE_LOCK e2e_vm)
		elseif(NOT locks)
			set_tests_properties(${t} PROPERTIES
				RESOURCE_LOCK host_cpu)
		endif()
		get_test_property(${t} RESOURCE_LOCK locks)
		if("host_cpu" IN_LIST locks AND NOT "e2e_vm" IN_LIST locks)
			list(APPEND env ${MICROVM_HOST_LANE_ENV})
			set_tests_properties(${t} PROPERTIES
				ENVIRONMENT "${env}")
		endif()
		if(t IN_LIST MICROVM_AFTER_KERNEL_TESTS OR
		   t IN_LIST MICROVM_GUEST_LANE2_TESTS)
			set_tests_properties(${t} PROPERTIES
				DEPENDS firmware.kernel)
		endif()
	endforeach()
endfunction()
