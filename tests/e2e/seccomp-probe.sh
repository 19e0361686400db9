#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs PROGRAM (microvm) and, while it runs, samples the seccomp state of
# each of its threads from /proc/PID/task/*/status every 0.2 s; when it
# ends, prints one line per thread seen on stderr and exits with its
# status. POSIX sh: runs on the host (direct) and in nested mode's L1
# (busybox), wrapped around microvm by disk-test.sh --seccomp-probe.
# Sampling starts 1 s after the first vCPU thread appears: before that
# the main thread is still setting up, unconfined (the guest cannot run
# until it is confined: vCPU threads wait for it, util/confine.c).
#   seccomp-probe: thread TID NAME seccomp MODE filters N
#   seccomp-probe: SAMPLES samples
# A thread seen with two different states gets a line for each.
# Usage: seccomp-probe.sh PROGRAM [ARGS...]
if [ $# -lt 1 ]; then
	echo "usage: seccomp-probe.sh PROGRAM [ARGS...]" >&2
	exit 1
fi
seen=${TMPDIR:-/tmp}/seccomp-probe.$$
: >"$seen" || exit 1
# An asynchronous command's stdin would be /dev/null: hand ours over.
exec 3<&0
"$@" <&3 3<&- &
pid=$!
exec 3<&-
samples=0
since=
while kill -0 "$pid" 2>/dev/null; do
	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' \
		"/proc/$pid/status" 2>/dev/null)
	[ "$state" = Z ] && break
	if [ -z "$since" ]; then
		grep -qx 'vcpu[0-9]*' /proc/"$pid"/task/*/comm 2>/dev/null &&
			since=$(cut -d' ' -f1 /proc/uptime)
		sleep 0.1 2>/dev/null || sleep 1
		continue
	fi
	if awk -v a="$since" -v b="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { exit !(b - a < 1) }'; then
		sleep 0.2 2>/dev/null || sleep 1
		continue
	fi
	for t in /proc/"$pid"/task/*; do
		mode=$(sed -n 's/^Seccomp:[[:space:]]*//p' "$t/status" 2>/dev/null)
		filters=$(sed -n 's/^Seccomp_filters:[[:space:]]*//p' \
			"$t/status" 2>/dev/null)
		name=$(cat "$t/comm" 2>/dev/null)
		[ -n "$mode" ] && [ -n "$name" ] &&
			echo "${t##*/} $name $mode ${filters:-?}" >>"$seen"
	done
	samples=$((samples + 1))
	sleep 0.2 2>/dev/null || sleep 1
done
wait "$pid"
rc=$?
sort -u "$seen" | while read -r tid name mode filters; do
	echo "seccomp-probe: thread $tid $name seccomp $mode filters $filters" >&2
done
echo "seccomp-probe: $samples samples" >&2
rm -f "$seen"
exit $rc
