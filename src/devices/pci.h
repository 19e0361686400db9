/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A PCI host bridge for segment 0, bus 0 (function 0 of up to 32 slots),
 * reachable through configuration mechanism #1 (ports 0xcf8-0xcff) and
 * ECAM, plus a generic type-0 configuration space model: a per-byte write
 * mask, 64-bit memory BARs with sizing, a capability list builder and
 * hooks through which a device sees accesses to its capability fields.
 *
 * Usage sketch (the VMM registers the handlers; devices never see a bus):
 *
 *	pci_bus_init(&pci, PCI_MMIO32_BASE, PCI_MMIO32_SIZE);
 *	pci_dev_init(&dev, &ids);
 *	pci_dev_set_bar(&dev, 0, 0x4000, false, dev_bar_access, &state);
 *	pci_add_cap(&dev, PCI_CAP_ID_VNDR, body, sizeof(body), wmask);
 *	pci_bus_add(&pci, &dev);                 // slot and BAR assigned
 *	bus_register(&pio, PORT_PCI_CONFIG_ADDR, PCI_CFG_IO_LEN,
 *		     pci_cfg_io_access, &pci);
 *	bus_register(&mmio, PCI_ECAM_BASE, PCI_ECAM_SIZE, pci_ecam_access,
 *		     &pci);
 *	bus_register(&mmio, PCI_MMIO32_BASE, PCI_MMIO32_SIZE, pci_mmio_access,
 *		     &pci);
 */
#ifndef MICROVM_PCI_H
#define MICROVM_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_CFG_SPACE_SIZE 256  /* bytes modelled; extended space reads 0 */
#define PCI_ECAM_FN_SIZE 4096   /* bytes of ECAM window per function */
#define PCI_MAX_SLOTS 32
#define PCI_NUM_BARS 6
#define PCI_CFG_IO_LEN 8        /* ports 0xcf8-0xcff */
#define PCI_BAR_UNMAPPED UINT64_MAX /* a BAR the device does not decode */

/* Type-0 header offsets (PCI Local Bus 3.0 §6.1). */
#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_REVISION_ID 0x08
#define PCI_CLASS_PROG 0x09     /* 24-bit class code at 0x09-0x0b */
#define PCI_CACHE_LINE_SIZE 0x0c
#define PCI_LATENCY_TIMER 0x0d
#define PCI_HEADER_TYPE 0x0e
#define PCI_BASE_ADDRESS_0 0x10
#define PCI_SUBSYSTEM_VENDOR_ID 0x2c
#define PCI_SUBSYSTEM_ID 0x2e
#define PCI_ROM_ADDRESS 0x30
#define PCI_CAPABILITY_LIST 0x34
#define PCI_INTERRUPT_LINE 0x3c
#define PCI_INTERRUPT_PIN 0x3d
#define PCI_CAP_START 0x40      /* first capability goes here */

#define PCI_COMMAND_IO 0x0001
#define PCI_COMMAND_MEMORY 0x0002
#define PCI_COMMAND_MASTER 0x0004
#define PCI_COMMAND_INTX_DISABLE 0x0400
#define PCI_STATUS_CAP_LIST 0x0010

#define PCI_BAR_MEM_TYPE_64 0x4
#define PCI_BAR_MEM_PREFETCH 0x8
#define PCI_BAR_FLAG_MASK 0xfULL

#define PCI_CAP_ID_VNDR 0x09
#define PCI_CAP_ID_MSIX 0x11

/* MSI-X capability and table (PCI Local Bus 3.0 §6.8.2). */
#define PCI_MSIX_FLAGS 2              /* Message Control, from cap ID */
#define PCI_MSIX_FLAGS_QSIZE 0x07ff   /* table size - 1 */
#define PCI_MSIX_FLAGS_MASKALL 0x4000
#define PCI_MSIX_FLAGS_ENABLE 0x8000
#define PCI_MSIX_TABLE 4              /* offset | BIR, from cap ID */
#define PCI_MSIX_PBA 8
#define PCI_MSIX_ENTRY_SIZE 16
#define PCI_MSIX_ENTRY_CTRL_MASKBIT 1

#define PCI_ECAM_OFFSET(bus, dev, fn, reg)                                   \
	(((uint64_t)(bus) << 20) | ((uint64_t)(dev) << 15) |                 \
	 ((uint64_t)(fn) << 12) | (uint64_t)(reg))

struct pci_dev;

/* Same shape as the VMM's bus handler: @offset is from the BAR's base. */
typedef void (*pci_bar_access_fn)(void *opaque, uint64_t offset,
				  uint8_t *data, unsigned int len,
				  bool is_write);

/*
 * The decoded address of BAR @bar changed from @old to @new_addr; either
 * may be PCI_BAR_UNMAPPED (memory decoding off).
 */
typedef void (*pci_bar_moved_fn)(struct pci_dev *d, int bar, uint64_t old,
				 uint64_t new_addr);

