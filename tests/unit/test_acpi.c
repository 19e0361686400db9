// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the x86_64 ACPI tables and the virtio-mmio slot table
 * they describe. First pure checks that walk the tables the way a guest
 * does (RSDP -> XSDT -> FADT/MADT/MCFG -> DSDT) for many configurations; then, independently, ACPICA's own tools: iasl
 * disassembles every table and recompiles the DSDT, acpiexec loads them.
 * Without iasl the tool part is skipped (exit 77) after the pure checks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fw_table.h"
#include "test.h"
#include "acpi.h"
#include "layout.h"
#include "vmm/machine.h"

#define GPA LAYOUT_ACPI_ADDR
#define GUARD 64
#define GUARD_BYTE 0xa5
#define HDR 36
#define FADT_HW_REDUCED (1u << 20)
#define FADT_RESET_REG_SUP (1u << 10)
#define IAPC_8042 (1u << 1)
#define IAPC_VGA_NOT_PRESENT (1u << 2)
#define IAPC_CMOS_RTC_NOT_PRESENT (1u << 5)
#define MMIO64_BASE 0x8000000000ULL

struct tables {
	const uint8_t *rsdp, *xsdt, *fadt, *madt, *mcfg, *dsdt;
};

static uint8_t buf[LAYOUT_ACPI_SIZE + GUARD];
static struct acpi_mmio_dev mmio_devs[VIRTIO_MMIO_MAX_SLOTS];

static size_t count_bytes(const uint8_t *p, size_t n, const void *pat,
			  size_t plen)
{
	size_t i, c = 0;

	for (i = 0; i + plen <= n; i++)
		c += !memcmp(p + i, pat, plen);
	return c;
}

static struct acpi_config make_config(unsigned int ncpus, bool pci,
				      unsigned int nr_mmio, bool mmio64,
				      bool rtc)
{
	struct acpi_config cfg = { .ncpus = ncpus, .mmio = mmio_devs,
				   .nr_mmio = nr_mmio, .rtc = rtc };
	unsigned int i;

	/* The machine's own slots (arch_mmio_slot()); no GSI past them. */
	for (i = 0; i < VIRTIO_MMIO_MAX_SLOTS; i++) {
		mmio_devs[i].base = VIRTIO_MMIO_BASE + i * VIRTIO_MMIO_SLOT;
		mmio_devs[i].size = VIRTIO_MMIO_SLOT;
		mmio_devs[i].gsi = IOAPIC_NR_PINS;
		if (i < X86_MMIO_SLOTS)
			CHECK_EQ(arch_mmio_slot(i, &mmio_devs[i].base,
						&mmio_devs[i].gsi), 0);
	}
	cfg.pvpanic_port = PORT_PVPANIC; /* as the machine has it */
	/* The VM generation ID's event on the first free slot's pin. */
	if (nr_mmio < X86_MMIO_SLOTS) {
		cfg.vmgenid_gpa = LAYOUT_VMGENID_ADDR;
		cfg.ged_gsi = mmio_devs[nr_mmio].gsi;
	}
	cfg.pci.present = pci;
	cfg.pci.ecam_base = PCI_ECAM_BASE;
	cfg.pci.mmio32_base = PCI_MMIO32_BASE;
	cfg.pci.mmio32_size = PCI_MMIO32_SIZE;
	if (mmio64) {
		cfg.pci.mmio64_base = MMIO64_BASE;
		cfg.pci.mmio64_size = MMIO64_BASE;
	}
	return cfg;
}

/* The table at @gpa if its header and whole length lie in the output. */
static const uint8_t *table_at(uint64_t gpa, int used)
{
	uint64_t off = gpa - GPA, len;

	if (gpa < GPA || off + HDR > (uint64_t)used)
		return NULL;
	len = le(buf + off + 4, 4);
	if (len < HDR || off + len > (uint64_t)used)
		return NULL;
	CHECK(sums_to_zero(buf + off, len));
	CHECK(!memcmp(buf + off + 10, "MICROV", 6));
	CHECK(!memcmp(buf + off + 16, "MICROVM ", 8));
	return buf + off;
}

