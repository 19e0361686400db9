// SPDX-License-Identifier: Apache-2.0
/*
 * microvm's entry point. Startup is an explicit table of steps, each with
 * its undo; a failing step unwinds the ones before it in reverse order and
 * the process exits 1 with the step's one-line message.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/eventfd.h>
#include <time.h>

#include "api/fc_config.h"
#include "api/fc_snapshot.h"
#include "api/handlers.h"
#include "mmds/mmds.h"
#include "util/clock.h"
#include "util/confine.h"
#include "util/confine_policy.h"
#include "util/log.h"
#include "virtio/virtio.h"
#include "vmm/arch.h"
#include "vmm/cli.h"
#include "vmm/console.h"
#include "vmm/control.h"
#include "vmm/machine.h"
#include "vmm/metrics.h"

#define ERR_LEN 512

static struct machine machine;

static int read_image(const char *what, const char *path, uint8_t **out,
		      size_t *len, char *err, size_t errlen)
{
	struct stat st;
	size_t done = 0;
	uint8_t *buf;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", what, path);
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		snprintf(err, errlen, "%s %s: out of memory", what, path);
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "%s %s: read failed: %s", what,
				 path, strerror(-ret));
			free(buf);
			close(fd);
			return ret;
		}
		done += n;
	}
	close(fd);
	*out = buf;
	*len = done;
	return 0;
}

/*
 * A restore in progress (machine_snapshot_open() succeeded): the steps
 * build the snapshot's machine, RAM from its memory file, and load its
 * state where a boot would load a kernel.
 */
static struct machine_snapshot restoring;
static int restore_mem_fd = -1;
static bool restore_track_dirty; /* the load's track_dirty_pages */
static bool restore_clock_realtime; /* the load's clock_realtime */
static bool is_restoring(void)
{
	return restoring.buf != NULL;
}

static int step_images(struct machine *m, char *err, size_t errlen)
{
	int ret;

	if (is_restoring())
		return 0;
	ret = read_image("kernel", m->cfg->kernel, &m->kernel, &m->kernel_len,
			 err, errlen);
	if (ret || !m->cfg->initrd)
		return ret;
	return read_image("initrd", m->cfg->initrd, &m->initrd,
			  &m->initrd_len, err, errlen);
}

static void undo_images(struct machine *m)
{
	free(m->kernel);
	free(m->initrd);
	m->kernel = m->initrd = NULL;
}

/*
 * --console FILE: the guest's console output goes to FILE, created or
 * truncated, and stdout stays empty. O_NONBLOCK keeps a FIFO with no
 * reader from hanging startup (ENXIO instead); the output thread copes
 * with a descriptor that says "try again". Opened before the VM so that
 * a bad path is reported without KVM.
 */
static int step_console(struct machine *m, char *err, size_t errlen)
{
	const char *path = m->cfg->console;
	int ret;

	m->console_fd = STDOUT_FILENO;
	if (!path)
		return 0;
	m->console_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			     O_NONBLOCK | O_NOCTTY, 0644);
	if (m->console_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "--console %s: %s", path, strerror(-ret));
		return ret;
	}
	return 0;
}

static void undo_console(struct machine *m)
{
	if (m->console_fd >= 0 && m->console_fd != STDOUT_FILENO)
		close(m->console_fd);
	m->console_fd = STDOUT_FILENO;
}

static int step_vm(struct machine *m, char *err, size_t errlen)
{
	int ret = vm_open(&m->vm, err, errlen);

	if (ret)
		return ret;
	ret = arch_vm_init(&m->vm, err, errlen);
	if (ret)
		return ret;
	return vm_irq_routing_init(&m->vm, err, errlen);
}

static void undo_vm(struct machine *m)
{
	vm_close(&m->vm);
}

/*
 * --memory against the machine's memory map (arm64: 510G, what fits below
 * the 64-bit PCI window) and the host's RAM, before KVM is opened, so a
 * size too large is one line naming it wherever microvm runs.
 */
static int step_memory(struct machine *m, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);
	uint64_t host = (uint64_t)pages * (uint64_t)psize;
	uint64_t max = arch_ram_max();

	if (m->cfg->memory > max) {
		snprintf(err, errlen,
			 "--memory %s: more than the %lluG of RAM the guest "
			 "memory map holds",
			 m->cfg->memory_arg, (unsigned long long)(max >> 30));
		return -EINVAL;
	}
	if (pages > 0 && psize > 0 && m->cfg->memory > host) {
		snprintf(err, errlen,
			 "--memory %s: more than the host's %lluM of RAM",
			 m->cfg->memory_arg, (unsigned long long)(host >> 20));
		return -ENOMEM;
	}
	return 0;
}

