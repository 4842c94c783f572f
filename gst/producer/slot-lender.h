/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the two pools of ring slots share (slot-pool.h): the lending of
 * slots to upstream. The host backend's pool of system memory
 * (slot-pool.c) and the cuda backend's, a GstCudaBufferPool of
 * GstCudaMemory over the slots (slot-pool-cuda.c), each embed a
 * CudaIpcSlotLender and sit above this file: only the memory a pool wraps
 * a slot in, and the memory it hands out where it lends none, differ.
 * Nothing here calls a pool's file; a pool's class registers where its
 * lender lies in an instance, and cudaipc_slot_lender_of() finds it.
 *
 * Threads: acquire() runs on upstream's thread, waiting for a slot as
 * set_wait() says (atomics, set from any thread); a buffer is released on
 * whichever thread lets go of it last. The spare buffers are under the
 * lender's lock, which is never held while a memory is freed (its free
 * may take the server's lock).
 *
 * Ownership: the lender holds a reference on the server. A slot's memory
 * holds its ticket (server.h) and a reference on its ring for as long as
 * it lives, so the slot stays mapped while anybody has the memory; a
 * buffer that came back whole gives its ticket back and is kept, spare,
 * for its slot's next lending.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "producer/server.h"

G_BEGIN_DECLS

/* A memory of @lender->size bytes over @block, a slot's, which frees
 * @hold with @notify when it goes; NULL on failure (@hold is the
 * caller's then). */
typedef GstMemory *(*CudaIpcSlotWrapFunc) (GstBufferPool * pool,
    CudaIpcBlock * block, gpointer hold, GDestroyNotify notify);
/* A memory of @lender->size bytes of the pool's own kind, not a slot. */
typedef GstMemory *(*CudaIpcSlotPlainFunc) (GstBufferPool * pool);
/* Whether a slot's memory, given back, may be lent again as it is (the
 * cuda pool's: nothing of a transfer pending in it). */
typedef gboolean (*CudaIpcSlotReusableFunc) (GstMemory * mem);

typedef struct
{
  CudaIpcServer *server;        /* a reference */
  GstVideoInfo info;
  guint size;
  gboolean video_meta;
  gint wait;                    /* atomic */
  guint timeout_ms;             /* atomic */
  CudaIpcSlotWrapFunc wrap;
  CudaIpcSlotPlainFunc plain;
  CudaIpcSlotReusableFunc reusable;     /* NULL: any */
  /* buffers of slots given back, each kept for its slot's next lending,
   * so that its memory is not wrapped again: under @lock */
  GMutex lock;
  GPtrArray *spare;
} CudaIpcSlotLender;

void cudaipc_slot_lender_init (CudaIpcSlotLender * lender,
    CudaIpcServer * server, CudaIpcSlotWrapFunc wrap,
    CudaIpcSlotPlainFunc plain, CudaIpcSlotReusableFunc reusable);
void cudaipc_slot_lender_clear (CudaIpcSlotLender * lender);
/* Reads @config's caps, size and options; sets its params to what the
 * pool lends (its size, no buffers ahead). FALSE: not raw video. */
gboolean cudaipc_slot_lender_configure (CudaIpcSlotLender * lender,
    GstBufferPool * pool, GstStructure * config);

/* Sets the vfuncs both pools share (options, config, start, stop,
 * acquire, release, flush) over the pool's lender, which lies
 * @lender_offset bytes into each instance of @klass's type (registered
 * here, for cudaipc_slot_lender_of()); each pool adds its finalize.
 * acquire() lends a slot of the ring (the buffer that had it last, where
 * it came back whole, else one @wrap makes), or else (no ring that fits,
 * every slot held as long as on-full allows) @plain's memory, marked as
 * waited for where it was. In the pool's class_init, at most two pool
 * types. */
void cudaipc_slot_lender_class_init (GstBufferPoolClass * klass,
    gsize lender_offset);
/* The lender of @pool, a pool of either kind, or NULL (another pool,
 * NULL). Any thread. */
CudaIpcSlotLender *cudaipc_slot_lender_of (GstBufferPool * pool);
/* Configures @pool (taken) for the caps of the allocation @query and adds
 * it there; a reference, or NULL (not raw video, refused). */
GstBufferPool *cudaipc_slot_lender_offer (GstBufferPool * pool,
    GstQuery * query);

/* See cudaipc_slot_pool_set_wait(). */
void cudaipc_slot_lender_set_wait (CudaIpcSlotLender * lender,
    gboolean wait, guint timeout_ms);
/* See cudaipc_slot_pool_buffer_ticket() and _buffer_waited(). */
CudaIpcSlotTicket *cudaipc_slot_lender_buffer_ticket (GstBuffer * buf);
gboolean cudaipc_slot_lender_buffer_waited (GstBuffer * buf);

G_END_DECLS
