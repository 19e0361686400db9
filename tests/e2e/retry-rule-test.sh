#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The retry rule of lib.sh (e2e_emulator_failure, e2e_boot), on made-up
# run-guest.sh stderr: a triple fault (123) or --timeout (124) is retried
# only with evidence against the emulator (L1's kernel reported a lockup
# or stall; for 124 also a lost wakeup in microvm's vCPU dump), 255 only
# when L1 died or fell silent; direct mode never; every retry is appended
# to $MICROVM_RETRY_LOG with the test's name. No guest runs.
# With MICROVM_RETRY_RULE_DEMO=1 its retries also go to the caller's
# MICROVM_RETRY_LOG (to show tests/run-all.sh counting them).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/retry-rule.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
[ "${MICROVM_RETRY_RULE_DEMO:-0}" = 1 ] || MICROVM_RETRY_LOG=$work/retries.log
export MICROVM_RETRY_LOG
fails=0
nested='run-guest: mode nested'
lockup='run-guest: L1 kernel: watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [qemu:1]'
lost='microvm: vCPU 3: halted, interrupts on, timer overdue 1500 ms, irr top -1, ppr 0'
early='microvm: vCPU 3: halted, interrupts on, timer overdue 20 ms, irr top -1, ppr 0'

# case WANT STATUS LINES...: e2e_emulator_failure on stderr LINES with
# STATUS must say WANT (retry or keep).
case_()
{
	local want=$1 st=$2 got
	shift 2
	printf '%s\n' "$@" >"$work/stderr"
	if e2e_emulator_failure "$work/stderr" "$st" >/dev/null; then
		got=retry
	else
		got=keep
	fi
	if [ "$got" = "$want" ]; then
		echo "retry-rule: ok: status $st, $want: ${*:1:3}"
	else
		echo "retry-rule: FAIL: status $st with [$*]: $got, want $want"
		fails=$((fails + 1))
	fi
}

case_ keep 123 "$nested" 'microvm: vCPU 0: triple fault'
case_ retry 123 "$nested" 'microvm: vCPU 0: triple fault' "$lockup"
case_ keep 123 'run-guest: mode direct' 'microvm: vCPU 0: triple fault' "$lockup"
case_ keep 124 "$nested" 'microvm: --timeout 150 expired'
case_ keep 124 "$nested" 'microvm: --timeout 150 expired' "$early"
case_ retry 124 "$nested" 'microvm: --timeout 150 expired' "$lost"
case_ retry 124 "$nested" 'microvm: --timeout 150 expired' "$lockup"
case_ retry 255 "$nested" 'run-guest: nested: L1 stopped answering: its log was silent for 120 s'
case_ retry 255 "$nested" 'run-guest: nested: L1 ended (qemu status 0) without reporting a status'
case_ retry 255 "$nested" 'run-guest: nested: L1 never reached /init: its kernel still booted after 180 s'
case_ keep 255 'run-guest: mode direct' 'run-guest: nested: L1 never reached /init: its kernel still booted after 180 s'
case_ keep 255 "$nested" "run-guest: nested: 'x' hung in L1: y"
case_ keep 1 "$nested" "$lockup"
# A run-guest.sh without MICROVM_E2E_VERBOSE prints no mode line: its
# nested-only evidence still counts, a lost wakeup does not.
case_ retry 255 'run-guest: L1 log (tail):' 'run-guest: nested: L1 stopped answering: its log was silent for 120 s (last heartbeat: none s L1 uptime, 141 s wall)'
case_ retry 123 'microvm: vCPU 0: triple fault' "$lockup"
case_ keep 124 'microvm: --timeout 150 expired' "$lost"
case_ keep 255 'run-guest: mode direct' 'run-guest: nested: L1 stopped answering: its log was silent for 120 s'

# e2e_boot: a first run with evidence, a second that passes: one retry,
# counted; a triple fault without evidence: none.
runs=0
run_guest()
{
	runs=$((runs + 1))
	if [ $runs -eq 1 ]; then
		printf '%s\n' "$nested" "$lockup" >"$work/stderr"
		status=123
	else
		printf '%s\n' "$nested" >"$work/stderr"
		status=$next
	fi
}
next=0
MICROVM_TEST_NAME=retry-rule.fake e2e_boot retry-rule "$work/stderr"
if ! { [ $runs -eq 2 ] && [ "$status" -eq 0 ] &&
	grep -q '^retry-rule.fake: nested-mode emulator failure (status 123: run-guest: L1 kernel: watchdog' \
		"$MICROVM_RETRY_LOG"; }; then
	echo "retry-rule: FAIL: e2e_boot ran $runs times (status $status), log:"
	cat "$MICROVM_RETRY_LOG"
	fails=$((fails + 1))
fi
runs=1 next=123
n0=$(wc -l <"$MICROVM_RETRY_LOG")
e2e_boot retry-rule "$work/stderr"
if [ $runs -ne 2 ] || [ "$(wc -l <"$MICROVM_RETRY_LOG")" -ne "$n0" ]; then
	echo "retry-rule: FAIL: a triple fault without evidence was retried"
	fails=$((fails + 1))
fi
# Evidence every time: E2E_RETRIES_DEFAULT more boots, each counted, then
# the failure stands; MICROVM_E2E_RETRIES=0: none.
run_guest()
{
	runs=$((runs + 1))
	printf '%s\n' "$nested" 'run-guest: nested: L1 stopped answering: its log was silent for 120 s' >"$work/stderr"
	status=255
}
runs=0
n0=$(wc -l <"$MICROVM_RETRY_LOG")
e2e_boot retry-rule "$work/stderr"
if [ $runs -ne $((E2E_RETRIES_DEFAULT + 1)) ] || [ "$status" -ne 255 ] ||
	[ $(($(wc -l <"$MICROVM_RETRY_LOG") - n0)) -ne "$E2E_RETRIES_DEFAULT" ]; then
	echo "retry-rule: FAIL: evidence every time: $runs boots (default retries $E2E_RETRIES_DEFAULT), status $status"
	fails=$((fails + 1))
fi
runs=0
MICROVM_E2E_RETRIES=0 e2e_boot retry-rule "$work/stderr"
if [ $runs -ne 1 ]; then
	echo "retry-rule: FAIL: MICROVM_E2E_RETRIES=0 gave $runs boots"
	fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "retry-rule: PASS" || echo "retry-rule: $fails failed"
[ $fails -eq 0 ]
