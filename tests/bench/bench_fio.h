/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The limit microvm-bench compares against: fio with its io_uring engine on
 * the same file, block size, depth and job count (one job per queue), run
 * in the same process run, its JSON report parsed for IOPS and completion
 * latency percentiles.
 */
#ifndef MICROVM_BENCH_FIO_H
#define MICROVM_BENCH_FIO_H

#include <stdbool.h>
#include <stdint.h>

struct fio_job {
	const char *fio;   /* the fio binary */
	const char *file;
	const char *rw;    /* fio's rw=: randread, randwrite, read */
	uint32_t bs;
	unsigned int qd;   /* iodepth */
	unsigned int jobs; /* numjobs */
	bool direct;
	unsigned int ms;   /* time_based runtime */
};

struct fio_result {
	double iops;
	double p50_us, p99_us; /* clat percentiles */
	double cores;          /* (usr_cpu + sys_cpu) / 100: the CPUs fio's
				* process kept busy, its io-wq workers
				* included; < 0 when the report has none */
};

/**
 * fio_available() - can @fio be run (fio --version succeeds)?
 * Return: true when it can. Context: startup.
 */
bool fio_available(const char *fio);

/**
 * fio_run() - run one fio job and parse its JSON report.
 * Return: 0, or -1 with one line on stderr saying what failed.
 * Context: main thread.
 */
int fio_run(const struct fio_job *j, struct fio_result *out);

#endif
