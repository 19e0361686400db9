// SPDX-License-Identifier: Apache-2.0
/*
 * Guest RAM mappings (vm_ram_map()), checked in /proc/self/smaps: 2 MiB
 * aligned, huge pages advised, and offered to KSM page merging only when
 * asked (--memory SIZE,merge=on); by default never, since merging pages
 * across VMs is a side channel between guests. And vm_print_stats():
 * one line per vCPU with its KVM_RUN returns by kind and their sum.
 * Needs no /dev/kvm.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "vmm/vm.h"

#define RAM_SIZE (8ULL << 20)

/*
 * The VmFlags line of the mapping that starts at @addr, or "" when there
 * is none (no smaps: the caller skips).
 */
static int vmflags_of(const void *addr, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	if (!f)
		return -errno;
	flags[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start == (uintptr_t)addr;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, len, "%s", line + 8);
			break;
		}
	}
	fclose(f);
	return 0;
}

static bool has_flag(const char *flags, const char *flag)
{
	char copy[512], *tok, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", flags);
	for (tok = strtok_r(copy, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, flag))
			return true;
	return false;
}

/* The default: huge pages advised, never mergeable, never dumped. */
static void test_default_not_mergeable(void)
{
	void *ram = vm_ram_map(RAM_SIZE, false);
	char flags[512];

	CHECK(ram != NULL);
	if (!ram)
		return;
	CHECK_EQ((uintptr_t)ram & ((2u << 20) - 1), 0);
	CHECK_EQ(vmflags_of(ram, flags, sizeof(flags)), 0);
	printf("default RAM VmFlags:%s", flags);
	CHECK(flags[0] != '\0');
	CHECK(!has_flag(flags, "mg"));
	/* Never in a core dump ("dd": VM_DONTDUMP). */
	CHECK(has_flag(flags, "dd"));
	munmap(ram, RAM_SIZE);
}

/* merge=on: the mapping carries KSM's mergeable flag. */
static int test_merge_opt_in(void)
{
	void *ram = vm_ram_map(RAM_SIZE, true);
	char flags[512];

	if (!ram && errno == EINVAL) {
		printf("kernel without KSM: opt-in not testable here\n");
		return 77;
	}
	CHECK(ram != NULL);
	if (!ram)
		return 0;
	CHECK_EQ(vmflags_of(ram, flags, sizeof(flags)), 0);
	printf("merge=on RAM VmFlags:%s", flags);
	CHECK(has_flag(flags, "mg"));
	munmap(ram, RAM_SIZE);
	return 0;
}

static void test_print_stats(void)
{
	struct vcpu vcpus[2] = { 0 };
	struct vm vm = { .ncpus = 2, .vcpus = vcpus };
	char buf[512] = "";
	ssize_t n;
	int fds[2];

	atomic_store(&vcpus[0].exits[VCPU_EXIT_IO_IN], 2);
	atomic_store(&vcpus[0].exits[VCPU_EXIT_IO_OUT], 3);
	atomic_store(&vcpus[0].exits[VCPU_EXIT_MMIO_READ], 4);
	atomic_store(&vcpus[0].exits[VCPU_EXIT_MMIO_WRITE], 3);
	atomic_store(&vcpus[1].exits[VCPU_EXIT_INTR], 2);
	atomic_store(&vcpus[1].exits[VCPU_EXIT_OTHER], 1);
	CHECK_EQ(pipe(fds), 0);
	vm_print_stats(&vm, fds[1]);
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	CHECK(n > 0);
	CHECK(strstr(buf, "microvm: stats vcpu 0: exits 12 io 5 mmio 7 "
			  "intr 0 other 0 io-in 2 io-out 3 mmio-read 4 "
			  "mmio-write 3\n") == buf);
	CHECK(strstr(buf, "microvm: stats vcpu 1: exits 3 io 0 mmio 0 "
			  "intr 2 other 1 io-in 0 io-out 0 mmio-read 0 "
			  "mmio-write 0\n") != NULL);
	CHECK(strstr(buf, "microvm: stats coalesced") == NULL);
	/* With a coalesced range: the writes KVM queued, a line of its own. */
	vm.coal_ranges = 1;
	atomic_store(&vm.coal_writes, 37);
	CHECK_EQ(pipe(fds), 0);
	vm_print_stats(&vm, fds[1]);
	close(fds[1]);
	memset(buf, 0, sizeof(buf));
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	CHECK(n > 0);
	CHECK(strstr(buf, "microvm: stats coalesced: ranges 1 ring none "
			  "writes 37\n") != NULL);
	vm.coal_ranges = 0;
	/* No vCPUs yet (startup failed early): nothing, no crash. */
	vm.vcpus = NULL;
	CHECK_EQ(pipe(fds), 0);
	vm_print_stats(&vm, fds[1]);
	close(fds[1]);
	CHECK_EQ(read(fds[0], buf, sizeof(buf)), 0);
	close(fds[0]);
}

int main(void)
{
	char flags[512];
	int skip;

	if (vmflags_of(&flags, flags, sizeof(flags)) == -ENOENT) {
		printf("no /proc/self/smaps: skipped\n");
		return 77;
	}
	test_print_stats();
	test_default_not_mergeable();
	skip = test_merge_opt_in();
	if (test_done())
		return 1;
	return skip;
}
