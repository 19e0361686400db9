#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Real-guest block benchmark (issue 8, part 2): fio 4k randread in an L2
# guest on null_blk, under microvm and under QEMU's microvm machine, side by
# side in ONE L1 machine (nested mode of tests/e2e/run-guest.sh, or this
# host in direct mode). Per (VMM, transport, queues, repeat) it prints one
# "guest-fio: key=value ..." line, then a table of means with the spread
# (min-max) over the repeats. Under emulation only ratios and event counts
# per I/O mean anything, never the IOPS themselves.
#
# Usage: guest-fio.sh [--microvm BIN] [--artifacts DIR] [--runtime S]
#        [--repeat N] [--transports "pci mmio"] [--queues "1 2"]
#        [--vmms "microvm qemu"] (microvm+K=V: microvm with ,K=V on --disk) [--quick] [--raw FILE] [--mode MODE]
#        [--vhost KO]
#   --vmms      microvm, microvm+K=V, microvm-vhost (microvm with
#               engine=vhost on the test disk; needs --vhost),
#               microvm-vhost+K=V, qemu and qemu-notrace (QEMU without
#               its trace, whatever MICROVM_BENCH_QEMU_TRACE says)
#   --microvm-b BIN  a second microvm binary (another tree's build, static
#               as the default build is), measured as VMM "microvm-b":
#               a change against the tree before it in one L1
#   --vhost KO  vhost_blk.ko built for L1's kernel: L1 insmods its vhost
#               core and KO before the first run and rmmods KO after the
#               last (a failed rmmod or a kernel BUG/Oops/WARNING fails
#               the run); nested only
#   --plan "pci:2 mmio:1 ..."  transport:queues pairs in this order (instead
#               of every --transports x --queues pair)
#   --quick     smoke test: pci, 1 queue, both VMMs, 2 s of fio, 1 repeat
#   --raw FILE  keep the raw L1 output (BENCH-RAW lines) in FILE
#   --from-raw FILE  no run: the lines and table from a kept raw FILE
# Environment (passed into L1): MICROVM_BENCH_CPUS (L2 vCPUs, default 2),
# MICROVM_BENCH_MEM (L2 MiB, 512), MICROVM_BENCH_DEPTH (32),
# MICROVM_BENCH_ENGINE (io_uring), MICROVM_BENCH_QEMU_TRACE (1: QEMU's
# kvm_run_exit events, its userspace exits; 2: also its device's
# notifications; 0: none),
# MICROVM_BENCH_DISK_OPTS (appended to microvm's --disk, e.g. ",poll-us=50"),
# MICROVM_BENCH_FIO_CPU (the L2 CPU fio runs on: free, the default, for
# the scheduler's choice; away for a CPU other than the one taking the
# disk's first interrupt; irq for that one; or a number),
# MICROVM_BENCH_RQ_AFFINITY (the guest disk's rq_affinity: 0, 1 or 2;
# unset leaves the kernel's default, 1),
# MICROVM_BENCH_IRQ_CPU (the L2 CPU the disk's first interrupt is moved to
# before fio's CPU is chosen; unset leaves the guest's choice, which
# differs between the VMMs' guests);
# run-guest.sh's MICROVM_E2E_L1_CPUS (this script's default: 2).
# Exit: 0 every run measured; 1 a run failed or a piece is missing (message
# on stderr); 77 it cannot run here (no QEMU, fio, artifacts or null_blk).
# Nested runs on a shared machine belong under flock(1) of one lock file.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$BENCH_DIR/../e2e
SKIP=77
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"

microvm=$BENCH_DIR/../../build/microvm
art=$BENCH_DIR/../../build/e2e-artifacts
runtime=10
repeat=2
transports="pci mmio"
queues="1 2"
vmms="microvm qemu"
raw=
from_raw=
plan=
mode_args=()
vhost_ko=
microvm_b=

die()
{
	echo "guest-fio: $*" >&2
	exit 1
}

