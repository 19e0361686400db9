// SPDX-License-Identifier: Apache-2.0
/*
 * The x86_64 machine's platform devices and boot: COM1 on IRQ 4, the
 * i8042 reset line, the guest exit port and MMIO register, the boot-time
 * mark port and MMIO register, the pvpanic port, the ACPI power ports,
 * the VM generation ID; then ACPI tables at LAYOUT_ACPI_ADDR, the MP
 * table at LAYOUT_MPTABLE_ADDR (for acpi=off), the final command line,
 * the kernel and the boot vCPU's entry state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acpi.h"
#include "boot.h"
#include "cmdline.h"
#include "cpu.h"
#include "devices/boottime.h"
#include "devices/exitdev.h"
#include "devices/i8042.h"
#include "devices/pci.h"
#include "devices/pvpanic.h"
#include "devices/serial.h"
#include "devices/vmgenid.h"
#include "layout.h"
#include "mptable.h"
#include "platform.h"
#include "util/clock.h"
#include "util/log.h"
#include "vmm/console.h"
#include "vmm/machine.h"

struct arch_machine {
	struct serial com1;
	bool com1_ready;
	bool console_closed; /* arch_machine_console_flush() ran */
	struct i8042 kbd;
	struct exitdev exitdev;
	struct boottime boottime;
	bool boottime_ready;
	struct pvpanic pvpanic;
	struct pci_bus pci;
	bool pci_ready;
};

static void machine_reset(void *opaque)
{
	vm_request_exit(opaque, VM_EXIT_OK, "i8042 reset");
}

static void machine_guest_exit(void *opaque, int status)
{
	vm_request_exit(opaque, status, "guest exit register");
}

static void machine_guest_panicked(void *opaque)
{
	vm_request_exit(opaque, VM_EXIT_GUEST_PANIC, VM_EXIT_REASON_PANIC);
}

static uint64_t machine_boot_clock(void *opaque)
{
	(void)opaque;
	return clock_since_start_ns();
}

/* The UART and the keyboard controller in a snapshot. */
MACHINE_DEV_STATE_OPS(com1_ops, struct serial, serial_save, serial_load,
		      "COM1");
MACHINE_DEV_STATE_OPS(kbd_ops, struct i8042, i8042_save, i8042_load,
		      "i8042");

/*
 * The VM generation ID: 16 random bytes at LAYOUT_VMGENID_ADDR, new at
 * boot and at every restore, so that clones of one snapshot differ and
 * each restored guest reseeds its random number generator, which the
 * generic event device's interrupt tells it to do. That interrupt takes
 * the pin of the first virtio-mmio slot no device has, so the machine
 * built from a snapshot's configuration finds the same one; with every
 * slot taken there is neither device. false: none.
 */
static bool vmgenid_gsi(const struct machine *m, uint32_t *gsi)
{
	uint64_t base;

	return !arch_mmio_slot(m->nr_mmio_devs, &base, gsi);
}

/* The ID's bytes in low RAM (the ACPI table names them). */
static int vmgenid_id(struct machine *m, uint8_t **id, char *err,
		      size_t errlen)
{
	*id = guest_mem_ptr(&m->vm.mem, LAYOUT_VMGENID_ADDR, VMGENID_SIZE);
	if (*id)
		return 0;
	snprintf(err, errlen, "VM generation ID: no guest RAM at 0x%llx",
		 (unsigned long long)LAYOUT_VMGENID_ADDR);
	return -EFAULT;
}

/* A new random ID into guest RAM; the message in @err on failure. */
static int vmgenid_write(struct machine *m, char *err, size_t errlen)
{
	uint8_t *id;
	int ret;

	ret = vmgenid_id(m, &id, err, errlen);
	if (!ret)
		ret = vmgenid_new_id(id, err, errlen);
	if (!ret)
		guest_mem_mark_dirty(&m->vm.mem, LAYOUT_VMGENID_ADDR,
				     VMGENID_SIZE);
	return ret;
}

/* In a snapshot: whether the device is there, and its interrupt. */
static int vmgenid_state_save(void *opaque, struct snap_writer *w,
			      char *err, size_t errlen)
{
	uint32_t gsi = 0;
	bool on = vmgenid_gsi(opaque, &gsi);

	(void)err;
	(void)errlen;
	vmgenid_save(w, on, gsi);
	return 0;
}

/*
 * A restored guest gets a new ID and the event that makes it read it;
 * the interrupt stays pending in the restored irqchip until the guest
 * runs.
 */
