// SPDX-License-Identifier: Apache-2.0
/*
 * The real virtio-blk code paths under the real filters, in the threads
 * that run them in microvm: a forked child's main thread confines itself
 * as main, a "vCPU" thread (vCPU filter) sets DRIVER_OK, which starts the
 * io_uring queue threads (vCPU + I/O filters, polling on as by default);
 * they write, read, flush, write zeroes and discard; the vCPU resets and
 * restarts the device; the main thread tears it down with its queues
 * running. Once as microvm runs by default, once with interrupt holding
 * on (irq-hold-us: timer slack, timed sleeps). Any call missing
 * from an allowlist ends the child by SIGSYS with the line naming it.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "blk_driver.h"
#include "util/confine.h"

static uint16_t vcpu_failures;

/* Queue 0: write, read back, flush, write zeroes, discard. */
static void vcpu_io_round(unsigned int seed)
{
	uint64_t feats = default_features() | F(VIRTIO_BLK_F_DISCARD) |
			 F(VIRTIO_BLK_F_WRITE_ZEROES);
	uint16_t base;

	drv_start(feats & h.vdev.host_features);
	fill_pattern(host(data_gpa(0)), 4096, seed);
	base = used_idx(0);
	req_add(0, 0, VIRTIO_BLK_T_OUT, 8, 4096, false);
	if (!go(0, 1) || status_of(0) != VIRTIO_BLK_S_OK)
		vcpu_failures++;
	req_add(0, 1, VIRTIO_BLK_T_IN, 8, 4096, true);
	req_add(0, 2, VIRTIO_BLK_T_FLUSH, 0, 0, false);
	if (!go(0, 2) || status_of(1) != VIRTIO_BLK_S_OK ||
	    status_of(2) != VIRTIO_BLK_S_OK ||
	    memcmp(host(data_gpa(1)), host(data_gpa(0)), 4096))
		vcpu_failures++;
	dwz_add(3, VIRTIO_BLK_T_WRITE_ZEROES, 64, 8, 0);
	dwz_add(4, VIRTIO_BLK_T_DISCARD, 128, 8, 0);
	if (!go(0, 2))
		vcpu_failures++;
	if (used_idx(0) != (uint16_t)(base + 5))
		vcpu_failures++;
}

static void *vcpu_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "vcpu0");
	confine_thread(CONFINE_VCPU);
	vcpu_io_round(1);
	set_status(0); /* reset: the vCPU joins its queue threads */
	vcpu_io_round(2);
	/* Left running: main stops them at teardown. */
	return NULL;
}

static int child(uint32_t hold_us)
{
	char err[256];
	pthread_t t;

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 2;
	memset(ram, 0, RAM_SIZE);
	engine = DISK_ENGINE_URING;
	dev_poll_us = BLK_POLL_DEFAULT_US; /* as microvm runs them */
	dev_irq_hold_us = hold_us;
	if (dev_open(false, 1, SERIAL))
		return 2;
	unlink(h.path); /* no unlink once confined */
	if (confine_prepare(CONFINE_ON, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (pthread_create(&t, NULL, vcpu_thread, NULL))
		return 2;
	confine_thread(CONFINE_MAIN);
	pthread_join(t, NULL);
	/* dev_close() without its unlink: what microvm's teardown does. */
	blk_dev_destroy(h.b);
	close(h.vdev.queues[0].kick_fd);
	disk_close(&h.disk);
	return vcpu_failures ? 1 : 0;
}

/* Run child(@hold_us) in a fork. Return: 77 when it could not set up. */
static int run_child(uint32_t hold_us)
{
	int status, out[2];
	char buf[4096] = "";
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(out))
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(out[0]);
		dup2(out[1], STDERR_FILENO);
		exit(child(hold_us));
	}
	close(out[1]);
	while ((n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(out[0]);
	waitpid(pid, &status, 0);
	printf("irq-hold-us %u: child status %d\n", hold_us, status);
	if (got)
		fprintf(stderr, "child's stderr:\n%s", buf);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		return 77;
	CHECK(WIFEXITED(status));
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	CHECK(!strstr(buf, "seccomp:"));
	return 0;
}

int main(void)
{
	if (!uring_works()) {
		printf("SKIP: io_uring unavailable here\n");
		return 77;
	}
	if (run_child(0) == 77 || run_child(200) == 77) {
		printf("SKIP: setup failed\n");
		return 77;
	}
	return test_done();
}
