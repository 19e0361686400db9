// SPDX-License-Identifier: Apache-2.0
/*
 * Architecture-neutral KVM plumbing: VM creation, guest RAM, vCPU threads
 * and their run loop (port I/O and MMIO exits go to the buses), and the
 * exit protocol. A vCPU thread is kicked out of KVM_RUN by a signal whose
 * handler sets kvm_run->immediate_exit, so a kick that lands just before
 * KVM_RUN is not lost.
 */
#include "vmm/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "vmm/arch.h"
#include "vmm/coalesced.h"
#include "util/confine.h"

#define VCPU_KICK_SIGNAL SIGUSR2
/* How long a vCPU thread may take to leave KVM_RUN once kicked. */
#define VCPU_STOP_LIMIT_MS 10000
#define VCPU_KICK_PERIOD_MS 20

static __thread struct kvm_run *vcpu_self_run;

static void vcpu_kick_handler(int sig)
{
	(void)sig;
	if (vcpu_self_run)
		vcpu_self_run->immediate_exit = 1;
}

int vm_open(struct vm *vm, char *err, size_t errlen)
{
	const char *dev = getenv("MICROVM_KVM_DEVICE");
	int ret;

	if (!dev || !*dev)
		dev = "/dev/kvm";
	vm->kvm_fd = vm->vm_fd = vm->exit_fd = vm->ram_fd = -1;
	pthread_mutex_init(&vm->park_lock, NULL);
	pthread_cond_init(&vm->park_cond, NULL);
	pthread_mutex_init(&vm->coal_lock, NULL);
	vm->pio.name = "pio";
	vm->mmio.name = "mmio";
	vm->kvm_fd = open(dev, O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		ret = -errno;
		snprintf(err, errlen,
			 "cannot open %s: %s. microvm needs KVM: on a machine "
			 "without it, run it inside a nested-KVM guest "
			 "(see tests/e2e/run-guest.sh and README, "
			 "\"Running without /dev/kvm\")",
			 dev, strerror(-ret));
		return ret;
	}
	ret = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (ret != KVM_API_VERSION) {
		snprintf(err, errlen, "%s: KVM API version %d, need %d", dev,
			 ret, KVM_API_VERSION);
		return -ENOTSUP;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot create a VM: %s", dev,
			 strerror(-ret));
		return ret;
	}
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size <= 0) {
		snprintf(err, errlen, "%s: KVM_GET_VCPU_MMAP_SIZE failed", dev);
		return -ENOTSUP;
	}
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_IRQFD) <= 0 ||
	    ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_IOEVENTFD) <= 0) {
		snprintf(err, errlen, "%s: KVM lacks irqfd/ioeventfd", dev);
		return -ENOTSUP;
	}
	vm->exit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->exit_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

#define RAM_ALIGN (2ull << 20)

/*
 * The host address is 2 MiB aligned, so that every 2 MiB-aligned
 * guest-physical range is one transparent huge page on the host and KVM
 * can map it with one large stage-2 entry (fewer nested page faults and
 * TLB misses).
 */
