/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A machine is a VM plus the devices of its configuration. main builds it
 * through an explicit init table and tears it down in reverse order.
 * machine_* is architecture-neutral; arch_machine_* (one implementation
 * per architecture) adds the platform devices, the firmware tables and
 * the kernel.
 */
#ifndef MICROVM_MACHINE_H
#define MICROVM_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap.h"
#include "vmm/config.h"
#include "vmm/vm.h"

#define MACHINE_MAX_MMIO_DEVS 32

/* A device window the firmware tables must announce (virtio-mmio). */
struct machine_mmio_dev {
	uint64_t base;
	uint64_t size;
	uint32_t gsi;
};

/*
 * A device the machine pauses and resumes (and, later, saves): the one
 * owner of its state registers it once attached (machine_add_dev()).
 */
struct snap_writer;
struct snap_reader;

struct machine_dev_ops {
	/* Quiesce: in-flight work completed, threads parked or joined.
	 * NULL: a device with no threads (a UART). */
	void (*pause)(void *opaque);
	/* Go on from where pause left it. 0 or -errno. NULL: as pause. */
	int (*resume)(void *opaque);
	/* The paused device's state for a snapshot; NULL: the machine
	 * cannot be snapshotted. 0 or -errno with a message in @err. */
	int (*save)(void *opaque, struct snap_writer *w, char *err,
		    size_t errlen);
	/* That state into the device just attached; it stays paused until
	 * the machine resumes. 0 or -errno with a message in @err. */
	int (*load)(void *opaque, struct snap_reader *r, char *err,
		    size_t errlen);
};

/*
 * MACHINE_DEV_STATE_OPS(ops, type, save_fn, load_fn, what): a const
 * struct machine_dev_ops @ops for a device of @type with no threads to
 * pause (the vCPUs that drive it are parked), whose state @save_fn(dev,
 * writer) writes and @load_fn(dev, reader) reads back, returning 0 or
 * -EINVAL; a load that fails says "@what: malformed state".
 */
#define MACHINE_DEV_STATE_OPS(ops, type, save_fn, load_fn, what)            \
	static int ops##_save(void *opaque, struct snap_writer *w,           \
			      char *err, size_t errlen)                      \
	{                                                                    \
		(void)err;                                                   \
		(void)errlen;                                                \
		save_fn((type *)opaque, w);                                  \
		return 0;                                                    \
	}                                                                    \
	static int ops##_load(void *opaque, struct snap_reader *r,           \
			      char *err, size_t errlen)                      \
	{                                                                    \
		if (!load_fn((type *)opaque, r))                             \
			return 0;                                            \
		snprintf(err, errlen, "%s: malformed state", what);          \
		return -EINVAL;                                              \
	}                                                                    \
	static const struct machine_dev_ops ops = {                          \
		.save = ops##_save,                                          \
		.load = ops##_load,                                          \
	}

struct machine_dev {
	const char *name;
	const struct machine_dev_ops *ops;
	void *opaque;
};

#define MACHINE_MAX_DEVS 64

/*
 * Where the machine stands. NOT_STARTED -> RUNNING (boot) <-> PAUSED,
 * and RUNNING or PAUSED -> STOPPED once the guest or the VMM ended it.
 */
enum machine_state {
	MACHINE_NOT_STARTED,
	MACHINE_RUNNING,
	MACHINE_PAUSED,
	MACHINE_STOPPED,
};

struct arch_machine;
struct machine_disk;
struct machine_net;
struct mmds;
struct machine_vsock;
struct metrics;
struct metrics_drive;
struct metrics_net;
struct pci_bus;

struct machine {
	struct vm vm;
	struct vm_config *cfg;
	uint8_t *kernel;   /* image file contents */
	size_t kernel_len;
	uint8_t *initrd;
	size_t initrd_len;
	struct machine_mmio_dev mmio_devs[MACHINE_MAX_MMIO_DEVS];
	unsigned int nr_mmio_devs;
	struct pci_bus *pci; /* segment 0 bus 0; NULL where there is none */
	struct machine_disk *disks;
	unsigned int nr_disks;
	struct machine_vsock *vsock; /* NULL: none (machine_vsock.c) */
	struct machine_net *nets;    /* cfg->nets' (machine_net.c) */
	struct mmds *mmds;           /* the metadata store; main's */
	unsigned int nr_nets;
	struct arch_machine *arch;
	/*
	 * Where the guest console's output goes: STDOUT_FILENO or the
	 * --console file (main's "console" step opens it).
	 */
	int console_fd;
	/* Devices in attach order: paused in it, resumed in reverse. */
	struct machine_dev devs[MACHINE_MAX_DEVS];
	unsigned int nr_devs;
	_Atomic int state; /* enum machine_state; written by main only */
	struct metrics *metrics; /* metrics_init() (vmm/metrics.h) */
	/* A snapshot was written (or restored) and, with dirty tracking,
	 * the pages changed since are known: a Diff may follow. */
	bool snap_base;
};

