/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VM configuration: what to boot, how many vCPUs and how much RAM,
 * which disks, and where the API, log and metrics go. Filled by
 * cli_parse() and by the API's and the config file's Firecracker objects
 * (src/api/fc_config.c); read by main and the architecture code. Every
 * string in it is a heap copy owned by the config (config_free()).
 */
#ifndef MICROVM_CONFIG_H
#define MICROVM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "util/confine.h"
#include "util/ratelimit.h"

/* MICROVM_VERSION: the version --version and GET /version report, from
 * CMakeLists.txt's project(VERSION). Kata's Firecracker driver (fc.go)
 * parses the second word of the first line as a semantic version and
 * refuses anything below 0.21.1. */
#include "microvm_version.h"

#define CONFIG_MAX_CPUS 254
#define CONFIG_MAX_DISKS 16
#define CONFIG_DEFAULT_MEMORY (512ULL << 20)
#define CONFIG_DEFAULT_MEMORY_ARG "512M" /* the same, as --memory spells it */
#define CONFIG_MIN_MEMORY (16ULL << 20)
#define CONFIG_MAX_POLL_US 1000u /* --disk poll-us; BLK_POLL_MAX_US */
#define CONFIG_MAX_IRQ_HOLD_US 10000u /* --disk irq-hold-us; BLK_IRQ_HOLD_MAX_US */
#define CONFIG_MAX_IRQ_HOLD_COUNT 65535u /* --disk irq-hold-max */
#define CONFIG_MAX_QUEUES 64u        /* --disk queues */
#define CONFIG_MAX_QUEUE_SIZE 1024u  /* --disk queue-size */
/* Firecracker's defaults, taken where the API or a config file sets the
 * machine up (1 vCPU as ours). */
#define CONFIG_FC_DEFAULT_MEMORY (128ULL << 20)
#define CONFIG_FC_DEFAULT_MEMORY_ARG "128M"

enum disk_transport { DISK_TRANSPORT_PCI, DISK_TRANSPORT_MMIO };
enum config_cache { CONFIG_CACHE_NONE, CONFIG_CACHE_WRITEBACK, CONFIG_CACHE_UNSAFE };
/* engine=: who serves the queues (io_uring: the VMM's I/O threads). */
enum config_engine { CONFIG_ENGINE_URING, CONFIG_ENGINE_VHOST };

/* The logger's level (Firecracker's names; CONFIG_LOG_UNSET: not given). */
enum config_log_level {
	CONFIG_LOG_UNSET, CONFIG_LOG_OFF, CONFIG_LOG_ERROR, CONFIG_LOG_WARNING,
	CONFIG_LOG_INFO, CONFIG_LOG_DEBUG, CONFIG_LOG_TRACE,
};

