#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A hostile driver in a real guest: boots the L2 guest with
# microvm.test=evil (no virtio driver loaded; guest/evilblk.c drives the
# disks through /dev/mem or the PCI sysfs resource files) with three disks
# on one transport: a data image, a read-only image, and null_blk (loaded
# where microvm runs, by evil-l1.sh) with cache=none for the aliased huge
# misaligned requests that O_DIRECT must bounce. Then checks: every
# EVIL-CASE line passed, the guest's verdict, microvm's exit status, the
# read-only image unchanged, no sanitizer report, and microvm's peak RSS
# (VmHWM, sampled where it runs) within guest RAM + --rss-margin MiB.
#
# Usage: evil-test.sh --microvm BIN|--asan BIN --artifacts DIR
#        [--transport pci|mmio] [--memory MIB] [--huge N] [--rss-margin MIB]
#        [--mode MODE] [--vhost KO]
#   --asan[=]BIN    BIN must be an ASan+UBSan build (skipped, 77, when BIN
#                   is empty or absent); any sanitizer report fails
#   --huge N        aliased ~250 MiB requests in flight at once (default
#                   4; 0: no null_blk disk and no RSS-heavy case)
#   --rss-margin M  VmHWM may exceed guest RAM by M MiB (default 96: the
#                   binary, its threads and rings; not checked when microvm
#                   is built with ASan, whose shadow and quarantine differ)
#   --vhost KO      every disk on engine=vhost, served by the module KO in
#                   L1 (nested only; vhost-l1.sh loads and unloads it);
#                   skipped (77) without KO built for the L1 kernel
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
DATA_SIZE=$((8 * MIB))
RO_SIZE=$MIB

microvm=
art=
transport=pci
mib=256
huge=4
margin=96
need_asan=0
mode_args=()
vhost_ko=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--asan) microvm=$2; need_asan=1; shift 2 ;;
	--asan=*) microvm=${1#--asan=}; need_asan=1; shift ;;
	--artifacts) art=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--memory) mib=$2; shift 2 ;;
	--huge) huge=$2; shift 2 ;;
	--rss-margin) margin=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	--vhost) vhost_ko=$2; shift 2 ;;
	*) echo "evil-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
if [ $need_asan -eq 1 ] && [ ! -x "$microvm" ]; then
	echo "evil-test: no ASan microvm ('$microvm'); configure with" \
		"-DMICROVM_E2E_ASAN_MICROVM=PATH/microvm; skipping" >&2
	exit 77
fi
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "evil-test: --microvm and --artifacts are required" >&2; exit 1; }
case "$transport" in
pci | mmio) ;;
*) echo "evil-test: --transport pci|mmio, not '$transport'" >&2; exit 1 ;;
esac
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
asan=0
case "$(ldd "$microvm" 2>/dev/null)" in
*libasan*) asan=1 ;;
esac
if [ $need_asan -eq 1 ] && [ $asan -eq 0 ]; then
	echo "evil-test: $microvm is not an ASan build" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/evil-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fails=0
fail()
{
	echo "evil-test: FAIL: $*"
	fails=$((fails + 1))
}

pass()
{
	echo "evil-test: ok: $*"
}

head -c $DATA_SIZE /dev/urandom >data.raw
head -c $RO_SIZE /dev/urandom >ro.orig
bus=,transport=$transport
wrap=()
if [ -n "$vhost_ko" ]; then
	e2e_vhost_wrap evil-test "$art" "$vhost_ko"
	wrap=("${vhost_wrap[@]}")
	mode_args=(--mode nested)
	bus+=,engine=vhost
fi
# Small queues where the cases want them (16), the default (256) where
# the huge requests need 252-entry indirect tables.
disks=(--disk "$work/data.raw$bus,queue-size=16"
       --disk "$work/ro.raw,readonly=on$bus,queue-size=16")