/**
 * machine_open_disks() - open and lock every configured image. Runs before
 * the VM exists, so bad disk arguments are reported without KVM.
 * Return: 0 or -errno with a message naming the disk.  Context: startup.
 */
int machine_open_disks(struct machine *m, char *err, size_t errlen);

/**
 * machine_attach_disks() - a virtio-blk device for each open image, on its
 * transport (mmio slots from arch_mmio_slot(), pci on m->pci).
 * Return: 0 or -errno with a message.  Context: startup, before
 * arch_machine_boot() builds the firmware tables.
 */
int machine_attach_disks(struct machine *m, char *err, size_t errlen);

/**
 * machine_confine_disks() - allow block-device discard and write-zeroes
 * ioctls on the open images' descriptors only (confine_disk_fds()).
 * Return: 0 or -errno with @err filled. Context: main thread, after the
 * init steps, before the vCPU threads start.
 */
int machine_confine_disks(struct machine *m, char *err, size_t errlen);

/** machine_detach_disks() - stop the devices; in-flight I/O completes. */
void machine_detach_disks(struct machine *m);

/**
 * machine_sync_disks() - fsync every writable image (before a snapshot's
 * memory is written). Return: 0, or -errno with @err naming the drive.
 */
int machine_sync_disks(struct machine *m, char *err, size_t errlen);

/** machine_close_disks() - detach, then flush and close the images. */
void machine_close_disks(struct machine *m);

/**
 * machine_print_stats() - the time to vCPU 0's first KVM_RUN, per-queue
 * counters of every disk, then the platform's lines (boot-time marks, the
 * console's output counters), to @fd.
 */
void machine_print_stats(struct machine *m, int fd);

/**
 * machine_metrics_drives() - each disk with a device, for a metrics line:
 * its drive id, its device's queue counters and its image's counters.
 * Return: how many of @out were filled (at most @max).
 * Context: any thread while the disks exist.
 */
unsigned int machine_metrics_drives(struct machine *m,
				    struct metrics_drive *out,
				    unsigned int max);

/**
 * machine_attach_vsock() - the vsock device of cfg->vsock, if set: the
 * device (its socket bound at uds_path) on its transport.
 * Return: 0 or -errno with @err naming uds_path and the cause.
 * Context: startup, after the disks.
 */
int machine_attach_vsock(struct machine *m, char *err, size_t errlen);

/** machine_detach_vsock() - undo machine_attach_vsock() (uds_path unlinked
 * unless machine_vsock_keep_path() was called). */
void machine_detach_vsock(struct machine *m);

/**
 * machine_vsock_keep_path() - the vsock device, if any, leaves its
 * uds_path at detach: for a main thread about to be confined, which may
 * no longer unlink. Context: main thread.
 */
void machine_vsock_keep_path(struct machine *m);

/** machine_vsock_print_stats() - --stats lines of the vsock device. */
void machine_vsock_print_stats(struct machine *m, int fd);

struct vsock_dev_stats;

/**
 * machine_vsock_stats() - the vsock device's counters (totals).
 * Return: 0, or -ENODEV without a vsock device. Context: any thread.
 */
int machine_vsock_stats(struct machine *m, struct vsock_dev_stats *out);

/**
 * machine_vsock_fds() - descriptors the vsock device may open after
 * setup (for confine_limit_fds()).
 */
unsigned int machine_vsock_fds(const struct machine *m);

/**
 * machine_open_nets() - open every configured interface's tap, one fd per
 * queue pair. Runs before the VM exists, so a bad tap is reported without
 * KVM, and before main confines itself (it opens /dev/net/tun).
 * Return: 0 or -errno with @err naming the interface, the tap and the
 * cause. Context: startup, main thread.
 */
int machine_open_nets(struct machine *m, char *err, size_t errlen);

/**
 * machine_attach_nets() - a virtio-net device on each open tap, on its
 * transport; the device takes the tap's fds.
 * Return: 0 or -errno with a message. Context: startup, after the vsock
 * device.
 */