skip()
{
	echo "guest-fio: $*; skipping" >&2
	exit $SKIP
}

posint()
{
	[[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, not '$2'"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--microvm-b) microvm_b=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--runtime) posint --runtime "$2"; runtime=$2; shift 2 ;;
	--repeat) posint --repeat "$2"; repeat=$2; shift 2 ;;
	--transports) transports=$2; shift 2 ;;
	--queues) queues=$2; shift 2 ;;
	--vmms) vmms=$2; shift 2 ;;
	--quick) runtime=2; repeat=1; transports=pci; queues=1; shift ;;
	--raw) raw=$2; shift 2 ;;
	--from-raw) from_raw=$2; shift 2 ;;
	--plan) plan=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--vhost) vhost_ko=$2; shift 2 ;;
	*) die "unknown option '$1' (usage: see the head of $0)" ;;
	esac
done
for t in $transports; do
	case "$t" in
	pci | mmio) ;;
	*) die "--transports: pci or mmio, not '$t'" ;;
	esac
done
for q in $queues; do
	posint --queues "$q"
done
for v in $vmms; do
	case "$v" in
	microvm | qemu | qemu-notrace) ;;
	microvm-b) [ -n "$microvm_b" ] ||
		die "--vmms: microvm-b needs --microvm-b BIN" ;;
	microvm-vhost | microvm-vhost+*=*)
		[[ "$v" != *[[:space:],]* ]] ||
			die "--vmms: one K=V per microvm-vhost+K=V, not '$v'"
		[ -n "$vhost_ko" ] ||
			die "--vmms: $v needs --vhost KO (vhost_blk.ko for L1's kernel)" ;;
	microvm+*=*) [[ "$v" != *[[:space:],]* ]] ||
		die "--vmms: one K=V per microvm+K=V, not '$v'" ;;
	*) die "--vmms: microvm, microvm+KEY=VALUE, microvm-b, microvm-vhost[+KEY=VALUE], qemu or qemu-notrace, not '$v'" ;;
	esac
done
[ -n "$transports" ] && [ -n "$queues" ] && [ -n "$vmms" ] ||
	die "--transports, --queues and --vmms must not be empty"

work=$(mktemp -d "${TMPDIR:-/tmp}/guest-fio.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT

if [ -z "$plan" ]; then
	for t in $transports; do
		for q in $queues; do
			plan+="$t:$q "
		done
	done
fi
for p in $plan; do
	case "$p" in
	pci:[1-9]* | mmio:[1-9]*) posint --plan "${p#*:}" ;;
	*) die "--plan: TRANSPORT:QUEUES with pci or mmio, not '$p'" ;;
	esac
done
nruns=$(($(wc -w <<<"$plan") * $(wc -w <<<"$vmms") * repeat))

