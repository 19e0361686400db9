// SPDX-License-Identifier: Apache-2.0
/*
 * MSI-X for the virtio-pci transport: a table of num_queues + 1 entries,
 * each bound to its own GSI and irqfd. Queue threads signal a vector's
 * irqfd, or set its PBA bit while the entry or the whole function is
 * masked; unmasking delivers what is pending. The route of a GSI follows
 * the entry's address/data whenever the entry is (or becomes) unmasked.
 *
 * A queue served outside the VMM (vhost, tops->direct_irq) writes the
 * vector's irqfd itself, so no VMM thread is in its completion path.
 * While the vector cannot be delivered (entry or function masked, MSI-X
 * off) its signaller is switched to a hold eventfd instead; a PBA read
 * turns what the hold fd counted into the pending bit, and unmasking
 * switches the signaller back first, then delivers what it held
 * (virtio 1.2 §4.1.5.1, PCI 3.0 MSI-X Pending Bits).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/snap.h"

#include "util/evloop.h"
#include "util/le.h"
#include "virtio/pci_priv.h"

#define PBA_LEN (8 * VIRTIO_PCI_PBA_WORDS)

uint16_t virtio_pci_vector_check(const struct virtio_pci *t, uint16_t v)
{
	return v < t->nr_vectors ? v : VIRTIO_MSI_NO_VECTOR;
}

static bool msix_pending_locked(struct virtio_pci *t, unsigned int v)
{
	return t->pba[v / 64] & (1ULL << (v % 64));
}

static bool msix_masked_locked(struct virtio_pci *t, unsigned int v)
{
	return t->msix_masked ||
	       (t->table[v].ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* Raise vector @v now, or remember it in the PBA while masked. */
static void msix_signal_locked(struct virtio_pci *t, unsigned int v)
{
	if (!t->msix_enabled || v >= t->nr_vectors)
		return;
	if (msix_masked_locked(t, v)) {
		t->pba[v / 64] |= 1ULL << (v % 64);
		return;
	}
	evfd_signal(t->irqfd[v]);
}

/* Deliver a pending vector @v that is no longer masked. */
static void msix_flush_locked(struct virtio_pci *t, unsigned int v)
{
	if (!t->msix_enabled || msix_masked_locked(t, v) ||
	    !msix_pending_locked(t, v))
		return;
	t->pba[v / 64] &= ~(1ULL << (v % 64));
	evfd_signal(t->irqfd[v]);
}

/* The eventfd @q's outside signaller is to write as things stand. */
static int msix_direct_target_locked(struct virtio_pci *t,
				     struct virtio_queue *q)
{
	uint16_t v = __atomic_load_n(&q->msix_vector, __ATOMIC_ACQUIRE);

	if (t->msix_enabled && v < t->nr_vectors && !msix_masked_locked(t, v))
		return t->irqfd[v];
	return t->hold_fd[q->index];
}

/* What @q's signaller wrote to its hold fd: delivered as notify() would. */
static void msix_hold_drain_locked(struct virtio_pci *t,
				   struct virtio_queue *q)
{
	if (t->hold_fd[q->index] < 0 || !evfd_drain(t->hold_fd[q->index]))
		return;
	if (t->msix_enabled)
		msix_signal_locked(t, __atomic_load_n(&q->msix_vector,
						      __ATOMIC_ACQUIRE));
	else
		atomic_fetch_or(&t->vdev->isr, VIRTIO_ISR_QUEUE);
}

/*
 * Re-point each directly signalled queue whose target changed. Leaving
 * the hold fd, the signaller is switched first and the hold fd drained
 * after, so nothing it wrote in between is lost.
 */
static void msix_direct_update_locked(struct virtio_pci *t)
{
	struct virtio_dev *vdev = t->vdev;
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++) {
		struct virtio_queue *q = &vdev->queues[i];
		int fd, old;

		if (!t->direct[i] || !vdev->ops->call_changed)
			continue;
		fd = msix_direct_target_locked(t, q);
		old = t->call_fd[i];
		if (fd == old)
			continue;
		vdev->ops->call_changed(vdev, q, fd);
		t->call_fd[i] = fd;
		if (old == t->hold_fd[i])
			msix_hold_drain_locked(t, q);
	}
}

