#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Boot time and memory footprint, microvm against QEMU's microvm machine,
# side by side in one run: the same kernel, initramfs (the test initramfs
# with tests/e2e/guest/boottime-init.sh as /init), RAM, vCPU count and
# disk (null_blk in L1 on virtio-mmio, cache=none; QEMU: iothread,
# aio=io_uring), booted RUNS times each, alternating. Runs through
# tests/e2e/run-guest.sh: on /dev/kvm with vmx/svm directly, else inside
# the emulated L1 machine, whose initramfs then carries QEMU, the
# libraries ldd lists for it and the firmware it loads (qboot and option
# ROMs), nothing else of QEMU's.
#
# Measured by tests/bench/boot-probe.c where the VMMs run:
#   exec_to_init_ms  VMM exec to the guest /init's console marker
#   overhead_kb      VMM Rss minus the guest RAM mapping's Rss (smaps), 1 s
#                    after /init (idle) and while the guest reads its disk
#                    with O_DIRECT dd (io)
#   first_kvm_run_ms, boot_time_init_ms   microvm's --stats startup line
#                    and its boot-time device's "init reached" mark
# Under emulation (nested mode) absolute times mean little; the ratio
# between the two VMMs in the same run does. Memory figures are real.
#
# With --fw-kernel (the project's kernel, firmware/kernel) each round also
# boots that kernel with no initramfs from a firmware/rootfs image holding
# the same boot-time /init (root=/dev/vda ro init=/boottime-init), under
# microvm and under QEMU (vmm=microvm_fw, qemu_fw): the time to /init of
# the project's kernel against Debian's kernel + initramfs, and against
# QEMU booting the same kernel and disk.
#
# Usage: boot-vs-qemu.sh [--microvm BIN] [--artifacts DIR] [--runs N]
#        [--memory MIB] [--qemu BIN] [--records FILE] [--timeout S]
#        [--fw-kernel BZIMAGE]
# --timeout: the harness limit (default 180 + 300 per run; a nested QEMU
# boot takes 45-250 s on 2 shared cores, microvm's 20-70 s); runs that do
# not finish in it are missing from the summary (its n= says how many).
# Stdout: every record (key=value lines, see boot-probe.c and
# boot-l1.sh), then "summary" key=value lines and a Markdown table.
# Nested runs on a shared machine: serialize them (flock(1) on one file).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"
microvm=$HERE/../../build/microvm
art=$HERE/../../build/e2e-artifacts
runs=5
mib=256
qemu=$(command -v qemu-system-x86_64 || true)
records=
limit=
fw_kernel=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--qemu) qemu=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--fw-kernel) fw_kernel=$2; shift 2 ;;
	*) echo "boot-vs-qemu: unknown option '$1'" >&2; exit 1 ;;
	esac
done
case "$runs" in
'' | *[!0-9]* | 0) echo "boot-vs-qemu: --runs $runs: need a count >= 1" >&2; exit 1 ;;
esac
case "$mib" in
'' | *[!0-9]* | 0) echo "boot-vs-qemu: --memory $mib: need MiB >= 1" >&2; exit 1 ;;
esac
[ -x "$microvm" ] || { echo "boot-vs-qemu: no microvm at $microvm (build first)" >&2; exit 1; }
[ -n "$qemu" ] && [ -x "$qemu" ] ||
	{ echo "boot-vs-qemu: no qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 77; }
[ -f "$art/l2-initrd.cpio.gz" ] ||
	{ echo "boot-vs-qemu: no $art/l2-initrd.cpio.gz (tests/e2e/prepare.sh $art)" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
qemu=$(realpath "$qemu") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/boot-vs-qemu.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
gcc -static -O2 -Wall -Wextra -Werror -o "$work/boot-probe" \
	"$HERE/boot-probe.c" || exit 1
e2e_boottime_initrd "$art" "$work/initrd.cpio.gz" || exit 1
cp "$art/vmlinuz" "$work/vmlinuz" || exit 1
fw_args=(- -)
if [ -n "$fw_kernel" ]; then
	[ -f "$fw_kernel" ] || { echo "boot-vs-qemu: --fw-kernel $fw_kernel: no such file (cmake --build build --target guest-kernel)" >&2; exit 1; }
	cp "$fw_kernel" "$work/fw-bzImage" || exit 1
	"$HERE/../../firmware/rootfs/build.sh" --size 64M \
		--add "$art/bin/outb:/bin/outb" \
		--add "$E2E_DIR/guest/scenarios.sh:/e2e/scenarios.sh" \
		--add "$E2E_DIR/guest/boottime-init.sh:/boottime-init" \
		"$work/fw-root.raw" >/dev/null || exit 1
	fw_args=("$work/fw-bzImage" "$work/fw-root.raw")
fi

# What QEMU's microvm machine loads from its data directory.
e2e_qemu_files "$qemu"

echo "note date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host_cpus=$(nproc)" \
	"host_cpu=\"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)\"" \
	"qemu=\"$("$qemu" --version | head -n 1)\"" \
	"microvm=$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo ?)"
# The kernel is copied, so that nested mode stages it like any file.
MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --artifacts "$art" \
	--timeout "${limit:-$((180 + runs * 300))}" -- \
	"$HERE/boot-l1.sh" "$runs" "$work/boot-probe" "$microvm" "$qemu" \
	"$work/vmlinuz" "$work/initrd.cpio.gz" "$mib" "${fw_args[@]}" \
	"${qfiles[@]}" \
	2>"$work/stderr" | tr -d '\r' | tee "$work/records"
status=${PIPESTATUS[0]}
grep -E '^run-guest: (mode|nested)' "$work/stderr" | sed 's/^/note /'
if [ "$status" -ne 0 ]; then
	echo "boot-vs-qemu: the run ended with status $status; stderr:" >&2
	tail -n 40 "$work/stderr" >&2
fi
[ -z "$records" ] || cp "$work/records" "$records"

# values KIND VMM KEY [PHASE]: KEY's values in KIND records, one a line.
values()
{
	awk -v kind="$1" -v vmm="$2" -v key="$3" -v phase="${4:-}" '
	$1 == kind {
		ok = 0; v = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "vmm" && kv[2] == vmm) ok++
			if (kv[1] == "phase" && kv[2] != phase) ok = -9
			if (kv[1] == key) v = kv[2]
		}
		if (ok == 1 && v ~ /^[0-9.]+$/ && v >= 0) print v
	}' "$work/records"
}

