#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Prepares everything the real-guest tests boot, into OUTDIR (idempotent:
# a rerun downloads nothing and rebuilds only what changed):
#   OUTDIR/vmlinuz             Debian's cloud kernel (L1 and L2)
#   OUTDIR/vmlinux             the same kernel as an ELF (PVH boot tests)
#   OUTDIR/l2-initrd.cpio.gz   busybox + virtio and pvpanic modules + the
#                              test /init
#   OUTDIR/l1-base.cpio.gz     nested mode's L1: busybox, KVM modules, /init,
#                              and OUTDIR's files at their absolute paths
#   OUTDIR/bin/                static helpers (kvm-smoke, outb, ttydrain,
#                              evilblk, blkcrash, vsockpeer, netpeer)
# Installs nothing: the host packages come from .ci/run or the README; the
# kernel is fetched with `apt-get download` and unpacked with `dpkg -x`.
# MICROVM_E2E_KERNEL_DEB=FILE uses a local kernel .deb instead (offline).
#
# Usage: prepare.sh OUTDIR
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST_DIR=$E2E_DIR/guest

# Module sets, each installed with its dependencies and a load-order list
# in /lib/modules/<set>.order of the initramfs.
VIRTIO_MODULES="virtio_mmio virtio_pci virtio_blk"
# L2: the ACPI QEMU0001 driver (and pvpanic.ko, its dependency) that
# panic-test.sh's guest loads; Debian builds them as modules.
PVPANIC_MODULES="pvpanic-mmio"
KVM_MODULES="kvm-amd"
# L1 only: a block device that needs O_DIRECT alignment (evil-test.sh).
NULLBLK_MODULES="null_blk"
# L1 only, loaded by blk-ctl.sh: images on loop and device-mapper devices.
FAULT_MODULES="loop dm-flakey"
# e2e.net.*: the guest's virtio-net driver (L2) and, in L1, the tap
# device microvm opens and the kernel's vhost-net.
NET_L2_MODULES="virtio_net"
NET_L1_MODULES="tun vhost_net"
# e2e.vsock.*'s engine=vhost run: the kernel's vhost_vsock in L1; the
# vsock benchmark's guest: its AF_VSOCK driver (L2).
VSOCK_L1_MODULES="vhost_vsock"
VSOCK_L2_MODULES="vmw_vsock_virtio_transport"
# Each helper is guest/NAME.c plus any guest/NAME_*.c.
HELPERS="kvm-smoke outb ttydrain evilblk blkcrash vsockpeer netpeer"

die()
{
	echo "prepare.sh: $*" >&2
	exit 1
}

log()
{
	echo "prepare.sh: $*"
}

