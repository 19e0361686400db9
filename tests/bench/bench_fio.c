// SPDX-License-Identifier: Apache-2.0
/*
 * fio as the limit (bench_fio.h): builds the command line, reads fio's JSON
 * report through a pipe and picks the numbers out of the job's "read" or
 * "write" object. fio's report is a fixed layout (one job with
 * group_reporting), so a key search inside the right object suffices.
 */
#include "bench_fio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool fio_available(const char *fio)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "'%s' --version >/dev/null 2>&1", fio);
	return system(cmd) == 0;
}

/* The number after "key" : inside [from, end); false when absent. */
static bool json_num(const char *from, const char *end, const char *key,
		     double *out)
{
	char pat[64];
	const char *p;
	char *stop;

	snprintf(pat, sizeof(pat), "\"%s\" : ", key);
	p = strstr(from, pat);
	if (!p || p >= end)
		return false;
	*out = strtod(p + strlen(pat), &stop);
	return stop != p + strlen(pat);
}

static char *read_all(FILE *f)
{
	size_t cap = 65536, len = 0, n;
	char *buf = malloc(cap), *nb;

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 4096) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

int fio_run(const struct fio_job *j, struct fio_result *out)
{
	const char *dir = strstr(j->rw, "write") ? "write" : "read";
	char cmd[1024], sect[32];
	const char *s, *end, *clat;
	double p50, p99;
	char *buf;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "'%s' --name=limit --filename='%s' --ioengine=io_uring "
		 "--rw=%s --bs=%u --iodepth=%u --numjobs=%u --direct=%d "
		 "--norandommap --time_based --runtime=%ums "
		 "--group_reporting --output-format=json 2>&1",
		 j->fio, j->file, j->rw, j->bs, j->qd, j->jobs,
		 j->direct ? 1 : 0, j->ms);
	f = popen(cmd, "r");
	if (!f) {
		fprintf(stderr, "microvm-bench: cannot run %s\n", j->fio);
		return -1;
	}
	buf = read_all(f);
	st = pclose(f);
	if (!buf || st) {
		fprintf(stderr, "microvm-bench: fio failed (status %d): %.300s\n",
			st, buf ? buf : "");
		free(buf);
		return -1;
	}
	snprintf(sect, sizeof(sect), "\"%s\" : {", dir);
	s = strstr(buf, sect);
	end = s ? strstr(s, "\"write\" : {") : NULL;
	if (!end || end == s)
		end = buf + strlen(buf);
	clat = s ? strstr(s, "\"clat_ns\"") : NULL;
	if (!s || !clat || clat >= end ||
	    !json_num(s, end, "iops", &out->iops) ||
	    !json_num(clat, end, "50.000000", &p50) ||
	    !json_num(clat, end, "99.000000", &p99)) {
		fprintf(stderr, "microvm-bench: cannot parse fio's report: "
			"%.300s\n", buf);
		free(buf);
		return -1;
	}
	out->p50_us = p50 / 1000.0;
	out->p99_us = p99 / 1000.0;
	out->cores = json_num(buf, buf + strlen(buf), "usr_cpu", &p50) &&
		     json_num(buf, buf + strlen(buf), "sys_cpu", &p99) ?
			     (p50 + p99) / 100.0 : -1;
	free(buf);
	return 0;
}
