// SPDX-License-Identifier: Apache-2.0
/*
 * Snapshots of a paused machine, and the machine rebuilt from one. The
 * state file holds the configuration the restore rebuilds the same
 * machine from (memory slots, GSIs and device order follow from it), the
 * guest-visible CPU, the VM's in-kernel devices, every vCPU and every
 * device in attach order; guest RAM goes to the memory file, written
 * sparse (pages that read zero are holes). A restore maps that file
 * MAP_PRIVATE: pages load on first touch and clones of one snapshot
 * share them in the page cache until they write.
 *
 *	create:  machine_pause() -> machine_snapshot_create()
 *	restore: machine_snapshot_open() -> configuration applied, the
 *		 machine built with RAM from the memory file ->
 *		 machine_snapshot_apply() -> vCPUs started parked ->
 *		 machine_resume() (resume_vm)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/snap.h"
#include "util/log.h"
#include "util/readfile.h"
#include "vmm/arch.h"
#include "vmm/config.h"
#include "vmm/machine.h"

#define PAGE GUEST_MEM_PAGE
/* Bytes of guest RAM written per pwrite() at most. */
#define WRITE_CHUNK (8u << 20)

/* Is the page at @p all zero? (The first word, then the page against
 * itself shifted by a word.) */
static bool page_zero(const uint8_t *p)
{
	static const uint8_t zero[8];

	return !memcmp(p, zero, 8) && !memcmp(p, p + 8, PAGE - 8);
}

static bool page_dirty(const uint64_t *bits, uint64_t page)
{
	return bits[page / 64] & (1ull << (page % 64));
}

/*
 * Does the memory file get page @p? A Full: when it is not all zero (the
 * rest stays a hole). A Diff (@dirty): when it is dirty, zero or not (it
 * overwrites the base's; the rest stays a hole for the rebase to skip).
 */
static bool page_written(const struct vm *vm, const uint64_t *dirty,
			 uint64_t p)
{
	return dirty ? page_dirty(dirty, p) :
		       !page_zero((const uint8_t *)vm->ram + p * PAGE);
}

/* Guest RAM to @fd, sized to the RAM: each run of pages page_written()
 * takes, at its offset, WRITE_CHUNK at a time. */
static int memory_write(struct vm *vm, int fd, const uint64_t *dirty,
			uint64_t *written)
{
	uint64_t pages = vm->ram_size / PAGE, p = 0, start;
	int ret;

	*written = 0;
	if (ftruncate(fd, (off_t)vm->ram_size) < 0)
		return -errno;
	while (p < pages) {
		if (!page_written(vm, dirty, p)) {
			p++;
			continue;
		}
		start = p;
		while (p < pages && page_written(vm, dirty, p) &&
		       (p - start) * PAGE < WRITE_CHUNK)
			p++;
		ret = snap_pwrite_all(fd, (const uint8_t *)vm->ram +
					      start * PAGE,
				      (p - start) * PAGE,
				      (off_t)(start * PAGE));
		if (ret)
			return ret;
		*written += (p - start) * PAGE;
	}
	return 0;
}

/*
 * The pages written since the last collection, a bit per page of RAM
 * from its start (the slots lie back to back in vm->ram): KVM's dirty log
 * of each slot (the guest's writes; reading it clears it) ORed with the
 * VMM's own (virtqueue buffers and rings, guest_mem's bitmaps).
 * Return: the bitmap (free() it), or NULL with errno set.
 */
static uint64_t *dirty_collect(struct vm *vm)
{
	uint64_t pages = vm->ram_size / PAGE, first = 0, *all, *slot;
	unsigned int i;

	all = calloc((pages + 63) / 64, sizeof(*all));
	if (!all)
		return NULL;
	for (i = 0; i < vm->mem.nr_regions && i < vm->nr_slots; i++) {
		uint64_t n = vm->mem.regions[i].size / PAGE, p;
		struct kvm_dirty_log log = { .slot = i };

		slot = calloc((n + 63) / 64, sizeof(*slot));
		if (!slot) {
			free(all);
			return NULL;
		}
		log.dirty_bitmap = slot;
		if (ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &log) < 0) {
			int e = errno;

			free(slot);
			free(all);
			errno = e;
			return NULL;
		}
		guest_mem_dirty_take(&vm->mem, i, slot);
		for (p = 0; p < n && first + p < pages; p++)
			if (page_dirty(slot, p))
				all[(first + p) / 64] |= 1ull << ((first + p) % 64);
		free(slot);
		first += n;
	}
	return all;
}

