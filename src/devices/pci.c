// SPDX-License-Identifier: Apache-2.0
/*
 * PCI configuration space model and bus 0 dispatch. Every config access is
 * byte-granular under the function's own lock: reads copy bytes (all ones
 * for absent functions, 0 past the modelled 256 bytes), writes merge
 * through the per-byte write mask, so no width or alignment can touch a
 * read-only byte. BAR decode changes are recomputed after each COMMAND/BAR
 * write. The bus lock covers only CONFIG_ADDRESS, the slot table and the
 * decoded BAR addresses, and is never held across a device's callbacks:
 * one device's slow config write (a reset waiting for its disk I/O) holds
 * up that device alone. Lock order: pci_dev.lock, then pci_bus.lock.
 */
#include "devices/pci.h"

#include <errno.h>
#include <string.h>

#include "snapshot/snap.h"
#include "util/le.h"

#define PCI_HOST_BRIDGE_VENDOR 0x1b36
#define PCI_HOST_BRIDGE_DEVICE 0x0008
#define PCI_CLASS_HOST_BRIDGE 0x060000

#define PCI_BARS_LEN (4 * PCI_NUM_BARS)
#define CONFIG_ADDRESS_ENABLE 0x80000000u
#define CONFIG_ADDRESS_MASK 0x80fffffcu /* bus, dev, fn, dword register */

static bool range_overlaps(unsigned int a, unsigned int alen, unsigned int b,
			   unsigned int blen)
{
	return a < b + blen && b < a + alen;
}

void pci_dev_init(struct pci_dev *d, const struct pci_ids *ids)
{
	int i;

	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	le_put(d->cfg + PCI_VENDOR_ID, 2, ids->vendor);
	le_put(d->cfg + PCI_DEVICE_ID, 2, ids->device);
	d->cfg[PCI_REVISION_ID] = ids->revision;
	le_put(d->cfg + PCI_CLASS_PROG, 3, ids->class_code);
	d->cfg[PCI_HEADER_TYPE] = 0;
	le_put(d->cfg + PCI_SUBSYSTEM_VENDOR_ID, 2, ids->subsys_vendor);
	le_put(d->cfg + PCI_SUBSYSTEM_ID, 2, ids->subsys_id);
	le_put(d->wmask + PCI_COMMAND, 2,
	       PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
	       PCI_COMMAND_INTX_DISABLE);
	d->wmask[PCI_CACHE_LINE_SIZE] = 0xff;
	d->wmask[PCI_LATENCY_TIMER] = 0xff;
	d->wmask[PCI_INTERRUPT_LINE] = 0xff;
	d->cap_free = PCI_CAP_START;
	for (i = 0; i < PCI_NUM_BARS; i++)
		d->bars[i].mapped = PCI_BAR_UNMAPPED;
	d->slot = -1;
}

int pci_dev_set_bar(struct pci_dev *d, int bar, uint64_t size, bool prefetch,
		    pci_bar_access_fn fn, void *opaque)
{
	unsigned int off = PCI_BASE_ADDRESS_0 + 4 * (unsigned int)bar;
	uint32_t flags = PCI_BAR_MEM_TYPE_64;
	uint64_t mask = ~(size - 1);

	if ((bar != 0 && bar != 2 && bar != 4) || size < 16 ||
	    (size & (size - 1)) || d->bars[bar].size || !fn)
		return -EINVAL;
	if (prefetch)
		flags |= PCI_BAR_MEM_PREFETCH;
	d->bars[bar] = (struct pci_bar){
		.size = size,
		.prefetch = prefetch,
		.fn = fn,
		.opaque = opaque,
		.mapped = PCI_BAR_UNMAPPED,
	};
	/* Sizing: all-ones written reads back ~(size - 1) | flags. */
	le_put(d->cfg + off, 8, flags);
	le_put(d->wmask + off, 4, (uint32_t)(mask & ~PCI_BAR_FLAG_MASK));
	le_put(d->wmask + off + 4, 4, (uint32_t)(mask >> 32));
	return 0;
}

int pci_add_cap(struct pci_dev *d, uint8_t id, const void *body, size_t len,
		const uint8_t *wmask)
{
	unsigned int off = d->cap_free;
	uint16_t status;

	if (off + 2 > PCI_CFG_SPACE_SIZE || len > PCI_CFG_SPACE_SIZE - 2 - off)
		return -ENOSPC;
	d->cfg[off] = id;
	d->cfg[off + 1] = 0;
	memcpy(d->cfg + off + 2, body, len);
	if (wmask)
		memcpy(d->wmask + off + 2, wmask, len);
	if (d->cap_last)
		d->cfg[d->cap_last + 1] = (uint8_t)off;
	else
		d->cfg[PCI_CAPABILITY_LIST] = (uint8_t)off;
	status = (uint16_t)le_get(d->cfg + PCI_STATUS, 2);
	le_put(d->cfg + PCI_STATUS, 2, status | PCI_STATUS_CAP_LIST);
	d->cap_last = off;
	d->cap_free = (off + 2 + (unsigned int)len + 3) & ~3u;
	return (int)off;
}

