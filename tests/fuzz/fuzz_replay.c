// SPDX-License-Identifier: Apache-2.0
/*
 * Replays inputs through a libFuzzer target for compilers without
 * libFuzzer: every file named on the command line, and every regular file
 * in a directory named there, goes through LLVMFuzzerTestOneInput() once.
 * Built with the tree's sanitizer flags, it re-checks a seed corpus.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run one file; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	uint8_t *data = NULL;
	long size;
	FILE *f;
	int ret = -1;

	f = fopen(path, "rb");
	if (!f)
		goto err;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto err_close;
	data = malloc(size ? (size_t)size : 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size)
		goto err_free;
	LLVMFuzzerTestOneInput(data, (size_t)size);
	ret = 0;
err_free:
	free(data);
err_close:
	fclose(f);
err:
	if (ret)
		fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
	return ret;
}

/* Run every regular file in @dir; the number run, or -1. */
static int replay_dir(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path)) {
			n = -1;
			break;
		}
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int i, n, total = 0;
	struct stat st;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "fuzz_replay: no such input %s\n",
				argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) :
					  (replay_file(argv[i]) ? -1 : 1);
		if (n < 0)
			return 1;
		total += n;
	}
	printf("fuzz_replay: %d inputs ran\n", total);
	return total ? 0 : 1;
}
