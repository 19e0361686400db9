// SPDX-License-Identifier: Apache-2.0
/*
 * evilblk's device and memory layer: finds virtio-blk devices the way a
 * driver would (mmio windows from the ACPI-described LNRO0005 resources in
 * /proc/iomem, mapped through /dev/mem; virtio-pci BAR 0 through sysfs,
 * its structures from the vendor capabilities in config space), gives
 * width-exact register accesses, and allocates hugetlb pages whose
 * guest-physical addresses come from /proc/self/pagemap.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evilblk.h"

#define PAGE 4096u
#define PCI_SYS "/sys/bus/pci/devices"

/* mmio registers used only here (virtio 1.2 §4.2.2) */
#define MMIO_VERSION 0x004
#define MMIO_DEVICE_ID 0x008
#define MMIO_DEV_FEATURES 0x010
#define MMIO_DEV_FEATURES_SEL 0x014
#define MMIO_DRV_FEATURES 0x020
#define MMIO_DRV_FEATURES_SEL 0x024
#define MMIO_QUEUE_NUM_MAX 0x034
#define MMIO_QUEUE_DRIVER_LOW 0x090
#define MMIO_QUEUE_DEVICE_LOW 0x0a0
/* pci common configuration (§4.1.4.3) */
#define PCI_C_DFSELECT 0x00
#define PCI_C_DF 0x04
#define PCI_C_GFSELECT 0x08
#define PCI_C_GF 0x0c
#define PCI_C_Q_SELECT 0x16
#define PCI_C_Q_AVAIL 0x28
#define PCI_C_Q_USED 0x30

uint64_t ev_rd(struct ev_dev *d, uint32_t off, int width)
{
	volatile uint8_t *p = d->regs + off;

	switch (width) {
	case 1:
		return *p;
	case 2:
		return *(volatile uint16_t *)p;
	case 4:
		return *(volatile uint32_t *)p;
	default:
		return *(volatile uint64_t *)p;
	}
}

