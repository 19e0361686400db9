#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The vhost-blk module's stop-path stress (README.md here): builds
# vhost_blk.ko from the tree's source or a git revision's, optionally with
# the race widened (widen.sh), boots an L1 with two CPUs under QEMU TCG
# (run-guest.sh) and runs stress-l1.sh there. The L1 kernel is the KASAN
# one build-kernel.sh made (--kernel-dir; the vhost core built in), or
# else the nested harness's own (the vhost core's modules from the
# artifacts, the module built by kernel/vhost-blk/build.sh).
#
# Usage: run.sh [--kernel-dir KDIR] --artifacts ART --microvm BIN
#               --stress BIN [--rev REV] [--widen USEC] [--rounds N]
#               [--guest-rounds G] [--seed S] [--expect pass|report]
#   --kernel-dir KDIR  build-kernel.sh's OUTDIR (bzImage, cache/); without
#                      it, the harness's kernel
#   --artifacts ART    prepare.sh's nested artifacts (busybox L1 base,
#                      the guest's kernel and initramfs, blkcrash)
#   --rev REV          build the module from REV's vhost_blk.c (git),
#                      not the work tree's
#   --widen USEC       test build: udelay(USEC) inside the completion's
#                      window (widen.sh); default 0 (none)
#   --l1-cpus N        L1's CPUs (default 4: with 2, the KASAN kernel's
#                      completions seldom land beside a running worker)
#   --expect pass      (default) every round passes, the log stays clean
#   --expect report    the kernel must report the bug (KASAN, BUG, Oops or
#                      a panic): the stress catches the code at REV
# Exit status: 0 the result was as expected; 1 it was not; 77 no KASAN
# kernel built (--kernel-dir), no artifacts, no module build for the
# harness's kernel (headers), no git for --rev, or no nested harness.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
kdir= art= microvm= stress= rev= widen=0 rounds=200 grounds=6 seed=1
expect=pass l1_cpus=4

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel-dir) kdir=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--microvm) microvm=$2; shift 2 ;;
	--stress) stress=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--widen) widen=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--guest-rounds) grounds=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--expect) expect=$2; shift 2 ;;
	--l1-cpus) l1_cpus=$2; shift 2 ;;
	*) echo "kasan/run.sh: unknown option '$1'" >&2; exit 1 ;;
	esac
done
case "$expect" in
pass | report) ;;
*) echo "kasan/run.sh: --expect is pass or report, not '$expect'" >&2; exit 1 ;;
esac
# build_kasan_module: vhost_blk.ko in $mod for the KASAN kernel's tree.
build_kasan_module()
{
	local src obj=$kdir/cache/build
	src=$(ls -d "$kdir"/cache/linux-source-* 2>/dev/null | head -n 1)
	[ -d "$src" ] && [ -f "$obj/.config" ] ||
		{ echo "kasan/run.sh: no source or object tree under $kdir/cache" >&2; return 1; }
	mkdir -p "$mod/vhost-core"
	cp "$src/drivers/vhost/vhost.h" "$mod/vhost-core/"
	# The exported symbols of the built-in vhost core, once.
	(
		flock 9
		[ -f "$obj/Module.symvers" ] ||
			nice -n 5 make -C "$src" O="$obj" ARCH=x86_64 -j2 modules \
				>"$work/symvers.log" 2>&1 ||
			{ tail -n 20 "$work/symvers.log" >&2; exit 1; }
	) 9>"$kdir/cache/lock.modules" || return 1
	nice -n 5 make -C "$src" O="$obj" ARCH=x86_64 M="$mod" modules \
		>"$work/mod.log" 2>&1 ||
		{ cat "$work/mod.log" >&2; echo "kasan/run.sh: module build failed" >&2; return 1; }
}

skip()
{
	echo "kasan/run.sh: SKIP: $*"
	exit 77
}
[ -z "$kdir" ] || [ -f "$kdir/bzImage" ] ||
	skip "no KASAN kernel in '$kdir' (tests/vhost/kasan/build-kernel.sh)"
[ -f "$art/l1-base.cpio.gz" ] && [ -x "$art/bin/blkcrash" ] ||
	skip "no nested artifacts in '$art' (tests/e2e/prepare.sh)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