[ "$huge" -gt 0 ] && disks+=(--disk "@NULLB@,cache=none$bus")
cmdline="console=ttyS0 quiet panic=-1 hugepages=4 microvm.test=evil"
cmdline+=" microvm.huge=$huge microvm.end=poweroff"
vm_args=(--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus 1 --memory "${mib}M" --timeout 400
	 --verbose "${disks[@]}")
if [ $asan -eq 1 ]; then
	# Any report fails: its own exit status, and the grep below.
	export ASAN_OPTIONS=halt_on_error=1:exitcode=86:detect_leaks=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87
fi

run_guest()
{
	cp ro.orig ro.raw
	echo "evil-test: $microvm ${vm_args[*]}"
	start=$SECONDS
	# L1 holds guest RAM plus whatever microvm allocates for the huge
	# requests (before defect 1's fix: 250 MiB per request in flight).
	MICROVM_E2E_L1_MEMORY=${MICROVM_E2E_L1_MEMORY:-3072} \
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 600 --disk-file "$work/ro.raw" -- \
		"${wrap[@]}" "$E2E_DIR/evil-l1.sh" -- "$microvm" \
		"${vm_args[@]}" \
		2>stderr | tee console
	status=${PIPESTATUS[0]}
	wall=$((SECONDS - start))
	echo "evil-test: exit status $status after $wall s; stderr:"
	cat stderr
}

e2e_boot evil-test stderr
[ "$status" -ne 77 ] || exit 77
tr -d '\r' <console >console.txt

[ "$status" -eq 0 ] || fail "microvm exit status $status, expected 0"
npass=$(grep -c '^EVIL-CASE: PASS ' console.txt)
nfail=$(grep -c '^EVIL-CASE: FAIL ' console.txt)
grep '^EVIL-CASE: FAIL ' console.txt | sed 's/^/evil-test: FAIL: /'
[ "$nfail" -eq 0 ] || fails=$((fails + nfail))
# The data disk's cases (the table in evilblk_cases.c; its PCI-only rows
# end in "true },"), the read-only disk's one, null_blk's two.
want=$(grep -c '^	{ "' "$E2E_DIR/guest/evilblk_cases.c")
[ "$transport" = pci ] ||
	want=$((want - $(grep -c 'true },$' "$E2E_DIR/guest/evilblk_cases.c")))
want=$((want + 1))
[ "$huge" -gt 0 ] && want=$((want + 3))
[ $((npass + nfail)) -eq "$want" ] &&
	pass "$npass of $want cases passed on $transport" ||
	fail "$((npass + nfail)) verdict lines, expected $want (guest died?)"
grep -q '^EVIL-SUMMARY: ' console.txt ||
	fail "evilblk did not finish (no EVIL-SUMMARY line)"
grep -q '^E2E-RESULT: PASS$' console.txt ||
	fail "the guest did not report E2E-RESULT: PASS"

cmp -s ro.raw ro.orig && pass "ro.raw (readonly=on) unchanged" ||
	fail "ro.raw (readonly=on) changed"
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' stderr; then
	fail "sanitizer report: $(grep -m1 -E 'ERROR: |runtime error:' stderr)"
elif [ $asan -eq 1 ]; then
	pass "ASan+UBSan build: no report"
fi

hwm=$(sed -n 's/^EVIL-L1: VmHWM \([0-9]*\) kB$/\1/p' stderr | tail -n 1)
bound=$(((mib + margin) * 1024))
if [ -z "$hwm" ]; then
	fail "no VmHWM sample of microvm"
elif [ $asan -eq 1 ]; then
	echo "evil-test: VmHWM ${hwm} kB (ASan build: bound not applied)"
elif [ "$hwm" -le "$bound" ]; then
	pass "VmHWM ${hwm} kB <= ${bound} kB (guest RAM $mib MiB + $margin MiB)"
else
	fail "VmHWM ${hwm} kB > ${bound} kB (guest RAM $mib MiB + $margin MiB)"
fi

if [ $fails -ne 0 ]; then
	echo "evil-test: $fails check(s) failed ($wall s)"
	exit 1
fi
echo "evil-test: PASS ($wall s)"
