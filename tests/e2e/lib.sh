# SPDX-License-Identifier: Apache-2.0
# Shared by the real-guest test scripts (sourced, not run).

# e2e_emulator_failure STDERR STATUS: whether a nested run (run-guest.sh's
# stderr in file STDERR, its exit status STATUS) failed, on evidence, in
# the emulated machines themselves rather than in microvm. Prints the
# evidence. What counts (tests/e2e/README.md, "When the emulator, not
# microvm, fails"):
#   255  L1 died ("L1 ended without reporting a status"; in its log
#        "stack guard page was hit" or "corrupted stack end detected
#        inside scheduler"), ran past the harness limit, went silent
#        (L1's heartbeat silent for 120 s: "L1 stopped answering"), or
#        never reached its /init ("L1 never reached /init": L1's kernel
#        alone, before any program of ours ran);
#   123, 124  (an L2 triple fault, microvm's --timeout) only when L1's
#        own kernel reported a lockup or stall during the run
#        (run-guest.sh's "run-guest: L1 kernel:" lines: an L1 CPU starved
#        for seconds, which no process of L1 can cause), or, for 124,
#        when microvm's vCPU dump shows a wakeup KVM lost (lost-wakeup.awk).
# Nothing else: not the kind of test (a disk test's triple fault is a
# failure like any other), not a program that hangs inside a live L1 (L1's
# watchdog reports it with its threads' kernel stacks), never direct mode.
# The evidence lines are run-guest.sh's nested mode's own ("run-guest:
# nested: ...", "run-guest: L1 kernel: ..."), so a run without its
# "run-guest: mode" line (MICROVM_E2E_VERBOSE unset: e2e.disk.ratelimit_*
# went without its retry so) is judged by them; "mode direct" never.
e2e_emulator_failure()
{
	local stderr=$1 status=$2
	grep -q '^run-guest: mode direct$' "$stderr" && return 1
	case "$status" in
	123) e2e_l1_distress "$stderr" ;;
	124) e2e_l1_distress "$stderr" ||
		{ grep -q '^run-guest: mode nested$' "$stderr" &&
			e2e_lost_wakeup "$stderr"; } ;;
	255) grep -m 1 -E '^run-guest: nested: (L1 ended \(qemu status [0-9]*\) without reporting a status|L1 still ran after the harness limit|L1 stopped answering|L1 never reached /init)' \
		"$stderr" ;;
	*) return 1 ;;
	esac
}

# e2e_l1_distress STDERR: whether run-guest.sh reported L1's kernel
# locking up or stalling (soft or hard lockup, RCU stall) during the run.
# Prints the evidence.
e2e_l1_distress()
{
	grep -a -m 3 '^run-guest: L1 kernel: ' "$1"
}

# e2e_lost_wakeup STDERR: whether microvm's vCPU dump after --timeout (in
# file STDERR) shows a halted vCPU that KVM itself failed to wake
# (lost-wakeup.awk). Prints the evidence.
e2e_lost_wakeup()
{
	awk -f "$(dirname "${BASH_SOURCE[0]}")/lost-wakeup.awk" "$1"
}

# e2e_count_retry WHO WHY: a retry, announced on stdout ("WHO: RETRY:
# WHY") and appended, with the CTest test's name, to the file
# $MICROVM_RETRY_LOG (set for every test by tests/lanes.cmake) that
# tests/run-all.sh counts and prints in its summary.
e2e_count_retry()
{
	echo "$1: RETRY: $2"
	[ -z "${MICROVM_RETRY_LOG:-}" ] ||
		echo "${MICROVM_TEST_NAME:-$1}: $2" >>"$MICROVM_RETRY_LOG"
}

# How many times a nested run that failed on evidence against the
# emulator boots again by default. Two: a clean-clone CI run on 2026-12-06
# saw L1 fall silent in both boots of e2e.snapshot.restore (tests/e2e/
# README.md, "When the emulator, not microvm, fails").
E2E_RETRIES_DEFAULT=2

# e2e_boot WHO STDERR: calls the caller's run_guest, which leaves
# run-guest.sh's exit status in $status and its stderr in file STDERR,
# and calls it again while e2e_emulator_failure finds evidence against
# the emulator, at most $MICROVM_E2E_RETRIES more times (default
# E2E_RETRIES_DEFAULT; 0 shows every failure as it is). Each retry is
# counted (e2e_count_retry).
e2e_boot()
{
	local who=$1 stderr=$2 retries=${MICROVM_E2E_RETRIES:-$E2E_RETRIES_DEFAULT} why
	run_guest
	while [ "$retries" -gt 0 ] &&
	      why=$(e2e_emulator_failure "$stderr" "$status"); do
		e2e_count_retry "$who" "nested-mode emulator failure (status $status: $(echo "$why" | head -n 1)); booting again"
		retries=$((retries - 1))
		run_guest
	done
}

