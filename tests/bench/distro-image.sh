#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the distribution guest of distro-boot.sh, cached in OUT (default
# build/distro): Debian 12 minbase from Debian's registry (debootstrap)
# with systemd-sysv, udev, Debian's cloud kernel and its initramfs
# (initramfs-tools, MODULES=most), and microvm-bench.service (distro/),
# which reports the boot once multi-user is reached and powers off, and
# a modprobe.d file that keeps KVM's modules out of the guest.
#   OUT/root.raw   ext4, 1 GiB sparse, label "root"; booted with
#                  root=/dev/vda ro (the fstab is Debian's unconfigured
#                  one, so the root stays read-only and every boot sees
#                  the same disk; the journal lives in /run)
#   OUT/vmlinuz, OUT/initrd.img   the image's kernel and initramfs
# The debootstrap tree (OUT/tree, ~410 MB, about 1.5 min) is made once and
# kept while this script's DEBOOTSTRAP line is unchanged; the image is
# remade when distro/ changes. Needs root, debootstrap and mke2fs -d
# (e2fsprogs): exit 77 without them.
#
# Usage: distro-image.sh [OUT]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$HERE/../../build/distro}
SUITE=bookworm
MIRROR=${MICROVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=systemd-sysv,udev,linux-image-cloud-amd64,initramfs-tools
DEBOOTSTRAP="debootstrap --variant=minbase --include=$PACKAGES $SUITE"

die() { echo "distro-image: $*" >&2; exit 1; }
skip() { echo "distro-image: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, file ownership in the image)"
command -v debootstrap >/dev/null || skip "needs debootstrap (apt-get install debootstrap)"
command -v mkfs.ext4 >/dev/null || skip "needs mkfs.ext4 (apt-get install e2fsprogs)"
mkdir -p "$out"
out=$(cd "$out" && pwd -P)

tree_stamp=$DEBOOTSTRAP
if [ "$(cat "$out/tree.stamp" 2>/dev/null)" != "$tree_stamp" ] ||
   [ ! -x "$out/tree/sbin/init" ]; then
	rm -rf "$out/tree" "$out/tree.stamp"
	echo "distro-image: $DEBOOTSTRAP (about 1.5 min)" >&2
	# shellcheck disable=SC2086
	$DEBOOTSTRAP "$out/tree.tmp" "$MIRROR" >"$out/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$out/debootstrap.log" >&2; die "debootstrap failed (log: $out/debootstrap.log)"; }
	mv "$out/tree.tmp" "$out/tree"
	echo "$tree_stamp" >"$out/tree.stamp"
fi

image_stamp=$(cat "$out/tree.stamp" "$0" "$HERE"/distro/* | sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/image.stamp" 2>/dev/null)" = "$image_stamp" ] &&
   [ -f "$out/root.raw" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ]; then
	exit 0
fi
rm -f "$out/image.stamp"
t=$out/tree
install -m 0755 "$HERE/distro/bench-report.sh" "$t/usr/local/sbin/microvm-bench-report"
install -m 0644 "$HERE/distro/microvm-bench.service" "$t/etc/systemd/system/microvm-bench.service"
install -m 0644 "$HERE/distro/microvm-bench-modprobe.conf" "$t/etc/modprobe.d/microvm-bench.conf"
mkdir -p "$t/etc/systemd/system/multi-user.target.wants"
ln -sfn /etc/systemd/system/microvm-bench.service \
	"$t/etc/systemd/system/multi-user.target.wants/microvm-bench.service"
echo distro-bench >"$t/etc/hostname"
# A fixed machine ID: no boot is a "first boot".
[ -s "$t/etc/machine-id" ] || echo 0123456789abcdef0123456789abcdef >"$t/etc/machine-id"
kernel=$(ls "$t"/boot/vmlinuz-* | tail -n 1)
initrd=$t/boot/initrd.img-${kernel#"$t"/boot/vmlinuz-}
[ -f "$kernel" ] && [ -f "$initrd" ] || die "no kernel and initramfs in $t/boot"
cp "$kernel" "$out/vmlinuz"
cp "$initrd" "$out/initrd.img"
rm -f "$out/root.raw"
mkfs.ext4 -q -F -L root -d "$t" "$out/root.raw" 1G ||
	die "mkfs.ext4 -d $t failed"
echo "$image_stamp" >"$out/image.stamp"
echo "distro-image: $out/root.raw ($(du -h "$out/root.raw" | cut -f1) used), kernel ${kernel##*/}" >&2
