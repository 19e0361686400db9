#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the debug L1 kernel for the vhost-blk module stress: tinyconfig +
# kasan.config (KASAN generic inline, lockdep, DEBUG_ATOMIC_SLEEP,
# DEBUG_LIST, KVM_AMD, VHOST, null_blk, ext4, io_uring, modules) through
# firmware/kernel/build.sh, which checks that every option of the fragment
# survived olddefconfig and caches the result (OUTDIR/cache/stamp).
#
# Usage: build-kernel.sh OUTDIR
# Environment: MICROVM_KERNEL_JOBS (default 2; the build is run with nice 5).
# Exit status: 0 OUTDIR/bzImage up to date; 77 linux-source-6.1 is not
# installed; 1 bad fragment or failed build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 1; }
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "build-kernel.sh: /usr/src/linux-source-6.1.tar.xz missing (apt-get install linux-source-6.1); skipping" >&2
	exit 77
fi
start=$(date +%s)
MICROVM_KERNEL_FRAGMENT=$here/kasan.config \
MICROVM_KERNEL_JOBS=${MICROVM_KERNEL_JOBS:-2} \
	nice -n 5 "$root/firmware/kernel/build.sh" "$1"
echo "build-kernel.sh: $(( $(date +%s) - start )) s"
