/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Command-line parsing into struct vm_config. Every rejected value gets
 * one message naming the option and the value; nothing here exits.
 */
#ifndef MICROVM_CLI_H
#define MICROVM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/config.h"

/*
 * The default kernel command lines (see cli_parse()): the console alone,
 * or with --disk and no --initrd also the root on the first disk.
 */
/* The console UART: COM1 on x86_64, the PL011 on arm64. */
#ifdef __aarch64__
#define CLI_CMDLINE_CONSOLE "console=ttyAMA0"
#else
#define CLI_CMDLINE_CONSOLE "console=ttyS0"
#endif
#define CLI_CMDLINE_ROOT_RW CLI_CMDLINE_CONSOLE " root=/dev/vda rw"
#define CLI_CMDLINE_ROOT_RO CLI_CMDLINE_CONSOLE " root=/dev/vda ro"

enum cli_result {
	CLI_RUN,   /* config is complete: boot it */
	CLI_EXIT,  /* --help/--version printed: exit 0 */
	CLI_ERROR, /* message in err: exit non-zero */
};

/**
 * cli_parse() - parse argv into @cfg.
 * @cfg: zeroed config; every string in it is a heap copy that cli_free()
 *       releases (also after CLI_ERROR)
 * @err/@errlen: the user-facing message for CLI_ERROR
 *
 * With --kernel and without --cmdline, cfg->cmdline is CLI_CMDLINE_CONSOLE,
 * or with at least one --disk and no --initrd CLI_CMDLINE_ROOT_RW
 * (CLI_CMDLINE_ROOT_RO when the first disk is readonly=on): the root file
 * system is on vda. Each --disk gets the drive_id "diskN" (N from 0).
 * --config-file is applied last (fc_load_config_file()): its boot-source
 * replaces --kernel/--initrd/--cmdline, its drives come after the --disk
 * ones (fc_finalize_config() moves a root drive first). Without --kernel,
 * cfg->kernel may be NULL when --api-sock is set (the API supplies it),
 * and cfg->cmdline NULL (Firecracker's default at fc_finalize_config()).
 * --version prints "microvm v" MICROVM_VERSION " (git REVISION)".
 *
 * Return: a cli_result.  Context: main thread, startup.
 */
enum cli_result cli_parse(int argc, char **argv, struct vm_config *cfg,
			  char *err, size_t errlen);

/** cli_free() - release what cli_parse() allocated in @cfg (config_free()). */
void cli_free(struct vm_config *cfg);

/**
 * cli_parse_size() - parse "512M", "2G", "1048576K", "64" (MiB).
 * Return: 0 or -EINVAL (not a size) / -ERANGE (overflows 64 bits).
 */
int cli_parse_size(const char *s, uint64_t *out);

/**
 * cli_parse_disk() - parse one --disk argument
 * PATH[,readonly=on|off][,serial=ID][,cache=none|writeback|unsafe]
 *     [,transport=pci|mmio][,queues=N][,queue-size=N]
 * Return: 0 or -EINVAL with a message naming the bad key or value.
 */
int cli_parse_disk(const char *spec, struct disk_config *d, char *err,
		   size_t errlen);

/**
 * cli_net_option() - one --net argument
 * tap=NAME[,id=ID][,mac=AA:BB:CC:DD:EE:FF][,queues=N][,transport=pci|mmio]
 * added to @cfg->nets: id defaults to the first free "netN", queues to 1,
 * transport to pci; the tap, id and MAC must be no other interface's; at
 * most CONFIG_MAX_NETS.
 * Return: 0, or -EINVAL/-ENOMEM with one message naming the argument and
 * the bad value; @cfg unchanged on error. Context: startup.
 */
int cli_net_option(const char *arg, struct vm_config *cfg, char *err,
		   size_t errlen);

/** cli_usage() - the --help text. */
const char *cli_usage(void);

#endif