/* Pending bits of held vectors, for a PBA read. */
static void msix_direct_pending_locked(struct virtio_pci *t)
{
	unsigned int i;

	for (i = 0; i < t->vdev->num_queues; i++)
		if (t->direct[i] && t->call_fd[i] == t->hold_fd[i])
			msix_hold_drain_locked(t, &t->vdev->queues[i]);
}

static void vpci_direct_irq(struct virtio_dev *vdev, struct virtio_queue *q,
			    bool on)
{
	struct virtio_pci *t = vdev->transport;
	unsigned int i = q->index;

	pthread_mutex_lock(&t->msix_lock);
	if (on) {
		if (t->hold_fd[i] < 0)
			t->hold_fd[i] = evfd_new();
		if (t->hold_fd[i] < 0) {
			log_ratelimited(&t->rl, LOG_WARN,
					"%s: queue %u: no hold eventfd: %s",
					vdev->name, i,
					strerror(-t->hold_fd[i]));
			t->hold_fd[i] = -1;
		}
		t->direct[i] = true;
		t->call_fd[i] = -2; /* none yet: the update below tells it */
		msix_direct_update_locked(t);
	} else if (t->direct[i]) {
		t->direct[i] = false;
		if (t->call_fd[i] == t->hold_fd[i])
			msix_hold_drain_locked(t, q);
		t->call_fd[i] = -1;
	}
	pthread_mutex_unlock(&t->msix_lock);
}

void virtio_pci_msix_vector_changed(struct virtio_pci *t)
{
	pthread_mutex_lock(&t->msix_lock);
	msix_direct_update_locked(t);
	pthread_mutex_unlock(&t->msix_lock);
}

static void msix_route_locked(struct virtio_pci *t, unsigned int v)
{
	struct virtio_pci_msix_entry *e = &t->table[v];
	uint64_t addr = (uint64_t)e->addr_hi << 32 | e->addr_lo;
	int ret;

	/* Bus 0, function 0 (src/devices/pci.c has one bus). */
	ret = t->host.ops->msi_route(t->host.opaque, (uint32_t)t->gsi[v], addr,
				     e->data, (uint32_t)t->pci.slot << 3);
	if (ret)
		log_ratelimited(&t->rl, LOG_WARN,
				"%s: MSI-X vector %u: route failed (%d)",
				t->vdev->name, v, ret);
}

static bool vpci_notify(struct virtio_dev *vdev, struct virtio_queue *q)
{
	struct virtio_pci *t = vdev->transport;
	/* The current vector: a change takes effect at the next notify. */
	uint16_t v = __atomic_load_n(&q->msix_vector, __ATOMIC_ACQUIRE);

	pthread_mutex_lock(&t->msix_lock);
	/* Without MSI-X (and no INTx) only the ISR bit shows (§4.1.4.5). */
	if (t->msix_enabled)
		msix_signal_locked(t, v);
	else
		atomic_fetch_or(&vdev->isr, VIRTIO_ISR_QUEUE);
	pthread_mutex_unlock(&t->msix_lock);
	/* MSI-X has no acknowledgement to wait for: always a new message
	 * (or its pending bit, while masked). */
	return true;
}

static void vpci_notify_config(struct virtio_dev *vdev)
{
	struct virtio_pci *t = vdev->transport;

	/* Set before the interrupt, as §4.1.4.5 requires. */
	atomic_fetch_or(&vdev->isr, VIRTIO_ISR_CONFIG);
	pthread_mutex_lock(&t->msix_lock);
	msix_signal_locked(t, t->config_vector);
	pthread_mutex_unlock(&t->msix_lock);
}

const struct virtio_transport_ops virtio_pci_transport_ops = {
	.name = "pci",
	.notify = vpci_notify,
	.notify_config = vpci_notify_config,
	.direct_irq = vpci_direct_irq,
	.save = virtio_pci_save,
	.load = virtio_pci_load,
};

void virtio_pci_set_config_vector(struct virtio_pci *t, uint16_t v)
{
	pthread_mutex_lock(&t->msix_lock);
	t->config_vector = virtio_pci_vector_check(t, v);
	pthread_mutex_unlock(&t->msix_lock);
}

