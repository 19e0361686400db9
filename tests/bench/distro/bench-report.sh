#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs in the distribution guest of tests/bench/distro-boot.sh as the unit
# microvm-bench.service, ordered after multi-user.target: its first line is
# the guest's uptime when multi-user was reached. It then waits for the
# boot to end (systemd-analyze needs that), prints what the guest knows
# about its boot, "DBENCH-DONE", waits 10 s for the host to sample its
# counters and powers off at once. Every line starts "DBENCH".
# The report is written to a file first and then to the console a line
# at a time, each line opening the device anew: the serial getty's
# vhangup() of ttyS0 would end writes through an older open.
read -r up _ </proc/uptime
report=/run/microvm-bench.txt
exec >"$report" 2>&1
echo "DBENCH multi_user_s=$up"

i=0
state=starting
while [ $i -lt 600 ]; do
	state=$(systemctl is-system-running 2>/dev/null)
	case "$state" in
	initializing | starting) sleep 0.1 ;;
	*) break ;;
	esac
	i=$((i + 1))
done
read -r done_up _ </proc/uptime
echo "DBENCH boot_state=$state boot_done_s=$done_up"

# The kernel's own marks: the initramfs's /init and systemd's start.
dmesg | awk '
/Run \/init as init process/ && !i {
	t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t); print "DBENCH init_s=" t; i = 1 }
/systemd\[1\]: systemd [0-9]+.* running in system mode/ && !s {
	t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t); print "DBENCH systemd_s=" t; s = 1 }'
echo "DBENCH clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "DBENCH cpus_online=$(grep -c ^processor /proc/cpuinfo)"
echo "DBENCH entropy_avail=$(cat /proc/sys/kernel/random/entropy_avail)"
# What the guest was given: its CPU's flags (CPUID), for the summary's diff.
echo "DBENCH-CPUFLAGS$(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2)"
dmesg | grep -m1 -E 'crng init done|random: crng' | sed 's/^/DBENCH-KMSG /'

systemd-analyze time 2>&1 | sed 's/^/DBENCH-SA-TIME /'
systemd-analyze blame 2>&1 | head -n 15 | sed 's/^/DBENCH-SA-BLAME /'
systemd-analyze critical-chain 2>&1 | sed 's/^/DBENCH-SA-CHAIN /'

# Interrupts per source, summed over the CPUs.
awk 'NR == 1 { n = NF; next }
{ s = 0; for (i = 2; i <= n + 1 && i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i
  name = $1; sub(/:$/, "", name); d = ""
  for (i = n + 2; i <= NF; i++) d = d " " $i
  if (s) printf "DBENCH-IRQ %s %d%s\n", name, s, d }' /proc/interrupts

# The root disk: requests, sectors, time (ms) per direction, and the
# requests each hardware queue took.
for d in /sys/block/vd*; do
	[ -e "$d/stat" ] || continue
	echo "DBENCH-DISK ${d##*/} $(cat "$d/stat")"
done
mount -t debugfs none /sys/kernel/debug 2>/dev/null
for h in /sys/kernel/debug/block/vd*/hctx*; do
	[ -r "$h/queued" ] || continue
	echo "DBENCH-HCTX ${h#/sys/kernel/debug/block/} queued=$(cat "$h/queued") run=$(cat "$h/run")"
done
echo "DBENCH-DONE"
while IFS= read -r line; do
	printf '%s\n' "$line" >/dev/ttyS0
done <"$report"
sleep 10
systemctl poweroff --force --force