# run_l1: build the guest, run guest-fio-l1.sh in L1, leave its output in
# $work/l1.txt.
run_l1()
{
[ -x "$microvm" ] || die "no microvm binary '$microvm' (build it, or --microvm)"
microvm=$(realpath "$microvm")
if [ -n "$microvm_b" ]; then
	[ -x "$microvm_b" ] || die "no microvm binary '$microvm_b' (--microvm-b)"
	microvm_b=$(realpath "$microvm_b")
fi
qemu=$(command -v qemu-system-x86_64) ||
	skip "needs qemu-system-x86_64 (apt-get install qemu-system-x86)"
fio=$(command -v fio) || skip "needs fio in the guest (apt-get install fio)"
for f in vmlinuz l2-initrd.cpio.gz l1-base.cpio.gz; do
	[ -f "$art/$f" ] ||
		skip "no $art/$f (run tests/e2e/prepare.sh $art)"
done
art=$(cd "$art" && pwd -P)
firmware=()
for f in bios-microvm.bin qboot.rom linuxboot_dma.bin pvh.bin; do
	[ -f "/usr/share/qemu/$f" ] && firmware+=(--file "/usr/share/qemu/$f")
done
[ ${#firmware[@]} -gt 0 ] || skip "no QEMU firmware in /usr/share/qemu"
# engine=vhost: the modules L1 loads, in order, comma-separated (run-guest.sh
# copies each path of an argument split at ',' into L1); "-": none.
vhost_mods=-
if [ -n "$vhost_ko" ]; then
	e2e_vhost_wrap guest-fio "$art" "$vhost_ko" >&2
	# vhost_wrap: /bin/sh vhost-l1.sh --core A --core B --module KO --
	vhost_mods=$(printf '%s\n' "${vhost_wrap[@]}" |
		awk 'p { printf "%s%s", n++ ? "," : "", $0 } { p = /^--(core|module)$/ }')
	mode_args=(--mode nested)
fi


# The guest's initramfs: an uncompressed archive with fio, every library
# ldd lists, the loader and /bench/init, followed by the e2e guest's
# (busybox and the virtio modules); rdinit= picks /bench/init.
stage()
{
	local d=$work/root$1
	mkdir -p "${d%/*}"
	cp -L "$1" "$d" || die "cannot copy '$1' into the guest's initramfs"
}
mkdir -p "$work/root/bench"
install -m 755 "$BENCH_DIR/guest-fio-init.sh" "$work/root/bench/init" ||
	die "no $BENCH_DIR/guest-fio-init.sh"
stage "$fio"
libs=$(ldd "$fio" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p
	s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p') || die "ldd $fio failed"
for l in $libs; do
	stage "$l"
done
(cd "$work/root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) >"$work/bench-initrd" ||
	die "cpio failed"
cat "$art/l2-initrd.cpio.gz" >>"$work/bench-initrd" || die "cat failed"
# A copy: l1-base.cpio.gz holds the artifacts at the path prepare.sh was
# given, which need not be this one, and run-guest.sh stages no file of it.
cp "$art/vmlinuz" "$work/vmlinuz" || die "cannot copy $art/vmlinuz"

# L1 boot, then per run: L2 boot (an 85 MiB initramfs), warm-up, fio.
limit=$((300 + nruns * (240 + runtime * 2)))
export MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-2}
export MICROVM_E2E_L1_MEMORY=${MICROVM_E2E_L1_MEMORY:-3072}
echo "guest-fio: $nruns runs (plan '$plan' x '$vmms' x $repeat)," \
	"fio ${runtime} s each, L1 $MICROVM_E2E_L1_CPUS vCPUs," \
	"L2 ${MICROVM_BENCH_CPUS:-2} vCPUs; harness limit $limit s" >&2
start=$SECONDS
# Status 255: the harness saw L1 itself die or go silent (the emulator's
# failures, tests/e2e/README.md), never a failure of a VMM inside a live
# L1; such a run is started again, as the e2e tests do (lib.sh's
# E2E_RETRIES_DEFAULT more times; MICROVM_E2E_RETRIES=0 turns that off).
tries=$((${MICROVM_E2E_RETRIES:-$E2E_RETRIES_DEFAULT} + 1))
while :; do
	"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout "$limit" "${firmware[@]}" -- \
		"$BENCH_DIR/guest-fio-l1.sh" "$microvm" "$qemu" "$work/vmlinuz" \
		"$work/bench-initrd" "$runtime" "$repeat" "$plan" "$vmms" \
		"${vhost_mods:--}" "${microvm_b:--}" >"$work/l1.out"
	rc=$?
	tries=$((tries - 1))
	[ "$rc" -eq 255 ] && [ "$tries" -gt 0 ] || break
	echo "RETRY: guest-fio: L1 ended without a status (emulator), once more" >&2
done
tr -d '\r' <"$work/l1.out" >"$work/l1.txt"
[ -z "$raw" ] || cp "$work/l1.txt" "$raw"
grep '^BENCH-L1: ' "$work/l1.txt" >&2
echo "guest-fio: whole run $((SECONDS - start)) s wall" >&2
case $rc in
0) ;;
77) skip "the L1 side cannot run here" ;;
*)
	tail -n 60 "$work/l1.txt" >&2
	die "the L1 side failed (status $rc)"
	;;
esac
grep -q '^BENCH-RAW: ' "$work/l1.txt" || die "no BENCH-RAW line came back"

}

