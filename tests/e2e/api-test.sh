#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Firecracker-compatible API end to end (api-l1.sh does the calls):
# microvm started with --api-sock alone, configured and booted by curl,
# paused and resumed 50 times under guest fio verify, its data drive
# swapped, ended by SendCtrlAltDel. Nested when there is no /dev/kvm.
# With --pci-vhost KO (nested only, L1 loads the vhost-blk module KO):
# api-pause-l1.sh instead, pause/resume under fio verify on two
# virtio-pci drives, one per engine (io_uring, vhost), and a drive swap
# on the paused machine.
#
# Usage: api-test.sh --microvm BIN --artifacts DIR [--mode MODE]
#                    [--pci-vhost KO]
# Exit: 0 pass, 1 fail, 77 skipped (no curl, no KO, or the mode cannot
# run).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
microvm=
art=
mode_args=()
vhost_ko=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--pci-vhost) vhost_ko=$2; shift 2 ;;
	*) echo "api-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
# engine=vhost: the module and L1's vhost core, in L1 only (never loaded
# into this host's kernel).
if [ -n "$vhost_ko" ] && [ -n "$art" ]; then
	art=$(cd "$art" && pwd -P) || exit 1
	e2e_vhost_wrap api-test "$art" "$vhost_ko"
	mode_args=(--mode nested)
fi
e2e_api_setup api-test
if [ -n "$vhost_ko" ]; then
	# Distinct sizes: the guest's E2E-SIZE lines tell which is which.
	truncate -s $((16 * MIB)) data.raw
	truncate -s $((20 * MIB)) vdata.raw
	truncate -s $((8 * MIB)) spare.raw
	truncate -s $((48 * MIB)) swap.raw
	images=(root.raw data.raw vdata.raw spare.raw swap.raw)
	l1=("${vhost_wrap[@]}" /bin/sh "$E2E_DIR/api-pause-l1.sh")
else
	truncate -s $((32 * MIB)) data.raw
	truncate -s $((8 * MIB)) spare.raw
	truncate -s $((48 * MIB)) swap.raw
	images=(root.raw data.raw spare.raw swap.raw)
	l1=(/bin/sh "$E2E_DIR/api-l1.sh")
fi
disk_args=() paths=()
for img in "${images[@]}"; do
	disk_args+=(--disk-file "$work/$img")
	paths+=("$work/$img")
done

# One nested run; e2e_boot (lib.sh) runs it again once, counted, when
# the emulator itself failed (L1 died or went silent), never otherwise.
run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-1} \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 900 "${disk_args[@]}" --file "$curl" \
		--file "$E2E_DIR/api-lib-l1.sh" -- "${l1[@]}" "$microvm" \
		"$curl" "$art/vmlinuz" "$art/l2-initrd.cpio.gz" \
		"${paths[@]}" >out 2>err
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
