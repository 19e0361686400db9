#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Prepares the arm64 L1 machine into OUTDIR (idempotent: a rerun downloads
# nothing and rebuilds only what changed):
#   OUTDIR/vmlinuz         Debian's linux-image-cloud-arm64 kernel (a gzip'ed
#                          arm64 Image; KVM is built in)
#   OUTDIR/modules/*.ko    the kernel's virtio modules (the cloud kernel
#                          has virtio-mmio, virtio-pci and virtio-blk as
#                          modules), for the L2 guest of boot-test.sh
#   OUTDIR/l1.cpio.gz      busybox-static:arm64, guest/l1-init.sh as /init,
#                          /bin/kvm-probe (guest/kvm-probe.c, static arm64)
#   OUTDIR/l2-new/vmlinuz  a newer cloud arm64 kernel for L2 (Debian's
#   OUTDIR/l2-new/modules  bookworm-backports, 6.12: the first with the
#                          device tree's VM generation ID), and its virtio
#                          modules (decompressed); those built in it are
#                          in its modules.builtin instead. apt fetches it
#                          through a sources list of its own in OUTDIR
#                          (bookworm-backports is not in the host's),
#                          checked against the host's Debian keyring
# Installs nothing: both packages are fetched for arm64 with
# `apt-get download` (dpkg --add-architecture arm64 and apt-get update
# first: tests/install-deps.sh) and unpacked with `dpkg -x`.
# MICROVM_E2E_ARM64_KERNEL_DEB=FILE, MICROVM_E2E_ARM64_L2_NEW_DEB=FILE and
# MICROVM_E2E_ARM64_BUSYBOX_DEB=FILE use local .debs instead (offline).
# Exit status: 0 ready, 77 when a tool or a package cannot be had (the
# caller skips), 1 on any other failure.
#
# Usage: prepare.sh OUTDIR
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST_DIR=$DIR/guest
CC=${MICROVM_E2E_ARM64_CC:-aarch64-linux-gnu-gcc}
# What the L2 guest loads for its disks and its keyboard (virtio_input:
# SendCtrlAltDel), dependencies first.
L2_MODULES="virtio_ring virtio virtio_mmio virtio_pci_modern_dev
	virtio_pci_legacy_dev virtio_pci virtio_blk virtio_input"

die()
{
	echo "e2e-arm64/prepare.sh: $*" >&2
	exit 1
}

skip()
{
	echo "e2e-arm64/prepare.sh: SKIP: $*" >&2
	exit 77
}

log()
{
	echo "e2e-arm64/prepare.sh: $*"
}

