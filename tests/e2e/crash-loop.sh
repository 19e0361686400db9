#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Many crash-test kills in one run, where microvm runs (inside L1 in
# nested mode, which then boots once for all of them): for each iteration
# a fresh image, one microvm run under blk-ctl.sh killed a seeded random
# delay after the guest writer starts, and `blkcrash verify` of the image
# against the last acknowledgement on the guest console. POSIX sh.
#
# Usage: crash-loop.sh --ctl BLK-CTL.SH --blkcrash BIN --iterations N
#        --seed S --count C --max-delay-ms MS --bytes B [--loop]
#        -- MICROVM ARGS...
# In ARGS, @IMG@ is the image and @SEED@ the iteration's seed (S + i).
# The kill is armed at the guest's first acknowledged flush. A kill
# counts only when the writer had an acknowledged write and had not
# finished; the loop kills again (the next seed) until N kills counted,
# at most 3N runs. Prints one "E2E-CRASH-ITER: ..." line per run and a
# last line "E2E-CRASH-LOOP: N kills, F failed" (N: the kills that
# counted); exit 0 when N reached the asked number and none failed.
set -u

ctl='' blkcrash='' n=1 seed=1 count=3000 max_delay_ms=8000 bytes=33554432
use_loop=0
while [ $# -gt 0 ]; do
	case "$1" in
	--ctl) ctl=$2; shift 2 ;;
	--blkcrash) blkcrash=$2; shift 2 ;;
	--iterations) n=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--max-delay-ms) max_delay_ms=$2; shift 2 ;;
	--bytes) bytes=$2; shift 2 ;;
	--loop) use_loop=1; shift ;;
	--) shift; break ;;
	*) echo "crash-loop: unknown option '$1'" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d /tmp/crash-loop.XXXXXX) || exit 2
img=$work/data.raw
loop_args=
[ "$use_loop" = 0 ] || loop_args="--loop $img"

# run_one SEED DELAY ARGS...: one killed run, the placeholders of ARGS
# filled in (a function's own positional parameters: ours stay as given).
run_one()
{
	s=$1 d=$2
	shift 2
	for a in "$@"; do
		shift
		case "$a" in
		*@IMG@* | *@SEED@*)
			a=$(printf '%s' "$a" | sed "s|@IMG@|$img|g; s|@SEED@|$s|g") ;;
		esac
		set -- "$@" "$a"
	done
	# shellcheck disable=SC2086 # loop_args is two words or none
	/bin/sh "$ctl" --kill-after "E2E-ACK: " --delay-ms "$d" \
		$loop_args -- "$@" >"$work/console" 2>"$work/stderr"
}

failed=0
kills=0
i=0
while [ $kills -lt "$n" ] && [ $i -lt $((3 * n)) ]; do
	s=$((seed + i))
	delay_ms=$("$blkcrash" delay "$s" "$max_delay_ms") || exit 2
	# A new file, not the old one truncated: the last run's microvm is
	# reaped before its io_uring is torn down, and a write of it still
	# in flight would land in this run's image (crash_blk measured the
	# image's lock outliving the process in 5 of 10 io_uring kills).
	rm -f "$img"
	"$blkcrash" init "$img" "$s" "$bytes" || exit 2
	run_one "$s" "$delay_ms" "$@"
	rc=$?
	block=$(sed -n 's/^E2E-CRASH: start .* block \([0-9]*\) .*/\1/p' \
		"$work/console" | head -n 1)
	acked=$(tr -d '\r' <"$work/console" |
		sed -n 's/^E2E-ACK: \([0-9]*\)$/\1/p' | tail -n 1)
	acked=${acked:-0}
	verdict=ok
	if [ "$rc" = 137 ] && [ -n "$block" ] && [ "$acked" -gt 0 ] &&
	   grep -q '^E2E-CRASH: done ' "$work/console"; then
		verdict=not-counted-writer-done
	elif [ "$rc" != 137 ] || [ -z "$block" ] || [ "$acked" -eq 0 ]; then
		verdict="not-killed-mid-run(status $rc)"
	elif ! "$blkcrash" verify "$img" "$s" "$block" "$count" "$acked" \
		>"$work/verify"; then
		verdict=LOST
	fi
	echo "E2E-CRASH-ITER: $i seed $s delay $delay_ms ms status $rc" \
		"acked $acked verdict $verdict"
	case "$verdict" in
	ok) kills=$((kills + 1)) ;;
	not-counted-*) i=$((i + 1)); continue ;;
	esac
	if [ "$verdict" != ok ]; then
		failed=$((failed + 1))
		sed 's/^/    /' "$work/verify" 2>/dev/null
		tail -n 20 "$work/console" "$work/stderr" | sed 's/^/    /'
	fi
	i=$((i + 1))
done
rm -rf "$work"
[ $kills -ge "$n" ] || failed=$((failed + 1))
echo "E2E-CRASH-LOOP: $kills kills, $failed failed"
[ $failed -eq 0 ]