/*
 * An access to config bytes [@off, @off + @len) (all below
 * PCI_CFG_SPACE_SIZE): before a read, so the device may refresh d->cfg;
 * after a write, once the write mask has been applied.
 */
typedef void (*pci_cfg_hook_fn)(struct pci_dev *d, unsigned int off,
				unsigned int len, bool is_write);

struct pci_ids {
	uint16_t vendor;
	uint16_t device;
	uint16_t subsys_vendor;
	uint16_t subsys_id;
	uint32_t class_code; /* base class << 16 | subclass << 8 | prog-if */
	uint8_t revision;
};

struct pci_bar {
	uint64_t size;          /* 0: unused */
	bool prefetch;
	pci_bar_access_fn fn;
	void *opaque;
	uint64_t mapped;        /* decoded address or PCI_BAR_UNMAPPED */
};

struct pci_bus;

struct pci_dev {
	/*
	 * Serialises this function's config accesses and its callbacks
	 * (cfg_hook, bar_moved); the bus lock is not held meanwhile.
	 */
	pthread_mutex_t lock;
	uint8_t cfg[PCI_CFG_SPACE_SIZE];
	uint8_t wmask[PCI_CFG_SPACE_SIZE]; /* 1 bits the guest may write */
	unsigned int cap_free;  /* where the next capability goes */
	unsigned int cap_last;  /* offset of the last capability, or 0 */
	struct pci_bar bars[PCI_NUM_BARS];
	pci_bar_moved_fn bar_moved;
	pci_cfg_hook_fn cfg_hook;
	void *opaque;           /* for the owner's callbacks */
	int slot;               /* -1 until pci_bus_add() */
	struct pci_bus *bus;    /* set by pci_bus_add() */
	unsigned int users;     /* accesses in progress, under bus->lock */
};

struct pci_bus {
	/*
	 * CONFIG_ADDRESS, slots, every BAR's decoded address and each
	 * device's users; held only for lookups, never across a device's
	 * callbacks or BAR handlers.
	 */
	pthread_mutex_t lock;
	pthread_cond_t idle;    /* a removed device's last access ended */
	uint32_t config_address; /* port 0xcf8 */
	uint64_t mmio_base;
	uint64_t mmio_size;
	uint64_t mmio_next;     /* next free address for BAR assignment */
	struct pci_dev *slots[PCI_MAX_SLOTS];
	unsigned int nr_slots;  /* slots handed out so far */
	struct pci_dev host_bridge;
};

/**
 * pci_dev_init() - an empty type-0 configuration space.
 * @d: device to set up
 * @ids: identity written into the read-only header fields
 *
 * COMMAND (I/O, memory, bus master, INTx disable), cache line size,
 * latency timer and interrupt line are writable; everything else is read
 * only until BARs and capabilities are added. Callbacks start unset.
 * Context: setup.
 */
void pci_dev_init(struct pci_dev *d, const struct pci_ids *ids);

/**
 * pci_dev_set_bar() - declare a 64-bit memory BAR.
 * @d: device, not yet on a bus
 * @bar: 0, 2 or 4 (the BAR and the next one hold the 64-bit address)
 * @size: power of two, at least 16
 * @prefetch: set the prefetchable bit
 * @fn: handler for accesses inside the BAR while it is decoded
 * @opaque: first argument of @fn
 *
 * Return: 0, or -EINVAL for a bad index, size or a BAR already in use.
 * Context: setup.
 */
int pci_dev_set_bar(struct pci_dev *d, int bar, uint64_t size, bool prefetch,
		    pci_bar_access_fn fn, void *opaque);

/**
 * pci_add_cap() - append a capability to the list that starts at 0x34.
 * @d: device, not yet on a bus
 * @id: capability ID
 * @body: the capability's bytes after its ID and next pointer
 * @len: bytes in @body
 * @wmask: per-byte write mask for @body (NULL: read only)
 *
 * The capability is placed dword-aligned after the previous one and the
 * STATUS capability-list bit is set. The ID and next pointer stay read
 * only.
 *
 * Return: the capability's offset in config space, or -ENOSPC when it
 * does not fit below PCI_CFG_SPACE_SIZE.
 * Context: setup.
 */
int pci_add_cap(struct pci_dev *d, uint8_t id, const void *body, size_t len,
		const uint8_t *wmask);

/**
 * pci_bus_init() - bus 0 with a host bridge in slot 0.
 * @b: bus to set up
 * @mmio_base: start of the window BARs are assigned from
 * @mmio_size: its length
 *
 * Return: 0, or -EINVAL for an empty or wrapping window.
 * Context: setup.
 */
/**
 * pci_dev_cfg_write() - a config space write to @d as the guest's would
 * be: only wmask bits change, BAR decoding follows Command and the BARs,
 * and the function's cfg_hook runs. For a restore replaying what the
 * driver wrote. Context: any thread but @d's own callbacks.
 */
