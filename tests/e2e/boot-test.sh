#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One real-guest test: boots the L2 test guest (Debian cloud kernel and
# prepare.sh's initramfs) under microvm through run-guest.sh, in direct or
# nested mode, then checks microvm's exit status, the guest's own checks
# (guest/scenarios.sh: CPUs, memory, dmesg) and what the host can see
# (command-line marker, the stdin line echoed back, elapsed time).
#
# Usage: boot-test.sh --microvm BIN --artifacts DIR [--cpus N] [--smt]
#        [--memory MIB] [--end poweroff|reboot|port:N|mmio:N|hang]
#        [--status N] [--stdin-line TEXT] [--vm-timeout S (default 240)]
#        [--min-seconds S] [--no-guest-result] [--mode MODE]
#        [--kernel vmlinuz|vmlinux] (vmlinux: the ELF, PVH entry)
#        [--sigterm-after S] (microvm gets SIGTERM S seconds after start)
#        [--console-file] (microvm --console FILE: the guest's output must
#        be in FILE, truncated first, and none of it on stdout)
#        [--smt] (--cpus N,smt=on: the guest must see two threads per
#        core, CPUs 2k and 2k+1 siblings)
#        [--coalesced-pio] (x86, MICROVM_COALESCED_PIO=on: nine in ten of
#        the console's bytes or more must go through KVM's coalesced ring,
#        each replayed once)
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
microvm=
art=
cpus=1
smt=0
mib=256
end=poweroff
want_status=0
stdin_line=
vm_timeout=
min_seconds=
guest_result=1
mode_args=()
sigterm_after=
stderr_has=()
console_file=0
harness_args=()
coalesced_pio=0

while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--smt) smt=1; shift ;;
	--kernel) kernel=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--end) end=$2; shift 2 ;;
	--status) want_status=$2; shift 2 ;;
	--stdin-line) stdin_line=$2; shift 2 ;;
	--vm-timeout) vm_timeout=$2; shift 2 ;;
	--min-seconds) min_seconds=$2; shift 2 ;;
	--no-guest-result) guest_result=0; shift ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--sigterm-after) sigterm_after=$2; shift 2 ;;
	--console-file) console_file=1; shift ;;
	--coalesced-pio) coalesced_pio=1; shift ;;
	*) echo "boot-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "boot-test: --microvm and --artifacts are required" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/boot-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
marker=e2e-marker-$$-$RANDOM

cmdline="console=ttyS0 quiet panic=-1 microvm.test=boot microvm.cpus=$cpus"
cmdline+=" microvm.mem=$mib microvm.end=$end microvm.marker=$marker"
cpus_arg=$cpus
if [ "$smt" = 1 ]; then
	cmdline+=" microvm.smt=1"
	cpus_arg+=,smt=on
fi
stdin_args=()
if [ -n "$stdin_line" ]; then
	# Padding first: see e2e_check_stdin in guest/scenarios.sh.
	for _ in 1 2 3 4; do
		printf '%063d\n' 0
	done >"$work/stdin"
	printf 'E2E-IN:%s\n' "$stdin_line" >>"$work/stdin"
	stdin_args=(--stdin "$work/stdin")
	cmdline+=" microvm.stdin=1"
fi
vm_args=(--kernel "$art/${kernel:-vmlinuz}" --initrd "$art/l2-initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus "$cpus_arg" --memory "${mib}M")
# --coalesced-pio (x86): the console's transmit-register writes queue in
# KVM's ring instead of exiting (MICROVM_COALESCED_PIO=on: not microvm's
# default on a KVM nested under QEMU's TCG); --stats counts them
# (checked below).
[ "$(uname -m)" = x86_64 ] && vm_args+=(--stats)
[ "$coalesced_pio" = 1 ] && export MICROVM_COALESCED_PIO=on
# A guest that fails to end is stopped by microvm itself (status 124 and
# its vCPU state on stderr) well before the harness limit.
vm_args+=(--timeout "${vm_timeout:-240}")
if [ "$want_status" = 124 ]; then
	# Where each vCPU stood: registers, then run state, timer and LAPIC.
	stderr_has+=("microvm: vCPU 0: rip " "microvm: vCPU $((cpus - 1)): rip ")
	case $(uname -m) in
	x86_64) stderr_has+=(", irr top ") ;;
	esac
fi

if [ "$console_file" = 1 ]; then
	# Stale content first: microvm must truncate FILE. 1 MiB of it: in
	# nested mode FILE travels as a disk of L1 (a sector multiple) and
	# what microvm wrote comes back over its start.
	{ echo STALE-CONSOLE-CONTENT; head -c 1048576 /dev/zero; } |
		head -c 1048576 >"$work/guest-console.log"
	vm_args+=(--console "$work/guest-console.log")
	harness_args=(--disk-file "$work/guest-console.log")
fi