void *vm_ram_map(uint64_t size, bool merge)
{
	uint8_t *p, *aligned;
	size_t head, total = size + RAM_ALIGN;

	p = mmap(NULL, total, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	aligned = (uint8_t *)(((uintptr_t)p + RAM_ALIGN - 1) &
			      ~(uintptr_t)(RAM_ALIGN - 1));
	head = (size_t)(aligned - p);
	if (head)
		munmap(p, head);
	if (total - head > size)
		munmap(aligned + size, total - head - size);
	madvise(aligned, size, MADV_HUGEPAGE);
	/* A core dump (a seccomp kill, a crash) must not carry guest RAM. */
	madvise(aligned, size, MADV_DONTDUMP);
	/* KSM only on request: merged pages leak across guests. */
	if (merge && madvise(aligned, size, MADV_MERGEABLE)) {
		int e = errno;

		munmap(aligned, size);
		errno = e;
		return NULL;
	}
	return aligned;
}

/*
 * A restore's RAM: the memory file mapped MAP_PRIVATE over an aligned
 * anonymous reservation. Nothing is read now; each page comes from the
 * page cache on first touch, shared with every other process that maps
 * the same file until one writes it.
 */
static void *vm_ram_map_file(int fd, uint64_t size, bool merge)
{
	uint8_t *p = vm_ram_map(size, merge), *f;

	if (!p)
		return NULL;
	f = mmap(p, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd, 0);
	if (f == MAP_FAILED) {
		int e = errno;

		munmap(p, size);
		errno = e;
		return NULL;
	}
	madvise(f, size, MADV_DONTDUMP);
	return f;
}

int vm_add_ram(struct vm *vm, uint64_t size, bool merge, char *err,
	       size_t errlen)
{
	struct arch_ram_range ranges[GUEST_MEM_MAX_REGIONS];
	uint64_t off = 0;
	int n, i, ret;

	n = arch_ram_layout(size, ranges, GUEST_MEM_MAX_REGIONS);
	vm->ram = vm->ram_fd >= 0 ? vm_ram_map_file(vm->ram_fd, size, merge) :
				    vm_ram_map(size, merge);
	if (!vm->ram) {
		ret = -errno;
		snprintf(err, errlen,
			 "--memory %llu MiB%s: cannot map guest RAM: %s%s",
			 (unsigned long long)(size >> 20),
			 merge ? ",merge=on" : "", strerror(-ret),
			 merge && ret == -EINVAL ?
				 " (merge=on needs a kernel with KSM)" : "");
		return ret;
	}
	vm->ram_size = size;
	for (i = 0; i < n; i++) {
		struct kvm_userspace_memory_region r = {
			.slot = vm->nr_slots,
			.flags = vm->track_dirty ? KVM_MEM_LOG_DIRTY_PAGES : 0,
			.guest_phys_addr = ranges[i].gpa,
			.memory_size = ranges[i].size,
			.userspace_addr = (uintptr_t)vm->ram + off,
		};

		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
			ret = -errno;
			snprintf(err, errlen,
				 "--memory %llu MiB: KVM refused RAM at "
				 "0x%llx: %s",
				 (unsigned long long)(size >> 20),
				 (unsigned long long)ranges[i].gpa,
				 strerror(-ret));
			return ret;
		}
		ret = guest_mem_add_region(&vm->mem, ranges[i].gpa,
					   ranges[i].size,
					   (uint8_t *)vm->ram + off);
		if (ret) {
			snprintf(err, errlen, "guest memory map: %s",
				 strerror(-ret));
			return ret;
		}
		vm->nr_slots++;
		off += ranges[i].size;
	}
	if (vm->track_dirty && guest_mem_track_dirty(&vm->mem)) {
		snprintf(err, errlen, "out of memory for the dirty page bitmaps");
		return -ENOMEM;
	}
	return 0;
}

/* Above every RAM slot vm_add_ram() can take. */
#define VM_DEVICE_PAGE_SLOT GUEST_MEM_MAX_REGIONS

void *vm_add_device_page(struct vm *vm, uint64_t gpa, char *err,
			 size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	struct kvm_userspace_memory_region r = {
		.slot = VM_DEVICE_PAGE_SLOT,
		.guest_phys_addr = gpa,
	};
	void *p;
	int e;

	if (vm->dev_page) {
		snprintf(err, errlen, "device page at 0x%llx: the VM has one "
			 "already", (unsigned long long)gpa);
		return NULL;
	}
	if (page <= 0 || gpa & (uint64_t)(page - 1)) {
		snprintf(err, errlen, "device page at 0x%llx: not aligned to "
			 "the host's %ld-byte pages", (unsigned long long)gpa,
			 page);
		return NULL;
	}
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "device page at 0x%llx: %s",
			 (unsigned long long)gpa, strerror(errno));
		return NULL;
	}
	r.memory_size = (uint64_t)page;
	r.userspace_addr = (uintptr_t)p;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
		e = errno;
		munmap(p, (size_t)page);
		snprintf(err, errlen, "device page at 0x%llx: KVM refused "
			 "it: %s", (unsigned long long)gpa, strerror(e));
		return NULL;
	}
	vm->dev_page = p;
	vm->dev_page_size = (size_t)page;
	return p;
}