/*
 * Recompute what each BAR decodes; tell the owner about every change. The
 * new address is published under the bus lock (pci_mmio_access() reads
 * it there); bar_moved runs under d->lock only.
 */
static void pci_dev_update_bars_locked(struct pci_dev *d)
{
	uint64_t cmd = le_get(d->cfg + PCI_COMMAND, 2);
	int i;

	for (i = 0; i < PCI_NUM_BARS; i++) {
		struct pci_bar *bar = &d->bars[i];
		uint64_t addr, old;

		if (!bar->size)
			continue;
		addr = le_get(d->cfg + PCI_BASE_ADDRESS_0 + 4 * i, 8) &
		       ~PCI_BAR_FLAG_MASK;
		if (!(cmd & PCI_COMMAND_MEMORY))
			addr = PCI_BAR_UNMAPPED;
		if (addr == bar->mapped)
			continue;
		old = bar->mapped;
		pthread_mutex_lock(&d->bus->lock);
		bar->mapped = addr;
		pthread_mutex_unlock(&d->bus->lock);
		if (d->bar_moved)
			d->bar_moved(d, i, old, addr);
	}
}

static void pci_dev_cfg_read_locked(struct pci_dev *d, unsigned int reg,
				    uint8_t *data, unsigned int len)
{
	unsigned int n = 0;

	if (reg < PCI_CFG_SPACE_SIZE) {
		n = len < PCI_CFG_SPACE_SIZE - reg ? len
						   : PCI_CFG_SPACE_SIZE - reg;
		if (d->cfg_hook)
			d->cfg_hook(d, reg, n, false);
		memcpy(data, d->cfg + reg, n);
	}
	memset(data + n, 0, len - n);
}

static void pci_dev_cfg_write_locked(struct pci_dev *d, unsigned int reg,
				     const uint8_t *data, unsigned int len)
{
	unsigned int i, n;

	if (reg >= PCI_CFG_SPACE_SIZE)
		return;
	n = len < PCI_CFG_SPACE_SIZE - reg ? len : PCI_CFG_SPACE_SIZE - reg;
	for (i = 0; i < n; i++) {
		uint8_t m = d->wmask[reg + i];

		d->cfg[reg + i] = (uint8_t)((d->cfg[reg + i] & ~m) |
					    (data[i] & m));
	}
	if (range_overlaps(reg, n, PCI_COMMAND, 2) ||
	    range_overlaps(reg, n, PCI_BASE_ADDRESS_0, PCI_BARS_LEN))
		pci_dev_update_bars_locked(d);
	if (d->cfg_hook)
		d->cfg_hook(d, reg, n, true);
}

/*
 * The function a config access targets, with a use counted so that
 * pci_bus_remove() waits for it; NULL for an absent one.
 */
static struct pci_dev *pci_bus_get_locked(struct pci_bus *b, uint64_t busnr,
					  unsigned int dev, unsigned int fn)
{
	struct pci_dev *d = NULL;

	if (busnr == 0 && fn == 0 && dev < PCI_MAX_SLOTS)
		d = b->slots[dev];
	if (d)
		d->users++;
	return d;
}

static void pci_bus_put(struct pci_bus *b, struct pci_dev *d)
{
	pthread_mutex_lock(&b->lock);
	if (!--d->users)
		pthread_cond_broadcast(&b->idle);
	pthread_mutex_unlock(&b->lock);
}

void pci_dev_cfg_write(struct pci_dev *d, unsigned int reg,
		       const uint8_t *data, unsigned int len)
{
	pthread_mutex_lock(&d->lock);
	pci_dev_cfg_write_locked(d, reg, data, len);
	pthread_mutex_unlock(&d->lock);
}

/* Called without the bus lock: only @d waits for its own callbacks. */
static void pci_dev_cfg_access(struct pci_dev *d, unsigned int reg,
			       uint8_t *data, unsigned int len, bool is_write)
{
	pthread_mutex_lock(&d->lock);
	if (is_write)
		pci_dev_cfg_write_locked(d, reg, data, len);
	else
		pci_dev_cfg_read_locked(d, reg, data, len);
	pthread_mutex_unlock(&d->lock);
}

