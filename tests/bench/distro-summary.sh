#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# distro-boot.sh's summary of its records (distro-boot-l1.sh's DREC lines).
# Every number a boot reported becomes a metric (its median over the runs
# per VMM is printed as "summary METRIC vmm=V median=M min=A max=B n=N");
# then the rounds the first VMM of VMMS won on time to multi-user, and a
# Markdown table of the main metrics.
# KVM exit reasons are named as AMD SVM's (the emulated L1's CPU); on an
# Intel host the numbers are VMX's and the names do not apply.
# Usage: distro-summary.sh RECORDS "VMM1 VMM2 ..."
records=$1 vmms=$2
[ -f "$records" ] || { echo "distro-summary: no records file $records" >&2; exit 1; }
awk -v vmms="$vmms" '
function secs(s,    m, t) {	# "1min 2.345s", "812ms", "3.2s" -> seconds
	t = 0
	if (match(s, /[0-9.]+min/)) { m = substr(s, RSTART, RLENGTH - 3); t += m * 60 }
	if (match(s, /[0-9.]+ms/)) { m = substr(s, RSTART, RLENGTH - 2); return t + m / 1000 }
	if (match(s, /[0-9.]+s/)) { m = substr(s, RSTART, RLENGTH - 1); t += m }
	return t
}
function hist_name(t, r) {	# the metric named by key R of a hist record
	if (t == "exit_reasons") return "exit." (r in svm ? svm[r] : r)
	if (t == "user_exits") return "uexit." (r in ue ? ue[r] : r)
	if (t == "msr_exits") return "msr." (r in msr ? msr[r] : sprintf("0x%x", r))
	return sprintf("pio.0x%x", r)
}
function put(v, k, name, val) {
	if (val !~ /^[0-9.]+$/) return
	vals[name, v, k] = val; names[name] = 1; runs[v, k] = 1
}
BEGIN {
	svm[96] = "intr"; svm[97] = "nmi"; svm[100] = "vintr"; svm[114] = "cpuid"
	svm[119] = "pause"; svm[120] = "hlt"; svm[123] = "ioio"; svm[124] = "msr"
	svm[127] = "shutdown"; svm[129] = "vmmcall"; svm[1024] = "npf"
	svm[1025] = "avic_ipi"; svm[1026] = "avic_noaccel"; svm[98] = "smi"
	svm[99] = "init"; svm[111] = "rdtsc"; svm[65] = "excp_db"
	ue[2] = "io"; ue[5] = "hlt"; ue[6] = "mmio"; ue[8] = "shutdown"
	ue[10] = "intr"; ue[17] = "internal"; ue[24] = "system_event"
	msr[1760] = "tsc_deadline"; msr[2059] = "x2apic_eoi"; msr[2096] = "x2apic_icr"
	msr[2104] = "x2apic_tmict"; msr[2098] = "x2apic_lvtt"; msr[72] = "spec_ctrl"
	msr[16] = "tsc"
}
$1 != "DREC" { next }
{
	v = ""; k = ""
	for (i = 2; i <= 3; i++) {
		if ($i ~ /^vmm=/) v = substr($i, 5)
		if ($i ~ /^run=/) k = substr($i, 5)
	}
	if (v == "" || k == "") next
	t = $4
}
t == "DBENCH" {
	for (i = 5; i <= NF; i++) { split($i, kv, "="); put(v, k, "guest." kv[1], kv[2]) }
	next
}
t == "DBENCH-SA-TIME" && /Startup finished in/ {
	s = $0; sub(/.*Startup finished in /, "", s)
	n = split(s, parts, /\+|=/)
	for (i = 1; i <= n; i++) {
		pt = parts[i]
		if (match(pt, /\([a-z]+\)/)) put(v, k, "sa." substr(pt, RSTART + 1, RLENGTH - 2), secs(pt))
		else if (i == n) put(v, k, "sa.total", secs(pt))
	}
	next
}
t == "DBENCH-SA-TIME" && /multi-user.target reached after/ {
	s = $0; sub(/.*reached after /, "", s); sub(/ in userspace.*/, "", s)
	put(v, k, "sa.multi_user", secs(s)); next
}
t == "DBENCH-IRQ" {
	name = $5; d = ""
	for (i = 7; i <= NF; i++) d = d (d == "" ? "" : "_") $i
	if (name !~ /^[A-Z]+$/) name = d == "" ? name : d
	put(v, k, "irq." name, $6); irqs[v, k] += $6; next
}
t == "DBENCH-DISK" {
	put(v, k, "disk." $5 ".reads", $6); put(v, k, "disk." $5 ".read_sectors", $8)
	put(v, k, "disk." $5 ".read_ms", $9); put(v, k, "disk." $5 ".writes", $10)
	if ($6 > 0) put(v, k, "disk." $5 ".read_latency_ms", sprintf("%.3f", $9 / $6))
	next
}
t == "DBENCH-CPUFLAGS" {
	if (!((v) in flags)) { f = ""; for (i = 5; i <= NF; i++) f = f " " $i; flags[v] = f " " }
	next
}
t == "DBENCH-HCTX" {
	split($6, q, "="); put(v, k, "hctx." $5 ".queued", q[2]); next
}
t == "kvm" || t == "cpu" || t == "vmstat" {
	for (i = 5; i <= NF; i++) { split($i, kv, "="); put(v, k, t "." kv[1], kv[2]) }
	next
}
t == "exit_reasons" || t == "user_exits" || t == "msr_exits" || t == "pio_ports" {
	tot = 0
	for (i = 5; i <= NF; i++) {
		split($i, kv, "="); put(v, k, hist_name(t, kv[1] + 0), kv[2]); tot += kv[2]
	}
	if (t == "exit_reasons") put(v, k, "exit.total", tot)
	if (t == "user_exits") put(v, k, "uexit.total", tot)
	next
}
t ~ /^l1_wall_s=/ { split(t, kv, "="); put(v, k, "l1_wall_s", kv[2]); next }
t ~ /^exit_status=/ {
	for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "console_bytes") put(v, k, "console_bytes", kv[2]) }
	next
}
END {
	nv = split(vmms, vm, " ")
	for (key in runs) { split(key, p, SUBSEP); if (p[2] + 0 > maxk) maxk = p[2] + 0 }
	for (v0 = 1; v0 <= nv; v0++) for (kk = 1; kk <= maxk; kk++)
		if ((vm[v0], kk) in runs && irqs[vm[v0], kk] > 0) put(vm[v0], kk, "irq.total", irqs[vm[v0], kk])
	for (name in names) {
		for (v0 = 1; v0 <= nv; v0++) {
			n = 0
			for (kk = 1; kk <= maxk; kk++)
				if ((name, vm[v0], kk) in vals) a[++n] = vals[name, vm[v0], kk] + 0
			if (!n) continue
			for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			printf "summary %s vmm=%s median=%s min=%s max=%s n=%d\n", name, vm[v0], med, a[1], a[n], n | "sort"
			M[name, vm[v0]] = med
		}
	}
	close("sort")
	if (nv >= 2) {
		won = 0; both = 0
		for (kk = 1; kk <= maxk; kk++) {
			a1 = ("guest.multi_user_s", vm[1], kk) in vals; a2 = ("guest.multi_user_s", vm[2], kk) in vals
			if (!a1 || !a2) continue
			both++
			if (vals["guest.multi_user_s", vm[1], kk] + 0 < vals["guest.multi_user_s", vm[2], kk] + 0) won++
			printf "round %d %s_multi_user_s=%s %s_multi_user_s=%s\n", kk, vm[1], vals["guest.multi_user_s", vm[1], kk], vm[2], vals["guest.multi_user_s", vm[2], kk]
		}
		printf "wins %s_faster_to_multi_user=%d of %d rounds\n", vm[1], won, both
		# CPU flags the guest saw under one VMM and not the other.
		if ((vm[1] in flags) && (vm[2] in flags)) {
			for (a0 = 1; a0 <= 2; a0++) {
				b0 = 3 - a0; only = ""
				n = split(flags[vm[a0]], fl, " ")
				for (i = 1; i <= n; i++) if (index(flags[vm[b0]], " " fl[i] " ") == 0) only = only " " fl[i]
				printf "cpuflags only_%s:%s\n", vm[a0], only == "" ? " (none)" : only
			}
		}
	}
	split("guest.init_s guest.systemd_s guest.multi_user_s guest.boot_done_s sa.kernel sa.initrd sa.userspace sa.total l1_wall_s console_bytes exit.total exit.hlt exit.ioio exit.npf exit.intr exit.vintr exit.msr exit.pause exit.avic_ipi exit.avic_noaccel uexit.total uexit.io uexit.mmio msr.tsc_deadline msr.x2apic_eoi msr.x2apic_icr pio.0x3f8 pio.0x3fd kvm.halt_exits kvm.halt_successful_poll kvm.halt_attempted_poll kvm.halt_wakeup kvm.irq_injections kvm.request_irq_exits cpu.vcpu_ticks cpu.other_ticks cpu.threads irq.total irq.LOC irq.RES irq.CAL irq.TLB irq.4-edge_ttyS0 disk.vda.reads disk.vda.read_sectors disk.vda.read_latency_ms", rows, " ")
	printf "\n| median of each VMM'\''s runs |"
	for (v0 = 1; v0 <= nv; v0++) printf " %s |", vm[v0]
	if (nv >= 2) printf " %s / %s |", vm[1], vm[2]
	printf "\n|---|"
	for (v0 = 1; v0 <= nv; v0++) printf "---|"
	if (nv >= 2) printf "---|"
	printf "\n"
	for (r = 1; r in rows; r++) {
		name = rows[r]; any = 0
		for (v0 = 1; v0 <= nv; v0++) if ((name, vm[v0]) in M) any = 1
		if (!any) continue
		printf "| %s |", name
		for (v0 = 1; v0 <= nv; v0++) printf " %s |", ((name, vm[v0]) in M) ? M[name, vm[v0]] : "-"
		if (nv >= 2) {
			if (((name, vm[1]) in M) && ((name, vm[2]) in M) && M[name, vm[2]] > 0)
				printf " %.2f |", M[name, vm[1]] / M[name, vm[2]]
			else printf " - |"
		}
		printf "\n"
	}
}' "$records"
