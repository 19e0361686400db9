# SPDX-License-Identifier: Apache-2.0
# poll-bench.sh's table: one row per run (configuration and round), the
# counts divided by the guest's completed I/Os (fio's issued total).
{ sub(/\r$/, "") }
/^BENCH-CTRS:/ { for (i = 2; i <= NF; i++) ctr[i - 1] = $i; nc = NF - 1 }
/^BENCH-GUEST:/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); g[kv[1]] = kv[2] }
}
/^BENCH-KVM[01]:/ {
	key = $2 " " $3
	if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	for (i = 1; i <= nc; i++)
		v[key, substr($1, 10, 1), ctr[i]] = $(3 + i)
	if ($1 == "BENCH-KVM1:") {
		# No counters: the guest never printed BENCH-END (timeout).
		if (NF < 3 + nc) { ios[key] = "FAILED"; split("", g) }
		else { ios[key] = g["ios"]; iops[key] = g["iops"]
			irqs[key] = g["irqs"] }
		split("", g)
	}
}
/^BENCH-STATS:/ && / polling: / {
	key = $2 " " $3
	for (i = 10; i < NF; i += 2) poll[key, $i] += $(i + 1)
	next
}
/^BENCH-STATS:/ {
	key = $2 " " $3
	for (i = 9; i < NF; i += 2) st[key, $i] += $(i + 1)
}
function per(x, d) { return d > 0 ? sprintf("%.3f", x / d) : "-" }
function dk(key, c) { return v[key, "1", c] - v[key, "0", c] }
END {
	hdr = "%-16s %-8s %7s %7s %8s %8s %8s %8s %8s %8s %7s %7s %9s\n"
	row = "%-16s %-8s %7s %7s %8s %8s %8s %8s %8s %8s %7d %7d %9.1f\n"
	printf hdr,
		"config", "round", "ios", "iops", "kicks/io", "sigs/io",
		"irqs/io", "exits/io", "uexit/io", "halt/io", "hits", "misses",
		"polled-ms"
	for (k = 0; k < n; k++) {
		key = order[k]; split(key, p, " ")
		d = ios[key]
		printf row, substr(p[2], 5), p[1], d, iops[key],
			per(st[key, "kicks"], d), per(st[key, "irq-signals"], d),
			per(irqs[key], d), per(dk(key, "exits"), d),
			per(dk(key, "io_exits") + dk(key, "mmio_exits"), d),
			per(dk(key, "halt_exits"), d), poll[key, "hits"],
			poll[key, "misses"], poll[key, "polled-us"] / 1000
	}
}
