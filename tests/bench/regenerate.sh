#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Regenerate every figure of BENCHMARKS.md in one command: build, then
#   1. the device-path benchmark (build/microvm-bench, against fio), with
#      the queue threads' polling at its default and off;
#   2. the nested real-guest fio runs, microvm (polling off and default)
#      and QEMU's microvm machine (traced for its userspace exits, and
#      untraced: the trace changes its counts) side by side in one L1
#      (guest-fio.sh);
#   3. boot time and VMM memory overhead against QEMU (boot-vs-qemu.sh);
#   3b. interrupt holding: microvm with irq-hold-us=1000 beside microvm
#      and untraced QEMU in one 1-vCPU L1, mmio with 2 queues, the disk's
#      interrupt on CPU 0 and fio on CPU 1 in every guest; and the device
#      path with a 50 us hold (section 2, "holding the interrupt");
#   4. engine=vhost against engine=io_uring in one 1-vCPU L1 (guest-fio.sh
#      with the vhost-blk module built for L1's kernel; section 5), the
#      module's polling off (its default) and at 32 us;
#   4b. the control plane against QEMU's QMP: socket ready, start to
#      /init, pause/resume round trips, idle Rss with and without the API
#      (lifecycle-bench.sh; section 6);
#   4c. virtio-net and vsock against QEMU, both engines each, in one L1
#      (net-bench.sh; section 7; needs iperf3);
#   4d. a Debian 12 distribution (systemd, udev; debootstrap, cached in
#      build/distro) booted to multi-user under microvm and QEMU in one
#      1-vCPU L1, with the kernel's console messages and quiet
#      (distro-boot.sh; section 9; needs root and debootstrap);
#   4e. the console's exits: the test guest's kernel messages on ttyS0
#      with the transmit register's writes coalesced in KVM's ring and
#      without (MICROVM_COALESCED_PIO=off), in one L1 (console-ab.sh;
#      section 9);
#   5. the PNG plots (plots.sh, gnuplot).
# Every raw output lands in OUT (default build/bench-results/DATE); the
# tables BENCHMARKS.md shows are the *.txt files there (Markdown tables at
# their ends). Takes about 90 minutes on 2 cores (the nested parts most of it);
# --quick does a short pass of each part (minutes) to check the pipeline.
# Installs nothing: run tests/install-deps.sh first, and apt-get install
# gnuplot-nox for the plots.
#
# Usage: tests/bench/regenerate.sh [--out DIR] [--quick] [--skip LIST]
#   --skip device,guest,hold,boot,vhost,lifecycle,net,distro,console   leave parts out (their old files stay)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$root/build/bench-results/$(date -u +%Y-%m-%d)
quick=false
skip=
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--quick) quick=true; shift ;;
	--skip) skip=$2; shift 2 ;;
	*) echo "regenerate: unknown option '$1'" >&2; exit 1 ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
want() { case ",$skip," in *",$1,"*) return 1 ;; esac; }
log() { echo "regenerate: $(date -u +%H:%M:%S) $*"; }

cmake -S "$root" -B "$root/build" >/dev/null
cmake --build "$root/build" -j "$(nproc)" >/dev/null
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "cpus: $(nproc), memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
	echo "kernel: $(uname -r)"
	if ! [ -c /dev/kvm ]; then
		echo "kvm: no /dev/kvm: real guests run nested under QEMU TCG"
	elif grep -qwE 'vmx|svm' /proc/cpuinfo; then
		echo "kvm: /dev/kvm with hardware virtualization"
	else
		echo "kvm: /dev/kvm without vmx/svm (a software KVM): real guests run nested under QEMU TCG"
	fi
	echo "fio: $(fio --version 2>/dev/null || echo none)"
	echo "qemu: $(qemu-system-x86_64 --version 2>/dev/null | head -n 1 || echo none)"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

if want device; then
	log "device path (microvm-bench)"
	cd "$root/build"
	if $quick; then
		set -- --quick
	else
		set -- --repeat 3 --ms 1500
	fi
	./microvm-bench "$@" --csv "$out/device.csv" >"$out/device.txt"
	./microvm-bench "$@" --poll-us 0 --disks shm,direct --rw randread \
		--qd 16,64 --queues 1 --csv "$out/device-nopoll.csv" \
		>"$out/device-nopoll.txt"
	tail -n 1 "$out/device.txt"
	cd "$root"
fi

