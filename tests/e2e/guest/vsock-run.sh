#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The guest side of e2e.vsock.hybrid, /etc/microvm/run in the root image
# that vsock-test.sh builds. Checks the vsock device (virtio id 19 on the
# expected transport, the local CID), then connects to the host itself
# (CID 2 port 1025: microvm hands it to the Unix listener <uds>_1025 in
# L1, vsockpeer hlisten) with 4 MiB both ways; then starts the listeners
# the host's checks need: an echo on port 1024 (Kata's agent port) and a
# reader that never reads on 1026, and waits for the host's last
# connection on port 1030 (vsock-l1.sh), bounded. Prints "VSOCK-CHECK:
# ok|FAIL what" lines and "VSOCK-CHECK-END: N failed"; exits 0 when all
# passed, else 1.
#
# Expects (file /e2e/expect, written by the host): transport (pci or
# mmio), cid, bytes (the guest-initiated transfer), wait_s (seconds for the
# host's checks).
fails=0
check()
{
	if [ "$1" = 0 ]; then
		echo "VSOCK-CHECK: ok $2"
	else
		echo "VSOCK-CHECK: FAIL $2"
		fails=$((fails + 1))
	fi
}

. /e2e/expect || { echo "VSOCK-CHECK: FAIL no /e2e/expect"; exit 1; }

# The device: virtio id 0x0013, on the transport the host chose.
dev=
for d in /sys/bus/virtio/devices/*; do
	[ "$(cat "$d/device" 2>/dev/null)" = 0x0013 ] && dev=$d
done
path=$(readlink -f "$dev" 2>/dev/null)
case "$transport:$path" in
pci:*/pci[0-9]*/*) ok=0 ;;
mmio:*virtio-mmio*|mmio:*LNRO0005*) ok=0 ;;
*) ok=1 ;;
esac
check $ok "virtio-vsock device (id 19) on $transport: ${path:-none}"
drv=$(readlink "$dev/driver" 2>/dev/null)
check "$([ "${drv##*/}" = vmw_vsock_virtio_transport ]; echo $?)" \
	"driver: ${drv##*/}"
got=$(vsockpeer cid)
check "$([ "$got" = "$cid" ]; echo $?)" "local CID $got, want $cid"

# Guest-initiated, before the listeners: the host's checks come after.
vsockpeer connect 2 1025 "$bytes" || fails=$((fails + 1))

vsockpeer stall 1026 &
stall=$!
vsockpeer listen 1024 &
echo=$!
# The host's last connection says its checks are over.
vsockpeer wait 1030 "$wait_s" || fails=$((fails + 1))
kill "$echo" "$stall" 2>/dev/null
bad=$(dmesg | grep -E 'BUG:|WARNING:|Oops|virtio.*(error|broken)' | head -n 3)
check "$([ -z "$bad" ]; echo $?)" "no kernel complaint in dmesg${bad:+: $bad}"
echo "VSOCK-CHECK-END: $fails failed"
[ $fails -eq 0 ]