[ -x "$microvm" ] && [ -x "$stress" ] ||
	{ echo "kasan/run.sh: no microvm '$microvm' or stress '$stress'" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kasan-run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mod=$work/mod
mkdir -p "$mod"
cp -r "$root/kernel/vhost-blk/." "$mod/"
rm -rf "$mod/out"
if [ -n "$rev" ]; then
	git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null ||
		skip "no git revision '$rev' here (a clone with history is needed)"
	git -C "$root" show "$rev:kernel/vhost-blk/vhost_blk.c" >"$work/vhost_blk.c" ||
		exit 1
else
	cp "$root/kernel/vhost-blk/vhost_blk.c" "$work/vhost_blk.c"
fi
if [ "$widen" -gt 0 ]; then
	"$here/widen.sh" "$work/vhost_blk.c" "$mod/vhost_blk.c" "$widen" || exit 1
else
	cp "$work/vhost_blk.c" "$mod/vhost_blk.c"
fi
l1_env=(MICROVM_E2E_L1_CPUS="$l1_cpus" MICROVM_E2E_L1_MEMORY=3072)
core_args=()
if [ -n "$kdir" ]; then
	build_kasan_module || exit 1
	l1_env+=(MICROVM_E2E_L1_KERNEL="$kdir/bzImage")
	ko=$mod/vhost_blk.ko
else
	kver=$(head -n 1 "$art/kernel.stamp")
	"$mod/build.sh" "$kver" "$mod/out" >"$work/mod.log" 2>&1
	st=$?
	[ $st -ne 77 ] || skip "$(tail -n 1 "$work/mod.log")"
	[ $st -eq 0 ] || { cat "$work/mod.log" >&2; exit 1; }
	ko=$mod/out/vhost_blk.ko
	cdir=$art/kernel/lib/modules/$kver/kernel/drivers/vhost
	core_args=(--core "$cdir/vhost_iotlb.ko" --core "$cdir/vhost.ko")
fi
echo "kasan/run.sh: vhost_blk.ko from ${rev:-the work tree}${rev:+ ($(git -C "$root" rev-parse --short "$rev"))}," \
	"widen ${widen} us, for $(modinfo -F vermagic "$ko" | cut -d' ' -f1)"

# The guest of the real-guest rounds: crash-init.sh's writer (blkcrash).
mkdir -p "$work/extra/bin"
install -m 755 "$root/tests/e2e/guest/crash-init.sh" "$work/extra/init"
install -m 755 "$art/bin/blkcrash" "$work/extra/bin/blkcrash"
cp "$art/l2-initrd.cpio.gz" "$work/initrd.cpio.gz"
(cd "$work/extra" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip >>"$work/initrd.cpio.gz"

start=$SECONDS
run_guest()
{
	env "${l1_env[@]}" MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_LOG="$work/l1.log" \
		"$root/tests/e2e/run-guest.sh" --mode nested --artifacts "$art" \
		--timeout $((600 + 4 * rounds + 120 * grounds)) -- \
		"$here/stress-l1.sh" "${core_args[@]}" --module "$ko" --stress "$stress" \
		--rounds "$rounds" --seed "$seed" --guest-rounds "$grounds" \
		--ctl "$root/tests/e2e/blk-ctl.sh" -- \
		"$microvm" --kernel "$art/vmlinuz" --initrd "$work/initrd.cpio.gz" \
		--cmdline "console=ttyS0 quiet panic=-1 microvm.test=crash microvm.seed=$seed microvm.count=100000" \
		--cpus 1 --memory 256M --timeout 300 \
		--disk "@DISK@,cache=none,engine=vhost" >"$work/out" 2>"$work/err"
	status=$?
}
# Expecting a pass, a run the emulator failed (tests/e2e/lib.sh's rule,
# counted) boots again; expecting a report, never: a second run would
# overwrite the first one's evidence.
if [ "$expect" = pass ]; then
	# shellcheck source=../../e2e/lib.sh
	. "$root/tests/e2e/lib.sh"
	e2e_boot kasan/run.sh "$work/err"
else
	run_guest
fi
cat "$work/out"
sed 's/^/kasan\/run.sh: stderr: /' "$work/err"
echo "kasan/run.sh: nested run took $((SECONDS - start)) s (status $status)"
[ $status -ne 77 ] || skip "the nested harness cannot run here"
touch "$work/l1.log"
reports=$(cat "$work/out" "$work/err" "$work/l1.log" |
	grep -aE 'BUG:|Oops|general protection|WARNING:|Kernel panic|KASAN:' | sort -u | head -n 8)
case $expect in
pass)
	if [ $status -eq 0 ] && grep -q '^KASAN-STRESS: PASS' "$work/out" &&
	   [ -z "$reports" ]; then
		echo "kasan/run.sh: PASS: $(sed -n 's/^KASAN-STRESS: PASS //p' "$work/out")"
		exit 0
	fi
	echo "kasan/run.sh: FAIL (status $status)${reports:+; first reports:}"
	[ -z "$reports" ] || echo "$reports"
	exit 1 ;;
report)
	if [ -n "$reports" ]; then
		echo "kasan/run.sh: PASS: the kernel reported the bug of ${rev:-the work tree}:"
		echo "$reports"
		echo "kasan/run.sh: L1's log from the first report on:"
		grep -aE -m 1 -A 40 'BUG:|general protection|KASAN:' "$work/l1.log"
		exit 0
	fi
	echo "kasan/run.sh: FAIL: no kernel report (status $status): the stress did not catch ${rev:-the work tree}"
	exit 1 ;;
esac
