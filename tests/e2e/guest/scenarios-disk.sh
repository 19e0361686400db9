# SPDX-License-Identifier: Apache-2.0
# Disk scenario of the L2 test guest (sourced by scenarios.sh): the guest
# runs from an ext4 root on a virtio-blk disk, writes patterns through
# O_DIRECT and the page cache, probes a read-only disk and the GET_ID
# serials, runs a multi-queue fio write/verify job pinned one job per CPU
# and checks where each queue's MSI-X interrupts land. The host side
# (tests/e2e/disk-test.sh) builds the images and checks them afterwards.
# Parameters (kernel command line; all optional but microvm.disks):
#   root=/dev/vdX            initramfs: mount it, switch_root to /sbin/init
#   microvm.token=T          the root disk's /e2e/token holds T
#   microvm.transport=pci|mmio   the bus every disk must sit on
#   microvm.disks=NAME:SECTORS:rw|ro:SERIAL:QUEUES,...  what each disk
#                            must look like; SERIAL "-" means the derived
#                            "microvm-" serial (distinct for each disk)
#   microvm.pattern=DISK:OFFA:OFFB  /e2e/pattern-a written with O_DIRECT
#                            at byte OFFA, /e2e/pattern-b through the page
#                            cache and fsync at OFFB, both read back
#   microvm.fio=DISK:JOBS:OFFSET:SIZE  fio randwrite + crc32c verify, job
#                            N on CPU N over SIZE bytes at OFFSET + N*SIZE
#   microvm.irq=DISK         per-queue MSI-X checks around the fio run
# Extra output: E2E-IRQ: lines (per-queue interrupt counts per CPU) and
# E2E-FIO: lines (fio's per-job summary).

# e2e_root_switch: with root= on the command line, mount that disk and
# hand over to its /sbin/init (the initramfs /init calls this after the
# virtio modules are loaded; without root= it returns).
e2e_root_switch()
{
	local root='' word i=0
	for word in $(cat /proc/cmdline); do
		case "$word" in
		root=*) root=${word#root=} ;;
		esac
	done
	[ -n "$root" ] || return 0
	while [ ! -b "$root" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	mkdir -p /newroot
	if mount -t ext4 "$root" /newroot; then
		for fs in dev proc sys; do
			mount --move "/$fs" "/newroot/$fs"
		done
		exec switch_root /newroot /sbin/init
	fi
	e2e_fail "root: cannot mount $root (ext4)"
	e2e_report
	e2e_end "$(e2e_param end || echo poweroff)"
}

e2e_disk_check_root()
{
	local want dev fs opts
	read -r dev _ fs opts _ <<-EOF
	$(grep '^[^ ]* / ' /proc/mounts | tail -n 1)
	EOF
	case "$dev $fs $opts" in
	"/dev/vda ext4 rw"*) e2e_ok "root: / is /dev/vda, ext4, read-write" ;;
	*) e2e_fail "root: / is '$dev $fs $opts', expected /dev/vda ext4 rw" ;;
	esac
	want=$(e2e_param token) || return 0
	if [ "$(cat /e2e/token 2>/dev/null)" = "$want" ]; then
		e2e_ok "root: /e2e/token from the disk matches"
	else
		e2e_fail "root: /e2e/token is '$(cat /e2e/token 2>&1)'," \
			"expected '$want'"
	fi
}

