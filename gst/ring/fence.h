/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fence: one interprocess CUDA event that orders a slot's copy (on the
 * producer's stream) before the consumers read the slot. Only the cuda
 * backend has fences; the host backend copies with memcpy and needs none.
 *
 * Producer side: cudaipc_fence_new() creates an event with
 * CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING and exports its 64-byte
 * handle (cuIpcGetEventHandle) once; cudaipc_fence_get_handle() gives it
 * for the SLOT message. After queueing a slot's copy on its stream, the
 * producer calls cudaipc_fence_record() on that stream and publishes the
 * frame without waiting.
 *
 * Consumer side: cudaipc_fence_open() opens a handle received in a SLOT
 * (cuIpcOpenEventHandle), once per slot per connection;
 * cudaipc_fence_wait_timeout() (cuEventQuery, polled) makes the calling
 * thread wait
 * until the work recorded last on the producer's stream is done, and
 * returns at once when it already is. A consumer waits before it hands out
 * a frame of that slot: the producer records before it sends the FRAME, and
 * records again only after every consumer released the slot, so the record
 * a consumer waits for is the one of its frame.
 *
 * Failures: every failure is a GError in CUDAIPC_ERROR with the CUresult's
 * name and text (CUDAIPC_ERROR_CUDA; CUDAIPC_ERROR_NOT_SUPPORTED for a
 * device of the host backend). Legacy CUDA IPC event handles name the
 * exporting process and can fail to open across PID namespaces
 * (containers) even where the fd-based memory handles work: a consumer
 * then goes on without events (design.md, GPU ordering).
 *
 * Lifetime: the producer's fence must outlive every use of the handles it
 * gave out (waiting on an opened event after its exporter destroyed it is
 * undefined), so the server keeps one fence per slot index for as long as
 * it runs, across ring rebuilds. A fence holds a reference on its device.
 *
 * Threads and contexts: new(), open() and free() make the device's context
 * current for their duration (push/pop), like device.h's calls. record(),
 * query() and wait() are the per-frame calls: record() and query() make
 * exactly one driver call, wait() one cuEventQuery per poll (one when the
 * copy is done when it is called, the usual case), and all expect the
 * device's context to be current on the calling thread already (the
 * caller pushed it, or keeps it pushed). A fence is
 * used by one thread at a time; free() accepts NULL.
 */
#pragma once

#include <glib.h>
#include "device/cuda-types.h"
#include "device/device.h"

G_BEGIN_DECLS

#define CUDAIPC_FENCE_HANDLE_SIZE CU_IPC_HANDLE_SIZE

typedef struct _CudaIpcFence CudaIpcFence;

/* Producer side: a new interprocess event on @dev (cuda backend only). */
CudaIpcFence *cudaipc_fence_new (CudaIpcDevice * dev, GError ** error);
/* The exported handle (CUDAIPC_FENCE_HANDLE_SIZE bytes) of a fence made by
 * new(); NULL for one made by open(). */
const guint8 *cudaipc_fence_get_handle (CudaIpcFence * fence);
/* Records the fence on @stream: it completes once the work queued on
 * @stream before it is done. */
gboolean cudaipc_fence_record (CudaIpcFence * fence, CUstream stream,
    GError ** error);
/* Without waiting: @done is TRUE when the last record has completed (or
 * there was none), FALSE while it is pending (cuEventQuery). */
gboolean cudaipc_fence_query (CudaIpcFence * fence, gboolean * done,
    GError ** error);

/* Consumer side: opens a handle another process exported. */
CudaIpcFence *cudaipc_fence_open (CudaIpcDevice * dev,
    const guint8 handle[CUDAIPC_FENCE_HANDLE_SIZE], GError ** error);
/* Waits on the host until the last record has completed (either side).
 * Blocks without a limit: for the producer's own fences. */
gboolean cudaipc_fence_wait (CudaIpcFence * fence, GError ** error);
/* Consumer side: like cudaipc_fence_wait() but polls (cuEventQuery: busy
 * for 20 us, then with short sleeps) and gives up after
 * @timeout_us with CUDAIPC_ERROR_TIMEOUT: a producer killed between
 * queueing a copy and its completion must not hang its consumers. One
 * query when the copy is already done; adds the calls it made to *@calls. */
gboolean cudaipc_fence_wait_timeout (CudaIpcFence * fence, gint64 timeout_us,
    guint * calls, GError ** error);

void cudaipc_fence_free (CudaIpcFence * fence);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcFence, cudaipc_fence_free);

G_END_DECLS
