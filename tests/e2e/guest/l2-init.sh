#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the L2 test guest: mounts the kernel file systems, loads the
# virtio modules, then runs the scenario that "microvm.test=NAME" on the
# kernel command line names (see scenarios.sh), which ends the guest.
# With root=/dev/vdX it first switches to that disk (scenarios-disk.sh).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run

. /e2e/scenarios.sh
e2e_load_modules
e2e_root_switch
e2e_main
