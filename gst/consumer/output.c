/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A consumer's way out into GstCudaMemory (output.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "consumer/output.h"
#include "buffers/gstcuda.h"
#include "buffers/memory.h"
#include "common/debug.h"
#include "common/error.h"

#define GST_CAT_DEFAULT cudaipc_gstcuda_debug

#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"

struct _CudaIpcOutput
{
  GMutex lock;
  GObject *cuda_ctx;            /* the lock: the pipeline's GstCudaContext */
  const gchar *name;            /* the lock: CUDAIPC_OUTPUT_NAME_* */
  CudaIpcGstCudaOut *cuda_out;  /* the streaming thread */
  CudaIpcOutputMode mode;       /* decide()'s */
  /* the streaming thread: copies of hoarded frames (copy()) */
  gboolean cuda_caps;           /* decide()'s caps are of CUDA memory */
  GstCaps *caps;                /* decide()'s */
  gint device_id;               /* decide()'s */
  CudaIpcGstCudaOut *copier;    /* made at the first copy, for @caps */
  gboolean no_copier;           /* it could not be made */
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

static void set_ctx (CudaIpcOutput * o, GObject * ctx);

static GObject *
get_ctx_of (gpointer o)
{
  return get_ctx (o);
}

/* The pipeline's GstCudaContext of @device_id, found or made, kept: a new
 * reference, or NULL. */
static GObject *
ensure_ctx (CudaIpcOutput * o, GstElement * element, gint device_id)
{
  GObject *ctx = cudaipc_gstcuda_find_or_make_context (element, device_id,
      get_ctx_of, o);

  if (ctx)
    set_ctx (o, ctx);
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

/* Forgets the copies' pool (new caps, or stop()). */
static void
reset_copier (CudaIpcOutput * o)
{
  g_clear_pointer (&o->copier, cudaipc_gstcuda_out_free);
  gst_clear_caps (&o->caps);
  o->no_copier = FALSE;
  o->cuda_caps = FALSE;
}

void
cudaipc_output_reset (CudaIpcOutput * o)
{
  g_clear_pointer (&o->cuda_out, cudaipc_gstcuda_out_free);
  reset_copier (o);
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
  reset_copier (o);
  o->caps = caps ? gst_caps_ref (caps) : NULL;
  o->device_id = device_id;
  o->cuda_caps = backend == CUDAIPC_BACKEND_CUDA && features != NULL &&
      gst_caps_features_contains (features, CUDA_MEMORY_FEATURE);
  set_name (o, CUDAIPC_OUTPUT_NAME_IMPORTED);
  if (!o->cuda_caps || mode == CUDAIPC_OUTPUT_IMPORTED) {
    cudaipc_gstcuda_clear_query_pools (query);
    GST_DEBUG_OBJECT (element, "frames go out in the imported slots");
    return TRUE;
  }

  /* found or made now, not at the first copy of a hoarded frame, which a
   * live stream would wait for */
  ctx = ensure_ctx (o, element, device_id);
  o->cuda_out = cudaipc_gstcuda_out_for_query (query,
      mode == CUDAIPC_OUTPUT_AUTO, ctx, &err);
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

gboolean
cudaipc_output_copies (CudaIpcOutput * o)
{
  return o->cuda_out != NULL && !cudaipc_gstcuda_out_wraps (o->cuda_out);
}

/* @buf's bytes into system memory, with its metadata. */
static GstBuffer *
copy_to_system (GstBuffer * buf, GError ** error)
{
  GstMemory *src = gst_buffer_peek_memory (buf, 0);
  gsize size = gst_buffer_get_size (buf);
  GstBuffer *out = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  gboolean ok;

  if (out == NULL || !gst_buffer_map (out, &map, GST_MAP_WRITE)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "no %" G_GSIZE_FORMAT " bytes of system memory for a copy", size);
    gst_clear_buffer (&out);
    return NULL;
  }
  /* a slot in GPU memory straight into the copy, not through a map */
  if (gst_buffer_n_memory (buf) == 1 && cudaipc_is_memory (src) &&
      cudaipc_device_get_backend (cudaipc_memory_get_device (src)) ==
      CUDAIPC_BACKEND_CUDA)
    ok = cudaipc_device_read (cudaipc_memory_get_device (src), map.data,
        cudaipc_memory_get_device_ptr (src), size, error);
  else if (!(ok = gst_buffer_extract (buf, 0, map.data, size) == size))
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the frame could not be read");
  gst_buffer_unmap (out, &map);
  if (!ok) {
    gst_buffer_unref (out);
    return NULL;
  }
  gst_buffer_copy_into (out, buf, GST_BUFFER_COPY_METADATA, 0, -1);
  return out;
}

/* The pool of GstCudaMemory that copies go into, made at the first. */
static CudaIpcGstCudaOut *
ensure_copier (CudaIpcOutput * o, GstElement * element, GError ** error)
{
  GObject *ctx;

  if (o->copier != NULL || o->no_copier)
    return o->copier;
  ctx = ensure_ctx (o, element, o->device_id);
  if (ctx == NULL)
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "no GstCudaContext for device %d (is GStreamer's CUDA library, "
        "libgstcuda-1.0, installed?)", o->device_id);
  else
    o->copier = cudaipc_gstcuda_out_new_copier (ctx, o->caps, error);
  g_clear_object (&ctx);
  o->no_copier = o->copier == NULL;
  return o->copier;
}

void
cudaipc_output_ready_copies (CudaIpcOutput * o, GstElement * element)
{
  g_autoptr (GError) err = NULL;

  if (!o->cuda_caps || o->caps == NULL || cudaipc_output_copies (o))
    return;
  if (ensure_copier (o, element, &err) != NULL)
    GST_DEBUG_OBJECT (element, "a pool for copies of hoarded frames is ready");
  else
    GST_INFO_OBJECT (element, "no pool for copies of hoarded frames: %s",
        err ? err->message : "GStreamer's CUDA library is not usable");
}

GstBuffer *
cudaipc_output_copy (CudaIpcOutput * o, GstElement * element,
    GstBuffer * buf, gboolean * copied, GError ** error)
{
  GstBuffer *out;

  *copied = FALSE;
  if (o->cuda_caps) {
    CudaIpcGstCudaOut *copier = ensure_copier (o, element, error);

    if (copier == NULL)
      return buf;
    /* takes @buf once the copy is complete, leaves it where it fails */
    out = cudaipc_gstcuda_out_convert (copier, buf, error);
    if (out == NULL)
      return buf;
  } else {
    out = copy_to_system (buf, error);
    if (out == NULL)
      return buf;
    gst_buffer_unref (buf);
  }
  *copied = TRUE;
  return out;
}

void
cudaipc_output_set_context (CudaIpcOutput * o, GstElement * element,
    GstContext * context, gint device_id)
{
  GObject *ctx;

  /* only a CUDA context can concern us: nothing else loads libgstcuda */
  if (g_strcmp0 (gst_context_get_context_type (context),
          CUDAIPC_GSTCUDA_CONTEXT_TYPE) != 0)
    return;
  ctx = get_ctx (o);
  if (cudaipc_gstcuda_handle_set_context (element, context, device_id, &ctx))
    set_ctx (o, ctx);
  g_clear_object (&ctx);
}

gboolean
cudaipc_output_handle_query (CudaIpcOutput * o, GstElement * element,
    GstQuery * query, gint device_id)
{
  return cudaipc_gstcuda_answer_context_query (element, query, device_id,
      get_ctx_of, o);
}