# e2e_disk_check_one NAME SECTORS MODE SERIAL QUEUES TRANSPORT
e2e_disk_check_one()
{
	local name=$1 sectors=$2 mode=$3 serial=$4 queues=$5 bus=$6
	local sys=/sys/block/$1 got path ro=0

	if [ ! -b "/dev/$name" ] || [ ! -d "$sys" ]; then
		e2e_fail "disk $name: no such block device"
		return
	fi
	got=$(cat "$sys/size")
	[ "$got" = "$sectors" ] && e2e_ok "disk $name: $got sectors" ||
		e2e_fail "disk $name: $got sectors, expected $sectors"
	[ "$mode" = ro ] && ro=1
	got=$(cat "$sys/ro")
	[ "$got" = $ro ] && e2e_ok "disk $name: ro=$got" ||
		e2e_fail "disk $name: ro=$got, expected $ro"
	got=$(cat "$sys/serial" 2>&1)
	if [ "$serial" = - ]; then
		if echo "$got" | grep -qE '^microvm-[0-9a-f]{12}$'; then
			e2e_ok "disk $name: derived serial $got"
			E2E_DISK_SERIALS="$E2E_DISK_SERIALS $got"
		else
			e2e_fail "disk $name: serial '$got', expected microvm-<12 hex>"
		fi
	elif [ "$got" = "$serial" ]; then
		e2e_ok "disk $name: serial $got"
	else
		e2e_fail "disk $name: serial '$got', expected '$serial'"
	fi
	got=$(ls "$sys/mq" | wc -l)
	[ "$got" = "$queues" ] && e2e_ok "disk $name: $got blk-mq queues" ||
		e2e_fail "disk $name: $got blk-mq queues, expected $queues"
	path=$(readlink -f "$sys/device")
	case "$bus:$path" in
	pci:/sys/devices/pci0000:*/virtio*) ;;
	mmio:/sys/devices/*/LNRO0005:*/virtio*) ;;
	*:*) e2e_fail "disk $name: device $path is not on $bus"; return ;;
	esac
	e2e_ok "disk $name: on $bus ($path)"
}

e2e_disk_check_disks()
{
	local spec bus d n
	spec=$(e2e_param disks) || { e2e_fail "no microvm.disks="; return; }
	bus=$(e2e_param transport) || bus=pci
	E2E_DISK_SERIALS=
	for d in $(echo "$spec" | tr ',' ' '); do
		# shellcheck disable=SC2046
		e2e_disk_check_one $(echo "$d" | tr ':' ' ') "$bus"
	done
	n=$(echo $E2E_DISK_SERIALS | wc -w)
	[ "$(echo $E2E_DISK_SERIALS | tr ' ' '\n' | sort -u | wc -l)" = "$n" ] &&
		e2e_ok "disks: $n derived serials, all distinct" ||
		e2e_fail "disks: derived serials not distinct:$E2E_DISK_SERIALS"
}

# e2e_disk_same DEV OFFSET FILE [DDFLAGS]: the bytes of DEV at OFFSET are
# FILE's (read with dd iflag=skip_bytes,count_bytes,DDFLAGS).
e2e_disk_same()
{
	local len
	len=$(stat -c %s "$3")
	dd if="$1" bs=256k skip="$2" count="$len" \
		iflag=skip_bytes,count_bytes${4:+,$4} 2>/dev/null |
		cmp -s - "$3"
}

e2e_disk_pattern()
{
	local spec dev offa offb
	spec=$(e2e_param pattern) || return 0
	set -- $(echo "$spec" | tr ':' ' ')
	dev=/dev/$1 offa=$2 offb=$3
	# 256 KiB buffers: large enough to come from mmap, so page aligned.
	if dd if=/e2e/pattern-a of="$dev" bs=256k seek="$offa" \
	      oflag=direct,seek_bytes 2>/tmp/dd.err; then
		e2e_ok "pattern-a: written with O_DIRECT at $offa"
	else
		e2e_fail "pattern-a: O_DIRECT write failed: $(cat /tmp/dd.err)"
	fi
	e2e_disk_same "$dev" "$offa" /e2e/pattern-a direct &&
		e2e_ok "pattern-a: O_DIRECT read-back matches" ||
		e2e_fail "pattern-a: O_DIRECT read-back differs"
	if dd if=/e2e/pattern-b of="$dev" bs=4k seek="$offb" \
	      oflag=seek_bytes conv=fsync 2>/tmp/dd.err; then
		e2e_ok "pattern-b: written through the page cache at $offb, fsync"
	else
		e2e_fail "pattern-b: buffered write failed: $(cat /tmp/dd.err)"
	fi
	echo 3 >/proc/sys/vm/drop_caches
	e2e_disk_same "$dev" "$offb" /e2e/pattern-b &&
		e2e_ok "pattern-b: read-back after drop_caches matches" ||
		e2e_fail "pattern-b: read-back after drop_caches differs"
	e2e_disk_same "$dev" "$offa" /e2e/pattern-a &&
		e2e_ok "pattern-a: buffered read-back after drop_caches matches" ||
		e2e_fail "pattern-a: buffered read-back after drop_caches differs"
}

