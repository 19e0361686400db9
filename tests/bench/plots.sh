#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The plots of BENCHMARKS.md, with gnuplot, from a results directory that
# tests/bench/regenerate.sh filled:
#   device.csv       microvm-bench --csv (deferral on and off per scenario)
#   guest-fio.txt    guest-fio.sh's "guest-fio: key=value" lines
# and writes into it:
#   device-iops.png  4k randread IOPS against queue depth, 1 queue, deferral
#                    on: microvm's device path and fio on the same file
#                    (page cache and O_DIRECT)
#   device-p99.png   the same runs' p99 completion latency
#   guest-events.png KVM exits and guest interrupts per I/O of the nested
#                    real-guest runs, per VMM (and microvm variant),
#                    transport and queue count (means over the repeats)
# Usage: plots.sh DIR
set -euo pipefail

dir=${1:?usage: plots.sh DIR}
command -v gnuplot >/dev/null ||
	{ echo "plots: gnuplot not found (Debian: gnuplot-nox)" >&2; exit 1; }

# Columns of microvm-bench's CSV, by name (its header line).
col() { head -n 1 "$dir/device.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }

if [ -s "$dir/device.csv" ]; then
	for disk in shm direct; do
		awk -F, -v disk="$disk" -v c_qd="$(col qd)" -v c_q="$(col queues)" \
			-v c_d="$(col defer)" -v c_rw="$(col rw)" -v c_bs="$(col bs)" \
			-v c_i="$(col iops)" -v c_fi="$(col fio_iops)" \
			-v c_p="$(col p99_us)" -v c_fp="$(col fio_p99_us)" \
			'NR > 1 && $1 == disk && $c_rw == "randread" &&
			 $c_bs == 4096 && $c_q == 1 && $c_d == "on" {
				print $c_qd, $c_i, $c_fi, $c_p, $c_fp }' \
			"$dir/device.csv" | sort -n >"$dir/device-$disk.dat"
	done
	gnuplot <<EOF
set terminal pngcairo size 900,540 noenhanced
set datafile missing "n/a"
set logscale x 2
set xlabel "queue depth (4k randread, 1 queue, deferral on)"
set key top left
set grid
set output "$dir/device-iops.png"
set ylabel "IOPS"
set title "microvm device path against fio on the same file"
plot "$dir/device-shm.dat" u 1:2 w lp t "microvm, page cache", \
     "$dir/device-shm.dat" u 1:3 w lp t "fio, page cache", \
     "$dir/device-direct.dat" u 1:2 w lp t "microvm, O_DIRECT", \
     "$dir/device-direct.dat" u 1:3 w lp t "fio, O_DIRECT"
set output "$dir/device-p99.png"
set ylabel "p99 completion latency (us)"
set logscale y 10
set title "p99 latency: microvm device path against fio"
plot "$dir/device-shm.dat" u 1:4 w lp t "microvm, page cache", \
     "$dir/device-shm.dat" u 1:5 w lp t "fio, page cache", \
     "$dir/device-direct.dat" u 1:4 w lp t "microvm, O_DIRECT", \
     "$dir/device-direct.dat" u 1:5 w lp t "fio, O_DIRECT"
EOF
fi

if [ -s "$dir/guest-fio.txt" ]; then
	# One row per (vmm, transport, queues): means of exits and interrupts.
	awk '/^guest-fio: / {
		delete kv
		for (i = 2; i <= NF; i++) {
			e = index($i, "=")
			kv[substr($i, 1, e - 1)] = substr($i, e + 1)
		}
		k = kv["transport"] ":" kv["queues"] " " kv["vmm"]
		if (!(k in n))
			order[++m] = k
		n[k]++
		ex[k] += kv["kvm_exits_per_io"]
		ir[k] += kv["irqs_per_io"]
		ue[k] += kv["user_exits_per_io"]
	} END {
		for (i = 1; i <= m; i++) {
			k = order[i]
			printf "\"%s\" %.3f %.3f %.3f\n", k, ex[k] / n[k],
				ir[k] / n[k], ue[k] / n[k]
		}
	}' "$dir/guest-fio.txt" | sort >"$dir/guest-events.dat"
	gnuplot <<EOF
set terminal pngcairo size 1000,560 noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30
set ylabel "per guest I/O (fio 4k randread QD32)"
set title "nested real guest: events per I/O, microvm and QEMU microvm (means)"
set grid ytics
set key top right
set output "$dir/guest-events.png"
plot "$dir/guest-events.dat" u 2:xtic(1) t "KVM exits", \
     "" u 3 t "guest interrupts", \
     "" u 4 t "exits to userspace"
EOF
fi
ls "$dir"/*.png 2>/dev/null || true
