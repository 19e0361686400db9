// SPDX-License-Identifier: Apache-2.0
/*
 * The real virtio-vsock code paths under the real filters, in the threads
 * that run them in microvm: a forked child is the VMM (its main thread
 * confines itself as main with confine_policy_vsock(true), a "vCPU"
 * thread sets DRIVER_OK, which starts the vsock worker under the vCPU
 * filter and its own); the parent is the host programs. A host program
 * connects and exchanges bytes, the guest connects to <uds>_5000, the
 * vCPU resets the device (closing both), main pauses and resumes it (the
 * worker then runs under main's filter) and serves one more host program,
 * then tears it down. Any call missing from an allowlist ends the child
 * by SIGSYS with the line naming it.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "util/confine.h"
#include "util/confine_policy.h"
#include "vsock_driver.h"

/* The guest accepts one host program on port 52 and echoes 4 bytes. */
static void guest_echo(void)
{
	struct pkt p;
	uint32_t hp;

	CHECK(rx_ctl(&p, 10000));
	CHECK_EQ(p.h.op, VSOCK_OP_REQUEST);
	CHECK_EQ(p.h.dst_port, 52);
	hp = p.h.src_port;
	tx_op(52, hp, VSOCK_OP_RESPONSE, 0);
	CHECK(rx_ctl(&p, 10000));
	CHECK_EQ(p.h.op, VSOCK_OP_RW);
	CHECK_EQ(p.h.len, 4);
	tx(ghdr(52, hp, VSOCK_OP_RW), p.data, 4);
}

static void *vcpu(void *arg)
{
	struct pkt p;

	(void)arg;
	confine_thread(CONFINE_VCPU);
	drv_start();
	guest_echo();
	/* The guest connects to the host's <uds>_5000. */
	tx_op(1000, 5000, VSOCK_OP_REQUEST, 0);
	CHECK(rx_ctl(&p, 10000));
	CHECK_EQ(p.h.op, VSOCK_OP_RESPONSE);
	tx(ghdr(1000, 5000, VSOCK_OP_RW), "guest", 5);
	/* Both go away with a device reset; the device starts again. */
	sleep_ms(100);
	set_status(0);
	drv_start();
	return NULL;
}

static int child(void)
{
	char err[256];
	pthread_t t;

	ram = calloc(1, RAM_SIZE);
	if (!ram || guest_mem_add_region(&gm, RAM_GPA, RAM_SIZE, ram))
		return 1;
	dev_open();
	vsock_dev_keep_path(dev); /* main, confined, may not unlink */
	confine_policy_vsock(true);
	if (confine_prepare(CONFINE_ON, err, sizeof(err))) {
		fprintf(stderr, "prepare: %s\n", err);
		return 77;
	}
	if (pthread_create(&t, NULL, vcpu, NULL))
		return 1;
	confine_thread(CONFINE_MAIN);
	pthread_join(t, NULL);
	/* The lifecycle: the worker restarts from main's filter. */
	virtio_dev_pause(&vdev);
	CHECK_EQ(virtio_dev_resume(&vdev), 0);
	guest_echo();
	sleep_ms(100);
	dev_close();
	return test_done();
}

/* One host program on port 52: CONNECT, OK, 4 bytes echoed. */
static void host_echo(void)
{
	uint64_t end = now_ms() + 10000;
	char b[32];
	int fd = -1;

	while (fd < 0 && now_ms() < end) {
		fd = unix_connect(uds);
		if (fd < 0)
			sleep_ms(10);
	}
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, "CONNECT 52\n", 11), 11);
	CHECK_EQ(read_n(fd, b, 3), 3);
	CHECK(!memcmp(b, "OK ", 3));
	CHECK_EQ(read_n(fd, b, 11), 11); /* "1073741824\n" */
	CHECK_EQ(write(fd, "ping", 4), 4);
	CHECK_EQ(read_n(fd, b, 4), 4);
	CHECK(!memcmp(b, "ping", 4));
	CHECK(host_sees_eof(fd, 10000)); /* reset, or teardown */
	close(fd);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char path[100], b[8];
	int lfd, fd, status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/test_cv.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(uds, sizeof(uds), "%s/v.sock", dir);
	snprintf(path, sizeof(path), "%s_5000", uds);
	lfd = unix_listen(path);
	CHECK(lfd >= 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child());
	host_echo();
	fd = accept(lfd, NULL, NULL);
	CHECK(fd >= 0);
	CHECK_EQ(read_n(fd, b, 5), 5);
	CHECK(!memcmp(b, "guest", 5));
	CHECK(host_sees_eof(fd, 10000));
	close(fd);
	host_echo();
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		fprintf(stderr, "no seccomp here: skipped\n");
		return 77;
	}
	if (WIFSIGNALED(status))
		fprintf(stderr, "child killed by signal %d\n",
			WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(lfd);
	unlink(path);
	unlink(uds);
	rmdir(dir);
	return test_done();
}
