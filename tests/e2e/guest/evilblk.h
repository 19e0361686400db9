/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evilblk: a hostile virtio-blk driver run as root inside a test guest
 * with no virtio driver bound. evilblk_dev.c finds the devices (virtio-mmio
 * through /proc/iomem and /dev/mem, virtio-pci through the sysfs resource
 * files) and owns the guest memory it hands to them (hugetlb pages whose
 * physical addresses come from /proc/self/pagemap); evilblk.c runs the
 * cases. Register layouts follow virtio 1.2 §4.2.2 (mmio) and §4.1.4 (pci).
 */
#ifndef EVILBLK_H
#define EVILBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_S_ACK 0x01
#define EV_S_DRIVER 0x02
#define EV_S_DRIVER_OK 0x04
#define EV_S_FEATURES_OK 0x08
#define EV_S_NEEDS_RESET 0x40
#define EV_S_FAILED 0x80

#define EV_F_RO 5
#define EV_F_INDIRECT 28
#define EV_F_VERSION_1 32

#define VD_NEXT 1
#define VD_WRITE 2
#define VD_INDIRECT 4

#define BLK_T_IN 0
#define BLK_T_OUT 1
#define BLK_S_OK 0
#define BLK_S_IOERR 1
#define BLK_S_UNSUPP 2

struct vdesc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

enum ev_transport { EV_MMIO, EV_PCI };

/* One virtio-blk device, as found in the guest. */
struct ev_dev {
	enum ev_transport t;
	char name[48];          /* "mmio@0xf0000000" or the PCI address */
	volatile uint8_t *regs; /* mmio: the 4 KiB window; pci: BAR 0 */
	size_t regs_len;
	uint64_t regs_pa;
	/* pci: where the virtio structures are inside BAR 0 */
	uint32_t common, isr, devcfg, notify, notify_mult;
	uint32_t msix_table, msix_pba;
	unsigned int cfg_cap; /* config offset of the PCI_CFG access window */
	unsigned int msix_size;
	uint64_t features; /* offered by the device */
	uint64_t capacity; /* 512-byte sectors */
	uint16_t num_queues;
	uint16_t qmax; /* queue 0's QueueNumMax / initial queue_size */
	bool nodata;   /* null_blk without memory: reads return no data */
	char sysfs[96]; /* pci: /sys/bus/pci/devices/ADDR */
};

/* Guest memory the program owns: physically contiguous 2 MiB pages. */
#define EV_HUGE (2u << 20)
#define EV_NR_HUGE 3
struct ev_mem {
	uint8_t *va[EV_NR_HUGE];
	uint64_t pa[EV_NR_HUGE];
};

/* evilblk_dev.c */
int ev_find(struct ev_dev *out, int max);
int ev_mem_init(struct ev_mem *m);
uint64_t ev_ram_end(void);
uint64_t ev_rd(struct ev_dev *d, uint32_t off, int width);
void ev_wr(struct ev_dev *d, uint32_t off, uint64_t v, int width);
uint8_t ev_status(struct ev_dev *d);
void ev_set_status(struct ev_dev *d, uint8_t s);
bool ev_reset(struct ev_dev *d);
bool ev_reset_wait(struct ev_dev *d, int ms);
bool ev_alive(struct ev_dev *d);
uint64_t ev_features(struct ev_dev *d);
void ev_set_features(struct ev_dev *d, uint64_t f);
void ev_queue_sel(struct ev_dev *d, uint16_t q);
void ev_queue_size(struct ev_dev *d, uint32_t size);
void ev_queue_addrs(struct ev_dev *d, uint64_t desc, uint64_t avail,
		    uint64_t used);
void ev_queue_enable(struct ev_dev *d, uint32_t v);
uint32_t ev_queue_ready(struct ev_dev *d);
void ev_notify(struct ev_dev *d, uint32_t q);
uint64_t ev_cfg_rd(struct ev_dev *d, uint32_t off, int width);
void ev_cfg_wr(struct ev_dev *d, uint32_t off, uint64_t v, int width);
bool ev_pci_cfg32(struct ev_dev *d, unsigned int reg, uint32_t *v,
		  bool write);
/* Register offsets the cases poke at directly. */
#define MMIO_MAGIC 0x000
#define MMIO_QUEUE_SEL 0x030
#define MMIO_QUEUE_NUM 0x038
#define MMIO_QUEUE_READY 0x044
#define MMIO_QUEUE_NOTIFY 0x050
#define MMIO_STATUS 0x070
#define MMIO_QUEUE_DESC_LOW 0x080
#define MMIO_CONFIG 0x100
#define MMIO_MAGIC_VALUE 0x74726976
#define PCI_C_MSIX 0x10
#define PCI_C_NUMQ 0x12
#define PCI_C_STATUS 0x14
#define PCI_C_Q_SIZE 0x18
#define PCI_C_Q_MSIX 0x1a
#define PCI_C_Q_ENABLE 0x1c
#define PCI_C_Q_NOFF 0x1e
#define PCI_C_Q_DESC 0x20
#define PCI_NO_VECTOR 0xffff