int machine_attach_nets(struct machine *m, char *err, size_t errlen);

/** machine_detach_nets() - stop and destroy the devices (in reverse). */
void machine_detach_nets(struct machine *m);

/** machine_close_nets() - detach, then close the taps no device took. */
void machine_close_nets(struct machine *m);

/** machine_net_print_stats() - --stats lines of each interface. */
void machine_net_print_stats(struct machine *m, int fd);

/**
 * machine_metrics_nets() - each interface with a device, for a metrics
 * line: its iface_id and its device's counters.
 * Return: how many of @out were filled (at most @max).
 * Context: any thread while the devices exist.
 */
unsigned int machine_metrics_nets(struct machine *m, struct metrics_net *out,
				  unsigned int max);

/**
 * machine_patch_net() - PATCH /network-interfaces/{id} after boot on
 * interface @index: @rx and @tx (NULL: keep) its rate limits from now on.
 * Return: 0 or -errno with a message in @err; on error nothing changed.
 * Context: main thread, machine running or paused.
 */
int machine_patch_net(struct machine *m, unsigned int index,
		      const struct rl_config *rx, const struct rl_config *tx,
		      char *err, size_t errlen);

/**
 * machine_add_dev() - register a device for pause and resume.
 * Return: 0, or -ENOSPC past MACHINE_MAX_DEVS.  Context: startup.
 */
int machine_add_dev(struct machine *m, const char *name,
		    const struct machine_dev_ops *ops, void *opaque);

/* The pause and resume of a virtio device (virtio_dev_pause/resume). */
extern const struct machine_dev_ops machine_virtio_dev_ops;

/**
 * machine_set_pci() - @b is the machine's PCI bus (segment 0, bus 0):
 * virtio-pci devices go on it, and its own state (CONFIG_ADDRESS and the
 * host bridge, pci_bus_save()) is in every snapshot as "pci-host".
 * Return: 0, or -ENOSPC past MACHINE_MAX_DEVS.  Context: startup.
 */
int machine_set_pci(struct machine *m, struct pci_bus *b);

/**
 * machine_pause() - RUNNING -> PAUSED: park every vCPU, then pause the
 * devices in attach order. Nothing the guest submitted is lost: each
 * device completes what it took first.
 * Return: 0, -EINVAL (not running; a message in @err), -ETIMEDOUT (a
 * vCPU did not park; the machine runs on) or -ESHUTDOWN.
 * Context: main thread.
 */
int machine_pause(struct machine *m, char *err, size_t errlen);

/**
 * machine_resume() - PAUSED -> RUNNING: devices in reverse order, then
 * the vCPUs. A device that cannot resume is marked broken (NEEDS_RESET)
 * and the rest go on.
 * Return: 0, or -EINVAL (not paused; a message in @err).
 * Context: main thread.
 */
int machine_resume(struct machine *m, char *err, size_t errlen);

/**
 * machine_patch_disk() - PATCH /drives/{id} after boot on disk @index:
 * @path (NULL: keep) becomes its backing image, the device quiesced
 * meanwhile and the guest told the new capacity by a configuration
 * change interrupt; @rl (NULL: keep) its rate limits from now on.
 * Return: 0 or -errno with a message in @err; on error nothing changed.
 * Context: main thread, machine running or paused.
 */
int machine_patch_disk(struct machine *m, unsigned int index,
		       const char *path, const struct rl_config *rl,
		       char *err, size_t errlen);

/**
 * arch_machine_ctrl_alt_del() - press Ctrl-Alt-Del on the guest's
 * keyboard (x86: the i8042; arm64: the virtio-input keyboard the
 * machine has when it serves the API), for its orderly shutdown.
 * Return: 0, -ENOTSUP where the machine has no keyboard, or -ENODEV
 * when the guest never drove it (arm64: no DRIVER_OK yet).
 * Context: main thread.
 */
int arch_machine_ctrl_alt_del(struct machine *m);

/* PUT /snapshot/create, as main hands it over. */
struct machine_snapshot_req {
	const char *state_path; /* snapshot_path */
	const char *mem_path;   /* mem_file_path */
	bool diff;              /* snapshot_type Diff */
	const char *config_json; /* fc_snapshot_config_json() of the config */
};