wrapper=()
if [ -n "$sigterm_after" ]; then
	# The same sh wrapper on the host and in nested mode's L1 (whose
	# busybox has its own timeout(1)); it passes microvm's status on.
	# shellcheck disable=SC2016
	wrapper=(/bin/sh -c '
		"$@" & pid=$!
		sleep "$0"
		kill -TERM "$pid"
		wait "$pid"' "$sigterm_after")
	# Dying of the signal would give 143 too: microvm must say it ended.
	vm_args+=(--verbose)
	stderr_has+=("guest ended: signal, exit status 143")
fi

# run_guest: one boot; the console in $work/console, run-guest.sh's stderr
# in $work/stderr (and on ours).
run_guest()
{
	echo "boot-test: $microvm ${vm_args[*]}"
	start=$(date +%s.%N)
	# The harness limit leaves microvm's own --timeout room to act first.
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout $((${vm_timeout:-240} + 180)) \
		"${stdin_args[@]}" "${harness_args[@]}" -- "${wrapper[@]}" \
		"$microvm" "${vm_args[@]}" \
		2> >(tee "$work/stderr" >&2) | tee "$work/console"
	status=${PIPESTATUS[0]}
	# Let the stderr tee finish before the file is read.
	wait
	elapsed=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
	echo "boot-test: exit status $status after $elapsed s"
}

e2e_boot boot-test "$work/stderr"
[ "$status" -ne 77 ] || exit 77
fails=0
fail()
{
	echo "boot-test: FAIL: $*"
	fails=$((fails + 1))
}

tr -d '\r' <"$work/console" >"$work/console.txt"
console=$work/console.txt
if [ "$console_file" = 1 ]; then
	# stdout carries nothing of the guest; FILE has it all (NULs: the
	# nested copy's padding past what microvm wrote), and the checks
	# below read it instead.
	if grep -q 'E2E-\|Linux version' "$console"; then
		fail "guest output on stdout with --console FILE:" \
			"$(grep -m 3 'E2E-\|Linux version' "$console" | tr '\n' ';')"
	fi
	tr -d '\r\0' <"$work/guest-console.log" >"$work/console-file.txt"
	if grep -q STALE-CONSOLE-CONTENT "$work/console-file.txt"; then
		fail "--console FILE was not truncated"
	fi
	echo "boot-test: --console FILE: $(wc -l <"$work/console-file.txt")" \
		"lines; stdout: $(wc -c <"$console") bytes"
	console=$work/console-file.txt
fi
[ "$status" -eq "$want_status" ] ||
	fail "exit status $status, expected $want_status"
if [ "$guest_result" = 1 ]; then
	grep -q '^E2E-RESULT: PASS$' "$console" ||
		fail "the guest did not report E2E-RESULT: PASS"
	if grep -q '^E2E-RESULT: FAIL' "$console"; then
		fail "the guest reported: $(grep '^E2E-RESULT: FAIL' "$console" |
			tr '\n' ';')"
	fi
	grep -q "^E2E-CMDLINE: .*microvm.marker=$marker" "$console" ||
		fail "marker $marker from --cmdline not in the guest's /proc/cmdline"
	if [ -n "$stdin_line" ]; then
		grep -qxF "E2E-STDIN: $stdin_line" "$console" ||
			fail "the line written to stdin did not come back"
	fi
fi
# Every byte arrived (the checks above) though none of them exited: the
# ring took nine in ten of the console's bytes or more (each byte is one
# transmit-register write; the few others are the divisor latch's), and
# replayed each write once: no more writes than bytes and 16.
if [ "$coalesced_pio" = 1 ] && [ "$guest_result" = 1 ] &&
   [ "$status" -eq "$want_status" ]; then
	coal=$(sed -n 's/^microvm: stats coalesced: ranges 1 ring mapped writes \([0-9]*\)$/\1/p' "$work/stderr")
	bytes=$(sed -n 's/^microvm: stats console: output bytes \([0-9]*\) .*/\1/p' "$work/stderr")
	io_out=$(awk '/^microvm: stats vcpu [0-9]+: / {
		for (i = 1; i < NF; i++) if ($i == "io-out") s += $(i + 1) }
		END { print s + 0 }' "$work/stderr")
	echo "boot-test: console bytes ${bytes:-?}, coalesced writes" \
		"${coal:-?}, port writes that exited $io_out"
	if [ -z "$coal" ] || [ -z "$bytes" ] || [ "$bytes" -eq 0 ]; then
		fail "--stats lacks the coalesced writes or the console bytes"
	elif [ $((coal * 10)) -lt $((bytes * 9)) ] ||
	     [ "$coal" -gt $((bytes + 16)) ]; then
		fail "console bytes $bytes: $coal writes coalesced"
	fi
fi
for want in "${stderr_has[@]}"; do
	grep -qF -- "$want" "$work/stderr" ||
		fail "microvm's stderr lacks \"$want\""
done
if [ -n "$min_seconds" ] &&
   awk "BEGIN { exit !($elapsed < $min_seconds) }"; then
	fail "ended after $elapsed s, before the $min_seconds s expected"
fi

if [ $fails -ne 0 ]; then
	echo "boot-test: $fails check(s) failed"
	exit 1
fi
echo "boot-test: PASS"
