#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench.smoke: run microvm-bench --quick and check that every scenario
# produced a row with IOPS > 0 and no errors (the "errors" column, found
# by its header), and that the last line is
# "ratio_vs_fio=R irqfd_per_req=X" with R > 0 (or n/a without fio) and
# X <= 1 (deferral on: at most one signal per request), and one
# "defer-ab:" line per scenario at QD >= 16. No timing is checked.
# Exit 77 (skip) when the bench says io_uring is unavailable.
set -u
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bench" --quick --csv "$dir/rows.csv" >"$dir/out" 2>"$dir/err"
rc=$?
cat "$dir/out"
cat "$dir/err" >&2
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: microvm-bench exited $rc"; exit 1; }

disks=shm
grep -q "direct scenarios skipped" "$dir/out" || disks="shm direct"
missing=0
for d in $disks; do
	for spec in "randread 4096 1 16 64 128" "randwrite 4096 1 16 64 128" \
		    "read 65536 16"; do
		set -- $spec
		rw=$1 bs=$2
		shift 2
		for qd in "$@"; do
			for nq in 1 2; do
				for defer in on off; do
					key="$d,$rw,$bs,$qd,$nq,$defer,"
					if ! awk -F, -v k="$key" '
					    NR == 1 {
						for (i = 1; i <= NF; i++)
							if ($i == "errors") e = i
						next
					    }
					    index($0, k) == 1 && $7 > 0 &&
					    e && $e == 0 { ok = 1 }
					    END { exit !ok }' "$dir/rows.csv"
					then
						echo "FAIL: no good row $key"
						missing=$((missing + 1))
					fi
				done
			done
		done
	done
done
[ $missing -eq 0 ] || exit 1

last=$(tail -n 1 "$dir/out")
echo "$last" | awk '
	/^ratio_vs_fio=([0-9.]+|n\/a) irqfd_per_req=[0-9.]+$/ {
		split($1, r, "="); split($2, x, "=")
		if (r[2] != "n/a" && r[2] + 0 <= 0) { print "FAIL: ratio " r[2]; bad = 1 }
		if (x[2] + 0 > 1.0 + 1e-6) { print "FAIL: irqfd_per_req " x[2]; bad = 1 }
		ok = !bad
	}
	END { if (!ok && !bad) print "FAIL: last line: " $0; exit !ok }' || exit 1
if [ "${last#ratio_vs_fio=n/a}" != "$last" ] && ! grep -q "^note: fio" "$dir/out"; then
	echo "FAIL: ratio n/a although fio ran"
	exit 1
fi
# One defer-ab line per scenario at QD 16 and above (its on row).
want=$(awk -F, 'NR > 1 && $4 >= 16 && $6 == "on"' "$dir/rows.csv" | wc -l)
got=$(grep -c '^defer-ab: .* on below off in [0-9]* of 1 paired rounds' "$dir/out")
if [ "$want" -eq 0 ] || [ "$got" -ne "$want" ]; then
	echo "FAIL: $got defer-ab lines for $want scenarios at QD >= 16"
	exit 1
fi
echo "bench.smoke: ok ($disks)"
