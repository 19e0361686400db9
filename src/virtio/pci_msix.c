// SPDX-License-Identifier: Apache-2.0
/*
 * MSI-X for the virtio-pci transport: a table of num_queues + 1 entries,
 * each bound to its own GSI and irqfd. Queue threads signal a vector's
 * irqfd, or set its PBA bit while the entry or the whole function is
 * masked; unmasking delivers what is pending. The route of a GSI follows
 * the entry's address/data whenever the entry is (or becomes) unmasked.
 */
#include <errno.h>
#include <unistd.h>

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

static void msix_route_locked(struct virtio_pci *t, unsigned int v)
{
	struct virtio_pci_msix_entry *e = &t->table[v];
	uint64_t addr = (uint64_t)e->addr_hi << 32 | e->addr_lo;
	int ret;

	ret = t->host.ops->msi_route(t->host.opaque, (uint32_t)t->gsi[v], addr,
				     e->data);
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
	if (e->ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT)
		return;
	/* Unmasked: the route must match before anything is delivered. */
	if (field != 3 || was_masked)
		msix_route_locked(t, v);
	if (field == 3 && was_masked)
		msix_flush_locked(t, v);
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
	pthread_mutex_destroy(&t->msix_lock);
}
