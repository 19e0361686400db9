#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; run-guest.sh --nested) or on a host with KVM:
# replays, with curl, the calls one Firecracker client makes, in its
# order, with its paths, bodies and headers, and checks the guest boots
# and its data disk takes fio write+verify rounds (microvm.test=api):
#   kata       Kata's fc.go, not jailed: --version parsed as it parses
#              it, a config file (rootfs read-only, 8 empty placeholder
#              drives, logger and metrics on FIFOs a reader drains),
#              --api-sock --config-file, GET / until Running, the
#              data image bound over placeholder drive_0 and PATCHed
#              in (same path), unbound and PATCHed out, SIGTERM.
#   gosdk      firecracker-go-sdk's default handler chain: --api-sock
#              --id UUID, GET /machine-config until it answers, PUT
#              /logger, /metrics, /machine-config, GET /machine-config,
#              PUT /boot-source, /drives (root last), InstanceStart;
#              Shutdown() is SendCtrlAltDel.
#   flintlock  --id --boot-timer --no-api --config-file --metadata, a
#              network interface and MMDS V1 on it; the guest reads
#              its cloud-init data from MMDS and ends itself after its
#              fio rounds.
# What the caller does that microvm refuses is tried first, exactly, and
# reported as a REPLAY-GAP line; the run goes on with the nearest call
# microvm takes (named in that line). Prints REPLAY-OK / REPLAY-FAIL
# lines and REPLAY-SUMMARY; exit 0 when none failed.
#
# Usage: replay-l1.sh CALLER MICROVM CURL KERNEL INITRD ROOT_IMG DATA_IMG
caller=$1 microvm=$2 curl=$3 kernel=$4 initrd=$5 root=$6 data=$7
rounds=3
work=${TMPDIR:-/tmp}/replay-l1.$$
mkdir -p "$work" || exit 1
sock=$work/firecracker.socket
fails=0
pid=
ok() { echo "REPLAY-OK: $*"; }
bad() { echo "REPLAY-FAIL: $*"; fails=$((fails + 1)); }
gap() { echo "REPLAY-GAP: $*"; }
# shellcheck source=mmds-lib-l1.sh
. "$(dirname "$0")/mmds-lib-l1.sh"

# call METHOD PATH [BODY]: as a go-swagger client over the Unix socket
# (both callers use one); sets code and body.
call()
{
	set -- -sS --unix-socket "$sock" -o "$work/body" -w '%{http_code}' \
		-X "$1" "http://localhost$2" -H 'Accept: application/json' \
		-H 'User-Agent: Go-http-client/1.1' ${3+-H} \
		${3+'Content-Type: application/json'} ${3+-d} ${3+"$3"}
	code=$("$curl" "$@")
	body=$(cat "$work/body" 2>/dev/null)
}

# expect CODE METHOD PATH [BODY]
expect()
{
	want=$1
	shift
	call "$@"
	[ "$code" = "$want" ] && ok "$1 $2 -> $code" ||
		bad "$1 $2 -> $code (want $want): $body"
}

wait_console()
{
	i=0
	while ! grep -q "$1" "$work/console" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt "$2" ] && return 1
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
}

