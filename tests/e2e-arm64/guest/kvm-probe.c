// SPDX-License-Identifier: Apache-2.0
/*
 * Runs inside the arm64 L1: the KVM calls the arm64 microvm will need first,
 * each reported on one "KVM-PROBE:" line, then "KVM-PROBE: PASS" or
 * "KVM-PROBE: FAIL <step>" (exit 1). Opens /dev/kvm, checks the API version,
 * creates a VM, a vCPU initialised with KVM_ARM_PREFERRED_TARGET, and the
 * in-kernel GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3), as the machine code will.
 * Built static with aarch64-linux-gnu-gcc (tests/e2e-arm64/prepare.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fail(const char *step)
{
	printf("KVM-PROBE: FAIL %s: %s\n", step, strerror(errno));
	return 1;
}

int main(void)
{
	struct kvm_create_device gic = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	struct kvm_vcpu_init init;
	int kvm, vm, vcpu, api, ipa;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return fail("open /dev/kvm");
	api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	printf("KVM-PROBE: api version %d\n", api);
	if (api != KVM_API_VERSION) {
		errno = EPROTO;
		return fail("KVM_GET_API_VERSION");
	}
	ipa = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_ARM_VM_IPA_SIZE);
	printf("KVM-PROBE: max IPA bits %d\n", ipa);
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	printf("KVM-PROBE: vm fd %d\n", vm);
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	memset(&init, 0, sizeof(init));
	if (ioctl(vm, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		return fail("KVM_ARM_PREFERRED_TARGET");
	printf("KVM-PROBE: preferred target %u\n", init.target);
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	if (ioctl(vcpu, KVM_ARM_VCPU_INIT, &init) < 0)
		return fail("KVM_ARM_VCPU_INIT");
	printf("KVM-PROBE: vcpu 0 initialised (PSCI 0.2)\n");
	if (ioctl(vm, KVM_CREATE_DEVICE, &gic) < 0)
		return fail("KVM_CREATE_DEVICE VGIC_V3");
	printf("KVM-PROBE: vgic-v3 device fd %u\n", gic.fd);
	printf("KVM-PROBE: PASS\n");
	return 0;
}
