#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /sbin/init on the ext4 root disk that tests/e2e/disk-test.sh builds: the
# L2 initramfs has loaded the virtio modules, mounted /dev/vda and
# switch_root'ed here (e2e_root_switch in scenarios-disk.sh), so from now
# on every file the scenario reads comes from the virtio-blk disk.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
[ -e /proc/self ] || mount -t proc proc /proc
[ -e /sys/block ] || mount -t sysfs sysfs /sys
[ -e /dev/console ] || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm

. /e2e/scenarios.sh
e2e_main