void pci_dev_cfg_write(struct pci_dev *d, unsigned int reg,
		       const uint8_t *data, unsigned int len);

/**
 * pci_dev_cfg_load() - a saved config space back into @d (a restore):
 * its read-only bytes must be @d's, and the writable ones are taken as
 * saved, without side effects, except those @skip (if any) says the
 * caller replays itself through pci_dev_cfg_write().
 * @d: the function, not yet seen by the guest
 * @cfg: PCI_CFG_SPACE_SIZE saved bytes
 * @skip: NULL, or true for a register byte to leave as it is
 * @opaque: for @skip
 * @bad: set to the first read-only byte that differs, on failure
 * Return: 0, or -EINVAL (nothing changed).
 */
int pci_dev_cfg_load(struct pci_dev *d, const uint8_t *cfg,
		     bool (*skip)(const void *opaque, unsigned int reg),
		     const void *opaque, unsigned int *bad);

int pci_bus_init(struct pci_bus *b, uint64_t mmio_base, uint64_t mmio_size);

/** pci_bus_destroy() - release what pci_bus_init() created. */
void pci_bus_destroy(struct pci_bus *b);

struct snap_writer;
struct snap_reader;

/**
 * pci_bus_save() - the bus's own state for a snapshot: CONFIG_ADDRESS
 * (port 0xcf8, which a vCPU paused between its two accesses left set)
 * and the host bridge's config space (what Linux wrote to its Command,
 * cache line, latency and interrupt line bytes). The functions on the
 * bus save theirs themselves. Context: any thread, the guest paused.
 */
void pci_bus_save(struct pci_bus *b, struct snap_writer *w);

/**
 * pci_bus_load() - pci_bus_save()'s state back: the bridge's writable
 * bytes, CONFIG_ADDRESS masked to what the port keeps.
 * Return: 0, or -EINVAL for a malformed state or one whose read-only
 * bytes (IDs, class) are not this bridge's.
 * Context: startup of a restore, before the vCPUs run.
 */
int pci_bus_load(struct pci_bus *b, struct snap_reader *r);

/**
 * pci_bus_add() - plug @d into the next free slot.
 * @b: bus
 * @d: device with its BARs and capabilities declared
 *
 * Assigns each BAR an address from the window, naturally aligned, as
 * firmware would; memory decoding stays off until the guest sets
 * COMMAND.MEMORY. Sets d->slot.
 *
 * Return: 0, -ENOSPC when the slots or the window are exhausted.
 * Context: setup.
 */
int pci_bus_add(struct pci_bus *b, struct pci_dev *d);

/**
 * pci_bus_remove() - unplug @d; its slot then reads all ones. Waits for
 * config and BAR accesses to @d that had already found it.
 * Context: teardown, or any thread not inside a callback of @d.
 */
void pci_bus_remove(struct pci_bus *b, struct pci_dev *d);

/**
 * pci_cfg_io_access() - handler for ports 0xcf8-0xcff (PCI_CFG_IO_LEN).
 * @opaque: the struct pci_bus
 * @offset: 0-3 CONFIG_ADDRESS (dword accesses only), 4-7 CONFIG_DATA
 * @data: guest data, little endian
 * @len: 1, 2 or 4
 * @is_write: direction
 *
 * Data accesses reach register (CONFIG_ADDRESS & 0xfc) + (@offset - 4)
 * when the enable bit 31 is set; otherwise reads return all ones.
 * The device's callbacks run under its own lock (pci_dev.lock), not
 * b->lock, so a slow one stalls accesses to that device only.
 * Context: any vCPU thread.
 */
void pci_cfg_io_access(void *opaque, uint64_t offset, uint8_t *data,
		       unsigned int len, bool is_write);

/**
 * pci_ecam_access() - handler for the ECAM window (bus 0: 1 MiB).
 * @opaque: the struct pci_bus
 * @offset: PCI_ECAM_OFFSET(bus, dev, fn, reg)
 * @data: guest data, little endian
 * @len: 1 to 8
 * @is_write: direction
 *
 * Absent devices, functions and buses read all ones; registers past
 * PCI_CFG_SPACE_SIZE of a present function read 0. Callbacks run as for
 * pci_cfg_io_access().
 * Context: any vCPU thread.
 */
void pci_ecam_access(void *opaque, uint64_t offset, uint8_t *data,
		     unsigned int len, bool is_write);

/**
 * pci_mmio_access() - handler for the whole BAR window.
 * @opaque: the struct pci_bus
 * @offset: from the window base given to pci_bus_init()
 * @data: guest data, little endian
 * @len: access width
 * @is_write: direction
 *
 * Forwards to the BAR that decodes the address now (COMMAND.MEMORY set,
 * access wholly inside the BAR); anything else reads all ones. The BAR
 * handler runs without b->lock.
 * Context: any vCPU thread.
 */
void pci_mmio_access(void *opaque, uint64_t offset, uint8_t *data,
		     unsigned int len, bool is_write);

#endif
