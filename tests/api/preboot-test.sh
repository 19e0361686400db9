#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The API before boot, on any host (no KVM needed): microvm --api-sock,
# driven by curl with Firecracker's requests. Checks the instance info,
# each pre-boot object accepted (204) and read back (GET /vm/config,
# /machine-config), wrong requests refused (400 with a fault_message)
# without changing the configuration (missing kernel or image files
# included), post-boot requests refused before boot, snapshot load
# refused once boot-specific resources are configured, an InstanceStart
# that fails (no KVM here, or a file that is no kernel) as a 400 naming
# why with the state still "Not started" (a network interface whose tap
# cannot be opened names it), a second socket on
# the same path refused at startup, and SIGTERM ending microvm with 143
# and the socket removed (nothing booted: main may still unlink).
#
# Usage: preboot-test.sh MICROVM    Exit: 0 pass, 1 fail, 77 without curl.
set -uo pipefail
microvm=$1
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/api-preboot.XXXXXX") || exit 1
sock=$work/api.sock
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

call()
{
	local args=(-sS --unix-socket "$sock" -o "$work/body" -w '%{http_code}'
		    -X "$1" "http://localhost$2" -H 'Accept: application/json')
	[ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' -d "$3")
	code=$(curl "${args[@]}")
	body=$(cat "$work/body" 2>/dev/null)
}
expect()
{
	local want=$1
	shift
	call "$@"
	[ "$code" = "$want" ] && ok "$1 $2 -> $code" ||
		bad "$1 $2 -> $code (want $want): $body"
}
refuse()
{
	local before after
	call GET /vm/config
	before=$body
	call "$@"
	case "$code:$body" in
	400:'{"fault_message":'*) ok "$1 $2 refused: $body" ;;
	*) bad "$1 $2 -> $code (want 400 fault_message): $body" ;;
	esac
	call GET /vm/config
	after=$body
	[ "$before" = "$after" ] || bad "$1 $2 changed the configuration"
}

truncate -s 16M "$work/root.img" "$work/data.img"
"$microvm" --api-sock "$sock" --id preboot-1 2>"$work/stderr" &
pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] && ok "socket up" || { bad "no socket"; exit 1; }

expect 200 GET /
[ "$body" = '{"id":"preboot-1","state":"Not started","vmm_version":"'"$("$microvm" --version | awk '{print $2}' | tr -d v)"'","app_name":"microvm"}' ] &&
	ok "instance info: $body" || bad "instance info: $body"
