#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Zero loss across a crash of microvm, with a real guest: blkcrash in the
# L2 guest writes random blocks to its raw virtio disk with O_DIRECT and
# prints "E2E-ACK: N" after each completed flush; blk-ctl.sh SIGKILLs
# microvm a random delay after the writer starts; then the host checks that
# the image holds every byte of the acknowledged writes (a byte may hold a
# later unacknowledged write's value instead, nothing else), and that the
# check fails with the last acknowledged write undone. The kill is armed
# at the guest's first acknowledged flush and counts only when the writer
# had not finished: otherwise the test kills again (the next seed, at
# most 3 boots), so every kill had acknowledged writes in flight.
#
# Usage: crash-test.sh --microvm BIN --artifacts DIR [--cache none|writeback]
#        [--count N] [--max-delay-ms MS] [--seed S] [--iterations N]
#        [--mode MODE] [--transport pci|mmio] [--vhost KO [--hold-open]]
#   --count N         writes the guest makes at most (default 3000)
#   --iterations N    N kills in one run of run-guest.sh (one L1 boot),
#                     each checked where microvm ran (crash-loop.sh);
#                     iteration i uses seed S + i
#   --max-delay-ms    the kill comes 0..MS ms after the writer starts
#   --seed S          replay: the same writes and delay (default random)
#   --transport T     the disk's transport= (default: microvm's)
#   --vhost KO        engine=vhost on the disk, served by the module KO
#                     (vhost_blk.ko for the L1 kernel; nested only): L1
#                     insmods it (vhost-l1.sh) and after the kill rmmod
#                     must succeed within 5 s, the module must be gone
#                     from /proc/modules and the kernel log hold no BUG,
#                     Oops or WARNING. The kill is armed at the guest's
#                     first acknowledged flush (then 0..--max-delay-ms,
#                     default 1500 here) and the writer must not have
#                     finished: it was writing when the kill came
#   --hold-open       with --vhost, a self-check: /dev/vhost-blk is kept
#                     open in L1 across the rmmod, so the test must fail
#   --broken-ack      the self-check of the check: the guest's writer
#                     acknowledges a batch it never writes (blkcrash
#                     write ... broken-ack); passes only when the image
#                     check reports the loss
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
DATA_SIZE=$((32 * 1048576))

microvm=
art=
cache=none
count=3000
max_delay_ms=
seed=$(( (RANDOM << 30) | (RANDOM << 15) | RANDOM ))
iterations=1
mode_args=()
transport=
vhost_ko=
hold_open=
broken=0
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--max-delay-ms) max_delay_ms=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--vhost) vhost_ko=$2; shift 2 ;;
	--hold-open) hold_open=--hold-open; shift ;;
	--broken-ack) broken=1; shift ;;
	*) echo "crash-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "crash-test: --microvm and --artifacts are required" >&2; exit 1; }