/*
 * The owned memory, one 6 MiB virtual block of three huge pages: page 0
 * holds the rings, indirect tables, headers, status bytes and buffers,
 * each with an untouched gap around it; page 1 is the target of the
 * aliased huge reads, page 2 the source of the aliased huge writes.
 * Offsets below are into that block.
 */
#define A_DESC 0x00000    /* up to 1024 descriptors */
#define A_AVAIL 0x05000
#define A_USED 0x07000    /* up to 1024 entries: 3 pages */
#define A_USED_LEN (6 + 8 * 1024)
#define A_IND 0x0b000     /* indirect tables, 4 KiB each + a gap */
#define A_IND_STRIDE 0x2000
#define A_IND_MAX 8
#define A_IND_HI 0x160000 /* tables A_IND_MAX .. A_IND_ALL - 1, same stride */
#define A_IND_ALL 16
#define A_HDR 0x1c000     /* 16-byte request headers */
#define A_STATUS 0x1e000  /* status bytes, 16 bytes apart */
#define A_BUF 0x20000     /* data buffers, 64 KiB + 8 KiB gap each */
#define A_BUF_LEN 0x10000
#define A_BUF_STRIDE 0x12000
#define A_BUF_MAX 16
#define B_READ EV_HUGE
#define C_WRITE (2 * EV_HUGE)
#define EV_CANARY 0xa5

struct ev_range {
	size_t off, len;
};

/* What one wait on the used ring saw. */
struct ev_out {
	int nused;
	uint32_t id[8], len[8];
	bool needs_reset;
};

struct ev_ctx {
	struct ev_mem mem;
	uint8_t *base;      /* mem.va[0]: the whole owned block */
	uint8_t *snap;      /* the block as it was at the last kick */
	struct ev_range allow[64];
	int nallow;
	struct ev_dev *d;   /* device under test */
	struct ev_dev *peer; /* another device on the same transport, or NULL */
	uint16_t qs, avail_idx, used_seen;
	uint64_t ram_end;
	unsigned int case_no;
	unsigned int huge_reqs;
};

/* evilblk.c: the case framework */
uint64_t ev_pa(struct ev_ctx *c, size_t off);
void ev_allow(struct ev_ctx *c, size_t off, size_t len);
uint8_t ev_setup_raw(struct ev_ctx *c, uint32_t qs, uint64_t desc,
		     uint64_t avail, uint64_t used);
bool ev_setup(struct ev_ctx *c, uint16_t qs, char *why, size_t n);
void ev_desc(struct ev_ctx *c, uint16_t i, uint64_t pa, uint32_t len,
	     uint16_t flags, uint16_t next);
/* Offset of indirect table @table (0 .. A_IND_ALL - 1) in the owned block. */
size_t ev_itable(unsigned int table);
void ev_idesc(struct ev_ctx *c, unsigned int table, uint16_t i, uint64_t pa,
	      uint32_t len, uint16_t flags, uint16_t next);
uint64_t ev_hdr(struct ev_ctx *c, unsigned int slot, uint32_t type,
		uint64_t sector);
uint64_t ev_st(struct ev_ctx *c, unsigned int slot);
uint8_t ev_stbyte(struct ev_ctx *c, unsigned int slot);
uint16_t ev_rw(struct ev_ctx *c, uint16_t first, unsigned int slot,
	       uint32_t type, uint64_t sector, uint32_t len);
void ev_post(struct ev_ctx *c, uint16_t head);
void ev_snap(struct ev_ctx *c);
void ev_kick(struct ev_ctx *c);
void ev_wait(struct ev_ctx *c, int want, int ms, struct ev_out *o);
bool ev_refused(struct ev_ctx *c, const struct ev_out *o, uint16_t head,
		unsigned int slot, char *why, size_t n);
bool ev_roundtrip(struct ev_ctx *c, uint64_t sector, uint8_t seed,
		  char *why, size_t n);

/* evilblk_cases.c */
typedef bool ev_case_fn(struct ev_ctx *c, char *why, size_t n);
struct ev_case {
	const char *name;
	ev_case_fn *fn;
	bool pci_only;
};
extern const struct ev_case ev_cases[];
/* evilblk_queue.c: ring indices, queue set-up, registers */
ev_case_fn evq_avail_idx_jump, evq_avail_head_out_of_range,
	evq_same_head_twice, evq_queue_regs_after_driver_ok,
	evq_queue_size_zero, evq_queue_size_not_pow2,
	evq_queue_size_above_max, evq_ring_outside_ram, evq_ring_misaligned,
	evq_used_ring_on_registers, evq_avail_ring_beyond_ram,
	evq_features_not_offered, evq_config_write, evq_notify_missing_queue,
	evq_odd_width_access;
/* evilblk_pci.c: the PCI-only cases */
ev_case_fn ev_msix_out_of_range, ev_bar_into_ram, ev_bar_onto_other,
	ev_cfg_window;
#define WAIT_MS 20000
#define SHORT_MS 3000
extern const unsigned int ev_nr_cases;

#endif
