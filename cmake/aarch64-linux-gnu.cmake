# SPDX-License-Identifier: Apache-2.0
# Cross-compiling for arm64 from an x86_64 Debian host with Debian's
# gcc-aarch64-linux-gnu and the :arm64 dev packages (multiarch: their
# libraries in /usr/lib/aarch64-linux-gnu, which the cross gcc searches).
# tests/cross-aarch64.sh installs them and runs the unit tests under
# qemu-user, which CMake calls for every test (CMAKE_CROSSCOMPILING_EMULATOR).
#
#	cmake -S . -B build-aarch64 \
#	      -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# libfdt-dev is not Multi-Arch: same in Debian 12 (installing :arm64 removes
# the host's), so MICROVM_ARM64_FDT_LIB names an arm64 libfdt.a unpacked
# elsewhere (the script unpacks the .deb); its header is the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)

# The arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR}
	/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
if(MICROVM_ARM64_FDT_LIB)
	set(FDT_LIBRARY ${MICROVM_ARM64_FDT_LIB} CACHE FILEPATH "arm64 libfdt")
endif()
# Headers are architecture-independent in /usr/include (and
# /usr/include/aarch64-linux-gnu), libraries only the arm64 ones.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
