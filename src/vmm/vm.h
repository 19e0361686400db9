/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The KVM virtual machine: the /dev/kvm and VM descriptors, guest RAM, the
 * PIO and MMIO buses and the vCPU threads. vm_* is architecture-neutral;
 * what differs per architecture lives behind arch.h.
 *
 * Lifecycle: vm_open() -> vm_add_ram() -> devices register on the buses ->
 * vm_start_vcpus() -> main waits on exit_fd (vmm/control.h) -> vm_stop_vcpus()
 * -> vm_close().
 */
#ifndef MICROVM_VM_H
#define MICROVM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/guest_mem.h"
#include "vmm/bus.h"

/* Exit statuses that are not a guest-chosen byte. */
#define VM_EXIT_OK 0
#define VM_EXIT_STARTUP 1       /* bad input or setup failure */
#define VM_EXIT_GUEST_PANIC 122 /* the guest kernel panicked (pvpanic) */
#define VM_EXIT_GUEST_CRASH 123 /* triple fault / unexpected shutdown */
#define VM_EXIT_TIMEOUT 124
#define VM_EXIT_INTERNAL 125    /* KVM or VMM failure while running */

/* vm->exit_reason of a pvpanic PANICKED event, which main reports. */
#define VM_EXIT_REASON_PANIC "guest panicked (pvpanic)"

struct kvm_run;

#define VM_MAX_ROUTES 1024
#define VM_MAX_DEV_FDS 4

/* Why KVM_RUN returned to this vCPU's thread, counted for --stats. */
enum vcpu_exit_kind {
	/* KVM_EXIT_IO: port I/O no in-kernel device took, by direction */
	VCPU_EXIT_IO_IN,
	VCPU_EXIT_IO_OUT,
	/* KVM_EXIT_MMIO: MMIO no ioeventfd took, by direction */
	VCPU_EXIT_MMIO_READ,
	VCPU_EXIT_MMIO_WRITE,
	VCPU_EXIT_INTR,  /* KVM_EXIT_INTR or EINTR/EAGAIN: a signal (kick) */
	VCPU_EXIT_OTHER, /* everything else (arch exits, shutdown, errors) */
	VCPU_EXIT_KINDS
};

struct vcpu {
	struct vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool started;
	/*
	 * Returns from KVM_RUN by kind: the exits to userspace that the
	 * guest-benchmark divides by guest I/Os. Written by this vCPU's
	 * thread only (relaxed adds, no shared cache line per exit with
	 * another writer), read by vm_print_stats() at any time.
	 */
	atomic_ullong exits[VCPU_EXIT_KINDS];
};