void ev_wr(struct ev_dev *d, uint32_t off, uint64_t v, int width)
{
	volatile uint8_t *p = d->regs + off;

	switch (width) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		*(volatile uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(volatile uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(volatile uint64_t *)p = v;
		break;
	}
}

static bool is_mmio(const struct ev_dev *d)
{
	return d->t == EV_MMIO;
}

uint8_t ev_status(struct ev_dev *d)
{
	if (is_mmio(d))
		return (uint8_t)ev_rd(d, MMIO_STATUS, 4);
	return (uint8_t)ev_rd(d, d->common + PCI_C_STATUS, 1);
}

void ev_set_status(struct ev_dev *d, uint8_t s)
{
	if (is_mmio(d))
		ev_wr(d, MMIO_STATUS, s, 4);
	else
		ev_wr(d, d->common + PCI_C_STATUS, s, 1);
}

/* Reset and wait until status reads 0 (virtio 1.2 §4.1.4.3.2). */
bool ev_reset_wait(struct ev_dev *d, int ms)
{
	int i;

	ev_set_status(d, 0);
	for (i = 0; i < ms; i++) {
		if (ev_status(d) == 0)
			return true;
		usleep(1000);
	}
	return false;
}

bool ev_reset(struct ev_dev *d)
{
	return ev_reset_wait(d, 5000);
}

/* A register with a known value still reads it: the VMM answers. */
bool ev_alive(struct ev_dev *d)
{
	if (is_mmio(d))
		return ev_rd(d, MMIO_MAGIC, 4) == MMIO_MAGIC_VALUE;
	return ev_rd(d, d->common + PCI_C_NUMQ, 2) == d->num_queues;
}

uint64_t ev_features(struct ev_dev *d)
{
	uint64_t f = 0;
	uint32_t sel, r, v;

	for (sel = 0; sel < 2; sel++) {
		if (is_mmio(d)) {
			ev_wr(d, MMIO_DEV_FEATURES_SEL, sel, 4);
			r = MMIO_DEV_FEATURES;
		} else {
			ev_wr(d, d->common + PCI_C_DFSELECT, sel, 4);
			r = d->common + PCI_C_DF;
		}
		v = (uint32_t)ev_rd(d, r, 4);
		f |= (uint64_t)v << (32 * sel);
	}
	return f;
}

void ev_set_features(struct ev_dev *d, uint64_t f)
{
	uint32_t sel;

	for (sel = 0; sel < 2; sel++) {
		if (is_mmio(d)) {
			ev_wr(d, MMIO_DRV_FEATURES_SEL, sel, 4);
			ev_wr(d, MMIO_DRV_FEATURES, f >> (32 * sel), 4);
		} else {
			ev_wr(d, d->common + PCI_C_GFSELECT, sel, 4);
			ev_wr(d, d->common + PCI_C_GF, f >> (32 * sel), 4);
		}
	}
}

void ev_queue_sel(struct ev_dev *d, uint16_t q)
{
	if (is_mmio(d))
		ev_wr(d, MMIO_QUEUE_SEL, q, 4);
	else
		ev_wr(d, d->common + PCI_C_Q_SELECT, q, 2);
}

void ev_queue_size(struct ev_dev *d, uint32_t size)
{
	if (is_mmio(d))
		ev_wr(d, MMIO_QUEUE_NUM, size, 4);
	else
		ev_wr(d, d->common + PCI_C_Q_SIZE, size, 2);
}

/* 64-bit addresses as two 32-bit halves, as Linux writes them. */
static void wr64_split(struct ev_dev *d, uint32_t off, uint64_t v)
{
	ev_wr(d, off, (uint32_t)v, 4);
	ev_wr(d, off + 4, v >> 32, 4);
}

void ev_queue_addrs(struct ev_dev *d, uint64_t desc, uint64_t avail,
		    uint64_t used)
{
	if (is_mmio(d)) {
		wr64_split(d, MMIO_QUEUE_DESC_LOW, desc);
		wr64_split(d, MMIO_QUEUE_DRIVER_LOW, avail);
		wr64_split(d, MMIO_QUEUE_DEVICE_LOW, used);
	} else {
		wr64_split(d, d->common + PCI_C_Q_DESC, desc);
		wr64_split(d, d->common + PCI_C_Q_AVAIL, avail);
		wr64_split(d, d->common + PCI_C_Q_USED, used);
	}
}

void ev_queue_enable(struct ev_dev *d, uint32_t v)
{
	if (is_mmio(d))
		ev_wr(d, MMIO_QUEUE_READY, v, 4);
	else
		ev_wr(d, d->common + PCI_C_Q_ENABLE, v, 2);
}

uint32_t ev_queue_ready(struct ev_dev *d)
{
	if (is_mmio(d))
		return (uint32_t)ev_rd(d, MMIO_QUEUE_READY, 4);
	return (uint32_t)ev_rd(d, d->common + PCI_C_Q_ENABLE, 2);
}

void ev_notify(struct ev_dev *d, uint32_t q)
{
	uint32_t noff;

	if (is_mmio(d)) {
		ev_wr(d, MMIO_QUEUE_NOTIFY, q, 4);
		return;
	}
	ev_queue_sel(d, (uint16_t)q);
	noff = (uint32_t)ev_rd(d, d->common + PCI_C_Q_NOFF, 2);
	ev_wr(d, d->notify + noff * d->notify_mult, q, 2);
}

uint64_t ev_cfg_rd(struct ev_dev *d, uint32_t off, int width)
{
	return ev_rd(d, (is_mmio(d) ? MMIO_CONFIG : d->devcfg) + off, width);
}

void ev_cfg_wr(struct ev_dev *d, uint32_t off, uint64_t v, int width)
{
	ev_wr(d, (is_mmio(d) ? MMIO_CONFIG : d->devcfg) + off, v, width);
}

/* A dword of PCI config space through sysfs (the kernel's config access). */
bool ev_pci_cfg32(struct ev_dev *d, unsigned int reg, uint32_t *v,
		  bool write)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/config", d->sysfs);
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return false;
	n = write ? pwrite(fd, v, 4, reg) : pread(fd, v, 4, reg);
	close(fd);
	return n == 4;
}