/*
 * The coalesced-write ring: the page KVM_CHECK_EXTENSION(COALESCED_MMIO)
 * names, counted in pages from the start of vCPU 0's kvm_run mapping.
 */
static void vm_coal_map(struct vm *vm)
{
	long page = sysconf(_SC_PAGESIZE);
	int off;

	if (vm->coal_ring || !vm->coal_ranges || !vm->vcpus ||
	    !vm->vcpus[0].run || page <= 0)
		return;
	off = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO);
	if (off <= 0 || (long)(off + 1) * page > vm->run_size)
		return;
	vm->coal_entries = coalesced_ring_entries(page);
	vm->coal_ring = (struct kvm_coalesced_mmio_ring *)
		((uint8_t *)vm->vcpus[0].run + (long)off * page);
}

int vm_coalesce_pio(struct vm *vm, uint16_t port, uint32_t len)
{
	struct kvm_coalesced_mmio_zone z = { .addr = port, .size = len,
					     .pio = 1 };

	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO) <= 0 ||
	    ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_PIO) <= 0)
		return -EOPNOTSUPP;
	if (ioctl(vm->vm_fd, KVM_REGISTER_COALESCED_MMIO, &z) < 0)
		return -errno;
	vm->coal_ranges++;
	vm_coal_map(vm);
	return 0;
}

void vm_coalesced_flush(struct vm *vm)
{
	struct kvm_coalesced_mmio_ring *r = vm->coal_ring;
	unsigned int n;

	if (!r || __atomic_load_n(&r->first, __ATOMIC_RELAXED) ==
			  __atomic_load_n(&r->last, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&vm->coal_lock);
	n = coalesced_drain(r, vm->coal_entries, &vm->pio, &vm->mmio);
	pthread_mutex_unlock(&vm->coal_lock);
	if (n)
		atomic_fetch_add_explicit(&vm->coal_writes, n,
					  memory_order_relaxed);
}

int vm_create_vcpus(struct vm *vm, unsigned int ncpus, char *err,
		    size_t errlen)
{
	unsigned int i;
	int ret;

	vm->vcpus = calloc(ncpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		snprintf(err, errlen, "out of memory for %u vCPUs", ncpus);
		return -ENOMEM;
	}
	vm->ncpus = ncpus;
	for (i = 0; i < ncpus; i++)
		vm->vcpus[i].fd = -1;
	for (i = 0; i < ncpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		v->vm = vm;
		v->index = i;
		v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)i);
		if (v->fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "--cpus %u: cannot create vCPU %u: %s",
				 ncpus, i, strerror(-ret));
			return ret;
		}
		v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, v->fd, 0);
		if (v->run == MAP_FAILED) {
			ret = -errno;
			v->run = NULL;
			snprintf(err, errlen, "vCPU %u: mmap kvm_run: %s", i,
				 strerror(-ret));
			return ret;
		}
		ret = arch_vcpu_init(vm, v, err, errlen);
		if (ret)
			return ret;
	}
	vm_coal_map(vm);
	return 0;
}

static void vcpu_handle_io(struct vcpu *v, struct kvm_run *run)
{
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	uint32_t i;

	/* String I/O (rep outsb/insb) arrives as count back-to-back items. */
	for (i = 0; i < run->io.count; i++, data += run->io.size) {
		if (!is_write)
			memset(data, 0xff, run->io.size);
		bus_dispatch(&v->vm->pio, run->io.port, data, run->io.size,
			     is_write);
	}
}

static void vcpu_handle_mmio(struct vcpu *v, struct kvm_run *run)
{
	unsigned int len = run->mmio.len;

	if (len > sizeof(run->mmio.data))
		return;
	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, len);
	bus_dispatch(&v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len,
		     run->mmio.is_write);
}

