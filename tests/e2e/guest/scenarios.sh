# SPDX-License-Identifier: Apache-2.0
# Scenarios of the L2 test guest, sourced by /init. Parameters come from
# the kernel command line as microvm.KEY=VALUE (no spaces in values):
#   microvm.test=boot|demo|shell|evil|api|net|netbench|vsockbench
#                         which scenario to run (evil: no
#                         virtio driver; evilblk drives the disks itself)
#   microvm.huge=N        evil: aliased huge requests in flight (default 4)
#   microvm.cpus=N        boot, api: expect N online CPUs
#   microvm.smt=1         with microvm.cpus: expect two threads per core
#                         (microvm --cpus N,smt=on, machine-config smt)
#   microvm.mem=MIB       boot: expect MemTotal a little below MIB MiB
#   microvm.stdin=1       boot: read the console up to an "E2E-IN:TEXT" line
#                         and print TEXT back
#   microvm.end=ACTION    poweroff | reboot | port:N | mmio:N | hang
# Output contract with the host (tests/e2e/boot-test.sh):
#   E2E-CHECK: ...        a check that passed
#   E2E-RESULT: FAIL why  one line per failed check
#   E2E-RESULT: PASS      all checks passed (printed once, last)
#   E2E-STDIN: TEXT       the TEXT of the E2E-IN: line read from the console
#   E2E-CMDLINE: ...      /proc/cmdline

E2E_EXIT_PORT=0xf4
E2E_EXIT_MMIO=0xf0100000
E2E_FAILS=0

e2e_fail()
{
	echo "E2E-RESULT: FAIL $*"
	E2E_FAILS=$((E2E_FAILS + 1))
}

e2e_ok()
{
	echo "E2E-CHECK: $*"
}

# e2e_param KEY: the value of microvm.KEY= on the kernel command line.
e2e_param()
{
	for e2e_word in $(cat /proc/cmdline); do
		case "$e2e_word" in
		microvm."$1"=*) echo "${e2e_word#*=}"; return 0 ;;
		esac
	done
	return 1
}

e2e_load_modules()
{
	# evilblk needs the devices with no driver bound.
	[ "$(e2e_param test)" != evil ] || return 0
	for m in $(cat /lib/modules/virtio.order); do
		insmod "/lib/modules/$m.ko" || e2e_fail "insmod $m.ko"
	done
}

