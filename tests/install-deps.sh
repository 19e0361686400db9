#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs, from Debian's registry, the packages microvm needs to build and
# to run its tests (real guests included), skipping those already present.
# The last line is the guest kernel's build (firmware/kernel/build.sh):
# the source, Kconfig's flex/bison, bc for timeconst.h, libelf for objtool,
# xz for the tarball, perl for its scripts; lz4 above compresses the image.
# Uses sudo when not run as root. MICROVM_SKIP_DEPS=1 skips it all.
set -euo pipefail

packages=(build-essential cmake pkg-config liburing-dev libfdt-dev libseccomp-dev
	qemu-system-x86 busybox-static cpio kmod acpica-tools clang
	e2fsprogs fio lz4 dmsetup
	linux-source-6.1 flex bison bc libelf-dev xz-utils perl)

[ "${MICROVM_SKIP_DEPS:-0}" = 1 ] && exit 0
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "${missing[@]}"
