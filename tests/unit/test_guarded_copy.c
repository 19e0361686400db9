// SPDX-License-Identifier: Apache-2.0
/*
 * guarded_copy(): copies to and from a shared file mapping; a page past
 * the file's end (the file shrank) fails the copy with -EFAULT, both ways,
 * again and again, in the main thread and in a thread that blocks every
 * other signal; a SIGBUS outside a guarded copy still kills the process
 * (a child), as without the handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util/guarded_copy.h"

#define PAGE 4096
#define PAGES 4

static uint8_t *map;
static int fd = -1;

/* A PAGES-page file, mapped, of which only the first page remains. */
static int setup(void)
{
	char path[] = "/tmp/microvm-guard-XXXXXX";

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, PAGES * PAGE))
		return -1;
	map = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED)
		return -1;
	memset(map, 0x5a, PAGES * PAGE);
	return ftruncate(fd, PAGE);
}

static void copies(void)
{
	uint8_t buf[2 * PAGE];
	int i;

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(guarded_copy(buf, map, PAGE), 0);
	CHECK(buf[0] == 0x5a && buf[PAGE - 1] == 0x5a);
	memset(buf, 0x11, PAGE);
	CHECK_EQ(guarded_copy(map + 16, buf, 64), 0);
	CHECK(map[16] == 0x11 && map[79] == 0x11 && map[80] == 0x5a);
	/* Past the end now: reads and writes fail, every time. */
	for (i = 0; i < 3; i++) {
		CHECK_EQ(guarded_copy(buf, map + 2 * PAGE, PAGE), -EFAULT);
		CHECK_EQ(guarded_copy(map + 3 * PAGE, buf, PAGE), -EFAULT);
		/* Straddling the end: fails too, the first page copied. */
		CHECK_EQ(guarded_copy(buf, map, 2 * PAGE), -EFAULT);
	}
	/* Still working afterwards. */
	CHECK_EQ(guarded_copy(buf, map + 8, 8), 0);
}

static void *thread_fn(void *arg)
{
	(void)arg;
	guarded_copy_thread();
	copies();
	return NULL;
}

int main(void)
{
	sigset_t all, old;
	pthread_t t;
	pid_t pid;
	int st;

	if (setup()) {
		printf("skip: no shared file mapping here\n");
		return 77;
	}
	if (guarded_copy_init() == -ENOTSUP) {
		printf("skip: no SIGBUS guard in this build (ThreadSanitizer)\n");
		return 77;
	}
	CHECK_EQ(guarded_copy_init(), 0);
	copies();
	/* A thread born with every signal blocked, as the queue threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	CHECK_EQ(pthread_create(&t, NULL, thread_fn, NULL), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_join(t, NULL);
	/* Outside a guarded copy a SIGBUS is fatal, as always. */
	pid = fork();
	if (pid == 0) {
		volatile uint8_t v = map[2 * PAGE];

		(void)v;
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
	printf("guarded_copy: faults past a shrunk file fail the copy\n");
	return test_done();
}