# e2e_static_busybox WHO: sets busybox to this host's busybox, which must
# be static (busybox-static) to run in a guest; exits 77 otherwise.
e2e_static_busybox()
{
	busybox=$(command -v busybox) ||
		{ echo "$1: SKIP: no busybox (package busybox-static)" >&2; exit 77; }
	case $(ldd "$busybox" 2>&1) in *'not a dynamic executable'*) ;; *) false ;; esac ||
		{ echo "$1: SKIP: $busybox is not static (busybox-static)" >&2; exit 77; }
}

# e2e_busybox_tree DIR: a guest root in DIR (bin, dev, proc, sys, mnt)
# with $busybox (e2e_static_busybox) and a link in bin for each applet,
# made here: a read-only disk root cannot take them at run time.
e2e_busybox_tree()
{
	local applet
	mkdir -p "$1"/{bin,dev,proc,sys,mnt} && cp "$busybox" "$1/bin/busybox" ||
		return 1
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$1/bin/$applet"
	done
}

# e2e_need_counts PROG NAME:VALUE...: exit 1, naming PROG and --NAME,
# unless every VALUE is a count >= 1 (the benchmarks' option checks).
e2e_need_counts()
{
	local prog=$1 v
	shift
	for v in "$@"; do
		case "${v#*:}" in
		'' | *[!0-9]* | 0)
			echo "$prog: --${v%%:*} ${v#*:}: need a count >= 1" >&2
			exit 1 ;;
		esac
	done
}

# e2e_qemu_files QEMU: sets the array qfiles to the files QEMU's microvm
# machine loads from its data directory (QEMU -L help's first line, else
# /usr/share/qemu), those that exist: the benchmarks name them to
# run-guest.sh so that it copies them into L1.
e2e_qemu_files()
{
	local share f

	share=$(realpath -q "$("$1" -L help 2>/dev/null | head -n 1)")
	[ -d "$share" ] || share=/usr/share/qemu
	qfiles=()
	for f in bios-microvm.bin qboot.rom linuxboot_dma.bin pvh.bin kvmvapic.bin; do
		[ -f "$share/$f" ] && qfiles+=("$share/$f")
	done
	return 0
}

# e2e_boottime_initrd ART OUT: the test initramfs ART/l2-initrd.cpio.gz
# with guest/boottime-init.sh as /init, in file OUT (the kernel unpacks
# concatenated archives; later files win).
e2e_boottime_initrd()
{
	local extra
	extra=$(mktemp -d "${TMPDIR:-/tmp}/boottime-initrd.XXXXXX") || return 1
	install -m 755 "$(dirname "${BASH_SOURCE[0]}")/guest/boottime-init.sh" \
		"$extra/init" &&
		cp "$1/l2-initrd.cpio.gz" "$2" &&
		(cd "$extra" && find . -mindepth 1 | LC_ALL=C sort |
			cpio -o -H newc -R 0:0 --quiet) | gzip >>"$2"
	local rc=$?
	rm -rf "$extra"
	return $rc
}

# e2e_stage PATH DIR: copy host file PATH to DIR at the same path.
e2e_stage()
{
	mkdir -p "$2$(dirname "$1")"
	cp -L "$1" "$2$1"
}