e2e_check_cpus()
{
	want=$1
	got=$(nproc)
	online=$(cat /sys/devices/system/cpu/online)
	case "$online" in
	0) n_online=1 ;;
	0-*) n_online=$((${online#0-} + 1)) ;;
	*) n_online="?($online)" ;;
	esac
	if [ "$got" = "$want" ] && [ "$n_online" = "$want" ]; then
		e2e_ok "cpus: nproc=$got online=$online"
	else
		e2e_fail "cpus: nproc=$got online=$online, expected $want"
	fi
	if [ "$(uname -m)" = x86_64 ]; then
		e2e_check_topology "$online"
	fi
}

# x86 CPUID topology (microvm's cpuid_topo.c): one package and die; a
# core of its own per CPU, or with microvm.smt=1 (and more than one CPU)
# CPUs 2k and 2k+1 the two threads of core k, which share the caches
# below the last level; the last level, where the guest lists caches,
# shared by all online CPUs. Threads per core as lscpu counts them: the
# CPUs in cpu0's thread_siblings_list.
e2e_check_topology()
{
	online=$1 bad='' cores='' threads=1
	[ "$(e2e_param smt)" = 1 ] && [ "$online" != 0 ] && threads=2
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		t=$c/topology
		[ -d "$t" ] || continue
		n=${c##*cpu}
		sib=$n
		[ "$threads" = 1 ] || sib="$((n - n % 2))-$((n - n % 2 + 1))"
		[ "$(cat "$t/physical_package_id")" = 0 ] ||
			bad="$bad cpu$n:package=$(cat "$t/physical_package_id")"
		[ "$(cat "$t/die_id" 2>/dev/null || echo 0)" = 0 ] ||
			bad="$bad cpu$n:die=$(cat "$t/die_id")"
		[ "$(cat "$t/thread_siblings_list")" = "$sib" ] ||
			bad="$bad cpu$n:threads=$(cat "$t/thread_siblings_list")"
		cores="$cores $(cat "$t/core_id")"
		llc=$(ls -d "$c"/cache/index* 2>/dev/null | tail -n 1)
		[ -z "$llc" ] || [ "$(cat "$llc/shared_cpu_list")" = "$online" ] ||
			bad="$bad cpu$n:llc=$(cat "$llc/shared_cpu_list")"
		for i in $(ls -d "$c"/cache/index* 2>/dev/null | sed '$d'); do
			[ "$(cat "$i/shared_cpu_list")" = "$sib" ] ||
				bad="$bad cpu$n:${i##*/}=$(cat "$i/shared_cpu_list")"
		done
	done
	# Each core ID on exactly $threads CPUs.
	odd=$(echo "$cores" | tr ' ' '\n' | grep . | sort | uniq -c |
		awk -v t="$threads" '$1 != t { print $2; exit }')
	[ -z "$odd" ] || bad="$bad core-id-$odd-on-$(echo "$cores" |
		tr ' ' '\n' | grep -cx "$odd")-cpus"
	tpc=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)
	case "$tpc" in
	*-*) tpc=$((${tpc#*-} - ${tpc%-*} + 1)) ;;
	*) tpc=1 ;;
	esac
	[ "$tpc" = "$threads" ] || bad="$bad threads-per-core=$tpc"
	if [ -z "$bad" ]; then
		e2e_ok "topology: one package, cores$cores, $tpc thread(s) per core"
	else
		e2e_fail "topology:$bad"
	fi
}

# MemTotal is the RAM size less what the kernel keeps for itself (its
# image, struct pages, firmware areas): allow 48 MiB + 1/32 of the RAM.
e2e_check_mem()
{
	want_kib=$(($1 * 1024))
	low_kib=$((want_kib - 48 * 1024 - want_kib / 32))
	got_kib=$(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
	if [ -n "$got_kib" ] && [ "$got_kib" -gt "$low_kib" ] &&
	   [ "$got_kib" -le "$want_kib" ]; then
		e2e_ok "memory: MemTotal=${got_kib} kB for $1 MiB"
	else
		e2e_fail "memory: MemTotal=${got_kib} kB, expected" \
			"($low_kib, $want_kib] kB"
	fi
}

# e2e_dmesg_reject REGEX WHAT: one FAIL line per dmesg line matching
# REGEX, else a check line "dmesg: no WHAT".
e2e_dmesg_reject()
{
	bad=$(dmesg | grep -E "$1")
	if [ -z "$bad" ]; then
		e2e_ok "dmesg: no $2"
		return
	fi
	echo "$bad" | while IFS= read -r line; do
		echo "E2E-RESULT: FAIL dmesg: $line"
	done
	E2E_FAILS=$((E2E_FAILS + 1))
}

# Firmware complaints: our ACPI tables and boot data must be clean.
e2e_check_dmesg()
{
	e2e_dmesg_reject \
		'ACPI Error|ACPI BIOS Error|FW_BUG|\[Firmware Bug\]|BIOS bug' \
		"firmware errors"
}

# The host sends padding lines, then "E2E-IN:TEXT". Bytes that arrive
# before the guest's UART driver is up may be lost (the driver resets the
# FIFO), so the padding absorbs that and only the marked line counts.
e2e_check_stdin()
{
	# shellcheck disable=SC3045 # busybox ash has read -t
	while IFS= read -r -t 60 line; do
		case "$line" in
		*E2E-IN:*)
			echo "E2E-STDIN: ${line#*E2E-IN:}"
			e2e_ok "stdin: read the marked line"
			return
			;;
		esac
	done
	e2e_fail "stdin: no E2E-IN: line within 60 s"
}

e2e_report()
{
	if [ "$E2E_FAILS" -eq 0 ]; then
		echo "E2E-RESULT: PASS"
	else
		echo "E2E-RESULT: FAIL $E2E_FAILS check(s) failed"
	fi
}

e2e_end()
{
	action=$1
	case "$action" in
	poweroff) poweroff -f ;;
	reboot) reboot -f ;;
	port:*) outb "$E2E_EXIT_PORT" "${action#port:}" ;;
	mmio:*) devmem "$E2E_EXIT_MMIO" 8 "${action#mmio:}" ;;
	hang) while :; do sleep 3600; done ;;
	*) echo "E2E-RESULT: FAIL unknown end action '$action'" ;;
	esac
	sleep 5
	echo "E2E-RESULT: FAIL end action '$action' did not stop the VM"
	poweroff -f
}

