#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /bench/init of the guest-benchmark guest (rdinit=/bench/init; see
# guest-fio.sh): loads the virtio modules, runs fio once unmeasured (so the
# measured run starts warm), then the measured fio run on /dev/vda between
# two console handshakes that let the VMM's side sample its counters while
# the guest runs, and prints fio's result and the virtio interrupts taken
# during fio. Then powers off.
# Kernel command line: bench.runtime=S bench.iodepth=N bench.engine=E
# bench.warm=S (seconds of the unmeasured run, 0: none).
# Console protocol (guest-fio-l1.sh answers the two waits):
#   BENCH-GUEST: ...          progress and failures
#   BENCH-TOPO: cpuN ...      the CPU topology and cache sharing the guest sees
#   BENCH-FIO-START           then waits for one line on the console
#   #E                        fio ended (short: each console byte is an
#                             exit, and this one is inside the window);
#                             then waits for one line on the console
#   BENCH-FIO-RC: N           fio's exit status
#   BENCH-FIO-TERSE: LINE     fio's --terse-version=3 line
#   BENCH-IRQ: NAME DELTA     one per virtio interrupt line
#   BENCH-IRQ-TOTAL: N        their sum
#   BENCH-GUEST-DONE
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run

param()
{
	for w in $(cat /proc/cmdline); do
		case "$w" in
		bench."$1"=*) echo "${w#*=}"; return 0 ;;
		esac
	done
	echo "$2"
}

fail()
{
	echo "BENCH-GUEST: FAIL $*"
	poweroff -f
	sleep 60
}

for m in $(cat /lib/modules/virtio.order); do
	insmod "/lib/modules/$m.ko" || fail "insmod $m.ko"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/vda ] || fail "no /dev/vda"

runtime=$(param runtime 10)
depth=$(param iodepth 32)
engine=$(param engine io_uring)
warm=$(param warm 1)
# fio's CPU. The disk's (first) interrupt is taken on one CPU, which Linux
# picks by the vectors in use (with 2 vCPUs: CPU 1 under microvm, CPU 0
# under QEMU's machine). In a 1-vCPU L1 a job on that CPU takes one
# interrupt per I/O under either VMM, a job on the other one a fraction
# (2026-12-02: 0.43 and 0.21 on mmio), and which CPU a free job lands on
# changes from boot to boot. bench.cpu pins fio: "away" to the first CPU
# that does not take the interrupt, "irq" to the one that does, or a
# number; "free" (the default) leaves it to the scheduler, as the tables
# in BENCHMARKS.md were measured (pinned, pci with 1 queue took 0.7-1.0
# interrupts per I/O under both VMMs on either CPU, free about 0.1).
cpu=$(param cpu free)
# bench.irqcpu: move the disk's (first) interrupt to this CPU first, so
# that both VMMs' guests take it on the same one.
irqcpu=$(param irqcpu "")
# pci: queue 0's vector (virtio0-req.0), not the config one.
n=$(awk '$NF ~ /^virtio0(-req\.0)?$/ { sub(":", "", $1); n[$NF] = $1 }
	 END { print ("virtio0-req.0" in n) ? n["virtio0-req.0"] : n["virtio0"] }' \
    /proc/interrupts)
if [ -n "$irqcpu" ]; then
	echo "$irqcpu" >"/proc/irq/$n/smp_affinity_list" ||
		fail "cannot move the disk's interrupt ($n) to CPU $irqcpu"
fi
pin=$cpu
case "$cpu" in
free) pin= ;;
irq | away)
	# A moved interrupt's effective affinity changes at its next arrival
	# (x86 IOAPIC): the CPU asked for is the one.
	pin=${irqcpu:-$(cut -d, -f1 "/proc/irq/$n/effective_affinity_list" \
	      2>/dev/null | cut -d- -f1)}
	[ -n "$pin" ] || fail "no CPU for the disk's interrupt ($n)"
	if [ "$cpu" = away ]; then
		for c in $(seq 0 $(($(nproc) - 1))); do
			# The first other CPU; with one CPU, that one.
			[ "$c" = "$pin" ] || { pin=$c; break; }
		done
	fi
	;;
esac
# bench.rqaff: the disk's rq_affinity (blk-mq: 1, the default, completes
# a request on the submitting CPU only when the two share no cache; 2
# always there; 0 where the interrupt is taken).
rqaff=$(param rqaff "")
if [ -n "$rqaff" ]; then
	echo "$rqaff" >/sys/block/vda/queue/rq_affinity ||
		fail "cannot set rq_affinity to $rqaff"