static void vcpu_count_exit(struct vcpu *v, int ret, struct kvm_run *run)
{
	enum vcpu_exit_kind k = VCPU_EXIT_OTHER;

	if (ret < 0) {
		if (errno == EINTR || errno == EAGAIN)
			k = VCPU_EXIT_INTR;
	} else {
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			k = run->io.direction == KVM_EXIT_IO_OUT ?
				    VCPU_EXIT_IO_OUT : VCPU_EXIT_IO_IN;
			break;
		case KVM_EXIT_MMIO:
			k = run->mmio.is_write ? VCPU_EXIT_MMIO_WRITE :
						 VCPU_EXIT_MMIO_READ;
			break;
		case KVM_EXIT_INTR:
			k = VCPU_EXIT_INTR;
			break;
		}
	}
	/* One writer per counter: a relaxed add is all the ordering needed. */
	atomic_fetch_add_explicit(&v->exits[k], 1, memory_order_relaxed);
}

void vm_print_stats(struct vm *vm, int fd)
{
	unsigned int i, k;

	for (i = 0; i < vm->ncpus && vm->vcpus; i++) {
		unsigned long long n[VCPU_EXIT_KINDS], sum = 0;

		for (k = 0; k < VCPU_EXIT_KINDS; k++) {
			n[k] = atomic_load_explicit(&vm->vcpus[i].exits[k],
						    memory_order_relaxed);
			sum += n[k];
		}
		dprintf(fd,
			"microvm: stats vcpu %u: exits %llu io %llu mmio %llu "
			"intr %llu other %llu io-in %llu io-out %llu "
			"mmio-read %llu mmio-write %llu\n",
			i, sum, n[VCPU_EXIT_IO_IN] + n[VCPU_EXIT_IO_OUT],
			n[VCPU_EXIT_MMIO_READ] + n[VCPU_EXIT_MMIO_WRITE],
			n[VCPU_EXIT_INTR], n[VCPU_EXIT_OTHER],
			n[VCPU_EXIT_IO_IN], n[VCPU_EXIT_IO_OUT],
			n[VCPU_EXIT_MMIO_READ], n[VCPU_EXIT_MMIO_WRITE]);
	}
	/* Writes KVM queued without an exit (vm_coalesce_pio()). */
	if (vm->vcpus && vm->coal_ranges)
		dprintf(fd, "microvm: stats coalesced: ranges %u ring %s "
			"writes %llu\n", vm->coal_ranges,
			vm->coal_ring ? "mapped" : "none",
			(unsigned long long)atomic_load_explicit(
				&vm->coal_writes, memory_order_relaxed));
}

/*
 * A pause was asked for: wait here, outside KVM_RUN, until it is lifted
 * or the VM ends. Whatever exit the thread handled last is complete.
 */
static void vcpu_park(struct vcpu *v)
{
	struct vm *vm = v->vm;

	pthread_mutex_lock(&vm->park_lock);
	vm->nr_parked++;
	pthread_cond_broadcast(&vm->park_cond);
	while (atomic_load(&vm->pause_req) && !atomic_load(&vm->stopping))
		pthread_cond_wait(&vm->park_cond, &vm->park_lock);
	vm->nr_parked--;
	pthread_mutex_unlock(&vm->park_lock);
}

static void vcpu_loop_enter(struct vm *vm, int delta)
{
	pthread_mutex_lock(&vm->park_lock);
	vm->nr_running += delta;
	pthread_cond_broadcast(&vm->park_cond);
	pthread_mutex_unlock(&vm->park_lock);
}

static void *vcpu_run_loop(struct vcpu *v);

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	void *ret;

	vcpu_loop_enter(v->vm, 1);
	ret = vcpu_run_loop(v);
	vcpu_loop_enter(v->vm, -1);
	return ret;
}