static int step_ram(struct machine *m, char *err, size_t errlen)
{
	if (is_restoring()) {
		m->vm.ram_fd = restore_mem_fd; /* vm_close() closes it */
		restore_mem_fd = -1;
	}
	m->vm.track_dirty = m->cfg->track_dirty_pages ||
			    (is_restoring() && restore_track_dirty);
	m->vm.clock_realtime = is_restoring() && restore_clock_realtime;
	return vm_add_ram(&m->vm, m->cfg->memory, m->cfg->memory_merge, err,
			  errlen);
}

static int step_devices(struct machine *m, char *err, size_t errlen)
{
	return arch_machine_devices(m, err, errlen);
}

static void undo_devices(struct machine *m)
{
	arch_machine_free(m);
}

static int step_open_disks(struct machine *m, char *err, size_t errlen)
{
	return machine_open_disks(m, err, errlen);
}

static void undo_open_disks(struct machine *m)
{
	machine_close_disks(m);
}

static int step_attach_disks(struct machine *m, char *err, size_t errlen)
{
	return machine_attach_disks(m, err, errlen);
}

static void undo_attach_disks(struct machine *m)
{
	machine_detach_disks(m);
}

static int step_attach_vsock(struct machine *m, char *err, size_t errlen)
{
	return machine_attach_vsock(m, err, errlen);
}

static void undo_attach_vsock(struct machine *m)
{
	machine_detach_vsock(m);
}

static int step_open_nets(struct machine *m, char *err, size_t errlen)
{
	return machine_open_nets(m, err, errlen);
}

static void undo_open_nets(struct machine *m)
{
	machine_close_nets(m);
}

static int step_attach_nets(struct machine *m, char *err, size_t errlen)
{
	return machine_attach_nets(m, err, errlen);
}

static void undo_attach_nets(struct machine *m)
{
	machine_detach_nets(m);
}

static int step_vcpus(struct machine *m, char *err, size_t errlen)
{
	m->vm.smt = m->cfg->smt;
	return vm_create_vcpus(&m->vm, m->cfg->cpus, err, errlen);
}

static int step_boot(struct machine *m, char *err, size_t errlen)
{
	int ret;

	if (!is_restoring())
		return arch_machine_boot(m, err, errlen);
	ret = arch_machine_restore(m, err, errlen);
	return ret ? ret : machine_snapshot_apply(m, &restoring, err, errlen);
}

/*
 * The kernel and initrd are in guest RAM once the boot step ran. Their
 * file copies, as large as both files (about 15 MiB for Debian's cloud
 * kernel and the test initramfs), would otherwise stay resident for the
 * whole life of the VM as VMM overhead.
 */
static int step_release_images(struct machine *m, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	undo_images(m);
	return 0;
}

struct init_step {
	const char *name; /* for the startup timeline (--verbose twice) */
	int (*init)(struct machine *m, char *err, size_t errlen);
	void (*undo)(struct machine *m);
};

static const struct init_step init_steps[] = {
	{ "memory", step_memory, NULL },
	{ "images", step_images, undo_images },
	{ "open disks", step_open_disks, undo_open_disks },
	{ "open taps", step_open_nets, undo_open_nets },
	{ "console", step_console, undo_console },
	{ "vm", step_vm, undo_vm },
	{ "ram", step_ram, NULL },        /* RAM goes with the VM */
	{ "devices", step_devices, undo_devices },
#ifdef __aarch64__
	/*
	 * arm64: KVM takes an irqfd (a virtio-mmio disk's) only once the
	 * vGIC is initialised, and that needs every vCPU to exist.
	 */
	{ "vcpus", step_vcpus, NULL },    /* vCPUs go with the VM */
	{ "attach disks", step_attach_disks, undo_attach_disks },
	{ "attach vsock", step_attach_vsock, undo_attach_vsock },
	{ "attach nets", step_attach_nets, undo_attach_nets },
#else
	{ "attach disks", step_attach_disks, undo_attach_disks },
	{ "attach vsock", step_attach_vsock, undo_attach_vsock },
	{ "attach nets", step_attach_nets, undo_attach_nets },
	{ "vcpus", step_vcpus, NULL },    /* vCPUs go with the VM */
#endif
	{ "boot", step_boot, NULL },
	{ "release images", step_release_images, NULL },
};

