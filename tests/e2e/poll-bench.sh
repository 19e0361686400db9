#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Adaptive polling A/B in a real guest: guest fio 4k randread QD32 (one
# job, 2 vCPUs) on a null_blk disk, microvm with poll-us=0 and with the
# default, over virtio-pci (2 queues) and virtio-mmio, ROUNDS times each,
# all in one L1 when nested (poll-bench-l1.sh). Prints per I/O: kicks and
# irqfd signals (--stats), guest interrupts (/proc/interrupts), KVM exits
# and userspace exits (io + mmio) from L1's debugfs, and guest IOPS
# (emulated: compare only within the run). poll-bench.awk makes the table.
#
# Usage: poll-bench.sh [--microvm PATH] [--artifacts DIR] [--rounds N]
#                      [CONFIG...]   (TRANSPORT:QUEUES:POLL, POLL - = default)
set -euo pipefail
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
microvm=$E2E_DIR/../../build/microvm
art=$E2E_DIR/../../build/e2e-artifacts
rounds=2
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- pci:2:0 pci:2:- mmio:1:0 mmio:1:-
microvm=$(realpath "$microvm")
art=$(realpath "$art")
work=$(mktemp -d /tmp/poll-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

stage()
{
	mkdir -p "$2$(dirname "$1")"
	cp -L "$1" "$2$1"
}

# Root file system: busybox, fio and every library ldd lists, the init.
dir=$work/rootdir
mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp}
install -m 755 "$E2E_DIR/guest/fio-bench-init.sh" "$dir/sbin/init"
cp /bin/busybox "$dir/bin/busybox"
for applet in $(/bin/busybox --list-full); do
	[ -e "$dir/$applet" ] || ln -s /bin/busybox "$dir/$applet"
done
stage "$(command -v fio)" "$dir"
while read -r lib; do
	stage "$lib" "$dir"
done < <(ldd "$(command -v fio)" |
	 sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p
		 s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
# Copies: files outside the artifacts directory travel into L1 as inputs.
cp "$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$work/"
truncate -s $((128 << 20)) "$work/root.raw"
mkfs.ext4 -q -F -d "$dir" "$work/root.raw"

MICROVM_E2E_L1_MEMORY=${MICROVM_E2E_L1_MEMORY:-2048} \
	"$E2E_DIR/run-guest.sh" --artifacts "$art" --timeout 1200 \
	-- \
	"$E2E_DIR/poll-bench-l1.sh" "$rounds" "$microvm" "$work/vmlinuz" \
	"$work/l2-initrd.cpio.gz" "$work/root.raw" "$@" | tee "$work/out" |
	grep -E '^BENCH-' || true
awk -f "$E2E_DIR/poll-bench.awk" "$work/out"