/* Refuse a path that is the file the RAM is mapped from: truncating it
 * would pull the guest's own pages away. */
static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return a >= 0 && b >= 0 && !fstat(a, &sa) && !fstat(b, &sb) &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int save_memory(struct machine *m, const char *path,
		       const uint64_t *dirty, char *err, size_t errlen,
		       uint64_t *written)
{
	int fd, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "mem_file_path %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	if (same_file(fd, m->vm.ram_fd)) {
		close(fd);
		snprintf(err, errlen, "mem_file_path %s: this microVM's RAM "
			 "is mapped from that file; write the snapshot to "
			 "another", path);
		return -EINVAL;
	}
	ret = ftruncate(fd, 0) < 0 ? -errno :
	      memory_write(&m->vm, fd, dirty, written);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret)
		snprintf(err, errlen, "mem_file_path %s: %s", path,
			 strerror(-ret));
	return ret;
}

static int save_state(const char *path, const uint8_t *buf, size_t len,
		      char *err, size_t errlen)
{
	int fd, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "snapshot_path %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	ret = snap_pwrite_all(fd, buf, len, 0);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret)
		snprintf(err, errlen, "snapshot_path %s: %s", path,
			 strerror(-ret));
	return ret;
}

/* What a restore could not rebuild: refused before anything is written. */
static int check_snapshottable(struct machine *m, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < m->cfg->nr_disks; i++) {
		if (m->cfg->disks[i].snapshot) {
			snprintf(err, errlen, "drive %s has snapshot=on: its "
				 "writes live in this process only, a restore "
				 "could not find them",
				 m->cfg->disks[i].drive_id);
			return -EOPNOTSUPP;
		}
	}
	for (i = 0; i < m->nr_devs; i++) {
		if (!m->devs[i].ops->save) {
			snprintf(err, errlen, "device %s cannot be "
				 "snapshotted", m->devs[i].name);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

static int build_state(struct machine *m,
		       const struct machine_snapshot_req *req,
		       struct snap_writer *w, char *err, size_t errlen)
{
	struct arch_ram_range ranges[GUEST_MEM_MAX_REGIONS];
	unsigned int i;
	int n, ret;

	snap_section_begin(w, SNAP_TAG_INFO);
	snap_put_str(w, MICROVM_VERSION);
	snap_put_u32(w, req->diff ? 1 : 0);
	snap_put_u32(w, m->vm.ncpus);
	snap_section_end(w);

	snap_section_begin(w, SNAP_TAG_CONFIG);
	snap_put_bytes(w, req->config_json, strlen(req->config_json));
	snap_section_end(w);

	snap_section_begin(w, SNAP_TAG_CPU);
	ret = arch_snapshot_cpu_save(&m->vm, w, err, errlen);
	snap_section_end(w);
	if (ret)
		return ret;

	n = arch_ram_layout(m->vm.ram_size, ranges, GUEST_MEM_MAX_REGIONS);
	snap_section_begin(w, SNAP_TAG_MEMORY);
	snap_put_u64(w, m->vm.ram_size);
	snap_put_u32(w, PAGE);
	snap_put_u32(w, (uint32_t)n);
	for (i = 0; i < (unsigned int)n; i++) {
		snap_put_u64(w, ranges[i].gpa);
		snap_put_u64(w, ranges[i].size);
	}
	snap_section_end(w);

	snap_section_begin(w, SNAP_TAG_VM);
	ret = arch_snapshot_vm_save(&m->vm, w, err, errlen);
	snap_section_end(w);
	if (ret)
		return ret;

	for (i = 0; i < m->vm.ncpus; i++) {
		snap_section_begin(w, SNAP_TAG_VCPU);
		ret = arch_snapshot_vcpu_save(&m->vm.vcpus[i], w, err, errlen);
		snap_section_end(w);
		if (ret)
			return ret;
	}
	for (i = 0; i < m->nr_devs; i++) {
		snap_section_begin(w, SNAP_TAG_DEVICE);
		snap_put_str(w, m->devs[i].name);
		ret = m->devs[i].ops->save(m->devs[i].opaque, w, err, errlen);
		snap_section_end(w);
		if (ret)
			return ret;
	}
	return 0;
}

int machine_snapshot_create(struct machine *m,
			    const struct machine_snapshot_req *req, char *err,
			    size_t errlen)
{
	struct snap_writer w;
	uint64_t written = 0, *dirty = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret;

	if (atomic_load(&m->state) != MACHINE_PAUSED) {
		snprintf(err, errlen, "cannot create a snapshot: the microVM "
			 "is %s; pause it first",
			 machine_state_name(atomic_load(&m->state)));
		return -EINVAL;
	}
	if (req->diff && !m->vm.track_dirty) {
		snprintf(err, errlen, "Diff snapshots need dirty page "
			 "tracking: set track_dirty_pages in machine-config "
			 "(or in the snapshot load)");
		return -EINVAL;
	}
	if (req->diff && !m->snap_base) {
		snprintf(err, errlen, "a Diff snapshot holds the pages changed "
			 "since the last snapshot (or restore): take a Full one "
			 "first");
		return -EINVAL;
	}
	ret = check_snapshottable(m, err, errlen);
	if (ret)
		return ret;
	ret = machine_sync_disks(m, err, errlen);
	if (ret)
		return ret;
	/*
	 * The state first: on arm64 it makes KVM write the GIC's tables
	 * into guest RAM, and those pages must be in the memory file too
	 * (a Diff's dirty log is read after them).
	 */
	snap_writer_init(&w);
	ret = build_state(m, req, &w, err, errlen);
	if (ret) {
		snap_writer_free(&w);
		return ret;
	}
	/*
	 * What changed since the last snapshot, collected at this paused
	 * point: a Diff writes it, a Full starts the count again. If this
	 * snapshot then fails, what was collected is lost: no Diff until
	 * the next Full.
	 */
	if (m->vm.track_dirty) {
		m->snap_base = false;
		dirty = dirty_collect(&m->vm);
		if (!dirty) {
			ret = -errno;
			snprintf(err, errlen, "dirty page log: %s",
				 strerror(-ret));
			snap_writer_free(&w);
			return ret;
		}
	}
	ret = snap_writer_finish(&w, arch_snap_id, &buf, &len);
	if (ret) {
		snprintf(err, errlen, "snapshot state: %s", strerror(-ret));
		free(dirty);
		return ret;
	}
	ret = save_memory(m, req->mem_path, req->diff ? dirty : NULL, err,
			  errlen, &written);
	if (!ret)
		ret = save_state(req->state_path, buf, len, err, errlen);
	free(buf);
	free(dirty);
	if (!ret) {
		m->snap_base = true;
		log_info("snapshot (%s): %zu bytes of state to %s, %llu KiB "
			 "of %llu MiB RAM to %s", req->diff ? "Diff" : "Full",
			 len, req->state_path,
			 (unsigned long long)(written >> 10),
			 (unsigned long long)(m->vm.ram_size >> 20),
			 req->mem_path);
	}
	return ret;
}

/* ---- restore ---- */

void machine_snapshot_close(struct machine_snapshot *s)
{
	free(s->buf);
	free(s->config);
	memset(s, 0, sizeof(*s));
}

static int read_info(struct machine_snapshot *s, struct snap_reader *r,
		     char *err, size_t errlen)
{
	char version[64];

	if (!snap_get_str(r, version, sizeof(version))) {
		snprintf(err, errlen, "malformed information section");
		return -EINVAL;
	}
	s->diff = snap_get_u32(r) != 0;
	s->ncpus = snap_get_u32(r);
	if (r->bad || !snap_reader_done(r) || !s->ncpus ||
	    s->ncpus > CONFIG_MAX_CPUS) {
		snprintf(err, errlen, "malformed information section");
		return -EINVAL;
	}
	if (strcmp(version, MICROVM_VERSION))
		log_info("snapshot written by microvm %s", version);
	return 0;
}

static int read_memory(struct machine_snapshot *s, struct snap_reader *r,
		       char *err, size_t errlen)
{
	struct arch_ram_range ranges[GUEST_MEM_MAX_REGIONS];
	uint32_t page, n, i;
	int here;

	s->ram_size = snap_get_u64(r);
	page = snap_get_u32(r);
	n = snap_get_u32(r);
	if (r->bad || page != PAGE || !s->ram_size || s->ram_size % PAGE ||
	    n > GUEST_MEM_MAX_REGIONS) {
		snprintf(err, errlen, "malformed memory section");
		return -EINVAL;
	}
	here = arch_ram_layout(s->ram_size, ranges, GUEST_MEM_MAX_REGIONS);
	if ((int)n != here) {
		snprintf(err, errlen, "the snapshot's RAM has %u ranges; this "
			 "microvm lays %llu MiB out in %d", n,
			 (unsigned long long)(s->ram_size >> 20), here);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		uint64_t gpa = snap_get_u64(r), size = snap_get_u64(r);

		if (r->bad || gpa != ranges[i].gpa ||
		    size != ranges[i].size) {
			snprintf(err, errlen, "the snapshot's RAM range %u is "
				 "laid out otherwise than this microvm's", i);
			return -EINVAL;
		}
	}
	if (!snap_reader_done(r)) {
		snprintf(err, errlen, "malformed memory section");
		return -EINVAL;
	}
	return 0;
}

int machine_snapshot_open(const char *path, struct machine_snapshot *s,
			  char *err, size_t errlen)
{
	char prefix[256];
	const char *step;
	struct snap_reader r;
	size_t cur = 0, len = 0;
	uint32_t tag;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = read_bounded(path, SNAP_MAX_FILE, (char **)&s->buf, &len,
			   &step);
	if (ret) {
		if (ret == -E2BIG)
			snprintf(err, errlen, "snapshot %s: larger than %u "
				 "bytes", path, SNAP_MAX_FILE);
		else
			snprintf(err, errlen, "snapshot %s: cannot %s: %s",
				 path, step, strerror(-ret));
		return ret;
	}
	s->len = len;
	ret = snap_file_parse(s->buf, len, arch_snap_id, &s->f, prefix,
			      sizeof(prefix));
	if (ret) {
		snprintf(err, errlen, "snapshot %s: %s", path, prefix);
		machine_snapshot_close(s);
		return ret;
	}
	while (!ret && snap_next_section(&s->f, &cur, &tag, &r) == 1) {
		switch (tag) {
		case SNAP_TAG_INFO:
			ret = read_info(s, &r, prefix, sizeof(prefix));
			break;
		case SNAP_TAG_CONFIG:
			/* JSON text, the whole section. */
			if (s->config || !r.len || memchr(r.p, 0, r.len)) {
				snprintf(prefix, sizeof(prefix),
					 "malformed configuration section");
				ret = -EINVAL;
				break;
			}
			s->config = strndup((const char *)r.p, r.len);
			s->config_len = r.len;
			if (!s->config) {
				snprintf(prefix, sizeof(prefix),
					 "out of memory");
				ret = -ENOMEM;
			}
			break;
		case SNAP_TAG_MEMORY:
			ret = read_memory(s, &r, prefix, sizeof(prefix));
			break;
		default:
			break;
		}
	}
	if (!ret && (!s->config || !s->ram_size || !s->ncpus)) {
		snprintf(prefix, sizeof(prefix), "incomplete: no %s section",
			 !s->config ? "configuration" :
			 !s->ram_size ? "memory" : "information");
		ret = -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen, "snapshot %s: %s", path, prefix);
		machine_snapshot_close(s);
	}
	return ret;
}

static struct machine_dev *find_dev(struct machine *m, const char *name,
				    bool *seen)
{
	unsigned int i;

	for (i = 0; i < m->nr_devs; i++) {
		if (strcmp(m->devs[i].name, name))
			continue;
		if (seen[i])
			return NULL;
		seen[i] = true;
		return &m->devs[i];
	}
	return NULL;
}

int machine_snapshot_apply(struct machine *m, const struct machine_snapshot *s,
			   char *err, size_t errlen)
{
	bool seen[MACHINE_MAX_DEVS] = { false };
	char what[128], sub[384];
	unsigned int vcpus = 0, i;
	struct snap_reader r;
	size_t cur = 0;
	uint32_t tag;
	int ret = 0;

	if (m->vm.ncpus != s->ncpus || m->vm.ram_size != s->ram_size) {
		snprintf(err, errlen, "the snapshot has %u vCPUs and %llu MiB; "
			 "the machine built from it %u and %llu MiB", s->ncpus,
			 (unsigned long long)(s->ram_size >> 20), m->vm.ncpus,
			 (unsigned long long)(m->vm.ram_size >> 20));
		return -EINVAL;
	}
	while (!ret && snap_next_section(&s->f, &cur, &tag, &r) == 1) {
		struct machine_dev *d;
		char name[64];

		sub[0] = 0;
		switch (tag) {
		case SNAP_TAG_CPU:
			snprintf(what, sizeof(what), "CPU");
			ret = arch_snapshot_cpu_check(&m->vm, &r, sub,
						      sizeof(sub));
			break;
		case SNAP_TAG_VM:
			snprintf(what, sizeof(what), "VM");
			ret = arch_snapshot_vm_load(&m->vm, &r, sub,
						    sizeof(sub));
			break;
		case SNAP_TAG_VCPU:
			snprintf(what, sizeof(what), "vCPU %u", vcpus);
			if (vcpus >= m->vm.ncpus) {
				snprintf(sub, sizeof(sub), "more vCPU states "
					 "than vCPUs");
				ret = -EINVAL;
				break;
			}
			ret = arch_snapshot_vcpu_load(&m->vm.vcpus[vcpus++], &r,
						      sub, sizeof(sub));
			break;
		case SNAP_TAG_DEVICE:
			if (!snap_get_str(&r, name, sizeof(name))) {
				snprintf(what, sizeof(what), "device");
				snprintf(sub, sizeof(sub), "malformed name");
				ret = -EINVAL;
				break;
			}
			snprintf(what, sizeof(what), "device %s", name);
			d = find_dev(m, name, seen);
			if (!d) {
				snprintf(sub, sizeof(sub), "this machine has "
					 "no such device (or it was in the "
					 "snapshot twice)");
				ret = -EINVAL;
				break;
			}
			/* Its messages name it already. */
			what[0] = 0;
			ret = d->ops->load(d->opaque, &r, sub, sizeof(sub));
			break;
		default:
			break;
		}
		if (ret)
			snprintf(err, errlen, "%s%s%s", what, what[0] ? ": " : "",
				 sub);
	}
	if (ret)
		return ret;
	if (vcpus != m->vm.ncpus) {
		snprintf(err, errlen, "the snapshot holds %u vCPU states for "
			 "%u vCPUs", vcpus, m->vm.ncpus);
		return -EINVAL;
	}
	for (i = 0; i < m->nr_devs; i++) {
		if (!seen[i]) {
			snprintf(err, errlen, "device %s: not in the snapshot",
				 m->devs[i].name);
			return -EINVAL;
		}
	}
	/* A Diff from here holds what changed since this restore. */
	m->snap_base = true;
	if (s->diff)
		log_info("restored a Diff snapshot: its memory file must be "
			 "the base with the Diff written over it "
			 "(--base-file, --diff-file)");
	return 0;
}
