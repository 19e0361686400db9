// SPDX-License-Identifier: Apache-2.0
/*
 * blkcrash: the guest and host halves of the real-guest crash and fault
 * tests. A seed names a stream of writes (random block-multiple lengths at
 * random block offsets) and every byte they carry, so the guest writer and
 * the host verifier agree on the data without passing it.
 *
 * Usage:
 *   blkcrash init IMAGE SEED BYTES     host: the image's initial content
 *   blkcrash write DEV SEED COUNT      guest: COUNT writes with O_DIRECT,
 *       an fdatasync after every 1-8; after each completed one prints
 *       "E2E-ACK: N" (the first N writes are on stable storage)
 *   blkcrash write DEV SEED COUNT broken-ack   the self-check's broken
 *       writer: after its first true acknowledgement it acknowledges the
 *       next batch before writing it, then waits for the kill unwritten
 *   blkcrash verify IMAGE SEED BLOCK COUNT ACKED   host (BLOCK: what the
 *       writer printed): every byte holds what
 *       the first ACKED writes left, or what a later one of the COUNT
 *       wrote there; then the same check must fail with write ACKED-1
 *       undone (the check is not vacuous). Exit 0 pass, 1 lost data,
 *       2 usage or the self-check failed.
 *   blkcrash probe DEV read|write OFFSET LEN SEED   guest: one O_DIRECT
 *       transfer of a pattern (read: compared with it); prints
 *       "ok", "mismatch" or the errno name; exit 0, 3 (mismatch), 1 (error)
 *   blkcrash delay SEED MAX            the seed's kill delay in [0, MAX]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define INIT_WRITE UINT64_MAX
#define MAX_BLOCKS 16 /* per write */
#define BATCH_MAX 8

struct wr {
	uint64_t off, len;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint8_t byte_of(uint64_t seed, uint64_t j, uint64_t off)
{
	return (uint8_t)mix(seed ^ mix(j ^ (off << 20) ^ off));
}

/* Write @j of the stream: @blk-multiple, inside @bytes. */
static struct wr write_of(uint64_t seed, uint64_t j, uint64_t bytes,
			  uint64_t blk)
{
	uint64_t r = mix(seed ^ mix(j + 0x777));
	uint64_t nblk = 1 + r % MAX_BLOCKS, blocks = bytes / blk;
	struct wr w;

	w.len = nblk * blk;
	w.off = (mix(r) % (blocks - nblk + 1)) * blk;
	return w;
}

static void fill(uint8_t *p, uint64_t seed, uint64_t j, uint64_t off,
		 uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = byte_of(seed, j, off + i);
}

static int num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (*s && *s != '-' && !*end && !errno) ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: blkcrash init IMAGE SEED BYTES | write DEV "
		"SEED COUNT [broken-ack] | verify IMAGE SEED BLOCK COUNT ACKED | probe DEV "
		"read|write OFFSET LEN SEED | delay SEED MAX\n");
	return 2;
}

static uint8_t *read_all(const char *path, uint64_t *bytes)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t *img;

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return NULL;
	}
	*bytes = (uint64_t)st.st_size;
	img = malloc(*bytes ? *bytes : 1);
	if (!img || pread(fd, img, *bytes, 0) != (ssize_t)*bytes) {
		perror(path);
		free(img);
		img = NULL;
	}
	close(fd);
	return img;
}

static int cmd_init(const char *path, uint64_t seed, uint64_t bytes)
{
	uint8_t *img = malloc(bytes);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (!img || fd < 0) {
		perror(path);
		return 2;
	}
	fill(img, seed, INIT_WRITE, 0, bytes);
	if (pwrite(fd, img, bytes, 0) != (ssize_t)bytes || fsync(fd)) {
		perror(path);
		return 2;
	}
	close(fd);
	free(img);
	return 0;
}

/* Logical block size of @fd (512 for a file). */
static uint64_t block_of(int fd)
{
	int lbs = 0;

	if (ioctl(fd, BLKSSZGET, &lbs) || lbs < 512)
		return 512;
	return (uint64_t)lbs;
}

static uint64_t size_of(int fd)
{
	uint64_t bytes = 0;
	struct stat st;

	if (!ioctl(fd, BLKGETSIZE64, &bytes))
		return bytes;
	return fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
}

static int cmd_write(const char *dev, uint64_t seed, uint64_t count,
		     bool broken)
{
	int fd = open(dev, O_RDWR | O_DIRECT);
	uint64_t blk, bytes, j = 0, batch_end;
	void *buf;

	if (fd < 0) {
		perror(dev);
		return 1;
	}
	blk = block_of(fd);
	bytes = size_of(fd);
	if (bytes < MAX_BLOCKS * blk ||
	    posix_memalign(&buf, 4096, MAX_BLOCKS * blk)) {
		fprintf(stderr, "blkcrash: %s: too small\n", dev);
		return 1;
	}
	/* The host checks with the same block size and size. */
	printf("E2E-CRASH: start seed %llu bytes %llu block %llu count %llu\n",
	       (unsigned long long)seed, (unsigned long long)bytes,
	       (unsigned long long)blk, (unsigned long long)count);
	fflush(stdout);
	while (j < count) {
		batch_end = j + 1 + mix(seed ^ j ^ 0xba7c4) % BATCH_MAX;
		if (broken && j > 0) {
			/* Acknowledged, never written: the host must see it. */
			printf("E2E-ACK: %llu\n", (unsigned long long)
			       (batch_end < count ? batch_end : count));
			fflush(stdout);
			for (;;)
				pause();
		}
		for (; j < batch_end && j < count; j++) {
			struct wr w = write_of(seed, j, bytes, blk);

			fill(buf, seed, j, w.off, w.len);
			if (pwrite(fd, buf, w.len, (off_t)w.off) !=
			    (ssize_t)w.len) {
				printf("E2E-CRASH: write %llu failed: %s\n",
				       (unsigned long long)j, strerror(errno));
				return 1;
			}
		}
		if (fdatasync(fd)) {
			printf("E2E-CRASH: fdatasync failed: %s\n",
			       strerror(errno));
			return 1;
		}
		printf("E2E-ACK: %llu\n", (unsigned long long)j);
		fflush(stdout);
	}
	printf("E2E-CRASH: done %llu\n", (unsigned long long)j);
	fflush(stdout);
	return 0;
}

