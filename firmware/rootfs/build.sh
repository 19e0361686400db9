#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds root.raw, a bootable ext4 root image for microvm guests, without
# root privileges and without loop mounts: the tree is staged in a
# temporary directory and `mkfs.ext4 -d` writes it into the image file.
# The image holds busybox (static) with its applet links, init.sh as
# /sbin/init (and /init), microvm-exit (the exit-device helper) and every
# --add'ed file. See README.md beside this script.
#
# Usage: build.sh [--size SIZE] [--add SRC[:DEST]]... [--busybox PATH]
#                 [--exit-helper PATH] OUT.raw
#   --size SIZE   image size: a number with K, M or G (plain: MiB); default
#                 the contents plus 32 MiB, at least 64 MiB (sparse file)
#   --add SRC[:DEST]  copy file or directory SRC into the image at DEST
#                 (absolute; default /NAME of SRC); a DEST ending in / is
#                 a directory to put SRC in; repeatable, later ones win
#   --busybox PATH    a statically linked busybox (default /bin/busybox,
#                 Debian's busybox-static)
#   --exit-helper PATH  a built microvm-exit; default: build it from
#                 microvm-exit.c with ${CC:-cc} -static
# Exit: 0 built, 1 failed (one message naming the bad value), 2 usage.
set -uo pipefail

ROOTFS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$ROOTFS_DIR/../..
MIB=1048576
MIN_SIZE=$((8 * MIB))

die()
{
	echo "build.sh: $*" >&2
	exit 1
}

usage()
{
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit:/p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# parse_size ARG: bytes, from a number with an optional K/M/G suffix
# (plain numbers are MiB, as microvm's --memory).
parse_size()
{
	local n unit
	[[ "$1" =~ ^([0-9]+)([KkMmGg]?)$ ]] || return 1
	n=$((10#${BASH_REMATCH[1]}))
	unit=${BASH_REMATCH[2]}
	[ ${#BASH_REMATCH[1]} -le 7 ] || return 1
	case "$unit" in
	K | k) echo $((n * 1024)) ;;
	G | g) echo $((n * 1024 * MIB)) ;;
	*) echo $((n * MIB)) ;;
	esac
}

size=
busybox=/bin/busybox
helper=
out=
adds=()
while [ $# -gt 0 ]; do
	case "$1" in
	--size)
		[ $# -ge 2 ] || die "--size needs a value"
		size=$(parse_size "$2") ||
			die "--size '$2': not a size (a number with K, M or G)"
		[ "$size" -ge $MIN_SIZE ] ||
			die "--size '$2': too small (at least 8M)"
		[ $((size % 4096)) -eq 0 ] ||
			die "--size '$2': not a multiple of 4K"
		shift 2 ;;
	--add)
		[ $# -ge 2 ] || die "--add needs a value"
		adds+=("$2"); shift 2 ;;
	--busybox)
		[ $# -ge 2 ] || die "--busybox needs a value"
		busybox=$2; shift 2 ;;
	--exit-helper)
		[ $# -ge 2 ] || die "--exit-helper needs a value"
		helper=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*)
		[ -z "$out" ] || die "unexpected argument '$1' (one OUT.raw only)"
		out=$1; shift ;;
	esac
done
[ -n "$out" ] || usage
case "$out" in
*/) die "output '$out' is a directory name, not an image file" ;;
esac
[ -d "$(dirname "$out")" ] ||
	die "output '$out': no directory '$(dirname "$out")'"

for tool in mkfs.ext4 debugfs readelf; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "needs $tool (apt-get install e2fsprogs binutils)"
done
[ -f "$busybox" ] && [ -x "$busybox" ] ||
	die "--busybox '$busybox': no such executable (apt-get install busybox-static)"
# The image has no shared libraries: a dynamic busybox would not start.
if readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
	die "--busybox '$busybox' is dynamically linked (apt-get install busybox-static)"
fi
if [ -n "$helper" ]; then
	[ -f "$helper" ] && [ -x "$helper" ] ||
		die "--exit-helper '$helper': no such executable"
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/rootfs.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$stage"' EXIT
root=$stage/root

if [ -z "$helper" ]; then
	helper=$stage/microvm-exit
	${CC:-cc} -static -Os -Wall -Wextra -I "$SRC_DIR/src/vmm/x86_64" \
		-o "$helper" "$ROOTFS_DIR/microvm-exit.c" ||
		die "cannot build microvm-exit with '${CC:-cc} -static' (apt-get install build-essential)"
fi

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/microvm,dev,proc,sys,tmp,run,root,mnt,var/tmp} ||
	die "cannot create the staging tree in '$stage'"
