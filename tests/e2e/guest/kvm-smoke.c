// SPDX-License-Identifier: Apache-2.0
/*
 * kvm-smoke: the smallest KVM user, for checking that a /dev/kvm works.
 * "--check" only creates a VM. Otherwise it runs a real-mode guest that
 * writes VALUE to port 0xf4 and halts, and exits with the value the guest
 * wrote, so the e2e harness can test itself without the VMM under test.
 *
 * Usage: kvm-smoke [--device PATH] [--check | VALUE]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define SMOKE_MEM_SIZE 0x10000UL
#define SMOKE_CODE_ADDR 0x1000UL
#define SMOKE_EXIT_PORT 0xf4

static int smoke_fail(const char *what)
{
	fprintf(stderr, "kvm-smoke: %s: %s\n", what, strerror(errno));
	return 2;
}

static int smoke_check(const char *dev)
{
	int kvm, vm;

	kvm = open(dev, O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return smoke_fail(dev);
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		fprintf(stderr, "kvm-smoke: %s: unexpected KVM API version\n",
			dev);
		close(kvm);
		return 2;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		smoke_fail("KVM_CREATE_VM");
		close(kvm);
		return 2;
	}
	close(vm);
	close(kvm);
	return 0;
}

static int smoke_run_vcpu(int kvm, int vm, uint8_t *mem, unsigned int value)
{
	/* mov al, VALUE; out 0xf4, al; hlt */
	const uint8_t code[] = { 0xb0, (uint8_t)value, 0xe6, SMOKE_EXIT_PORT,
				 0xf4 };
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = SMOKE_MEM_SIZE,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int vcpu, run_size;

	memcpy(mem + SMOKE_CODE_ADDR, code, sizeof(code));
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return smoke_fail("KVM_SET_USER_MEMORY_REGION");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return smoke_fail("KVM_CREATE_VCPU");
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(*run))
		return smoke_fail("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu, 0);
	if (run == MAP_FAILED)
		return smoke_fail("mmap kvm_run");
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return smoke_fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return smoke_fail("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = SMOKE_CODE_ADDR;
	regs.rflags = 0x2;
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return smoke_fail("KVM_SET_REGS");
	if (ioctl(vcpu, KVM_RUN, 0) < 0)
		return smoke_fail("KVM_RUN");
	if (run->exit_reason != KVM_EXIT_IO ||
	    run->io.direction != KVM_EXIT_IO_OUT ||
	    run->io.port != SMOKE_EXIT_PORT || run->io.size != 1) {
		fprintf(stderr, "kvm-smoke: unexpected exit reason %u\n",
			run->exit_reason);
		return 2;
	}
	value = *((uint8_t *)run + run->io.data_offset);
	printf("kvm-smoke: guest wrote %u to port 0x%x\n", value,
	       SMOKE_EXIT_PORT);
	return (int)value;
}

static int smoke_run(const char *dev, unsigned int value)
{
	int kvm, vm, ret;
	uint8_t *mem;

	kvm = open(dev, O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return smoke_fail(dev);
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		ret = smoke_fail("KVM_CREATE_VM");
		goto err_close_kvm;
	}
	mem = mmap(NULL, SMOKE_MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		ret = smoke_fail("mmap guest memory");
		goto err_close_vm;
	}
	ret = smoke_run_vcpu(kvm, vm, mem, value);
	munmap(mem, SMOKE_MEM_SIZE);
err_close_vm:
	close(vm);
err_close_kvm:
	close(kvm);
	return ret;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/kvm";
	unsigned long value = 0;
	int i = 1;
	char *end;

	if (argc > 2 && strcmp(argv[1], "--device") == 0) {
		dev = argv[2];
		i = 3;
	}
	if (i == argc - 1 && strcmp(argv[i], "--check") == 0)
		return smoke_check(dev);
	if (i == argc - 1) {
		errno = 0;
		value = strtoul(argv[i], &end, 0);
		if (*end || errno || value > 255) {
			fprintf(stderr, "kvm-smoke: bad value '%s'\n",
				argv[i]);
			return 2;
		}
	} else if (i != argc) {
		fprintf(stderr,
			"usage: kvm-smoke [--device PATH] [--check | VALUE]\n");
		return 2;
	}
	return smoke_run(dev, (unsigned int)value);
}