# stat KIND VMM KEY [PHASE]: "median min max n" of those values.
stat()
{
	values "$@" | sort -g | awk '
	{ v[NR] = $1 }
	END {
		if (!NR) { print "- - - 0"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR], NR
	}'
}

summary()
{
	local name=$1 s
	shift
	s=$(stat "$@")
	set -- $s
	echo "summary $name median=$1 min=$2 max=$3 n=$4"
}
for v in microvm qemu; do
	summary "${v}_exec_to_init_ms" boot "$v" exec_to_init_ms
	summary "${v}_overhead_idle_kb" rss "$v" overhead_kb idle
	summary "${v}_overhead_io_kb" rss "$v" overhead_kb io
	summary "${v}_overhead_anon_idle_kb" rss "$v" overhead_anon_kb idle
	summary "${v}_overhead_anon_io_kb" rss "$v" overhead_anon_kb io
	summary "${v}_guest_ram_idle_kb" rss "$v" guest_ram_kb idle
done | tee "$work/summary"
summary microvm_first_kvm_run_ms mvstats microvm first_kvm_run_ms | tee -a "$work/summary"
summary microvm_boot_time_init_ms mvstats microvm boot_time_init_ms | tee -a "$work/summary"
if [ -n "$fw_kernel" ]; then
	for v in microvm_fw qemu_fw; do
		summary "${v}_exec_to_init_ms" boot "$v" exec_to_init_ms
		summary "${v}_overhead_idle_kb" rss "$v" overhead_kb idle
	done | tee -a "$work/summary"
fi

cell()
{
	awk -v n="summary $1" '$1 " " $2 == n {
		split($3, m, "="); split($4, lo, "="); split($5, hi, "=")
		printf "%s (%s-%s)", m[2], lo[2], hi[2]
	}' "$work/summary"
}
echo
echo "| median (min-max), $runs runs | microvm | QEMU $("$qemu" --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p') microvm |"
echo "| --- | --- | --- |"
echo "| exec to guest /init, ms | $(cell microvm_exec_to_init_ms) | $(cell qemu_exec_to_init_ms) |"
echo "| VMM overhead Rss idle, KiB | $(cell microvm_overhead_idle_kb) | $(cell qemu_overhead_idle_kb) |"
echo "| VMM overhead Rss under I/O, KiB | $(cell microvm_overhead_io_kb) | $(cell qemu_overhead_io_kb) |"
echo "| of which anonymous, idle, KiB | $(cell microvm_overhead_anon_idle_kb) | $(cell qemu_overhead_anon_idle_kb) |"
echo "| of which anonymous, I/O, KiB | $(cell microvm_overhead_anon_io_kb) | $(cell qemu_overhead_anon_io_kb) |"
echo "| guest RAM touched (idle), KiB | $(cell microvm_guest_ram_idle_kb) | $(cell qemu_guest_ram_idle_kb) |"
echo "| start to first KVM_RUN (--stats), ms | $(cell microvm_first_kvm_run_ms) | - |"
echo "| start to init mark (boot-time device), ms | $(cell microvm_boot_time_init_ms) | - |"
if [ -n "$fw_kernel" ]; then
	# median KEY: the median of a summary line.
	median() { awk -v n="summary $1" '$1 " " $2 == n { split($3, m, "="); print m[2] }' "$work/summary"; }
	# ratio A B: A's median over B's, "-" if either is missing.
	ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "-" }'; }
	echo
	echo "| median (min-max), $runs runs, the project's kernel from root.raw (no initramfs) | microvm | QEMU microvm |"
	echo "| --- | --- | --- |"
	echo "| exec to guest /init, ms | $(cell microvm_fw_exec_to_init_ms) | $(cell qemu_fw_exec_to_init_ms) |"
	echo "| VMM overhead Rss idle, KiB | $(cell microvm_fw_overhead_idle_kb) | $(cell qemu_fw_overhead_idle_kb) |"
	echo
	echo "ratio fw_microvm_over_debian_microvm=$(ratio microvm_fw_exec_to_init_ms microvm_exec_to_init_ms)" \
		"fw_microvm_over_fw_qemu=$(ratio microvm_fw_exec_to_init_ms qemu_fw_exec_to_init_ms)" \
		"debian_microvm_over_debian_qemu=$(ratio microvm_exec_to_init_ms qemu_exec_to_init_ms)"
fi
exit "$status"