struct disk_config {
	char *spec; /* the --disk argument, or the drive_id, for messages */
	char *drive_id;  /* the API's name: drive_id, or "diskN" for --disk */
	bool is_root;    /* is_root_device: first, and root= on the cmdline */
	char *partuuid;  /* root=PARTUUID=<this> instead of root=/dev/vda */
	bool io_async;   /* io_engine "Async" (both engines are io_uring) */
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

/* Who serves a vsock device's rx and tx queues. */
enum config_vsock_engine {
	CONFIG_VSOCK_HYBRID, /* the VMM, with Unix sockets at uds_path */
	CONFIG_VSOCK_VHOST,  /* the kernel's vhost_vsock: AF_VSOCK */
};

/*
 * --vsock / PUT /vsock: a virtio-vsock device whose host side is
 * Firecracker's hybrid vsock (Unix sockets at uds_path), or with
 * engine=vhost the kernel's vhost_vsock (no uds_path).
 */
struct config_vsock {
	bool set;            /* a vsock device is configured */
	uint64_t guest_cid;  /* 3 .. VSOCK_MAX_CID */
	char *uds_path;      /* hybrid: the host's socket; guest-initiated
			      * connections go to <uds_path>_<port>.
			      * vhost: NULL */
	enum config_vsock_engine engine;
	char *vsock_id;      /* Firecracker's (deprecated) vsock_id, kept for
			      * GET /vm/config; NULL: none given */
	enum disk_transport transport;
};

/* The longest uds_path: a Unix socket path holds 107 bytes, and a
 * guest-initiated connection goes to <uds_path>_<port> ("_4294967295"). */
#define CONFIG_VSOCK_MAX_UDS_PATH 96u

/* The largest guest CID (Firecracker's u32; 0-2 and -1 are reserved). */
#define CONFIG_VSOCK_MAX_CID 0xfffffffeULL
#define CONFIG_VSOCK_MIN_CID 3ULL

#define CONFIG_MAX_NETS 8
/* Queue pairs of one interface: what the device takes with its control
 * queue (NET_MAX_QUEUE_PAIRS, (VIRTIO_MAX_QUEUES - 1) / 2). */
#define CONFIG_MAX_NET_PAIRS 31u
/* A tap's name: IFNAMSIZ less its NUL. */
#define CONFIG_NET_MAX_TAP_NAME 15u

/*
 * --net / PUT /network-interfaces/{iface_id}: a virtio-net device on a
 * host tap (Firecracker's NetworkInterface, plus our queue pairs and
 * transport).
 */
struct config_net {
	char *iface_id;      /* Firecracker's iface_id; --net: id= or "netN" */
	char *host_dev_name; /* the tap: config_valid_tap_name() */
	uint8_t mac[6];      /* guest_mac, when mac_set */
	bool mac_set;        /* else config_net_mac() derives one */
	unsigned int queue_pairs; /* 1 .. CONFIG_MAX_NET_PAIRS; 0 (--net's
				   * default): one per vCPU, or one when
				   * the tap has no multi_queue */
	enum disk_transport transport;
	struct rl_config rx_rl, tx_rl; /* all zero: no limit */
	bool vhost;          /* engine=vhost: the kernel's vhost_net */
};

/*
 * mmds-config (PUT /mmds/config, the config file's "mmds-config"): the
 * metadata service on the named interfaces (src/mmds/mmds.h).
 */
struct config_mmds {
	bool set;
	unsigned int version;     /* 1 or 2 */
	uint32_t ipv4;            /* host order */
	bool imds_compat;
	char *ifaces[CONFIG_MAX_NETS]; /* iface_ids */
	unsigned int nr_ifaces;
};

struct vm_config {
	char *kernel;
	char *initrd;
	char *cmdline;
	char *console;  /* --console FILE; NULL: the console is stdout */
	unsigned int cpus;
	uint64_t memory;
	char *memory_arg;       /* --memory as typed, for messages */
	bool memory_set;        /* --memory given (else a mode's default) */
	bool smt;               /* two threads per core (machine-config smt,
				 * --cpus N,smt=on); config_check_smt() */
	bool track_dirty_pages; /* machine-config track_dirty_pages */
	bool memory_merge;      /* --memory ...,merge=on: KSM may merge RAM */
	unsigned int timeout; /* seconds, 0: none */
	bool stats;
	int verbose;
	enum confine_mode seccomp; /* zero: on */
	struct disk_config disks[CONFIG_MAX_DISKS];
	unsigned int nr_disks;
	struct config_vsock vsock;
	struct config_net nets[CONFIG_MAX_NETS];
	unsigned int nr_nets;

