# SPDX-License-Identifier: Apache-2.0
# The Debian packages (debian/, tests/package/README.md), in two tests:
#   package.build  builds them from a copy of the working tree, runs
#                  lintian, checks the unpacked microvm package and builds
#                  vhost_blk.ko with DKMS for the nested harness's L1
#                  kernel (host lane: no guest), leaving both in
#                  build/package-out (fixture package)
#   package.boot   boots the test guest with the packaged microvm on an
#                  engine=vhost disk served by that module (guest lane)
set(MICROVM_PACKAGE_OUT ${CMAKE_BINARY_DIR}/package-out)
add_test(NAME package.build
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/package-test.sh --stage build
	--source ${CMAKE_SOURCE_DIR}
	--artifacts ${CMAKE_BINARY_DIR}/e2e-artifacts
	--out ${MICROVM_PACKAGE_OUT})
set_tests_properties(package.build PROPERTIES LABELS package
	FIXTURES_REQUIRED e2e FIXTURES_SETUP package
	SKIP_RETURN_CODE 77 TIMEOUT 900)
add_test(NAME package.boot
	COMMAND ${CMAKE_CURRENT_LIST_DIR}/package-test.sh --stage boot
	--source ${CMAKE_SOURCE_DIR}
	--artifacts ${CMAKE_BINARY_DIR}/e2e-artifacts
	--out ${MICROVM_PACKAGE_OUT})
set_tests_properties(package.boot PROPERTIES LABELS "package;e2e"
	FIXTURES_REQUIRED "e2e;package" RESOURCE_LOCK e2e_vm
	SKIP_RETURN_CODE 77 TIMEOUT 600)
