/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the two pools of ring slots share (slot-pool.h): the host backend's
 * pool of system memory (slot-pool.c) and the cuda backend's, a
 * GstCudaBufferPool of GstCudaMemory over the slots (slot-pool-cuda.c).
 * Each pool embeds a CudaIpcSlotLender; only the memory it wraps a slot
 * in, and the memory it hands out where it lends none, differ.
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
 * acquire, release, flush) over the pool's lender; each pool adds its
 * finalize. acquire() lends a slot of the ring (the buffer that had it
 * last, where it came back whole, else one @wrap makes), or else (no
 * ring that fits, every slot held as long as on-full allows) @plain's
 * memory, marked as waited for where it was. */
void cudaipc_slot_lender_class_init (GstBufferPoolClass * klass);
/* Configures @pool (taken) for the caps of the allocation @query and adds
 * it there; a reference, or NULL (not raw video, refused). */
GstBufferPool *cudaipc_slot_lender_offer (GstBufferPool * pool,
    GstQuery * query);

/* slot-pool-cuda.c: the lender of @pool where it is the cuda backend's
 * pool, else NULL. */
CudaIpcSlotLender *cudaipc_slot_pool_cuda_lender (GstBufferPool * pool);

G_END_DECLS