# e2e_disk_root ART TOKEN RO_CONTENT SIZE OUT: the disk guests' root file
# system (disk-test.sh, snapshot-test.sh), an ext4 image of SIZE bytes in
# file OUT: busybox, fio with every library ldd lists, ART's outb and netpeer, the initramfs's modules, the
# scenario scripts, guest/disk-init.sh as /sbin/init, and the data the
# guest compares against (TOKEN, ./pattern-a, ./pattern-b, and file
# RO_CONTENT as /e2e/ro-content). Staged in a temporary directory.
e2e_disk_root()
{
	local art=$1 token=$2 ro=$3 size=$4 out=$5 guest dir applet lib rc
	guest=$(dirname "${BASH_SOURCE[0]}")/guest
	dir=$(mktemp -d "${TMPDIR:-/tmp}/e2e-root.XXXXXX") || return 1
	mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,e2e}
	install -m 755 "$guest/disk-init.sh" "$dir/sbin/init"
	cp /bin/busybox "$dir/bin/busybox"
	for applet in $(/bin/busybox --list-full); do
		[ -e "$dir/$applet" ] || ln -s /bin/busybox "$dir/$applet"
	done
	install -m 755 "$art/bin/outb" "$art/bin/netpeer" "$dir/bin/"
	# The initramfs's modules (virtio_net's for the MMDS reads).
	(cd "$dir" && gzip -dc "$art/l2-initrd.cpio.gz" |
		cpio -id --quiet 'lib/modules/*') || return 1
	e2e_stage "$(command -v fio)" "$dir"
	while read -r lib; do
		e2e_stage "$lib" "$dir"
	done < <(ldd "$(command -v fio)" |
		 sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
	install -m 644 "$guest/scenarios.sh" "$guest/scenarios-disk.sh" \
		"$dir/e2e/"
	echo "$token" >"$dir/e2e/token"
	cp pattern-a pattern-b "$dir/e2e/"
	cp "$ro" "$dir/e2e/ro-content"
	truncate -s "$size" "$out" &&
		mkfs.ext4 -q -F -L e2e-root -d "$dir" "$out"
	rc=$?
	rm -rf "$dir"
	return $rc
}

# e2e_api_setup WHO: the start the API tests share (api-test.sh,
# replay-test.sh), after their options set $microvm and $art: checks
# both are given and that curl, mkfs.ext4 and fio are here; makes $art
# and $microvm absolute paths; sets $curl; makes a work directory $work
# (removed at exit) the current one and builds in it root.raw, the API
# guest's 160 MiB root (e2e_disk_root). Exits 1 on bad usage or a
# missing tool, 77 without curl.
e2e_api_setup()
{
	local who=$1 tool mib=1048576
	[ -n "$microvm" ] && [ -n "$art" ] ||
		{ echo "$who: --microvm and --artifacts are required" >&2; exit 1; }
	curl=$(command -v curl) ||
		{ echo "$who: SKIP: no curl (apt-get install curl)"; exit 77; }
	for tool in mkfs.ext4 fio; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "$who: needs $tool (apt-get install e2fsprogs fio)" >&2
			exit 1
		}
	done
	art=$(cd "$art" && pwd -P) || exit 1
	microvm=$(realpath "$microvm") || exit 1
	work=$(mktemp -d "${TMPDIR:-/tmp}/$who.XXXXXX") || exit 1
	trap 'rm -rf "$work"' EXIT
	cd "$work" || exit 1
	head -c $mib /dev/urandom >pattern-a
	head -c $mib /dev/urandom >pattern-b
	head -c $mib /dev/urandom >ro-content
	e2e_disk_root "$art" "$who-token-$$" ro-content $((160 * mib)) \
		root.raw || { echo "$who: building root.raw failed"; exit 1; }
}

# e2e_vhost_wrap WHO ART KO: engine=vhost runs in L1 only (the module is
# never loaded into this host's kernel). Sets vhost_wrap, the vhost-l1.sh
# command that insmods L1's vhost core and KO before the program and
# rmmods KO after it; exits 77 (WHO: SKIP ...) without KO built for the
# L1 kernel of ART or without that kernel's vhost core in ART.
e2e_vhost_wrap()
{
	local who=$1 art=$2 ko=$3 kver have core m
	kver=$(head -n 1 "$art/kernel.stamp" 2>/dev/null)
	[ -n "$kver" ] || { echo "$who: SKIP: no $art/kernel.stamp"; exit 77; }
	[ -f "$ko" ] || {
		echo "$who: SKIP: no vhost_blk.ko ('$ko'): cmake --build" \
			"build --target vhost-blk-module with" \
			"linux-headers-$kver installed"
		exit 77
	}
	have=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	[ "$have" = "$kver" ] || {
		echo "$who: SKIP: $ko is built for '$have', L1 runs $kver"
		exit 77
	}
	core=$art/kernel/lib/modules/$kver/kernel/drivers/vhost
	for m in vhost_iotlb vhost; do
		[ -f "$core/$m.ko" ] || {
			echo "$who: SKIP: no $core/$m.ko in the artifacts"
			exit 77
		}
	done
	vhost_wrap=(/bin/sh "$(dirname "${BASH_SOURCE[0]}")/vhost-l1.sh"
		    --core "$core/vhost_iotlb.ko" --core "$core/vhost.ko"
		    --module "$(realpath "$ko")" --)
}
