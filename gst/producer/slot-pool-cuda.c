/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cuda backend's pool of ring slots (slot-pool.h): a subclass of
 * libgstcuda's GstCudaBufferPool, registered at run time (the library is
 * bound at run time, gstcuda.h), whose buffers are GstCudaMemory wrapping
 * the slots' device memory. nvcodec's elements take a downstream pool only
 * when it is a GstCudaBufferPool of their own GstCudaContext, read from
 * the public field; every vfunc that would touch the parent's private
 * state (its allocator, its stream) is ours, so that state stays empty.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/slot-pool.h"
#include "producer/slot-lender.h"
#include "ring/block.h"
#include "common/debug.h"
#include "buffers/gstcuda.h"

/* GstCudaBufferPool's public head (gstcudabufferpool.h, 1.22 to 1.26) */
typedef struct
{
  GstBufferPool parent;
  GObject *context;             /* GstCudaContext, a reference */
  gpointer priv;
} CudaPoolHead;

static GType pool_type;
static gsize lender_offset;     /* of our CudaIpcSlotLender in an instance */
static gpointer parent_class;

#define LENDER(pool) \
    ((CudaIpcSlotLender *) G_STRUCT_MEMBER_P (pool, lender_offset))

static GstMemory *
cuda_slot_memory (GstBufferPool * pool, CudaIpcBlock * block, gpointer hold,
    GDestroyNotify notify)
{
  CudaIpcSlotLender *lender = LENDER (pool);
  GstMemory *mem;

  /* the slot's layout is the caps' (the FRAME says so, from the video
   * meta of the same info) */
  mem = cudaipc_gstcuda_wrap (((CudaPoolHead *) pool)->context,
      &lender->info, cudaipc_block_get_ptr (block), hold, notify);
  if (mem == NULL)
    GST_WARNING_OBJECT (pool, "gst_cuda_allocator_alloc_wrapped() failed");
  return mem;
}

/* GstCudaMemory's transfer flags (gstcudamemory.h): an upload still to
 * do (GST_MEMORY_FLAG_LAST << 1: its data is in the host staging memory,
 * not yet in the slot) or, from 1.24, a sync (<< 2). A download still to
 * do (<< 0) only says the staging memory is stale: reusable. */
#define CUDA_PENDING_FLAGS \
    ((GST_MEMORY_FLAG_LAST << 1) | (GST_MEMORY_FLAG_LAST << 2))

static gboolean
cuda_slot_reusable (GstMemory * mem)
{
  return (GST_MEMORY_FLAGS (mem) & CUDA_PENDING_FLAGS) == 0;
}

static GstMemory *
cuda_plain_memory (GstBufferPool * pool)
{
  GstMemory *mem = cudaipc_gstcuda_alloc (((CudaPoolHead *) pool)->context,
      &LENDER (pool)->info);

  if (mem == NULL)
    GST_WARNING_OBJECT (pool, "gst_cuda_allocator_alloc() failed");
  return mem;
}

static void
cuda_pool_finalize (GObject * object)
{
  cudaipc_slot_lender_clear (LENDER (object));
  /* the parent's dispose let go of the context */
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
cuda_pool_class_init (gpointer klass, gpointer data)
{
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  parent_class = g_type_class_peek_parent (klass);
  G_OBJECT_CLASS (klass)->finalize = cuda_pool_finalize;
  cudaipc_slot_lender_class_init (pool_class, lender_offset);
}

/* Registered once, where libgstcuda wraps device memory: 0 otherwise. */
static GType
get_type (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    GType parent = cudaipc_gstcuda_pool_type ();

    /* another copy of this code in the process (the plugin beside
     * libcudaipc) registered it first: its pool is not ours to read */
    if (parent != 0 && g_type_from_name ("CudaIpcCudaSlotPool") == 0) {
      GTypeQuery q;

      g_type_query (parent, &q);
      if (q.type != 0 && q.instance_size >= sizeof (CudaPoolHead)) {
        GTypeInfo info = { 0, };

        lender_offset = GST_ROUND_UP_16 (q.instance_size);
        info.class_size = q.class_size;
        info.class_init = cuda_pool_class_init;
        info.instance_size = lender_offset + sizeof (CudaIpcSlotLender);
        pool_type = g_type_register_static (parent, "CudaIpcCudaSlotPool",
            &info, 0);
      }
    }
    g_once_init_leave (&once, 1);
  }
  return pool_type;
}

GstBufferPool *
cudaipc_slot_pool_offer_cuda (CudaIpcServer * server, GObject * ctx,
    GstQuery * query)
{
  GstBufferPool *pool;
  GType type;

  g_return_val_if_fail (server != NULL, NULL);
  g_return_val_if_fail (G_IS_OBJECT (ctx), NULL);

  type = get_type ();
  if (type == 0)
    return NULL;
  pool = g_object_new (type, NULL);
  gst_object_ref_sink (pool);
  ((CudaPoolHead *) pool)->context = g_object_ref (ctx);
  cudaipc_slot_lender_init (LENDER (pool), server, cuda_slot_memory,
      cuda_plain_memory, cuda_slot_reusable);
  return cudaipc_slot_lender_offer (pool, query);
}