static void *vcpu_run_loop(struct vcpu *v)
{
	struct vm *vm = v->vm;
	struct kvm_run *run = v->run;
	bool first = v->index == 0;
	char name[16];
	sigset_t set;

	snprintf(name, sizeof(name), "vcpu%u", v->index);
	pthread_setname_np(pthread_self(), name);
	confine_thread(CONFINE_VCPU); /* returns once main is confined too */
	vcpu_self_run = run;
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	while (!atomic_load(&vm->stopping)) {
		int ret;

		if (atomic_load(&vm->pause_req)) {
			vcpu_park(v);
			continue;
		}

		/* --stats "startup": how long setup took, to the guest's start. */
		if (first) {
			uint64_t ns = clock_since_start_ns();
			char ms[CLOCK_MS_LEN];

			atomic_store(&vm->first_run_ns, ns ? ns : 1);
			log_debug("startup: vCPU 0 enters KVM_RUN at %s ms",
				  clock_format_ms(ms, sizeof(ms), ns));
			first = false;
		}
		ret = ioctl(v->fd, KVM_RUN, 0);

		vcpu_count_exit(v, ret, run);
		/* Writes KVM queued reach their devices before this exit, and
		 * so before anything the guest does after them. */
		vm_coalesced_flush(vm);
		if (ret < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				run->immediate_exit = 0;
				continue;
			}
			log_error("vCPU %u: KVM_RUN: %s", v->index,
				  strerror(errno));
			vm_request_exit(vm, VM_EXIT_INTERNAL, "KVM_RUN failed");
			break;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			vcpu_handle_io(v, run);
			break;
		case KVM_EXIT_MMIO:
			vcpu_handle_mmio(v, run);
			break;
		case KVM_EXIT_INTR:
			break;
		case KVM_EXIT_SHUTDOWN:
			log_error("vCPU %u: triple fault", v->index);
			vm_request_exit(vm, VM_EXIT_GUEST_CRASH,
					"guest triple fault (shutdown)");
			return NULL;
		case KVM_EXIT_FAIL_ENTRY:
			log_error("vCPU %u: entry failed, reason 0x%llx",
				  v->index,
				  (unsigned long long)run->fail_entry
					  .hardware_entry_failure_reason);
			vm_request_exit(vm, VM_EXIT_INTERNAL, "entry failure");
			return NULL;
		case KVM_EXIT_INTERNAL_ERROR:
			log_error("vCPU %u: KVM internal error, suberror %u",
				  v->index, run->internal.suberror);
			vm_request_exit(vm, VM_EXIT_INTERNAL,
					"KVM internal error");
			return NULL;
		default:
			if (arch_handle_exit(v, run))
				return NULL;
			break;
		}
	}
	return NULL;
}

