/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fence page: GPU ordering that needs nothing shared between producer
 * and consumer but the socket (docs/design.md, GPU ordering). One memfd
 * page (CUDAIPC_FENCE_PAGE_SIZE bytes, sealed against shrinking) holds one
 * 64-bit word per slot index, at 8 * slot, little-endian as the CPU stores
 * it. It travels as a file descriptor with RING.
 *
 * Producer side: cudaipc_fence_page_new() makes the page, maps it and, on
 * the cuda backend, registers it with the device (cuMemHostRegister,
 * DEVICEMAP) so that a stream can write it; then it seals the memfd with
 * F_SEAL_FUTURE_WRITE, so that every consumer it is sent to can only read
 * it (a kernel without the seal, before Linux 5.1, gets no page:
 * CUDAIPC_ERROR_NOT_SUPPORTED). The producer's mapping, and the device's
 * registration of it, were made before the seal and stay writable. After
 * queueing a slot's copy on its stream, the producer queues
 * cudaipc_fence_page_signal() with the frame's number (its FRAME's seq)
 * on that same stream: the device writes the word once the copy is done
 * (cuStreamWriteValue64, whose default flags put a system-wide memory
 * barrier before the write). The host backend stores the word on the CPU
 * after its memcpy. Each ring has a
 * page of its own (slot N of one ring and slot N of the next must not
 * share a word: a consumer behind on its frames still reads the old
 * one); the numbers only grow, and one is never used twice (server.h: an
 * aborted frame's number is skipped).
 *
 * Consumer side: cudaipc_fence_page_open() checks the fd a producer sent
 * before anything is mapped (a regular file, sealed with F_SEAL_SHRINK so
 * that it can never be cut under the mapping and with F_SEAL_FUTURE_WRITE
 * so that no other consumer can write it, at least a page long) and maps
 * it read-only. cudaipc_fence_page_check() reads the slot's word on the
 * CPU once, and cudaipc_fence_page_wait() until it reaches the frame's
 * number: no driver call, nothing needed from the consumer's device. A
 * consumer whose wait must end at its caller's deadline or cancel, not
 * at a fixed time-out, polls with check() and sleeps its own way between.
 * The word is the producer's to write and is not trusted: a value past
 * the frame's number (the slot was rewritten while this consumer held
 * it), or lower than one already seen for that slot, is a protocol error;
 * a word that does not reach the number within the timeout is
 * CUDAIPC_ERROR_TIMEOUT.
 *
 * Threads: signal() is for the producer thread (with the device's context
 * current on the cuda backend: the caller pushed it); check() and wait()
 * for one consumer thread at a time; peek() from any thread.
 */
#pragma once

#include <glib.h>
#include "device/cuda-types.h"
#include "device/device.h"

G_BEGIN_DECLS

typedef struct _CudaIpcFencePage CudaIpcFencePage;

/* Producer side: a new page for @dev. Fails with CUDAIPC_ERROR_NOT_SUPPORTED
 * on a device without 64-bit stream memory operations or a kernel without
 * F_SEAL_FUTURE_WRITE, CUDAIPC_ERROR_CUDA where registering the page
 * fails, CUDAIPC_ERROR_IO for the memfd. */
CudaIpcFencePage *cudaipc_fence_page_new (CudaIpcDevice * dev,
    GError ** error);
/* The page's fd (the producer's, borrowed: sent with each RING). */
int cudaipc_fence_page_get_fd (CudaIpcFencePage * page);
/* Sets @slot's word to @value once the work queued on @stream before it is
 * done (cuda backend), or at once (host backend, @stream NULL). One driver
 * call on the cuda backend, added to *@calls. */
gboolean cudaipc_fence_page_signal (CudaIpcFencePage * page, guint slot,
    guint64 value, CUstream stream, guint * calls, GError ** error);
/* Sets @slot's word to @value now, from the CPU, on either backend: for a
 * slot whose frame is complete already (written in place by upstream, which
 * waited for its own work), where no write that signal() queued on a
 * stream for that word is still to land. */
void cudaipc_fence_page_store (CudaIpcFencePage * page, guint slot,
    guint64 value);

/* Consumer side: checks and maps the page behind @fd, which it takes (it
 * is closed whatever the outcome). CUDAIPC_ERROR_INVALID for an fd that
 * fails the checks, CUDAIPC_ERROR_IO where mapping fails. */
CudaIpcFencePage *cudaipc_fence_page_open (int fd, GError ** error);
/* Reads @slot's word once: 1 where it is @value, 0 where it is below, -1
 * (CUDAIPC_ERROR_PROTOCOL) where it is past @value or went back. */
gint cudaipc_fence_page_check (CudaIpcFencePage * page, guint slot,
    guint64 value, GError ** error);
/* Waits on the CPU until @slot's word is @value: polls busily for a few
 * microseconds, then with short sleeps, for at most @timeout_us. */
gboolean cudaipc_fence_page_wait (CudaIpcFencePage * page, guint slot,
    guint64 value, gint64 timeout_us, GError ** error);

/* Either side: @slot's word now. */
guint64 cudaipc_fence_page_peek (CudaIpcFencePage * page, guint slot);

void cudaipc_fence_page_free (CudaIpcFencePage * page);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcFencePage, cudaipc_fence_page_free);

G_END_DECLS
