#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs, from Debian's registry, the packages microvm needs to build and
# to run its tests (real guests included), skipping those already present.
# The last line is the guest kernel's build (firmware/kernel/build.sh):
# the source, Kconfig's flex/bison, bc for timeconst.h, libelf for objtool,
# xz for the tarball, perl for its scripts; lz4 above compresses the image.
# linux-source-6.1 also gives the vhost-blk module its vhost.h.
# libfdt and zlib build the arm64 device tree and Image loader; dtc
# (device-tree-compiler) decompiles the tree in its unit test; qemu-system-arm
# runs the arm64 nested tier (tests/e2e-arm64).
# json-c parses the API's and the config file's JSON; curl drives the API
# in its tests as Firecracker's guides do (--unix-socket).
# groff-base renders and checks the man page (test docs.cli).
# debhelper, dh-dkms, dkms and lintian build and check the Debian
# packages (debian/, tests/package; file for its checks).
# debootstrap builds the Debian guest of tests/bench/distro-boot.sh.
# Uses sudo when not run as root. MICROVM_SKIP_DEPS=1 skips it all.
set -euo pipefail

packages=(build-essential cmake pkg-config liburing-dev libfdt-dev libseccomp-dev
	libjson-c-dev curl groff-base
	zlib1g-dev device-tree-compiler qemu-system-x86 qemu-system-arm busybox-static cpio kmod acpica-tools clang
	e2fsprogs fio lz4 dmsetup
	linux-source-6.1 flex bison bc libelf-dev xz-utils perl
	debhelper dh-dkms dkms lintian file debootstrap)

[ "${MICROVM_SKIP_DEPS:-0}" = 1 ] && exit 0
# The vhost-blk module (kernel/vhost-blk) is built for the nested
# harness's L1 kernel, the one tests/e2e/prepare.sh downloads.
hkver=$("$(dirname "$0")/../kernel/vhost-blk/harness-kernel.sh" \
	"$(dirname "$0")/../build/e2e-artifacts")
if [ -n "$hkver" ]; then
	packages+=("linux-headers-$hkver")
else
	echo "install-deps: apt-cache knows no linux-image-cloud-amd64 yet;" \
	     "run apt-get update, then this again, for the vhost-blk" \
	     "module's kernel headers" >&2
fi
# Each package of the native architecture, asked for by name:arch: a bare
# `dpkg-query -W libfdt-dev` also answers for libfdt-dev:arm64 (a cross
# developer's usual state; it replaces the amd64 one, which is not
# multi-arch, and the build then finds no libfdt.so). Architecture-
# independent packages (linux-source, perl's data) are name:all to dpkg;
# apt takes name:native for those too.
arch=$(dpkg --print-architecture)
installed()
{
	local a
	for a in "$arch" all; do
		dpkg-query -W -f='${Status}' "$1:$a" 2>/dev/null |
			grep -q 'install ok installed' && return 0
	done
	return 1
}
missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p:$arch")
done
# The arm64 cross tier (CTest cross.aarch64): its compiler, :arm64
# libraries and qemu-user, installed by its script.
"$(dirname "$0")/cross-aarch64.sh" --deps-only
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "${missing[@]}"