static int vmgenid_state_load(void *opaque, struct snap_reader *r,
			      char *err, size_t errlen)
{
	struct machine *m = opaque;
	uint32_t gsi = 0;
	bool on = vmgenid_gsi(m, &gsi);
	uint8_t *id = NULL;
	int ret;

	ret = on ? vmgenid_id(m, &id, err, errlen) : 0;
	if (!ret)
		ret = vmgenid_load(r, on, gsi, "GSI", id, vm_irq_line, &m->vm,
				   err, errlen);
	if (!ret && on)
		guest_mem_mark_dirty(&m->vm.mem, LAYOUT_VMGENID_ADDR,
				     VMGENID_SIZE);
	return ret;
}

static const struct machine_dev_ops vmgenid_ops = {
	.save = vmgenid_state_save,
	.load = vmgenid_state_load,
};

/*
 * The PCI host bridge is always there: Linux wants a config space access
 * method even on a machine whose devices are all virtio-mmio.
 */
static int machine_pci_init(struct machine *m, struct arch_machine *a)
{
	struct vm *vm = &m->vm;
	int ret;

	ret = pci_bus_init(&a->pci, PCI_MMIO32_BASE, PCI_MMIO32_SIZE);
	if (ret)
		return ret;
	a->pci_ready = true;
	ret = bus_register(&vm->pio, PORT_PCI_CONFIG_ADDR, PCI_CFG_IO_LEN,
			   pci_cfg_io_access, &a->pci);
	if (!ret)
		ret = bus_register(&vm->mmio, PCI_ECAM_BASE, PCI_ECAM_SIZE,
				   pci_ecam_access, &a->pci);
	if (!ret)
		ret = bus_register(&vm->mmio, PCI_MMIO32_BASE, PCI_MMIO32_SIZE,
				   pci_mmio_access, &a->pci);
	if (!ret)
		ret = machine_set_pci(m, &a->pci);
	return ret;
}

