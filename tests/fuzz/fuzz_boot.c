// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the x86_64 kernel loaders (src/vmm/x86_64/boot*.c):
 * the input is a kernel image (bzImage, ELF with a PVH note, or anything)
 * loaded into fake guest RAM with an initrd and a command line. Whatever
 * the image says, the loader either refuses it with a message or leaves
 * a state whose promises hold: kernel and initrd inside low RAM and apart,
 * page-aligned initrd bytes intact, the command line at its address, the
 * entry point inside the kernel. RAM ends at a PROT_NONE guard page, so a
 * write past it faults. abort() on any broken promise.
 *
 * Input: [0] RAM size choice, [1] flags (bit 0: initrd, bits 1-3: command
 * line length choice, bit 4: guest memory backs only half the RAM the
 * config claims), [2..4] le24 initrd length (capped), then the kernel.
 */
#include "vmm/x86_64/boot.h"
#include "vmm/x86_64/layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MIB (1ULL << 20)
#define FUZZ_RAM_MAX (32 * MIB) /* host memory backing guest RAM */
#define FUZZ_GUARD 0x1000ULL
#define FUZZ_INITRD_MAX 0x10000u
#define FUZZ_HEADER 5
#define FUZZ_ERR_LEN 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *ram_base; /* FUZZ_RAM_MAX bytes, then the guard page */
static uint8_t initrd[FUZZ_INITRD_MAX];
static char cmdline[LAYOUT_CMDLINE_MAX + 2];

static const uint64_t ram_sizes[8] = {
	1 * MIB, 2 * MIB, 4 * MIB + 0x1000, 8 * MIB, 17 * MIB, 32 * MIB,
	3 * 1024 * MIB, 5 * 1024 * MIB, /* the last two: backed to 32M */
};
static const size_t cmdline_lens[8] = {
	0, 1, 255, 2047, 2048, 4095, LAYOUT_CMDLINE_MAX - 1,
	LAYOUT_CMDLINE_MAX,
};

static int fuzz_init(void)
{
	size_t i;

	ram_base = mmap(NULL, FUZZ_RAM_MAX + FUZZ_GUARD,
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (ram_base == MAP_FAILED ||
	    mprotect(ram_base + FUZZ_RAM_MAX, FUZZ_GUARD, PROT_NONE))
		return -1;
	for (i = 0; i < sizeof(initrd); i++)
		initrd[i] = (uint8_t)(i * 13 + 7);
	memset(cmdline, 'c', sizeof(cmdline));
	return 0;
}

static void fuzz_check_ok(const struct x86_boot_cfg *cfg,
			  const struct x86_boot_state *st, const uint8_t *ram,
			  uint64_t backed, const uint8_t *k, size_t n)
{
	uint64_t low = cfg->ram_size < MMIO_HOLE_START ? cfg->ram_size
						       : MMIO_HOLE_START;
	size_t clen = strlen(cfg->cmdline);
	bool elf = n >= 4 && !memcmp(k, "\177ELF", 4);

	if (st->mode != (elf ? X86_BOOT_PVH : X86_BOOT_LINUX64))
		abort();
	if (st->kernel_addr < LAYOUT_HIMEM_START ||
	    st->kernel_end <= st->kernel_addr || st->kernel_end > low ||
	    st->kernel_end > backed)
		abort();
	if (st->rip < st->kernel_addr || st->rip >= st->kernel_end)
		abort();
	if (cfg->initrd) {
		uint64_t at = st->initrd_addr;

		if (!at || at % 0x1000 || at < st->kernel_end ||
		    at > low - cfg->initrd_len ||
		    memcmp(ram + at, cfg->initrd, cfg->initrd_len))
			abort();
	} else if (st->initrd_addr) {
		abort();
	}
	if (memcmp(ram + LAYOUT_CMDLINE_ADDR, cfg->cmdline, clen + 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FUZZ_ERR_LEN];
	struct x86_boot_state st;
	struct x86_boot_cfg cfg;
	struct guest_mem gm;
	uint64_t backed;
	size_t ilen;
	uint8_t *ram;
	int ret;

	if (size < FUZZ_HEADER)
		return 0;
	if (!ram_base && fuzz_init())
		abort();
	memset(&cfg, 0, sizeof(cfg));
	cfg.ram_size = ram_sizes[data[0] % 8];
	backed = cfg.ram_size < FUZZ_RAM_MAX ? cfg.ram_size : FUZZ_RAM_MAX;
	if (data[1] & 16)
		backed /= 2;
	/* RAM ends where the guard page begins. */
	ram = ram_base + (FUZZ_RAM_MAX - backed);
	memset(&gm, 0, sizeof(gm));
	if (guest_mem_add_region(&gm, 0, backed, ram))
		abort();
	ilen = (size_t)(data[2] | data[3] << 8 | data[4] << 16);
	if (data[1] & 1) {
		cfg.initrd = initrd;
		cfg.initrd_len = ilen % (FUZZ_INITRD_MAX + 1);
		cfg.initrd_path = "initrd";
	}
	cmdline[cmdline_lens[data[1] >> 1 & 7]] = '\0';
	cfg.cmdline = cmdline;
	cfg.kernel = data + FUZZ_HEADER;
	cfg.kernel_len = size - FUZZ_HEADER;
	cfg.kernel_path = "kernel";
	cfg.rsdp_gpa = LAYOUT_ACPI_ADDR;
	ret = x86_boot_load(&gm, &cfg, &st, err, sizeof(err));
	if (ret == 0) {
		fuzz_check_ok(&cfg, &st, ram, backed, cfg.kernel,
			      cfg.kernel_len);
	} else if (ret != -EINVAL && ret != -ENOSPC && ret != -E2BIG &&
		   ret != -EFAULT) {
		abort();
	} else if (!err[0] || !memchr(err, '\0', sizeof(err))) {
		abort(); /* every refusal says why */
	}
	cmdline[cmdline_lens[data[1] >> 1 & 7]] = 'c';
	return 0;
}