#define NR_STEPS (sizeof(init_steps) / sizeof(init_steps[0]))

static void machine_undo(struct machine *m, size_t done)
{
	while (done-- > 0)
		if (init_steps[done].undo)
			init_steps[done].undo(m);
}

/* With --verbose twice: where startup time goes, step by step. */
static void log_startup(const char *what)
{
	char ms[CLOCK_MS_LEN];

	log_debug("startup: %s at %s ms", what,
		  clock_format_ms(ms, sizeof(ms), clock_since_start_ns()));
}

/*
 * With --verbose twice: how long the way out takes, from the main thread
 * seeing the exit request (a guest panic, poweroff, ...) to the end of
 * teardown: a CI runner waits for that.
 */
static void log_exit_time(const char *what)
{
	char ms[CLOCK_MS_LEN];

	log_debug("exit: %s at %s ms", what,
		  clock_format_ms(ms, sizeof(ms), clock_since_start_ns()));
}

/*
 * Stack size of every thread microvm starts. glibc's default is
 * RLIMIT_STACK (8 MiB): in such a mapping a transparent huge page can back
 * the top of the stack, and a thread that uses a few KiB then holds 2 MiB
 * resident. A 1 MiB mapping holds no aligned 2 MiB page, and is far more
 * than any microvm thread uses.
 */
#define THREAD_STACK_SIZE (1u << 20)

static void thread_stack_default(void)
{
	pthread_attr_t attr;

	if (pthread_attr_init(&attr))
		return;
	if (pthread_attr_setstacksize(&attr, THREAD_STACK_SIZE) ||
	    pthread_setattr_default_np(&attr))
		log_warn("cannot set the default thread stack size");
	pthread_attr_destroy(&attr);
}

/*
 * Before the VM exists (the API waits for InstanceStart) a signal ends
 * microvm through preboot_fd; from boot on through the VM's exit.
 */
static int preboot_fd = -1;
static atomic_int preboot_status;

static void on_signal(int sig)
{
	if (atomic_load(&machine.state) == MACHINE_NOT_STARTED) {
		int expected = 0;

		atomic_compare_exchange_strong(&preboot_status, &expected,
					       128 + sig);
		if (preboot_fd >= 0)
			(void)eventfd_write(preboot_fd, 1);
		return;
	}
	vm_request_exit(&machine.vm, 128 + sig, "signal");
}

/*
 * SIGUSR1 prints the I/O counters while the guest runs. The devices stay
 * until stats_close() says they are going: printing and teardown never
 * overlap.
 */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static bool stats_closed;

static void *stats_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	pthread_setname_np(pthread_self(), "stats");
	confine_thread(CONFINE_MAIN);
	for (;;) {
		if (sigwait(set, &sig) || sig != SIGUSR1)
			continue;
		pthread_mutex_lock(&stats_lock);
		if (!stats_closed &&
		    atomic_load(&machine.state) != MACHINE_NOT_STARTED)
			machine_print_stats(&machine, STDERR_FILENO);
		pthread_mutex_unlock(&stats_lock);
	}
	return NULL;
}

static void stats_close(void)
{
	pthread_mutex_lock(&stats_lock);
	stats_closed = true;
	pthread_mutex_unlock(&stats_lock);
}

static void install_signals(void)
{
	static sigset_t usr1;
	static bool done;
	pthread_t thread;

	struct sigaction sa = { .sa_handler = on_signal };

	if (done)
		return;
	done = true;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Blocked here, so every thread started later inherits the block. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pthread_create(&thread, NULL, stats_thread, &usr1) == 0)
		pthread_detach(thread);
}

/* ---- boot, from the command line or the API's InstanceStart ---- */

static struct vm_config cfg;
static struct control *control;
static int metrics_fd = -1;

/* The machine as it was before any init step: a failed boot goes back. */
static void machine_reset(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	m->cfg = &cfg;
	m->console_fd = STDOUT_FILENO;
	atomic_store(&m->state, MACHINE_NOT_STARTED);
}

/*
 * Every init step, confinement of the disks, the threads, then main's own
 * filter. On failure everything done is undone and @err says why.
 */
