# SPDX-License-Identifier: Apache-2.0
# Two lanes for `ctest -j 2` (tests/run-all.sh): the real-guest tests hold
# RESOURCE_LOCK e2e_vm (one emulated L1 machine at a time, one core), and
# every other test of this directory gets RESOURCE_LOCK host_cpu, so at
# most one host-side test (the guest-kernel build, the sanitizer builds,
# fuzzing, unit tests) runs beside the one guest. A test whose result
# depends on having the machine to itself (timing, polling) names both
# locks in MICROVM_EXCLUSIVE_TESTS and runs alone.
set(MICROVM_EXCLUSIVE_TESTS unit.test_blk_poll bench.smoke)
# The guest lane's own setup: in the host lane it would wait behind the
# guest-kernel build and hold every guest test up.
set(MICROVM_GUEST_LANE_TESTS e2e.prepare)

function(test_lanes)
	get_property(tests DIRECTORY PROPERTY TESTS)
	foreach(t ${tests})
		get_test_property(${t} RESOURCE_LOCK locks)
		if(t IN_LIST MICROVM_EXCLUSIVE_TESTS)
			set_tests_properties(${t} PROPERTIES
				RESOURCE_LOCK "host_cpu;e2e_vm")
		elseif(t IN_LIST MICROVM_GUEST_LANE_TESTS)
			set_tests_properties(${t} PROPERTIES RESOURCE_LOCK e2e_vm)
		elseif(NOT locks)
			set_tests_properties(${t} PROPERTIES
				RESOURCE_LOCK host_cpu)
		endif()
	endforeach()
endfunction()
