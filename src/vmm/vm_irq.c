// SPDX-License-Identifier: Apache-2.0
/*
 * Interrupt plumbing for devices: ioeventfds (guest writes that signal an
 * eventfd inside KVM), irqfds (eventfd writes that raise a GSI inside
 * KVM), and the GSI routing table with its MSI routes. KVM replaces the
 * whole table on every KVM_SET_GSI_ROUTING, so the VM keeps a copy: the
 * architecture's base routes followed by one MSI route per allocated GSI.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/log.h"
#include "virtio/host.h"
#include "vmm/arch.h"
#include "vmm/vm.h"

static int vm_commit_routes_locked(struct vm *vm)
{
	struct kvm_irq_routing *r;
	size_t sz = sizeof(*r) + vm->nr_routes * sizeof(r->entries[0]);
	int ret = 0;

	r = calloc(1, sz);
	if (!r)
		return -ENOMEM;
	r->nr = vm->nr_routes;
	memcpy(r->entries, vm->routes,
	       vm->nr_routes * sizeof(r->entries[0]));
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, r) < 0)
		ret = -errno;
	free(r);
	return ret;
}

int vm_irq_routing_init(struct vm *vm, char *err, size_t errlen)
{
	int n, ret;

	pthread_mutex_init(&vm->irq_lock, NULL);
	vm->routes = calloc(VM_MAX_ROUTES,
			    sizeof(struct kvm_irq_routing_entry));
	if (!vm->routes) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = arch_irq_routes(vm->routes, VM_MAX_ROUTES, &vm->next_gsi);
	vm->nr_routes = n;
	ret = vm_commit_routes_locked(vm);
	if (ret)
		snprintf(err, errlen, "KVM_SET_GSI_ROUTING: %s",
			 strerror(-ret));
	return ret;
}

static int vm_ioeventfd(void *opaque, uint64_t addr, unsigned int len,
			bool pio, bool match, uint64_t data, int fd,
			bool assign)
{
	struct vm *vm = opaque;
	struct kvm_ioeventfd io = {
		.datamatch = data,
		.addr = addr,
		.len = len,
		.fd = fd,
	};

	if (pio)
		io.flags |= KVM_IOEVENTFD_FLAG_PIO;
	if (match)
		io.flags |= KVM_IOEVENTFD_FLAG_DATAMATCH;
	if (!assign)
		io.flags |= KVM_IOEVENTFD_FLAG_DEASSIGN;
	if (ioctl(vm->vm_fd, KVM_IOEVENTFD, &io) < 0)
		return -errno;
	return 0;
}

static int vm_irqfd(void *opaque, int fd, uint32_t gsi, bool assign)
{
	struct vm *vm = opaque;
	struct kvm_irqfd irqfd = {
		.fd = (uint32_t)fd,
		.gsi = gsi,
		.flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
	};

	if (ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) < 0)
		return -errno;
	return 0;
}

static int vm_gsi_alloc(void *opaque)
{
	struct vm *vm = opaque;
	struct kvm_irq_routing_entry *e;
	int gsi;

	pthread_mutex_lock(&vm->irq_lock);
	if (vm->nr_routes >= VM_MAX_ROUTES) {
		pthread_mutex_unlock(&vm->irq_lock);
		return -ENOSPC;
	}
	gsi = (int)vm->next_gsi++;
	/* Until the driver programs it, the route is an MSI that hits nobody. */
	e = (struct kvm_irq_routing_entry *)vm->routes + vm->nr_routes++;
	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = KVM_IRQ_ROUTING_MSI;
	/* An ITS refuses an MSI route without a device ID, even unused. */
	arch_msi_route(e, 0, 0, 0);
	pthread_mutex_unlock(&vm->irq_lock);
	return gsi;
}

static int vm_msi_route(void *opaque, uint32_t gsi, uint64_t addr,
			uint32_t data, uint32_t devid)
{
	struct vm *vm = opaque;
	struct kvm_irq_routing_entry *e = vm->routes, want;
	unsigned int i;
	int ret = -ENOENT;

	pthread_mutex_lock(&vm->irq_lock);
	for (i = 0; i < vm->nr_routes; i++) {
		if (e[i].gsi != gsi || e[i].type != KVM_IRQ_ROUTING_MSI)
			continue;
		want = e[i];
		arch_msi_route(&want, addr, data, devid);
		if (!memcmp(&want, &e[i], sizeof(want))) {
			ret = 0;
			break;
		}
		e[i] = want;
		ret = vm_commit_routes_locked(vm);
		break;
	}
	pthread_mutex_unlock(&vm->irq_lock);
	if (ret)
		log_warn("MSI route for GSI %u: %s", gsi, strerror(-ret));
	return ret;
}

const struct virtio_host_ops vm_virtio_host_ops = {
	.ioeventfd = vm_ioeventfd,
	.irqfd = vm_irqfd,
	.gsi_alloc = vm_gsi_alloc,
	.msi_route = vm_msi_route,
};