expect 200 GET /version
# A kernel or image that is not there is refused at PUT time, as
# Firecracker does; a file that is no kernel only at InstanceStart.
refuse PUT /boot-source '{"kernel_image_path": "'"$work"'/no-such-kernel"}'
refuse PUT /drives/gone '{"drive_id": "gone", "path_on_host": "'"$work"'/no-such-image", "is_root_device": false, "is_read_only": true}'
head -c 4096 /dev/zero >"$work/not-a-kernel"
expect 204 PUT /boot-source '{"kernel_image_path": "'"$work"'/not-a-kernel", "boot_args": "console=ttyS0 reboot=k panic=1 pci=off"}'
expect 204 PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 1024}'
expect 204 PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "'"$work"'/root.img", "is_root_device": true, "is_read_only": false}'
expect 204 PUT /drives/data '{"drive_id": "data", "path_on_host": "'"$work"'/data.img", "is_root_device": false, "is_read_only": true, "rate_limiter": {"ops": {"size": 100, "refill_time": 1000}}}'
expect 200 GET /machine-config
case "$body" in *'"vcpu_count":2'*'"mem_size_mib":1024'*) ok "machine-config read back" ;; *) bad "machine-config: $body" ;; esac
# smt as Firecracker's: 1 or an even vcpu_count (its message in the
# 400), kept by a PATCH that changes the count.
refuse PUT /machine-config '{"vcpu_count": 3, "mem_size_mib": 1024, "smt": true}'
call PUT /machine-config '{"vcpu_count": 3, "mem_size_mib": 1024, "smt": true}'
case "$body" in
*'vcpu_count 3 with smt true: The number of vCPUs must be'*'1 or an even number if SMT is enabled.'*) ok "odd vcpu_count with smt: Firecracker's message" ;;
*) bad "odd vcpu_count with smt: $body" ;;
esac
expect 204 PATCH /machine-config '{"smt": true}'
expect 200 GET /machine-config
case "$body" in *'"vcpu_count":2'*'"smt":true'*) ok "smt read back: $body" ;; *) bad "smt: $body" ;; esac
refuse PATCH /machine-config '{"vcpu_count": 3}'
expect 200 GET /vm/config
case "$body" in
*'"drive_id":"rootfs"'*'"drive_id":"data"'*'"is_read_only":true'*) ok "vm/config has both drives" ;;
*) bad "vm/config: $body" ;;
esac
refuse PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 1024, "bogus": 1}'
refuse PUT /machine-config '{"vcpu_count": "two", "mem_size_mib": 1024}'
refuse PUT /drives/x '{"drive_id": "y", "path_on_host": "/a", "is_root_device": false, "is_read_only": false}'
refuse PUT /drives/other '{"drive_id": "other", "path_on_host": "/a", "is_root_device": true, "is_read_only": false}'
refuse PATCH /vm '{"state": "Paused"}'
refuse PATCH /drives/data '{"drive_id": "data", "path_on_host": "/a"}'
refuse PUT /actions '{"action_type": "SendCtrlAltDel"}'
refuse PUT /actions '{"action_type": "Reboot"}'
refuse PUT /actions '{"action_type": "InstanceStart"'
# Snapshots: create only after boot; load refused on a bad body, and
# here, with a boot source configured, as Firecracker refuses it.
refuse PUT /snapshot/create '{"snapshot_path": "'"$work"'/s", "mem_file_path": "'"$work"'/m"}'
refuse PUT /snapshot/load '{"snapshot_path": "'"$work"'/s", "mem_file_path": "'"$work"'/m", "frob": 1}'
refuse PUT /snapshot/load '{"snapshot_path": "'"$work"'/s", "mem_backend": {"backend_type": "File", "backend_path": "'"$work"'/m"}}'
call PUT /snapshot/load '{"snapshot_path": "'"$work"'/s", "mem_backend": {"backend_type": "File", "backend_path": "'"$work"'/m"}}'
case "$body" in
*'Load snapshot error: Loading a microVM snapshot not allowed after configuring boot-specific resources.'*) ok "snapshot load after boot-source: Firecracker's message" ;;
*) bad "snapshot load after boot-source: $body" ;;
esac
# vsock as Firecracker's PUT /vsock; our transport key; bad ones refused.
refuse PUT /vsock '{"guest_cid": 2, "uds_path": "'"$work"'/v.sock"}'
refuse PUT /vsock '{"guest_cid": 3}'
refuse PUT /vsock '{"guest_cid": 3, "uds_path": "'"$work"'/v.sock", "port": 1}'
expect 204 PUT /vsock '{"vsock_id": "vsock0", "guest_cid": 3, "uds_path": "'"$work"'/v.sock"}'
expect 200 GET /vm/config
case "$body" in
*'"vsock":{"vsock_id":"vsock0","guest_cid":3,"uds_path":"'"$work"'/v.sock","transport":"mmio"}'*) ok "vm/config has the vsock" ;;
*) bad "vm/config vsock: $body" ;;
esac
# Network interfaces as Firecracker's PUT /network-interfaces/{id}:
# refusals name the field; PATCH (rate limiters) only after boot.
refuse PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "tap0", "guest_mac": "not-a-mac"}'
call PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "tap0", "guest_mac": "not-a-mac"}'
case "$body" in
*'guest_mac \"not-a-mac\" is not of the form AA:BB:CC:DD:EE:FF'*) ok "bad guest_mac named: $body" ;;
*) bad "bad guest_mac: $body" ;;
esac
refuse PUT /network-interfaces/eth0 '{"iface_id": "eth1", "host_dev_name": "tap0"}'
refuse PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "tap0", "allow_mmds_requests": true}'
refuse PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "tap-name-too-long"}'
refuse PATCH /network-interfaces/eth0 '{"iface_id": "eth0", "rx_rate_limiter": {"ops": {"size": 1, "refill_time": 1}}}'
refuse DELETE /drives/data
refuse GET /nowhere
# A body over the 51200-byte limit: 400, the connection closed.
call PUT /boot-source "{\"boot_args\": \"$(head -c 60000 /dev/zero | tr '\0' a)\"}"
[ "$code" = 400 ] && ok "oversized body refused" || bad "oversized body -> $code"
# The logger: a path that cannot be opened is a 400 that changes
# nothing; then microvm's lines go to the file in Firecracker's format.
refuse PUT /logger '{"log_path": "'"$work"'/no-such-dir/log", "level": "Debug"}'
expect 204 PUT /logger '{"log_path": "'"$work"'/log", "level": "Info", "show_level": true, "show_log_origin": true}'
expect 400 PUT /actions '{"action_type": "InstanceStart"}'
case "$body" in
*not-a-kernel* | *'/dev/kvm'*) ok "InstanceStart refused: $body" ;;
*) bad "InstanceStart: $body" ;;
esac
# The failed start's error line, as Firecracker writes a line.
if grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9} \[preboot-1:main:ERROR:vmm/main\.c:[0-9]+\] InstanceStart: ' "$work/log"; then
	ok "logger line: $(head -n 1 "$work/log")"
