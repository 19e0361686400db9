// SPDX-License-Identifier: Apache-2.0
/*
 * The arm64 machine's platform devices and boot: the PL011 console, the
 * PL031 wall clock, the guest exit and boot-time registers and the ECAM
 * PCI host, all on the MMIO bus at the addresses of layout.h; with the
 * API, a virtio-mmio keyboard after the disks (SendCtrlAltDel); then the
 * kernel and initrd
 * (boot_image.c), a device tree of what the machine has (dtb.c) in the
 * block the loader set aside, and vCPU 0's entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot_image.h"
#include "cpu.h"
#include "devices/boottime.h"
#include "devices/exitdev.h"
#include "devices/pci.h"
#include "devices/pl011.h"
#include "devices/pl031.h"
#include "devices/vmgenid.h"
#include "dtb.h"
#include "layout.h"
#include "util/clock.h"
#include "util/log.h"
#include "vgic.h"
#include "virtio/input.h"
#include "virtio/mmio.h"
#include "vmm/arch.h"
#include "vmm/console.h"
#include "vmm/machine.h"

struct arch_machine {
	struct pl011 uart;
	bool uart_ready;
	bool console_closed; /* arch_machine_console_flush() ran */
	struct exitdev exitdev;
	struct boottime boottime;
	bool boottime_ready;
	struct pci_bus pci;
	bool pci_ready;
	/*
	 * The wall clock, without its alarm: that needs a thread watching
	 * the alarm's timerfd, which the machine does not have yet. The
	 * device tree leaves the RTC's interrupt out, so the guest offers
	 * no alarm.
	 */
	struct pl031 rtc;
	bool rtc_ready;
	/*
	 * The keyboard SendCtrlAltDel presses (the guest's VT keyboard
	 * handler makes Ctrl-Alt-Del its ctrl_alt_del(), as the i8042's on
	 * x86): only where an API can ask for it.
	 */
	struct virtio_input kbd;
	struct virtio_mmio kbd_mmio;
	bool kbd_ready;
	/* The VM generation ID's bytes, in the VM's device page. */
	uint8_t *genid;
};

static void machine_guest_exit(void *opaque, int status)
{
	vm_request_exit(opaque, status, "guest exit register");
}

static uint64_t machine_boot_clock(void *opaque)
{
	(void)opaque;
	return clock_since_start_ns();
}

/* The generic ECAM host: config space and the 32-bit BAR window. */
static int machine_pci_init(struct machine *m, struct arch_machine *a)
{
	struct vm *vm = &m->vm;
	int ret;

	ret = pci_bus_init(&a->pci, ARM64_PCI_MMIO32_BASE,
			   ARM64_PCI_MMIO32_SIZE);
	if (ret)
		return ret;
	a->pci_ready = true;
	ret = bus_register(&vm->mmio, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE,
			   pci_ecam_access, &a->pci);
	if (!ret)
		ret = bus_register(&vm->mmio, ARM64_PCI_MMIO32_BASE,
				   ARM64_PCI_MMIO32_SIZE, pci_mmio_access,
				   &a->pci);
	if (!ret)
		ret = machine_set_pci(m, &a->pci);
	return ret;
}

/* The UART and the wall clock in a snapshot. */
MACHINE_DEV_STATE_OPS(uart_ops, struct pl011, pl011_save, pl011_load,
		      "PL011");
MACHINE_DEV_STATE_OPS(rtc_ops, struct pl031, pl031_save, pl031_load,
		      "PL031");

/*
 * The VM generation ID in a snapshot: always there, on its own SPI. A
 * restore gives the guest a new ID and the edge that makes it read it,
 * pending in the restored vGIC until a vCPU runs.
 */
static int vmgenid_state_save(void *opaque, struct snap_writer *w,
			      char *err, size_t errlen)
{
	(void)opaque;
	(void)err;
	(void)errlen;
	vmgenid_save(w, true, ARM64_SPI_VMGENID);
	return 0;
}