static int machine_boot(struct machine *m, char *err, size_t errlen)
{
	size_t done;
	long fds;
	int ret;

	for (done = 0; done < NR_STEPS; done++) {
		ret = init_steps[done].init(m, err, errlen);
		if (ret) {
			machine_undo(m, done + 1);
			machine_reset(m);
			return ret;
		}
		log_startup(init_steps[done].name);
	}
	ret = machine_confine_disks(m, err, errlen);
	if (ret) {
		machine_undo(m, NR_STEPS);
		machine_reset(m);
		return ret;
	}
	/* Without the API the signal handlers and the stats thread come
	 * only now: bad input is refused before any thread exists. */
	install_signals();
	if (m->metrics == NULL && metrics_init(m))
		log_warn("metrics: out of memory");
	/* A restored machine starts paused: vCPUs park before their first
	 * KVM_RUN, devices wait for machine_resume(). */
	if (is_restoring())
		atomic_store(&m->vm.pause_req, true);
	atomic_store(&m->state, is_restoring() ? MACHINE_PAUSED :
						 MACHINE_RUNNING);
	if (arch_machine_console_start(m) || vm_start_vcpus(&m->vm)) {
		fprintf(stderr, "microvm: cannot start threads\n");
		vm_request_exit(&m->vm, VM_EXIT_INTERNAL, "startup");
	}
	/* Every queue of every disk may start, and vsock connect; nothing
	 * else opens files. The network interfaces opened all theirs (tap
	 * queues, workers' epoll sets and doorbells, the transports'
	 * eventfds) in their init steps: counted among those open now. */
	fds = confine_limit_fds(m->cfg->nr_disks * VIRTIO_MAX_QUEUES *
				CONFINE_FDS_PER_QUEUE + machine_vsock_fds(m));
	if (fds < 0)
		log_warn("cannot lower RLIMIT_NOFILE: %s", strerror((int)-fds));
	/* Confined, main can no longer remove the API socket or the vsock
	 * socket at exit. */
	if (control)
		control_keep_socket(control);
	machine_vsock_keep_path(m);
	/* Last: the threads above are not under it; it releases the vCPUs. */
	confine_thread(CONFINE_MAIN);
	log_startup("threads started, main confined");
	/* A signal that came while booting. */
	if (atomic_load(&preboot_status))
		vm_request_exit(&m->vm, atomic_load(&preboot_status), "signal");
	return 0;
}

/* ---- what the API asks of main (api/handlers.h) ---- */

static int act_start(void *opaque, char *err, size_t errlen)
{
	int ret;

	(void)opaque;
	ret = fc_finalize_config(&cfg, err, errlen);
	if (ret)
		return ret;
	ret = machine_boot(&machine, err, errlen);
	if (ret)
		log_error("InstanceStart: %s", err);
	return ret;
}

static int act_open_metrics(void *opaque, char *err, size_t errlen)
{
	int fd;

	(void)opaque;
	fd = metrics_open(cfg.metrics_path, err, errlen);
	if (fd < 0)
		return fd;
	if (metrics_fd >= 0)
		close(metrics_fd);
	metrics_fd = fd;
	return 0;
}

/* Firecracker's level names to ours; its default is Info. */
static int sink_level(enum config_log_level l)
{
	switch (l) {
	case CONFIG_LOG_OFF:
		return -1;
	case CONFIG_LOG_ERROR:
		return LOG_ERROR;
	case CONFIG_LOG_WARNING:
		return LOG_WARN;
	case CONFIG_LOG_DEBUG:
	case CONFIG_LOG_TRACE:
		return LOG_DEBUG;
	case CONFIG_LOG_UNSET:
	case CONFIG_LOG_INFO:
	default:
		return LOG_INFO;
	}
}

/* The logger's file sink from the configuration: log_path opened (a FIFO
 * read-write, so it never needs a reader to open; not blocking), its
 * level and format applied. Without a log_path, stderr only. */
static int act_set_logger(void *opaque, char *err, size_t errlen)
{
	struct log_sink_config sc = {
		.level = sink_level(cfg.log_level),
		.show_level = cfg.log_show_level,
		.show_origin = cfg.log_show_origin,
		.id = cfg.id,
		.module = cfg.log_module,
	};

	(void)opaque;
	if (!cfg.log_path)
		return 0;
	sc.fd = open(cfg.log_path, O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK |
				   O_CLOEXEC, 0600);
	if (sc.fd < 0) {
		int e = errno;

		snprintf(err, errlen, "log path %s: %s", cfg.log_path,
			 strerror(e));
		return -e;
	}
	log_set_sink(&sc);
	return 0;
}

