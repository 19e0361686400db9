// SPDX-License-Identifier: Apache-2.0
/*
 * The jail's file system: <base>/<exec name>/<id>/root with a private
 * copy of the exec file (so no two VMMs share its pages), and the move
 * into it: a slave mount tree, the root bound on itself, pivot_root,
 * the old root detached (so no path leads back to the host's files),
 * then the device nodes the VMM opens, made with mknod inside and owned
 * by the user it will run as.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "jail.h"

#define COPY_CHUNK 65536

/* mkdir @path with @mode unless it is a directory already (not a link). */
static int mkdir_once(const char *path, mode_t mode)
{
	struct stat st;

	if (!mkdir(path, mode))
		return 0;
	if (errno != EEXIST) {
		int err = errno;

		jail_err("mkdir %s: %s", path, strerror(err));
		return -err;
	}
	if (lstat(path, &st) || !S_ISDIR(st.st_mode)) {
		jail_err("%s exists and is not a directory", path);
		return -ENOTDIR;
	}
	return 0;
}

static int copy_fd(int in, int out, const char *from, const char *to)
{
	char buf[COPY_CHUNK];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			jail_err("reading %s: %s", from, strerror(err));
			return -err;
		}
		if (n == 0)
			return 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				int err = errno;

				jail_err("writing %s: %s", to, strerror(err));
				return -err;
			}
			done += w;
		}
	}
}

/* Copy @src to @dst: a regular file of one link, root's, mode <= 0755. */
static int copy_exec(const char *src, const char *dst)
{
	struct stat st, dst_st;
	int in, out, ret;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) || !S_ISREG(st.st_mode)) {
		ret = in < 0 ? -errno : -EINVAL;
		jail_err("--exec-file: '%s' is not a readable regular file", src);
		goto err_close_in;
	}
	/* No O_TRUNC before the checks below (a hard link would be cut
	 * short); O_NONBLOCK so that a FIFO there fails instead of waiting. */
	out = open(dst, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		   O_CLOEXEC, 0700);
	if (out < 0) {
		ret = -errno;
		jail_err("creating %s: %s", dst, strerror(-ret));
		goto err_close_in;
	}
	/* Never write through a hard link into some other file. */
	if (fstat(out, &dst_st) || !S_ISREG(dst_st.st_mode) ||
	    dst_st.st_nlink != 1) {
		ret = -EEXIST;
		jail_err("%s is not a regular file of one link", dst);
		goto err_close_out;
	}
	if (ftruncate(out, 0)) {
		ret = -errno;
		jail_err("truncating %s: %s", dst, strerror(-ret));
		goto err_close_out;
	}
	ret = copy_fd(in, out, src, dst);
	if (!ret && (fchown(out, 0, 0) || fchmod(out, st.st_mode & 0755))) {
		ret = -errno;
		jail_err("setting the owner and mode of %s: %s", dst,
			 strerror(-ret));
	}
err_close_out:
	close(out);
err_close_in:
	if (in >= 0)
		close(in);
	return ret;
}