else
	bad "no InstanceStart line in the logger's file: $(head -n 3 "$work/log" 2>&1)"
fi
expect 200 GET /
case "$body" in *'"state":"Not started"'*) ok "still Not started" ;; *) bad "after a failed start: $body" ;; esac
# A network interface's tap is opened at InstanceStart, before the VM
# exists: one that cannot be a tap ("lo") fails the start with a 400
# naming the interface and the tap, on any host.
expect 204 PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "lo", "guest_mac": "06:00:AC:10:00:02", "rx_rate_limiter": {"bandwidth": {"size": 1048576, "refill_time": 100}}}'
expect 200 GET /vm/config
case "$body" in
*'"network-interfaces":[{"iface_id":"eth0","host_dev_name":"lo","guest_mac":"06:00:ac:10:00:02","rx_rate_limiter":{"bandwidth":{"size":1048576,"refill_time":100}},"transport":"mmio"}]'*) ok "vm/config has the interface" ;;
*) bad "vm/config network-interfaces: $body" ;;
esac
refuse PUT /network-interfaces/eth1 '{"iface_id": "eth1", "host_dev_name": "lo"}'
# MMDS: the data store any time (PATCH only once a PUT made it), its
# config before boot naming configured interfaces only.
expect 200 GET /mmds
[ "$body" = '{}' ] && ok "an empty store reads {}" || bad "GET /mmds: $body"
call PATCH /mmds '{"latest": {"a": "b"}}'
case "$code:$body" in 400:*'not initialized'*) ok "PATCH before PUT: $body" ;; *) bad "PATCH before PUT: $code $body" ;; esac
expect 204 PUT /mmds '{"latest": {"meta-data": {"ami-id": "ami-1", "reservation-id": "r-1"}}}'
expect 204 PATCH /mmds '{"latest": {"meta-data": {"ami-id": null, "local-hostname": "h"}}}'
expect 200 GET /mmds
[ "$body" = '{"latest":{"meta-data":{"reservation-id":"r-1","local-hostname":"h"}}}' ] &&
	ok "PUT then PATCH (RFC 7396): $body" || bad "GET /mmds after PATCH: $body"