[ $# -eq 1 ] || die "usage: prepare.sh OUTDIR"
mkdir -p "$1"
OUT=$(cd "$1" && pwd -P)

check_host()
{
	local cmd
	for cmd in cpio gzip xz dpkg apt-get apt-cache "$CC"; do
		command -v "$cmd" >/dev/null 2>&1 ||
			skip "no $cmd (tests/install-deps.sh installs it)"
	done
}

hash_of()
{
	{ echo "$OUT"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

up_to_date()
{
	[ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# download PKG: PKG's .deb (for arm64) into OUT/debs; prints its path.
download()
{
	local sandbox=()
	[ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
	mkdir -p "$OUT/debs"
	(cd "$OUT/debs" && apt-get download -q "${sandbox[@]}" "$1:arm64" \
		>&2) || skip "apt-get download $1:arm64 failed (dpkg" \
		"--add-architecture arm64 && apt-get update?)"
	ls "$OUT/debs/${1}_"*_arm64.deb | head -n 1
}

# unpack_kernel DEB DIR WHICH: the kernel image of package DEB as
# DIR/vmlinuz and the virtio modules L2 loads (guest/l2-init.sh, in
# dependency order; .ko.xz decompressed) in DIR/modules; prints the
# kernel's version. KVM and the rest of the virt machine's drivers are
# built into the cloud kernels. WHICH: all-modules (each must be a
# module) or builtin-ok (one the kernel has built in, per its
# modules.builtin, is not needed as a file).
unpack_kernel()
{
	local deb=$1 dir=$2 which=$3 tmp=$OUT/unpack kver m f
	rm -rf "$tmp" "$dir/modules"
	dpkg -x "$deb" "$tmp" || die "dpkg -x $deb failed"
	kver=$(ls "$tmp/lib/modules" | head -n 1)
	[ -n "$kver" ] && [ -f "$tmp/boot/vmlinuz-$kver" ] ||
		die "$deb holds no kernel image"
	mkdir -p "$dir/modules"
	cp "$tmp/boot/vmlinuz-$kver" "$dir/vmlinuz"
	for m in $L2_MODULES; do
		f=$(find "$tmp/lib/modules/$kver" -name "$m.ko" -o \
			-name "$m.ko.xz" | head -n 1)
		case "$f" in
		*.xz) xz -dc "$f" >"$dir/modules/$m.ko" ||
			die "xz -d $f failed" ;;
		?*) cp "$f" "$dir/modules/" ;;
		*) [ "$which" = builtin-ok ] ||
			die "$deb has no $m.ko"
		   grep -q "/$m\.ko\$" \
			"$tmp/lib/modules/$kver/modules.builtin" ||
			die "$deb has no $m.ko, nor is it built in" ;;
		esac
	done
	rm -rf "$tmp"
	echo "$kver"
}

fetch_kernel()
{
	local pkg deb kver start
	[ -f "$OUT/kernel.stamp" ] && [ -f "$OUT/vmlinuz" ] &&
		[ -f "$OUT/modules/virtio_input.ko" ] && return
	if [ -n "${MICROVM_E2E_ARM64_KERNEL_DEB:-}" ]; then
		deb=$MICROVM_E2E_ARM64_KERNEL_DEB
		[ -f "$deb" ] || die "MICROVM_E2E_ARM64_KERNEL_DEB: no file '$deb'"
	else
		pkg=$(apt-cache depends linux-image-cloud-arm64:arm64 2>/dev/null |
		      sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*$/\1/p' |
		      head -n 1)
		[ -n "$pkg" ] || skip "apt-cache knows no linux-image-cloud-arm64:arm64" \
			"(dpkg --add-architecture arm64 && apt-get update)"
		log "downloading $pkg:arm64"
		start=$(date +%s.%N)
		deb=$(download "$pkg")
		log "downloaded $(du -k "$deb" | cut -f1) KiB in" \
			"$(awk -v a="$start" -v b="$(date +%s.%N)" \
			'BEGIN { printf "%.1f", b - a }') s"
	fi
	kver=$(unpack_kernel "$deb" "$OUT" all-modules)
	rm -rf "$OUT/debs"
	echo "$kver" >"$OUT/kernel.stamp"
}

# The suite the newer L2 kernel comes from.
NEW_SUITE="http://deb.debian.org/debian bookworm-backports main"

# apt_new ARGS...: apt-get or apt-cache (first ARG) on NEW_SUITE only,
# with its lists and caches in OUTDIR/apt-new (the host's stay as they
# are).
apt_new()
{
	local tool=$1 dir=$OUT/apt-new
	shift
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [arch=arm64] $NEW_SUITE" >"$dir/sources.list"
	"$tool" -q -o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
		-o Debug::NoLocking=1 \
		-o APT::Sandbox::User="$(id -un)" "$@"
}

fetch_new_kernel()
{
	local pkg deb kver
	[ -f "$OUT/l2-new.stamp" ] && [ -f "$OUT/l2-new/vmlinuz" ] && return
	deb=${MICROVM_E2E_ARM64_L2_NEW_DEB:-}
	if [ -n "$deb" ]; then
		[ -f "$deb" ] || die "MICROVM_E2E_ARM64_L2_NEW_DEB: no file '$deb'"
	else
		apt_new apt-get update >&2 ||
			skip "apt-get update of $NEW_SUITE failed"
		pkg=$(apt_new apt-cache depends linux-image-cloud-arm64:arm64 |
		      sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*$/\1/p' |
		      head -n 1)
		[ -n "$pkg" ] || skip "$NEW_SUITE has no linux-image-cloud-arm64"
		log "downloading $pkg:arm64 ($NEW_SUITE)"
		mkdir -p "$OUT/debs"
		(cd "$OUT/debs" && apt_new apt-get download "$pkg:arm64" >&2) ||
			skip "apt-get download $pkg:arm64 failed"
		deb=$(ls "$OUT/debs/${pkg}_"*_arm64.deb | head -n 1)
	fi
	kver=$(unpack_kernel "$deb" "$OUT/l2-new" builtin-ok)
	rm -rf "$OUT/debs" "$OUT/apt-new"
	echo "$kver" >"$OUT/l2-new.stamp"
}

fetch_busybox()
{
	local deb
	[ -f "$OUT/busybox" ] && return
	deb=${MICROVM_E2E_ARM64_BUSYBOX_DEB:-}
	if [ -n "$deb" ]; then
		[ -f "$deb" ] || die "MICROVM_E2E_ARM64_BUSYBOX_DEB: no file '$deb'"
	else
		log "downloading busybox-static:arm64"
		deb=$(download busybox-static)
	fi
	rm -rf "$OUT/bb"
	dpkg -x "$deb" "$OUT/bb" || die "dpkg -x $deb failed"
	[ -f "$OUT/bb/bin/busybox" ] || die "$deb holds no bin/busybox"
	cp "$OUT/bb/bin/busybox" "$OUT/busybox.tmp"
	mv "$OUT/busybox.tmp" "$OUT/busybox"
	rm -rf "$OUT/bb" "$OUT/debs"
}

build_l1()
{
	local stamp root=$OUT/l1root
	stamp=$(hash_of "$0" "$GUEST_DIR/l1-init.sh" "$GUEST_DIR/kvm-probe.c" \
		"$OUT/kernel.stamp" "$OUT/busybox")
	up_to_date "$OUT/l1.stamp" "$stamp" && return
	log "building the arm64 L1 initramfs"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp}
	install -m 755 "$OUT/busybox" "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	install -m 755 "$GUEST_DIR/l1-init.sh" "$root/init"
	"$CC" -static -O2 -Wall -Wextra -Werror -o "$root/bin/kvm-probe" \
		"$GUEST_DIR/kvm-probe.c" || die "building kvm-probe failed"
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip -6 >"$OUT/l1.cpio.gz.tmp"
	mv "$OUT/l1.cpio.gz.tmp" "$OUT/l1.cpio.gz"
	rm -rf "$root"
	echo "$stamp" >"$OUT/l1.stamp"
}

check_host
fetch_kernel
fetch_new_kernel
fetch_busybox
build_l1
log "ready in $OUT (kernel $(cat "$OUT/kernel.stamp"), L2's newer" \
	"$(cat "$OUT/l2-new.stamp"))"
