// SPDX-License-Identifier: Apache-2.0
/*
 * The in-kernel GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3) and ITS
 * (KVM_DEV_TYPE_ARM_VGIC_ITS), through the KVM device API
 * (Documentation/virt/kvm/devices/arm-vgic-v3.rst, arm-vgic-its.rst).
 * The ITS turns a PCI device's MSI write (requester ID as device ID,
 * KVM_MSI_VALID_DEVID in its route) into an LPI.
 */
#include "vgic.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "layout.h"
#include "vmm/vm.h"

int arm64_dev_attr(int fd, uint32_t group, uint64_t attr, void *val,
		   bool set)
{
	struct kvm_device_attr a = {
		.group = group,
		.attr = attr,
		.addr = (uintptr_t)val,
	};

	return ioctl(fd, set ? KVM_SET_DEVICE_ATTR : KVM_GET_DEVICE_ATTR,
		     &a) < 0 ?
		       -errno :
		       0;
}

static int dev_attr(int fd, uint32_t group, uint64_t attr, void *val)
{
	return arm64_dev_attr(fd, group, attr, val, true);
}

static int dev_create(struct vm *vm, uint32_t type, int slot)
{
	struct kvm_create_device cd = { .type = type };

	if (ioctl(vm->vm_fd, KVM_CREATE_DEVICE, &cd) < 0)
		return -errno;
	vm->dev_fds[slot] = (int)cd.fd;
	if (vm->nr_dev_fds <= (unsigned int)slot)
		vm->nr_dev_fds = slot + 1;
	return 0;
}

int arm64_vgic_create(struct vm *vm, char *err, size_t errlen)
{
	uint64_t dist = ARM64_GICD_BASE, redist = ARM64_GICR_BASE;
	uint64_t its = ARM64_GIC_ITS_BASE;
	uint32_t nr_irqs = ARM64_GIC_NR_IRQS;
	const char *what;
	int gic, ret;

	what = "KVM_CREATE_DEVICE (GICv3; the host needs a GICv3)";
	ret = dev_create(vm, KVM_DEV_TYPE_ARM_VGIC_V3, ARM64_VGIC_FD);
	if (ret)
		goto fail;
	gic = vm->dev_fds[ARM64_VGIC_FD];
	what = "GICv3 distributor address";
	ret = dev_attr(gic, KVM_DEV_ARM_VGIC_GRP_ADDR,
		       KVM_VGIC_V3_ADDR_TYPE_DIST, &dist);
	if (ret)
		goto fail;
	what = "GICv3 redistributor address";
	ret = dev_attr(gic, KVM_DEV_ARM_VGIC_GRP_ADDR,
		       KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist);
	if (ret)
		goto fail;
	what = "GICv3 interrupt count";
	ret = dev_attr(gic, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &nr_irqs);
	if (ret)
		goto fail;
	what = "KVM_CREATE_DEVICE (GICv3 ITS)";
	ret = dev_create(vm, KVM_DEV_TYPE_ARM_VGIC_ITS, ARM64_ITS_FD);
	if (ret)
		goto fail;
	what = "ITS address";
	ret = dev_attr(vm->dev_fds[ARM64_ITS_FD], KVM_DEV_ARM_VGIC_GRP_ADDR,
		       KVM_VGIC_ITS_ADDR_TYPE, &its);
	if (ret)
		goto fail;
	what = "ITS init";
	ret = dev_attr(vm->dev_fds[ARM64_ITS_FD], KVM_DEV_ARM_VGIC_GRP_CTRL,
		       KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

int arm64_vgic_init(struct vm *vm, char *err, size_t errlen)
{
	int ret;

	ret = dev_attr(vm->dev_fds[ARM64_VGIC_FD], KVM_DEV_ARM_VGIC_GRP_CTRL,
		       KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);
	if (ret)
		snprintf(err, errlen, "GICv3 init (%u vCPUs): %s", vm->ncpus,
			 strerror(-ret));
	return ret;
}

bool arm64_vgic_has_its(const struct vm *vm)
{
	return vm->nr_dev_fds > ARM64_ITS_FD;
}