/* The common part of probing: features, capacity, queues. */
static void ev_probe(struct ev_dev *d)
{
	ev_reset(d);
	d->features = ev_features(d);
	d->capacity = ev_cfg_rd(d, 0, 4) | ev_cfg_rd(d, 4, 4) << 32;
	ev_queue_sel(d, 0);
	if (is_mmio(d)) {
		d->qmax = (uint16_t)ev_rd(d, MMIO_QUEUE_NUM_MAX, 4);
		d->num_queues = 0;
		while (d->num_queues < 64) {
			ev_queue_sel(d, d->num_queues);
			if (!ev_rd(d, MMIO_QUEUE_NUM_MAX, 4))
				break;
			d->num_queues++;
		}
	} else {
		d->qmax = (uint16_t)ev_rd(d, d->common + PCI_C_Q_SIZE, 2);
		d->num_queues = (uint16_t)ev_rd(d, d->common + PCI_C_NUMQ, 2);
	}
}

static void *map_phys(int fd, uint64_t pa, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)pa);

	return p == MAP_FAILED ? NULL : p;
}

/* virtio-mmio: "f0000000-f00001ff : LNRO0005:00" lines of /proc/iomem. */
static int find_mmio(struct ev_dev *out, int max)
{
	unsigned long long start, end;
	char line[256];
	int n = 0, fd;
	FILE *f;

	f = fopen("/proc/iomem", "r");
	fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (!f || fd < 0) {
		perror("evilblk: /proc/iomem or /dev/mem");
		if (f)
			fclose(f);
		return 0;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		struct ev_dev *d = &out[n];

		if (!strstr(line, "LNRO0005") ||
		    sscanf(line, " %llx-%llx", &start, &end) != 2)
			continue;
		memset(d, 0, sizeof(*d));
		d->t = EV_MMIO;
		d->regs_pa = start & ~(uint64_t)(PAGE - 1);
		d->regs_len = PAGE;
		d->regs = map_phys(fd, d->regs_pa, PAGE);
		if (!d->regs) {
			fprintf(stderr, "evilblk: mmap /dev/mem at %#llx: %s\n",
				start, strerror(errno));
			continue;
		}
		if (ev_rd(d, MMIO_MAGIC, 4) != MMIO_MAGIC_VALUE ||
		    ev_rd(d, MMIO_VERSION, 4) != 2 ||
		    ev_rd(d, MMIO_DEVICE_ID, 4) != 2)
			continue;
		snprintf(d->name, sizeof(d->name), "mmio@%#llx", start);
		ev_probe(d);
		n++;
	}
	fclose(f);
	close(fd);
	return n;
}

static long read_hex(const char *dir, const char *file)
{
	char path[512], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtol(buf, NULL, 0);
}

static bool write_file(const char *dir, const char *file, const char *s)
{
	char path[512];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fputs(s, f) >= 0;
	return fclose(f) == 0 && ok;
}

/* The virtio vendor capabilities and MSI-X (§4.1.4, PCI 3.0 §6.8.2). */
static bool pci_caps(struct ev_dev *d, const uint8_t *cfg, size_t len)
{
	unsigned int p = cfg[0x34], guard = 0, have = 0;

	while (p >= 0x40 && p + 20 <= len && guard++ < 48) {
		const uint8_t *c = cfg + p;
		uint32_t off, v;

		memcpy(&off, c + 8, 4);
		if (c[0] == 0x09 && c[4] == 0) {
			switch (c[3]) {
			case 1: d->common = off; have |= 1; break;
			case 2:
				d->notify = off;
				memcpy(&d->notify_mult, c + 16, 4);
				have |= 2;
				break;
			case 3: d->isr = off; have |= 4; break;
			case 4: d->devcfg = off; have |= 8; break;
			case 5: d->cfg_cap = p; break;
			default: break;
			}
		} else if (c[0] == 0x11) {
			d->msix_size = ((unsigned int)(c[2] | c[3] << 8) &
					0x7ff) + 1;
			memcpy(&v, c + 4, 4);
			d->msix_table = v & ~7u;
			memcpy(&v, c + 8, 4);
			d->msix_pba = v & ~7u;
		}
		p = c[1];
	}
	return have == 15;
}

