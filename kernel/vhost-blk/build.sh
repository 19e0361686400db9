#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds vhost_blk.ko out of tree: build.sh [KERNEL_VERSION] [OUTDIR].
#
# Needs Debian's linux-headers-KERNEL_VERSION and linux-source-SERIES
# (/usr/src/linux-source-SERIES.tar.xz) of the same package version: the
# module uses the vhost core's private drivers/vhost/vhost.h, whose structs
# must match the vhost.ko built from that source. Only that one header is
# extracted, into OUTDIR/vhost-core, at build time (cached there with the
# package version it came from). A version mismatch is an error: a
# different vhost.h may lay struct vhost_virtqueue out differently and the
# module would then corrupt the core's memory. VHOST_BLK_ALLOW_MISMATCH=1
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
series=$(echo "$kver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
src=/usr/src/linux-source-$series.tar.xz
if [ ! -f "$src" ]; then
	echo "vhost-blk: $src missing; install it:" \
	     "apt-get install linux-source-$series" >&2
	exit 77
fi

pkgver() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown
}
hver=$(pkgver "linux-headers-$kver")
sver=$(pkgver "linux-source-$series")
if [ "$hver" != "$sver" ] || [ "$hver" = unknown ]; then
	msg="linux-headers-$kver is $hver but linux-source-$series is $sver"
	if [ "${VHOST_BLK_ALLOW_MISMATCH:-0}" != 1 ]; then
		echo "vhost-blk: $msg; vhost.h must come from the source of" \
		     "the running vhost.ko: install matching versions" \
		     "(or set VHOST_BLK_ALLOW_MISMATCH=1 if you know they" \
		     "agree)" >&2
		exit 1
	fi
	echo "vhost-blk: warning: $msg (VHOST_BLK_ALLOW_MISMATCH=1)" >&2
fi

mkdir -p "$out/vhost-core" "$out/uapi"
stamp=$out/vhost-core/source-version
if [ ! -f "$out/vhost-core/vhost.h" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$sver" ]; then
	tmp=$(mktemp -d "$out/vhost-core/x.XXXXXX")
	tar -xJf "$src" -C "$tmp" --wildcards \
		"linux-source-$series/drivers/vhost/vhost.h"
	mv "$tmp/linux-source-$series/drivers/vhost/vhost.h" "$out/vhost-core/"
	rm -rf "$tmp"
	echo "$sver" >"$stamp"
fi
cp "$here/vhost_blk.c" "$here/Kbuild" "$out/"
cp "$here/uapi/vhost_blk.h" "$out/uapi/"
make -C "$kdir" M="$out" modules ||
	{ echo "vhost-blk: the module failed to build for $kver" >&2; exit 1; }
echo "vhost-blk: built $out/vhost_blk.ko for $kver"
