#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A forbidden system call from each thread class ends microvm with a
# clear line: boots the L2 test guest with a virtio-blk disk (so that an
# I/O thread starts when the guest's driver sets DRIVER_OK) and
# MICROVM_SECCOMP_SELFTEST=CLASS, which makes the first thread of CLASS
# call socket() right after installing its filter. Expects death by
# SIGSYS (status 159) and, with --seccomp=on, the line naming the class
# and the call on stderr; with kill, no line.
#
# Usage: seccomp-test.sh --microvm BIN --artifacts DIR
#        --class main|vcpu|io|console [--seccomp on|kill] [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
microvm=
art=
class=
seccomp=on
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--class) class=$2; shift 2 ;;
	--seccomp) seccomp=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "seccomp-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ -n "$class" ] || {
	echo "seccomp-test: --microvm, --artifacts and --class are required" >&2
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/seccomp-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
truncate -s 4M "$work/disk.raw"
cmdline="console=ttyS0 quiet panic=-1 microvm.test=boot microvm.end=hang"
vm_args=(--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus 2 --memory 256M --timeout 120
	 --seccomp "$seccomp" --disk "$work/disk.raw,transport=mmio")

run_guest()
{
	echo "seccomp-test: MICROVM_SECCOMP_SELFTEST=$class $microvm ${vm_args[*]}"
	MICROVM_SECCOMP_SELFTEST=$class MICROVM_E2E_VERBOSE=1 \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 400 -- "$microvm" "${vm_args[@]}" \
		2>"$work/stderr" >"$work/console"
	status=$?
	echo "seccomp-test: exit status $status; stderr:"
	cat "$work/stderr"
}

e2e_boot seccomp-test "$work/stderr"
[ "$status" -ne 77 ] || exit 77
fails=0
fail()
{
	echo "seccomp-test: FAIL: $*"
	fails=$((fails + 1))
}

[ "$status" -eq 159 ] || fail "exit status $status, expected 159 (SIGSYS)"
line="($class class) made forbidden system call 41 (socket); ending microvm"
if [ "$seccomp" = on ]; then
	n=$(grep -c '^microvm: seccomp: thread ' "$work/stderr")
	grep -qF -- "$line" "$work/stderr" ||
		fail "stderr lacks \"... $line\""
	[ "$n" -eq 1 ] || fail "$n seccomp lines on stderr, expected one"
else
	! grep -q 'seccomp: thread' "$work/stderr" ||
		fail "a seccomp line on stderr with --seccomp=$seccomp"
fi
# The call came after the filter: never the "socket() returned" line.
! grep -q 'seccomp selftest: socket() in' "$work/stderr" ||
	fail "the selftest's socket() returned"

if [ $fails -ne 0 ]; then
	echo "seccomp-test: $fails check(s) failed"
	exit 1
fi
echo "seccomp-test: PASS"