static int vmgenid_state_load(void *opaque, struct snap_reader *r,
			      char *err, size_t errlen)
{
	struct machine *m = opaque;

	return vmgenid_load(r, true, ARM64_SPI_VMGENID, "SPI", m->arch->genid,
			    vm_irq_line, &m->vm, err, errlen);
}

static const struct machine_dev_ops vmgenid_ops = {
	.save = vmgenid_state_save,
	.load = vmgenid_state_load,
};

/* Its page, a first ID (a restore's load makes another) and its state. */
static int machine_vmgenid_init(struct machine *m, struct arch_machine *a,
				char *err, size_t errlen)
{
	int ret;

	a->genid = vm_add_device_page(&m->vm, ARM64_VMGENID_ADDR, err,
				      errlen);
	if (!a->genid)
		return -ENOMEM;
	ret = vmgenid_new_id(a->genid, err, errlen);
	if (ret)
		return ret;
	ret = machine_add_dev(m, "vmgenid", &vmgenid_ops, m);
	if (ret)
		snprintf(err, errlen, "VM generation ID: %s", strerror(-ret));
	return ret;
}

int arch_machine_devices(struct machine *m, char *err, size_t errlen)
{
	struct arch_machine *a;
	struct vm *vm = &m->vm;
	const char *what;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->arch = a;
	what = "PL011";
	ret = pl011_init(&a->uart, m->console_fd, vm_irq_line, vm,
			 ARM64_SPI_PL011);
	if (ret)
		goto fail;
	a->uart_ready = true;
	ret = bus_register(&vm->mmio, ARM64_PL011_BASE, ARM64_PL011_SIZE,
			   pl011_access, &a->uart);
	if (!ret)
		ret = machine_add_dev(m, "pl011", &uart_ops, &a->uart);
	if (ret)
		goto fail;
	what = "PL031";
	ret = pl031_init(&a->rtc, vm_irq_line, vm, ARM64_SPI_PL031, false);
	if (ret)
		goto fail;
	a->rtc_ready = true;
	ret = bus_register(&vm->mmio, ARM64_PL031_BASE, ARM64_PL031_SIZE,
			   pl031_access, &a->rtc);
	if (!ret)
		ret = machine_add_dev(m, "pl031", &rtc_ops, &a->rtc);
	if (ret)
		goto fail;
	what = "exit register";
	exitdev_init(&a->exitdev, machine_guest_exit, vm);
	ret = bus_register(&vm->mmio, ARM64_EXIT_MMIO_ADDR, EXITDEV_MMIO_LEN,
			   exitdev_access, &a->exitdev);
	if (ret)
		goto fail;
	what = "boot-time register";
	ret = boottime_init(&a->boottime, machine_boot_clock, NULL, NULL,
			    NULL);
	if (ret)
		goto fail;
	a->boottime_ready = true;
	ret = bus_register(&vm->mmio, ARM64_BOOT_TIME_MMIO_ADDR,
			   BOOT_TIME_MMIO_LEN, boottime_access, &a->boottime);
	if (ret)
		goto fail;
	what = "PCI host bridge";
	ret = machine_pci_init(m, a);
	if (ret)
		goto fail;
	return machine_vmgenid_init(m, a, err, errlen);
fail:
	snprintf(err, errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

/* The device tree for what the machine has now, at st->dtb_addr. */
static int machine_dtb(struct machine *m, const struct arm64_boot_state *st,
		       char *err, size_t errlen)
{
	struct dtb_dev mmio[MACHINE_MAX_MMIO_DEVS];
	struct arch_ram_range ram[DTB_MAX_RAM_RANGES];
	struct vm *vm = &m->vm;
	struct dtb_desc d;
	struct dtb_pci pci;
	uint64_t *mpidr;
	size_t len = 0;
	void *buf;
	unsigned int i;
	int n, ret;

	dtb_desc_init(&d);
	n = arch_ram_layout(vm->ram_size, ram, DTB_MAX_RAM_RANGES);
	for (i = 0; i < (unsigned int)n; i++)
		d.ram[i] = (struct dtb_range){ ram[i].gpa, ram[i].size };
	d.nr_ram = (unsigned int)n;
	mpidr = calloc(vm->ncpus, sizeof(*mpidr));
	buf = malloc(st->dtb_max);
	if (!mpidr || !buf) {
		snprintf(err, errlen, "out of memory for the device tree");
		ret = -ENOMEM;
		goto out;
	}
	ret = arm64_cpu_mpidrs(vm, mpidr, err, errlen);
	if (ret)
		goto out;
	d.mpidr = mpidr;
	d.nr_cpus = vm->ncpus;
	d.cmdline = m->cfg->cmdline;
	d.initrd_start = st->initrd_addr;
	d.initrd_size = st->initrd_size;
	for (i = 0; i < m->nr_mmio_devs; i++)
		mmio[i] = (struct dtb_dev){ m->mmio_devs[i].base,
					    m->mmio_devs[i].size,
					    m->mmio_devs[i].gsi };
	d.virtio_mmio = mmio;
	d.nr_virtio_mmio = m->nr_mmio_devs;
	if (m->arch->genid)
		d.vmgenid = (struct dtb_dev){ ARM64_VMGENID_ADDR, VMGENID_SIZE,
					      ARM64_SPI_VMGENID };
	if (!arm64_vgic_has_its(vm))
		d.its.size = 0;
	if (m->pci) {
		dtb_desc_init_pci(&pci);
		/*
		 * BARs live in the 32-bit window, the only one the PCI bus
		 * decodes (devices/pci.c); offered a 64-bit window, Linux
		 * moves 64-bit BARs there and the device goes silent.
		 */
		pci.mmio64.size = 0;
		d.pci = &pci;
	}
	ret = dtb_build(&d, buf, st->dtb_max, &len, err, errlen);
	if (!ret)
		ret = arm64_boot_put_dtb(&vm->mem, st, buf, len, err, errlen);
out:
	free(buf);
	free(mpidr);
	return ret;
}

/*
 * The keyboard on the virtio-mmio slot after the disks' (theirs do not
 * move), registered for pause and resume; torn down by
 * arch_machine_free().
 */
static int machine_kbd_attach(struct machine *m, struct arch_machine *a,
			      char *err, size_t errlen)
{
	struct virtio_host host = { &vm_virtio_host_ops, &m->vm };
	struct machine_mmio_dev *slot;
	const char *what;
	uint64_t base;
	uint32_t gsi;
	int ret;

	what = "no virtio-mmio slot left";
	ret = arch_mmio_slot(m->nr_mmio_devs, &base, &gsi);
	if (ret)
		goto fail;
	what = "virtio-input";
	ret = virtio_input_init(&a->kbd, &m->vm.mem, "kbd");
	if (ret)
		goto fail;
	what = "virtio-mmio setup";
	ret = virtio_mmio_init(&a->kbd_mmio, &a->kbd.vdev, &host, base, gsi);
	if (ret)
		goto err_input;
	what = "MMIO window";
	ret = bus_register(&m->vm.mmio, base, VIRTIO_MMIO_WINDOW,
			   virtio_mmio_access, &a->kbd_mmio);
	if (!ret)
		ret = machine_add_dev(m, "kbd", &machine_virtio_dev_ops,
				      &a->kbd.vdev);
	if (ret)
		goto err_mmio;
	slot = &m->mmio_devs[m->nr_mmio_devs++];
	*slot = (struct machine_mmio_dev){ base, VIRTIO_MMIO_WINDOW, gsi };
	a->kbd_ready = true;
	return 0;
err_mmio:
	virtio_mmio_destroy(&a->kbd_mmio);
err_input:
	virtio_input_destroy(&a->kbd);
fail:
	snprintf(err, errlen, "keyboard: %s: %s", what, strerror(-ret));
	return ret;
}

int arch_machine_boot(struct machine *m, char *err, size_t errlen)
{
	const struct vm_config *cfg = m->cfg;
	struct arch_ram_range ram[2];
	struct arm64_boot_state st;
	struct arm64_boot_cfg bc;
	int ret;

	if (arch_ram_layout(m->vm.ram_size, ram, 2) < 1) {
		snprintf(err, errlen, "no guest RAM for the kernel");
		return -ENOMEM;
	}
	bc = (struct arm64_boot_cfg){
		.kernel = m->kernel,
		.kernel_len = m->kernel_len,
		.kernel_path = cfg->kernel,
		.initrd = m->initrd,
		.initrd_len = m->initrd_len,
		.initrd_path = cfg->initrd,
		.ram_base = ram[0].gpa,
		.ram_size = ram[0].size,
		.memory = m->vm.ram_size,
	};
	if (cfg->api_sock && !cfg->no_api && !m->arch->kbd_ready) {
		ret = machine_kbd_attach(m, m->arch, err, errlen);
		if (ret)
			return ret;
	}
	memset(&st, 0, sizeof(st));
	ret = arm64_boot_load(&m->vm.mem, &bc, &st, err, errlen);
	if (ret)
		return ret;
	ret = machine_dtb(m, &st, err, errlen);
	if (ret)
		return ret;
	return arm64_cpu_set_boot_state(&m->vm.vcpus[0], st.entry,
					st.dtb_addr, err, errlen);
}

int arch_machine_restore(struct machine *m, char *err, size_t errlen)
{
	/*
	 * The keyboard after the disks, where the boot put it: snapshots
	 * are made through the API, whose machine has it, so a restore
	 * (with an API or with --restore) has it too.
	 */
	if (!m->arch->kbd_ready)
		return machine_kbd_attach(m, m->arch, err, errlen);
	return 0;
}

static size_t machine_console_input(void *opaque, const uint8_t *buf,
				    size_t n)
{
	struct arch_machine *a = opaque;

	return pl011_input(&a->uart, buf, n);
}

int arch_machine_console_start(struct machine *m)
{
	return console_start(machine_console_input, m->arch);
}

void arch_machine_console_flush(struct machine *m)
{
	if (!m->arch || !m->arch->uart_ready || m->arch->console_closed)
		return;
	m->arch->console_closed = true;
	machine_console_close(m, &m->arch->uart.h, PL011_TX_FLUSH_MS);
}

void arch_machine_print_stats(struct machine *m, int fd)
{
	if (!m->arch)
		return;
	if (m->arch->boottime_ready)
		boottime_print_stats(&m->arch->boottime, fd);
	if (m->arch->uart_ready)
		machine_console_print_stats(&m->arch->uart.h, fd);
	if (m->arch->kbd_ready) {
		struct virtio_input_stats ks;

		virtio_input_get_stats(&m->arch->kbd, &ks);
		dprintf(fd, "microvm: stats kbd: events-sent %llu dropped %llu "
			"status %llu bad-buffers %llu\n",
			(unsigned long long)ks.events_sent,
			(unsigned long long)ks.events_dropped,
			(unsigned long long)ks.status_msgs,
			(unsigned long long)ks.bad_bufs);
	}
}

void arch_machine_free(struct machine *m)
{
	if (!m->arch)
		return;
	if (m->arch->uart_ready) {
		arch_machine_console_flush(m);
		pl011_destroy(&m->arch->uart);
	}
	if (m->arch->pci_ready)
		pci_bus_destroy(&m->arch->pci);
	if (m->arch->boottime_ready)
		boottime_destroy(&m->arch->boottime);
	if (m->arch->rtc_ready)
		pl031_destroy(&m->arch->rtc);
	if (m->arch->kbd_ready) {
		virtio_mmio_destroy(&m->arch->kbd_mmio);
		virtio_input_destroy(&m->arch->kbd);
	}
	m->pci = NULL;
	free(m->arch);
	m->arch = NULL;
}

/* Ctrl-Alt-Del on the virtio-input keyboard (virtio_input.h). */
int arch_machine_ctrl_alt_del(struct machine *m)
{
	if (!m->arch || !m->arch->kbd_ready)
		return -ENOTSUP;
	return virtio_input_ctrl_alt_del(&m->arch->kbd);
}
