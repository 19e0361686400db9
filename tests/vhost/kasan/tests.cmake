# SPDX-License-Identifier: Apache-2.0
# The vhost-blk module stress on a KASAN + lockdep L1 kernel (label kasan,
# README.md here). Off by default: the kernel build alone takes longer
# than the rest of the suite on two cores. Configure with
# -DMICROVM_KASAN_TIER=ON and run `ctest -L kasan`.
#
# The same stress on the nested harness's own kernel runs in every suite
# (label e2e): there a late completion after the fix's removal shows as a
# NULL dereference that takes L1 down, within seconds.
set(STOP_STRESS ${CMAKE_CURRENT_LIST_DIR}/run.sh
	--artifacts ${E2E_ARTIFACTS} --microvm $<TARGET_FILE:microvm>
	--stress $<TARGET_FILE:vhost_blk_stress>)
add_test(NAME e2e.vhost.stop_stress COMMAND ${STOP_STRESS} --widen 2000
	--rounds 200 --guest-rounds 2 --seed 3)
add_test(NAME e2e.vhost.stop_stress_old_caught COMMAND ${STOP_STRESS}
	--rev ed5d0c1~1 --widen 20000 --rounds 400 --guest-rounds 0 --seed 3
	--expect report)
set_tests_properties(e2e.vhost.stop_stress e2e.vhost.stop_stress_old_caught
	PROPERTIES LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900
	RESOURCE_LOCK e2e_vm FIXTURES_REQUIRED e2e)

option(MICROVM_KASAN_TIER "Register the vhost-blk KASAN stress tier" OFF)
if(MICROVM_KASAN_TIER)
	set(KASAN_DIR ${CMAKE_CURRENT_LIST_DIR})
	set(KASAN_KERNEL ${CMAKE_BINARY_DIR}/kasan-kernel)
	add_test(NAME kasan.kernel
		COMMAND ${KASAN_DIR}/build-kernel.sh ${KASAN_KERNEL})
	set_tests_properties(kasan.kernel PROPERTIES LABELS kasan
		SKIP_RETURN_CODE 77 TIMEOUT 5400 FIXTURES_SETUP kasan_kernel)
	set(KASAN_RUN ${KASAN_DIR}/run.sh --kernel-dir ${KASAN_KERNEL}
		--artifacts ${E2E_ARTIFACTS} --microvm $<TARGET_FILE:microvm>
		--stress $<TARGET_FILE:vhost_blk_stress>)
	# The tree's module, the completion window widened (widen.sh; 20 ms:
	# under KASAN and lockdep a stop takes longer than 2 ms to reach
	# the free) and as built: hundreds of rounds and real-guest kills,
	# a clean log.
	add_test(NAME kasan.stress_widened COMMAND ${KASAN_RUN} --widen 20000
		--rounds 400 --guest-rounds 6 --seed 1)
	add_test(NAME kasan.stress COMMAND ${KASAN_RUN}
		--rounds 400 --guest-rounds 6 --seed 2)
	# The self-check: the module before the fix (ed5d0c1) with the
	# same widening must make the kernel report the late completion.
	add_test(NAME kasan.stress_old_caught COMMAND ${KASAN_RUN}
		--rev ed5d0c1~1 --widen 20000 --rounds 400 --guest-rounds 0
		--seed 1 --expect report)
	set_tests_properties(kasan.stress_widened kasan.stress
		kasan.stress_old_caught PROPERTIES LABELS kasan
		SKIP_RETURN_CODE 77 TIMEOUT 3600 RESOURCE_LOCK e2e_vm
		FIXTURES_REQUIRED "e2e;kasan_kernel")
endif()