static bool pci_open(struct ev_dev *d, const char *dir, const char *addr)
{
	char path[512];
	uint8_t cfg[256];
	unsigned long long start;
	struct stat st;
	FILE *f;
	int fd;
	ssize_t n;

	memset(d, 0, sizeof(*d));
	d->t = EV_PCI;
	snprintf(d->name, sizeof(d->name), "pci@%.40s", addr);
	snprintf(d->sysfs, sizeof(d->sysfs), PCI_SYS "/%.60s", addr);
	/* Memory decoding on, as pci_enable_device() does for a driver. */
	if (!write_file(dir, "enable", "1"))
		fprintf(stderr, "evilblk: %s: enable: %s\n", addr,
			strerror(errno));
	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? pread(fd, cfg, sizeof(cfg), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(cfg) || !pci_caps(d, cfg, sizeof(cfg)))
		return false;
	snprintf(path, sizeof(path), "%s/resource", dir);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llx", &start) != 1) {
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	d->regs_pa = start;
	snprintf(path, sizeof(path), "%s/resource0", dir);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "evilblk: %s: %s\n", path, strerror(errno));
		return false;
	}
	d->regs_len = (size_t)st.st_size;
	d->regs = map_phys(fd, 0, d->regs_len);
	close(fd);
	if (!d->regs) {
		fprintf(stderr, "evilblk: mmap %s: %s\n", path,
			strerror(errno));
		return false;
	}
	ev_probe(d);
	return true;
}

static int find_pci(struct ev_dev *out, int max)
{
	char dir[256];
	struct dirent *e;
	int n = 0;
	DIR *dh = opendir(PCI_SYS);

	if (!dh)
		return 0;
	while (n < max && (e = readdir(dh))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), PCI_SYS "/%.200s", e->d_name);
		if (read_hex(dir, "vendor") != 0x1af4 ||
		    read_hex(dir, "device") != 0x1042)
			continue;
		if (pci_open(&out[n], dir, e->d_name))
			n++;
	}
	closedir(dh);
	return n;
}

int ev_find(struct ev_dev *out, int max)
{
	int n = find_mmio(out, max);

	return n + find_pci(out + n, max - n);
}

/* The top of RAM below 4 GiB: the end of the highest System RAM range. */
uint64_t ev_ram_end(void)
{
	unsigned long long s, e, best = 0;
	char line[256];
	FILE *f = fopen("/proc/iomem", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != ' ' && strstr(line, ": System RAM") &&
		    sscanf(line, "%llx-%llx", &s, &e) == 2 &&
		    e < 0x100000000ULL && e + 1 > best)
			best = e + 1;
	}
	fclose(f);
	return best;
}

static uint64_t pfn_of(int pm, const void *va)
{
	uint64_t ent = 0;

	if (pread(pm, &ent, 8, (off_t)((uintptr_t)va / PAGE * 8)) != 8)
		return 0;
	if (!(ent & (1ULL << 63)))
		return 0;
	return ent & ((1ULL << 55) - 1);
}

/*
 * EV_NR_HUGE locked hugetlb pages; each one's 4 KiB frames must be
 * consecutive in pagemap (so DMA addresses are guest-physical).
 */
int ev_mem_init(struct ev_mem *m)
{
	uint8_t *p;
	uint64_t pfn0;
	unsigned int i, j;
	int pm;

	p = mmap(NULL, (size_t)EV_NR_HUGE * EV_HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE |
		 MAP_LOCKED, -1, 0);
	if (p == MAP_FAILED) {
		perror("evilblk: mmap MAP_HUGETLB (boot with hugepages=N)");
		return -1;
	}
	if (mlock(p, (size_t)EV_NR_HUGE * EV_HUGE))
		perror("evilblk: mlock");
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0) {
		perror("evilblk: /proc/self/pagemap");
		return -1;
	}
	for (i = 0; i < EV_NR_HUGE; i++) {
		m->va[i] = p + (size_t)i * EV_HUGE;
		pfn0 = pfn_of(pm, m->va[i]);
		if (!pfn0) {
			fprintf(stderr, "evilblk: no PFN in pagemap (root?)\n");
			close(pm);
			return -1;
		}
		for (j = 1; j < EV_HUGE / PAGE; j++) {
			if (pfn_of(pm, m->va[i] + (size_t)j * PAGE) !=
			    pfn0 + j) {
				fprintf(stderr, "evilblk: huge page %u not "
					"contiguous at frame %u\n", i, j);
				close(pm);
				return -1;
			}
		}
		m->pa[i] = pfn0 * PAGE;
	}
	close(pm);
	return 0;
}