refuse PUT /mmds '{"latest": '
expect 200 GET /mmds
case "$body" in *'"local-hostname":"h"'*) ok "a refused PUT /mmds changed nothing" ;; *) bad "store after a refused PUT: $body" ;; esac
refuse PUT /mmds/config '{"network_interfaces": ["eth9"]}'
refuse PUT /mmds/config '{"network_interfaces": []}'
refuse PUT /mmds/config '{"network_interfaces": ["eth0"], "ipv4_address": "10.0.0.1"}'
expect 204 PUT /mmds/config '{"network_interfaces": ["eth0"], "version": "V2", "ipv4_address": "169.254.170.2"}'
expect 200 GET /vm/config
case "$body" in
*'"mmds-config":{"network_interfaces":["eth0"],"version":"V2","ipv4_address":"169.254.170.2","imds_compat":false}'*) ok "vm/config has mmds-config" ;;
*) bad "vm/config mmds-config: $body" ;;
esac
expect 400 PUT /actions '{"action_type": "InstanceStart"}'
case "$body" in
*'network interface eth0: tap lo: '*) ok "InstanceStart names the tap: $body" ;;
*) bad "InstanceStart with tap lo: $body" ;;
esac
expect 200 GET /
case "$body" in *'"state":"Not started"'*) ok "still Not started" ;; *) bad "after a failed tap: $body" ;; esac
# A second microvm on the same path is refused at once.
"$microvm" --api-sock "$sock" 2>"$work/second.err"
st=$?
[ $st -ne 0 ] && grep -q "$sock" "$work/second.err" &&
	ok "second socket refused ($st): $(cat "$work/second.err")" ||
	bad "second microvm on the socket: status $st, $(cat "$work/second.err")"
kill -TERM "$pid"
wait "$pid"
st=$?
pid=
[ $st -eq 143 ] && ok "SIGTERM: status 143" || bad "SIGTERM: status $st"
[ -e "$sock" ] && bad "socket left after a run that never booted" ||
	ok "socket removed"
# --metadata that is not JSON, or over --mmds-size-limit: one line
# naming the file, status 1, before anything is served.
echo 'not json' >"$work/bad.json"
"$microvm" --api-sock "$sock" --metadata "$work/bad.json" 2>"$work/stderr3"
st=$?
[ $st -eq 1 ] && grep -q -- "--metadata $work/bad.json: .*not one JSON value" "$work/stderr3" &&
	ok "--metadata not JSON: status $st, $(cat "$work/stderr3")" ||
	bad "--metadata not JSON: status $st, $(cat "$work/stderr3")"
echo '{"latest": {"user-data": "0123456789012345678901234567890123456789"}}' >"$work/big.json"
"$microvm" --api-sock "$sock" --metadata "$work/big.json" --mmds-size-limit 40 2>"$work/stderr3"
st=$?
[ $st -eq 1 ] && grep -q -- "--metadata $work/big.json: more than the data store's limit of 40 bytes" "$work/stderr3" &&
	ok "--metadata over --mmds-size-limit: $(cat "$work/stderr3")" ||
	bad "--metadata over the limit: status $st, $(cat "$work/stderr3")"
# Firecracker's callers' flags: --no-seccomp (firecracker-go-sdk's
# default), --metadata (flintlock's: the store's first content), and a
# payload limit of 100 bytes.
echo '{"latest": {"meta-data": "instance-id: i-1"}}' >"$work/metadata.json"
"$microvm" --api-sock "$sock" --no-seccomp --metadata "$work/metadata.json" \
	--http-api-max-payload-size 100 2>"$work/stderr2" &
pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
expect 204 PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}'
call PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128, "smt": false, "track_dirty_pages": false, "huge_pages": "None", "cpu_template": "None"}'
[ "$code" = 400 ] && ok "a body over --http-api-max-payload-size 100 refused" ||
	bad "a 101+ byte body with a 100-byte limit -> $code"
expect 200 GET /mmds
[ "$body" = '{"latest":{"meta-data":"instance-id: i-1"}}' ] &&
	ok "--metadata filled the store: $body" || bad "GET /mmds after --metadata: $body"
grep -q '^Seccomp:[[:space:]]*0' "/proc/$pid/status" &&
	ok "--no-seccomp: no filter" || bad "--no-seccomp: $(grep Seccomp "/proc/$pid/status")"
kill -TERM "$pid"
wait "$pid"
pid=
[ $fails -eq 0 ] || { cat "$work/stderr"; echo "preboot-test: $fails failure(s)"; exit 1; }
echo "preboot-test: PASS"
