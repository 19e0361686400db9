#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The control plane against QEMU's, side by side in one run: microvm's
# Firecracker API (--api-sock) against QEMU's QMP on its microvm machine,
# the same kernel, initramfs (tests/e2e/guest/boottime-init.sh as /init),
# RAM and one vCPU, no disk. Runs through tests/e2e/run-guest.sh: on
# /dev/kvm with vmx/svm directly, else inside the emulated L1 machine.
# Each round (tests/bench/lifecycle-l1.sh, tests/bench/lifecycle-probe.c)
# measures, per VMM:
#   connect_ms, answer_ms  exec to the control socket accepting, and to its
#                          first answer (GET / ; QMP's greeting)
#   cpu_ms                 the VMM's CPU time (all threads) at that answer
#   start_to_init_ms       InstanceStart (QEMU: -S, then "cont") to the
#                          guest /init's console marker
#   pause/resume           CYCLES round trips of PATCH /vm Paused/Resumed
#                          (QEMU: "stop"/"cont") on one open connection:
#                          fastest, median and p90 of each run
#   rss_kb, overhead_kb    Rss, and Rss minus the guest RAM mapping's, 3 s
#                          after /init (guest and API idle); also for
#                          microvm booted from its command line, no API
# Under emulation (nested mode) absolute times mean little; the ratio
# between the two VMMs in the same run does. Memory figures are real.
#
# Usage: lifecycle-bench.sh [--microvm BIN] [--artifacts DIR] [--runs N]
#        [--cycles N] [--memory MIB] [--qemu BIN] [--records FILE]
#        [--timeout S] [--summarize RECORDS]
# --summarize: no run; the tables from the records (--records) of one.
# Stdout: every record, then "summary" lines and a Markdown table.
# Exit: 0; 1 when a run failed; 77 when QEMU is missing.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"
microvm=$HERE/../../build/microvm
art=$HERE/../../build/e2e-artifacts
runs=3
cycles=20
mib=256
qemu=$(command -v qemu-system-x86_64 || true)
records=
limit=
summarize=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--cycles) cycles=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--qemu) qemu=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--summarize) summarize=$2; shift 2 ;;
	*) echo "lifecycle-bench: unknown option '$1'" >&2; exit 1 ;;
	esac
done
e2e_need_counts lifecycle-bench "runs:$runs" "cycles:$cycles" "memory:$mib"
[ "$cycles" -le 1000 ] ||
	{ echo "lifecycle-bench: --cycles $cycles: at most 1000" >&2; exit 1; }
