#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the nested harness's L1 (busybox, root) for creds-test.sh:
# an ext2 of FS_KIB on a memory-backed null_blk with half its blocks
# reserved for root, writable by uid 1000. First uid 1000 writes a file
# there (O_DIRECT, 4 KiB a write) until the file system refuses: that is
# the user's space. Then, per engine, uid 1000 makes a sparse image of
# IMAGE_MIB (more than the user's space, less than root's) and runs
# microvm on it with the guest of guest/creds-init.sh, which writes over
# the whole disk; statfs after each run says whether root's reserve was
# touched. /dev/kvm and /dev/vhost-blk are opened to everyone for this.
# Usage: creds-l1.sh --microvm BIN --kernel K --initrd I [--engine E]...
# Stdout: the guests' consoles and microvm's stderr (prefixed), and
# "CREDS: ..." lines, one each:
#   CREDS: fs bsize=B blocks=N bfree=F bavail=A   (the empty file system)
#   CREDS: user bytes=N bfree=F bavail=A          (at uid 1000's ENOSPC)
#   CREDS: engine=E status=S dd-status=R records-out=F+P error=TEXT
#          ioerr-sector=S bfree=F bavail=A image-bytes=N   (per engine)
#   CREDS: done
# Exit: 0 when every step ran (the verdict is creds-test.sh's); 1 when a
# step of the setup failed ("CREDS: FAIL why").
FS_KIB=32768
IMAGE_MIB=24
RUN_UID=1000
microvm=
kernel=
initrd=
engines=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--engine) engines="$engines $2"; shift 2 ;;
	*) echo "CREDS: FAIL unknown option '$1'"; exit 1 ;;
	esac
done
engines=${engines:-io_uring vhost}

fail()
{
	echo "CREDS: FAIL $*"
	dmesg | tail -n 20 | sed 's/^/creds-l1: dmesg: /'
	exit 1
}

# as_user CMD ARGS...: CMD as uid/gid 1000 with no supplementary groups
# and no capabilities (busybox su from root asks no password; "--" ends
# su's options, which getopt would otherwise take from CMD's).
as_user()
{
	su -s /bin/sh -c 'exec "$@"' -- creds creds-l1 "$@"
}

# fs_stat: statfs of the test file system as "bsize blocks bfree bavail".
fs_stat()
{
	stat -f -c '%S %b %f %a' /mnt/creds
}

mkdir -p /etc
grep -q '^creds:' /etc/passwd 2>/dev/null ||
	echo "creds:x:$RUN_UID:$RUN_UID::/tmp:/bin/sh" >>/etc/passwd
grep -q '^creds:' /etc/group 2>/dev/null ||
	echo "creds:x:$RUN_UID:" >>/etc/group
[ "$(as_user id -u)" = $RUN_UID ] || fail "su to uid $RUN_UID failed"

for m in $(cat /lib/modules/nullblk.order); do
	if [ "$m" = null_blk ]; then
		insmod "/lib/modules/$m.ko" nr_devices=1 gb=1 bs=512 \
			memory_backed=1 || fail "insmod null_blk"
	else
		insmod "/lib/modules/$m.ko" || fail "insmod $m"
	fi
done
i=0
while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
mkdir -p /mnt/creds
mke2fs -F -b 4096 -m 50 /dev/nullb0 $FS_KIB >/dev/null 2>&1 &&
	mount -t ext2 /dev/nullb0 /mnt/creds ||
	fail "ext2 with 50% reserved blocks on /dev/nullb0"
chown $RUN_UID:$RUN_UID /mnt/creds
read -r bsize blocks bfree bavail <<EOF
$(fs_stat)
EOF
echo "CREDS: fs bsize=$bsize blocks=$blocks bfree=$bfree bavail=$bavail"

# The user's own limit, written the way the guest will write.
as_user dd if=/dev/zero of=/mnt/creds/fill bs=4096 oflag=direct \
	2>/tmp/fill.log
sed 's/^/creds-l1: user dd: /' /tmp/fill.log
grep -q 'No space left on device' /tmp/fill.log ||
	fail "uid $RUN_UID's dd did not end with ENOSPC"
read -r _ _ f a <<EOF
$(fs_stat)
EOF
echo "CREDS: user bytes=$(stat -c %s /mnt/creds/fill) bfree=$f bavail=$a"
rm /mnt/creds/fill
sync

cp "$kernel" /tmp/creds-vmlinuz && cp "$initrd" /tmp/creds-initrd ||
	fail "copying the guest kernel and initramfs"
chmod 644 /tmp/creds-vmlinuz /tmp/creds-initrd
chmod 666 /dev/kvm
[ ! -e /dev/vhost-blk ] || chmod 666 /dev/vhost-blk
for engine in $engines; do
	img=/mnt/creds/disk-$engine.raw
	as_user truncate -s ${IMAGE_MIB}M "$img" || fail "truncate $img"
	as_user "$microvm" --kernel /tmp/creds-vmlinuz \
		--initrd /tmp/creds-initrd --cpus 1 --memory 256M \
		--cmdline "console=ttyS0 quiet panic=-1" --timeout 240 \
		--disk "$img,engine=$engine" >/tmp/console 2>/tmp/stderr
	status=$?
	sed "s/^/creds-l1: $engine: console: /" /tmp/console
	sed "s/^/creds-l1: $engine: stderr: /" /tmp/stderr
	# "CREDS-GUEST: dd-status R records-out F+P error TEXT..."
	# shellcheck disable=SC2046 # split into words on purpose
	set -- $(grep -a '^CREDS-GUEST: dd-status ' /tmp/console | tr -d '\r')
	res="dd-status=none"
	if [ $# -ge 7 ]; then
		res="dd-status=$3 records-out=$5"
		shift 6
		res="$res error=$(echo "$*" | tr ' ' _)"
	fi
	sector=$(sed -n 's/^CREDS-GUEST: ioerr-sector \([0-9a-z]*\).*/\1/p' \
		/tmp/console)
	read -r _ _ f a <<EOF
$(fs_stat)
EOF
	echo "CREDS: engine=$engine status=$status $res" \
		"ioerr-sector=${sector:-none} bfree=$f bavail=$a" \
		"image-bytes=$(($(stat -c '%b * %B' "$img")))"
	rm "$img"
	sync
done
umount /mnt/creds
echo "CREDS: done"
