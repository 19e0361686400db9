#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real distribution's boot, microvm against QEMU's microvm machine, side
# by side in one run: the Debian 12 image of distro-image.sh (systemd,
# udev, Debian's cloud kernel and initramfs; root read-only) booted RUNS
# times under each VMM, the order turning each round, on the same block
# device, vCPU count and RAM. QEMU: -M microvm,acpi=on,pcie=on -cpu host,
# virtio-blk-pci with num-queues=CPUS, cache=none, aio=io_uring; microvm:
# --disk DEV with its defaults (virtio-pci, a queue per vCPU, cache=none,
# io_uring). Runs through tests/e2e/run-guest.sh: on /dev/kvm with
# vmx/svm directly, else in one emulated L1 (1 vCPU by default:
# MICROVM_E2E_L1_CPUS), whose disk the image is (--block-file). Under
# emulation absolute times mean little; the two VMMs' times in one L1
# and the counts do.
#
# Per boot (distro-boot-l1.sh, distro/bench-report.sh): the guest's uptime
# at /init (initramfs), at systemd's start, at multi-user (a unit ordered
# after multi-user.target) and at the end of the boot; systemd-analyze
# time, blame and critical-chain; the guest's interrupts per source, its
# clock source, its disk's requests, sectors and time and its hardware
# queues' requests; from L1: KVM's counters (exits, HLT exits,
# halt-polling, injections ...), KVM exits by reason, exits to userspace
# by reason, and the VMM's vCPU and other threads' CPU time.
#
# Usage: distro-boot.sh [--microvm BIN] [--microvm-b BIN] [--qemu BIN]
#        [--runs N] [--cpus N] [--memory MIB] [--image-dir DIR]
#        [--records FILE] [--timeout S] [--vmms "microvm qemu"]
# Environment: MICROVM_DISTRO_CMDLINE, MICROVM_DISTRO_ROOT_MODE,
# MICROVM_DISTRO_ARGS, MICROVM_DISTRO_WARMUP (distro-boot-l1.sh: by
# default one uncounted boot of the first VMM comes before round 1, since
# the first boot of an L1 ran faster than the later ones).
# Stdout: the records, then "summary" lines and a Markdown table.
# Exit: 0 when every boot reported, 77 when no image can be built here.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"
microvm=$HERE/../../build/microvm
microvm_b=-
qemu=$(command -v qemu-system-x86_64 || true)
runs=3
cpus=8
mib=1024
imgdir=$HERE/../../build/distro
records=
limit=
vmms="microvm qemu"
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--microvm-b) microvm_b=$2; shift 2 ;;
	--qemu) qemu=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--image-dir) imgdir=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--vmms) vmms=$2; shift 2 ;;
	*) echo "distro-boot: unknown option '$1'" >&2; exit 1 ;;
	esac
done
e2e_need_counts distro-boot "runs:$runs" "cpus:$cpus" "memory:$mib"
[ -x "$microvm" ] || { echo "distro-boot: no microvm at $microvm (build first)" >&2; exit 1; }
[ -n "$qemu" ] && [ -x "$qemu" ] ||
	{ echo "distro-boot: no qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 77; }
"$HERE/distro-image.sh" "$imgdir"
rc=$?
[ $rc -eq 0 ] || exit $rc
imgdir=$(cd "$imgdir" && pwd -P)
microvm=$(realpath "$microvm") || exit 1
[ "$microvm_b" = - ] || microvm_b=$(realpath "$microvm_b") || exit 1
qemu=$(realpath "$qemu") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/distro-boot.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
e2e_qemu_files "$qemu"
# Counting the uncounted warm-up boots too.
nboots=$((runs * $(echo "$vmms" | wc -w) + ${MICROVM_DISTRO_WARMUP:-1}))
echo "DREC note date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host_cpus=$(nproc)" \
	"qemu=\"$("$qemu" --version | head -n 1)\"" \
	"microvm=$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo ?)"
# The image travels as L1's disk (--block-file), not as an argument: an
# argument naming a file would be copied into L1's RAM. Direct mode uses
# the file, named by MICROVM_DISTRO_IMAGE.
MICROVM_DISTRO_IMAGE=$imgdir/root.raw \
MICROVM_E2E_L1_MEMORY=${MICROVM_E2E_L1_MEMORY:-$((mib * 2 + 1024))} \
MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" \
	--timeout "${limit:-$((300 + nboots * 420))}" \
	--block-file "$imgdir/root.raw" -- \
	"$HERE/distro-boot-l1.sh" "$microvm" "$microvm_b" "$qemu" \
	"$imgdir/vmlinuz" "$imgdir/initrd.img" "$runs" "$cpus" "$mib" "$vmms" \
	"${qfiles[@]}" 2>"$work/stderr" | tr -d '\r' | tee "$work/records"
status=${PIPESTATUS[0]}
grep -E '^run-guest: (mode|nested)' "$work/stderr" | sed 's/^/DREC note /'
if [ "$status" -ne 0 ]; then
	echo "distro-boot: the run ended with status $status; stderr:" >&2
	tail -n 40 "$work/stderr" >&2
fi
[ -z "$records" ] || cp "$work/records" "$records"
"$HERE/distro-summary.sh" "$work/records" "$vmms"
exit "$status"