uint16_t virtio_pci_config_vector(struct virtio_pci *t)
{
	uint16_t v;

	pthread_mutex_lock(&t->msix_lock);
	v = t->config_vector;
	pthread_mutex_unlock(&t->msix_lock);
	return v;
}

void virtio_pci_msix_control(struct virtio_pci *t, uint16_t ctrl)
{
	unsigned int v;

	pthread_mutex_lock(&t->msix_lock);
	t->msix_enabled = ctrl & PCI_MSIX_FLAGS_ENABLE;
	t->msix_masked = ctrl & PCI_MSIX_FLAGS_MASKALL;
	msix_direct_update_locked(t);
	for (v = 0; v < t->nr_vectors; v++)
		msix_flush_locked(t, v);
	pthread_mutex_unlock(&t->msix_lock);
}

static void msix_entry_write_locked(struct virtio_pci *t, unsigned int v,
				    unsigned int field, uint32_t val)
{
	struct virtio_pci_msix_entry *e = &t->table[v];
	bool was_masked = e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT;

	switch (field) {
	case 0:
		e->addr_lo = val & ~3u; /* dword-aligned message address */
		break;
	case 1:
		e->addr_hi = val;
		break;
	case 2:
		e->data = val;
		break;
	default:
		e->ctrl = val & PCI_MSIX_ENTRY_CTRL_MASKBIT;
		break;
	}
	if (e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT) {
		/* Masked now: direct signallers go to their hold fds. */
		if (field == 3 && !was_masked)
			msix_direct_update_locked(t);
		return;
	}
	/* Unmasked: the route must match before anything is delivered. */
	if (field != 3 || was_masked)
		msix_route_locked(t, v);
	if (field == 3 && was_masked) {
		msix_direct_update_locked(t);
		msix_flush_locked(t, v);
	}
}

static void msix_table_dword_locked(struct virtio_pci *t, uint64_t off,
				    uint8_t *data, bool is_write)
{
	uint64_t v = off / PCI_MSIX_ENTRY_SIZE;
	unsigned int field = (unsigned int)(off % PCI_MSIX_ENTRY_SIZE) / 4;
	const struct virtio_pci_msix_entry *e;
	uint32_t val;

	if (v >= t->nr_vectors)
		return;
	if (is_write) {
		msix_entry_write_locked(t, (unsigned int)v, field,
					(uint32_t)le_get(data, 4));
		return;
	}
	e = &t->table[v];
	val = field == 0 ? e->addr_lo : field == 1 ? e->addr_hi :
	      field == 2 ? e->data : e->ctrl;
	le_put(data, 4, val);
}

void virtio_pci_msix_access(struct virtio_pci *t, uint64_t off,
			    uint8_t *data, unsigned int len, bool is_write)
{
	unsigned int i;

	if ((len != 4 && len != 8) || (off & (len - 1)))
		return;
	pthread_mutex_lock(&t->msix_lock);
	for (i = 0; i < len; i += 4) {
		uint64_t o = off + i;

		if (o >= VIRTIO_PCI_MSIX_TABLE_OFF &&
		    o < VIRTIO_PCI_MSIX_TABLE_OFF + VIRTIO_PCI_REGION_SIZE) {
			msix_table_dword_locked(t,
						o - VIRTIO_PCI_MSIX_TABLE_OFF,
						data + i, is_write);
		} else if (!is_write && o >= VIRTIO_PCI_MSIX_PBA_OFF &&
			   o - VIRTIO_PCI_MSIX_PBA_OFF < PBA_LEN) {
			/* The PBA is read only. */
			msix_direct_pending_locked(t);
			o -= VIRTIO_PCI_MSIX_PBA_OFF;
			le_put(data + i, 4, t->pba[o / 8] >> (8 * (o % 8)));
		}
	}
	pthread_mutex_unlock(&t->msix_lock);
}