int arch_machine_devices(struct machine *m, char *err, size_t errlen)
{
	struct arch_machine *a;
	struct vm *vm = &m->vm;
	const char *what, *coalesce;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->arch = a;
	what = "COM1";
	ret = serial_init(&a->com1, m->console_fd, vm_irq_line, vm, IRQ_COM1);
	if (ret)
		goto fail;
	a->com1_ready = true;
	ret = bus_register(&vm->pio, PORT_COM1, 8, serial_access, &a->com1);
	if (!ret)
		ret = machine_add_dev(m, "com1", &com1_ops, &a->com1);
	if (ret)
		goto fail;
	/*
	 * The transmit register's writes queue in KVM's ring instead of
	 * exiting: a console line costs an exit per LSR poll, not two per
	 * byte. Its effects (the byte out, THR empty again) may come late;
	 * every other UART access is an exit, which replays the queue first.
	 * Where KVM cannot, the writes keep exiting. Not by default on a
	 * KVM nested under QEMU's TCG: every L1 there that stopped
	 * answering on 2026-12-06 had run such a guest (tests/e2e/README.md);
	 * MICROVM_COALESCED_PIO=on|off decides instead.
	 */
	coalesce = getenv("MICROVM_COALESCED_PIO");
	if (coalesce && strcmp(coalesce, "on") && strcmp(coalesce, "off")) {
		snprintf(err, errlen, "MICROVM_COALESCED_PIO=%s: want on or "
			 "off", coalesce);
		return -EINVAL;
	}
	if (coalesce ? !strcmp(coalesce, "off") : x86_host_is_tcg())
		log_debug("COM1: coalesced port I/O off (%s)",
			  coalesce ? "MICROVM_COALESCED_PIO" :
				     "the host CPU is QEMU TCG");
	else if (vm_coalesce_pio(vm, PORT_COM1, 1))
		log_debug("COM1: coalesced port I/O unavailable; each "
			  "transmitted byte exits");
	what = "i8042";
	i8042_init(&a->kbd, machine_reset, vm, vm_irq_line, vm, IRQ_I8042_KBD);
	ret = bus_register(&vm->pio, PORT_I8042_DATA, 1, i8042_data_access,
			   &a->kbd);
	if (!ret)
		ret = bus_register(&vm->pio, PORT_I8042_CMD, 1,
				   i8042_cmd_access, &a->kbd);
	if (!ret)
		ret = machine_add_dev(m, "i8042", &kbd_ops, &a->kbd);
	if (ret)
		goto fail;
	what = "exit port";
	exitdev_init(&a->exitdev, machine_guest_exit, vm);
	ret = bus_register(&vm->pio, PORT_EXIT, EXITDEV_PIO_LEN, exitdev_access,
			   &a->exitdev);
	if (!ret)
		ret = bus_register(&vm->mmio, EXIT_MMIO_ADDR, EXITDEV_MMIO_LEN,
				   exitdev_access,
				   &a->exitdev);
	if (ret)
		goto fail;
	what = "boot-time port";
	ret = boottime_init(&a->boottime, machine_boot_clock, NULL, NULL,
			    NULL);
	if (ret)
		goto fail;
	a->boottime_ready = true;
	ret = bus_register(&vm->pio, PORT_BOOT_TIME, BOOT_TIME_PIO_LEN,
			   boottime_access, &a->boottime);
	if (!ret)
		ret = bus_register(&vm->mmio, BOOT_TIME_MMIO_ADDR,
				   BOOT_TIME_MMIO_LEN, boottime_access,
				   &a->boottime);
	if (ret)
		goto fail;
	what = "pvpanic port";
	pvpanic_init(&a->pvpanic, machine_guest_panicked, vm);
	ret = bus_register(&vm->pio, PORT_PVPANIC, PVPANIC_PIO_LEN,
			   pvpanic_access, &a->pvpanic);
	if (ret)
		goto fail;
	what = "ACPI PM ports";
	ret = x86_platform_register_pm(vm);
	if (ret)
		goto fail;
	what = "PCI host bridge";
	ret = machine_pci_init(m, a);
	if (ret)
		goto fail;
	what = "VM generation ID";
	ret = machine_add_dev(m, "vmgenid", &vmgenid_ops, m);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

static int machine_acpi(struct machine *m, char *err, size_t errlen)
{
	struct acpi_mmio_dev mmio[MACHINE_MAX_MMIO_DEVS];
	struct acpi_config ac = {
		.ncpus = m->vm.ncpus,
		.mmio = mmio,
		.pvpanic_port = PORT_PVPANIC,
		.pci = {
			.present = true,
			.ecam_base = PCI_ECAM_BASE,
			.bus_start = 0,
			.bus_end = 0,
			.mmio32_base = PCI_MMIO32_BASE,
			.mmio32_size = PCI_MMIO32_SIZE,
		},
	};
	uint8_t *buf;
	unsigned int i;
	int ret;

	for (i = 0; i < m->nr_mmio_devs; i++) {
		mmio[i].base = m->mmio_devs[i].base;
		mmio[i].size = m->mmio_devs[i].size;
		mmio[i].gsi = m->mmio_devs[i].gsi;
	}
	ac.nr_mmio = m->nr_mmio_devs;
	if (vmgenid_gsi(m, &ac.ged_gsi)) {
		ret = vmgenid_write(m, err, errlen);
		if (ret)
			return ret;
		ac.vmgenid_gpa = LAYOUT_VMGENID_ADDR;
	}
	buf = guest_mem_ptr(&m->vm.mem, LAYOUT_ACPI_ADDR, LAYOUT_ACPI_SIZE);
	if (!buf) {
		snprintf(err, errlen, "no guest RAM for ACPI tables");
		return -ENOMEM;
	}
	ret = acpi_build(&ac, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_ADDR);
	if (ret < 0) {
		snprintf(err, errlen, "building ACPI tables: %s",
			 strerror(-ret));
		return ret;
	}
	return 0;
}

_Static_assert(LAYOUT_ACPI_ADDR + LAYOUT_ACPI_SIZE <= LAYOUT_MPTABLE_ADDR &&
	       LAYOUT_MPTABLE_ADDR + LAYOUT_MPTABLE_SIZE <= LAYOUT_RESET_VECTOR,
	       "the MP table lies between the ACPI tables and the reset stub");
_Static_assert(MPTABLE_LEN(MPTABLE_MAX_CPUS) <= LAYOUT_MPTABLE_SIZE,
	       "the MP table fits for the most vCPUs");

/*
 * The MP table, always written: Linux prefers the MADT while ACPI is on
 * and reads this one with acpi=off.
 */
static int machine_mptable(struct machine *m, char *err, size_t errlen)
{
	uint8_t *buf;
	int ret;

	buf = guest_mem_ptr(&m->vm.mem, LAYOUT_MPTABLE_ADDR,
			    LAYOUT_MPTABLE_SIZE);
	if (!buf) {
		snprintf(err, errlen, "no guest RAM for the MP table");
		return -ENOMEM;
	}
	ret = mptable_build(m->vm.ncpus, buf, LAYOUT_MPTABLE_SIZE,
			    LAYOUT_MPTABLE_ADDR);
	if (ret < 0) {
		snprintf(err, errlen, "building the MP table for %u vCPUs: %s",
			 m->vm.ncpus, strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * The command line the guest gets: the configured one (--cmdline, the
 * API's or the config file's boot_args), plus the virtio-mmio devices
 * when it says acpi=off. *@out is malloc'd.
 */
static int machine_cmdline(struct machine *m, char **out, char *err,
			   size_t errlen)
{
	struct cmdline_mmio devs[MACHINE_MAX_MMIO_DEVS];
	unsigned int i;
	char *line;
	int ret;

	for (i = 0; i < m->nr_mmio_devs; i++) {
		devs[i].base = m->mmio_devs[i].base;
		devs[i].size = m->mmio_devs[i].size;
		devs[i].gsi = m->mmio_devs[i].gsi;
	}
	line = malloc(LAYOUT_CMDLINE_MAX);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = cmdline_add_mmio(m->cfg->cmdline, devs, m->nr_mmio_devs, line,
			       LAYOUT_CMDLINE_MAX);
	if (ret < 0) {
		snprintf(err, errlen,
			 "the kernel command line with acpi=off and its %u virtio-mmio devices (virtio_mmio.device=) is longer than the %llu bytes it may have",
			 m->nr_mmio_devs,
			 (unsigned long long)LAYOUT_CMDLINE_MAX - 1);
		free(line);
		return ret;
	}
	*out = line;
	return 0;
}

int arch_machine_boot(struct machine *m, char *err, size_t errlen)
{
	const struct vm_config *cfg = m->cfg;
	struct x86_boot_cfg bc = {
		.kernel = m->kernel,
		.kernel_len = m->kernel_len,
		.kernel_path = cfg->kernel,
		.initrd = m->initrd,
		.initrd_len = m->initrd_len,
		.initrd_path = cfg->initrd,
		.ram_size = m->vm.ram_size,
		.rsdp_gpa = LAYOUT_ACPI_ADDR,
	};
	struct x86_boot_state st;
	char *cmdline = NULL;
	int ret;

	ret = machine_acpi(m, err, errlen);
	if (!ret)
		ret = machine_mptable(m, err, errlen);
	if (ret)
		return ret;
	ret = x86_platform_write_reset_stub(&m->vm.mem);
	if (ret) {
		snprintf(err, errlen, "no guest RAM at the reset vector");
		return ret;
	}
	ret = machine_cmdline(m, &cmdline, err, errlen);
	if (ret)
		return ret;
	bc.cmdline = cmdline;
	memset(&st, 0, sizeof(st));
	ret = x86_boot_load(&m->vm.mem, &bc, &st, err, errlen);
	free(cmdline);
	if (ret)
		return ret;
	return x86_cpu_set_boot_state(&m->vm.vcpus[0], &st, err, errlen);
}

static size_t machine_console_input(void *opaque, const uint8_t *buf,
				    size_t n)
{
	struct arch_machine *a = opaque;

	return serial_input(&a->com1, buf, n);
}

int arch_machine_console_start(struct machine *m)
{
	return console_start(machine_console_input, m->arch);
}

void arch_machine_console_flush(struct machine *m)
{
	if (!m->arch || !m->arch->com1_ready || m->arch->console_closed)
		return;
	m->arch->console_closed = true;
	machine_console_close(m, &m->arch->com1.h, SERIAL_TX_FLUSH_MS);
}

int arch_machine_ctrl_alt_del(struct machine *m)
{
	if (!m->arch)
		return -ENODEV;
	i8042_ctrl_alt_del(&m->arch->kbd);
	return 0;
}

void arch_machine_print_stats(struct machine *m, int fd)
{
	if (!m->arch)
		return;
	if (m->arch->boottime_ready)
		boottime_print_stats(&m->arch->boottime, fd);
	if (m->arch->com1_ready)
		machine_console_print_stats(&m->arch->com1.h, fd);
}

void arch_machine_free(struct machine *m)
{
	if (!m->arch)
		return;
	if (m->arch->com1_ready) {
		arch_machine_console_flush(m);
		serial_destroy(&m->arch->com1);
	}
	if (m->arch->pci_ready)
		pci_bus_destroy(&m->arch->pci);
	i8042_destroy(&m->arch->kbd);
	if (m->arch->boottime_ready)
		boottime_destroy(&m->arch->boottime);
	m->pci = NULL;
	free(m->arch);
	m->arch = NULL;
}

int arch_machine_restore(struct machine *m, char *err, size_t errlen)
{
	(void)m;
	(void)err;
	(void)errlen;
	return 0; /* every device exists from arch_machine_devices() on */
}
