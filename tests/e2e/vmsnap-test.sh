#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Snapshots of a running guest end to end (vmsnap-l1.sh does the work):
# PUT /snapshot/create on a paused guest mid fio-verify, then restores
# with --restore and with PUT /snapshot/load that must go on from the
# saved tick and verify their disks, and the refusals of bad snapshot
# files. Nested when there is no /dev/kvm.
#
# Usage: vmsnap-test.sh --microvm BIN --artifacts DIR --snap-edit BIN
#                       [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (no curl, or the mode cannot run).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
microvm=
art=
snapedit=
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--snap-edit) snapedit=$2; shift 2 ;;
	*) echo "vmsnap-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$snapedit" ] && snapedit=$(realpath "$snapedit") ||
	{ echo "vmsnap-test: --snap-edit BIN is required" >&2; exit 1; }
e2e_api_setup vmsnap-test
truncate -s $((32 * MIB)) data.raw

run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-1} \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 900 --disk-file "$work/root.raw" \
		--disk-file "$work/data.raw" --file "$curl" --file "$snapedit" \
		--file "$E2E_DIR/api-lib-l1.sh" -- \
		/bin/sh "$E2E_DIR/vmsnap-l1.sh" "$microvm" "$curl" \
		"$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$work/root.raw" \
		"$work/data.raw" "$snapedit" >out 2>err
	status=$?
}
start=$SECONDS
e2e_boot vmsnap-test err
cat out
echo "vmsnap-test: status $status after $((SECONDS - start)) s; stderr:"
cat err
[ "$status" -eq 77 ] && exit 77
grep -q '^SNAP-SUMMARY: 0 failure' out && [ "$status" -eq 0 ] &&
	{ echo "vmsnap-test: PASS"; exit 0; }
echo "vmsnap-test: FAIL"
exit 1