# wait_exit TENTHS: microvm's exit status in status (999: still ran).
wait_exit()
{
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt "$1" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "microvm $pid still runs; its threads:"
		for t in /proc/"$pid"/task/*; do
			echo "  $(cat "$t/comm" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null) $(cut -d ' ' -f 3 "$t/stat" 2>/dev/null)"
		done
		grep -v '^E2E-TICK' "$work/console" | tail -n 8
		kill -9 "$pid"
		wait "$pid"
		status=999
		return
	fi
	wait "$pid"
	status=$?
}

# start ARGS...: microvm in the background, console and stderr to files.
start()
{
	"$microvm" "$@" >"$work/console" 2>"$work/stderr" </dev/null &
	pid=$!
}

# try_start ARGS...: the caller's exact command line; a refusal within a
# second (microvm's exit with a message) is a gap, and 1 is returned.
try_start()
{
	start "$@"
	sleep 1
	kill -0 "$pid" 2>/dev/null && return 0
	wait "$pid"
	gap "microvm $* -> exit $?: $(head -n 2 "$work/stderr")"
	rm -f "$sock"
	return 1
}

guest_results()
{
	grep '^E2E-FIO-ROUND\|^E2E-RESULT\|^E2E-CMDLINE\|^E2E-CHECK: \(cpus\|topology\)\|\] [0-9]* 512-byte' \
		"$work/console"
	grep -q "^E2E-FIO-ROUND $rounds bad 0" "$work/console" &&
		ok "fio round $rounds: no verify failure" || {
		bad "no clean fio round $rounds on the data disk"
		grep -v '^E2E-TICK' "$work/console" | head -n 60
	}
}

wait_rounds()
{
	if wait_console "^E2E-FIO-ROUND $rounds " 3000; then
		ok "the guest ran $rounds fio rounds"
	else
		bad "no fio round $rounds in the guest"
		tail -n 20 "$work/console" "$work/stderr"
	fi
}

# Kata's semantic-version check of `--version` (fc.go parseVersion and
# checkVersion: the first line's second field, a leading v trimmed, a
# semver of at least 0.21.1).
kata_version()
{
	line=$("$microvm" --version | head -n 1)
	v=$(echo "$line" | cut -d ' ' -f 2 | sed 's/^v//')
	if echo "$v" | grep -Eq '^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'; then
		ok "--version '$line': semver $v"
	else
		bad "--version '$line': '$v' is no semantic version"
	fi
	maj=${v%%.*} rest=${v#*.}
	min=${rest%%.*} pat=${rest#*.}
	pat=${pat%%[-+]*}
	if [ "$maj" -gt 0 ] || [ "$min" -gt 21 ] ||
	   { [ "$min" -eq 21 ] && [ "$pat" -ge 1 ]; }; then
		ok "version $v >= Kata's minimum 0.21.1"
	else
		bad "version $v < Kata's minimum 0.21.1"
	fi
}

# kata_config FILE VSOCK ARGS [POOL]: the config file fc.go writes
# (MarshalIndent with tabs, its FcConfig field order, go-swagger's model
# field order); VSOCK 1 keeps the hybrid vsock every Kata sandbox has;
# POOL placeholder drives (fcDiskPoolSize: 8).
kata_config()
{
	{
		printf '{\n\t"boot-source": {\n\t\t"boot_args": "%s",\n' "$3"
		printf '\t\t"initrd_path": "%s",\n' "$initrd"
		printf '\t\t"kernel_image_path": "%s"\n\t},\n' "$kernel"
		printf '\t"machine-config": {\n\t\t"mem_size_mib": 256,\n'
		printf '\t\t"smt": false,\n\t\t"vcpu_count": 2\n\t},\n'
		printf '\t"drives": [\n\t\t{\n\t\t\t"drive_id": "rootfs",\n'
		printf '\t\t\t"is_read_only": true,\n\t\t\t"is_root_device": false,\n'
		printf '\t\t\t"path_on_host": "%s"\n\t\t}' "$root"
		n=0
		while [ $n -lt "${4:-8}" ]; do
			printf ',\n\t\t{\n\t\t\t"drive_id": "drive_%s",\n' $n
			printf '\t\t\t"is_read_only": false,\n\t\t\t"is_root_device": false,\n'
			printf '\t\t\t"path_on_host": "%s/drive_%s"\n\t\t}' "$work" $n
			n=$((n + 1))
		done
		printf '\n\t],\n'
		[ "$2" = 1 ] && printf '\t"vsock": {\n\t\t"guest_cid": 3,\n\t\t"uds_path": "%s/kata.hvsock",\n\t\t"vsock_id": "root"\n\t},\n' "$work"
		printf '\t"logger": {\n\t\t"level": "Debug",\n'
		printf '\t\t"log_path": "%s/logs.fifo"\n\t},\n' "$work"
		printf '\t"metrics": {\n\t\t"metrics_path": "%s/metrics.fifo"\n\t}\n}' "$work"
	} >"$1"
}

# kata_fifo NAME: created and opened for reading before the VMM starts,
# as fc.go's fcListenToFifo does; a reader drains it into NAME.out.
kata_fifo()
{
	mkfifo "$work/$1" || bad "mkfifo $1"
	cat <"$work/$1" >"$work/$1.out" &
	# fc.go opens O_RDONLY|O_NONBLOCK, so the writer never waits; the
	# shell's read-write open stands in for that open.
	eval "exec $2<>\"\$work/\$1\""
}

# waitVMMRunning: GET / every 10 ms until "state": "Running"; 1 when
# microvm ended first.
kata_wait_running()
{
	i=0
	while [ $i -lt 3000 ]; do
		if [ -S "$sock" ] && call GET /; then
			case "$body" in *'"state":"Running"'*) return 0 ;; esac
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}

# Kata Containers' fc.go, not jailed (fcInit's else branch).
replay_kata()
{
	kata_version
	for n in 0 1 2 3 4 5 6 7; do : >"$work/drive_$n"; done
	kata_fifo logs.fifo 7
	kata_fifo metrics.fifo 8
	# fcKernelParams with Debug (console=ttyS0), the test's own
	# parameters first as the user's kernel_params.
	args="microvm.test=api microvm.fio=/dev/vdb quiet"
	kata_args="root=/dev/vda1 rootflags=data=ordered,errors=remount-ro ro rootfstype=ext4 pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on acpi=off console=ttyS0"
	kata_config "$work/fcConfig.json" 1 "$args $kata_args"
	if try_start --api-sock "$sock" --config-file "$work/fcConfig.json"; then
		ok "Kata's exact config file accepted"
		kill -TERM "$pid"
		wait_exit 100
		rm -f "$sock"
	else
		gap "the run goes on with boot_args with root=/dev/vda for /dev/vda1 (the test image has no partitions) and without acpi=off (this test's guest kernel is Debian's, built without VIRTIO_MMIO_CMDLINE_DEVICES and X86_MPPARSE; Kata's acpi=off with a kernel that has them is e2e.firmware.acpi_off)"
	fi
	# Kata's root parameters for an image, its partition 1 aside (the
	# test's root image has no partition table).
	args="$args root=/dev/vda rootflags=data=ordered,errors=remount-ro ro rootfstype=ext4"
	args="$args pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on console=ttyS0"
	# The hybrid vsock every Kata sandbox has; the socket file the run
	# above left (as Firecracker leaves it) removed first, as fc.go does.
	rm -f "$work/kata.hvsock"
	kata_config "$work/fcConfig.json" 1 "$args"
	start --api-sock "$sock" --config-file "$work/fcConfig.json"
	# fcDiskPoolSize's 8 placeholders and the rootfs: 9 virtio-mmio disks.
	kata_wait_running ||
		{ bad "GET / never said Running: $code $body"; return; }
	ok "GET / Running after $i polls: $body"
	[ -S "$work/kata.hvsock" ] && ok "the hybrid vsock socket is up" ||
		bad "no socket at the config's uds_path $work/kata.hvsock"
	# hotplugBlockDevice (AddDevice): fcJailResource binds the
	# container's image over the placeholder file drive_0, then the
	# drive is PATCHed to that same path (microvm reopens it).
	mount -o bind "$data" "$work/drive_0" || bad "binding the image over drive_0"
	expect 204 PATCH /drives/drive_0 '{"drive_id":"drive_0","path_on_host":"'"$work/drive_0"'"}'
	wait_rounds
	# HotplugRemoveDevice: a lazy unbind (umountResource: MNT_DETACH,
	# microvm still has the image open), then PATCH the same path again
	# (the empty placeholder once more).
	umount -l "$work/drive_0" || bad "unbinding drive_0"
	expect 204 PATCH /drives/drive_0 '{"drive_id":"drive_0","path_on_host":"'"$work/drive_0"'"}'
	# fcEnd: SIGTERM, then wait.
	kill -TERM "$pid"
	wait_exit 300
	[ "$status" = 143 ] && ok "SIGTERM ended microvm (status 143)" ||
		bad "microvm status $status after SIGTERM (want 143)"
	exec 7<&- 8<&-
	sleep 0.2
	# A clean run logs nothing at Kata's level; the FIFO must not have
	# stalled microvm (it ran, the reader drained whatever came).
	ok "log FIFO: $(wc -c <"$work/logs.fifo.out") byte(s) drained"
	if [ -s "$work/metrics.fifo.out" ]; then
		grep -v '^{.*}$' "$work/metrics.fifo.out" | head -n 3 | grep . &&
			bad "a metrics line is not one JSON object" ||
			ok "metrics FIFO: $(wc -l <"$work/metrics.fifo.out") JSON line(s)"
	else
		ok "no metrics line came through the FIFO (Kata reads what comes)"
	fi
}

# firecracker-go-sdk's default FcInit handler chain, then Shutdown().
replay_gosdk()
{
	id=5e2f1a9c-3b7d-4c61-9a0e-1f2d3c4b5a69
	# CreateLogFilesHandler: the metrics file, then the log file.
	: >>"$work/metrics.log"
	: >>"$work/fc.log"
	# StartVMMHandler: firecracker --api-sock SOCK --id VMID, and
	# --no-seccomp unless Config.Seccomp.Enabled.
	if try_start --api-sock "$sock" --id "$id" --no-seccomp; then
		ok "--no-seccomp accepted"
	else
		gap "the run goes on as with Config.Seccomp.Enabled (no --no-seccomp)"
		start --api-sock "$sock" --id "$id"
	fi
	# waitForSocket: stat, then GET /machine-config every 10 ms.
	i=0
	while [ $i -lt 3000 ]; do
		[ -S "$sock" ] && call GET /machine-config && [ "$code" = 200 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
		i=$((i + 1))
	done
	[ "$code" = 200 ] && ok "GET /machine-config after $i polls: $body" ||
		{ bad "the socket never answered: $code $body"; return; }
	# BootstrapLoggingHandler, CreateMachineHandler (and its refresh),
	# CreateBootSourceHandler, AttachDrivesHandler (root drive last).
	expect 204 PUT /logger '{"level":"Debug","log_path":"'"$work/fc.log"'","show_level":true,"show_log_origin":false}'
	expect 204 PUT /metrics '{"metrics_path":"'"$work/metrics.log"'"}'
	expect 204 PUT /machine-config '{"mem_size_mib":256,"smt":false,"vcpu_count":2}'
	expect 200 GET /machine-config
	case "$body" in
	*'"vcpu_count":2'*'"mem_size_mib":256'* | *'"mem_size_mib":256'*'"vcpu_count":2'*) ok "machine config read back: $body" ;;
	*) bad "GET /machine-config after PUT: $body" ;;
	esac
	expect 204 PUT /boot-source '{"boot_args":"console=ttyS0 reboot=k panic=1 pci=off microvm.test=api microvm.fio=/dev/vdb microvm.mmds=V2 microvm.mmdsip=169.254.170.2 microvm.mmdsget=/latest/meta-data,/latest/meta-data/instance-id quiet","initrd_path":"'"$initrd"'","kernel_image_path":"'"$kernel"'"}'
	expect 204 PUT /drives/0 '{"drive_id":"0","is_read_only":false,"is_root_device":false,"path_on_host":"'"$data"'"}'
	expect 204 PUT /drives/root_drive '{"drive_id":"root_drive","is_read_only":false,"is_root_device":true,"path_on_host":"'"$root"'"}'
	# CreateNetworkInterfacesHandler: one interface (AllowMMDS), id
	# "1" as the SDK numbers them; no vsocks (no call); ConfigMmdsHandler
	# with Config.MmdsAddress and MmdsVersion V2, and a SetMetadata
	# handler after it, as the SDK's users append it. Then Start().
	load_net_modules
	expect 204 PUT /network-interfaces/1 '{"guest_mac":"AA:FC:00:00:00:02","host_dev_name":"gotap0","iface_id":"1"}'
	expect 204 PUT /mmds/config '{"ipv4_address":"169.254.170.2","network_interfaces":["1"],"version":"V2"}'
	expect 204 PUT /mmds '{"latest":{"meta-data":{"instance-id":"i-gosdk","local-hostname":"gosdk0"}}}'
	expect 204 PUT /actions '{"action_type":"InstanceStart"}'
	wait_rounds
	# The store can change while the guest runs (PATCH, as the SDK's
	# UpdateMetadata); GET /mmds reads it back.
	expect 204 PATCH /mmds '{"latest":{"meta-data":{"local-hostname":null,"tag":"t1"}}}'
	expect 200 GET /mmds
	[ "$body" = '{"latest":{"meta-data":{"instance-id":"i-gosdk","tag":"t1"}}}' ] &&
		ok "GET /mmds after PATCH: $body" || bad "GET /mmds after PATCH: $body"
	# Shutdown(): SendCtrlAltDel, then Wait().
	expect 204 PUT /actions '{"action_type":"SendCtrlAltDel"}'
	wait_exit 1200
	[ "$status" = 0 ] && ok "microvm status 0 after SendCtrlAltDel" ||
		bad "microvm status $status after SendCtrlAltDel (want 0)"
	grep -q '^E2E-RESULT: PASS' "$work/console" && ok "guest E2E-RESULT: PASS" ||
		bad "guest did not report E2E-RESULT: PASS"
	# The guest read the SDK's metadata at its address, with a token.
	for row in "notoken:/latest 401" "token 200" \
		"/latest/meta-data 200 instance-id\nlocal-hostname" \
		"/latest/meta-data/instance-id 200 i-gosdk"; do
		# shellcheck disable=SC2086
		set -- $row
		mmds_expect "$work/console" "$@" && ok "$mmds_msg" ||
			bad "$mmds_msg"
	done
	ok "log file: $(wc -c <"$work/fc.log") byte(s)"
	rm -f "$sock"
}

# load_net_modules: L1's tap driver (microvm makes or opens the taps).
load_net_modules()
{
	[ -f /lib/modules/net.order ] || return 0
	for m in $(cat /lib/modules/net.order); do
		[ -d "/sys/module/$m" ] || insmod "/lib/modules/$m.ko" ||
			bad "insmod $m.ko"
	done
}

# flintlock_config FILE: infrastructure/microvm/firecracker's VmmConfig
# as encoding/json writes it (json.Marshal; field order of its struct),
# with the smt true it sets on amd64, its network interface (metadata
# requests allowed) and the V1 mmds-config naming it, which it always
# sets. The test's own boot_args: 2 CPUs as two threads of one core
# (the guest checks its topology) and what to read from MMDS.
flintlock_config()
{
	{
		printf '{'
		printf '"drives":[{"drive_id":"root","path_on_host":"%s","is_root_device":true,"is_read_only":false,"cache_type":"Unsafe"},' "$root"
		printf '{"drive_id":"data","path_on_host":"%s","is_root_device":false,"is_read_only":false,"cache_type":"Unsafe"}],' "$data"
		printf '"boot-source":{"kernel_image_path":"%s","initrd_path":"%s","boot_args":"console=ttyS0 ds=nocloud-net;s=http://169.254.169.254/latest/ i8042.dumbkbd i8042.noaux i8042.nomux i8042.nopnp microvm.cpus=2 microvm.fio=/dev/vdb microvm.mmds=V1 microvm.mmdsget=/latest,/latest/meta-data,/latest/user-data,/latest/vendor-data microvm.rounds=%s microvm.smt=1 microvm.test=api panic=1 pci=off quiet reboot=k"},' "$kernel" "$initrd" "$rounds"
		printf '"logger":{"log_path":"%s/firecracker.log","level":"Debug","show_level":true,"show_log_origin":true},' "$work"
		printf '"machine-config":{"vcpu_count":2,"mem_size_mib":256,"smt":true,"track_dirty_pages":false},'
		printf '"metrics":{"metrics_path":"%s/firecracker.metrics"},' "$work"
		printf '"mmds-config":{"version":"V1","network_interfaces":["eth0"]},'
		printf '"network-interfaces":[{"iface_id":"eth0","host_dev_name":"fltap0","guest_mac":"AA:FC:00:00:00:01"}]}'
	} >"$1"
}

# flintlock's firecracker provider (create.go): the log and metrics
# files made first, the metadata file ({"latest": spec.Metadata}, strings
# for cloud-init's nocloud-net), then firecracker --id UID --boot-timer
# --no-api --config-file FILE --metadata FILE, stdin empty. Its tap
# exists beforehand (flintlock's network service makes it).
replay_flintlock()
{
	uid=01HQ7ZJ6V3X2Q8K4W9N5T1R0YB
	load_net_modules
	ip tuntap add dev fltap0 mode tap 2>/dev/null ||
		ok "busybox ip has no tuntap: microvm makes the tap fltap0 (flintlock makes it first)"
	: >>"$work/firecracker.log"
	: >>"$work/firecracker.metrics"
	printf '{"latest":{"meta-data":"instance-id: %s\\nlocal-hostname: mvm0\\n","user-data":"#cloud-config\\nhostname: mvm0\\n"}}' \
		"$uid" >"$work/metadata.json"
	flintlock_config "$work/firecracker.cfg"
	start --id "$uid" --boot-timer --no-api \
		--config-file "$work/firecracker.cfg" \
		--metadata "$work/metadata.json"
	wait_rounds
	# The guest ends itself after its rounds (no API to end it with).
	wait_exit 1200
	[ "$status" = 0 ] && ok "microvm status 0 after the guest's reboot" ||
		bad "microvm status $status (want 0)"
	grep -q '^E2E-RESULT: PASS' "$work/console" && ok "guest E2E-RESULT: PASS" ||
		bad "guest did not report E2E-RESULT: PASS"
	# smt true: CPUs 0 and 1 are the two threads of one core.
	grep -q '^E2E-CHECK: topology: .*cores 0 0, 2 thread(s) per core' \
		"$work/console" && ok "smt true: the guest's CPUs 0-1 are one core's threads" ||
		bad "smt true: the guest saw no 2 threads per core"
	# What cloud-init's nocloud-net reads, as flintlock put it there.
	mmds_expect "$work/console" /latest 200 'meta-data\nuser-data' &&
		ok "$mmds_msg" || bad "$mmds_msg"
	mmds_expect "$work/console" /latest/meta-data 200 \
		"instance-id: $uid\nlocal-hostname: mvm0\n" &&
		ok "$mmds_msg" || bad "$mmds_msg"
	mmds_expect "$work/console" /latest/user-data 200 \
		'#cloud-config\nhostname: mvm0\n' && ok "$mmds_msg" || bad "$mmds_msg"
	mmds_expect "$work/console" /latest/vendor-data 404 &&
		ok "$mmds_msg" || bad "$mmds_msg"
	ok "log file: $(wc -c <"$work/firecracker.log") byte(s)"
}

case "$caller" in
kata) replay_kata ;;
gosdk) replay_gosdk ;;
flintlock) replay_flintlock ;;
*) bad "unknown caller '$caller'" ;;
esac
guest_results
echo "REPLAY-STDERR:"
cat "$work/stderr"
echo "REPLAY-SUMMARY: $fails failure(s)"
[ $fails -eq 0 ]
