#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Host I/O faults under a real guest, in one boot: the guest's vda is a
# device-mapper device (linear, then the error target, then dm-flakey
# failing writes, then linear again) and its vdb a sparse image on a full
# tmpfs (ENOSPC, then the filler file removed). blk-ctl.sh, where microvm
# runs (nested: as root in L1), switches the fault on the guest's
# "E2E-FAULT: want STATE" console lines; the guest (guest/crash-init.sh)
# retries each transfer until it sees the outcome that state must give.
# Checks: the guest saw EIO under each fault and success after each one
# cleared, with the data intact (its verdict); microvm stayed up to the
# guest's power-off (exit 0); --stats counts the failed requests per disk
# and operation (fault-stats.awk).
#
# Usage: fault-test.sh --microvm BIN --artifacts DIR [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (not root in direct mode, no dmsetup).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"

microvm=
art=
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "fault-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "fault-test: --microvm and --artifacts are required" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
dmsetup=$(command -v dmsetup) ||
	{ echo "fault-test: needs dmsetup (apt-get install dmsetup)" >&2; exit 1; }
[ -x "$art/bin/blkcrash" ] ||
	{ echo "fault-test: no $art/bin/blkcrash (prepare.sh)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fault-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

mkdir -p extra/bin
install -m 755 "$E2E_DIR/guest/crash-init.sh" extra/init
install -m 755 "$art/bin/blkcrash" extra/bin/blkcrash
cp "$art/l2-initrd.cpio.gz" initrd.cpio.gz
(cd extra && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip >>initrd.cpio.gz

cmdline="console=ttyS0 quiet panic=-1 microvm.test=fault"
# shellcheck disable=SC2054 # commas inside --disk values
vm_args=(--kernel "$art/vmlinuz" --initrd "$work/initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus 1 --memory 256M --timeout 400 --verbose
	 --stats --disk @DM@,cache=none --disk @FULL@,cache=writeback)

run_guest()
{
	start=$SECONDS
	echo "fault-test: $microvm ${vm_args[*]}"
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 600 -- \
		/bin/sh "$E2E_DIR/blk-ctl.sh" --dm --full --dmsetup "$dmsetup" \
		-- "$microvm" "${vm_args[@]}" 2>stderr | tee console
	status=${PIPESTATUS[0]}
	echo "fault-test: exit status $status after $((SECONDS - start)) s; stderr:"
	cat stderr
}

e2e_boot fault-test stderr
[ "$status" -ne 77 ] || exit 77
tr -d '\r' <console >console.txt
fails=0
fail()
{
	echo "fault-test: FAIL: $*"
	fails=$((fails + 1))
}

[ "$status" -eq 0 ] || fail "exit status $status, expected 0 (guest power-off)"
grep -q '^E2E-RESULT: PASS$' console.txt ||
	fail "the guest did not report E2E-RESULT: PASS"
grep '^E2E-RESULT: FAIL' console.txt | sed 's/^/fault-test: guest: /'
for state in "dm table now error" "dm table now flakey" \
	     "dm table now linear" "filler removed"; do
	grep -q "^E2E-BLKCTL: $state" console.txt ||
		fail "blk-ctl.sh did not report '$state'"
done
if summary=$(awk -f "$E2E_DIR/fault-stats.awk" stderr); then
	echo "$summary" | sed 's/^/fault-test: ok: stats: /'
else
	echo "$summary" | sed 's/^/fault-test: stats: /'
	fail "--stats counts: $(echo "$summary" | grep FAIL | tr '\n' ';')"
fi
if [ $fails -ne 0 ]; then
	echo "fault-test: $fails check(s) failed"
	exit 1
fi
echo "fault-test: PASS ($((SECONDS - start)) s)"
