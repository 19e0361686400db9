#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Puts the vhost core's private header, drivers/vhost/vhost.h, into
# DIR/vhost-core/ for a build of vhost_blk.ko against KERNEL_VERSION:
# vhost-core.sh KERNEL_VERSION DIR. Used by build.sh and by the DKMS
# package's MAKE line (debian/vhost-blk-dkms.dkms).
#
# The header comes from Debian's linux-source-SERIES
# (/usr/src/linux-source-SERIES.tar.xz), which must be the same package
# version as linux-headers-KERNEL_VERSION: the module's view of struct
# vhost_virtqueue/vhost_dev must be that of the vhost.ko it links against,
# and a different source may lay them out differently (the module would
# then corrupt the core's memory). A mismatch is an error;
# VHOST_BLK_ALLOW_MISMATCH=1 goes on (with a warning) for a pair known to
# agree. The header is cached in DIR/vhost-core with the version it came
# from. Exit status: 0 done; 77 linux-source not installed; 1 a version
# mismatch or anything else that failed.
set -euo pipefail
trap 'exit 1' ERR

[ $# -eq 2 ] || { echo "usage: $0 KERNEL_VERSION DIR" >&2; exit 1; }
kver=$1
dir=$2
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

mkdir -p "$dir/vhost-core"
stamp=$dir/vhost-core/source-version
if [ ! -f "$dir/vhost-core/vhost.h" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$sver" ]; then
	tmp=$(mktemp -d "$dir/vhost-core/x.XXXXXX")
	tar -xJf "$src" -C "$tmp" --wildcards \
		"linux-source-$series/drivers/vhost/vhost.h"
	mv "$tmp/linux-source-$series/drivers/vhost/vhost.h" "$dir/vhost-core/"
	rm -rf "$tmp"
	echo "$sver" >"$stamp"
fi