# e2e_check_cpu_model: the CPU features the VMM adds to KVM's defaults
# reach the guest: the TSC-deadline timer and a processor brand string;
# and the one it takes away, nested virtualization (no svm, no vmx).
e2e_check_cpu_model()
{
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	if ! grep -qw tsc_deadline_timer /proc/cpuinfo; then
		e2e_fail "cpu: no tsc_deadline_timer in /proc/cpuinfo"
	elif grep -qw 'svm\|vmx' /proc/cpuinfo; then
		e2e_fail "cpu: the guest is offered nested virtualization" \
			"($(grep -ow 'svm\|vmx' /proc/cpuinfo | sort -u | tr '\n' ' '))"
	elif [ -z "$model" ] || echo "$model" | grep -q 'Hammer\|unknown'; then
		e2e_fail "cpu: no brand string (model name '$model')"
	else
		e2e_ok "cpu: tsc_deadline_timer, no svm/vmx, model name '$model'"
	fi
}

scenario_boot()
{
	echo "E2E-CMDLINE: $(cat /proc/cmdline)"
	if want=$(e2e_param cpus); then
		e2e_check_cpus "$want"
	fi
	e2e_check_cpu_model
	if want=$(e2e_param mem); then
		e2e_check_mem "$want"
	fi
	if [ "$(e2e_param stdin)" = 1 ]; then
		e2e_check_stdin
	fi
	e2e_check_dmesg
	e2e_report
}

scenario_demo()
{
	echo "Hello from a microvm guest: $(uname -sr)"
	echo "CPUs: $(nproc)   $(grep MemTotal /proc/meminfo)"
	echo "Command line: $(cat /proc/cmdline)"
	e2e_check_dmesg
	e2e_report
}

# A hostile driver: see guest/evilblk.c. Needs hugepages=N on the
# command line; its EVIL-CASE lines are the per-case verdicts.
scenario_evil()
{
	grep -q '^HugePages_Total: *[1-9]' /proc/meminfo ||
		e2e_fail "evil: no huge pages (boot with hugepages=N)"
	evilblk --huge "$(e2e_param huge || echo 4)"
	rc=$?
	if [ $rc -eq 0 ]; then
		e2e_ok "evilblk: every case passed"
	else
		e2e_fail "evilblk: exit status $rc"
	fi
	e2e_dmesg_reject 'BUG:|Oops|general protection|Call Trace' \
		"kernel errors"
	# The L1 wrapper samples microvm's VmHWM twice a second.
	sleep 1
	e2e_report
}