# Every read-only disk (from microvm.disks) refuses a raw write and
# reads back what the host put there (/e2e/ro-content).
e2e_disk_readonly()
{
	local d name
	for d in $(e2e_param disks | tr ',' ' '); do
		case "$d" in
		*:ro:*) name=${d%%:*} ;;
		*) continue ;;
		esac
		if dd if=/dev/zero of="/dev/$name" bs=256k count=1 \
		      oflag=direct 2>/tmp/dd.err; then
			e2e_fail "disk $name: a raw write to the read-only disk succeeded"
		else
			e2e_ok "disk $name: raw write refused ($(tail -n 1 /tmp/dd.err))"
		fi
		e2e_disk_same "/dev/$name" 0 /e2e/ro-content direct &&
			e2e_ok "disk $name: content is the host's" ||
			e2e_fail "disk $name: content differs from the host's"
	done
}

# e2e_disk_irq_table DISK: "QUEUE IRQ CHIP COUNT_CPU0 COUNT_CPU1 ..." for
# each request queue interrupt of DISK's virtio device.
e2e_disk_irq_table()
{
	local vdev
	vdev=$(readlink -f "/sys/block/$1/device")
	awk -v pat="^${vdev##*/}-req[.][0-9]+\$" '
	NR == 1 { ncpu = NF; next }
	$NF ~ pat {
		q = $NF; sub(/.*[.]/, "", q)
		irq = $1; sub(/:/, "", irq)
		line = q " " irq " " $(ncpu + 2)
		for (i = 2; i <= ncpu + 1; i++)
			line = line " " $i
		print line
	}' /proc/interrupts | sort -n
}

# e2e_disk_irq_check DISK BEFORE AFTER: each request queue has its own
# MSI-X vector, and the interrupts of the run land on the CPU that its
# effective affinity names, queue N on CPU N.
e2e_disk_irq_check()
{
	local disk=$1 queues ncpu msi
	queues=$(ls "/sys/block/$disk/mq" | wc -l)
	ncpu=$(nproc)
	# MSI-X vectors are listed in the PCI function's msi_irqs directory.
	msi=$(readlink -f "/sys/block/$disk/device/..")/msi_irqs
	awk -v q="$queues" -v ncpu="$ncpu" -v disk="$disk" -v msi="$msi" '
	FNR == NR { for (i = 4; i <= NF; i++) before[$1, i] = $i; next }
	{
		eff = ""
		f = "/proc/irq/" $2 "/effective_affinity_list"
		getline eff < f; close(f)
		line = "E2E-IRQ: " disk " req." $1 " irq " $2 " " $3 \
			" effective-cpu " eff " delta-per-cpu"
		other = 0; mine = 0
		for (i = 4; i <= NF; i++) {
			d = $i - before[$1, i]
			line = line " " d
			if (i - 4 == eff + 0 && eff ~ /^[0-9]+$/)
				mine = d
			else
				other += d
		}
		print line
		if (eff !~ /^[0-9]+$/)
			print "E2E-RESULT: FAIL irq: req." $1 " effective affinity \"" eff "\" is not one CPU"
		else if (mine == 0)
			print "E2E-RESULT: FAIL irq: req." $1 " took no interrupt on its CPU " eff
		else if (other != 0)
			print "E2E-RESULT: FAIL irq: req." $1 " took " other " interrupts off its CPU " eff
		else
			print "E2E-CHECK: irq: req." $1 " (irq " $2 ") took " mine " interrupts, all on CPU " eff
		if (q == ncpu && eff != $1)
			print "E2E-RESULT: FAIL irq: req." $1 " is on CPU " eff ", expected CPU " $1
		mode = ""
		f = msi "/" $2
		getline mode < f; close(f)
		if (mode != "msix")
			print "E2E-RESULT: FAIL irq: req." $1 " irq " $2 " is not an MSI-X vector (" f ": \"" mode "\")"
		if (seen_irq[$2]++)
			print "E2E-RESULT: FAIL irq: irq " $2 " serves two queues"
		if (eff ~ /^[0-9]+$/ && mine > 0)
			cpus[eff] = 1
		n++
	}
	END {
		if (n != q)
			print "E2E-RESULT: FAIL irq: " n " req interrupts for " q " queues"
		else
			print "E2E-CHECK: irq: " n " queues, " n " distinct vectors"
		c = 0
		for (k in cpus)
			c++
		print "E2E-IRQ: " disk " interrupts of the run landed on " c " CPUs"
		if (q > 1 && c < 2)
			print "E2E-RESULT: FAIL irq: interrupts on " c " CPU(s) only"
	}' "$2" "$3" >/tmp/irq.out
	cat /tmp/irq.out
	E2E_FAILS=$((E2E_FAILS + $(grep -c '^E2E-RESULT: FAIL' /tmp/irq.out)))
}

