#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The per-drive rate limit in a real guest: fio 4k randread (QD 8, one
# job) on a data disk given as --disk ...,iops=N; after a ramp that spends
# the limit's full bucket, the IOPS fio measures in the guest must be N
# within 10%, and --stats must count throttled requests on that disk (the
# guest would have gone faster: the limit, not the emulator, set the pace).
# The same boot then measures a disk without a limit: where the emulated
# guest cannot reach 1.25 N there at all (a loaded host), a shortfall
# below N is the emulator's, and the boot is tried once more, then the
# test skips (77) saying so; an excess over N always fails.
#
# Usage: ratelimit-test.sh --microvm PATH --artifacts DIR [--iops N]
#                          [--transport pci|mmio] [--runtime S]
# Exit status: 0 pass, 1 fail, 77 skip (no mode can run here).
set -uo pipefail
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
. "$E2E_DIR/lib.sh"
microvm='' art='' iops=200 transport=pci runtime=10
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--iops) iops=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	*) echo "ratelimit-test: unknown option $1" >&2; exit 1 ;;
	esac
done
[ -x "$microvm" ] && [ -f "$art/vmlinuz" ] || {
	echo "ratelimit-test: --microvm and --artifacts are required" >&2
	exit 1
}
for tool in fio mkfs.ext4; do
	command -v $tool >/dev/null || {
		echo "ratelimit-test: SKIP: no $tool on this host"; exit 77; }
done
microvm=$(realpath "$microvm")
art=$(realpath "$art")
work=$(mktemp -d "${TMPDIR:-/tmp}/ratelimit-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Root file system: busybox, fio and its libraries, the init.
dir=$work/rootdir
mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp}
install -m 755 "$E2E_DIR/guest/ratelimit-init.sh" "$dir/sbin/init"
cp /bin/busybox "$dir/bin/busybox"
for applet in $(/bin/busybox --list-full); do
	[ -e "$dir/$applet" ] || ln -s /bin/busybox "$dir/$applet"
done
e2e_stage "$(command -v fio)" "$dir"
while read -r lib; do
	e2e_stage "$lib" "$dir"
done < <(ldd "$(command -v fio)" |
	 sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
truncate -s $((192 << 20)) "$work/root.raw"
mkfs.ext4 -q -F -d "$dir" "$work/root.raw" || {
	echo "ratelimit-test: FAIL: mkfs.ext4"; exit 1; }
truncate -s $((32 << 20)) "$work/data.raw"
truncate -s $((32 << 20)) "$work/free.raw"

run_guest()
{
	"$E2E_DIR/run-guest.sh" --artifacts "$art" -- "$microvm" \
		--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz" \
		--cpus 1 --memory 256M --timeout 300 --stats \
		--cmdline "console=ttyS0 quiet root=/dev/vda rl.ramp=3 rl.rt=$runtime" \
		--disk "$work/root.raw,transport=$transport" \
		--disk "$work/data.raw,cache=writeback,transport=$transport,iops=$iops" \
		--disk "$work/free.raw,cache=writeback,transport=$transport" \
		>"$work/out" 2>"$work/err"
	status=$?
}
fail()
{
	echo "ratelimit-test: FAIL: $*"
	tail -n 20 "$work/err" | sed 's/^/ratelimit-test: stderr: /'
	exit 1
}
# iops_of TAG: the IOPS of the guest's "TAG: rc=0 iops=X ..." line
# (fails the test when there is none or fio failed).
iops_of()
{
	local v
	v=$(grep -a "^$1: rc=0 " "$work/out" | tail -n 1 |
	    sed -n 's/.* iops=\([0-9.][0-9.]*\) .*/\1/p')
	[ -n "$v" ] || fail "no $1 line with fio's rc=0 and its iops from the guest"
	eval "$2=\$v"
}
for try in 1 2; do
	t0=$(date +%s)
	e2e_boot ratelimit-test "$work/err"
	echo "ratelimit-test: iops=$iops transport=$transport: status $status in $(( $(date +%s) - t0 )) s"
	[ "$status" = 77 ] && { echo "ratelimit-test: SKIP"; exit 77; }
	grep -a '^RL-' "$work/out"
	grep -a 'stats vd[bc] queue' "$work/err"
	[ "$status" = 0 ] || fail "microvm exited with status $status"
	iops_of RL-GUEST got
	iops_of RL-FREE free
	awk -v g="$got" -v n="$iops" 'BEGIN { exit !(g <= 1.1 * n) }' ||
		fail "guest measured $got IOPS, above the limit $iops by more than 10%"
	awk -v g="$got" -v n="$iops" 'BEGIN { exit !(g >= 0.9 * n) }' && break
	awk -v f="$free" -v n="$iops" 'BEGIN { exit !(f < 1.25 * n) }' ||
		fail "guest measured $got IOPS at iops=$iops, below it by more than 10%, though it reached $free on a disk without a limit"
	[ "$try" = 2 ] && {
		echo "ratelimit-test: SKIP: the emulated guest reached only $free IOPS without a limit (twice), too slow here to show iops=$iops"
		exit 77
	}
	e2e_count_retry ratelimit-test "the guest reached only $free IOPS without a limit and $got at iops=$iops: the emulator, not the limit, set the pace; booting again"
done
thr=$(grep -a 'stats vdb queue [0-9]* rate-limit: throttled' "$work/err" |
      awk '{ s += $NF } END { print s + 0 }')
[ "$thr" -gt 0 ] || fail "vdb: no throttled requests in --stats"
thr_free=$(grep -a 'stats vdc queue [0-9]* rate-limit: throttled' "$work/err" |
	   awk '{ s += $NF } END { print s + 0 }')
[ "$thr_free" = 0 ] || fail "vdc (no limit): $thr_free throttled requests"
echo "ratelimit-test: PASS: guest measured $got IOPS at iops=$iops ($free without a limit); $thr requests throttled"