static void check_rsdp_xsdt(const struct acpi_config *cfg, int used,
			    struct tables *t)
{
	const uint8_t *p;
	size_t n, i;

	t->rsdp = buf;
	CHECK(!memcmp(buf, "RSD PTR ", 8));
	CHECK(sums_to_zero(buf, 20));
	CHECK(sums_to_zero(buf, 36));
	CHECK_EQ(buf[15], 2);
	CHECK_EQ(le(buf + 20, 4), 36);
	CHECK(!memcmp(buf + 9, "MICROV", 6));
	t->xsdt = table_at(le(buf + 24, 8), used);
	CHECK(t->xsdt && !memcmp(t->xsdt, "XSDT", 4));
	if (!t->xsdt)
		return;
	n = (le(t->xsdt + 4, 4) - HDR) / 8;
	CHECK_EQ(le(t->xsdt + 4, 4), HDR + 8 * n);
	CHECK_EQ(n, cfg->pci.present ? 3 : 2);
	for (i = 0; i < n; i++) {
		p = table_at(le(t->xsdt + HDR + 8 * i, 8), used);
		CHECK(p != NULL);
		if (p && !memcmp(p, "FACP", 4) && !t->fadt)
			t->fadt = p;
		else if (p && !memcmp(p, "APIC", 4) && !t->madt)
			t->madt = p;
		else if (p && !memcmp(p, "MCFG", 4) && !t->mcfg)
			t->mcfg = p;
		else
			CHECK(!"unexpected or repeated XSDT entry");
	}
}

/* A SystemIO, 8-bit, byte-access Generic Address Structure. */
static bool gas_is_io8(const uint8_t *g, uint16_t port)
{
	return g[0] == 1 && g[1] == 8 && g[2] == 0 && g[3] == 1 &&
	       le(g + 4, 8) == port;
}

static void check_fadt(const uint8_t *f, const struct acpi_config *cfg,
		       int used, struct tables *t)
{
	uint32_t flags = (uint32_t)le(f + 112, 4);
	size_t i;

	CHECK_EQ(le(f + 4, 4), 276);
	CHECK_EQ(f[8], 6);
	CHECK((flags & FADT_HW_REDUCED) && (flags & FADT_RESET_REG_SUP));
	CHECK_EQ(le(f + 46, 2), 0);                 /* SCI_INT */
	CHECK_EQ(le(f + 36, 4), 0);                 /* no FACS */
	CHECK_EQ(le(f + 40, 4), 0);                 /* 32-bit DSDT unused */
	for (i = 56; i < 88; i++)
		CHECK_EQ(f[i], 0);                  /* no PM1/PM2/GPE blocks */
	CHECK(!(le(f + 109, 2) & IAPC_8042));
	CHECK(le(f + 109, 2) & IAPC_VGA_NOT_PRESENT);
	CHECK(!(le(f + 109, 2) & IAPC_CMOS_RTC_NOT_PRESENT) == cfg->rtc);
	CHECK(gas_is_io8(f + 116, PORT_ACPI_RESET));
	CHECK_EQ(f[128], ACPI_RESET_VALUE);
	CHECK(gas_is_io8(f + 244, PORT_ACPI_SLEEP_CTL));
	CHECK(gas_is_io8(f + 256, PORT_ACPI_SLEEP_STS));
	t->dsdt = table_at(le(f + 140, 8), used);
	CHECK(t->dsdt && !memcmp(t->dsdt, "DSDT", 4));
	if (t->dsdt)
		CHECK_EQ(t->dsdt[8], 2); /* 64-bit integers */
}

