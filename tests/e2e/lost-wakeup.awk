# SPDX-License-Identifier: Apache-2.0
# Reads microvm's stderr after --timeout and prints "lost wakeup: LINE"
# for each vCPU dump line that shows a halted vCPU KVM itself failed to
# wake: with interrupts on, either its TSC-deadline timer overdue by a
# second or more (KVM clears the deadline when it delivers the timer) or
# an IPI (vector 0xf0 and up) pending above its priority. No VMM action
# sends or delivers these: the in-kernel LAPIC does. Exit 0 when it found
# one, else 1. POSIX awk: firmware-l1.sh runs it in L1 (busybox).
/microvm: vCPU [0-9]*: halted, interrupts on,/ {
	over = 0; irr = -1; ppr = 256
	if (match($0, /timer overdue [0-9]+ ms/))
		over = substr($0, RSTART + 14, RLENGTH - 17) + 0
	if (match($0, /irr top -?[0-9]+/))
		irr = substr($0, RSTART + 8, RLENGTH - 8) + 0
	if (match($0, /ppr [0-9]+/))
		ppr = substr($0, RSTART + 4, RLENGTH - 4) + 0
	if (over >= 1000 || (irr >= 240 && irr > ppr)) {
		print "lost wakeup: " $0
		found = 1
	}
}
END { exit !found }