void pci_cfg_io_access(void *opaque, uint64_t offset, uint8_t *data,
		       unsigned int len, bool is_write)
{
	struct pci_bus *b = opaque;
	struct pci_dev *d = NULL;
	unsigned int reg;
	uint32_t ca;

	if (!len || len > 4 || offset >= PCI_CFG_IO_LEN ||
	    len > PCI_CFG_IO_LEN - offset) {
		if (!is_write && len <= 8)
			memset(data, 0xff, len);
		return;
	}
	pthread_mutex_lock(&b->lock);
	ca = b->config_address;
	if (offset < 4) {
		/* CONFIG_ADDRESS takes dword accesses only. */
		if (offset == 0 && len == 4 && is_write)
			b->config_address = (uint32_t)le_get(data, 4) &
					    CONFIG_ADDRESS_MASK;
		else if (offset == 0 && len == 4)
			le_put(data, 4, ca);
		else if (!is_write)
			memset(data, 0xff, len);
	} else if (ca & CONFIG_ADDRESS_ENABLE) {
		d = pci_bus_get_locked(b, (ca >> 16) & 0xff, (ca >> 11) & 0x1f,
				       (ca >> 8) & 7);
	}
	pthread_mutex_unlock(&b->lock);
	if (offset < 4)
		return;
	if (!d) {
		if (!is_write)
			memset(data, 0xff, len);
		return;
	}
	reg = (ca & 0xfc) + (unsigned int)offset - 4;
	pci_dev_cfg_access(d, reg, data, len, is_write);
	pci_bus_put(b, d);
}

void pci_ecam_access(void *opaque, uint64_t offset, uint8_t *data,
		     unsigned int len, bool is_write)
{
	struct pci_bus *b = opaque;
	unsigned int reg = (unsigned int)(offset & (PCI_ECAM_FN_SIZE - 1));
	struct pci_dev *d;

	if (!len || len > 8)
		return;
	pthread_mutex_lock(&b->lock);
	d = pci_bus_get_locked(b, offset >> 20, (offset >> 15) & 0x1f,
			       (offset >> 12) & 7);
	pthread_mutex_unlock(&b->lock);
	if (!d) {
		if (!is_write)
			memset(data, 0xff, len);
		return;
	}
	pci_dev_cfg_access(d, reg, data, len, is_write);
	pci_bus_put(b, d);
}

/* The BAR decoding [addr, addr + len), if any, and its device in @dp. */
static struct pci_bar *pci_bus_find_bar_locked(struct pci_bus *b,
					       uint64_t addr, unsigned int len,
					       struct pci_dev **dp)
{
	unsigned int s;
	int i;

	for (s = 0; s < PCI_MAX_SLOTS; s++) {
		struct pci_dev *d = b->slots[s];

		if (!d)
			continue;
		for (i = 0; i < PCI_NUM_BARS; i++) {
			struct pci_bar *bar = &d->bars[i];

			if (!bar->size || bar->mapped == PCI_BAR_UNMAPPED ||
			    len > bar->size)
				continue;
			if (addr >= bar->mapped &&
			    addr - bar->mapped <= bar->size - len) {
				*dp = d;
				return bar;
			}
		}
	}
	return NULL;
}

void pci_mmio_access(void *opaque, uint64_t offset, uint8_t *data,
		     unsigned int len, bool is_write)
{
	struct pci_bus *b = opaque;
	pci_bar_access_fn fn = NULL;
	struct pci_dev *d = NULL;
	struct pci_bar *bar;
	uint64_t addr, boff = 0;
	void *fn_opaque = NULL;

	if (!len || len > 8)
		return;
	if (offset < b->mmio_size) {
		addr = b->mmio_base + offset;
		pthread_mutex_lock(&b->lock);
		bar = pci_bus_find_bar_locked(b, addr, len, &d);
		if (bar) {
			fn = bar->fn;
			fn_opaque = bar->opaque;
			boff = addr - bar->mapped;
			d->users++;
		}
		pthread_mutex_unlock(&b->lock);
	}
	if (fn) {
		fn(fn_opaque, boff, data, len, is_write);
		pci_bus_put(b, d);
	} else if (!is_write) {
		memset(data, 0xff, len);
	}
}