int jail_dir_prepare(const struct jail_config *cfg, char *root, size_t len)
{
	const char *name = jail_exec_name(cfg->exec_file);
	char path[4096];
	int n, ret;

	n = snprintf(path, sizeof(path), "%s/%s", cfg->chroot_base, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		goto err_long;
	ret = mkdir_once(path, 0755);
	if (ret)
		return ret;
	n = snprintf(path, sizeof(path), "%s/%s/%s", cfg->chroot_base, name,
		     cfg->id);
	if (n < 0 || (size_t)n >= sizeof(path))
		goto err_long;
	ret = mkdir_once(path, 0755);
	if (ret)
		return ret;
	n = snprintf(root, len, "%s/root", path);
	if (n < 0 || (size_t)n >= len)
		goto err_long;
	ret = mkdir_once(root, 0700);
	if (ret)
		return ret;
	n = snprintf(path, sizeof(path), "%s/%s", root, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		goto err_long;
	return copy_exec(cfg->exec_file, path);
err_long:
	jail_err("--chroot-base-dir: '%s' makes a path too long",
		 cfg->chroot_base);
	return -ENAMETOOLONG;
}

static bool host_chrdev(const char *path, dev_t *dev)
{
	struct stat st;

	if (stat(path, &st) || !S_ISCHR(st.st_mode))
		return false;
	*dev = st.st_rdev;
	return true;
}

void jail_devs_probe(struct jail_devs *devs)
{
	devs->has_userfaultfd = host_chrdev("/dev/userfaultfd",
					    &devs->userfaultfd);
	devs->has_vhost_blk = host_chrdev("/dev/vhost-blk", &devs->vhost_blk);
}

/* A directory of the jail: @uid's, mode 0700. */
static int own_dir(const char *path, uid_t uid, gid_t gid)
{
	int ret = mkdir_once(path, 0700);

	if (ret)
		return ret;
	if (chown(path, uid, gid) || chmod(path, 0700)) {
		ret = -errno;
		jail_err("chown/chmod %s in the jail: %s", path, strerror(-ret));
	}
	return ret;
}

static int make_dev(const char *path, dev_t dev, uid_t uid, gid_t gid)
{
	if (unlink(path) && errno != ENOENT) {
		int err = errno;

		jail_err("removing %s in the jail: %s", path, strerror(err));
		return -err;
	}
	if (mknod(path, S_IFCHR | 0600, dev) || chown(path, uid, gid)) {
		int err = errno;

		jail_err("mknod/chown %s (%u:%u) in the jail: %s", path,
			 major(dev), minor(dev), strerror(err));
		return -err;
	}
	return 0;
}

static int make_devs(const struct jail_devs *devs, uid_t uid, gid_t gid)
{
	static const char *const dirs[] = { "/", "/dev", "/dev/net", "/run" };
	int ret;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		ret = own_dir(dirs[i], uid, gid);
		if (ret)
			return ret;
	}
	/* Fixed misc minors: KVM_MINOR 232, TUN_MINOR 200; mem's urandom. */
	ret = make_dev("/dev/kvm", makedev(10, 232), uid, gid);
	if (!ret)
		ret = make_dev("/dev/net/tun", makedev(10, 200), uid, gid);
	if (!ret)
		ret = make_dev("/dev/urandom", makedev(1, 9), uid, gid);
	if (!ret && devs->has_userfaultfd)
		ret = make_dev("/dev/userfaultfd", devs->userfaultfd, uid, gid);
	if (!ret && devs->has_vhost_blk)
		ret = make_dev("/dev/vhost-blk", devs->vhost_blk, uid, gid);
	return ret;
}

/* One mount-namespace step: 0, or -errno after a line naming @what. */
static int step(int rc, const char *what, const char *arg)
{
	int err = errno;

	if (rc == 0)
		return 0;
	jail_err("%s %s: %s", what, arg, strerror(err));
	return -err;
}

int jail_enter(const char *root, const struct jail_devs *devs, uid_t uid,
	       gid_t gid)
{
	int ret;

	/*
	 * Slave, not private: nothing below propagates back to the host's
	 * mount tree, but what the host binds into a shared jail root later
	 * still reaches the jail (Kata hot-plugs a container's image by
	 * binding it over a placeholder drive file, then PATCHes the drive).
	 */
	ret = step(mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL),
		   "making the mounts slaves at", "/");
	/* pivot_root needs the new root to be a mount point; MS_REC keeps
	 * what the caller bound into the jail (images, FIFOs). */
	if (!ret)
		ret = step(mount(root, root, NULL, MS_BIND | MS_REC, NULL),
			   "bind-mounting", root);
	if (!ret)
		ret = step(chdir(root), "chdir", root);
	if (!ret && mkdir("old_root", 0700) && errno != EEXIST)
		ret = step(-1, "mkdir old_root in", root);
	if (!ret)
		ret = step((int)syscall(SYS_pivot_root, ".", "old_root"),
			   "pivot_root into", root);
	if (!ret)
		ret = step(umount2("old_root", MNT_DETACH),
			   "detaching the old root below", root);
	if (!ret)
		ret = step(rmdir("old_root"), "rmdir old_root in", root);
	if (!ret)
		ret = step(chroot("."), "chroot", root);
	if (!ret)
		ret = step(chdir("/"), "chdir / in", root);
	if (ret)
		return ret;
	return make_devs(devs, uid, gid);
}
