# SPDX-License-Identifier: Apache-2.0
# fault-test.sh: microvm's --stats lines (its stderr) after the host-fault
# boot. vda (device-mapper: error target, then flakey failing writes) must
# count failed writes and reads, vdb (full file system) failed writes and no
# failed reads, each also as errors on its queues. Prints a summary, FAIL
# lines, and exits 1 when a count is off.
/^microvm: stats vd[a-z] queue [0-9]+:/ {
	for (i = 6; i < NF; i += 2)
		if ($i == "errors")
			qerr[$3] += $(i + 1)
}
/^microvm: stats vd[a-z] disk:/ {
	for (i = 5; i < NF; i += 2)
		disk[$3, $i] = $(i + 1)
	seen[$3] = 1
}
function want(what, ok) {
	if (!ok) {
		print "FAIL " what
		bad = 1
	}
}
END {
	for (d in seen)
		printf "%s: read-errors %d write-errors %d flush-errors %d, " \
			"queue errors %d\n", d, disk[d, "read-errors"],
			disk[d, "write-errors"], disk[d, "flush-errors"], qerr[d]
	want("no stats line for vda's disk", seen["vda"])
	want("no stats line for vdb's disk", seen["vdb"])
	want("vda: fewer than 2 failed writes counted",
	     disk["vda", "write-errors"] >= 2)
	want("vda: no failed reads counted", disk["vda", "read-errors"] >= 1)
	want("vda: queue errors below the failed requests",
	     qerr["vda"] >= disk["vda", "write-errors"] + disk["vda", "read-errors"])
	want("vdb: no failed writes counted", disk["vdb", "write-errors"] >= 1)
	want("vdb: failed reads counted", disk["vdb", "read-errors"] == 0)
	want("vdb: no queue errors", qerr["vdb"] >= 1)
	exit bad
}