struct vm {
	int kvm_fd;
	int vm_fd;
	int run_size;          /* KVM_GET_VCPU_MMAP_SIZE */
	struct guest_mem mem;
	void *ram;             /* one host mapping for all RAM regions */
	uint64_t ram_size;
	/*
	 * -1: RAM is anonymous. Else (a restore) the memory file vm_add_ram()
	 * maps MAP_PRIVATE: pages load on first touch, writes stay private;
	 * vm_close() closes it. Set by vm_open() to -1.
	 */
	int ram_fd;
	/* Dirty pages tracked (KVM's log on every slot, the VMM's writes in
	 * vm->mem's bitmaps), for diff snapshots; set before vm_add_ram(). */
	bool track_dirty;
	/* A restore's clock_realtime: the guest's clock moves on by the
	 * wall time the snapshot lay on disk (x86: KVM_CLOCK_REALTIME). */
	bool clock_realtime;
	unsigned int nr_slots;
	/* vm_add_device_page()'s page (NULL: none) and its size. */
	void *dev_page;
	size_t dev_page_size;
	/*
	 * KVM devices the architecture created (KVM_CREATE_DEVICE: arm64's
	 * vGIC and ITS); vm_close() closes them.
	 */
	int dev_fds[VM_MAX_DEV_FDS];
	unsigned int nr_dev_fds;
	struct bus pio;
	struct bus mmio;
	unsigned int ncpus;
	bool smt;              /* two threads per core (x86 CPUID); set
				* before vm_create_vcpus() */
	struct vcpu *vcpus;
	atomic_bool stopping;
	atomic_int exit_status;
	int exit_fd;           /* eventfd: becomes readable once vm_request_exit() ran */
	/* GSI routing table (KVM_SET_GSI_ROUTING), under irq_lock. */
	pthread_mutex_t irq_lock;
	void *routes;          /* struct kvm_irq_routing_entry[VM_MAX_ROUTES] */
	unsigned int nr_routes;
	uint32_t next_gsi;     /* next free GSI for MSI routes */
	const char *exit_reason;
	/* clock_since_start_ns() as vCPU 0 entered KVM_RUN first; 0: not yet */
	_Atomic uint64_t first_run_ns;
	/*
	 * Parking (vm_pause_vcpus()): while pause_req is set, each vCPU
	 * thread waits on park_cond at the top of its run loop, outside
	 * KVM_RUN, counted in nr_parked; all under park_lock.
	 */
	pthread_mutex_t park_lock;
	pthread_cond_t park_cond;
	atomic_bool pause_req;
	unsigned int nr_parked;
	unsigned int nr_running; /* vCPU threads inside their run loop */
	/*
	 * Coalesced writes (vmm/coalesced.h): the ring, in vCPU 0's kvm_run
	 * mapping, once a range was registered and vCPU 0 exists (else
	 * NULL); drained under coal_lock; coal_writes counts the writes
	 * replayed, for --stats.
	 */
	struct kvm_coalesced_mmio_ring *coal_ring;
	uint32_t coal_entries;
	unsigned int coal_ranges;
	pthread_mutex_t coal_lock;
	atomic_ullong coal_writes;
};

/* How often main replays coalesced writes that no exit has flushed: the
 * longest a guest's last UART byte (and its THR-empty interrupt) waits. */
#define VM_COALESCED_FLUSH_MS 10

/**
 * vm_open() - open the KVM device and create an empty VM.
 * @vm: zeroed struct to fill
 * @err/@errlen: one user-facing message on failure
 *
 * The device is /dev/kvm unless MICROVM_KVM_DEVICE names another path.
 * Return: 0 or -errno.  Context: main thread, startup.
 */
int vm_open(struct vm *vm, char *err, size_t errlen);

/**
 * vm_ram_map() - anonymous memory for guest RAM, 2 MiB aligned, with
 * transparent huge pages advised.
 * @size: bytes
 * @merge: also offer the pages to KSM (MADV_MERGEABLE). Off by default:
 *	merging pages across VMs lets one guest time another's memory
 *	contents (a known side channel); only for density over isolation.
 *
 * Return: the mapping (munmap() it with @size), or NULL with errno set;
 * with @merge, EINVAL when the kernel has no KSM.
 * Context: startup.
 */
void *vm_ram_map(uint64_t size, bool merge);

/**
 * vm_add_device_page() - one host page of zeroes at @gpa, outside guest
 * RAM and its memory map, in a KVM memory slot of its own: memory a
 * device shares with the guest that the guest reads and writes without
 * an exit (arm64's VM generation ID, which Linux maps as device memory and
 * copies with wide loads that a trapped access could not emulate). It is
 * in no snapshot's memory file: its device writes it again at a restore.
 * @gpa must be aligned to the host's page size; vm_close() unmaps it.
 * Return: the page, or NULL with a message in @err.  Context: startup,
 * once.
 */
void *vm_add_device_page(struct vm *vm, uint64_t gpa, char *err,
			 size_t errlen);

/**
 * vm_add_ram() - allocate @size bytes of guest RAM laid out by the
 * architecture (arch_ram_layout()) and register it with KVM and vm->mem;
 * @merge offers it to KSM (see vm_ram_map()).
 * Return: 0 or -errno with a message in @err.  Context: startup.
 */
int vm_add_ram(struct vm *vm, uint64_t size, bool merge, char *err,
	       size_t errlen);

/**
 * vm_create_vcpus() - create @ncpus vCPUs and map their kvm_run areas.
 * Return: 0 or -errno with a message.  Context: startup, after the irqchip.
 */
