/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pools cuipcsink proposes upstream: each buffer is a slot of the
 * ring, lent by cudaipc_server_acquire_in_place(), so that upstream writes
 * its frame where consumers read it and render() only publishes it
 * (docs/design.md, Writing in place). With the host backend the pool is a
 * plain GstBufferPool of system memory; with the cuda backend and
 * GStreamer >= 1.24 it is a GstCudaBufferPool (a subclass registered at
 * run time over libgstcuda, gstcuda.h) whose buffers are GstCudaMemory
 * wrapping the slots, which nvcodec's elements take as their own.
 *
 * acquire() waits for a free slot as the sink's on-full and full-timeout
 * say (set_wait(); a changed setting applies within 100 ms to a wait in
 * progress), and until upstream flushes the pool (a source that stops does)
 * or the sink stops. Where no slot can be lent (no ring yet, a ring about
 * to be replaced, every slot held until the time limit, on-full=drop with
 * none free), it hands out plain system memory instead, which render()
 * copies as before: upstream never waits longer than the sink would, and a
 * frame is dropped, or not, by render() alone. Buffers are not reused: each
 * goes when upstream lets go of it, and its slot with it.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "producer/server.h"

G_BEGIN_DECLS

#define CUDAIPC_TYPE_SLOT_POOL (cudaipc_slot_pool_get_type ())
G_DECLARE_FINAL_TYPE (CudaIpcSlotPool, cudaipc_slot_pool, CUDAIPC, SLOT_POOL,
    GstBufferPool);

/* A pool lending slots of @server (host backend), which it keeps a
 * reference on. Configure it as any video pool (caps, size, the video
 * meta option). */
GstBufferPool *cudaipc_slot_pool_new (CudaIpcServer * server);
/* The cuda backend's pool of @server's slots, a GstCudaBufferPool of the
 * GstCudaContext @ctx (whose device is the ring's), for the caps of the
 * allocation @query, added to it: a reference, or NULL where libgstcuda
 * cannot wrap device memory (GStreamer < 1.24) or the caps are not raw
 * video. Where no slot can be lent its buffers are GstCudaMemory of
 * @ctx, which render() copies. */
GstBufferPool *cudaipc_slot_pool_offer_cuda (CudaIpcServer * server,
    GObject * ctx, GstQuery * query);
/* TRUE: @pool is one of the two pools above. */
gboolean cudaipc_slot_pool_is_ours (GstBufferPool * pool);

/* A pool of @server's slots for the caps of the allocation @query, added to
 * it (with the video meta option): a reference, or NULL where the caps
 * are not raw video. */
GstBufferPool *cudaipc_slot_pool_offer (CudaIpcServer * server,
    GstQuery * query);

/* The in-place pool a sink @element of @server's slots, on @backend's
 * device @device_id, proposes for the allocation @query, added to it: the
 * host backend's (cudaipc_slot_pool_offer()); or, for caps of CUDA memory
 * where libgstcuda can wrap device memory, the cuda backend's in the
 * GstCudaContext upstream writes with (nvcodec's elements take no other),
 * which @cuda_ctx holds, or else is asked of the pipeline into. A
 * reference, or NULL where none fits: every frame is then copied. The
 * element's thread of the query. */
GstBufferPool *cudaipc_slot_pool_propose (GstElement * element,
    CudaIpcServer * server, CudaIpcBackend backend, gint device_id,
    GObject ** cuda_ctx, GstQuery * query);

/* @wait: on-full=wait, until @timeout_ms (0: as long as it takes); else
 * no wait. */
void cudaipc_slot_pool_set_wait (GstBufferPool * pool, gboolean wait,
    guint timeout_ms);

/* The ticket of the slot @buf is, or NULL: @buf is not one memory of a
 * slot this pool lent, untouched (offset 0, the whole frame). */
CudaIpcSlotTicket *cudaipc_slot_pool_buffer_ticket (GstBuffer * buf);
/* TRUE: @buf is this pool's plain memory, handed out after waiting for a
 * slot as long as on-full allows: render() need not wait again. */
gboolean cudaipc_slot_pool_buffer_waited (GstBuffer * buf);

G_END_DECLS
