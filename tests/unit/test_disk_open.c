// SPDX-License-Identifier: Apache-2.0
/*
 * disk_open() tests: every refusal names the path and returns its errno
 * (table rows), image locking between two opens in this process and against
 * a child holding OFD or classic POSIX locks, and what open reports: size,
 * O_DIRECT and its fallbacks, discard probing that leaves the file alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "virtio/disk.h"

static char dir[PATH_MAX];
static char file[PATH_MAX + 16];

static int make_file(const char *path, size_t size)
{
	static const char chunk[4096] = { 1 };
	size_t done = 0, n;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	while (done < size) {
		n = size - done < sizeof(chunk) ? size - done : sizeof(chunk);
		if (write(fd, chunk, n) != (ssize_t)n) {
			close(fd);
			return -EIO;
		}
		done += n;
	}
	close(fd);
	return 0;
}

/* disk_open() with @o must fail with @want and "disk PATH: @what". */
static void expect_refusal(const char *name, const struct disk_opts *o,
			   int want, const char *what)
{
	char err[512] = "", msg[512];
	struct disk d;
	int ret;

	ret = disk_open(&d, o, err, sizeof(err));
	if (!want) {
		if (ret)
			fprintf(stderr, "%s: got %d '%s'\n", name, ret, err);
		CHECK_EQ(ret, 0);
		if (!ret)
			disk_close(&d);
		return;
	}
	if (o->path && *o->path)
		snprintf(msg, sizeof(msg), "disk %s: %s", o->path, what);
	else
		snprintf(msg, sizeof(msg), "disk: %s", what);
	if (ret != want || strcmp(err, msg))
		fprintf(stderr, "%s: got %d '%s', want %d '%s'\n", name, ret,
			err, want, msg);
	CHECK_EQ(ret, want);
	CHECK(strcmp(err, msg) == 0);
	if (!ret)
		disk_close(&d);
}

static void test_refusals(void)
{
	char missing[PATH_MAX + 16], nodir[PATH_MAX + 16];
	const struct {
		const char *name;
		const char *path;
		bool readonly;
		int engine, cache;
		int err;
		const char *what;
	} rows[] = {
		{ "missing file", missing, false, 0, 0, -ENOENT,
		  "No such file or directory" },
		{ "missing file, ro", missing, true, 0, 0, -ENOENT,
		  "No such file or directory" },
		{ "missing parent", nodir, false, 0, 0, -ENOENT,
		  "No such file or directory" },
		{ "directory", dir, false, 0, 0, -EISDIR, "is a directory" },
		{ "directory, ro", dir, true, 0, 0, -EISDIR,
		  "is a directory" },
		{ "directory, writeback", dir, true, 0, 1, -EISDIR,
		  "is a directory" },
		{ "char device", "/dev/null", false, 0, 0, -EINVAL,
		  "not a regular file or block device" },
		{ "char device, ro", "/dev/null", true, 0, 0, -EINVAL,
		  "not a regular file or block device" },
		{ "empty path", "", false, 0, 0, -EINVAL, "no path given" },
		{ "no path", NULL, false, 0, 0, -EINVAL, "no path given" },
		{ "unknown engine", file, false, 7, 0, -EINVAL,
		  "unknown engine 7" },
		{ "unknown cache mode", file, false, 0, 9, -EINVAL,
		  "unknown cache mode 9" },
	};
	unsigned int i;

	snprintf(missing, sizeof(missing), "%s/missing.img", dir);
	snprintf(nodir, sizeof(nodir), "%s/nodir/x.img", dir);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct disk_opts o = {
			.path = rows[i].path, .readonly = rows[i].readonly,
			.engine = rows[i].engine, .cache = rows[i].cache,
		};

		expect_refusal(rows[i].name, &o, rows[i].err, rows[i].what);
	}
}

