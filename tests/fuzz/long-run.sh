#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One long libFuzzer run of a target, as recorded in tests/fuzz/README.md:
# 10 million executions or one hour, whichever comes first, at low
# priority (NICE, default 19), starting from the checked-in seeds. New inputs go to a working
# corpus outside the tree; a crash leaves crash-* in the log directory.
#
#   tests/fuzz/long-run.sh BINARY NAME [LOGDIR] [extra libFuzzer flags]
#
# BINARY is a libFuzzer build of tests/fuzz/NAME.c (the CMake target
# NAME, or NAME_clang in a gcc tree). The last lines of LOGDIR/NAME.log
# are the numbers the README records (stat::number_of_executed_units,
# the final cov:/ft: line).
set -eu
bin=$1
# The run happens in LOGDIR: a relative BINARY is taken from here.
case $bin in /*) ;; *) bin=$(pwd)/$bin;; esac
[ -x "$bin" ] || { echo "long-run.sh: no fuzz binary at '$bin'" >&2; exit 2; }
name=$2
logdir=${3:-${TMPDIR:-/tmp}/microvm-fuzz}
[ $# -ge 3 ] && shift 3 || shift $#
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logdir/$name.corpus"
# A target with no checked-in seeds (fuzz_pl011) starts from nothing.
seeds=$here/corpus/$name
[ -d "$seeds" ] || seeds=
cd "$logdir"
exec nice -n "${NICE:-19}" "$bin" -runs=${RUNS:-10000000} \
	-max_total_time=${MAX_TIME:-3600} -max_len=20000 \
	-print_final_stats=1 -artifact_prefix="$logdir/$name-" "$@" \
	"$logdir/$name.corpus" ${seeds:+"$seeds"} >"$logdir/$name.log" 2>&1