int vm_start_vcpus(struct vm *vm)
{
	struct sigaction sa = { .sa_handler = vcpu_kick_handler };
	sigset_t set, old;
	unsigned int i;
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
	/* Threads start with the kick blocked; each unblocks it itself. */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	for (i = 0; i < vm->ncpus; i++) {
		ret = -pthread_create(&vm->vcpus[i].thread, NULL, vcpu_thread,
				      &vm->vcpus[i]);
		if (ret)
			break;
		vm->vcpus[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void vm_request_exit(struct vm *vm, int status, const char *reason)
{
	bool expected = false;

	if (!atomic_compare_exchange_strong(&vm->stopping, &expected, true))
		return;
	atomic_store(&vm->exit_status, status);
	vm->exit_reason = reason;
	if (eventfd_write(vm->exit_fd, 1) < 0)
		log_error("exit eventfd: %s", strerror(errno));
}

/* Kick every vCPU thread that is not parked out of KVM_RUN. */
static void vm_kick_unparked(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->ncpus; i++)
		if (vm->vcpus[i].started)
			pthread_kill(vm->vcpus[i].thread, VCPU_KICK_SIGNAL);
}

int vm_pause_vcpus(struct vm *vm, unsigned int limit_ms)
{
	unsigned int waited = 0;
	int ret = 0;

	if (atomic_load(&vm->stopping))
		return -ESHUTDOWN;
	atomic_store(&vm->pause_req, true);
	pthread_mutex_lock(&vm->park_lock);
	while (vm->nr_parked < vm->nr_running) {
		struct timespec ts;

		if (atomic_load(&vm->stopping)) {
			ret = -ESHUTDOWN;
			break;
		}
		if (waited >= limit_ms) {
			ret = -ETIMEDOUT;
			break;
		}
		/* A kick that lands before KVM_RUN sets immediate_exit;
		 * repeated, as one may land before the pause_req check. */
		pthread_mutex_unlock(&vm->park_lock);
		vm_kick_unparked(vm);
		pthread_mutex_lock(&vm->park_lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += VCPU_KICK_PERIOD_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		/* Parked while the lock was dropped: its signal is gone. */
		if (vm->nr_parked < vm->nr_running)
			pthread_cond_timedwait(&vm->park_cond,
					       &vm->park_lock, &ts);
		waited += VCPU_KICK_PERIOD_MS;
	}
	pthread_mutex_unlock(&vm->park_lock);
	if (ret)
		vm_resume_vcpus(vm);
	else
		vm_coalesced_flush(vm); /* the devices' state is whole */
	return ret;
}

void vm_resume_vcpus(struct vm *vm)
{
	pthread_mutex_lock(&vm->park_lock);
	atomic_store(&vm->pause_req, false);
	pthread_cond_broadcast(&vm->park_cond);
	pthread_mutex_unlock(&vm->park_lock);
}

int vm_stop_vcpus(struct vm *vm)
{
	unsigned int i, stuck = 0;

	atomic_store(&vm->stopping, true);
	/* Parked threads wake, see stopping and leave. */
	pthread_mutex_lock(&vm->park_lock);
	pthread_cond_broadcast(&vm->park_cond);
	pthread_mutex_unlock(&vm->park_lock);
	for (i = 0; i < vm->ncpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		unsigned int waited;

		if (!v->started)
			continue;
		/*
		 * Repeat the kick until the thread is gone: a signal that lands
		 * between the stopping check and KVM_RUN sets immediate_exit.
		 */
		for (waited = 0; waited < VCPU_STOP_LIMIT_MS;
		     waited += VCPU_KICK_PERIOD_MS) {
			struct timespec ts;

			pthread_kill(v->thread, VCPU_KICK_SIGNAL);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += VCPU_KICK_PERIOD_MS * 1000000L;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(v->thread, NULL, &ts) == 0) {
				v->started = false;
				break;
			}
		}
		if (v->started) {
			log_error("vCPU %u did not leave KVM_RUN within %u ms "
				  "of being stopped",
				  v->index, VCPU_STOP_LIMIT_MS);
			stuck++;
		}
	}
	if (!stuck)
		vm_coalesced_flush(vm); /* the guest's last bytes */
	return (int)stuck;
}

void vm_close(struct vm *vm)
{
	unsigned int i;

	vm->coal_ring = NULL; /* it lies in vCPU 0's mapping */
	for (i = 0; vm->vcpus && i < vm->ncpus; i++) {
		if (vm->vcpus[i].run)
			munmap(vm->vcpus[i].run, vm->run_size);
		if (vm->vcpus[i].fd >= 0)
			close(vm->vcpus[i].fd);
	}
	free(vm->vcpus);
	vm->vcpus = NULL;
	for (i = 0; i < vm->nr_dev_fds; i++)
		close(vm->dev_fds[i]);
	vm->nr_dev_fds = 0;
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	vm->ram = NULL;
	if (vm->dev_page)
		munmap(vm->dev_page, vm->dev_page_size);
	vm->dev_page = NULL;
	guest_mem_untrack(&vm->mem);
	if (vm->ram_fd >= 0)
		close(vm->ram_fd);
	vm->ram_fd = -1;
	free(vm->routes);
	vm->routes = NULL;
	if (vm->exit_fd >= 0)
		close(vm->exit_fd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->exit_fd = vm->vm_fd = vm->kvm_fd = -1;
}

void vm_irq_line(void *opaque, uint32_t gsi, int level)
{
	struct vm *vm = opaque;
	struct kvm_irq_level irq = { .irq = arch_irq_line(gsi),
				     .level = level ? 1 : 0 };

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0)
		log_warn("KVM_IRQ_LINE %u: %s", gsi, strerror(errno));
}

void vm_dump_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->ncpus; i++)
		arch_vcpu_dump(&vm->vcpus[i]);
}
