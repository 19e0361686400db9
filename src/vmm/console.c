// SPDX-License-Identifier: Apache-2.0
/*
 * stdin -> UART pump. The thread blocks in read(); at end of input it
 * stops (the guest keeps running). Raw mode keeps output post-processing
 * so the guest's "\n" still starts a new line on the host terminal.
 */
#include "vmm/console.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "util/confine.h"

static struct termios saved_tio;
static volatile int tio_saved;
static console_input_fn input_fn;
static void *input_opaque;

void console_restore(void)
{
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
		tio_saved = 0;
	}
}

static void *console_pump(void *arg)
{
	uint8_t buf[256];

	(void)arg;
	pthread_setname_np(pthread_self(), "console");
	confine_thread(CONFINE_CONSOLE);
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		size_t done = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		while (done < (size_t)n) {
			size_t k = input_fn(input_opaque, buf + done, n - done);

			done += k;
			if (done < (size_t)n) {
				struct timespec ts = { 0, 2 * 1000 * 1000 };

				nanosleep(&ts, NULL);
			}
		}
	}
}

int console_start(console_input_fn fn, void *opaque)
{
	pthread_attr_t attr;
	pthread_t thread;
	int ret;

	input_fn = fn;
	input_opaque = opaque;
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;

		raw.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR |
				 IGNCR | ICRNL | IXON);
		raw.c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
		raw.c_cflag &= ~(CSIZE | PARENB);
		raw.c_cflag |= CS8;
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tio_saved = 1;
		atexit(console_restore);
		if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
			return -errno;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&thread, &attr, console_pump, NULL);
	pthread_attr_destroy(&attr);
	return ret;
}
