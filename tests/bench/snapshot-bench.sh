#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Snapshots against cold boots and against QEMU, side by side in one run
# (tests/bench/snapshot-bench-l1.sh, tests/bench/snapshot-probe.c): the
# boot-time guest (Debian's kernel, the test initramfs with
# tests/e2e/guest/boottime-init.sh as /init printing a tick every 10 ms),
# one vCPU, MIB of RAM, no disk. Per run:
#   boot     exec to the first tick of a cold boot (microvm, QEMU)
#   save     the snapshot of the ticking guest: microvm PUT /snapshot/create
#            on the paused guest, QEMU migrate to "exec:cat > FILE"; its
#            size (state, memory file, allocated)
#   restore  exec to the first tick after microvm --restore, after PUT
#            /snapshot/load (also from the request), after QEMU -incoming;
#            the pages of the memory file resident 1 s later
# and once: the Pss of CLONES restores of one snapshot against CLONES cold
# boots, all at once. Through tests/e2e/run-guest.sh: directly on a KVM
# host, else nested in the emulated L1. Under emulation absolute times
# mean little; ratios within the run do. Memory figures are real.
#
# Usage: snapshot-bench.sh [--microvm BIN] [--artifacts DIR] [--runs N]
#        [--clones N] [--memory MIB] [--qemu BIN] [--records FILE]
#        [--kernel FILE]
#   --kernel: the guest kernel instead of Debian's (the project's,
#   build/firmware/kernel/bzImage: the issue's cold boot to compare with)
# Stdout: the records, then the tables (Markdown).
# Exit: 0; 1 when a measurement failed; 77 without QEMU.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"
microvm=$HERE/../../build/microvm
art=$HERE/../../build/e2e-artifacts
runs=3
clones=10
mib=128
qemu=$(command -v qemu-system-x86_64 || true)
records=
kernel=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--clones) clones=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--qemu) qemu=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	*) echo "snapshot-bench: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$qemu" ] && [ -x "$qemu" ] ||
	{ echo "snapshot-bench: SKIP: no qemu-system-x86_64" >&2; exit 77; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
qemu=$(realpath "$qemu") || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/snapshot-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
gcc -static -O2 -Wall -Wextra -Werror -o "$work/snapshot-probe" \
	"$HERE/snapshot-probe.c" || exit 1
e2e_boottime_initrd "$art" "$work/initrd.cpio.gz" || exit 1
cp "${kernel:-$art/vmlinuz}" "$work/vmlinuz" || exit 1
e2e_qemu_files "$qemu"
echo "note date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host_cpus=$(nproc)" \
	"load=\"$(cut -d' ' -f1-3 /proc/loadavg)\"" \
	"qemu=\"$("$qemu" --version | head -n 1)\"" \
	"microvm=$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo ?)" \
	"kernel=${kernel:-debian-cloud}"
MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-2} \
	"$E2E_DIR/run-guest.sh" --artifacts "$art" \
	--timeout $((600 + runs * 300)) -- \
	"$HERE/snapshot-bench-l1.sh" "$runs" "$clones" "$work/snapshot-probe" \
	"$microvm" "$qemu" "$work/vmlinuz" "$work/initrd.cpio.gz" "$mib" \
	"${qfiles[@]}" 2>"$work/stderr" | tr -d '\r' | tee "$work/records"
status=${PIPESTATUS[0]}
grep -E '^run-guest: (mode|nested)' "$work/stderr" | sed 's/^/note /'
[ "$status" -eq 0 ] || { echo "snapshot-bench: status $status" >&2; tail -n 30 "$work/stderr" >&2; }
[ -z "$records" ] || cp "$work/records" "$records"

# med VMM WHAT KEY: the median over the runs of KEY in the records of
# VMM doing WHAT.
med()
{
	awk -v vmm="$1" -v what="$2" -v key="$3" '
	{
		ok = 0; w = 0; v = ""
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "vmm" && kv[2] == vmm) ok = 1
			if (kv[1] == "what" && kv[2] == what) w = 1
			if (kv[1] == key) v = kv[2]
		}
		if (ok && (w || what == "-") && v ~ /^[0-9.]+$/) print v
	}' "$work/records" | sort -g | awk '
	{ v[NR] = $1 }
	END {
		if (!NR) { print "-"; exit }
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.3f", a / b
		else print "-" }'
}
mb=$(med microvm boot tick_ms) mr=$(med microvm restore tick_ms)
ml=$(med microvm load tick_ms) mlr=$(med microvm load request_tick_ms)
qb=$(med qemu boot tick_ms) qr=$(med qemu restore tick_ms)
ms=$(med microvm save create_ms) qs=$(med qemu save create_ms)
echo
echo "| median of $runs runs, ms | microvm | QEMU | microvm / QEMU |"
echo "| --- | --- | --- | --- |"
echo "| cold boot: exec to first tick | $mb | $qb | $(ratio "$mb" "$qb") |"
echo "| restore: exec to first tick (--restore; -incoming) | $mr | $qr | $(ratio "$mr" "$qr") |"
echo "| restore: exec to first tick (PUT /snapshot/load) | $ml | - | $(ratio "$ml" "$qr") |"
echo "| restore: load request to first tick | $mlr | - | - |"
echo "| snapshot: create request to done | $ms | $qs | $(ratio "$ms" "$qs") |"
echo "| restore / cold boot | $(ratio "$mr" "$mb") | $(ratio "$qr" "$qb") | |"
echo
echo "| median of $runs runs | microvm | QEMU |"
echo "| --- | --- | --- |"
echo "| memory file, bytes (apparent) | $(med microvm - mem_b) | $(med qemu - mem_b) |"
echo "| memory file, KiB allocated | $(med microvm - mem_alloc_kb) | $(med qemu - mem_alloc_kb) |"
echo "| state file, bytes | $(med microvm - state_b) | (in the stream) |"
echo "| memory file resident 1 s after restore, KiB (--restore) | $(med microvm restore mem_rss_kb) | - |"
echo "| memory file resident 1 s after restore, KiB (load) | $(med microvm load mem_rss_kb) | - |"
r=$(sed -n 's/^mem what=restored .*pss_kb=\([0-9]*\).*/\1/p' "$work/records")
b=$(sed -n 's/^mem what=booted .*pss_kb=\([0-9]*\).*/\1/p' "$work/records")
echo
echo "| $clones guests at once, Pss sum KiB | restored from one snapshot | cold booted | restored / booted |"
echo "| --- | --- | --- | --- |"
echo "| microvm | ${r:--} | ${b:--} | $(ratio "${r:--}" "${b:--}") |"
exit "$status"