static int act_flush_metrics(void *opaque, char *err, size_t errlen)
{
	int ret;

	(void)opaque;
	if (metrics_fd < 0) {
		snprintf(err, errlen, "the metrics system is not initialized "
			 "(PUT /metrics first)");
		return -EINVAL;
	}
	ret = metrics_write(&machine, metrics_fd);
	if (ret && ret != -EAGAIN) {
		snprintf(err, errlen, "cannot write metrics: %s",
			 strerror(-ret));
		return ret;
	}
	return 0;
}

static int act_ctrl_alt_del(void *opaque, char *err, size_t errlen)
{
	int ret;

	(void)opaque;
	ret = arch_machine_ctrl_alt_del(&machine);
	if (ret == -ENOTSUP)
		snprintf(err, errlen, "SendCtrlAltDel: this microVM has no "
			 "keyboard");
	else if (ret == -ENODEV)
		snprintf(err, errlen, "SendCtrlAltDel: the guest has no "
			 "keyboard driver (virtio-input never set DRIVER_OK)");
	else if (ret)
		snprintf(err, errlen, "SendCtrlAltDel: %s", strerror(-ret));
	return ret;
}

static int act_patch_net(void *opaque, unsigned int index,
			 const struct fc_net_patch *p, char *err,
			 size_t errlen)
{
	(void)opaque;
	return machine_patch_net(&machine, index, p->has_rx ? &p->rx : NULL,
				 p->has_tx ? &p->tx : NULL, err, errlen);
}

static int act_patch_drive(void *opaque, unsigned int index,
			   const struct fc_drive_patch *p, char *err,
			   size_t errlen)
{
	(void)opaque;
	return machine_patch_disk(&machine, index, p->path_on_host,
				  p->has_rl ? &p->rl : NULL, err, errlen);
}

static int act_snapshot_create(void *opaque,
			       const struct fc_snapshot_create *p, char *err,
			       size_t errlen)
{
	struct machine_snapshot_req req = {
		.state_path = p->snapshot_path,
		.mem_path = p->mem_file_path,
		.diff = p->type == FC_SNAP_DIFF,
	};
	char *json;
	int ret;

	(void)opaque;
	json = fc_snapshot_config_json(&cfg);
	if (!json) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	req.config_json = json;
	ret = machine_snapshot_create(&machine, &req, err, errlen);
	free(json);
	if (ret)
		log_error("CreateSnapshot: %s", err);
	return ret;
}

/*
 * The snapshot's state file read and checked, its configuration applied,
 * its memory file opened; then the machine is built from them, paused,
 * and resumed if @resume.
 */