[ $# -eq 1 ] || die "usage: prepare.sh OUTDIR"
mkdir -p "$1"
OUT=$(cd "$1" && pwd -P)

check_host()
{
	local missing=() cmd pkg
	while read -r cmd pkg; do
		command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
	done <<-'LIST'
	qemu-system-x86_64 qemu-system-x86
	cpio cpio
	modinfo kmod
	gcc build-essential
	gzip gzip
	dpkg dpkg
	apt-get apt
	fio fio
	mkfs.ext4 e2fsprogs
	lz4 lz4
	debugfs e2fsprogs
	LIST
	if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
		missing+=("busybox-static")
	fi
	if command -v gcc >/dev/null 2>&1 &&
	   [ ! -f "$(gcc -print-file-name=libc.a)" ]; then
		missing+=("libc6-dev")
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		die "missing host packages: ${missing[*]}" \
			"(apt-get install ${missing[*]})"
	fi
}

# hash_of FILE...: a digest of the named files and of OUT's path, for
# stamps that say "built from exactly these inputs".
hash_of()
{
	{ echo "$OUT"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

up_to_date()
{
	[ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

fetch_kernel()
{
	local pkg deb
	if [ -f "$OUT/kernel.stamp" ] && [ -f "$OUT/vmlinuz" ]; then
		return
	fi
	rm -rf "$OUT/kernel" "$OUT/debs"
	mkdir -p "$OUT/debs"
	if [ -n "${MICROVM_E2E_KERNEL_DEB:-}" ]; then
		deb=$MICROVM_E2E_KERNEL_DEB
		[ -f "$deb" ] || die "MICROVM_E2E_KERNEL_DEB: no file '$deb'"
	else
		pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		      sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' |
		      head -n 1)
		[ -n "$pkg" ] || die "apt-cache knows no linux-image-cloud-amd64" \
			"(run apt-get update)"
		log "downloading $pkg"
		local sandbox=()
		[ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
		(cd "$OUT/debs" && apt-get download -q "${sandbox[@]}" "$pkg") ||
			die "apt-get download $pkg failed"
		deb=$(ls "$OUT/debs/${pkg}_"*.deb | head -n 1)
	fi
	dpkg -x "$deb" "$OUT/kernel" || die "dpkg -x $deb failed"
	local kver
	kver=$(ls "$OUT/kernel/lib/modules" | head -n 1)
	[ -n "$kver" ] && [ -f "$OUT/kernel/boot/vmlinuz-$kver" ] ||
		die "$deb holds no kernel image"
	depmod -b "$OUT/kernel" "$kver" || die "depmod $kver failed"
	cp "$OUT/kernel/boot/vmlinuz-$kver" "$OUT/vmlinuz"
	echo "$kver" >"$OUT/kernel.stamp"
	rm -rf "$OUT/debs"
}

# extract_vmlinux: the bzImage's payload (boot protocol 2.08+
# payload_offset/length), LZ4-compressed in Debian's kernels, is the ELF
# vmlinux with its PVH entry note.
extract_vmlinux()
{
	local k=$OUT/vmlinuz ss po pl
	[ -f "$OUT/vmlinux" ] && [ "$OUT/vmlinux" -nt "$k" ] && return
	ss=$(od -An -tu1 -j $((0x1f1)) -N1 "$k" | tr -d ' ')
	po=$(od -An -tu4 -j $((0x248)) -N4 "$k" | tr -d ' ')
	pl=$(od -An -tu4 -j $((0x24c)) -N4 "$k" | tr -d ' ')
	# lz4 exits 1 over the trailing size word; the ELF check decides.
	tail -c +$(((ss + 1) * 512 + po + 1)) "$k" | head -c "$pl" |
		lz4 -dc >"$OUT/vmlinux.tmp" 2>/dev/null || true
	[ "$(head -c 4 "$OUT/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = \
	  7f454c46 ] || die "cannot extract an ELF vmlinux from $k"
	mv "$OUT/vmlinux.tmp" "$OUT/vmlinux"
}

build_helpers()
{
	local h stamp
	stamp=$(hash_of "$0" "$GUEST_DIR"/*.c "$GUEST_DIR"/*.h)
	up_to_date "$OUT/bin.stamp" "$stamp" && return
	mkdir -p "$OUT/bin"
	for h in $HELPERS; do
		# shellcheck disable=SC2046
		gcc -static -O2 -Wall -Wextra -Werror -o "$OUT/bin/$h" \
			"$GUEST_DIR/$h.c" $(ls "$GUEST_DIR/${h}"_*.c 2>/dev/null) ||
			die "building $h failed"
	done
	echo "$stamp" >"$OUT/bin.stamp"
}

# install_busybox ROOT: /bin/busybox and a link for each applet.
install_busybox()
{
	local root=$1 applet
	mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin"
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list-full); do
		[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
	done
}

# module_file NAME: the module's file in the unpacked kernel.
module_file()
{
	find "$OUT/kernel/lib/modules/$KVER/kernel" \
		-name "$1.ko" -o -name "$1.ko.*" | head -n 1
}

# module_order NAME...: the named modules and everything they depend on,
# dependencies first (busybox insmod resolves nothing by itself).
module_order()
{
	local m f dep
	for m in "$@"; do
		case " $ORDER_SEEN " in
		*" $m "*) continue ;;
		esac
		f=$(module_file "$m")
		[ -n "$f" ] || die "module $m not in kernel $KVER"
		for dep in $(modinfo -F depends "$f" | tr ',' ' '); do
			module_order "$dep"
		done
		case " $ORDER_SEEN " in
		*" $m "*) ;;
		*) ORDER_SEEN="$ORDER_SEEN $m"; echo "$m" ;;
		esac
	done
}

# install_modules ROOT LIST NAME...: the named modules and their
# dependencies, uncompressed (busybox insmod takes plain .ko files), flat
# in ROOT/lib/modules, and ROOT/lib/modules/LIST naming them in load order.
install_modules()
{
	local root=$1 list=$2 m f order
	shift 2
	mkdir -p "$root/lib/modules"
	ORDER_SEEN=
	order=$(module_order "$@") || exit 1
	for m in $order; do
		f=$(module_file "$m")
		case "$f" in
		*.ko) cp "$f" "$root/lib/modules/$m.ko" ;;
		*.ko.xz) xz -dc "$f" >"$root/lib/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$root/lib/modules/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$root/lib/modules/$m.ko" ;;
		*) die "module $f: unknown compression" ;;
		esac
	done
	echo $order >"$root/lib/modules/$list"
}

# make_cpio ROOT FILE: a gzip'ed newc archive of ROOT, owned by root.
make_cpio()
{
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip -6 >"$2.tmp"
	mv "$2.tmp" "$2"
}

build_l2()
{
	local stamp root=$OUT/l2root
	stamp=$(hash_of "$0" "$GUEST_DIR/l2-init.sh" "$GUEST_DIR/scenarios.sh" \
		"$GUEST_DIR/scenarios-disk.sh" \
		"$OUT/kernel.stamp" "$OUT/bin.stamp")
	up_to_date "$OUT/l2.stamp" "$stamp" && return
	log "building the L2 initramfs"
	rm -rf "$root"
	install_busybox "$root"
	# shellcheck disable=SC2086
	install_modules "$root" virtio.order $VIRTIO_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" pvpanic.order $PVPANIC_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" net.order $NET_L2_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" vsock.order $VSOCK_L2_MODULES
	mkdir -p "$root/e2e" "$root/proc" "$root/sys" "$root/dev" \
		"$root/tmp" "$root/run"
	install -m 755 "$GUEST_DIR/l2-init.sh" "$root/init"
	install -m 644 "$GUEST_DIR/scenarios.sh" "$root/e2e/scenarios.sh"
	install -m 644 "$GUEST_DIR/scenarios-disk.sh" \
		"$root/e2e/scenarios-disk.sh"
	install -m 755 "$OUT/bin/outb" "$root/bin/outb"
	install -m 755 "$OUT/bin/evilblk" "$root/bin/evilblk"
	install -m 755 "$OUT/bin/netpeer" "$root/bin/netpeer"
	install -m 755 "$OUT/bin/vsockpeer" "$root/bin/vsockpeer"
	make_cpio "$root" "$OUT/l2-initrd.cpio.gz"
	rm -rf "$root"
	echo "$stamp" >"$OUT/l2.stamp"
}

build_l1()
{
	local stamp root=$OUT/l1root h
	stamp=$(hash_of "$0" "$GUEST_DIR/l1-init.sh" "$OUT/kernel.stamp" \
		"$OUT/bin.stamp" "$OUT/l2.stamp")
	up_to_date "$OUT/l1.stamp" "$stamp" && return
	log "building the L1 base initramfs"
	rm -rf "$root"
	install_busybox "$root"
	# shellcheck disable=SC2086
	install_modules "$root" kvm.order $KVM_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" virtio.order $VIRTIO_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" nullblk.order $NULLBLK_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" fault.order $FAULT_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" net.order $NET_L1_MODULES
	# shellcheck disable=SC2086
	install_modules "$root" vsock.order $VSOCK_L1_MODULES
	mkdir -p "$root/e2e" "$root/proc" "$root/sys" "$root/dev" \
		"$root/tmp" "$root/run" "$root/$OUT/bin"
	install -m 755 "$GUEST_DIR/l1-init.sh" "$root/init"
	for h in $HELPERS; do
		install -m 755 "$OUT/bin/$h" "$root/bin/$h"
		install -m 755 "$OUT/bin/$h" "$root/$OUT/bin/$h"
	done
	cp "$OUT/vmlinuz" "$OUT/l2-initrd.cpio.gz" "$root/$OUT/"
	make_cpio "$root" "$OUT/l1-base.cpio.gz"
	rm -rf "$root"
	echo "$stamp" >"$OUT/l1.stamp"
}

check_host
fetch_kernel
extract_vmlinux
KVER=$(cat "$OUT/kernel.stamp")
build_helpers
build_l2
build_l1
log "ready in $OUT (kernel $(cat "$OUT/kernel.stamp"))"