/* Place each BAR naturally aligned at the next free window address. */
static int pci_bus_assign_bars_locked(struct pci_bus *b, struct pci_dev *d)
{
	uint64_t end = b->mmio_base + (b->mmio_size - 1);
	uint64_t next = b->mmio_next, addr[PCI_NUM_BARS] = { 0 };
	int i;

	for (i = 0; i < PCI_NUM_BARS; i++) {
		uint64_t size = d->bars[i].size;

		if (!size)
			continue;
		if (next > UINT64_MAX - (size - 1))
			return -ENOSPC;
		addr[i] = (next + size - 1) & ~(size - 1);
		if (addr[i] > end || size - 1 > end - addr[i])
			return -ENOSPC;
		next = addr[i] + size;
	}
	for (i = 0; i < PCI_NUM_BARS; i++) {
		unsigned int off = PCI_BASE_ADDRESS_0 + 4 * (unsigned int)i;

		if (!d->bars[i].size)
			continue;
		le_put(d->cfg + off, 8,
		       addr[i] | (le_get(d->cfg + off, 1) & PCI_BAR_FLAG_MASK));
	}
	b->mmio_next = next;
	return 0;
}

int pci_bus_add(struct pci_bus *b, struct pci_dev *d)
{
	int ret;

	pthread_mutex_lock(&b->lock);
	if (b->nr_slots >= PCI_MAX_SLOTS) {
		ret = -ENOSPC;
		goto out;
	}
	ret = pci_bus_assign_bars_locked(b, d);
	if (ret)
		goto out;
	d->slot = (int)b->nr_slots;
	d->bus = b;
	b->slots[b->nr_slots++] = d;
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

void pci_bus_remove(struct pci_bus *b, struct pci_dev *d)
{
	pthread_mutex_lock(&b->lock);
	if (d->slot >= 0 && d->slot < PCI_MAX_SLOTS && b->slots[d->slot] == d)
		b->slots[d->slot] = NULL;
	d->slot = -1;
	/* Accesses that found @d before it went finish first. */
	while (d->users)
		pthread_cond_wait(&b->idle, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

int pci_bus_init(struct pci_bus *b, uint64_t mmio_base, uint64_t mmio_size)
{
	const struct pci_ids host_ids = {
		.vendor = PCI_HOST_BRIDGE_VENDOR,
		.device = PCI_HOST_BRIDGE_DEVICE,
		.class_code = PCI_CLASS_HOST_BRIDGE,
	};
	int ret;

	if (!mmio_size || mmio_base > UINT64_MAX - (mmio_size - 1))
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	ret = pthread_mutex_init(&b->lock, NULL);
	if (ret)
		return -ret;
	ret = pthread_cond_init(&b->idle, NULL);
	if (ret) {
		pthread_mutex_destroy(&b->lock);
		return -ret;
	}
	b->mmio_base = mmio_base;
	b->mmio_size = mmio_size;
	b->mmio_next = mmio_base;
	pci_dev_init(&b->host_bridge, &host_ids);
	ret = pci_bus_add(b, &b->host_bridge);
	if (ret) {
		pthread_cond_destroy(&b->idle);
		pthread_mutex_destroy(&b->lock);
	}
	return ret;
}

void pci_bus_destroy(struct pci_bus *b)
{
	pthread_cond_destroy(&b->idle);
	pthread_mutex_destroy(&b->lock);
}

void pci_bus_save(struct pci_bus *b, struct snap_writer *w)
{
	struct pci_dev *h = &b->host_bridge;

	pthread_mutex_lock(&b->lock);
	snap_put_u32(w, b->config_address);
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_lock(&h->lock);
	snap_put_bytes(w, h->cfg, PCI_CFG_SPACE_SIZE);
	pthread_mutex_unlock(&h->lock);
}

int pci_dev_cfg_load(struct pci_dev *d, const uint8_t *cfg,
		     bool (*skip)(const void *opaque, unsigned int reg),
		     const void *opaque, unsigned int *bad)
{
	unsigned int i;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < PCI_CFG_SPACE_SIZE; i++) {
		if ((cfg[i] ^ d->cfg[i]) & ~d->wmask[i]) {
			pthread_mutex_unlock(&d->lock);
			if (bad)
				*bad = i;
			return -EINVAL;
		}
	}
	for (i = 0; i < PCI_CFG_SPACE_SIZE; i++)
		if (!skip || !skip(opaque, i))
			d->cfg[i] = (uint8_t)((d->cfg[i] & ~d->wmask[i]) |
					      (cfg[i] & d->wmask[i]));
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int pci_bus_load(struct pci_bus *b, struct snap_reader *r)
{
	uint32_t config_address = snap_get_u32(r);
	const uint8_t *cfg = snap_get_ref(r, PCI_CFG_SPACE_SIZE);

	if (r->bad || !cfg || !snap_reader_done(r) ||
	    pci_dev_cfg_load(&b->host_bridge, cfg, NULL, NULL, NULL))
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	b->config_address = config_address & CONFIG_ADDRESS_MASK;
	pthread_mutex_unlock(&b->lock);
	return 0;
}
