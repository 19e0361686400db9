#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One virtio-blk real-guest test: builds an ext4 root image (busybox, fio
# and its libraries, the disk scenario), a raw data image and a read-only
# image, boots the L2 guest from the root disk under microvm (through
# run-guest.sh, direct or nested), then checks the guest's verdict, the
# per-queue --stats counters and, on the host, every image: the patterns
# at their offsets, untouched bytes elsewhere, fio's blocks at their own
# offsets, the read-only image unchanged, and e2fsck/debugfs on the root.
#
# Usage: disk-test.sh --microvm BIN --artifacts DIR [--transport pci|mmio]
#        [--cpus N] [--queues N] [--jobs N] [--memory MIB] [--mode MODE]
#        [--vm-timeout S] [--vm-arg ARG] [--end poweroff|reboot]
#        [--seccomp-probe] [--vhost KO]
#   --queues N   request queues of the data disk (default: microvm's, one
#                per vCPU on pci, 1 on mmio)
#   --jobs N     fio jobs on the data disk, job K pinned to CPU K (0: none)
#   --vm-arg ARG one more microvm argument (repeatable)
#   --vm-timeout S  microvm --timeout (default 240: a hung guest still ends
#                with its --stats counters, before the harness gives up)
#   --end ACTION how the guest ends (default poweroff; both exit 0)
#   --seccomp-probe  run microvm under seccomp-probe.sh and check that
#                every thread it saw was confined (Seccomp: 2), the I/O
#                threads under two filters (vCPU's and their own)
#   --vhost KO   every disk with engine=vhost, served by the module KO
#                (vhost_blk.ko for the L1 kernel): nested only; L1
#                insmods the vhost core and KO first and rmmods KO after
#                the VM (vhost-l1.sh); --stats then checks the module's
#                ring positions instead of the I/O threads' counters.
#                Skipped (77) without KO built for the L1 kernel.
# microvm runs with --verbose: after a crash or the timeout its stderr has
# the vCPU registers.
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
# Data disk layout (bytes). Pattern A goes through O_DIRECT at a 4 KiB
# boundary; pattern B through the page cache at an odd offset and with an
# odd length (read-modify-write of partial blocks); fio owns
# [FIO_OFF, FIO_OFF + jobs * FIO_SIZE). Everything else must stay as the
# host wrote it.
DATA_SIZE=$((48 * MIB))
PAT_A_OFF=$((MIB + 12288))
PAT_A_LEN=$MIB
PAT_B_OFF=$((3 * MIB + 1000))
PAT_B_LEN=$((MIB + 300))
FIO_OFF=$((8 * MIB))
FIO_SIZE=$((4 * MIB))
RO_SIZE=$((4 * MIB))
ROOT_SIZE=$((128 * MIB))
SERIAL=e2e-serial-1

microvm=
art=
transport=pci
cpus=2
queues=
jobs=
queues_arg=
mib=512
vm_timeout=240
mode_args=()
extra_args=()
end=poweroff
probe=()
wrap=()
vhost_ko=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--queues) queues=$2; queues_arg=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--vm-arg) extra_args+=("$2"); shift 2 ;;
	--vm-timeout) vm_timeout=$2; shift 2 ;;
	--end) end=$2; shift 2 ;;
	--seccomp-probe) probe=(/bin/sh "$E2E_DIR/seccomp-probe.sh"); shift ;;
	--vhost) vhost_ko=$2; shift 2 ;;
	*) echo "disk-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "disk-test: --microvm and --artifacts are required" >&2; exit 1; }
case "$transport" in
pci) queues=${queues:-$cpus} ;;
mmio) queues=${queues:-1} ;;
*) echo "disk-test: --transport pci|mmio, not '$transport'" >&2; exit 1 ;;
esac
jobs=${jobs:-$queues}
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1

# engine=vhost: the module and the vhost core of L1's kernel, in L1 only
# (never loaded into this host's kernel).
engine=
if [ -n "$vhost_ko" ]; then
	[ ${#probe[@]} -eq 0 ] || {
		echo "disk-test: --vhost and --seccomp-probe do not combine" >&2
		exit 1
	}
	e2e_vhost_wrap disk-test "$art" "$vhost_ko"
	wrap=("${vhost_wrap[@]}")
	mode_args=(--mode nested)
	engine=,engine=vhost
fi

for tool in mkfs.ext4 e2fsck debugfs fio perl; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "disk-test: needs $tool (apt-get install e2fsprogs fio)" >&2
		exit 1
	}
done

