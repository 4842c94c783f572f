/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host backend's pool of ring slots for upstream, which pool a sink
 * proposes, and what it calls on a pool of either kind (slot-pool.h); the
 * lending itself is slot-lender.c's, the cuda pool slot-pool-cuda.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/slot-pool.h"
#include "producer/slot-lender.h"
#include "buffers/gstcuda.h"
#include "ring/block.h"
#include "common/debug.h"

struct _CudaIpcSlotPool
{
  GstBufferPool parent;

  CudaIpcSlotLender lender;
};

G_DEFINE_TYPE (CudaIpcSlotPool, cudaipc_slot_pool, GST_TYPE_BUFFER_POOL);

/* The host backend's pool */

static GstMemory *
host_slot_memory (GstBufferPool * bpool, CudaIpcBlock * block, gpointer hold,
    GDestroyNotify notify)
{
  return gst_memory_new_wrapped (0,
      GSIZE_TO_POINTER (cudaipc_block_get_ptr (block)),
      cudaipc_block_get_size (block), 0, CUDAIPC_SLOT_POOL (bpool)->lender.size,
      hold, notify);
}

static GstMemory *
host_plain_memory (GstBufferPool * bpool)
{
  return gst_allocator_alloc (NULL, CUDAIPC_SLOT_POOL (bpool)->lender.size,
      NULL);
}

static void
slot_pool_finalize (GObject * object)
{
  CudaIpcSlotPool *pool = CUDAIPC_SLOT_POOL (object);

  cudaipc_slot_lender_clear (&pool->lender);
  G_OBJECT_CLASS (cudaipc_slot_pool_parent_class)->finalize (object);
}

static void
cudaipc_slot_pool_class_init (CudaIpcSlotPoolClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  gobject_class->finalize = slot_pool_finalize;
  cudaipc_slot_lender_class_init (pool_class,
      G_STRUCT_OFFSET (CudaIpcSlotPool, lender));
}

static void
cudaipc_slot_pool_init (CudaIpcSlotPool * pool)
{
}

GstBufferPool *
cudaipc_slot_pool_new (CudaIpcServer * server)
{
  CudaIpcSlotPool *pool;

  g_return_val_if_fail (server != NULL, NULL);

  pool = g_object_new (CUDAIPC_TYPE_SLOT_POOL, NULL);
  gst_object_ref_sink (pool);
  cudaipc_slot_lender_init (&pool->lender, server, host_slot_memory,
      host_plain_memory, NULL);
  return GST_BUFFER_POOL (pool);
}

GstBufferPool *
cudaipc_slot_pool_offer (CudaIpcServer * server, GstQuery * query)
{
  return cudaipc_slot_lender_offer (cudaipc_slot_pool_new (server), query);
}

GstBufferPool *
cudaipc_slot_pool_propose (GstElement * element, CudaIpcServer * server,
    CudaIpcBackend backend, gint device_id, GObject ** cuda_ctx,
    GstQuery * query)
{
  GstCaps *caps = NULL;
  GstCapsFeatures *features;

  g_return_val_if_fail (GST_IS_ELEMENT (element), NULL);
  g_return_val_if_fail (server != NULL, NULL);
  g_return_val_if_fail (cuda_ctx != NULL, NULL);

  if (backend == CUDAIPC_BACKEND_HOST)
    return cudaipc_slot_pool_offer (server, query);

  gst_query_parse_allocation (query, &caps, NULL);
  features = caps ? gst_caps_get_features (caps, 0) : NULL;
  if (features == NULL || !gst_caps_features_contains (features,
          "memory:CUDAMemory") || !cudaipc_gstcuda_can_wrap ())
    return NULL;
  /* the pipeline's context of our device: upstream's, asked of it */
  if (!cudaipc_gstcuda_ensure_context (element, device_id, cuda_ctx) ||
      cudaipc_gstcuda_context_device (*cuda_ctx) != device_id) {
    GST_DEBUG_OBJECT (element, "no GstCudaContext of device %d: every "
        "frame is copied", device_id);
    return NULL;
  }
  return cudaipc_slot_pool_offer_cuda (server, *cuda_ctx, query);
}

gboolean
cudaipc_slot_pool_is_ours (GstBufferPool * pool)
{
  return cudaipc_slot_lender_of (pool) != NULL;
}

void
cudaipc_slot_pool_set_wait (GstBufferPool * pool, gboolean wait,
    guint timeout_ms)
{
  CudaIpcSlotLender *lender = cudaipc_slot_lender_of (pool);

  g_return_if_fail (lender != NULL);

  cudaipc_slot_lender_set_wait (lender, wait, timeout_ms);
}

CudaIpcSlotTicket *
cudaipc_slot_pool_buffer_ticket (GstBuffer * buf)
{
  return cudaipc_slot_lender_buffer_ticket (buf);
}

gboolean
cudaipc_slot_pool_buffer_waited (GstBuffer * buf)
{
  return cudaipc_slot_lender_buffer_waited (buf);
}