static void check_madt(const uint8_t *m, unsigned int ncpus)
{
	size_t len = le(m + 4, 4), off = HDR + 8;
	unsigned int lapics = 0, ioapics = 0, isos = 0, nmis = 0;
	const uint8_t *e;

	CHECK_EQ(le(m + HDR, 4), LAPIC_ADDR);
	CHECK_EQ(le(m + HDR + 4, 4), 1); /* PCAT_COMPAT */
	while (off + 2 <= len && m[off + 1] >= 2 && off + m[off + 1] <= len) {
		e = m + off;
		if (e[0] == 0 && e[1] == 8) {
			CHECK_EQ(e[3], lapics); /* APIC IDs 0..ncpus-1 */
			CHECK_EQ(le(e + 4, 4), 1); /* enabled */
			lapics++;
		} else if (e[0] == 1 && e[1] == 12) {
			CHECK_EQ(e[2], 0);
			CHECK_EQ(le(e + 4, 4), IOAPIC_ADDR);
			CHECK_EQ(le(e + 8, 4), 0);
			ioapics++;
		} else if (e[0] == 2 && e[1] == 10) {
			CHECK(e[2] == 0 && e[3] == 0 && le(e + 4, 4) == 2 &&
			      le(e + 8, 2) == 0);
			isos++;
		} else if (e[0] == 4 && e[1] == 6) {
			CHECK(e[2] == 0xff && le(e + 3, 2) == 0 && e[5] == 1);
			nmis++;
		} else {
			CHECK(!"unexpected MADT entry");
		}
		off += e[1];
	}
	CHECK_EQ(off, len); /* the entries fill the table exactly */
	CHECK_EQ(lapics, ncpus);
	CHECK(ioapics == 1 && isos == 1 && nmis == 1);
}

static void check_mcfg(const uint8_t *m, const struct acpi_pci_host *pci)
{
	CHECK_EQ(le(m + 4, 4), 60);
	CHECK_EQ(le(m + 44, 8), pci->ecam_base);
	CHECK_EQ(le(m + 52, 2), 0);
	CHECK(m[54] == pci->bus_start && m[55] == pci->bus_end);
}

static void check_dsdt(const uint8_t *d, const struct acpi_config *cfg)
{
	static const uint8_t pnp0a08[] = { 0x0c, 0x41, 0xd0, 0x0a, 0x08 };
	static const uint8_t pnp0b00[] = { 0x0c, 0x41, 0xd0, 0x0b, 0x00 };
	size_t len = le(d + 4, 4), n;
	uint8_t pat[32];
	unsigned int i;
	bool pvpanic;

	CHECK_EQ(count_bytes(d, len, "LNRO0005", 8), cfg->nr_mmio);
	CHECK_EQ(count_bytes(d, len, pnp0a08, sizeof(pnp0a08)),
		 cfg->pci.present ? 1 : 0);
	CHECK_EQ(count_bytes(d, len, "\x08_S5_\x12", 6), 1);
	CHECK_EQ(count_bytes(d, len, "COM1", 4), 1);
	CHECK_EQ(count_bytes(d, len, "PS2_", 4), 1);
	CHECK_EQ(count_bytes(d, len, pnp0b00, sizeof(pnp0b00)), cfg->rtc);
	/* pvpanic: _HID string, one 1-byte IO port, _STA 0x0f. */
	pvpanic = cfg->pvpanic_port != 0;
	CHECK_EQ(count_bytes(d, len, "PEVT\x08_HID\x0dQEMU0001", 18),
		 pvpanic);
	if (pvpanic) {
		uint8_t io[] = { 0x47, 0x01, cfg->pvpanic_port & 0xff,
				 cfg->pvpanic_port >> 8,
				 cfg->pvpanic_port & 0xff,
				 cfg->pvpanic_port >> 8, 0x01, 0x01 };

		CHECK_EQ(count_bytes(d, len, io, sizeof(io)), 1);
	}
	CHECK_EQ(count_bytes(d, len, "\x08_STA\x0a\x0f", 7), pvpanic);
	/* Device VRnn: _HID string, then _UID n as an integer. */
	for (i = 0; i < cfg->nr_mmio; i++) {
		n = (size_t)snprintf((char *)pat, sizeof(pat),
				     "VR%02X\x08_HID\x0dLNRO0005", i);
		memcpy(pat + n, "\0\x08_UID", 6);
		n += 6;
		if (i < 2) {
			pat[n++] = (uint8_t)i; /* ZeroOp, OneOp */
		} else {
			pat[n++] = 0x0a; /* BytePrefix */
			pat[n++] = (uint8_t)i;
		}
		CHECK_EQ(count_bytes(d, len, pat, n), 1);
	}
}

