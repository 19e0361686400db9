#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds microvm's guest kernel from Debian's linux-source package (no
# other download): extracts the source, configures tinyconfig + the
# fragment microvm.config + olddefconfig, checks that every option of the
# fragment survived (check-config.sh), builds bzImage and the PVH vmlinux,
# and leaves them at OUTDIR/bzImage and OUTDIR/vmlinux.
#
# Usage: build.sh OUTDIR
# Cached: OUTDIR/cache/stamp holds a hash of the fragment, the checker,
# this script and the source package's version; when it matches and both
# images exist, nothing is done. An extracted source tree is reused while
# the package version stays the same; the object tree is kept, so a
# changed fragment rebuilds only what the change touches.
# Environment: MICROVM_KERNEL_JOBS (default: nproc),
#   MICROVM_KERNEL_FRAGMENT (default: microvm.config beside this script),
#   MICROVM_KERNEL_SOURCE_PKG (default linux-source-6.1).
# Exit status: 0 images up to date; 1 missing package, bad fragment or
# failed build (the reason on stderr).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=build.sh
pkg=${MICROVM_KERNEL_SOURCE_PKG:-linux-source-6.1}
tarball=/usr/src/$pkg.tar.xz
frag=${MICROVM_KERNEL_FRAGMENT:-$here/microvm.config}
checker=$here/check-config.sh
jobs=${MICROVM_KERNEL_JOBS:-$(nproc)}

die()
{
	echo "$prog: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 1; }
out=$1
[ -r "$frag" ] || die "cannot read the fragment '$frag'"
case "$jobs" in
'' | *[!0-9]* | 0) die "MICROVM_KERNEL_JOBS must be a positive number, not '$jobs'" ;;
esac

# Every tool the kernel build calls, with the Debian package that has it:
# the compiler and make, flex/bison (Kconfig, dtc), bc (timeconst.h),
# libelf (objtool, for the ORC unwinder x86_64 selects), lz4 (the image's
# compression), xz (the source tarball), perl (headers and scripts),
# openssl headers are not needed (no module signing, no modules).
missing=()
need_tool()
{
	command -v "$1" >/dev/null 2>&1 || missing+=("$2 (for $1)")
}
need_tool gcc build-essential
need_tool make build-essential
need_tool ld binutils
need_tool flex flex
need_tool bison bison
need_tool bc bc
need_tool lz4 lz4
need_tool xz xz-utils
need_tool perl perl
need_tool dpkg-query dpkg
if ! echo '#include <gelf.h>' | gcc -E -x c - >/dev/null 2>&1; then
	missing+=("libelf-dev (for <gelf.h>, objtool)")
fi
[ -r "$tarball" ] || missing+=("$pkg (for $tarball)")
if [ ${#missing[@]} -gt 0 ]; then
	for m in "${missing[@]}"; do
		echo "$prog: missing: $m" >&2
	done
	die "install the Debian packages above (tests/install-deps.sh does)"
fi
version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
	die "$tarball exists but package $pkg is not installed (dpkg-query)"

mkdir -p "$out/cache"
out=$(cd "$out" && pwd)
cache=$out/cache
src=$cache/linux-source-$version
obj=$cache/build
log=$cache/build.log

# One build at a time per OUTDIR (the guest-kernel target and the
# firmware.kernel test may start together): a second caller waits, then
# finds the stamp.
exec 9>"$cache/lock"
flock 9 || { echo "$prog: cannot lock $cache/lock" >&2; exit 1; }

key=$( { echo "$pkg $version"; cat "$frag" "$checker" "${BASH_SOURCE[0]}"; } |
	sha256sum | cut -d' ' -f1)
if [ -f "$out/bzImage" ] && [ -f "$out/vmlinux" ] &&
   [ "$(cat "$cache/stamp" 2>/dev/null)" = "$key" ]; then
	echo "$prog: $out/bzImage and vmlinux are up to date ($pkg $version)"
	exit 0
fi
rm -f "$cache/stamp"
start=$SECONDS

# Extract once per package version, into a temporary name first so that an
# interrupted extraction is never taken for a complete tree.
if [ ! -f "$src/.extracted" ]; then
	for old in "$cache"/linux-source-*; do
		[ -e "$old" ] && [ "$old" != "$src" ] && rm -rf "$old"
	done
	rm -rf "$obj" "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	echo "$prog: extracting $tarball ($pkg $version)"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1 ||
		die "cannot extract $tarball"
	touch "$src.tmp/.extracted"
	mv "$src.tmp" "$src"
fi
t_extract=$((SECONDS - start))

kmake()
{
	make -C "$src" O="$obj" ARCH=x86_64 "$@"
}

echo "$prog: configuring (tinyconfig + $(basename "$frag") + olddefconfig)"
mkdir -p "$obj"
{
	kmake tinyconfig &&
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" &&
	kmake olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configuration failed (log: $log)"; }
"$checker" "$frag" "$obj/.config" "$src" ||
	die "the fragment $frag does not survive olddefconfig (see above)"
t_config=$((SECONDS - start - t_extract))

echo "$prog: building bzImage and vmlinux with -j$jobs (log: $log)"
kmake -j"$jobs" bzImage vmlinux >>"$log" 2>&1 ||
	{ tail -n 40 "$log" >&2; die "kernel build failed (log: $log)"; }
t_build=$((SECONDS - start - t_extract - t_config))

# microvm loads the ELF vmlinux only through its PVH entry note.
if command -v readelf >/dev/null &&
   ! readelf -n "$obj/vmlinux" | grep -q '^ *Xen .*(0x00000012)'; then
	die "$obj/vmlinux has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)"
fi

for f in bzImage vmlinux; do
	case $f in
	bzImage) from=$obj/arch/x86/boot/bzImage ;;
	vmlinux) from=$obj/vmlinux ;;
	esac
	cp "$from" "$out/.$f.tmp"
	mv "$out/.$f.tmp" "$out/$f"
done
cp "$obj/.config" "$out/config"
echo "$key" >"$cache/stamp"
echo "$prog: $(cat "$obj/include/config/kernel.release"): bzImage $(stat -c %s "$out/bzImage") bytes," \
	"vmlinux $(stat -c %s "$out/vmlinux") bytes;" \
	"extract ${t_extract} s, config ${t_config} s, build ${t_build} s" \
	"(total $((SECONDS - start)) s, -j$jobs)"