static int restore(const struct fc_snapshot_load *p, char *err,
		   size_t errlen)
{
	struct vm_config before;
	char *json;
	struct stat st;
	int ret;

	ret = machine_snapshot_open(p->snapshot_path, &restoring, err, errlen);
	if (ret)
		return ret;
	restore_track_dirty = p->track_dirty_pages;
	restore_clock_realtime = p->clock_realtime;
	/* A load that fails leaves the configuration as it found it. */
	if (config_copy(&before, &cfg)) {
		machine_snapshot_close(&restoring);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* Its configuration, with the load's overrides (a clone's own
	 * disks, taps, vsock socket) put in before it is checked. */
	json = fc_snapshot_config_override(restoring.config,
					   restoring.config_len, p, err,
					   errlen);
	ret = json ? fc_load_config_json(&cfg, json, strlen(json),
					 "the snapshot's configuration", err,
					 errlen) : -EINVAL;
	free(json);
	if (ret)
		goto out;
	if (cfg.memory != restoring.ram_size) {
		snprintf(err, errlen, "snapshot %s: %llu MiB of RAM, its "
			 "configuration says %llu MiB", p->snapshot_path,
			 (unsigned long long)(restoring.ram_size >> 20),
			 (unsigned long long)(cfg.memory >> 20));
		ret = -EINVAL;
		goto out;
	}
	restore_mem_fd = open(p->mem_path, O_RDONLY | O_CLOEXEC);
	if (restore_mem_fd < 0 || fstat(restore_mem_fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "memory file %s: %s", p->mem_path,
			 strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < restoring.ram_size) {
		snprintf(err, errlen, "memory file %s: %s %llu bytes; the "
			 "snapshot's RAM is %llu", p->mem_path,
			 S_ISREG(st.st_mode) ? "holds" : "is not a regular file "
			 "of", (unsigned long long)st.st_size,
			 (unsigned long long)restoring.ram_size);
		ret = -EINVAL;
		goto out;
	}
	ret = machine_boot(&machine, err, errlen);
	if (!ret && p->resume_vm)
		ret = machine_resume(&machine, err, errlen);
out:
	if (restore_mem_fd >= 0)
		close(restore_mem_fd);
	restore_mem_fd = -1;
	machine_snapshot_close(&restoring);
	if (ret && atomic_load(&machine.state) == MACHINE_NOT_STARTED) {
		config_free(&cfg);
		cfg = before;
	} else {
		config_free(&before);
	}
	return ret;
}

static int act_snapshot_load(void *opaque, const struct fc_snapshot_load *p,
			     char *err, size_t errlen)
{
	int ret;

	(void)opaque;
	if (p->mem_uffd) {
		snprintf(err, errlen, "mem_backend: backend_type Uffd is not "
			 "supported by microvm; use File");
		return -EOPNOTSUPP;
	}
	ret = restore(p, err, errlen);
	if (ret)
		log_error("LoadSnapshot: %s", err);
	return ret;
}

static const struct api_actions api_actions = {
	.start = act_start,
	.snapshot_create = act_snapshot_create,
	.snapshot_load = act_snapshot_load,
	.flush_metrics = act_flush_metrics,
	.ctrl_alt_del = act_ctrl_alt_del,
	.patch_drive = act_patch_drive,
	.patch_net = act_patch_net,
	.open_metrics = act_open_metrics,
	.set_logger = act_set_logger,
};

static struct api_ctx api_ctx = {
	.m = &machine,
	.cfg = &cfg,
	.act = &api_actions,
};

/* Every METRICS_PERIOD_MS a line, as Firecracker's periodic flush. */
#define METRICS_PERIOD_MS 60000

static void metrics_tick(void *opaque)
{
	(void)opaque;
	if (metrics_fd >= 0 && atomic_load(&machine.state) != MACHINE_NOT_STARTED)
		(void)metrics_write(&machine, metrics_fd);
}

/* Writes no exit has replayed yet (a guest's last console byte). */
static void coalesced_tick(void *opaque)
{
	(void)opaque;
	vm_coalesced_flush(&machine.vm);
}

/*
 * API mode before boot: answer requests until InstanceStart booted the
 * machine (0) or a signal ended microvm (its status).
 */
static int serve_preboot(void)
{
	while (atomic_load(&machine.state) == MACHINE_NOT_STARTED) {
		if (control_wait(control, preboot_fd, 0, NULL, 0) == 1 &&
		    atomic_load(&preboot_status) &&
		    atomic_load(&machine.state) == MACHINE_NOT_STARTED)
			return atomic_load(&preboot_status);
	}
	return 0;
}

/*
 * The machine runs: answer API requests (if any) and flush metrics until
 * the VM ends or --timeout passes. Return: the exit status.
 */
static int serve_running(unsigned int timeout_s)
{
	struct control_tick ticks[2] = {
		{ .fn = metrics_tick },
		{ .fn = coalesced_tick, .period_ms = VM_COALESCED_FLUSH_MS },
	};
	uint64_t deadline = 0;
	int ret;

	if (timeout_s) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		deadline = (uint64_t)ts.tv_sec * 1000000000ull +
			   (uint64_t)ts.tv_nsec +
			   (uint64_t)timeout_s * 1000000000ull;
	}
	/* No ring (none registered, or off): no flush to make. */
	if (!machine.vm.coal_ring)
		ticks[1].period_ms = 0;
	do {
		/* PUT /metrics may come after boot (with --config-file). */
		ticks[0].period_ms = metrics_fd >= 0 ? METRICS_PERIOD_MS : 0;
		ret = control_wait(control, machine.vm.exit_fd, deadline,
				   ticks, 2);
	} while (ret == 2);
	if (!ret)
		vm_request_exit(&machine.vm, VM_EXIT_TIMEOUT,
				"--timeout expired");
	return atomic_load(&machine.vm.exit_status);
}

static void fail_startup(const char *err)
{
	fprintf(stderr, "microvm: %s\n", err);
	control_close(control);
	if (metrics_fd >= 0)
		close(metrics_fd);
	cli_free(&cfg);
}