if want guest; then
	log "nested real-guest fio (guest-fio.sh)"
	if $quick; then
		set -- --quick
	else
		set -- --repeat 2 --runtime 8 --plan "pci:2 mmio:1 pci:1"
	fi
	"$root/tests/bench/guest-fio.sh" "$@" \
		--vmms "microvm+poll-us=0 microvm qemu qemu-notrace" \
		--raw "$out/guest-fio.raw" >"$out/guest-fio.txt"
fi

if want hold; then
	log "interrupt holding (guest-fio.sh, microvm-bench --irq-hold-us)"
	if $quick; then
		set -- --repeat 1 --runtime 2
	else
		set -- --repeat 2 --runtime 8
	fi
	MICROVM_E2E_L1_CPUS=1 MICROVM_BENCH_FIO_CPU=away MICROVM_BENCH_IRQ_CPU=0 \
		"$root/tests/bench/guest-fio.sh" "$@" --plan "mmio:2" \
		--vmms "microvm microvm+irq-hold-us=1000 qemu-notrace" \
		--raw "$out/guest-fio-hold.raw" >"$out/guest-fio-hold.txt"
	cd "$root/build"
	for h in 0 50; do
		./microvm-bench $($quick && echo --quick || echo --repeat 3 --ms 500) \
			--disks direct,shm --rw randread --qd 1,64 --queues 1 \
			--irq-hold-us "$h" >"$out/device-hold-$h.txt"
	done
	cd "$root"
fi

if want boot; then
	log "boot time and footprint (boot-vs-qemu.sh)"
	# With the project's kernel built (cmake --build build --target
	# guest-kernel), the same run also boots it from a root image.
	fw=()
	[ -f "$root/build/firmware/kernel/bzImage" ] &&
		fw=(--fw-kernel "$root/build/firmware/kernel/bzImage")
	"$root/tests/bench/boot-vs-qemu.sh" --runs "$($quick && echo 1 || echo 3)" \
		"${fw[@]}" --records "$out/boot.records" >"$out/boot.txt"
fi

if want vhost; then
	log "engine=vhost against io_uring (guest-fio.sh --vhost)"
	cmake --build "$root/build" --target vhost-blk-module >/dev/null
	ko=$root/build/kernel/vhost-blk/vhost_blk.ko
	if $quick; then
		set -- --repeat 1 --runtime 2 --plan "mmio:1"
	else
		set -- --repeat 3 --runtime 8 --plan "pci:1 mmio:1 pci:2 mmio:2"
	fi
	MICROVM_E2E_L1_CPUS=1 "$root/tests/bench/guest-fio.sh" "$@" \
		--vmms "microvm microvm-vhost microvm-vhost+poll-us=32" \
		--vhost "$ko" --raw "$out/guest-fio-vhost.raw" \
		>"$out/guest-fio-vhost.txt"
fi

if want lifecycle; then
	log "control plane against QMP (lifecycle-bench.sh)"
	"$root/tests/bench/lifecycle-bench.sh" \
		--runs "$($quick && echo 1 || echo 5)" \
		--cycles "$($quick && echo 5 || echo 20)" \
		--records "$out/lifecycle.records" >"$out/lifecycle.txt"
fi

if want net; then
	log "virtio-net and vsock against QEMU (net-bench.sh)"
	"$root/tests/bench/net-bench.sh" \
		--repeat "$($quick && echo 1 || echo 3)" \
		--runtime "$($quick && echo 3 || echo 10)" \
		--raw "$out/net-bench.raw" >"$out/net-bench.txt"
fi

if want distro; then
	log "a distribution's boot against QEMU (distro-boot.sh)"
	r=$($quick && echo 1 || echo 3)
	"$root/tests/bench/distro-boot.sh" --runs "$r" \
		--records "$out/distro.records" >"$out/distro.txt" ||
		log "distro-boot.sh ended with status $? (a missing boot is left out of its summary)"
	MICROVM_DISTRO_CMDLINE="console=ttyS0 quiet panic=-1" \
		"$root/tests/bench/distro-boot.sh" --runs "$r" \
		--records "$out/distro-quiet.records" >"$out/distro-quiet.txt" ||
		log "distro-boot.sh (quiet) ended with status $?"
fi

if want console; then
	log "the console's exits, coalesced and not (console-ab.sh)"
	"$root/tests/bench/console-ab.sh" --runs "$($quick && echo 1 || echo 4)" \
		--records "$out/console-ab.records" >"$out/console-ab.txt" ||
		log "console-ab.sh ended with status $?"
fi

log "plots"
"$root/tests/bench/plots.sh" "$out"
log "done: $out"