e2e_disk_fio()
{
	local spec dev jobs off size rc ok
	spec=$(e2e_param fio) || return 0
	set -- $(echo "$spec" | tr ':' ' ')
	dev=/dev/$1 jobs=$2 off=$3 size=$4
	fio --name=mq --filename="$dev" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --iodepth_batch_submit=8 \
		--iodepth_batch_complete_min=8 --numjobs="$jobs" \
		--size="$size" --offset="$off" --offset_increment="$size" \
		--verify=crc32c --verify_fatal=1 \
		--cpus_allowed="0-$((jobs - 1))" --cpus_allowed_policy=split \
		>/tmp/fio.out 2>&1
	rc=$?
	ok=$(grep -c ': err= 0: ' /tmp/fio.out)
	grep -E ': err=|^ *(write|read): IOPS' /tmp/fio.out |
		sed 's/^ */E2E-FIO: /'
	if [ $rc -eq 0 ] && [ "$ok" = "$jobs" ] &&
	   ! grep -qE 'err= *[1-9]|verify failed|bad magic' /tmp/fio.out; then
		e2e_ok "fio: $jobs jobs of randwrite + crc32c verify, err= 0 each"
	else
		sed 's/^/E2E-FIO: /' /tmp/fio.out
		e2e_fail "fio: status $rc, $ok of $jobs jobs with err= 0"
	fi
}

# Files the host checks with debugfs and e2fsck after power-off; then /
# goes read-only so the file system is clean when the guest stops.
e2e_disk_write_root()
{
	local i=1
	mkdir -p /e2e/written.d
	while [ $i -le 100 ]; do
		echo "file $i" >/e2e/written.d/f$i
		i=$((i + 1))
	done
	if dd if=/e2e/ro-content of=/e2e/written bs=64k 2>/tmp/dd.err && sync; then
		e2e_ok "root: wrote /e2e/written and 100 small files, sync"
	else
		e2e_fail "root: writing files failed: $(cat /tmp/dd.err)"
	fi
}

e2e_disk_check_dmesg()
{
	e2e_dmesg_reject 'I/O error|EXT4-fs (error|warning)|blk_update_request|Buffer I/O|read-only block-device' \
		"block or ext4 errors"
}

scenario_disk()
{
	local want irqdisk
	echo "E2E-CMDLINE: $(cat /proc/cmdline)"
	if want=$(e2e_param cpus); then
		e2e_check_cpus "$want"
	fi
	e2e_disk_check_root
	e2e_disk_check_disks
	e2e_disk_pattern
	e2e_disk_readonly
	irqdisk=$(e2e_param irq) && e2e_disk_irq_table "$irqdisk" >/tmp/irq.before
	e2e_disk_fio
	if [ -n "$irqdisk" ]; then
		e2e_disk_irq_table "$irqdisk" >/tmp/irq.after
		e2e_disk_irq_check "$irqdisk" /tmp/irq.before /tmp/irq.after
	fi
	e2e_disk_write_root
	e2e_check_dmesg
	e2e_disk_check_dmesg
	mount -o remount,ro / || e2e_fail "root: cannot remount / read-only"
	e2e_report
}
