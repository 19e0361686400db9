#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Replays what a Firecracker client calls against microvm (replay-l1.sh
# makes the calls inside L1): Kata's fc.go, firecracker-go-sdk's handler
# chain or flintlock's command line. The guest boots and runs fio
# write+verify rounds on its data disk; afterwards the data image must
# hold what the guest wrote. Nested when there is no /dev/kvm.
#
# Usage: replay-test.sh --microvm BIN --artifacts DIR --caller kata|gosdk|flintlock
#                       [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (no curl, or the mode cannot run).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
microvm=
art=
caller=
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--caller) caller=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "replay-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
case "$caller" in
kata | gosdk | flintlock) ;;
*) echo "replay-test: --caller '$caller': must be kata, gosdk or flintlock" >&2
   exit 1 ;;
esac
e2e_api_setup replay-test
truncate -s $((32 * MIB)) data.raw

# One nested run; e2e_boot (lib.sh) runs it again once, counted, when
# the emulator itself failed (L1 died or went silent), never otherwise.
run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-1} \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 600 --disk-file "$work/root.raw" \
		--disk-file "$work/data.raw" --file "$curl" \
		--file "$E2E_DIR/mmds-lib-l1.sh" \
		-- /bin/sh "$E2E_DIR/replay-l1.sh" "$caller" "$microvm" "$curl" \
		"$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$work/root.raw" \
		"$work/data.raw" >out 2>err
	status=$?
}
start=$SECONDS
e2e_boot replay-test err
cat out
echo "replay-test: status $status after $((SECONDS - start)) s; stderr:"
cat err
[ "$status" -eq 77 ] && exit 77
# The guest's fio rounds wrote the data image (it was all zeros).
written=0
cmp -s data.raw <(head -c $((32 * MIB)) /dev/zero) || written=1
[ $written -eq 1 ] && echo "replay-test: the data image holds the guest's writes" ||
	echo "replay-test: the data image is still all zeros"
grep -q '^REPLAY-SUMMARY: 0 failure' out && [ "$status" -eq 0 ] &&
	[ $written -eq 1 ] && { echo "replay-test: PASS"; exit 0; }
echo "replay-test: FAIL"
exit 1
