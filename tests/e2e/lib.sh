# SPDX-License-Identifier: Apache-2.0
# Shared by the real-guest test scripts (sourced, not run).

# e2e_emulator_failure STDERR STATUS [guest-faults]: whether a nested run
# (run-guest.sh's stderr in file STDERR, its exit status STATUS) failed in
# the emulated machines themselves rather than in microvm. Under QEMU's
# TCG nested SVM the L1 kernel now and then dies ("L1 ended without
# reporting a status"; in its log "stack guard page was hit" or "corrupted
# stack end detected inside scheduler") or stops answering altogether
# (not even L1's watchdog, see guest/l1-init.sh, speaks before the
# harness limit). With guest-faults, an L2 vCPU triple fault with no
# console message and an L2 guest that stops making progress until
# --timeout count too: QEMU/KVM as the L2 VMM in the same L1, with the
# same guest and load, failed in these ways in 4 of 12 runs. A program
# that hangs inside a live L1 is never counted (L1's watchdog reports it
# with its threads' kernel stacks), and direct mode never is.
e2e_emulator_failure()
{
	local stderr=$1 status=$2 faults=${3:-}
	grep -q '^run-guest: mode nested$' "$stderr" || return 1
	case "$status" in
	123) [ "$faults" = guest-faults ] && grep -q 'triple fault' "$stderr" ;;
	124) [ "$faults" = guest-faults ] &&
		grep -q -- '--timeout [0-9]* expired' "$stderr" ;;
	255) grep -qE 'L1 ended \(qemu status [0-9]*\) without reporting a status|L1 still ran after the harness limit' \
		"$stderr" ;;
	*) return 1 ;;
	esac
}

# e2e_boot WHO STDERR [guest-faults]: calls the caller's run_guest, which
# leaves run-guest.sh's exit status in $status and its stderr in file
# STDERR, and calls it again while e2e_emulator_failure blames the
# emulator, at most $MICROVM_E2E_RETRIES more times (default 1; 0 shows
# every failure as it is). Each retry is announced on stdout.
e2e_boot()
{
	local who=$1 stderr=$2 faults=${3:-}
	local retries=${MICROVM_E2E_RETRIES:-1}
	run_guest
	while [ "$retries" -gt 0 ] &&
	      e2e_emulator_failure "$stderr" "$status" "$faults"; do
		echo "$who: RETRY: nested-mode emulator failure" \
			"(status $status); booting again"
		retries=$((retries - 1))
		run_guest
	done
}

# e2e_boottime_initrd ART OUT: the test initramfs ART/l2-initrd.cpio.gz
# with guest/boottime-init.sh as /init, in file OUT (the kernel unpacks
# concatenated archives; later files win).
e2e_boottime_initrd()
{
	local extra
	extra=$(mktemp -d "${TMPDIR:-/tmp}/boottime-initrd.XXXXXX") || return 1
	install -m 755 "$(dirname "${BASH_SOURCE[0]}")/guest/boottime-init.sh" \
		"$extra/init" &&
		cp "$1/l2-initrd.cpio.gz" "$2" &&
		(cd "$extra" && find . -mindepth 1 | LC_ALL=C sort |
			cpio -o -H newc -R 0:0 --quiet) | gzip >>"$2"
	local rc=$?
	rm -rf "$extra"
	return $rc
}