/**
 * machine_snapshot_create() - write the paused machine to @req's files:
 * guest RAM to mem_path (sparse), then the state file (written last, so a
 * complete state file means a complete snapshot).
 * Return: 0, or -errno with a message in @err: -EINVAL (not paused, or
 * mem_path is the file the RAM is mapped from), -EOPNOTSUPP (a Diff
 * snapshot; a device or drive that cannot be saved, named), or the I/O
 * error naming the path. The machine stays paused either way.
 * Context: main thread.
 */
int machine_snapshot_create(struct machine *m,
			    const struct machine_snapshot_req *req, char *err,
			    size_t errlen);

/* A state file read and checked, for a restore. */
struct machine_snapshot {
	uint8_t *buf;          /* the whole file */
	size_t len;
	struct snap_file f;
	char *config;          /* its configuration (JSON text) */
	size_t config_len;
	uint64_t ram_size;     /* the memory file holds this much */
	unsigned int ncpus;
	bool diff;
};

/**
 * machine_snapshot_open() - read and check the state file at @path (size,
 * magic, version, architecture, checksum, framing, the information,
 * configuration and memory sections).
 * Return: 0 with @s filled (machine_snapshot_close() it), or -errno with
 * one line in @err naming @path.  Context: main thread, startup.
 */
int machine_snapshot_open(const char *path, struct machine_snapshot *s,
			  char *err, size_t errlen);

/** machine_snapshot_close() - free what machine_snapshot_open() read. */
void machine_snapshot_close(struct machine_snapshot *s);

/**
 * machine_snapshot_apply() - the snapshot's state into the machine built
 * from its configuration (RAM mapped from its memory file, vCPUs created,
 * devices attached, none run yet): the CPU check first, then the VM's
 * in-kernel devices, each vCPU, each device by name. Every device must
 * find its state and every state its device.
 * Return: 0, or -EINVAL with a message naming the part refused.
 * Context: main thread, startup of a restore.
 */
int machine_snapshot_apply(struct machine *m, const struct machine_snapshot *s,
			   char *err, size_t errlen);

/** machine_state_name() - Firecracker's name of @s ("Not started", ...). */
const char *machine_state_name(enum machine_state s);

struct uart_host;

/**
 * machine_console_close() - flush the console UART's output for at most
 * @flush_ms, stop its output thread, and warn if guest output was dropped
 * (naming the --console file or stdout). For arch_machine_console_flush().
 */
void machine_console_close(struct machine *m, struct uart_host *h,
			   unsigned int flush_ms);

/** machine_console_print_stats() - the console's output counters to @fd. */
void machine_console_print_stats(struct uart_host *h, int fd);

/**
 * arch_mmio_slot() - the register window and interrupt of virtio-mmio
 * device number @n.  Return: 0, or -ENOSPC when there is no slot @n.
 */
int arch_mmio_slot(unsigned int n, uint64_t *base, uint32_t *gsi);

/**
 * arch_machine_devices() - create and register the platform devices
 * (console UART, reset and exit ports, power management).
 * Return: 0 or -errno with a message.  Context: startup.
 */
int arch_machine_devices(struct machine *m, char *err, size_t errlen);

/**
 * arch_machine_boot() - write firmware tables for every device the machine
 * has by now, load the kernel and initrd, and set the boot vCPU's state.
 * Return: 0 or -errno with a message.  Context: startup, vCPUs created.
 */
int arch_machine_boot(struct machine *m, char *err, size_t errlen);

/**
 * arch_machine_restore() - what a restore needs in place of the boot
 * before the snapshot's state is applied: the devices arch_machine_boot()
 * would have added (arm64: the keyboard, with an API), nothing loaded.
 * Return: 0 or -errno with a message.  Context: startup of a restore,
 * vCPUs created.
 */
int arch_machine_restore(struct machine *m, char *err, size_t errlen);

/**
 * arch_machine_console_start() - connect stdin to the guest console.
 * Return: 0 or -errno.
 */
int arch_machine_console_start(struct machine *m);

/**
 * arch_machine_console_flush() - write out the guest's console output for
 * at most SERIAL_TX_FLUSH_MS, stop the console output thread, and warn
 * when output was dropped. Later output is dropped (and counted).
 * Context: main thread, once the vCPUs stopped (or were given up on).
 */
void arch_machine_console_flush(struct machine *m);

/** arch_machine_print_stats() - console output counters to @fd. */
void arch_machine_print_stats(struct machine *m, int fd);

/** arch_machine_free() - undo arch_machine_devices(). */
void arch_machine_free(struct machine *m);

#endif