int vm_create_vcpus(struct vm *vm, unsigned int ncpus, char *err,
		    size_t errlen);

/**
 * vm_start_vcpus() - start one thread per vCPU running KVM_RUN.
 * Return: 0 or -errno.  Context: main thread.
 */
int vm_start_vcpus(struct vm *vm);

/**
 * vm_request_exit() - end the VM with @status; the first call wins.
 * @reason: static string for --verbose / messages
 * Context: any thread (vCPU, device, timer); async-signal-unsafe.
 */
void vm_request_exit(struct vm *vm, int status, const char *reason);

/**
 * vm_stop_vcpus() - kick every vCPU out of KVM_RUN and join its thread,
 * giving each a bounded time (a few seconds) to leave.
 * Return: how many vCPU threads still run; their vCPUs must not be touched
 * again, and the caller should end the process without tearing down.
 * Context: main thread.
 */
int vm_stop_vcpus(struct vm *vm);

/**
 * vm_pause_vcpus() - park every vCPU thread at a safe point: outside
 * KVM_RUN, any exit it was handling finished, at the top of its loop.
 * Kicks until all have parked or @limit_ms passed.
 * Return: 0 with every running vCPU parked; -ETIMEDOUT (the vCPUs are
 * resumed again) or -ESHUTDOWN when the VM is ending.
 * Context: the thread that owns the machine's lifecycle (main).
 */
int vm_pause_vcpus(struct vm *vm, unsigned int limit_ms);

/**
 * vm_resume_vcpus() - let parked vCPU threads run again.
 * Context: as vm_pause_vcpus().
 */
void vm_resume_vcpus(struct vm *vm);

/**
 * vm_dump_vcpus() - log every vCPU's main registers (for --verbose after a
 * timeout or crash).  Context: main thread, vCPUs stopped.
 */
void vm_dump_vcpus(struct vm *vm);

/** vm_close() - release everything vm_open() and later calls acquired. */
void vm_close(struct vm *vm);

/**
 * vm_print_stats() - one "microvm: stats vcpu N: ..." line per vCPU with
 * its returns from KVM_RUN (exits to userspace) by kind: port I/O and
 * MMIO in all, then each by direction.
 * @vm: the VM
 * @fd: where to write
 *
 * Context: any thread, while the vCPUs exist (counts may be mid-update).
 */
void vm_print_stats(struct vm *vm, int fd);

/**
 * vm_irq_line() - set the level of an interrupt controller input pin.
 * Matches irq_set_fn (devices/irq.h) so devices can take it directly.
 * Context: any thread.
 */
void vm_irq_line(void *vm, uint32_t gsi, int level);

/**
 * vm_irq_routing_init() - install the architecture's base GSI routes
 * (arch_irq_routes()) so that MSI routes can be added later.
 * Return: 0 or -errno with a message.  Context: startup, after irqchip.
 */
int vm_irq_routing_init(struct vm *vm, char *err, size_t errlen);

/* The hypervisor services virtio transports use (virtio/host.h). */
extern const struct virtio_host_ops vm_virtio_host_ops;

/**
 * vm_coalesce_pio() - let KVM queue the guest's writes to ports [@port,
 * @port + @len) instead of exiting (vmm/coalesced.h). The bus handler
 * of those ports then sees each write later, in order, before any other
 * exit is handled, at vm_pause_vcpus() and vm_stop_vcpus(), and at
 * least every VM_COALESCED_FLUSH_MS (vm_coalesced_flush() from main).
 * Reads still exit. For handlers whose writes may take effect late.
 * Return: 0; -EOPNOTSUPP when KVM cannot (the writes keep exiting, which
 * is correct, only slower); -errno from the ioctl.
 * Context: setup, before vm_start_vcpus().
 */
int vm_coalesce_pio(struct vm *vm, uint16_t port, uint32_t len);

/**
 * vm_coalesced_flush() - replay the queued writes now.
 * Context: any thread; cheap when nothing is queued.
 */
void vm_coalesced_flush(struct vm *vm);

#endif
