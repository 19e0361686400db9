// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for PCI configuration space (src/devices/pci.c and the
 * machine glue's registration of it): configuration mechanism #1 through
 * ports 0xcf8/0xcfc, ECAM, BAR sizing and decoding, and the virtio-pci
 * VIRTIO_PCI_CAP_PCI_CFG access window (src/virtio/pci.c) that reaches
 * BAR registers from config space. The checks are in fuzz_pci_common.h.
 *
 * Input: [0] queues (1-8), [1] QueueNumMax choice, then FUZZ_OP_SIZE-byte
 * operations (see fuzz_op()).
 */
#include "fuzz_pci_common.h"

#define FUZZ_HEADER 2
#define FUZZ_OP_SIZE 8
#define FUZZ_MAX_OPS 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned int widths[4] = { 1, 2, 4, 8 };

/* ECAM offset of (bus, dev, fn, reg) from selector @a and @reg. */
static uint64_t fuzz_ecam_off(uint8_t a, unsigned int reg)
{
	return PCI_ECAM_OFFSET(0, a % 4, (a >> 2) % 4 == 3 ? 1 : 0, reg);
}

static void fuzz_cfg_wr(unsigned int reg, unsigned int len, uint64_t v)
{
	fuzz_ecam(PCI_ECAM_OFFSET(0, FUZZ_SLOT, 0, reg), len, true, v);
}

/* Point the PCI_CFG window at BAR bytes and move data through it. */
static void fuzz_window(uint8_t a, uint16_t b, uint32_t c, bool is_write)
{
	unsigned int cap = fp.vp.cfg_cap;
	static const uint32_t lens[4] = { 1, 2, 4, 3 };

	fuzz_cfg_wr(cap + VIRTIO_PCI_CAP_BAR, 1, a & 0x80 ? a & 7 : 0);
	fuzz_cfg_wr(cap + VIRTIO_PCI_CAP_OFFSET, 4,
		    a & 0x40 ? c : (uint32_t)b % VIRTIO_PCI_BAR_SIZE);
	fuzz_cfg_wr(cap + VIRTIO_PCI_CAP_LENGTH, 4, lens[a & 3]);
	fuzz_cf8(FUZZ_SLOT, 0, cap + VIRTIO_PCI_CAP_PCI_CFG_DATA +
		 (a >> 2 & 3), widths[a >> 4 & 3] > 4 ? 4 : widths[a >> 4 & 3],
		 is_write, c);
}

/* Program BAR 0 (or size it) and COMMAND. */
static void fuzz_program_bar(uint8_t a, uint32_t c)
{
	if (a & 0x80) {
		fuzz_cfg_wr(PCI_BASE_ADDRESS_0, 4, 0xffffffffu);
		fuzz_ecam(PCI_ECAM_OFFSET(0, FUZZ_SLOT, 0, PCI_BASE_ADDRESS_0),
			  4, false, 0);
	} else if (a & 0x40) {
		fuzz_cfg_wr(PCI_BASE_ADDRESS_0 + 4, 4, c);
	} else {
		fuzz_cfg_wr(PCI_BASE_ADDRESS_0, 4,
			    (uint32_t)FUZZ_MMIO32_BASE + (c & 0x1fff8000u));
	}
	fuzz_cfg_wr(PCI_COMMAND, 2, a & 7);
}

/*
 * One operation: [0] kind, [1] a, [2..3] le16 b, [4..7] le32 c.
 *	kind bits 0-2: 0 CONFIG_ADDRESS + data, 1 any port near 0xcf8,
 *	2 ECAM, 3 the PCI_CFG window, 4 program BAR 0 and COMMAND, 5 an
 *	access inside the programmed BAR, 6 anywhere in the MMIO window
 *	or ECAM, 7 a device-side event; bit 3 write; bits 4-5 width.
 */
static void fuzz_op(const uint8_t *op)
{
	uint16_t b = (uint16_t)le_get(op + 2, 2);
	uint32_t c = (uint32_t)le_get(op + 4, 4);
	unsigned int len = widths[op[0] >> 4 & 3];
	bool w = op[0] & 8;
	uint8_t a = op[1];
	uint64_t bar;

	switch (op[0] & 7) {
	case 0:
		fuzz_cf8(a % 4, (a >> 2) % 4 == 3, b % 256, len > 4 ? 4 : len,
			 w, c);
		break;
	case 1:
		fuzz_pio((uint16_t)(FUZZ_PORT_CFG - 2 + b % 12),
			 len == 8 ? 3 : len, w, c);
		break;
	case 2:
		fuzz_ecam(a & 0x80 ? (uint64_t)c % FUZZ_ECAM_SIZE
				   : fuzz_ecam_off(a, b % 0x1000),
			  len, w, c | (uint64_t)b << 32);
		break;
	case 3:
		fuzz_window(a, b, c, w);
		break;
	case 4:
		fuzz_program_bar(a, c);
		break;
	case 5:
		bar = le_get(fp.vp.pci.cfg + PCI_BASE_ADDRESS_0, 8) &
		      ~PCI_BAR_FLAG_MASK;
		fuzz_mmio_access(bar + b % VIRTIO_PCI_BAR_SIZE, len, w,
				 c | (uint64_t)a << 32);
		break;
	case 6:
		fuzz_mmio_access(a & 1 ? FUZZ_ECAM_BASE + c % FUZZ_ECAM_SIZE
				       : FUZZ_MMIO32_BASE + c,
				 len, w, b);
		break;
	default:
		fuzz_device_event(a, b);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, n;

	if (size < FUZZ_HEADER)
		return 0;
	if (fuzz_pci_setup(1 + data[0] % 8, (uint16_t)(2u << (data[1] % 10)),
			   1ULL << VIRTIO_F_EVENT_IDX))
		return 0;
	n = (size - FUZZ_HEADER) / FUZZ_OP_SIZE;
	if (n > FUZZ_MAX_OPS)
		n = FUZZ_MAX_OPS;
	for (i = 0; i < n; i++)
		fuzz_op(data + FUZZ_HEADER + i * FUZZ_OP_SIZE);
	fuzz_pci_teardown();
	return 0;
}