# The API guest (tests/e2e/api-test.sh drives microvm through its API):
# its root is the API's root drive (/dev/vda, root= from is_root_device);
# fio write+verify rounds run on the data drive (microvm.fio=DEV) while
# init prints a tick (E2E-TICK N) every 0.1 s, which stops while the VM
# is paused; microvm.fio=DEV,DEV... runs one such loop on each drive at
# once (tests/e2e/api-pause-l1.sh). Ctrl-Alt-Del (SIGINT to init,
# SendCtrlAltDel) ends it: the current fio rounds finish, each drive's
# rounds and failures are reported (E2E-FIO-ROUNDS: R failed F on DEV),
# and the guest reboots (reboot=k: through the keyboard controller),
# which ends microvm with status 0. Each round prints E2E-FIO-ROUND N bad
# B on DEV; a drive of no sectors (a placeholder) is waited on until an
# image is swapped in; microvm.rounds=N ends the guest so after N rounds
# of a drive, for a VMM started without an API (replay-test.sh).
e2e_api_end()
{
	echo "E2E-CAD: ctrl-alt-del seen"
	for b in /sys/block/vd*; do
		echo "E2E-SIZE: ${b##*/} $(cat "$b/size")"
	done
	touch /tmp/api-stop
	[ -z "$api_fio" ] || wait $api_fio
	for d in $api_devs; do
		d=${d#/dev/}
		r=$(cat "/tmp/api-rounds-$d" 2>/dev/null || echo 0)
		f=$(cat "/tmp/api-fails-$d" 2>/dev/null || echo 0)
		echo "E2E-FIO-ROUNDS: $r failed $f on $d"
		[ "$r" -gt 0 ] && [ "$f" -eq 0 ] ||
			e2e_fail "fio on $d: $r rounds, $f failed"
	done
	e2e_check_dmesg
	e2e_report
	reboot -f
	sleep 5
	poweroff -f
}

e2e_api_fio()
{
	local dev=$1 n=0 bad=0 rounds name=${1#/dev/}
	rounds=$(e2e_param rounds) || rounds=0
	# A placeholder drive has no sectors until the host swaps an image
	# in (PATCH /drives): wait for its capacity.
	while [ "$(cat "/sys/block/${dev#/dev/}/size" 2>/dev/null)" = 0 ] &&
	      [ ! -e /tmp/api-stop ]; do
		sleep 0.1
	done
	while [ ! -e /tmp/api-stop ]; do
		fio --name=api --filename="$dev" --rw=randwrite --bs=4k \
			--size=2M --offset=$(( (n % 8) * 2 ))M --direct=1 \
			--ioengine=psync --verify=crc32c --do_verify=1 \
			--output="/tmp/api-fio-$name.log" >/dev/null 2>&1 ||
			{ bad=$((bad + 1)); cat "/tmp/api-fio-$name.log"; }
		n=$((n + 1))
		echo $n >"/tmp/api-rounds-$name"
		echo $bad >"/tmp/api-fails-$name"
		echo "E2E-FIO-ROUND $n bad $bad on $name"
		# microvm.rounds=N: end the guest after N rounds (no API).
		if [ "$rounds" -gt 0 ] && [ $n -ge "$rounds" ]; then
			touch /tmp/api-stop
			kill -INT $$
		fi
	done
}

scenario_api()
{
	local i=0 dev m
	echo "E2E-CMDLINE: $(cat /proc/cmdline)"
	echo "E2E-ROOT: $(grep '^[^ ]* / ' /proc/mounts | tail -n 1)"
	dmesg | grep -iE 'i8042|serio|atkbd|keyboard' | sed 's/^/E2E-KBD: /'
	if want=$(e2e_param cpus); then
		e2e_check_cpus "$want"
	fi
	# flintlock's guests read their cloud-init data from the metadata
	# service on eth0.
	if e2e_param mmds >/dev/null; then
		for m in $(cat /lib/modules/net.order); do
			[ -d "/sys/module/$m" ] ||
				insmod "/lib/modules/$m.ko" || e2e_fail "insmod $m.ko"
		done
		ip addr add 10.0.3.2/24 dev eth0 && ip link set eth0 up ||
			e2e_fail "eth0: cannot configure"
		e2e_mmds
	fi
	# As an init does (busybox, systemd): Ctrl-Alt-Del becomes SIGINT
	# to init rather than an immediate restart by the kernel.
	echo 0 >/proc/sys/kernel/ctrl-alt-del
	trap e2e_api_end INT
	# A read-only root (Kata's image drive): fio's files go to a tmpfs.
	touch /tmp/api-rw 2>/dev/null || mount -t tmpfs tmpfs /tmp
	api_fio=
	api_devs=$(e2e_param fio | tr ',' ' ')
	for dev in $api_devs; do
		e2e_api_fio "$dev" &
		api_fio="$api_fio $!"
	done
	while :; do
		echo "E2E-TICK $i"
		i=$((i + 1))
		sleep 0.1
	done
}

# microvm.mmds=V1|V2 and microvm.mmdsget=PATH[,PATH...]: read microvm's
# metadata service at microvm.mmdsip (default 169.254.169.254) over eth0 (the route as
# Firecracker's guide adds it); with V2 one GET without a token (401)
# and a session token first. One line per request, "E2E-MMDS: PATH
# status S md5 M" (M the body's md5; a "json:" PATH asks for
# application/json), for the host to compare with what it put there.
e2e_mmds()
{
	local ver p tok=
	ver=$(e2e_param mmds) || return 0
	mmds_ip=$(e2e_param mmdsip || echo 169.254.169.254)
	ip route add "$mmds_ip" dev eth0 ||
		e2e_fail "mmds: ip route add $mmds_ip dev eth0"
	if [ "$ver" = V2 ]; then
		e2e_mmds_req notoken:/latest GET /latest
		e2e_mmds_req token PUT /latest/api/token \
			"X-metadata-token-ttl-seconds: 60"
		tok=$(tail -c 43 /tmp/mmds.resp)
	fi
	for p in $(e2e_param mmdsget | tr ',' ' '); do
		case "$p" in
		json:*) e2e_mmds_req "$p" GET "${p#json:}" \
				"Accept: application/json" \
				${tok:+"X-metadata-token: $tok"} ;;
		*) e2e_mmds_req "$p" GET "$p" ${tok:+"X-metadata-token: $tok"} ;;
		esac
	done
}

# e2e_mmds_req LABEL METHOD PATH [HEADER...]: one request (netpeer http).
e2e_mmds_req()
{
	local label=$1 m=$2 path=$3 len st
	shift 3
	if netpeer http "$m" "$mmds_ip" "$path" "$@" >/tmp/mmds.resp \
		2>/tmp/mmds.err; then
		st=$(head -n 1 /tmp/mmds.resp | cut -d' ' -f2)
		len=$(grep -i '^content-length:' /tmp/mmds.resp | head -n 1 |
			tr -dc 0-9)
		echo "E2E-MMDS: $label status $st md5" \
			"$(tail -c "${len:-0}" /tmp/mmds.resp | md5sum | cut -d' ' -f1)"
	else
		echo "E2E-MMDS: $label FAIL $(cat /tmp/mmds.err)"
	fi
}

# e2e.net.*: eth0 (microvm --net) at 10.0.2.2/24, the host's tap at
# 10.0.2.1. One receiver per CPU (ports 5001 + CPU, pinned: its ACKs
# leave on that CPU's transmit queue, and the tap sends the flow back on
# the same queue), ping to the host, then one sender per CPU to the
# host's receivers (ports 6001 + CPU, pinned: each transmit queue carries
# a flow). microvm.netbytes=N bytes each way per CPU (default 4 MiB).
# netpeer (guest/netpeer.c) checks every byte and prints NETPEER: lines.
scenario_net()
{
	local m c bytes cpus pids i
	# net.order lists virtio_net's dependencies too: some are in.
	for m in $(cat /lib/modules/net.order); do
		[ -d "/sys/module/$m" ] ||
			insmod "/lib/modules/$m.ko" || e2e_fail "insmod $m.ko"
	done
	bytes=$(e2e_param netbytes || echo 4194304)
	cpus=$(nproc)
	ip link set lo up
	if ip addr add 10.0.2.2/24 dev eth0 && ip link set eth0 up; then
		e2e_ok "eth0 up: mac $(cat /sys/class/net/eth0/address)," \
			"$(ls -d /sys/class/net/eth0/queues/rx-* | wc -l) rx" \
			"and $(ls -d /sys/class/net/eth0/queues/tx-* | wc -l) tx queues"
	else
		e2e_fail "eth0: cannot configure (interfaces: $(ls /sys/class/net))"
	fi
	echo "E2E-NET-MAC: $(cat /sys/class/net/eth0/address 2>/dev/null)"
	pids=
	for c in $(seq 0 $((cpus - 1))); do
		netpeer recv $((5001 + c)) "$bytes" $((11 + c)) "$c" &
		pids="$pids $!"
	done
	# The host brings its side of the link up once microvm has the tap.
	i=0
	while ! ping -c 1 -W 2 10.0.2.1 >/dev/null 2>&1 && [ $i -lt 60 ]; do
		i=$((i + 1))
	done
	if ping -c 3 -W 5 10.0.2.1 >/tmp/ping 2>&1; then
		e2e_ok "ping 10.0.2.1: $(grep 'packets transmitted' /tmp/ping)"
	else
		e2e_fail "ping 10.0.2.1: $(tail -n 2 /tmp/ping | tr '\n' ' ')"
	fi
	e2e_mmds
	for m in $pids; do
		wait "$m" || e2e_fail "a receiver failed (its NETPEER: line)"
	done
	pids=
	for c in $(seq 0 $((cpus - 1))); do
		netpeer send 10.0.2.1 $((6001 + c)) "$bytes" $((21 + c)) "$c" &
		pids="$pids $!"
	done
	for m in $pids; do
		wait "$m" || e2e_fail "a sender failed (its NETPEER: line)"
	done
	e2e_dmesg_reject 'BUG:|Oops|Call Trace|virtio_net.*(error|fail)' \
		"kernel or virtio_net errors"
	e2e_check_dmesg
	e2e_report
}

# net-bench.sh's guest (tests/bench/net-bench-l1.sh): eth0 at
# 10.0.2.2/24 and an iperf3 server (the benchmark's initramfs adds
# iperf3), then it waits for the VMM to be stopped.
scenario_netbench()
{
	local m
	for m in $(cat /lib/modules/net.order); do
		[ -d "/sys/module/$m" ] ||
			insmod "/lib/modules/$m.ko" || e2e_fail "insmod $m.ko"
	done
	ip link set lo up
	ip addr add 10.0.2.2/24 dev eth0 && ip link set eth0 up &&
		iperf3 -s -D && echo "NETBENCH-READY" ||
		e2e_fail "netbench: no eth0 or no iperf3"
	while :; do
		sleep 60
	done
}

# vsock-bench.sh's guest (tests/bench/vsock-bench-l1.sh): the AF_VSOCK
# driver and an echo listener on port 1024 (vsockpeer), then it waits
# for the VMM to be stopped.
scenario_vsockbench()
{
	local m
	for m in $(cat /lib/modules/vsock.order); do
		[ -d "/sys/module/$m" ] ||
			insmod "/lib/modules/$m.ko" || e2e_fail "insmod $m.ko"
	done
	vsockpeer listen 1024 &
	sleep 1
	echo "VSOCKBENCH-READY"
	while :; do
		sleep 60
	done
}

scenario_shell()
{
	echo "Guest shell; 'exit' powers the guest off."
	setsid cttyhack sh -l
}

e2e_main()
{
	test=$(e2e_param test) || test=boot
	case "$test" in
	boot | demo | shell | disk | evil | api | net | netbench | vsockbench)
		"scenario_$test" ;;
	*) e2e_fail "unknown scenario '$test'" ;;
	esac
	e2e_end "$(e2e_param end || echo poweroff)"
}

# The disk scenario (microvm.test=disk) and e2e_root_switch.
[ -f /e2e/scenarios-disk.sh ] && . /e2e/scenarios-disk.sh
