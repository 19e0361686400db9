// SPDX-License-Identifier: Apache-2.0
/*
 * microvm-exit: the root image's way to hand an exit status to microvm
 * (README "Exit status"). It writes the byte to I/O port PORT_EXIT with
 * ioperm+outb, or, where the guest kernel has no ioperm (a kernel without
 * CONFIG_X86_IOPL_IOPERM), to the exit register at EXIT_MMIO_ADDR through
 * /dev/mem (CONFIG_DEVMEM). microvm ends the VM on that write, so it
 * first waits (a few seconds at most) for the console to send what is
 * still queued in the guest's tty buffers, which would be lost otherwise.
 * On success it does not return; a status means neither way worked.
 *
 * Usage: microvm-exit STATUS   (0-255, C syntax)
 *        microvm-exit --drain  (only wait for the console; exit 0)
 * Exit: 2 bad usage, 1 no way to reach the exit device.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "layout.h"

#define DRAIN_SECONDS 5

static void drain_alarm(int sig)
{
	(void)sig; /* only interrupts tcdrain() */
}

/*
 * Output written to a tty sits in the kernel's buffers until the UART has
 * sent it; the exit write ends the VM at once. Wait for the console and
 * for our stdout/stderr (the real tty behind /dev/console), bounded in
 * case flow control holds the line.
 */
static void console_drain(void)
{
	struct sigaction sa = { .sa_handler = drain_alarm };
	int fd;

	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: EINTR ends a wait */
	alarm(DRAIN_SECONDS);
	fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		tcdrain(fd);
		close(fd);
	}
	if (isatty(STDOUT_FILENO))
		tcdrain(STDOUT_FILENO);
	if (isatty(STDERR_FILENO))
		tcdrain(STDERR_FILENO);
	alarm(0);
}

static int exit_by_port(unsigned char status)
{
	if (ioperm(PORT_EXIT, 1, 1) < 0)
		return -errno;
	outb(status, PORT_EXIT);
	return 0;
}

static int exit_by_mmio(unsigned char status)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile uint8_t *reg;
	void *map;
	int fd, err;

	fd = open("/dev/mem", O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	map = mmap(NULL, page, PROT_WRITE, MAP_SHARED, fd,
		   EXIT_MMIO_ADDR & ~(uint64_t)(page - 1));
	err = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	reg = (volatile uint8_t *)map + (EXIT_MMIO_ADDR & (page - 1));
	*reg = status;
	munmap(map, page);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long status;
	int port_err, mmio_err;
	char *end;

	if (argc == 2 && !strcmp(argv[1], "--drain")) {
		console_drain();
		return 0;
	}
	errno = 0;
	status = argc == 2 ? strtoul(argv[1], &end, 0) : 256;
	if (argc != 2 || !*argv[1] || *end || errno || status > 255) {
		fprintf(stderr, "usage: microvm-exit STATUS (0-255), not '%s'\n",
			argc > 1 ? argv[1] : "");
		return 2;
	}
	console_drain();
	port_err = exit_by_port(status);
	/*
	 * The write ends the VM, but give the vCPU a moment anyway: with
	 * the port done and still running, we are not under microvm.
	 */
	if (!port_err)
		usleep(100000);
	mmio_err = exit_by_mmio(status);
	if (!mmio_err)
		usleep(100000);
	/*
	 * ENOSYS from ioperm: no CONFIG_X86_IOPL_IOPERM; no /dev/mem: no
	 * CONFIG_DEVMEM. Both written and still running: not microvm.
	 */
	fprintf(stderr, "microvm-exit: status %lu: port 0x%x: %s, "
		"/dev/mem 0x%llx: %s (the kernel needs CONFIG_X86_IOPL_IOPERM "
		"or CONFIG_DEVMEM, and the VMM must be microvm)\n", status,
		PORT_EXIT, port_err ? strerror(-port_err) : "written, no exit",
		EXIT_MMIO_ADDR,
		mmio_err ? strerror(-mmio_err) : "written, no exit");
	return 1;
}