work=$(mktemp -d "${TMPDIR:-/tmp}/disk-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fails=0
fail()
{
	echo "disk-test: FAIL: $*"
	fails=$((fails + 1))
}

pass()
{
	echo "disk-test: ok: $*"
}

# stats_verdict RC SUMMARY PASS-TEXT...: print an awk check's summary of
# the --stats lines, then pass with PASS-TEXT (RC 0) or fail with its
# FAIL lines.
stats_verdict()
{
	local rc=$1 summary=$2

	shift 2
	echo "$summary" | sed 's/^/disk-test: stats: /'
	[ "$rc" -eq 0 ] && pass "$@" ||
		fail "stats: $(echo "$summary" | grep '^FAIL' | tr '\n' ';')"
}

token=e2e-token-$$-$RANDOM
head -c $PAT_A_LEN /dev/urandom >pattern-a
head -c $PAT_B_LEN /dev/urandom >pattern-b
head -c $RO_SIZE /dev/urandom >ro.orig
head -c $DATA_SIZE /dev/urandom >data.orig
e2e_disk_root "$art" "$token" ro.orig $ROOT_SIZE root.raw ||
	{ echo "disk-test: building root.raw failed"; exit 1; }
mv root.raw root.orig

bus=
[ "$transport" = mmio ] && bus=,transport=mmio
data_q=
[ -n "$queues_arg" ] && data_q=,queues=$queues_arg
root_q=$cpus
[ "$transport" = mmio ] && root_q=1
ro_q=$root_q
disks="vda:$((ROOT_SIZE / 512)):rw:$SERIAL:$root_q"
disks+=",vdb:$((DATA_SIZE / 512)):rw:-:$queues"
disks+=",vdc:$((RO_SIZE / 512)):ro:-:$ro_q"
marker=e2e-marker-$$-$RANDOM
cmdline="console=ttyS0 quiet panic=-1 root=/dev/vda microvm.test=disk"
cmdline+=" microvm.cpus=$cpus microvm.token=$token microvm.transport=$transport"
cmdline+=" microvm.disks=$disks microvm.pattern=vdb:$PAT_A_OFF:$PAT_B_OFF"
[ "$jobs" -gt 0 ] && cmdline+=" microvm.fio=vdb:$jobs:$FIO_OFF:$FIO_SIZE"
[ "$transport" = pci ] && [ "$jobs" -gt 0 ] && cmdline+=" microvm.irq=vdb"
cmdline+=" microvm.end=$end microvm.marker=$marker"
vm_args=(--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus "$cpus" --memory "${mib}M" --stats
	 --timeout "$vm_timeout" --verbose
	 --disk "$work/root.raw,serial=$SERIAL$bus$engine"
	 --disk "$work/data.raw$bus$data_q$engine"
	 --disk "$work/ro.raw,readonly=on$bus$engine" "${extra_args[@]}")

# run_guest: one boot on fresh copies of the images.
run_guest()
{
	cp root.orig root.raw
	cp data.orig data.raw
	cp ro.orig ro.raw
	echo "disk-test: $microvm ${vm_args[*]}"
	start=$SECONDS
	# ro.raw comes back from nested mode too, so the host sees any change.
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --disk-file "$work/ro.raw" -- \
		"${wrap[@]}" "${probe[@]}" "$microvm" "${vm_args[@]}" 2>stderr |
		tee console
	status=${PIPESTATUS[0]}
	echo "disk-test: exit status $status after $((SECONDS - start)) s; stderr:"
	cat stderr
}

e2e_boot disk-test stderr
[ "$status" -ne 77 ] || exit 77

# The guest's verdict.
tr -d '\r' <console >console.txt
[ "$status" -eq 0 ] || fail "exit status $status, expected 0 ($end)"
grep -q '^E2E-RESULT: PASS$' console.txt ||
	fail "the guest did not report E2E-RESULT: PASS"
grep -q '^E2E-RESULT: FAIL' console.txt &&
	fail "the guest reported:" \
		"$(grep '^E2E-RESULT: FAIL' console.txt | tr '\n' ';')"
grep -q "^E2E-CMDLINE: .*microvm.marker=$marker" console.txt ||
	fail "marker $marker not in the guest's /proc/cmdline"

# --stats: per-queue counters of the data disk (vdb).
check_stats()
{
	local summary
	summary=$(awk -v want="$queues" -v jobs="$jobs" '
	/^microvm: stats vdb queue [0-9]+:/ {
		q = $5; sub(/:/, "", q)
		for (i = 6; i < NF; i += 2)
			v[$i] = $(i + 1)
		n++; req += v["requests"]; sig += v["irq-signals"]
		err += v["errors"]; bat += v["batches"]
		if (v["requests"] > 0)
			busy++
		printf "vdb queue %s: requests %d irq-signals %d batches %d\n", \
			q, v["requests"], v["irq-signals"], v["batches"]
	}
	END {
		printf "vdb total: %d queues, %d busy, requests %d, " \
			"batches %d, irq-signals %d, errors %d\n", \
			n, busy, req, bat, sig, err
		bad = 0
		if (n != want) { print "FAIL " n " stats lines, expected " want; bad = 1 }
		if (req == 0) { print "FAIL no requests on vdb"; bad = 1 }
		if (err != 0) { print "FAIL " err " errors on vdb"; bad = 1 }
		if (jobs > 0 && !(sig < req)) {
			print "FAIL irq-signals " sig " not below requests " req \
				" (no deferred signalling)"
			bad = 1
		}
		if (jobs > 0 && busy < (jobs < want ? jobs : want)) {
			print "FAIL requests on " busy " queues, expected every queue fio used"
			bad = 1
		}
		exit bad
	}' stderr)
	stats_verdict $? "$summary" "stats: $queues queue lines," \
		"signals < requests, every queue used"
}
# engine=vhost: the module's ring positions per queue of vdb (used idx:
# its completions modulo 2^16; avail idx at the last stop, where a reset
# came first), and no request through the I/O threads.
check_vhost_stats()
{
	local summary
	summary=$(awk -v want="$queues" -v jobs="$jobs" '
	/^microvm: stats vdb queue [0-9]+ vhost:/ {
		q = $5
		for (i = 7; i < NF; i += 2)
			v[$i] = $(i + 1)
		n++
		done = v["used-idx"] > v["avail-idx-at-stop"] ? \
		       v["used-idx"] : v["avail-idx-at-stop"]
		if (done > 0)
			busy++
		if (v["starts"] < 1)
			unstarted++
		printf "vdb queue %s (vhost): used-idx %d avail-idx-at-stop %d starts %d\n", \
			q, v["used-idx"], v["avail-idx-at-stop"], v["starts"]
	}
	/^microvm: stats vdb queue [0-9]+:/ {
		for (i = 6; i < NF; i += 2)
			w[$i] = $(i + 1)
		threads += w["requests"]
	}
	END {
		printf "vdb total (vhost): %d queues, %d busy, %d requests " \
			"through the I/O threads\n", n, busy, threads
		bad = 0
		if (n != want) { print "FAIL " n " vhost stats lines, expected " want; bad = 1 }
		if (unstarted) { print "FAIL the module never started on " unstarted " queue(s)"; bad = 1 }
		if (threads != 0) { print "FAIL " threads " requests through the I/O threads"; bad = 1 }
		if (busy < (jobs > 0 ? (jobs < want ? jobs : want) : 1)) {
			print "FAIL completions on " busy " queues, expected every queue fio used"
			bad = 1
		}
		exit bad
	}' stderr)
	stats_verdict $? "$summary" "stats: $queues vhost queue lines," \
		"every queue used, none through the I/O threads"
	grep -q '^vhost-l1: rmmod vhost_blk ok' stderr &&
		pass "vhost_blk unloaded after the VM exited" ||
		fail "vhost_blk was not unloaded cleanly after the VM"
}
if [ -n "$engine" ]; then
	check_vhost_stats
else
	check_stats
fi

# seccomp-probe.sh's view: every thread confined, each class present.
check_seccomp()
{
	local threads bad io
	threads=$(sed -n 's/^seccomp-probe: thread //p' stderr)
	echo "$threads" | sed 's/^/disk-test: seccomp: /'
	bad=$(echo "$threads" | awk '$3 != "seccomp" || $4 != 2' | tr '\n' ';')
	[ -z "$bad" ] && [ -n "$threads" ] &&
		pass "seccomp: every thread sampled shows Seccomp: 2" ||
		fail "seccomp: threads not in mode 2: ${bad:-no thread sampled}"
	local want name filters i=0
	want="microvm:1 stats:1"
	while [ $i -lt "$cpus" ]; do
		want+=" vcpu$i:1"
		i=$((i + 1))
	done
	for w in $want; do
		name=${w%:*} filters=${w#*:}
		echo "$threads" | awk -v n="$name" -v f="$filters" \
			'$2 == n && $6 == f { ok = 1 } END { exit !ok }' &&
			continue
		fail "seccomp: no thread $name with $filters filter(s) seen"
	done
	io=$(echo "$threads" | awk '$2 ~ /-q[0-9]+$/ && $6 == 2' | wc -l)
	[ "$io" -gt 0 ] &&
		pass "seccomp: $io I/O thread(s) seen, each under 2 filters" ||
		fail "seccomp: no I/O thread under 2 filters (vCPU's and its own) seen"
}
[ ${#probe[@]} -eq 0 ] || check_seccomp

# same FILE1 OFF1 FILE2 OFF2 LEN: the byte ranges are equal.
same()
{
	cmp -s -n "$5" -i "$2:$4" "$1" "$3"
}

# The data disk: patterns where the guest put them, nothing else changed
# outside fio's region, fio's blocks carrying their own offsets.
check_data()
{
	local fio_end=$((FIO_OFF + jobs * FIO_SIZE))
	[ "$(stat -c %s data.raw)" -eq $DATA_SIZE ] ||
		fail "data.raw changed size to $(stat -c %s data.raw)"
	same data.raw $PAT_A_OFF pattern-a 0 $PAT_A_LEN &&
		pass "data.raw holds pattern-a (O_DIRECT) at $PAT_A_OFF" ||
		fail "data.raw: pattern-a not at $PAT_A_OFF"
	same data.raw $PAT_B_OFF pattern-b 0 $PAT_B_LEN &&
		pass "data.raw holds pattern-b (page cache + fsync) at $PAT_B_OFF" ||
		fail "data.raw: pattern-b not at $PAT_B_OFF"
	local ranges="0:$PAT_A_OFF $((PAT_A_OFF + PAT_A_LEN)):$PAT_B_OFF"
	ranges+=" $((PAT_B_OFF + PAT_B_LEN)):$FIO_OFF $fio_end:$DATA_SIZE"
	local r from to changed=0
	for r in $ranges; do
		from=${r%:*} to=${r#*:}
		same data.raw "$from" data.orig "$from" $((to - from)) && continue
		fail "data.raw: bytes [$from, $to) changed"
		changed=1
	done
	[ $changed -eq 1 ] ||
		pass "data.raw: bytes outside the written ranges unchanged"
	[ "$jobs" -gt 0 ] || return 0
	# fio's verify header: u16 magic 0xacca, u16 type, u32 len,
	# u64 seed, u64 offset of the block.
	if perl -e '
		my ($f, $from, $to) = @ARGV; my ($b, $bad, $n) = ("", 0, 0);
		open(my $h, "<:raw", $f) or die "$f: $!";
		seek($h, $from, 0) or die;
		for (my $o = $from; $o < $to; $o += 4096) {
			read($h, $b, 4096) == 4096 or die "short read";
			my ($magic, $type, $len, $seed, $off) =
				unpack("v v V Q< Q<", $b);
			if ($magic != 0xacca || $len != 4096 || $off != $o) {
				printf "block at %d: magic %#x len %d offset %d\n",
					$o, $magic, $len, $off if $bad++ < 5;
			}
			$n++;
		}
		print "$n blocks, $bad bad\n";
		exit($bad ? 1 : 0);' data.raw $FIO_OFF $fio_end >fio-blocks.txt; then
		pass "data.raw: every 4 KiB block of fio's region carries its" \
			"verify header and own offset ($(tail -n 1 fio-blocks.txt))"
	else
		fail "data.raw: fio's blocks: $(tr '\n' ';' <fio-blocks.txt)"
	fi
}
check_data

cmp -s ro.raw ro.orig && pass "ro.raw unchanged" ||
	fail "ro.raw (readonly=on) changed"

# The root file system after the guest's writes and power-off.
check_root()
{
	local out
	if out=$(e2fsck -fn root.raw 2>&1); then
		pass "e2fsck -fn root.raw: clean"
	else
		fail "e2fsck -fn root.raw: $(echo "$out" | tr '\n' ';')"
	fi
	debugfs -R "dump /e2e/written written" root.raw 2>/dev/null
	cmp -s written ro.orig &&
		pass "root.raw: /e2e/written as the guest wrote it" ||
		fail "root.raw: /e2e/written differs from what the guest wrote"
	out=$(debugfs -R "cat /e2e/written.d/f57" root.raw 2>/dev/null)
	[ "$out" = "file 57" ] &&
		pass "root.raw: /e2e/written.d/f57 reads 'file 57'" ||
		fail "root.raw: /e2e/written.d/f57 reads '$out'"
	out=$(debugfs -R "ls /e2e/written.d" root.raw 2>/dev/null |
	      tr -s ' ' '\n' | grep -c '^f[0-9]*$')
	[ "$out" -eq 100 ] && pass "root.raw: 100 files in /e2e/written.d" ||
		fail "root.raw: $out files in /e2e/written.d, expected 100"
}
check_root

grep '^E2E-IRQ: ' console.txt | sed 's/^/disk-test: /'
if [ $fails -ne 0 ]; then
	echo "disk-test: $fails check(s) failed"
	exit 1
fi
echo "disk-test: PASS ($((SECONDS - start)) s)"
