#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Boot-time marks in a real guest: the guest's /init (guest/boottime-init.sh)
# writes "init reached" (1) to the boot-time port first thing and "boot
# complete" (123) before it powers off; microvm runs with --stats. Checks:
# exit status 0; both marks logged as "boot-time: T ms since microvm
# started (LABEL)"; the --stats lines "startup: first KVM_RUN after T ms"
# and "boot-time: marks 2 ignored 0 unlogged 0 first T ms (init reached)
# last T ms (boot complete)", agreeing with the log lines; and the order
# first KVM_RUN < init reached <= boot complete. No timing thresholds.
#
# Usage: boottime-test.sh --microvm BIN --artifacts DIR [--mode MODE]
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
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
	*) echo "boottime-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "boottime-test: --microvm and --artifacts are required" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/boottime-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

e2e_boottime_initrd "$art" "$work/initrd.cpio.gz" || exit 1

vm_args=(--kernel "$art/vmlinuz" --initrd "$work/initrd.cpio.gz"
	 --cmdline "console=ttyS0 quiet panic=-1" --cpus 1 --memory 256M
	 --stats --timeout 240)

run_guest()
{
	echo "boottime-test: $microvm ${vm_args[*]}"
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 420 -- "$microvm" "${vm_args[@]}" \
		2> >(tee "$work/stderr" >&2) >"$work/console"
	status=$?
	wait
	echo "boottime-test: exit status $status"
}
e2e_boot boottime-test "$work/stderr"
[ "$status" -ne 77 ] || exit 77

fails=0
fail()
{
	echo "boottime-test: FAIL: $*"
	fails=$((fails + 1))
}
err=$work/stderr
[ "$status" -eq 0 ] || fail "exit status $status, expected 0"
grep -q 'BOOT-MARK: init' "$work/console" ||
	fail "the guest's /init did not print its marker"

# ms LABEL: the time of the logged mark LABEL ("" when absent).
ms()
{
	sed -n "s/^microvm: boot-time: \([0-9]*\.[0-9]*\) ms since microvm started ($1)\$/\1/p" \
		"$err" | head -n 1
}
init_ms=$(ms 'init reached')
done_ms=$(ms 'boot complete')
run_ms=$(sed -n 's/^microvm: stats startup: first KVM_RUN after \([0-9]*\.[0-9]*\) ms$/\1/p' "$err")
stats=$(grep '^microvm: stats boot-time: ' "$err")
echo "boottime-test: first KVM_RUN ${run_ms:-?} ms, init reached" \
	"${init_ms:-?} ms, boot complete ${done_ms:-?} ms"
[ -n "$init_ms" ] || fail "no \"boot-time: ... (init reached)\" line"
[ -n "$done_ms" ] || fail "no \"boot-time: ... (boot complete)\" line"
[ -n "$run_ms" ] || fail "no \"stats startup: first KVM_RUN after N ms\" line"
want="microvm: stats boot-time: marks 2 ignored 0 unlogged 0 first $init_ms ms (init reached) last $done_ms ms (boot complete)"
[ "$stats" = "$want" ] ||
	fail "--stats boot-time line is \"$stats\", expected \"$want\""
if [ -n "$init_ms" ] && [ -n "$done_ms" ] && [ -n "$run_ms" ]; then
	awk -v r="$run_ms" -v i="$init_ms" -v d="$done_ms" \
		'BEGIN { exit !(r > 0 && r < i && i <= d) }' ||
		fail "order: first KVM_RUN $run_ms ms, init $init_ms ms," \
			"done $done_ms ms"
fi
if [ "$fails" -gt 0 ]; then
	echo "boottime-test: $fails check(s) failed; console:"
	tail -n 30 "$work/console"
	exit 1
fi
echo "boottime-test: PASS"