/* No two tables (the RSDP included) share a byte. */
static void check_disjoint(const struct tables *t)
{
	const uint8_t *p[] = { t->xsdt, t->fadt, t->madt, t->mcfg, t->dsdt };
	size_t start[6] = { 0 }, end[6] = { 36 }, n = 1, i, j;

	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		if (!p[i])
			continue;
		start[n] = (size_t)(p[i] - buf);
		end[n] = start[n] + le(p[i] + 4, 4);
		n++;
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			CHECK(end[i] <= start[j] || end[j] <= start[i]);
	}
}

/* Build into a guarded buffer; check every table a guest would read. */
static int build_and_check(const struct acpi_config *cfg, size_t size,
			   struct tables *t)
{
	int used;
	size_t i;

	memset(buf, GUARD_BYTE, sizeof(buf));
	memset(t, 0, sizeof(*t));
	used = acpi_build(cfg, buf, size, GPA);
	for (i = size; i < sizeof(buf); i++) {
		if (buf[i] != GUARD_BYTE) {
			CHECK(!"acpi_build wrote past size");
			break;
		}
	}
	if (used <= 0)
		return used;
	CHECK((size_t)used <= size);
	check_rsdp_xsdt(cfg, used, t);
	CHECK(t->fadt && t->madt);
	CHECK(!t->mcfg == !cfg->pci.present);
	if (t->fadt)
		check_fadt(t->fadt, cfg, used, t);
	if (t->madt)
		check_madt(t->madt, cfg->ncpus);
	if (t->mcfg)
		check_mcfg(t->mcfg, &cfg->pci);
	if (t->dsdt)
		check_dsdt(t->dsdt, cfg);
	check_disjoint(t);
	return used;
}

static void test_configs(void)
{
	static const unsigned int cpus[] = { 1, 2, 8, 64, 255 };
	static const unsigned int nmmio[] = { 0, 1, 3, IRQ_VIRTIO_MMIO_COUNT,
					      X86_MMIO_SLOTS };
	struct acpi_config cfg;
	struct tables t;
	size_t c, m, p;
	int used;

	for (c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++) {
		for (m = 0; m < sizeof(nmmio) / sizeof(nmmio[0]); m++) {
			for (p = 0; p < 3; p++) {
				cfg = make_config(cpus[c], p > 0, nmmio[m],
						  p == 2, (c + m + p) & 1);
				if ((c + m) & 1)
					cfg.pvpanic_port = 0;
				used = build_and_check(&cfg, LAYOUT_ACPI_SIZE,
						       &t);
				CHECK(used > 0);
				if (used <= 0)
					continue;
				/* One byte short never fits. */
				CHECK_EQ(build_and_check(&cfg, used - 1, &t),
					 -ENOSPC);
			}
		}
	}
}

/* Every size below what the tables need fails cleanly. */
static void test_enospc(void)
{
	struct acpi_config cfg = make_config(8, true, 3, true, true);
	struct tables t;
	int used, size, bad = 0;

	used = build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t);
	CHECK(used > 0);
	for (size = 0; size < used; size++)
		bad += build_and_check(&cfg, (size_t)size, &t) != -ENOSPC;
	CHECK_EQ(bad, 0);
}

/*
 * The slot table: X86_MMIO_SLOTS slots, slots 0-7 on GSIs 16..23 as
 * before, each GSI an IOAPIC pin of its own that no platform device has
 * (the PIT's 0 and 2, the keyboard's 1, COM1's 4, the RTC's 8), windows
 * one after the other; then no more.
 */