chmod 1777 "$root/tmp" "$root/var/tmp"
chmod 700 "$root/root"
cp "$busybox" "$root/bin/busybox" || die "cannot copy '$busybox'"
chmod 755 "$root/bin/busybox"
# Links for every applet (busybox --list-full names them by path), except
# init and linuxrc: /sbin/init is ours.
while read -r applet; do
	case "$applet" in
	sbin/init | linuxrc | bin/busybox | "") continue ;;
	esac
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet" ||
		die "cannot link applet '$applet'"
done < <("$busybox" --list-full) ||
	die "'$busybox --list-full' failed"
[ -L "$root/bin/sh" ] || die "--busybox '$busybox' has no sh applet"
install -m 755 "$ROOTFS_DIR/init.sh" "$root/sbin/init" ||
	die "cannot install init"
ln -s sbin/init "$root/init"
install -m 755 "$helper" "$root/sbin/microvm-exit" ||
	die "cannot install '$helper'"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo microvm >"$root/etc/hostname"
cat >"$root/etc/profile" <<'PROFILE'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PS1='microvm:\w\$ '
PROFILE

# add SPEC: copy SRC into the staging tree at DEST.
add()
{
	local spec=$1 src dest
	if [[ "$spec" == *:* ]]; then
		src=${spec%:*}
		dest=${spec##*:}
	else
		src=$spec
		dest=/$(basename "$spec")
	fi
	[ -n "$src" ] || die "--add '$spec': no source path"
	[ -e "$src" ] || die "--add '$spec': no such file or directory '$src'"
	case "$dest" in
	/*) ;;
	*) die "--add '$spec': destination '$dest' is not an absolute path" ;;
	esac
	case "/$dest/" in
	*/../* | */./*) die "--add '$spec': destination '$dest' has . or .. in it" ;;
	esac
	[ "$dest" != / ] || [ -d "$src" ] ||
		die "--add '$spec': a file cannot replace the image's /"
	if [[ "$dest" == */ ]]; then
		dest=$dest$(basename "$src")
	fi
	mkdir -p "$root$(dirname "$dest")" ||
		die "--add '$spec': cannot create '$(dirname "$dest")'"
	if [ -d "$src" ]; then
		mkdir -p "$root$dest" &&
			cp -a "$src/." "$root$dest/" ||
			die "--add '$spec': cannot copy '$src'"
	else
		rm -rf "${root:?}$dest"
		cp -a "$src" "$root$dest" ||
			die "--add '$spec': cannot copy '$src'"
	fi
}
for spec in "${adds[@]}"; do
	add "$spec"
done

used=$(du -s -B1 --apparent-size "$root" | cut -f1)
if [ -z "$size" ]; then
	size=$(( (used + 32 * MIB + MIB - 1) / MIB * MIB ))
	[ "$size" -ge $((64 * MIB)) ] || size=$((64 * MIB))
elif [ $((used + used / 4 + 4 * MIB)) -gt "$size" ]; then
	die "--size $((size / MIB))M: the contents take $(( (used + MIB - 1) / MIB )) MiB; give at least $(( (used + used / 4 + 5 * MIB) / MIB ))M"
fi

tmp=$out.tmp.$$
rm -f "$tmp"
truncate -s "$size" "$tmp" || die "cannot create '$tmp'"
# 4 KiB blocks and 256-byte inodes whatever the size (mke2fs would pick
# 1 KiB blocks and 128-byte inodes for a small image); root owns /.
if ! mkfs.ext4 -q -F -b 4096 -I 256 -L microvm-root -E root_owner=0:0 \
	-d "$root" "$tmp" >"$stage/mkfs.log" 2>&1; then
	cat "$stage/mkfs.log" >&2
	rm -f "$tmp"
	die "mkfs.ext4 -d failed for '$out' (size $((size / MIB)) MiB)"
fi
# A console node for kernels that do not mount devtmpfs on /dev by
# themselves (init mounts it, but the kernel opens the console first).
printf 'cd /dev\nmknod console c 5 1\nsif console mode 020600\n' |
	debugfs -w -f - "$tmp" >"$stage/debugfs.log" 2>&1 &&
	! grep -qiE 'error|not found|invalid' "$stage/debugfs.log" ||
	{ cat "$stage/debugfs.log" >&2; rm -f "$tmp"
	  die "debugfs could not add /dev/console to '$out'"; }
mv -f "$tmp" "$out" || die "cannot write '$out'"
