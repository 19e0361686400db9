/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VM configuration the command line produces: what to boot, how many
 * vCPUs and how much RAM, which disks. Filled by cli_parse(), read by main
 * and the architecture code; nothing in it is touched after startup.
 */
#ifndef MICROVM_CONFIG_H
#define MICROVM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "util/confine.h"
#include "util/ratelimit.h"

#define CONFIG_MAX_CPUS 254
#define CONFIG_MAX_DISKS 16
#define CONFIG_DEFAULT_MEMORY (512ULL << 20)
#define CONFIG_DEFAULT_MEMORY_ARG "512M" /* the same, as --memory spells it */
#define CONFIG_MIN_MEMORY (16ULL << 20)
#define CONFIG_MAX_POLL_US 1000u /* --disk poll-us; BLK_POLL_MAX_US */
#define CONFIG_MAX_IRQ_HOLD_US 10000u /* --disk irq-hold-us; BLK_IRQ_HOLD_MAX_US */
#define CONFIG_MAX_IRQ_HOLD_COUNT 65535u /* --disk irq-hold-max */

enum disk_transport { DISK_TRANSPORT_PCI, DISK_TRANSPORT_MMIO };
enum config_cache { CONFIG_CACHE_NONE, CONFIG_CACHE_WRITEBACK, CONFIG_CACHE_UNSAFE };
/* engine=: who serves the queues (io_uring: the VMM's I/O threads). */
enum config_engine { CONFIG_ENGINE_URING, CONFIG_ENGINE_VHOST };

struct disk_config {
	const char *spec; /* the --disk argument as given, for messages */
	char *path;
	bool readonly;
	char *serial;       /* NULL: derived from the image */
	enum config_cache cache;
	bool cache_set;          /* cache= given; else the default */
	bool snapshot;           /* snapshot=on: writes go to a throwaway
				  * overlay, the image is never written */
	enum disk_transport transport;
	unsigned int queues;     /* 0: default */
	unsigned int queue_size; /* 0: default */
	bool defer_off;          /* defer=off: signal per completion */
	bool coalesce_off;       /* irq-coalesce=off (mmio): an interrupt
				  * per notification, even while one is
				  * unacknowledged */
	bool poll_set;           /* poll-us given; else the default */
	unsigned int poll_us;    /* 0: no polling */
	unsigned int irq_hold_us;  /* 0: notifications are not held */
	unsigned int irq_hold_max; /* 0: the queue size */
	enum config_engine engine;
	bool defer_set;          /* defer= given */
	struct rl_config rl;     /* rate limits; all zero: none */
};

struct vm_config {
	const char *kernel;
	const char *initrd;
	const char *cmdline;
	const char *console;  /* --console FILE; NULL: the console is stdout */
	unsigned int cpus;
	uint64_t memory;
	const char *memory_arg; /* --memory as typed, for messages */
	bool memory_merge;      /* --memory ...,merge=on: KSM may merge RAM */
	unsigned int timeout; /* seconds, 0: none */
	bool stats;
	int verbose;
	enum confine_mode seccomp; /* zero: on */
	struct disk_config disks[CONFIG_MAX_DISKS];
	unsigned int nr_disks;
};

#endif
