// SPDX-License-Identifier: Apache-2.0
/*
 * arm64 snapshot state: not there yet. Every entry point refuses with one
 * message, so PUT /snapshot/create and --restore say so instead of
 * writing or loading half a machine.
 */
#include <errno.h>
#include <stdio.h>

#include "snapshot/snap.h"
#include "vmm/arch.h"

const uint32_t arch_snap_id = SNAP_ARCH_AARCH64;

static int refuse(char *err, size_t errlen)
{
	snprintf(err, errlen, "snapshots of arm64 machines are not "
		 "supported yet");
	return -EOPNOTSUPP;
}

int arch_snapshot_cpu_save(struct vm *vm, struct snap_writer *w, char *err,
			   size_t errlen)
{
	(void)vm;
	(void)w;
	return refuse(err, errlen);
}

int arch_snapshot_cpu_check(struct vm *vm, struct snap_reader *r, char *err,
			    size_t errlen)
{
	(void)vm;
	(void)r;
	return refuse(err, errlen);
}

int arch_snapshot_vm_save(struct vm *vm, struct snap_writer *w, char *err,
			  size_t errlen)
{
	(void)vm;
	(void)w;
	return refuse(err, errlen);
}

int arch_snapshot_vm_load(struct vm *vm, struct snap_reader *r, char *err,
			  size_t errlen)
{
	(void)vm;
	(void)r;
	return refuse(err, errlen);
}

int arch_snapshot_vcpu_save(struct vcpu *vcpu, struct snap_writer *w,
			    char *err, size_t errlen)
{
	(void)vcpu;
	(void)w;
	return refuse(err, errlen);
}

int arch_snapshot_vcpu_load(struct vcpu *vcpu, struct snap_reader *r,
			    char *err, size_t errlen)
{
	(void)vcpu;
	(void)r;
	return refuse(err, errlen);
}
