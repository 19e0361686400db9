#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 cross build and its unit tests, on an x86_64 Debian 12 host:
# installs gcc-aarch64-linux-gnu, the :arm64 dev packages and qemu-user
# (skipped when present; MICROVM_SKIP_DEPS=1 skips it all), unpacks
# libfdt-dev:arm64 into the build directory (Debian 12's libfdt-dev is not
# Multi-Arch: same, so installing it would remove the host's), builds with
# cmake/aarch64-linux-gnu.cmake and runs `ctest -L unit` under qemu-aarch64.
# What it builds: the microvm binary and the unit tests (cmake/aarch64-tests.cmake).
#
# Usage: tests/cross-aarch64.sh [BUILD_DIR]   (default build-aarch64)
#        tests/cross-aarch64.sh --deps-only  (the installs alone, for
#        tests/install-deps.sh, so that CTest's cross.aarch64 installs
#        nothing while other tests run)
#        tests/cross-aarch64.sh --microvm-only [BUILD_DIR]  (installs
#        nothing, builds the microvm binary alone, runs no tests: for
#        tests/e2e-arm64/boot-test.sh)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps_only=0 microvm_only=0
if [ "${1:-}" = --deps-only ]; then
	deps_only=1
	shift
elif [ "${1:-}" = --microvm-only ]; then
	microvm_only=1
	MICROVM_SKIP_DEPS=1
	shift
fi
build=${1:-$root/build-aarch64}
# Absolute: the link line names files below it.
build=$(realpath -m "$build")
packages=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
	liburing-dev:arm64 libseccomp-dev:arm64 zlib1g-dev:arm64 libfdt1:arm64
	libjson-c-dev:arm64)

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
if [ "${MICROVM_SKIP_DEPS:-0}" != 1 ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		"${sudo[@]}" dpkg --add-architecture arm64
		"${sudo[@]}" apt-get update
	fi
	# Every package by name:arch: the tools are the native
	# architecture's (name:all for architecture-independent ones), so
	# an arm64 package of the same name is never taken for them.
	native=$(dpkg --print-architecture)
	missing=()
	for p in "${packages[@]}"; do
		[[ $p == *:* ]] || p=$p:$native
		for q in "$p" "${p%:*}:all"; do
			dpkg-query -W -f='${Status}' "$q" 2>/dev/null |
				grep -q 'install ok installed' && continue 2
		done
		missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "cross-aarch64: installing ${missing[*]}"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install \
			-y --no-install-recommends "${missing[@]}"
	fi
fi

[ $deps_only = 0 ] || exit 0
for t in aarch64-linux-gnu-gcc qemu-aarch64; do
	if ! command -v $t >/dev/null; then
		echo "SKIP: no $t (tests/install-deps.sh installs the cross tools)"
		exit 77
	fi
done

# libfdt.a for arm64, from the .deb, not installed.
fdt=$build/libfdt-arm64
if [ ! -f "$fdt/usr/lib/aarch64-linux-gnu/libfdt.a" ]; then
	mkdir -p "$fdt"
	(cd "$fdt" && apt-get download libfdt-dev:arm64 2>/dev/null &&
		dpkg -x libfdt-dev_*_arm64.deb .)
fi

cmake -S "$root" -B "$build" -DMICROVM_WERROR=ON \
	-DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
	-DMICROVM_ARM64_FDT_LIB="$fdt/usr/lib/aarch64-linux-gnu/libfdt.a"
if [ $microvm_only = 1 ]; then
	cmake --build "$build" -j"${MICROVM_JOBS:-1}" --target microvm
	exit 0
fi
cmake --build "$build" -j"${MICROVM_JOBS:-1}"
cd "$build" && ctest -L unit --output-on-failure