/* --restore DIR: DIR/state and DIR/memory, resumed at once. */
static int restore_cli(char *err, size_t errlen)
{
	struct fc_snapshot_load p = { .resume_vm = true };
	char *state = NULL, *mem = NULL;
	unsigned int i;
	int ret = -ENOMEM;

	for (i = 0; i < cfg.nr_restore_drives; i++) {
		ret = fc_parse_drive_override_arg(cfg.restore_drives[i],
						  &p.drive_overrides[i], err,
						  errlen);
		if (ret) {
			fc_snapshot_load_free(&p);
			return ret;
		}
		p.nr_drive_overrides = i + 1;
	}
	ret = -ENOMEM;
	if (asprintf(&state, "%s/state", cfg.restore) < 0)
		state = NULL;
	if (asprintf(&mem, "%s/memory", cfg.restore) < 0)
		mem = NULL;
	if (state && mem) {
		p.snapshot_path = state;
		p.mem_path = mem;
		ret = restore(&p, err, errlen);
	} else {
		snprintf(err, errlen, "out of memory");
	}
	p.snapshot_path = p.mem_path = NULL;
	free(state);
	free(mem);
	fc_snapshot_load_free(&p);
	return ret;
}

/*
 * The metadata store: always there for PUT /mmds; --metadata fills it.
 * Its limit: --mmds-size-limit, else the API's payload limit.
 */
