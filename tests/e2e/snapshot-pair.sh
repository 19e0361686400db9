#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs two copies of one microvm command line at once (in L1 when nested,
# by run-guest.sh; POSIX sh, busybox is enough): two guests on the same
# snapshot=on images. While both run (each guest has printed its
# E2E-CMDLINE line, so its disks are open), it counts the OFD read locks
# in /proc/locks. Afterwards it prints each guest's console with a prefix
# (SNAP-a: , SNAP-b: ), each stderr on its stderr (SNAP-a-err: ...), and
#   SNAPSHOT-PAIR: both-running 0|1 read-locks N status A B
# Exit: 0 when both exited 0, else the first non-zero status.
#
# Usage: snapshot-pair.sh PROGRAM [ARGS...]
out=${TMPDIR:-/tmp}/snapshot-pair.$$
mkdir -p "$out" || exit 125
"$@" >"$out/a.console" 2>"$out/a.stderr" </dev/null &
a=$!
"$@" >"$out/b.console" 2>"$out/b.stderr" </dev/null &
b=$!

both=0
locks=0
i=0
while [ $i -lt 3000 ]; do
	if grep -q E2E-CMDLINE "$out/a.console" &&
	   grep -q E2E-CMDLINE "$out/b.console"; then
		if kill -0 $a 2>/dev/null && kill -0 $b 2>/dev/null; then
			both=1
			locks=$(grep -cE 'OFDLCK +ADVISORY +READ' /proc/locks)
		fi
		break
	fi
	kill -0 $a 2>/dev/null && kill -0 $b 2>/dev/null || break
	sleep 0.2
	i=$((i + 1))
done
wait $a
sa=$?
wait $b
sb=$?
for x in a b; do
	sed "s/^/SNAP-$x: /" "$out/$x.console"
	sed "s/^/SNAP-$x-err: /" "$out/$x.stderr" >&2
done
echo "SNAPSHOT-PAIR: both-running $both read-locks $locks status $sa $sb"
rm -rf "$out"
[ $sa -ne 0 ] && exit $sa
exit $sb
