# SPDX-License-Identifier: Apache-2.0
# The arm64 cross tier: tests/cross-aarch64.sh builds the shared code, the
# arm64 pieces and their unit tests with Debian's gcc-aarch64-linux-gnu
# into build/aarch64 and runs them under qemu-aarch64. Its packages come
# from tests/install-deps.sh before CTest starts; without them it exits 77.
add_test(NAME cross.aarch64
	COMMAND env MICROVM_SKIP_DEPS=1 ${CMAKE_SOURCE_DIR}/tests/cross-aarch64.sh
	${CMAKE_BINARY_DIR}/aarch64)
set_tests_properties(cross.aarch64 PROPERTIES LABELS cross
	SKIP_RETURN_CODE 77 TIMEOUT 900)