case "$cache" in
none | writeback) ;;
*) echo "crash-test: --cache none|writeback, not '$cache'" >&2; exit 1 ;;
esac
case "$transport" in
'' | pci | mmio) ;;
*) echo "crash-test: --transport pci|mmio, not '$transport'" >&2; exit 1 ;;
esac
[ -z "$hold_open" ] || [ -n "$vhost_ko" ] ||
	{ echo "crash-test: --hold-open needs --vhost KO" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
kill_after="E2E-ACK: "
# engine=vhost: L1 only; vhost-l1.sh loads the module around blk-ctl.sh.
wrap=()
disk_opts=,cache=$cache${transport:+,transport=$transport}
if [ -n "$vhost_ko" ]; then
	[ "$iterations" -eq 1 ] ||
		{ echo "crash-test: --vhost takes one iteration" >&2; exit 1; }
	e2e_vhost_wrap crash-test "$art" "$vhost_ko"
	# vhost_wrap ends in "--": the options go before it.
	wrap=("${vhost_wrap[@]:0:${#vhost_wrap[@]}-1}" --rmmod-wait 5
	      $hold_open --)
	mode_args=(--mode nested)
	disk_opts+=,engine=vhost
fi
max_delay_ms=${max_delay_ms:-1500}
microvm=$(realpath "$microvm") || exit 1
blkcrash=$art/bin/blkcrash
[ -x "$blkcrash" ] || { echo "crash-test: no $blkcrash (prepare.sh)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/crash-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# crash_initrd OUT: the test initramfs with crash-init.sh as /init and
# blkcrash (the kernel unpacks concatenated archives, later files win).
crash_initrd()
{
	mkdir -p extra/bin
	install -m 755 "$E2E_DIR/guest/crash-init.sh" extra/init
	install -m 755 "$blkcrash" extra/bin/blkcrash
	cp "$art/l2-initrd.cpio.gz" "$1"
	(cd extra && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip >>"$1"
}
crash_initrd initrd.cpio.gz

# plan: the delay, command line and microvm arguments of seed $seed.
plan()
{
	delay_ms=$("$blkcrash" delay "$seed" "$max_delay_ms") || exit 1
	echo "crash-test: seed $seed (replay: --seed $seed), cache=$cache," \
		"$count writes at most, kill $delay_ms ms after '$kill_after'"
	cmdline="console=ttyS0 quiet panic=-1 microvm.test=crash"
	cmdline+=" microvm.seed=$seed microvm.count=$count"
	[ "$broken" = 0 ] || cmdline+=" microvm.broken=1"
	vm_args=(--kernel "$art/vmlinuz" --initrd "$work/initrd.cpio.gz"
		 --cmdline "$cmdline" --cpus 1 --memory 256M --timeout 400
		 --verbose --stats --disk "$work/data.raw$disk_opts")
}
plan

# cache=none wants O_DIRECT, which L1's tmpfs refuses: a loop device
# over the image there (blk-ctl.sh leaves a file system with O_DIRECT be).
loop_args=()
[ "$cache" = none ] && loop_args=(--loop "$work/data.raw")

run_guest()
{
	local start=$SECONDS
	"$blkcrash" init data.raw "$seed" $DATA_SIZE || exit 1
	echo "crash-test: $microvm ${vm_args[*]}"
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 600 -- "${wrap[@]}" \
		/bin/sh "$E2E_DIR/blk-ctl.sh" --kill-after "$kill_after" \
		--delay-ms "$delay_ms" "${loop_args[@]}" -- \
		"$microvm" "${vm_args[@]}" 2>stderr | tee console
	status=${PIPESTATUS[0]}
	echo "crash-test: exit status $status after $((SECONDS - start)) s; stderr:"
	cat stderr
}

# run_loop: crash-loop.sh's N kills; the images stay where microvm ran.
run_loop()
{
	local start=$SECONDS
	[ "$broken" = 0 ] ||
		{ echo "crash-test: --broken-ack takes one iteration" >&2; exit 1; }
	local loop_vm_args=(--kernel "$art/vmlinuz"
		--initrd "$work/initrd.cpio.gz"
		--cmdline "${cmdline/microvm.seed=$seed/microvm.seed=@SEED@}"
		--cpus 1 --memory 256M --timeout 400 --verbose --stats
		--disk "@IMG@,cache=$cache")
	echo "crash-test: $iterations kills: $microvm ${loop_vm_args[*]}"
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout $((120 + 100 * iterations)) -- \
		/bin/sh "$E2E_DIR/crash-loop.sh" --ctl "$E2E_DIR/blk-ctl.sh" \
		--blkcrash "$blkcrash" --iterations "$iterations" --seed "$seed" \
		--count "$count" --max-delay-ms "$max_delay_ms" \
		--bytes $DATA_SIZE ${loop_args:+--loop} -- \
		"$microvm" "${loop_vm_args[@]}" 2>stderr | tee console
	status=${PIPESTATUS[0]}
	echo "crash-test: exit status $status after $((SECONDS - start)) s; stderr:"
	cat stderr
	[ "$status" -ne 77 ] || exit 77
	tr -d '\r' <console >console.txt
	local kills
	kills=$(grep -c '^E2E-CRASH-ITER: .* verdict ok$' console.txt)
	echo "crash-test: $kills of $iterations kills verified"
	grep -q "^E2E-CRASH-LOOP: $iterations kills, 0 failed$" console.txt &&
		[ "$status" -eq 0 ] && [ "$kills" -eq "$iterations" ] &&
		{ echo "crash-test: PASS"; exit 0; }
	echo "crash-test: FAIL (replay: --seed $seed --iterations $iterations)"
	exit 1
}
[ "$iterations" -eq 1 ] || run_loop

# check_vhost: the kill came while the module served I/O, and then the
# module unloaded (vhost-l1.sh's lines on stderr).
check_vhost()
{
	local flushes
	flushes=$(grep -c '^E2E-ACK: ' console.txt)
	if grep -q '^E2E-CRASH: done ' console.txt; then
		fail "the writer finished before the kill: no I/O in flight"
	elif [ "$flushes" -eq 0 ]; then
		fail "no flush acknowledged: the kill came before the guest's I/O"
	else
		echo "crash-test: ok: killed mid-I/O ($flushes flushes," \
			"$acked writes acknowledged, the writer still running)"
	fi
	grep '^vhost-l1: ' stderr
	if grep -q '^vhost-l1: FAIL' stderr; then
		fail "vhost-l1: $(sed -n 's/^vhost-l1: FAIL: //p' stderr | head -n 1)"
	elif grep -q '^vhost-l1: rmmod vhost_blk ok' stderr; then
		echo "crash-test: ok: $(sed -n 's/^vhost-l1: //p' stderr | grep '^rmmod')"
	else
		fail "no word from vhost-l1.sh on rmmod vhost_blk"
	fi
}

# A kill after the writer finished is no kill: boot again, the next seed.
e2e_boot crash-test stderr
for again in 1 2; do
	[ "$status" -eq 137 ] && tr -d '\r' <console |
		grep -q '^E2E-CRASH: done ' || break
	echo "crash-test: the writer finished before the kill: not counted;" \
		"killing again ($again of 2)"
	seed=$((seed + 1))
	plan
	e2e_boot crash-test stderr
done
[ "$status" -ne 77 ] || exit 77
tr -d '\r' <console >console.txt
fails=0
fail()
{
	echo "crash-test: FAIL: $*"
	fails=$((fails + 1))
}

[ "$status" -eq 137 ] ||
	fail "exit status $status, expected 137 (microvm SIGKILLed)"
start_line=$(grep -m1 '^E2E-CRASH: start ' console.txt)
[ -n "$start_line" ] || fail "the guest writer did not start"
block=$(echo "$start_line" | sed -n 's/.* block \([0-9]*\) .*/\1/p')
acked=$(sed -n 's/^E2E-ACK: \([0-9]*\)$/\1/p' console.txt | tail -n 1)
acked=${acked:-0}
grep '^E2E-CRASH: .*failed' console.txt && fail "the guest writer failed"
grep -q '^E2E-CRASH: done ' console.txt &&
	fail "the writer finished before each of 3 kills (--max-delay-ms $max_delay_ms)"
[ "$acked" -gt 0 ] || fail "no acknowledged write before the kill"
echo "crash-test: $acked of $count writes acknowledged before the kill"
if [ -n "$vhost_ko" ]; then
	check_vhost
fi
if [ -n "$block" ]; then
	"$blkcrash" verify data.raw "$seed" "$block" "$count" "$acked"
	vrc=$?
	if [ "$broken" = 1 ]; then
		[ $vrc -eq 1 ] &&
			echo "crash-test: ok: the broken writer's acknowledged, unwritten batch was caught" ||
			fail "a writer that acknowledged unwritten data passed the check (verify status $vrc)"
	elif [ $vrc -eq 0 ]; then
		echo "crash-test: ok: image holds every acknowledged byte"
	else
		fail "the image lost acknowledged data (or the self-check failed)"
	fi
fi
if [ $fails -ne 0 ]; then
	echo "crash-test: $fails check(s) failed (replay: --seed $seed)"
	exit 1
fi
echo "crash-test: PASS"