static int mmds_open(char *err, size_t errlen)
{
	struct mmds_config mc = {
		.limit = cfg.mmds_size_limit ? cfg.mmds_size_limit :
			 cfg.api_max_payload ? cfg.api_max_payload :
					       MMDS_DEFAULT_LIMIT,
	};

	if (mmds_create(&machine.mmds, &mc)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	api_ctx.mmds = machine.mmds;
	return cfg.metadata ? mmds_load_file(machine.mmds, cfg.metadata, err,
					     errlen) : 0;
}

/* The API socket, before the filters (its fd goes into the control
 * thread's), and the start of its thread once they exist. */
static int api_open(char *err, size_t errlen)
{
	int ret;

	if (!cfg.api_sock || cfg.no_api)
		return 0;
	ret = control_open(&control, cfg.api_sock, &api_ctx, err, errlen);
	if (ret)
		return ret;
	if (cfg.api_max_payload)
		control_set_max_body(control, cfg.api_max_payload);
	confine_control_listen_fd(control_listen_fd(control));
	confine_policy_api(true); /* main's filter takes drive swaps */
	/* PUT /vsock and /network-interfaces may come: the threads that
	 * start their workers pass their filter on to them. */
	confine_policy_vsock(true);
	confine_policy_net(true);
	return 0;
}

int main(int argc, char **argv)
{
	char err[ERR_LEN] = "";
	int status;

	clock_mark_start(); /* first: --stats and boot-time count from here */
	log_set_thread_name("main"); /* as Firecracker's logger names it */
	switch (cli_parse(argc, argv, &cfg, err, sizeof(err))) {
	case CLI_EXIT:
		return 0;
	case CLI_ERROR:
		fprintf(stderr, "microvm: %s\n", err);
		cli_free(&cfg);
		return VM_EXIT_STARTUP;
	case CLI_RUN:
		break;
	}
	log_set_level(cfg.verbose >= 2 ? LOG_DEBUG :
		      cfg.verbose ? LOG_INFO : LOG_WARN);
	if (cfg.rebase_base) {
		uint64_t copied;

		status = snap_rebase(cfg.rebase_base, cfg.rebase_diff, &copied,
				     err, sizeof(err));
		if (status)
			fprintf(stderr, "microvm: %s\n", err);
		else
			log_info("rebase: %llu KiB of %s written over %s",
				 (unsigned long long)(copied >> 10),
				 cfg.rebase_diff, cfg.rebase_base);
		cli_free(&cfg);
		return status ? VM_EXIT_STARTUP : 0;
	}
	machine_reset(&machine);
	if (mmds_open(err, sizeof(err))) {
		fail_startup(err);
		return VM_EXIT_STARTUP;
	}
	thread_stack_default(); /* before the first thread */
	preboot_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (preboot_fd < 0 || api_open(err, sizeof(err))) {
		fail_startup(err[0] ? err : "cannot create an eventfd");
		return VM_EXIT_STARTUP;
	}
	if (cfg.metrics_path && act_open_metrics(NULL, err, sizeof(err))) {
		fail_startup(err);
		return VM_EXIT_STARTUP;
	}
	if (act_set_logger(NULL, err, sizeof(err))) {
		fail_startup(err);
		return VM_EXIT_STARTUP;
	}
	if (cfg.vsock.set)
		confine_policy_vsock(true);
	if (cfg.nr_nets)
		confine_policy_net(true);
	/* Before any thread: every thread installs its filter itself. */
	if (confine_prepare(cfg.seccomp, err, sizeof(err))) {
		fail_startup(err);
		return VM_EXIT_STARTUP;
	}
	log_startup("seccomp filters prepared");
	/* The API waits for InstanceStart: signals end that wait too. */
	if (control)
		install_signals();
	if (control && control_start(control)) {
		fail_startup("cannot start the API thread");
		return VM_EXIT_STARTUP;
	}
	/* Ready for the caller: the API serves, or the boot starts. */
	metrics_note_startup(cfg.start_time_us, cfg.start_time_cpu_us,
			     cfg.parent_cpu_time_us);
	/*
	 * With the API and neither a config file nor a boot source on the
	 * command line, wait for InstanceStart; else boot at once (the API,
	 * if any, serving beside).
	 */
	if (cfg.restore) {
		if (restore_cli(err, sizeof(err))) {
			fail_startup(err);
			return VM_EXIT_STARTUP;
		}
	} else if (control && !cfg.config_file && !cfg.kernel) {
		status = serve_preboot();
		if (status) {
			control_close(control);
			cli_free(&cfg);
			return status;
		}
	} else {
		if (control || cfg.config_file)
			status = fc_finalize_config(&cfg, err, sizeof(err));
		else
			status = 0;
		if (status || machine_boot(&machine, err, sizeof(err))) {
			fail_startup(err);
			return VM_EXIT_STARTUP;
		}
	}
	status = serve_running(cfg.timeout);
	log_exit_time("seen by main");
	/*
	 * Said now, not after the console flush below, which may wait up to
	 * SERIAL_TX_FLUSH_MS for a stalled stdout: a CI runner sees the panic
	 * within a second of the guest's write whatever the console does.
	 */
	if (status == VM_EXIT_GUEST_PANIC && machine.vm.exit_reason &&
	    !strcmp(machine.vm.exit_reason, VM_EXIT_REASON_PANIC))
		fprintf(stderr, "microvm: %s\n", VM_EXIT_REASON_PANIC);
	if (vm_stop_vcpus(&machine.vm)) {
		/*
		 * A vCPU stuck in the kernel owns its vCPU and may still touch
		 * guest RAM: end the process as it is (flushed guest data is
		 * already on disk) rather than free what the thread uses.
		 */
		arch_machine_console_flush(&machine);
		console_restore();
		fprintf(stderr, "microvm: vCPUs did not stop; exiting without "
				"teardown (status %d)\n", status);
		fflush(NULL);
		_exit(status);
	}
	atomic_store(&machine.state, MACHINE_STOPPED);
	control_close(control); /* answers what waits, removes the socket */
	control = NULL;
	arch_machine_console_flush(&machine); /* bounded: stdout may stall */
	console_restore();
	/*
	 * Where each vCPU stood: always after --timeout (a hung guest's
	 * only trace) or a triple fault (the other vCPUs show what the
	 * guest was doing; on AMD the faulting one is already back at its
	 * reset state), with --verbose after an internal error too.
	 */
	if (status == VM_EXIT_TIMEOUT || status == VM_EXIT_GUEST_CRASH ||
	    (cfg.verbose && status >= VM_EXIT_GUEST_CRASH))
		vm_dump_vcpus(&machine.vm);
	log_info("guest ended: %s, exit status %d",
		 machine.vm.exit_reason ? machine.vm.exit_reason : "?",
		 status);
	if (status == VM_EXIT_TIMEOUT)
		fprintf(stderr, "microvm: --timeout %u expired\n", cfg.timeout);
	else if (status == VM_EXIT_GUEST_CRASH)
		fprintf(stderr, "microvm: guest crashed (%s)\n",
			machine.vm.exit_reason);
	stats_close();
	if (cfg.stats)
		machine_print_stats(&machine, STDERR_FILENO);
	if (metrics_fd >= 0)
		(void)metrics_write(&machine, metrics_fd);
	machine_undo(&machine, NR_STEPS);
	metrics_exit(&machine);
	mmds_destroy(machine.mmds);
	log_exit_time("teardown done");
	cli_free(&cfg);
	return status;
}