fi
# The CPUs that share CPU 0's last cache level, and its package's: what
# blk-mq's completion and the scheduler see of the topology.
llc=$(cat "$(ls -d /sys/devices/system/cpu/cpu0/cache/index* 2>/dev/null |
	tail -n 1)/shared_cpu_list" 2>/dev/null)
echo "BENCH-GUEST: vda queues $(ls /sys/block/vda/mq | wc -l)," \
	"$(nproc) CPUs, engine $engine, fio on CPU ${pin:-$cpu}," \
	"rq_affinity $(cat /sys/block/vda/queue/rq_affinity)," \
	"cpu0 llc-shared ${llc:-none}," \
	"package-cpus $(cat /sys/devices/system/cpu/cpu0/topology/package_cpus_list 2>/dev/null)"
echo "BENCH-GUEST: cpu0 $(awk -F': ' '/^(vendor_id|model name|cache size)/ { printf "%s; ", $2 }
	/^flags/ { printf "topoext %s", ($2 ~ / topoext/) ? "yes" : "no"; exit }' /proc/cpuinfo)," \
	"cache levels $(ls -d /sys/devices/system/cpu/cpu0/cache/index* 2>/dev/null | wc -l)"
# The topology the guest built from CPUID: per CPU its family, package,
# core and APIC ID, and which CPUs share each cache level.
for c in /sys/devices/system/cpu/cpu[0-9]*; do
	n=${c##*cpu}
	echo "BENCH-TOPO: cpu$n $(awk -v cpu="$n" -F': *' '
		/^processor/ { p = ($2 == cpu) } p && /^(cpu family|model|physical id|siblings|core id|cpu cores|apicid)[[:space:]]*:/ {
			k = $1; sub(/[[:space:]]+$/, "", k); gsub(/ /, "_", k); printf "%s=%s ", k, $2 }' /proc/cpuinfo)" \
		"die $(cat "$c/topology/die_id" 2>/dev/null)" \
		"caches $(for i in "$c"/cache/index*; do [ -d "$i" ] && printf 'L%s%s:%s ' "$(cat "$i/level")" "$(cut -c1 "$i/type")" "$(cat "$i/shared_cpu_list")"; done)"
done

fio_run()
{
	fio --name=r --filename=/dev/vda --rw=randread --bs=4k \
		--iodepth="$depth" --numjobs=1 --ioengine="$engine" --direct=1 \
		${pin:+--cpus_allowed="$pin"} \
		--time_based --runtime="$1" --output-format=terse \
		--terse-version=3
}

# irqs: "NAME COUNT" per virtio interrupt line, COUNT summed over CPUs;
# then "IPI:NAME C0,C1,..." for the IPIs and timer (per CPU, not summed
# into the total: printed as BENCH-IPI).
irqs()
{
	awk '/virtio/ {
		s = 0
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++)
			s += $i
		print $NF, s
	}
	$1 ~ /^(LOC|RES|CAL|TLB):$/ {
		c = ""
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++)
			c = c (i > 2 ? "," : "") $i
		print "IPI:" substr($1, 1, 3), c
	}' /proc/interrupts
}

if [ "$warm" -gt 0 ]; then
	fio_run "$warm" >/tmp/warm.out 2>&1 ||
		fail "warm-up fio: $(tail -n 3 /tmp/warm.out | tr '\n' ' ')"
fi

# No echo of the handshake lines: fewer console exits in the window.
stty -echo 2>/dev/null
echo "BENCH-FIO-START"
read -r _go
irqs >/tmp/irq0
fio_run "$runtime" >/tmp/fio.out 2>&1
rc=$?
irqs >/tmp/irq1
echo "#E"
read -r _ack
echo "BENCH-FIO-RC: $rc"

[ $rc -eq 0 ] || fail "fio exit $rc: $(tail -n 5 /tmp/fio.out | tr '\n' ' ')"
echo "BENCH-FIO-TERSE: $(grep '^3;' /tmp/fio.out | tail -n 1)"
awk 'NR == FNR { before[$1] = $2; next }
	$1 ~ /^IPI:/ {
		n = split(before[$1], b, ","); split($2, a, ",")
		c = ""
		for (i = 1; i <= n; i++)
			c = c (i > 1 ? "," : "") a[i] - b[i]
		print "BENCH-IPI: " substr($1, 5) " " c
		next
	}
	{ d = $2 - before[$1]; t += d; print "BENCH-IRQ: " $1 " " d }
	END { print "BENCH-IRQ-TOTAL: " t + 0 }' /tmp/irq0 /tmp/irq1
echo "BENCH-GUEST-DONE"
poweroff -f
sleep 60
