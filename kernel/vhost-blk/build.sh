#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds vhost_blk.ko out of tree: build.sh [KERNEL_VERSION] [OUTDIR].
#
# Needs Debian's linux-headers-KERNEL_VERSION and linux-source-SERIES
# (/usr/src/linux-source-SERIES.tar.xz) of the same package version: the
# module uses the vhost core's private drivers/vhost/vhost.h, whose structs
# must match the vhost.ko built from that source. Only that one header is
# extracted, into OUTDIR/vhost-core, at build time by vhost-core.sh
# (cached there with the package version it came from). A version
# mismatch is an error: a different vhost.h may lay struct
# vhost_virtqueue out differently and the module would then corrupt the
# core's memory. VHOST_BLK_ALLOW_MISMATCH=1
# builds anyway (with a warning) for a source known to be equivalent.
# Exit status: 0 built; 77 headers or source not installed (the only
# skip); 1 anything else that failed: a compile error, tar, a version
# mismatch (make and tar exit 2 themselves, so 2 is never a skip).
set -euo pipefail
# Whatever fails under set -e ends the build with 1, not its own status.
trap 'exit 1' ERR

here=$(cd "$(dirname "$0")" && pwd)
kver=${1:-$(uname -r)}
out=${2:-$here/out/$kver}

kdir=/usr/src/linux-headers-$kver
[ -d "$kdir" ] || kdir=/lib/modules/$kver/build
if [ ! -f "$kdir/Makefile" ]; then
	echo "vhost-blk: no kernel headers for $kver;" \
	     "install them: apt-get install linux-headers-$kver" >&2
	exit 77
fi
# vhost.h from linux-source of the headers' version (vhost-core.sh);
# its 77 (linux-source not installed) is a skip here too.
rc=0
"$here/vhost-core.sh" "$kver" "$out" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
mkdir -p "$out/uapi"
cp "$here/vhost_blk.c" "$here/Kbuild" "$out/"
cp "$here/uapi/vhost_blk.h" "$out/uapi/"
make -C "$kdir" M="$out" modules ||
	{ echo "vhost-blk: the module failed to build for $kver" >&2; exit 1; }
echo "vhost-blk: built $out/vhost_blk.ko for $kver"
