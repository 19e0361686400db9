// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the virtio-pci BAR (src/virtio/pci.c: common
 * configuration, notify, ISR, device configuration) and MSI-X
 * (src/virtio/pci_msix.c: table, PBA, Message Control), reached through
 * the MMIO bus as a guest reaches them, with device status and feature
 * negotiation behind the common configuration. The machine and the
 * checks are in fuzz_pci_common.h; this target's operations aim at BAR
 * registers by name, where fuzz_pci.c aims at config space.
 *
 * Input: [0] queues (1-8), [1] QueueNumMax choice, [2] device features
 * choice, [3] prologue (bit 0: BAR decoded as firmware leaves it, bit 1:
 * MSI-X enabled), then FUZZ_OP_SIZE-byte operations (see fuzz_op()).
 */
#include "fuzz_pci_common.h"

#define FUZZ_HEADER 4
#define FUZZ_OP_SIZE 8
#define FUZZ_MAX_OPS 2000
#define FUZZ_BAR_ADDR FUZZ_MMIO32_BASE /* where the prologue puts BAR 0 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned int widths[4] = { 1, 2, 4, 8 };

/* Common configuration fields, by offset (virtio 1.2 §4.1.4.3). */
static const struct {
	uint8_t off, size;
} fields[16] = {
	{ 0x00, 4 }, { 0x04, 4 }, { 0x08, 4 }, { 0x0c, 4 }, { 0x10, 2 },
	{ 0x12, 2 }, { 0x14, 1 }, { 0x15, 1 }, { 0x16, 2 }, { 0x18, 2 },
	{ 0x1a, 2 }, { 0x1c, 2 }, { 0x1e, 2 }, { 0x20, 8 }, { 0x28, 8 },
	{ 0x30, 8 },
};

static uint64_t fuzz_bar_base(void)
{
	return le_get(fp.vp.pci.cfg + PCI_BASE_ADDRESS_0, 8) &
	       ~PCI_BAR_FLAG_MASK;
}

static void fuzz_bar_rw(uint64_t off, unsigned int len, bool w, uint64_t v)
{
	fuzz_mmio_access(fuzz_bar_base() + off, len, w, v);
}

static void fuzz_cfg_wr(unsigned int reg, unsigned int len, uint64_t v)
{
	fuzz_ecam(PCI_ECAM_OFFSET(0, FUZZ_SLOT, 0, reg), len, true, v);
}

/* Firmware's work: BAR 0 at the window base, memory decoding on. */
static void fuzz_prologue(uint8_t p)
{
	if (p & 1) {
		fuzz_cfg_wr(PCI_BASE_ADDRESS_0, 4, (uint32_t)FUZZ_BAR_ADDR);
		fuzz_cfg_wr(PCI_BASE_ADDRESS_0 + 4, 4, 0);
		fuzz_cfg_wr(PCI_COMMAND, 2,
			    PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	}
	if (p & 2)
		fuzz_cfg_wr(fp.vp.msix_cap + PCI_MSIX_FLAGS, 2,
			    PCI_MSIX_FLAGS_ENABLE);
}

/* A common field, whole or a naturally aligned part of it. */
static void fuzz_common(uint8_t a, bool w, uint64_t v)
{
	unsigned int f = a % 16, size = fields[f].size, len = size;

	if ((a >> 4 & 3) && size > 1)
		len = size >> (a >> 4 & 3) ? size >> (a >> 4 & 3) : 1;
	fuzz_bar_rw(VIRTIO_PCI_COMMON_OFF + fields[f].off +
			    (a & 0x40 ? size - len : 0),
		    len, w, v);
}

/*
 * One operation: [0] kind, [1] a, [2..3] le16 b, [4..7] le32 c.
 *	kind bits 0-2: 0 common field a (parts by a bits 4-6), 1 any BAR
 *	offset b, 2 notify queue a, 3 MSI-X entry a field b, 4 PBA, 5
 *	Message Control = c, 6 ISR or device config, 7 a device-side
 *	event; bit 3 write; bits 4-5 width.
 */
static void fuzz_op(const uint8_t *op)
{
	uint16_t b = (uint16_t)le_get(op + 2, 2);
	uint32_t c = (uint32_t)le_get(op + 4, 4);
	uint64_t v = c | (uint64_t)b << 32;
	unsigned int len = widths[op[0] >> 4 & 3];
	bool w = op[0] & 8;
	uint8_t a = op[1];

	switch (op[0] & 7) {
	case 0:
		fuzz_common(a, w, a & 0x80 ? c : c & 0xffff);
		break;
	case 1:
		fuzz_bar_rw(b % VIRTIO_PCI_BAR_SIZE, len, w, v);
		break;
	case 2:
		fuzz_bar_rw(VIRTIO_PCI_NOTIFY_OFF +
				    VIRTIO_PCI_NOTIFY_MULT * (a % (fp.nq + 2)) +
				    (b & 3),
			    len, w, c);
		break;
	case 3:
		fuzz_bar_rw(VIRTIO_PCI_MSIX_TABLE_OFF +
				    PCI_MSIX_ENTRY_SIZE *
					    (a % (fp.vp.nr_vectors + 2)) +
				    4 * (b % 4),
			    b & 4 ? 8 : 4, w,
			    b & 8 ? (c & 1) : c | (uint64_t)c << 32);
		break;
	case 4:
		fuzz_bar_rw(VIRTIO_PCI_MSIX_PBA_OFF + (b % 16), len, w, c);
		break;
	case 5: /* through ECAM or ports 0xcf8/0xcfc */
		c &= PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL | 0xff;
		if (a & 1)
			fuzz_cf8(FUZZ_SLOT, 0, fp.vp.msix_cap + PCI_MSIX_FLAGS,
				 2, true, c);
		else
			fuzz_cfg_wr(fp.vp.msix_cap + PCI_MSIX_FLAGS, 2, c);
		break;
	case 6:
		fuzz_bar_rw(a & 1 ? VIRTIO_PCI_DEVICE_OFF + b % 16
				  : VIRTIO_PCI_ISR_OFF + (b & 3),
			    len, w, c);
		break;
	default:
		fuzz_device_event(a, b);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t features[4] = {
		0, 1ULL << 1, 1ULL << VIRTIO_F_EVENT_IDX,
		1ULL << VIRTIO_F_EVENT_IDX | 1ULL << VIRTIO_F_INDIRECT_DESC |
			1ULL << 9,
	};
	size_t i, n;

	if (size < FUZZ_HEADER)
		return 0;
	if (fuzz_pci_setup(1 + data[0] % 8, (uint16_t)(2u << (data[1] % 10)),
			   features[data[2] % 4]))
		return 0;
	fuzz_prologue(data[3]);
	n = (size - FUZZ_HEADER) / FUZZ_OP_SIZE;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + FUZZ_HEADER + i * FUZZ_OP_SIZE);
	fuzz_pci_teardown();
	return 0;
}
