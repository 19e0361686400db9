# SPDX-License-Identifier: Apache-2.0
# microvm-jailer (src/jailer, docs/jailer.md) on this host, with
# jail_probe as the exec file in place of microvm (label jailer: no
# guest, no network; they need root and namespaces, else skip 77).
# jailer.bad_args needs neither. Not label unit: the sanitizer tier
# reruns that label with only the unit programs built. The real-guest
# test, e2e.jailer.disk, is at the end.
set(JAILER_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
# Static always: it runs in an empty chroot. No sanitizer runtime either
# (those need the dynamic loader).
add_executable(jail_probe ${JAILER_TEST_DIR}/jail_probe.c)
target_compile_options(jail_probe PRIVATE -fno-sanitize=all)
target_link_options(jail_probe PRIVATE -fno-sanitize=all -static)

add_test(NAME jailer.bad_args COMMAND ${JAILER_TEST_DIR}/bad-args.sh
	--jailer $<TARGET_FILE:microvm-jailer>)
set_tests_properties(jailer.bad_args PROPERTIES LABELS jailer
	TIMEOUT 60)
foreach(case basic new-pid-ns daemonize cgroup-v1 cgroup-v2
		cgroup-v2-parent netns signals hardlink exec-fail hotplug)
	string(REPLACE "-" "_" tname ${case})
	add_test(NAME jailer.${tname} COMMAND ${JAILER_TEST_DIR}/jail-test.sh
		--jailer $<TARGET_FILE:microvm-jailer>
		--probe $<TARGET_FILE:jail_probe>
		--workdir ${CMAKE_CURRENT_BINARY_DIR}/jailer-work ${case})
	set_tests_properties(jailer.${tname} PROPERTIES LABELS jailer
		SKIP_RETURN_CODE 77 TIMEOUT 60)
endforeach()

# In a real guest (nested, one L1 boot): microvm started by the jailer
# with its images hard-linked into the jail, as uid 1000 in a cgroup v2;
# the guest reads and writes its disk (e2e-test.sh). e2e_add comes from
# tests/e2e/tests.cmake, included before this file.
if(COMMAND e2e_add)
	e2e_add(e2e.jailer.disk nested ${JAILER_TEST_DIR}/e2e-test.sh
		--jailer $<TARGET_FILE:microvm-jailer>
		--microvm $<TARGET_FILE:microvm>
		--artifacts ${E2E_ARTIFACTS})
endif()
