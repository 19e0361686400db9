// SPDX-License-Identifier: Apache-2.0
/*
 * guarded_copy(): see guarded_copy.h. The thread arms a jump buffer and the
 * bounds of the copy; the SIGBUS handler jumps back when the faulting
 * address lies inside them. The handler runs with SA_NODEFER, so jumping
 * out of it leaves SIGBUS unblocked with no sigprocmask call (sigsetjmp
 * without a saved mask costs no system call per copy).
 */
#include "util/guarded_copy.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

struct guard {
	sigjmp_buf env;
	uintptr_t lo[2], hi[2]; /* destination and source, [lo, hi) */
	volatile sig_atomic_t armed;
};

static __thread struct guard guard;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_err;

static bool guard_hit(const struct guard *g, uintptr_t a)
{
	return (a >= g->lo[0] && a < g->hi[0]) ||
	       (a >= g->lo[1] && a < g->hi[1]);
}

static void guard_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = &guard;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)uc;
	if (g->armed && guard_hit(g, (uintptr_t)si->si_addr)) {
		g->armed = 0;
		siglongjmp(g->env, 1);
	}
	/* Not ours: what SIGBUS would have done without us. The fault
	 * repeats on return and now takes the default action. */
	sigaction(sig, &dfl, NULL);
}

#if defined(__SANITIZE_THREAD__)
#define GUARD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GUARD_TSAN 1
#endif
#endif

static void guard_install(void)
{
	struct sigaction sa = { .sa_sigaction = guard_sigbus,
				.sa_flags = SA_SIGINFO | SA_NODEFER };

#ifdef GUARD_TSAN
	/* ThreadSanitizer's memcpy and signal wrappers do not return a
	 * fault inside the copy to our handler: the process dies. Report
	 * the guard unavailable, so that callers copy by system call. */
	guard_err = -ENOTSUP;
	return;
#endif
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		guard_err = -errno;
}

int guarded_copy_init(void)
{
	pthread_once(&guard_once, guard_install);
	return guard_err;
}

void guarded_copy_thread(void)
{
	sigset_t bus;

	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
}

int guarded_copy(void *dst, const void *src, size_t len)
{
	struct guard *g = &guard;

	g->lo[0] = (uintptr_t)dst;
	g->hi[0] = (uintptr_t)dst + len;
	g->lo[1] = (uintptr_t)src;
	g->hi[1] = (uintptr_t)src + len;
	if (sigsetjmp(g->env, 0))
		return -EFAULT;
	/* The stores above before the handler can see the guard armed. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	g->armed = 1;
	memcpy(dst, src, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	g->armed = 0;
	return 0;
}
