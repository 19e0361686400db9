// SPDX-License-Identifier: Apache-2.0
/*
 * The console's host side at teardown and in --stats, the same for either
 * architecture's UART (both keep their output in a struct uart_host).
 */
#include <stdio.h>

#include "devices/uart_host.h"
#include "util/log.h"
#include "vmm/config.h"
#include "vmm/machine.h"

void machine_console_close(struct machine *m, struct uart_host *h,
			   unsigned int flush_ms)
{
	struct outbuf_stats st;

	uart_host_close_output(h, flush_ms);
	uart_host_stats(h, &st);
	if (st.dropped)
		log_warn("console: %llu bytes of guest output dropped (%s "
			 "was not read fast enough)",
			 (unsigned long long)st.dropped,
			 m->cfg && m->cfg->console ? m->cfg->console : "stdout");
}

void machine_console_print_stats(struct uart_host *h, int fd)
{
	struct outbuf_stats st;

	uart_host_stats(h, &st);
	dprintf(fd, "microvm: stats console: output bytes %llu written %llu "
		"dropped %llu\n", (unsigned long long)(st.queued + st.dropped),
		(unsigned long long)st.written,
		(unsigned long long)st.dropped);
}
