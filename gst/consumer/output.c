/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A consumer's way out into GstCudaMemory (output.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "consumer/output.h"
#include "buffers/gstcuda.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_gstcuda_debug

#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"
/* GST_CUDA_CONTEXT_TYPE (gstcudacontext.h) */
#define CUDA_CONTEXT_TYPE "gst.cuda.context"

struct _CudaIpcOutput
{
  GMutex lock;
  GObject *cuda_ctx;            /* the lock: the pipeline's GstCudaContext */
  const gchar *name;            /* the lock: CUDAIPC_OUTPUT_NAME_* */
  CudaIpcGstCudaOut *cuda_out;  /* the streaming thread */
  CudaIpcOutputMode mode;       /* decide()'s */
};

CudaIpcOutput *
cudaipc_output_new (void)
{
  CudaIpcOutput *o = g_new0 (CudaIpcOutput, 1);

  g_mutex_init (&o->lock);
  o->name = CUDAIPC_OUTPUT_NAME_IMPORTED;
  return o;
}

void
cudaipc_output_free (CudaIpcOutput * o)
{
  if (o == NULL)
    return;
  cudaipc_output_reset (o);
  g_mutex_clear (&o->lock);
  g_free (o);
}

static void
set_name (CudaIpcOutput * o, const gchar * name)
{
  g_mutex_lock (&o->lock);
  o->name = name;
  g_mutex_unlock (&o->lock);
}

const gchar *
cudaipc_output_get_name (CudaIpcOutput * o)
{
  const gchar *name;

  g_mutex_lock (&o->lock);
  name = o->name;
  g_mutex_unlock (&o->lock);
  return name;
}

/* The pipeline's GstCudaContext: a new reference, or NULL. */
static GObject *
get_ctx (CudaIpcOutput * o)
{
  GObject *ctx = NULL;

  g_mutex_lock (&o->lock);
  if (o->cuda_ctx)
    ctx = g_object_ref (o->cuda_ctx);
  g_mutex_unlock (&o->lock);
  return ctx;
}

/* Keeps a reference on @ctx (may be NULL) as the pipeline's context. */
static void
set_ctx (CudaIpcOutput * o, GObject * ctx)
{
  g_mutex_lock (&o->lock);
  if (o->cuda_ctx != ctx) {
    g_clear_object (&o->cuda_ctx);
    o->cuda_ctx = ctx ? g_object_ref (ctx) : NULL;
  }
  g_mutex_unlock (&o->lock);
}

void
cudaipc_output_reset (CudaIpcOutput * o)
{
  g_clear_pointer (&o->cuda_out, cudaipc_gstcuda_out_free);
  set_ctx (o, NULL);
}

gboolean
cudaipc_output_decide (CudaIpcOutput * o, GstElement * element,
    GstQuery * query, CudaIpcBackend backend, CudaIpcOutputMode mode,
    gint device_id, GError ** error)
{
  g_autoptr (GError) err = NULL;
  GstCaps *caps = NULL;
  GstCapsFeatures *features;
  GObject *ctx;

  o->mode = mode;
  gst_query_parse_allocation (query, &caps, NULL);
  features = caps ? gst_caps_get_features (caps, 0) : NULL;
  g_clear_pointer (&o->cuda_out, cudaipc_gstcuda_out_free);
  set_name (o, CUDAIPC_OUTPUT_NAME_IMPORTED);
  if (backend != CUDAIPC_BACKEND_CUDA || features == NULL ||
      !gst_caps_features_contains (features, CUDA_MEMORY_FEATURE) ||
      mode == CUDAIPC_OUTPUT_IMPORTED) {
    cudaipc_gstcuda_clear_query_pools (query);
    GST_DEBUG_OBJECT (element, "frames go out in the imported slots");
    return TRUE;
  }

  ctx = get_ctx (o);
  o->cuda_out = cudaipc_gstcuda_out_for_query (element, query, device_id,
      mode == CUDAIPC_OUTPUT_AUTO, &ctx, &err);
  if (ctx)
    set_ctx (o, ctx);
  g_clear_object (&ctx);

  if (o->cuda_out == NULL && err == NULL) {
    GST_DEBUG_OBJECT (element, "no CUDA pool downstream: frames go out in "
        "the imported slots");
    return TRUE;
  }
  if (o->cuda_out == NULL) {
    if (mode == CUDAIPC_OUTPUT_GST_CUDA) {
      g_propagate_error (error, g_steal_pointer (&err));
      return FALSE;
    }
    GST_INFO_OBJECT (element, "frames go out in the imported slots: %s",
        err->message);
    return TRUE;
  }
  set_name (o, cudaipc_gstcuda_out_wraps (o->cuda_out) ?
      CUDAIPC_OUTPUT_NAME_WRAPPED : CUDAIPC_OUTPUT_NAME_COPIED);
  GST_INFO_OBJECT (element, "frames go out as GstCudaMemory (%s)",
      cudaipc_gstcuda_out_wraps (o->cuda_out) ? "wrapped, no copy" :
      "copied into a CUDA buffer pool");
  return TRUE;
}

GstBuffer *
cudaipc_output_convert (CudaIpcOutput * o, GstBuffer * buf, GError ** error)
{
  GstBuffer *out;

  if (o->cuda_out == NULL)
    return buf;
  out = cudaipc_gstcuda_out_convert (o->cuda_out, buf, error);
  if (out != NULL)
    return out;
  if (o->mode == CUDAIPC_OUTPUT_GST_CUDA) {
    gst_buffer_unref (buf);
    return NULL;
  }
  /* auto: the imported slot serves downstream too, no frame lost */
  g_clear_pointer (&o->cuda_out, cudaipc_gstcuda_out_free);
  set_name (o, CUDAIPC_OUTPUT_NAME_IMPORTED);
  return buf;
}

void
cudaipc_output_set_context (CudaIpcOutput * o, GstElement * element,
    GstContext * context, gint device_id)
{
  GObject *ctx;

  /* only a CUDA context can concern us: nothing else loads libgstcuda */
  if (g_strcmp0 (gst_context_get_context_type (context),
          CUDA_CONTEXT_TYPE) != 0)
    return;
  ctx = get_ctx (o);
  if (cudaipc_gstcuda_handle_set_context (element, context, device_id, &ctx))
    set_ctx (o, ctx);
  g_clear_object (&ctx);
}

gboolean
cudaipc_output_handle_query (CudaIpcOutput * o, GstElement * element,
    GstQuery * query)
{
  GObject *ctx;
  gboolean handled;

  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT)
    return FALSE;
  ctx = get_ctx (o);
  handled = ctx != NULL &&
      cudaipc_gstcuda_handle_context_query (element, query, ctx);
  g_clear_object (&ctx);
  return handled;
}
