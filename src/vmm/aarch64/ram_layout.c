// SPDX-License-Identifier: Apache-2.0
/*
 * Where guest RAM goes on arm64 (layout.h): from ARM64_RAM_BASE up to the
 * device hole at 3 GiB, the rest from 4 GiB. Pure code, so the x86_64
 * build's unit tests check it too.
 */
#include "vmm/arch.h"

#include "layout.h"

/*
 * Return: the number of ranges; 0 when @max < 2 or @ram_size is more
 * than ARM64_RAM_MAX (the 40-bit IPA space below the 64-bit PCI window),
 * which the caller must refuse before asking.
 */
int arch_ram_layout(uint64_t ram_size, struct arch_ram_range *out, int max)
{
	int n = 0;

	if (max < 2 || !ram_size || ram_size > ARM64_RAM_MAX)
		return 0;
	out[n].gpa = ARM64_RAM_BASE;
	out[n].size = ram_size < ARM64_RAM_LOW_MAX ? ram_size
						   : ARM64_RAM_LOW_MAX;
	n++;
	if (ram_size > ARM64_RAM_LOW_MAX) {
		out[n].gpa = ARM64_HIMEM_START;
		out[n].size = ram_size - ARM64_RAM_LOW_MAX;
		n++;
	}
	return n;
}

/* The 40-bit IPA space below the 64-bit PCI window: 510 GiB. */
uint64_t arch_ram_max(void)
{
	return ARM64_RAM_MAX;
}
