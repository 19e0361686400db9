#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# TEST BUILD ONLY: copies vhost_blk.c to OUT with a delay of USEC
# microseconds right after the llist_add() of vhost_blk_queue_done(), so
# that the window between a completion making its request visible and its
# wakeup of the worker (the late-completion-after-stop race) is wide enough
# for a stress to hit it. Applied identically to the old and the fixed code.
# Usage: widen.sh SRC OUT USEC
# Exit status: 0 done; 1 bad usage, or the llist_add() line was not found
# exactly once inside vhost_blk_queue_done().
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SRC OUT USEC" >&2; exit 1; }
src=$1 out=$2 usec=$3
case "$usec" in
'' | *[!0-9]*) echo "widen.sh: USEC must be a number, not '$usec'" >&2; exit 1 ;;
esac
# udelay() takes at most 20000 us; mdelay() (whole ms) beyond 1000.
if [ "$usec" -gt 1000 ]; then
	delay="mdelay($(((usec + 999) / 1000)))"
else
	delay="udelay($usec)"
fi
awk -v delay="$delay" '
	/^static void vhost_blk_queue_done\(/ { infn = 1 }
	infn && /^}/ { infn = 0 }
	{ print }
	infn && /^\tllist_add\(&r->node, &q->done\);$/ {
		print "\t" delay ";	/* test build: widen the race */"
		n++
	}
	END { if (n != 1) exit 3 }
' "$src" > "$out" || { echo "widen.sh: no single llist_add() in vhost_blk_queue_done() of $src" >&2; exit 1; }
grep -q '^#include <linux/delay.h>' "$out" ||
	sed -i '0,/^#include <linux\//s//#include <linux\/delay.h>\n#include <linux\//' "$out"
