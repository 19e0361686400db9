/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-thread deferred calls: between defer_call_begin() and the matching
 * defer_call_end(), defer_call(fn, opaque) only records the pair; each
 * distinct pair runs once, at the outermost end, in the order first deferred.
 * This batches work such as interrupt injection: however many requests of a
 * queue complete in one batch, the guest is signalled once.
 *
 * Usage sketch (one I/O thread per queue):
 *
 *	static void queue_notify(void *opaque)
 *	{
 *		struct blk_queue *q = opaque;
 *
 *		evfd_signal(q->irqfd);
 *	}
 *
 *	defer_call_begin();
 *	while (backend_next_completion(q, &req)) {
 *		virtq_push(q->vq, req.head, req.len);
 *		defer_call(queue_notify, q);	// recorded once per batch
 *	}
 *	defer_call_end();			// queue_notify(q) runs here
 *
 * Sections nest (a helper may open its own): only the outermost end runs
 * the calls. Up to DEFER_CALL_MAX distinct pairs are held per thread; a
 * further new pair runs at once (ahead of the pairs already held), which
 * costs an extra call but loses nothing. While the outermost end is running
 * the recorded calls the section is already closed, so a callback that calls
 * defer_call() itself has that call run at once, and a callback may open and
 * close a section of its own.
 */
#ifndef MICROVM_DEFER_CALL_H
#define MICROVM_DEFER_CALL_H

/* Distinct (fn, opaque) pairs one thread can hold inside a section. */
#define DEFER_CALL_MAX 64

/**
 * defer_call_begin() - open (or nest) a section on the calling thread.
 * Context: any thread; each thread has its own sections.
 */
void defer_call_begin(void);

/**
 * defer_call_end() - close the innermost section.
 *
 * Closing the outermost section runs every recorded call once, in the order
 * first deferred, then forgets them. Calling it without an open section is a
 * programming error (assert).
 *
 * Context: the thread that called defer_call_begin().
 */
void defer_call_end(void);

/**
 * defer_call() - run @fn(@opaque) now or at the end of the open section.
 * @fn: function to call
 * @opaque: its argument; the pair (@fn, @opaque) is what is collapsed
 *
 * Outside any section @fn runs at once. Inside one, the pair is recorded
 * unless it already is; when DEFER_CALL_MAX pairs are held, a new pair runs
 * at once instead.
 *
 * Context: any thread.
 */
void defer_call(void (*fn)(void *), void *opaque);

#endif