# bench_run: the nested run; its records land in $work/records.
bench_run()
{
	[ -x "$microvm" ] || { echo "lifecycle-bench: no microvm at $microvm (build first)" >&2; exit 1; }
	[ -n "$qemu" ] && [ -x "$qemu" ] ||
		{ echo "lifecycle-bench: SKIP: no qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 77; }
	[ -f "$art/l2-initrd.cpio.gz" ] ||
		{ echo "lifecycle-bench: no $art/l2-initrd.cpio.gz (tests/e2e/prepare.sh $art)" >&2; exit 1; }
	art=$(cd "$art" && pwd -P) || exit 1
	microvm=$(realpath "$microvm") || exit 1
	qemu=$(realpath "$qemu") || exit 1

	gcc -static -O2 -Wall -Wextra -Werror -o "$work/lifecycle-probe" \
		"$HERE/lifecycle-probe.c" || exit 1
	e2e_boottime_initrd "$art" "$work/initrd.cpio.gz" || exit 1
	cp "$art/vmlinuz" "$work/vmlinuz" || exit 1

	# What QEMU's microvm machine loads from its data directory.
	e2e_qemu_files "$qemu"

	echo "note date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host_cpus=$(nproc)" \
		"load=\"$(cut -d' ' -f1-3 /proc/loadavg)\"" \
		"qemu=\"$("$qemu" --version | head -n 1)\"" \
		"microvm=$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo ?)"
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --artifacts "$art" \
		--timeout "${limit:-$((120 + runs * 200))}" -- \
		"$HERE/lifecycle-l1.sh" "$runs" "$work/lifecycle-probe" "$microvm" \
		"$qemu" "$work/vmlinuz" "$work/initrd.cpio.gz" "$mib" "$cycles" \
		"${qfiles[@]}" 2>"$work/stderr" | tr -d '\r' | tee "$work/records"
	status=${PIPESTATUS[0]}
	grep -E '^run-guest: (mode|nested)' "$work/stderr" | sed 's/^/note /'
	if [ "$status" -ne 0 ]; then
		echo "lifecycle-bench: the run ended with status $status; stderr:" >&2
		tail -n 40 "$work/stderr" >&2
	fi
	[ -z "$records" ] || cp "$work/records" "$records"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/lifecycle-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
if [ -n "$summarize" ]; then
	# The tables again from the records of an earlier run.
	cp "$summarize" "$work/records" || exit 1
	c=$(sed -n 's/^note .* cycles=\([0-9]*\) .*/\1/p' "$work/records" | head -n 1)
	cycles=${c:-$cycles}
	status=0
else
	bench_run
fi

# med VMM KEY: the median over the runs of KEY in VMM's lc records.
med()
{
	awk -v vmm="$1" -v key="$2" '
	$1 == "lc" {
		ok = 0; v = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "vmm" && kv[2] == vmm) ok = 1
			if (kv[1] == key) v = kv[2]
		}
		if (ok && v ~ /^[0-9.]+$/) print v
	}' "$work/records" | sort -g | awk '
	{ v[NR] = $1 }
	END {
		if (!NR) { print "-"; exit }
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}
# ratio A B: A over B, "-" if either is missing.
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b
		else print "-" }'
}

n=$(grep -c '^lc vmm=microvm ' "$work/records")
echo
echo "| median of $n runs ($cycles pause/resume cycles each) | microvm API | QEMU QMP | microvm / QEMU |"
echo "| --- | --- | --- | --- |"
for row in "connect_ms:exec to control socket accepting, ms" \
	"answer_ms:exec to first answer, ms" \
	"cpu_ms:VMM CPU time at first answer, ms" \
	"start_to_init_ms:start request to guest /init, ms" \
	"pause_min_ms:pause round trip, fastest ms" \
	"pause_med_ms:pause round trip, median ms" \
	"pause_p90_ms:pause round trip, p90 ms" \
	"resume_min_ms:resume round trip, fastest ms" \
	"resume_med_ms:resume round trip, median ms" \
	"resume_p90_ms:resume round trip, p90 ms" \
	"overhead_kb:VMM Rss minus guest RAM, idle, KiB" \
	"rss_kb:VMM Rss, idle, KiB"; do
	key=${row%%:*}
	a=$(med microvm "$key") b=$(med qemu "$key")
	echo "summary $key microvm=$a qemu=$b" >>"$work/summary"
	echo "| ${row#*:} | $a | $b | $(ratio "$a" "$b") |"
done
api_over=$(med microvm overhead_kb) noapi_over=$(med microvm_noapi overhead_kb)
api_rss=$(med microvm rss_kb) noapi_rss=$(med microvm_noapi rss_kb)
echo
echo "| median of $n runs, guest idle | microvm --api-sock | microvm without API | difference |"
echo "| --- | --- | --- | --- |"
echo "| VMM Rss minus guest RAM, KiB | $api_over | $noapi_over | $(awk -v a="$api_over" -v b="$noapi_over" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) print a - b; else print "-" }') |"
echo "| VMM Rss, KiB | $api_rss | $noapi_rss | $(awk -v a="$api_rss" -v b="$noapi_rss" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) print a - b; else print "-" }') |"
echo
cat "$work/summary"
exit "$status"
