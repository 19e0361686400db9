/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A unit test's accessors for one virtio-pci function on a struct pci_bus:
 * config space through ECAM, BAR 0 through the MMIO window, and the common
 * configuration structure in it. Shared by test_virtio_pci.c and
 * test_blk_vhost.c. The test defines, before including this: SLOT (the
 * device number on bus 0), WIN_BASE (the MMIO window's guest-physical
 * base), and at file scope `bus` (its struct pci_bus) and `bar` (uint64_t,
 * BAR 0 as last programmed).
 */
#ifndef MICROVM_TEST_PCI_ACCESS_H
#define MICROVM_TEST_PCI_ACCESS_H

#include <stdint.h>

#include "devices/pci.h"
#include "util/le.h"
#include "virtio/pci.h"

static inline uint64_t cfg_rd(unsigned int reg, unsigned int len)
{
	uint8_t b[8] = { 0 };

	pci_ecam_access(&bus, PCI_ECAM_OFFSET(0, SLOT, 0, reg), b, len, false);
	return le_get(b, len);
}

static inline void cfg_wr(unsigned int reg, unsigned int len, uint64_t v)
{
	uint8_t b[8];

	le_put(b, len, v);
	pci_ecam_access(&bus, PCI_ECAM_OFFSET(0, SLOT, 0, reg), b, len, true);
}

static inline uint64_t bar_rd(uint64_t off, unsigned int len)
{
	uint8_t b[8] = { 0 };

	pci_mmio_access(&bus, bar + off - WIN_BASE, b, len, false);
	return le_get(b, len);
}

static inline void bar_wr(uint64_t off, unsigned int len, uint64_t v)
{
	uint8_t b[8];

	le_put(b, len, v);
	pci_mmio_access(&bus, bar + off - WIN_BASE, b, len, true);
}

static inline uint64_t common_rd(unsigned int reg, unsigned int len)
{
	return bar_rd(VIRTIO_PCI_COMMON_OFF + reg, len);
}

static inline void common_wr(unsigned int reg, unsigned int len, uint64_t v)
{
	bar_wr(VIRTIO_PCI_COMMON_OFF + reg, len, v);
}

#endif
