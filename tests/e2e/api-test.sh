#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Firecracker-compatible API end to end (api-l1.sh does the calls):
# microvm started with --api-sock alone, configured and booted by curl,
# paused and resumed 50 times under guest fio verify, its data drive
# swapped, ended by SendCtrlAltDel. Nested when there is no /dev/kvm.
#
# Usage: api-test.sh --microvm BIN --artifacts DIR [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (no curl, or the mode cannot run).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
microvm=
art=
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "api-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
e2e_api_setup api-test
truncate -s $((32 * MIB)) data.raw
truncate -s $((8 * MIB)) spare.raw
truncate -s $((48 * MIB)) swap.raw

# One nested run; e2e_boot (lib.sh) runs it again once, counted, when
# the emulator itself failed (L1 died or went silent), never otherwise.
run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-2} \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 900 --disk-file "$work/root.raw" \
		--disk-file "$work/data.raw" --disk-file "$work/spare.raw" \
		--disk-file "$work/swap.raw" \
		--file "$curl" -- /bin/sh "$E2E_DIR/api-l1.sh" "$microvm" "$curl" \
		"$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$work/root.raw" \
		"$work/data.raw" "$work/spare.raw" "$work/swap.raw" >out 2>err
	status=$?
}
start=$SECONDS
e2e_boot api-test err
cat out
echo "api-test: status $status after $((SECONDS - start)) s; stderr:"
cat err
[ "$status" -eq 77 ] && exit 77
grep -q '^API-SUMMARY: 0 failure' out && [ "$status" -eq 0 ] &&
	{ echo "api-test: PASS"; exit 0; }
echo "api-test: FAIL"
exit 1