static void test_mmio_slots(void)
{
	bool used[IOAPIC_NR_PINS] = { false };
	unsigned int n;
	uint64_t base;
	uint32_t gsi;

	CHECK_EQ(X86_MMIO_SLOTS, 19);
	for (n = 0; n < X86_MMIO_SLOTS; n++) {
		base = 0;
		gsi = IOAPIC_NR_PINS;
		CHECK_EQ(arch_mmio_slot(n, &base, &gsi), 0);
		CHECK_EQ(base, VIRTIO_MMIO_BASE + n * VIRTIO_MMIO_SLOT);
		if (n < IRQ_VIRTIO_MMIO_COUNT)
			CHECK_EQ(gsi, IRQ_VIRTIO_MMIO_FIRST + n);
		CHECK(gsi < IOAPIC_NR_PINS);
		if (gsi >= IOAPIC_NR_PINS)
			continue;
		CHECK(!used[gsi]);
		used[gsi] = true;
		CHECK(gsi != 0 && gsi != 2 && gsi != IRQ_I8042_KBD &&
		      gsi != IRQ_COM1 && gsi != IRQ_RTC);
	}
	CHECK_EQ(arch_mmio_slot(X86_MMIO_SLOTS, &base, &gsi), -ENOSPC);
	CHECK_EQ(arch_mmio_slot(VIRTIO_MMIO_MAX_SLOTS, &base, &gsi), -ENOSPC);
	CHECK_EQ(arch_mmio_slot(~0u, &base, &gsi), -ENOSPC);
}

static void test_einval(void)
{
	struct acpi_config cfg;
	struct tables t;
	int row;

	for (row = 0; row < 18; row++) {
		cfg = make_config(2, true, 3, true, true);
		switch (row) {
		case 0:
			cfg.ncpus = 0;
			break;
		case 1:
			cfg.ncpus = 256;
			break;
		case 2:
			cfg.mmio = NULL;
			break;
		case 3:
			cfg.nr_mmio = VIRTIO_MMIO_MAX_SLOTS + 1;
			break;
		case 4:
			mmio_devs[1].base = HIMEM_START;
			break;
		case 5:
			mmio_devs[1].size = 0;
			break;
		case 6:
			mmio_devs[1].gsi = IOAPIC_NR_PINS;
			break;
		case 14: /* two edge-triggered devices on one pin */
			mmio_devs[2].gsi = mmio_devs[0].gsi;
			break;
		case 15:
			mmio_devs[0].gsi = IRQ_COM1;
			break;
		case 16: /* the RTC's ISA IRQ 8 */
			mmio_devs[0].gsi = IRQ_RTC;
			break;
		case 17: /* the i8042 keyboard's ISA IRQ 1 */
			mmio_devs[0].gsi = IRQ_I8042_KBD;
			break;
		case 7: /* two devices on one window */
			mmio_devs[2].base = mmio_devs[1].base;
			break;
		case 8: /* bus_start above bus_end */
			cfg.pci.bus_start = 1;
			break;
		case 9:
			cfg.pci.ecam_base += 0x1000;
			break;
		case 10:
			cfg.pci.mmio32_base = HIMEM_START;
			break;
		case 11:
			cfg.pci.mmio32_size = 0;
			break;
		case 12: /* BAR window runs into the ECAM */
			cfg.pci.mmio32_size += VIRTIO_MMIO_SLOT;
			break;
		default: /* 64-bit window over a virtio-mmio slot */
			cfg.pci.mmio64_base = mmio_devs[0].base;
			break;
		}
		CHECK_EQ(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t), -EINVAL);
	}
	cfg = make_config(2, false, 0, false, false);
	CHECK_EQ(acpi_build(&cfg, buf, LAYOUT_ACPI_SIZE, GPA + 8), -EINVAL);
	/* The VM generation ID: misaligned, above 4 GiB, or its event on a
	 * pin a device (or COM1) has. */
	cfg = make_config(2, true, 3, false, false);
	CHECK(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t) > 0);
	cfg.vmgenid_gpa = LAYOUT_VMGENID_ADDR + 4;
	CHECK_EQ(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t), -EINVAL);
	cfg.vmgenid_gpa = 0x100000000ULL;
	CHECK_EQ(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t), -EINVAL);
	cfg.vmgenid_gpa = LAYOUT_VMGENID_ADDR;
	cfg.ged_gsi = mmio_devs[2].gsi;
	CHECK_EQ(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t), -EINVAL);
	cfg.ged_gsi = IRQ_COM1;
	CHECK_EQ(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t), -EINVAL);
	/* Every slot taken: no pin left, no generation ID device. */
	cfg = make_config(2, true, X86_MMIO_SLOTS, false, false);
	CHECK_EQ(cfg.vmgenid_gpa, 0);
	CHECK(build_and_check(&cfg, LAYOUT_ACPI_SIZE, &t) > 0);
	CHECK_EQ(acpi_build(NULL, buf, LAYOUT_ACPI_SIZE, GPA), -EINVAL);
}

