#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The firmware boots of firmware-test.sh, where microvm runs (inside L1 in
# nested mode, which then boots once for all of them). POSIX sh. Boots the
# guest kernel from IMAGE with no initramfs, three times:
#   default: microvm --kernel K --disk IMAGE --cpus 8 (the command as a
#            user types it; mmio adds ,transport=mmio): the default
#            command line, init runs /etc/microvm/run, status 3
#   cmdline: --cpus 1 and a --cmdline whose words after "--" are the
#            command, one of them quoted with spaces, status 7
#   panic:   --cpus 2, panic=-1, root read-only, the command
#            "echo c > /proc/sysrq-trigger": the guest's pvpanic driver
#            (built into the project's kernel) must end microvm with the
#            panic status 122 and its "guest panicked" line (without the
#            device the panic would reboot: status 0). Its console and
#            stderr are kept out of the test's output (the panic trace would
#            read as a failure there); "FW-PANIC: ok" or "FW-PANIC: FAIL why"
# Prints "FW-RUN: NAME status S in T s" after each. In nested L1 only, a
# triple fault (123) or --timeout (124) boots once more after a
# "FW-RUN-RETRY:" line, and only on evidence that the emulator broke it
# (the rule of lib.sh's e2e_emulator_failure): L1's kernel logged a
# lockup or RCU stall during that boot, or, for 124, microvm's vCPU dump
# shows a wakeup KVM lost (lost-wakeup.awk). Without it the status
# stands. Exit 0 when every boot gave its status, else 1.
#
# Usage: firmware-l1.sh MICROVM KERNEL IMAGE pci|mmio TOKEN
set -u
[ $# -eq 5 ] || { echo "usage: $0 MICROVM KERNEL IMAGE pci|mmio TOKEN" >&2; exit 2; }
microvm=$1 kernel=$2 image=$3 transport=$4 token=$5
disk=$image
[ "$transport" = pci ] || disk=$image,transport=$transport
retries=0
[ -f /e2e/run.env ] && retries=1
awkprog=$(dirname "$0")/lost-wakeup.awk
tmp=${TMPDIR:-/tmp}

# distress: the count of L1 kernel lockup and stall reports so far.
distress()
{
	dmesg 2>/dev/null | grep -cE 'soft lockup|hard LOCKUP|rcu: INFO: .*stall|detected stall'
}

# emulator_evidence STATUS BEFORE ERRFILE: whether this boot's failure
# has the emulator's evidence (prints it).
emulator_evidence()
{
	if [ "$(distress)" -gt "$2" ]; then
		dmesg | grep -E 'soft lockup|hard LOCKUP|rcu: INFO: .*stall|detected stall' |
			tail -n 1 | sed 's/^/L1 kernel: /'
		return 0
	fi
	[ "$1" = 124 ] && [ -f "$awkprog" ] && awk -f "$awkprog" "$3" | head -n 1 | grep .
}

fails=0
# boot NAME WANT ARGS...: one microvm run that must exit WANT; its console
# and stderr go to $boot_out and $boot_err when those are set.
boot()
{
	name=$1 want=$2
	shift 2
	tries=$((retries + 1))
	while :; do
		start=$(date +%s)
		before=$(distress)
		err=${boot_err:-$tmp/fw-$name.err}
		if [ -n "${boot_out:-}" ]; then
			"$microvm" "$@" >"$boot_out" 2>"$err"
		else
			"$microvm" "$@" 2>"$err"
			st=$?
			cat "$err" >&2
			(exit $st)
		fi
		st=$?
		echo "FW-RUN: $name status $st in $(( $(date +%s) - start )) s"
		tries=$((tries - 1))
		case "$st" in
		123 | 124) [ $tries -gt 0 ] || break ;;
		*) break ;;
		esac
		why=$(emulator_evidence "$st" "$before" "$err") || {
			echo "FW-RUN: $name status $st: no evidence the emulator" \
				"failed, not retried"
			break
		}
		echo "FW-RUN-RETRY: $name status $st (emulator: $why), booting again"
	done
	[ "$st" = "$want" ] || fails=$((fails + 1))
}

boot default 3 --kernel "$kernel" --disk "$disk" --cpus 8 --timeout 150
boot cmdline 7 --kernel "$kernel" --disk "$disk" --cpus 1 --timeout 150 \
	--cmdline "console=ttyS0 root=/dev/vda rw microvm.fw=$token -- /etc/microvm/run 1 $transport \"$token and spaces\" 7"
boot_out=$tmp/fw-panic.out boot_err=$tmp/fw-panic.err
boot panic 122 --kernel "$kernel" --disk "$disk" --cpus 2 --timeout 150 \
	--cmdline "console=ttyS0 root=/dev/vda ro panic=-1 -- /bin/sh -c \"echo c > /proc/sysrq-trigger\""
if ! grep -q 'microvm: guest panicked (pvpanic)' "$tmp/fw-panic.err"; then
	echo "FW-PANIC: FAIL no 'guest panicked (pvpanic)' line; stderr:"
	tail -n 5 "$tmp/fw-panic.err"
	fails=$((fails + 1))
elif ! tr -d '\r' <"$tmp/fw-panic.out" | grep -q 'Kernel panic - not syncing'; then
	echo "FW-PANIC: FAIL the console shows no kernel panic; its end:"
	tail -n 5 "$tmp/fw-panic.out"
	fails=$((fails + 1))
else
	echo "FW-PANIC: ok"
fi
[ $fails -eq 0 ]
