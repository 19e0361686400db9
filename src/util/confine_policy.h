/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allowlists behind confine.c: each thread class's filter is the union
 * of a few parts (the calls every thread makes, the control thread's, the
 * vCPU's, the I/O queue's, the console's, and in sanitizer builds the
 * sanitizer runtime's). Anything not listed takes the default action.
 */
#ifndef MICROVM_UTIL_CONFINE_POLICY_H
#define MICROVM_UTIL_CONFINE_POLICY_H

#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/confine.h"

/* Whether this is a sanitizer build, whose filters admit its runtime. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CONFINE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CONFINE_SANITIZER 1
#endif
#endif
#ifndef CONFINE_SANITIZER
#define CONFINE_SANITIZER 0
#endif

#define CONFINE_RULE_MAX_ARGS 2
#define CONFINE_MAX_PARTS 10

/*
 * A rule's action: the call traps into confine.c's SIGSYS handler, which
 * makes it in a narrower form (see confine_emulate() there) or treats it
 * as forbidden. With --seccomp=log the call is allowed as it stands.
 */
#define CONFINE_ACT_EMULATE 1u

/* One allowed call; with nargs, only when every comparison holds. */
struct confine_rule {
	int nr;          /* SCMP_SYS(name) */
	uint32_t action; /* 0: allow; CONFINE_ACT_EMULATE; SCMP_ACT_* */
	unsigned int nargs;
	struct {
		unsigned int arg;
		enum scmp_compare op;
		uint64_t a, b; /* MASKED_EQ: a is the mask, b the value */
	} cmp[CONFINE_RULE_MAX_ARGS];
};

struct confine_part {
	const char *name;
	const struct confine_rule *rules;
	size_t nr_rules;
	const unsigned long *ioctls; /* request numbers */
	size_t nr_ioctls;
};

/**
 * confine_policy_parts() - the parts whose union is @cls's allowlist.
 * Return: how many were stored in @parts (at most @max).
 */
size_t confine_policy_parts(enum confine_class cls,
			    const struct confine_part **parts, size_t max);

/**
 * confine_policy_api() - the API serves this VMM (--api-sock): main's
 * filter also takes a drive swap's calls (opening an existing image,
 * probing and locking it, re-pointing its rings).
 * Context: main thread, before confine_prepare().
 */
void confine_policy_api(bool on);

/**
 * confine_policy_vsock() - the machine has a virtio-vsock device: the
 * threads that start its worker (a vCPU's at DRIVER_OK, main's at a
 * resume) pass their filter on to it, so theirs must also admit the
 * worker's host-socket calls (the vsock list). Without a vsock device
 * they do not.
 * Context: main thread, before confine_prepare().
 */
void confine_policy_vsock(bool on);

/**
 * confine_policy_net() - the machine has a virtio-net device: the threads
 * that start its workers (a vCPU's at DRIVER_OK, main's at a resume) pass
 * their filter on to them, so theirs also admit the workers' calls (the
 * net list) and TUNSETOFFLOAD, which they make at DRIVER_OK.
 * Context: main thread, before confine_prepare().
 */
void confine_policy_net(bool on);

#endif