/* Two opens in this process: OFD locks conflict even here. */
static void test_lock_same_process(void)
{
	static const struct {
		bool first_ro, second_ro;
		int want;
	} rows[] = {
		{ false, false, -EBUSY },
		{ false, true, -EBUSY },
		{ true, false, -EBUSY },
		{ true, true, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct disk_opts o = { .path = file,
				       .readonly = rows[i].first_ro };
		struct disk a;
		char err[512] = "";

		CHECK_EQ(disk_open(&a, &o, err, sizeof(err)), 0);
		o.readonly = rows[i].second_ro;
		expect_refusal("second open", &o, rows[i].want,
			       "in use by another process (locked)");
		disk_close(&a);
		/* Closing the first open released its lock. */
		o.readonly = false;
		expect_refusal("after close", &o, 0, NULL);
	}
}

/*
 * A child holds a lock of @type (OFD or classic POSIX) until told to exit;
 * the parent's open must get @want, and succeed once the child is gone.
 */
static void test_lock_child(void)
{
	static const struct {
		int cmd;
		short type;
		bool parent_ro;
		int want;
	} rows[] = {
		{ F_OFD_SETLK, F_WRLCK, true, -EBUSY },
		{ F_OFD_SETLK, F_WRLCK, false, -EBUSY },
		{ F_OFD_SETLK, F_RDLCK, true, 0 },
		{ F_OFD_SETLK, F_RDLCK, false, -EBUSY },
		{ F_SETLK, F_WRLCK, false, -EBUSY },
		{ F_SETLK, F_RDLCK, true, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct disk_opts o = { .path = file,
				       .readonly = rows[i].parent_ro };
		int ready[2], go[2], status;
		char c = 0;
		pid_t pid;

		CHECK(!pipe(ready) && !pipe(go));
		pid = fork();
		if (pid == 0) {
			struct flock fl = { .l_type = rows[i].type,
					    .l_whence = SEEK_SET };
			int fd = open(file, O_RDWR);

			c = fd >= 0 && !fcntl(fd, rows[i].cmd, &fl);
			close(go[1]);
			if (write(ready[1], &c, 1) != 1)
				_exit(2);
			/* Hold the lock until the parent closes @go. */
			if (read(go[0], &c, 1) < 0)
				_exit(3);
			_exit(0);
		}
		close(ready[1]);
		close(go[0]);
		CHECK(pid > 0 && read(ready[0], &c, 1) == 1 && c == 1);
		expect_refusal("child holds a lock", &o, rows[i].want,
			       "in use by another process (locked)");
		close(go[1]);
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0);
		close(ready[0]);
		o.readonly = false;
		expect_refusal("child gone", &o, 0, NULL);
	}
}

/* Whether this file system takes O_DIRECT at all. */
static bool fs_has_direct(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void test_properties(void)
{
	char odd[PATH_MAX + 16];
	struct disk_opts o = { .path = file };
	struct stat before, after;
	char err[512] = "";
	struct disk d;

	/* Size exact; O_DIRECT where the file system has it. */
	CHECK_EQ(stat(file, &before), 0);
	CHECK_EQ(disk_open(&d, &o, err, sizeof(err)), 0);
	CHECK_EQ(d.size, 1024 * 1024 + 4096);
	CHECK(!d.is_blockdev && !d.readonly);
	CHECK_EQ(d.direct, fs_has_direct(file));
	if (d.direct) {
		CHECK(d.align >= 1 && !(d.align & (d.align - 1)));
		CHECK(d.mem_align >= 1 && !(d.mem_align & (d.mem_align - 1)));
		CHECK_EQ(d.size % d.align, 0);
	}
	CHECK(d.phys_block >= 512);
	CHECK(d.path && strcmp(d.path, file) == 0);
	CHECK_EQ(d.can_write_zeroes, d.can_discard);
	disk_close(&d);
	/* The discard probe left size and allocation alone. */
	CHECK_EQ(stat(file, &after), 0);
	CHECK_EQ(after.st_size, before.st_size);
	CHECK_EQ(after.st_blocks, before.st_blocks);

	o.cache = DISK_CACHE_WRITEBACK;
	CHECK_EQ(disk_open(&d, &o, err, sizeof(err)), 0);
	CHECK(!d.direct);
	disk_close(&d);

	/* A size O_DIRECT cannot cover falls back to the page cache. */
	snprintf(odd, sizeof(odd), "%s/odd.img", dir);
	CHECK_EQ(make_file(odd, 1000), 0);
	o.path = odd;
	o.cache = DISK_CACHE_NONE;
	CHECK_EQ(disk_open(&d, &o, err, sizeof(err)), 0);
	CHECK_EQ(d.size, 1000);
	CHECK(!d.direct);
	disk_close(&d);

	/* Read-only: no write lock, no discard. */
	o.readonly = true;
	CHECK_EQ(disk_open(&d, &o, err, sizeof(err)), 0);
	CHECK(d.readonly && !d.can_discard && !d.can_write_zeroes);
	disk_close(&d);
	unlink(odd);
}

/* disk_open_fd(): same checks; the descriptor stays the caller's on error. */
static void test_open_fd(void)
{
	struct disk_opts o = { .path = dir, .readonly = true };
	char err[512] = "", want[PATH_MAX + 64];
	struct disk d, other;
	int fd;

	fd = open(dir, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(disk_open_fd(&d, fd, &o, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "disk %s: is a directory", dir);
	CHECK(strcmp(err, want) == 0);
	CHECK(fcntl(fd, F_GETFD) >= 0); /* still open */
	close(fd);

	/* A read-write disk on a read-only descriptor. */
	o.path = file;
	o.readonly = false;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	CHECK_EQ(disk_open_fd(&d, fd, &o, err, sizeof(err)), -EBADF);
	snprintf(want, sizeof(want), "disk %s: not open for writing", file);
	CHECK(strcmp(err, want) == 0);
	disk_close(&d); /* harmless after a failure */
	CHECK(fcntl(fd, F_GETFD) >= 0);
	close(fd);

	CHECK_EQ(disk_open(&other, &o, err, sizeof(err)), 0);
	fd = open(file, O_RDWR | O_CLOEXEC);
	CHECK_EQ(disk_open_fd(&d, fd, &o, err, sizeof(err)), -EBUSY);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	disk_close(&other);
	CHECK_EQ(disk_open_fd(&d, fd, &o, err, sizeof(err)), 0);
	CHECK_EQ(d.fd, fd);
	CHECK(!d.direct);
	disk_close(&d);
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/microvm-disk-open-XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/img", dir);
	CHECK_EQ(make_file(file, 1024 * 1024 + 4096), 0);
	test_refusals();
	test_lock_same_process();
	test_lock_child();
	test_properties();
	test_open_fd();
	unlink(file);
	rmdir(dir);
	return test_done();
}