/* Bytes of @img not explained by the first @acked writes and later ones. */
static uint64_t verify(const uint8_t *img, uint64_t bytes, uint64_t blk,
		       uint64_t seed, uint64_t count, uint64_t acked,
		       uint8_t *model, uint8_t *later, uint64_t *first)
{
	uint64_t j, i, bad = 0;

	fill(model, seed, INIT_WRITE, 0, bytes);
	memset(later, 0, bytes);
	for (j = 0; j < count; j++) {
		struct wr w = write_of(seed, j, bytes, blk);

		for (i = w.off; i < w.off + w.len; i++) {
			uint8_t b = byte_of(seed, j, i);

			if (j < acked)
				model[i] = b;
			else if (img[i] == b)
				later[i] = 1;
		}
	}
	for (i = 0; i < bytes; i++)
		if (img[i] != model[i] && !later[i] && !bad++)
			*first = i;
	return bad;
}

static int cmd_verify(const char *path, uint64_t seed, uint64_t blk,
		      uint64_t count, uint64_t acked)
{
	uint64_t bytes, bad, first = 0, i, unflushed = 0;
	uint8_t *img = read_all(path, &bytes), *model, *later, *copy;
	struct wr w;

	if (!img)
		return 2;
	model = malloc(bytes);
	later = malloc(bytes);
	copy = malloc(bytes);
	if (!model || !later || !copy || acked > count)
		return usage();
	bad = verify(img, bytes, blk, seed, count, acked, model, later,
		     &first);
	for (i = 0; i < bytes; i++)
		unflushed += img[i] != model[i];
	if (bad) {
		printf("blkcrash: LOST: %llu bytes hold neither their flushed "
		       "value nor a later write's; first at %llu: flushed %#x, "
		       "image %#x (%llu of %llu writes flushed)\n",
		       (unsigned long long)bad, (unsigned long long)first,
		       model[first], img[first], (unsigned long long)acked,
		       (unsigned long long)count);
		return 1;
	}
	printf("blkcrash: every byte of the %llu flushed writes is there; "
	       "%llu bytes hold later unflushed writes\n",
	       (unsigned long long)acked, (unsigned long long)unflushed);
	if (!acked)
		return 0;
	/* Undo write acked-1 (its bytes as the writes before it left them). */
	verify(img, bytes, blk, seed, acked - 1, acked - 1, model, later,
	       &first);
	memcpy(copy, img, bytes);
	w = write_of(seed, acked - 1, bytes, blk);
	memcpy(copy + w.off, model + w.off, w.len);
	bad = verify(copy, bytes, blk, seed, count, acked, model, later,
		     &first);
	printf("blkcrash: self-check: with flushed write %llu undone the "
	       "check %s (%llu bytes)\n", (unsigned long long)(acked - 1),
	       bad ? "fails, as it must" : "PASSES: it is vacuous",
	       (unsigned long long)bad);
	return bad ? 0 : 2;
}

static int cmd_probe(const char *dev, const char *op, uint64_t off,
		     uint64_t len, uint64_t seed)
{
	bool wr = !strcmp(op, "write");
	int fd = open(dev, (wr ? O_WRONLY : O_RDONLY) | O_DIRECT);
	uint8_t *want = malloc(len);
	ssize_t n;
	void *buf;

	if (fd < 0 || !want || posix_memalign(&buf, 4096, len)) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	fill(want, seed, 0, off, len);
	if (wr)
		memcpy(buf, want, len);
	n = wr ? pwrite(fd, buf, len, (off_t)off) :
		 pread(fd, buf, len, (off_t)off);
	if (n != (ssize_t)len) {
		printf("%s\n", n < 0 ? strerrorname_np(errno) : "short");
		return 1;
	}
	if (!wr && memcmp(buf, want, len)) {
		printf("mismatch\n");
		return 3;
	}
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t a, b, c, d;

	if (argc == 5 && !strcmp(argv[1], "init") && !num(argv[3], &a) &&
	    !num(argv[4], &b))
		return cmd_init(argv[2], a, b);
	if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "broken-ack"))) &&
	    !strcmp(argv[1], "write") && !num(argv[3], &a) &&
	    !num(argv[4], &b))
		return cmd_write(argv[2], a, b, argc == 6);
	if (argc == 7 && !strcmp(argv[1], "verify") && !num(argv[3], &a) &&
	    !num(argv[4], &b) && !num(argv[5], &c) && !num(argv[6], &d))
		return cmd_verify(argv[2], a, b, c, d);
	if (argc == 4 && !strcmp(argv[1], "delay") && !num(argv[2], &a) &&
	    !num(argv[3], &b)) {
		printf("%llu\n", (unsigned long long)(mix(a ^ 0xde1a7ull) %
						      (b + 1)));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "probe") && !num(argv[4], &a) &&
	    !num(argv[5], &b) && !num(argv[6], &c))
		return cmd_probe(argv[2], argv[3], a, b, c);
	return usage();
}