	/* The Firecracker-compatible API and process options. */
	char *api_sock;     /* --api-sock: serve the API there; NULL: none */
	char *config_file;  /* --config-file, applied after the command line */
	char *id;           /* --id: the instance id (1-64 of [A-Za-z0-9-]) */
	bool no_api;        /* --no-api */
	bool boot_timer;    /* --boot-timer */
	bool enable_pci;    /* --enable-pci: API drives default to pci */
	uint64_t api_max_payload; /* --http-api-max-payload-size; 0: default */
	uint64_t start_time_us;      /* --start-time-us (the jailer's) */
	uint64_t start_time_cpu_us;  /* --start-time-cpu-us */
	uint64_t parent_cpu_time_us; /* --parent-cpu-time-us */
	/* logger and metrics (PUT /logger, /metrics, or the flags) */
	char *log_path;
	enum config_log_level log_level;
	bool log_show_level;
	bool log_show_origin;
	char *log_module;
	char *metrics_path;
	char *metadata;     /* --metadata FILE: the MMDS data store's start */
	char *restore;      /* --restore DIR: DIR/state and DIR/memory */
	char *restore_drives[CONFIG_MAX_DISKS]; /* --restore-drive args */
	unsigned int nr_restore_drives;
	char *rebase_base;  /* --base-file: a memory file to write a Diff on */
	char *rebase_diff;  /* --diff-file: the Diff's memory file */
	struct config_mmds mmds;
	uint64_t mmds_size_limit; /* --mmds-size-limit; 0: the API's payload
				   * limit (Firecracker's default) */
	bool metrics_emit_id;
};

/**
 * config_check_smt() - Firecracker's rule for SMT: @cpus must be 1 or
 * even with @smt, and aarch64 has no SMT to offer.
 * Return: 0; -EINVAL for @smt with an odd @cpus above 1; -EOPNOTSUPP for
 * @smt on aarch64. Context: any thread; pure.
 */
int config_check_smt(unsigned int cpus, bool smt);

/**
 * config_parse_mac() - "AA:BB:CC:DD:EE:FF" (six pairs of hex digits, any
 * case, ':' between) into @mac.
 * Return: 0; -EINVAL when it is not that; -EADDRNOTAVAIL for an address
 * a guest cannot have (multicast, or all zero). Context: any thread; pure.
 */
int config_parse_mac(const char *s, uint8_t mac[6]);

/**
 * config_valid_tap_name() - can @s name a network interface: 1 to
 * CONFIG_NET_MAX_TAP_NAME bytes, no '/', ':' or white space, not "." or
 * ".." (the kernel's dev_valid_name()). Context: any thread; pure.
 */
bool config_valid_tap_name(const char *s);

/**
 * config_net_mac() - the MAC the guest gets on @n: guest_mac if given,
 * else 06:00 and four bytes of a hash of the iface_id (a locally
 * administered unicast address, the same for the same id on every run).
 * Context: any thread; pure.
 */
void config_net_mac(const struct config_net *n, uint8_t mac[6]);

/** config_mmds_on_net() - does mmds-config name interface @iface_id? */
bool config_mmds_on_net(const struct vm_config *cfg, const char *iface_id);

/** config_net_index() - the index of interface @iface_id in @cfg, or -1. */
int config_net_index(const struct vm_config *cfg, const char *iface_id);

/**
 * config_net_clash() - does another interface of @cfg than the one at
 * @self (-1: none) use @n's tap or guest MAC already?
 * @field: set to the field in clash ("host_dev_name", "guest_mac")
 * Return: that interface's index, or -1. Context: any thread; pure.
 */
int config_net_clash(const struct vm_config *cfg, const struct config_net *n,
		     int self, const char **field);

/** config_net_free() - release the strings of @n and zero it. */
void config_net_free(struct config_net *n);

/** config_net_copy() - deep-copy one interface. Return: 0 or -ENOMEM. */
int config_net_copy(struct config_net *dst, const struct config_net *src);

/** config_disk_free() - release the strings of @d and zero it. */
void config_disk_free(struct disk_config *d);

/** config_free() - release every string @cfg owns and zero it. */
void config_free(struct vm_config *cfg);

/**
 * config_copy() - deep-copy @src into @dst (whose old contents are not
 * freed). Return: 0 or -ENOMEM (then @dst holds nothing to free).
 * Context: any thread; reads @src only.
 */
int config_copy(struct vm_config *dst, const struct vm_config *src);

/**
 * config_disk_copy() - deep-copy one disk. Return: 0 or -ENOMEM.
 */
int config_disk_copy(struct disk_config *dst, const struct disk_config *src);

#endif