int virtio_pci_msix_init(struct virtio_pci *t)
{
	unsigned int v;
	int ret;

	ret = pthread_mutex_init(&t->msix_lock, NULL);
	if (ret)
		return -ret;
	t->config_vector = VIRTIO_MSI_NO_VECTOR;
	for (v = 0; v < VIRTIO_MAX_QUEUES; v++) {
		t->direct[v] = false;
		t->call_fd[v] = t->hold_fd[v] = -1;
	}
	for (v = 0; v < t->nr_vectors; v++) {
		t->table[v].ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT;
		t->irqfd[v] = -1;
	}
	for (v = 0; v < t->nr_vectors; v++) {
		ret = t->host.ops->gsi_alloc(t->host.opaque);
		if (ret < 0)
			goto err_destroy;
		t->gsi[v] = ret;
		ret = evfd_new();
		if (ret < 0)
			goto err_destroy;
		t->irqfd[v] = ret;
		ret = t->host.ops->irqfd(t->host.opaque, t->irqfd[v],
					 (uint32_t)t->gsi[v], true);
		if (ret) {
			close(t->irqfd[v]);
			t->irqfd[v] = -1;
			goto err_destroy;
		}
	}
	return 0;
err_destroy:
	virtio_pci_msix_destroy(t);
	return ret;
}

void virtio_pci_msix_destroy(struct virtio_pci *t)
{
	unsigned int v;

	for (v = 0; v < t->nr_vectors; v++) {
		if (t->irqfd[v] < 0)
			continue;
		t->host.ops->irqfd(t->host.opaque, t->irqfd[v],
				   (uint32_t)t->gsi[v], false);
		close(t->irqfd[v]);
		t->irqfd[v] = -1;
	}
	for (v = 0; v < VIRTIO_MAX_QUEUES; v++) {
		if (t->hold_fd[v] >= 0)
			close(t->hold_fd[v]);
		t->hold_fd[v] = -1;
	}
	pthread_mutex_destroy(&t->msix_lock);
}

void virtio_pci_msix_save(struct virtio_pci *t, struct snap_writer *w)
{
	unsigned int v;

	pthread_mutex_lock(&t->msix_lock);
	snap_put_u32(w, t->nr_vectors);
	snap_put_u16(w, t->config_vector);
	for (v = 0; v < t->nr_vectors; v++) {
		snap_put_u32(w, t->table[v].addr_lo);
		snap_put_u32(w, t->table[v].addr_hi);
		snap_put_u32(w, t->table[v].data);
		snap_put_u32(w, t->table[v].ctrl);
	}
	for (v = 0; v < VIRTIO_PCI_PBA_WORDS; v++)
		snap_put_u64(w, t->pba[v]);
	pthread_mutex_unlock(&t->msix_lock);
}

int virtio_pci_msix_load(struct virtio_pci *t, struct snap_reader *r,
			 char *err, size_t errlen)
{
	struct virtio_pci_msix_entry table[VIRTIO_PCI_MAX_VECTORS];
	uint64_t pba[VIRTIO_PCI_PBA_WORDS];
	uint32_t n = snap_get_u32(r);
	uint16_t config_vector = snap_get_u16(r);
	unsigned int v;

	if (r->bad || n != t->nr_vectors) {
		snprintf(err, errlen, "%s: the snapshot's device has %u MSI-X "
			 "vectors; this one %u", t->vdev->name, n,
			 t->nr_vectors);
		return -EINVAL;
	}
	for (v = 0; v < n; v++) {
		table[v].addr_lo = snap_get_u32(r) & ~3u;
		table[v].addr_hi = snap_get_u32(r);
		table[v].data = snap_get_u32(r);
		table[v].ctrl = snap_get_u32(r) & PCI_MSIX_ENTRY_CTRL_MASKBIT;
	}
	for (v = 0; v < VIRTIO_PCI_PBA_WORDS; v++)
		pba[v] = snap_get_u64(r);
	if (r->bad) {
		snprintf(err, errlen, "%s: MSI-X state truncated",
			 t->vdev->name);
		return -EINVAL;
	}
	pthread_mutex_lock(&t->msix_lock);
	t->config_vector = virtio_pci_vector_check(t, config_vector);
	for (v = 0; v < n; v++) {
		t->table[v] = table[v];
		/* Only vectors of the table can be pending. */
		if (pba[v / 64] & (1ULL << (v % 64)))
			t->pba[v / 64] |= 1ULL << (v % 64);
		if (!(table[v].ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT))
			msix_route_locked(t, v);
	}
	pthread_mutex_unlock(&t->msix_lock);
	return 0;
}