if [ -n "$from_raw" ]; then
	tr -d '\r' <"$from_raw" >"$work/l1.txt" || die "cannot read '$from_raw'"
	nruns=$(grep -c '^BENCH-RAW: ' "$work/l1.txt")
else
	run_l1
fi

# Per run: counter deltas over the sampled window divided by the guest's
# I/Os (fio's read KiB / 4). The window brackets fio plus the two console
# handshakes; user exits are microvm's own KVM_RUN returns, or QEMU's
# kvm_run_exit trace events.
sed -n 's/^BENCH-RAW: //p' "$work/l1.txt" | awk '
function d(k) { return v["k1_" k] - v["k0_" k] }
function u(k) { return v["v1_" k] - v["v0_" k] }
{
	delete v
	for (i = 1; i <= NF; i++) {
		p = index($i, "=")
		v[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
	ios = v["read_kib"] / 4
	if (ios <= 0) { print "guest-fio: FAIL no I/O in " $0 > "/dev/stderr"; bad = 1; next }
	line = sprintf("guest-fio: vmm=%s transport=%s queues=%s rep=%s iops=%s ios=%d",
		v["vmm"], v["transport"], v["queues"], v["rep"], v["iops"], ios)
	line = line sprintf(" kvm_exits_per_io=%.3f io_exits_per_io=%.3f mmio_exits_per_io=%.3f",
		d("exits") / ios, d("io_exits") / ios, d("mmio_exits") / ios)
	line = line sprintf(" halt_exits_per_io=%.3f irq_injections_per_io=%.3f",
		d("halt_exits") / ios, d("irq_injections") / ios)
	# Per second of fio too: exits that come with time (timer ticks,
	# halts) rather than with I/O weigh more per I/O at lower IOPS.
	sec = v["runtime_ms"] / 1000
	line = line sprintf(" kvm_exits_per_s=%.0f", sec > 0 ? d("exits") / sec : 0)
	ue = ("v1_uexits" in v) ? sprintf("%.3f", u("uexits") / ios) : "na"
	line = line " user_exits_per_io=" ue
	line = line sprintf(" irqs_per_io=%.3f", v["guest_irqs"] / ios)
	# Kernel side (guest-fio-l1.sh): eventfd_signal() calls by the
	# vhost-blk workers and by every task, MSIs KVM delivered.
	kv = ("k1_ksig_vblk" in v) && v["k1_ksig_vblk"] != "na"
	line = line " kernel_signals_per_io=" (kv ? sprintf("%.3f", d("ksig_vblk") / ios) : "na")
	line = line " eventfd_signals_per_io=" (kv ? sprintf("%.3f", d("ksig_all") / ios) : "na")
	line = line " kvm_msis_per_io=" (("k1_kmsi" in v) ? sprintf("%.3f", d("kmsi") / ios) : "na")
	if (v["vmm"] ~ /^microvm/) {
		req = u("requests"); bat = u("batches")
		# engine=vhost: the module writes the irqfd, not microvm.
		sig = v["vmm"] ~ /^microvm-vhost/ ? \
			(kv ? sprintf("%.3f", d("ksig_vblk") / ios) : "na") : \
			sprintf("%.3f", u("signals") / ios)
		# engine=vhost: no I/O thread, so no kicks, requests or
		# batches of microvm to count.
		if (v["vmm"] ~ /^microvm-vhost/)
			batching = " kicks_per_req=na req_per_batch=na irqs_per_batch=na"
		else
			batching = sprintf(" kicks_per_req=%.3f req_per_batch=%.2f irqs_per_batch=%.3f",
				req ? u("kicks") / req : 0, bat ? req / bat : 0,
				bat ? v["guest_irqs"] / bat : 0)
		line = line " signals_per_io=" sig batching
		line = line sprintf(" user_io_exits_per_io=%.3f user_mmio_exits_per_io=%.3f requests=%d",
			u("uio") / ios, u("ummio") / ios, req)
	}
	print line
}
END { exit bad }' >"$work/runs.txt" || die "a run had no I/O"
cat "$work/runs.txt"

# The table: mean and min-max over the repeats; the IOPS ratios to QEMU's
# and to microvm's (io_uring) run of the same transport, queue count and
# repeat, mean and min-max.
awk '
{
	delete v
	for (i = 2; i <= NF; i++) {
		p = index($i, "=")
		v[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
	key = v["vmm"] " " v["transport"] " " v["queues"]
	if (!(key in n)) order[++nk] = key
	# Paired with the QEMU run of the same repeat: the load on an emulated
	# machine drifts between repeats more than between neighbours.
	iops[key, v["rep"]] = v["iops"] + 0
	reps[key] = reps[key] " " v["rep"]
	n[key]++
	split("iops kvm_exits_per_io user_exits_per_io irqs_per_io signals_per_io user_mmio_exits_per_io", f, " ")
	for (j = 1; j <= 6; j++) {
		x = v[f[j]]
		if (x == "" || x == "na") { has[key, j] = has[key, j] + 0; continue }
		x += 0
		has[key, j] = 1
		sum[key, j] += x
		if (!((key, j) in lo) || x < lo[key, j]) lo[key, j] = x
		if (!((key, j) in hi) || x > hi[key, j]) hi[key, j] = x
	}
}
# paired(KEY, BASE): the IOPS of KEY over those of the BASE run of the
# same repeat, mean (min-max); "-" without such runs.
function paired(key, base,    nr, rs, r, m, c, x, rlo, rhi) {
	if (key == base || !(base in n)) return "-"
	nr = split(reps[key], rs, " ")
	m = 0; rlo = ""; rhi = ""; c = 0
	for (r = 1; r <= nr; r++) {
		if (!((base, rs[r]) in iops) || iops[base, rs[r]] <= 0) continue
		x = iops[key, rs[r]] / iops[base, rs[r]]
		m += x; c++
		if (rlo == "" || x < rlo) rlo = x
		if (rhi == "" || x > rhi) rhi = x
	}
	return c ? sprintf("%.2f (%.2f-%.2f)", m / c, rlo, rhi) : "-"
}
function cell(key, j, fmt) {
	if (!has[key, j]) return "-"
	return sprintf(fmt " (" fmt "-" fmt ")", sum[key, j] / n[key], lo[key, j], hi[key, j])
}
END {
	print ""
	print "| VMM | transport | queues | runs | guest IOPS | vs QEMU (paired per repeat) | vs microvm io_uring (paired) | KVM exits/IO | userspace exits/IO | of which MMIO | interrupts/IO | irqfd signals/IO |"
	print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for (i = 1; i <= nk; i++) {
		key = order[i]
		split(key, k, " ")
		ratio = paired(key, "qemu " k[2] " " k[3])
		ratio_mv = k[1] == "microvm" ? "-" : paired(key, "microvm " k[2] " " k[3])
		printf "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], k[3], n[key],
			cell(key, 1, "%.0f"), ratio, ratio_mv, cell(key, 2, "%.2f"), cell(key, 3, "%.3f"),
			cell(key, 6, "%.3f"), cell(key, 4, "%.3f"), cell(key, 5, "%.3f")
	}
	print "(mean (min-max) over the runs; emulated nested KVM: only ratios and per-I/O counts mean anything)"
}' "$work/runs.txt"

want=$nruns
got=$(wc -l <"$work/runs.txt")
[ "$got" -eq "$want" ] || die "$got of $want runs measured"
exit 0
