/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sink's in-place pool, its wait, its GstCudaContext and the stale pool
 * (slot-offer.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/slot-offer.h"
#include "producer/slot-pool.h"
#include "buffers/gstcuda.h"
#include "common/debug.h"

struct _CudaIpcSlotOffer
{
  GstElement *element;          /* borrowed: it owns the offer */
  GstPad *pad;                  /* its sink pad, borrowed */
  GstDebugCategory *category;

  /* under @lock */
  GMutex lock;
  CudaIpcServer *server;        /* start() to reset() */
  CudaIpcBackend backend;
  gint device_id;
  GstBufferPool *pool;          /* the last pool proposed */
  gboolean wait;                /* on-full=wait */
  guint timeout_ms;             /* full-timeout */
  gconstpointer renegotiated_for;       /* a stale pool upstream was told of */

  /* the GstCudaContext upstream writes with (cuda backend, GStreamer
   * >= 1.24), for the cuda pool: unlocked, as libgstcuda has it
   * (slot-offer.h) */
  GObject *cuda_ctx;
};

CudaIpcSlotOffer *
cudaipc_slot_offer_new (GstElement * element, GstPad * pad,
    GstDebugCategory * category)
{
  CudaIpcSlotOffer *offer;

  g_return_val_if_fail (GST_IS_ELEMENT (element), NULL);
  g_return_val_if_fail (GST_IS_PAD (pad), NULL);

  cudaipc_debug_init ();
  offer = g_new0 (CudaIpcSlotOffer, 1);
  offer->element = element;
  offer->pad = pad;
  offer->category = category ? category : cudaipc_memory_debug;
  g_mutex_init (&offer->lock);
  return offer;
}

void
cudaipc_slot_offer_free (CudaIpcSlotOffer * offer)
{
  if (offer == NULL)
    return;
  g_clear_pointer (&offer->server, cudaipc_server_unref);
  g_clear_pointer (&offer->pool, gst_object_unref);
  g_clear_object (&offer->cuda_ctx);
  g_mutex_clear (&offer->lock);
  g_free (offer);
}

void
cudaipc_slot_offer_start (CudaIpcSlotOffer * offer, CudaIpcServer * server,
    CudaIpcDevice * dev)
{
  g_return_if_fail (offer != NULL);
  g_return_if_fail (server != NULL && dev != NULL);

  g_mutex_lock (&offer->lock);
  g_clear_pointer (&offer->server, cudaipc_server_unref);
  offer->server = cudaipc_server_ref (server);
  offer->backend = cudaipc_device_get_backend (dev);
  offer->device_id = cudaipc_device_get_ordinal (dev);
  g_mutex_unlock (&offer->lock);
}

void
cudaipc_slot_offer_propose (CudaIpcSlotOffer * offer, GstQuery * query)
{
  CudaIpcServer *server = NULL;
  CudaIpcBackend backend;
  GstBufferPool *pool;
  gint device_id;

  g_return_if_fail (offer != NULL);

  g_mutex_lock (&offer->lock);
  if (offer->server)
    server = cudaipc_server_ref (offer->server);
  backend = offer->backend;
  device_id = offer->device_id;
  g_mutex_unlock (&offer->lock);
  if (server == NULL)
    return;

  /* no lock: libgstcuda's ensure_context may have set_context() called
   * meanwhile, on this thread too */
  pool = cudaipc_slot_pool_propose (offer->element, server, backend,
      device_id, &offer->cuda_ctx, query);
  cudaipc_server_unref (server);
  if (pool == NULL)
    return;
  GST_CAT_DEBUG_OBJECT (offer->category, offer->element,
      "proposed the in-place pool (%s)", G_OBJECT_TYPE_NAME (pool));

  g_mutex_lock (&offer->lock);
  gst_object_replace ((GstObject **) & offer->pool, GST_OBJECT (pool));
  cudaipc_slot_pool_set_wait (offer->pool, offer->wait, offer->timeout_ms);
  g_mutex_unlock (&offer->lock);
  gst_object_unref (pool);
}

void
cudaipc_slot_offer_set_wait (CudaIpcSlotOffer * offer, gboolean wait,
    guint timeout_ms)
{
  g_return_if_fail (offer != NULL);

  g_mutex_lock (&offer->lock);
  offer->wait = wait;
  offer->timeout_ms = timeout_ms;
  /* an acquire() waiting for a slot reads them again */
  if (offer->pool)
    cudaipc_slot_pool_set_wait (offer->pool, wait, timeout_ms);
  g_mutex_unlock (&offer->lock);
}

void
cudaipc_slot_offer_set_context (CudaIpcSlotOffer * offer,
    GstContext * context, gint device_id)
{
  g_return_if_fail (offer != NULL);

  /* libgstcuda is loaded for its own context only */
  if (g_strcmp0 (gst_context_get_context_type (context),
          CUDAIPC_GSTCUDA_CONTEXT_TYPE) == 0)
    cudaipc_gstcuda_handle_set_context (offer->element, context, device_id,
        &offer->cuda_ctx);
}

static GObject *
get_cuda_ctx (gpointer data)
{
  CudaIpcSlotOffer *offer = data;

  return offer->cuda_ctx ? g_object_ref (offer->cuda_ctx) : NULL;
}

gboolean
cudaipc_slot_offer_context_query (CudaIpcSlotOffer * offer, GstQuery * query,
    gint device_id)
{
  g_return_val_if_fail (offer != NULL, FALSE);

  return cudaipc_gstcuda_answer_context_query (offer->element, query,
      device_id, get_cuda_ctx, offer);
}

void
cudaipc_slot_offer_check (CudaIpcSlotOffer * offer, GstBuffer * buf)
{
  GstBufferPool *pool = buf->pool;
  gboolean stale;

  if (G_LIKELY (pool == NULL || !cudaipc_slot_pool_is_ours (pool)))
    return;

  g_mutex_lock (&offer->lock);
  stale = pool != offer->pool && pool != offer->renegotiated_for;
  if (stale)
    offer->renegotiated_for = pool;
  g_mutex_unlock (&offer->lock);
  if (stale) {
    GST_CAT_DEBUG_OBJECT (offer->category, offer->element,
        "upstream writes into a stale in-place pool: asking it to "
        "renegotiate");
    gst_pad_push_event (offer->pad, gst_event_new_reconfigure ());
  }
}

void
cudaipc_slot_offer_reset (CudaIpcSlotOffer * offer)
{
  g_return_if_fail (offer != NULL);

  g_mutex_lock (&offer->lock);
  g_clear_pointer (&offer->server, cudaipc_server_unref);
  g_clear_pointer (&offer->pool, gst_object_unref);
  g_mutex_unlock (&offer->lock);
}

void
cudaipc_slot_offer_reset_context (CudaIpcSlotOffer * offer)
{
  g_return_if_fail (offer != NULL);

  g_clear_object (&offer->cuda_ctx);
}