/*
 * The independent check: ACPICA's iasl and acpiexec, the same table code
 * Linux runs, read what acpi_build() wrote. Tables go to a temporary
 * directory as <signature>.dat. The RSDP is left out: this iasl reads only
 * tables with a standard header from binary files.
 */
static bool on_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char file[4096];

	for (p = path; p && *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		snprintf(file, sizeof(file), "%.*s/%s", (int)(end - p), p,
			 prog);
		if (end > p && access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/* Run @cmd in @dir; its exit status, or -1. */
static int run_in(const char *dir, const char *cmd)
{
	char line[1024];
	int st;

	snprintf(line, sizeof(line), "cd '%s' && %s", dir, cmd);
	st = system(line);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Read a whole file as a NUL-terminated string; NULL on failure. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[512];
	char *text = NULL;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		text = calloc(1, (size_t)n + 1);
		if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
			free(text);
			text = NULL;
		}
		if (text && len)
			*len = (size_t)n;
	}
	fclose(f);
	return text;
}

static bool write_file(const char *dir, const char *name, const uint8_t *p,
		       size_t len)
{
	char path[512];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return false;
	ok = fwrite(p, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* What ACPICA prints for broken tables: errors, warnings, bad checksums. */
static void check_clean(const char *dir, const char *name)
{
	char *text = slurp(dir, name, NULL);

	CHECK(text != NULL);
	if (!text)
		return;
	if (strstr(text, "Error") || strstr(text, "Warning") ||
	    strstr(text, "Incorrect")) {
		CHECK(!"ACPICA complained");
		fprintf(stderr, "--- %s/%s:\n%s\n", dir, name, text);
	}
	free(text);
}

static size_t count_str(const char *text, const char *pat)
{
	size_t n = 0;

	for (; (text = strstr(text, pat)); text += strlen(pat))
		n++;
	return n;
}

static void disassemble(const char *dir, const uint8_t *table)
{
	char name[16], cmd[128];

	snprintf(name, sizeof(name), "%.4s.dat", (const char *)table);
	CHECK(write_file(dir, name, table, le(table + 4, 4)));
	snprintf(cmd, sizeof(cmd), "iasl -d %.4s.dat > %.4s.log 2>&1",
		 (const char *)table, (const char *)table);
	CHECK_EQ(run_in(dir, cmd), 0);
	snprintf(name, sizeof(name), "%.4s.log", (const char *)table);
	check_clean(dir, name);
	snprintf(name, sizeof(name), "%.4s.dsl", (const char *)table);
	check_clean(dir, name);
}

/* iasl recompiles the disassembled DSDT to the same AML after the header. */
static void check_dsdt_tools(const char *dir, const struct acpi_config *cfg,
			     const uint8_t *dsdt)
{
	size_t len = le(dsdt + 4, 4), aml_len = 0;
	bool pvpanic = cfg->pvpanic_port != 0, vg = cfg->vmgenid_gpa != 0;
	char *text, *aml, want[64];

	text = slurp(dir, "DSDT.dsl", NULL);
	CHECK(text != NULL);
	if (text) {
		CHECK(!cfg->nr_mmio || strstr(text, "\"LNRO0005\""));
		CHECK_EQ(count_str(text, "Device (VR"), cfg->nr_mmio);
		CHECK(!cfg->pci.present || strstr(text, "PNP0A08"));
		CHECK(strstr(text, "_S5_") != NULL);
		/* Each _CRS decodes as a resource template: COM1, PS2_
		 * (two IO ranges), the
		 * virtio-mmio devices, PCI0 and its ECAM reservation. */
		CHECK_EQ(count_str(text, "ResourceTemplate ()"),
			 2 + cfg->rtc + pvpanic + cfg->nr_mmio +
			 (cfg->pci.present ? 2 : 0) + vg);
		CHECK_EQ(count_str(text, "Interrupt (ResourceConsumer, Edge, "
				   "ActiveHigh, Exclusive"), cfg->nr_mmio + vg);
		/* The VM generation ID, its address and its event. */
		CHECK_EQ(count_str(text, "Name (_CID, \"VM_GEN_COUNTER\")"),
			 vg);
		CHECK_EQ(count_str(text, "Name (_HID, \"ACPI0013\""), vg);
		CHECK_EQ(count_str(text, "Notify (VGEN, 0x80)"), vg);
		CHECK_EQ(count_str(text, "Method (_EVT, 1, NotSerialized)"),
			 vg);
		snprintf(want, sizeof(want), "0x%08llX,",
			 (unsigned long long)cfg->vmgenid_gpa);
		CHECK(!vg || strstr(text, want));
		CHECK_EQ(count_str(text, "IO (Decode16,"),
			 3 + cfg->rtc + pvpanic + cfg->pci.present);
		/* QEMU's ISA pvpanic: the Linux driver's _HID, one port. */
		snprintf(want, sizeof(want), "0x%04X,             // Range Minimum",
			 cfg->pvpanic_port);
		CHECK_EQ(count_str(text, "Name (_HID, \"QEMU0001\")"),
			 pvpanic);
		CHECK(!pvpanic || strstr(text, want));
		CHECK_EQ(count_str(text, "Name (_STA, 0x0F)"), pvpanic);
		free(text);
	}
	CHECK_EQ(run_in(dir, "iasl DSDT.dsl > DSDT.build.log 2>&1"), 0);
	text = slurp(dir, "DSDT.build.log", NULL);
	CHECK(text && strstr(text, " 0 Errors,") &&
	      strstr(text, " 0 Warnings,"));
	if (text && !strstr(text, " 0 Errors, 0 Warnings,"))
		fprintf(stderr, "--- %s/DSDT.build.log:\n%s\n", dir, text);
	free(text);
	aml = slurp(dir, "DSDT.aml", &aml_len);
	CHECK(aml && aml_len == len);
	if (aml && aml_len == len)
		CHECK(!memcmp(aml + HDR, dsdt + HDR, len - HDR));
	free(aml);
}

/*
 * acpiexec loads the tables as Linux would, decodes every _CRS with the
 * resource manager Linux uses, and enters S5 through the sleep registers.
 */
static void check_acpiexec(const char *dir, const struct acpi_config *cfg)
{
	char cmd[256], want[32], *text;
	unsigned int i;

	snprintf(cmd, sizeof(cmd),
		 "acpiexec -b 'resources; evaluate \\_S5_; sleep 5%s' FACP.dat "
		 "DSDT.dat APIC.dat %s > exec.log 2>&1",
		 cfg->vmgenid_gpa ? "; evaluate \\_SB.VGEN.ADDR; "
		 "evaluate \\_SB.GED0._EVT 3" : "",
		 cfg->pci.present ? "MCFG.dat" : "");
	CHECK_EQ(run_in(dir, cmd), 0);
	check_clean(dir, "exec.log");
	text = slurp(dir, "exec.log", NULL);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_EQ(count_str(text, "] EndTag Resource"),
		 2 + cfg->rtc + !!cfg->pvpanic_port + cfg->nr_mmio +
		 (cfg->pci.present ? 2 : 0) + !!cfg->vmgenid_gpa);
	/* The event method notifies the ID's device. */
	snprintf(want, sizeof(want), "[Integer] = %016llX",
		 (unsigned long long)cfg->vmgenid_gpa);
	CHECK(!cfg->vmgenid_gpa ||
	      (strstr(text, "Device: \\_SB.GED0\n") && strstr(text, want) &&
	       strstr(text, "Received a Device Notify on [VGEN]")));
	CHECK(!cfg->pvpanic_port || strstr(text, "Device: \\_SB.PEVT\n"));
	CHECK(strstr(text, "Device: \\_SB.COM1\n") != NULL);
	/* The keyboard controller, as Linux's i8042 driver looks for it. */
	CHECK(strstr(text, "Device: \\_SB.PS2\n") != NULL); /* PS2_ */
	CHECK(!cfg->rtc || strstr(text, "Device: \\_SB.RTC\n")); /* RTC_ */
	CHECK(!cfg->pci.present ||
	      (strstr(text, "Device: \\_SB.PCI0\n") &&
	       strstr(text, "Device: \\_SB.PCI0.RES0\n")));
	for (i = 0; i < cfg->nr_mmio; i++) {
		snprintf(want, sizeof(want), "Device: \\_SB.VR%02X\n", i);
		CHECK(strstr(text, want) != NULL);
	}
	snprintf(want, sizeof(want), "Sleep-A: %02X", ACPI_S5_SLP_TYP);
	CHECK(strstr(text, want) != NULL);
	free(text);
}

static void remove_dir(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static void tools_config(const struct acpi_config *cfg, bool acpiexec)
{
	char dir[] = "/tmp/test_acpi.XXXXXX";
	int fails = test_fail_count;
	const uint8_t *tabs[5];
	struct tables t;
	size_t i, n = 0;
	int used;
	char *text;

	used = build_and_check(cfg, LAYOUT_ACPI_SIZE, &t);
	CHECK(used > 0 && t.xsdt && t.fadt && t.madt && t.dsdt);
	if (used <= 0 || !t.xsdt || !t.fadt || !t.madt || !t.dsdt ||
	    !mkdtemp(dir)) {
		CHECK(!"cannot prepare the ACPICA checks");
		return;
	}
	tabs[n++] = t.xsdt;
	tabs[n++] = t.fadt;
	tabs[n++] = t.madt;
	tabs[n++] = t.dsdt;
	if (t.mcfg)
		tabs[n++] = t.mcfg;
	for (i = 0; i < n; i++)
		disassemble(dir, tabs[i]);
	text = slurp(dir, "APIC.dsl", NULL);
	CHECK(text && count_str(text, "[Processor Local APIC]") == cfg->ncpus);
	free(text);
	check_dsdt_tools(dir, cfg, t.dsdt);
	if (acpiexec)
		check_acpiexec(dir, cfg);
	if (test_fail_count > fails)
		fprintf(stderr, "ACPICA output kept in %s\n", dir);
	else
		remove_dir(dir);
}

static int test_tools(void)
{
	struct acpi_config cfgs[] = {
		make_config(1, false, 0, false, false),
		make_config(2, true, 3, true, true),
		make_config(2, true, 1, false, false), /* no pvpanic */
		make_config(64, true, 1, false, false),
		make_config(255, false, X86_MMIO_SLOTS, false, true),
	};
	bool acpiexec = on_path("acpiexec");
	size_t i;

	cfgs[2].pvpanic_port = 0;

	if (!on_path("iasl")) {
		printf("iasl not found (package acpica-tools): ACPICA checks "
		       "skipped\n");
		return 77;
	}
	if (!acpiexec)
		printf("acpiexec not found: its checks are skipped\n");
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		tools_config(&cfgs[i], acpiexec);
	return test_done();
}

int main(void)
{
	int ret;

	test_mmio_slots();
	test_configs();
	test_enospc();
	test_einval();
	ret = test_done();
	if (ret)
		return ret;
	return test_tools();
}
