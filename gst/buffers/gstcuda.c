/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gmodule.h>

#include "buffers/gstcuda.h"
#include "device/cuda-loader.h"
#include "device/device.h"
#include "common/error.h"
#include "buffers/memory.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_gstcuda_debug

#define GSTCUDA_LIBRARY "libgstcuda-1.0.so.0"
/* GST_CUDA_MEMORY_TYPE_NAME */
#define CUDA_MEMORY_TYPE_NAME "gst.cuda.memory"

/* GstCudaMemory's public head (gstcudamemory.h, 1.22 and 1.24): a
 * GstMemory, its GstCudaContext, then the GstVideoInfo of its layout. */
typedef struct
{
  GstMemory mem;
  GObject *context;
  GstVideoInfo info;
} GstCudaMemoryHead;

/* GstCudaBufferPool's public head (gstcudabufferpool.h, 1.22 and 1.24) */
typedef struct
{
  GstBufferPool parent;
  GObject *context;
} GstCudaBufferPoolHead;

/* libgstcuda's functions, with GstCudaContext as GObject */
static struct
{
  gboolean (*load_library) (void);
  gpointer (*context_get_handle) (GObject * ctx);
  gboolean (*ensure_element_context) (GstElement * element, gint device_id,
      GObject ** ctx);
  gboolean (*handle_set_context) (GstElement * element, GstContext * context,
      gint device_id, GObject ** ctx);
  gboolean (*handle_context_query) (GstElement * element, GstQuery * query,
      GObject * ctx);
  GstBufferPool *(*buffer_pool_new) (GObject * ctx);
    GType (*buffer_pool_get_type) (void);
    gboolean (*is_cuda_memory) (GstMemory * mem);
  GstMemory *(*alloc) (GstAllocator * allocator, GObject * ctx,
      gpointer stream, const GstVideoInfo * info);
  /* may be missing: then gst_cuda_ensure_element_context() makes one */
  GObject *(*context_new_wrapped) (gpointer handle, CUdevice device);
  GstContext *(*context_new_cuda_context) (GObject * ctx);
  /* >= 1.24 */
  void (*memory_sync) (GstMemory * mem);
  GstMemory *(*alloc_wrapped) (GstAllocator * allocator, GObject * ctx,
      gpointer stream, const GstVideoInfo * info, CUdeviceptr dev_ptr,
      gpointer user_data, GDestroyNotify notify);
} lib;

static GModule *
open_library (void)
{
  static GModule *module;
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    cudaipc_debug_init ();
    module = g_module_open (GSTCUDA_LIBRARY,
        G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
    if (module == NULL) {
      GST_INFO ("no %s: %s", GSTCUDA_LIBRARY, g_module_error ());
    } else {
      /* resident, like nvcodec holds it: its types stay registered */
      g_module_make_resident (module);
      if (!g_module_symbol (module, "gst_cuda_context_get_handle",
              (gpointer *) & lib.context_get_handle))
        lib.context_get_handle = NULL;
    }
    g_once_init_leave (&once, 1);
  }
  return module;
}

gpointer
cudaipc_gstcuda_context_handle (GObject * ctx)
{
  if (ctx == NULL || open_library () == NULL || lib.context_get_handle == NULL)
    return NULL;
  return lib.context_get_handle (ctx);
}

gboolean
cudaipc_gstcuda_load (void)
{
  static gboolean loaded;
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
#if CUDAIPC_WITH_GSTCUDA
    GModule *module = open_library ();
    const struct
    {
      const gchar *name;
      gpointer *ptr;
    } syms[] = {
      {"gst_cuda_load_library", (gpointer *) & lib.load_library},
      {"gst_cuda_ensure_element_context",
          (gpointer *) & lib.ensure_element_context},
      {"gst_cuda_handle_set_context", (gpointer *) & lib.handle_set_context},
      {"gst_cuda_handle_context_query",
          (gpointer *) & lib.handle_context_query},
      {"gst_cuda_buffer_pool_new", (gpointer *) & lib.buffer_pool_new},
      {"gst_cuda_buffer_pool_get_type",
          (gpointer *) & lib.buffer_pool_get_type},
      {"gst_is_cuda_memory", (gpointer *) & lib.is_cuda_memory},
      {"gst_cuda_allocator_alloc", (gpointer *) & lib.alloc},
    };
    gboolean ok = module != NULL && lib.context_get_handle != NULL;

    for (guint i = 0; ok && i < G_N_ELEMENTS (syms); i++) {
      if (!g_module_symbol (module, syms[i].name, syms[i].ptr)) {
        GST_INFO ("%s has no %s", GSTCUDA_LIBRARY, syms[i].name);
        ok = FALSE;
      }
    }
    if (ok && !g_module_symbol (module, "gst_cuda_allocator_alloc_wrapped",
            (gpointer *) & lib.alloc_wrapped))
      lib.alloc_wrapped = NULL;
    if (ok && !g_module_symbol (module, "gst_cuda_memory_sync",
            (gpointer *) & lib.memory_sync))
      lib.memory_sync = NULL;
    if (ok && (!g_module_symbol (module, "gst_cuda_context_new_wrapped",
                (gpointer *) & lib.context_new_wrapped) ||
            !g_module_symbol (module, "gst_context_new_cuda_context",
                (gpointer *) & lib.context_new_cuda_context)))
      lib.context_new_wrapped = NULL;
    /* our own driver table too: the copies are ours */
    if (ok && !lib.load_library ()) {
      GST_INFO ("%s cannot load the CUDA driver", GSTCUDA_LIBRARY);
      ok = FALSE;
    }
    if (ok && !cudaipc_cuda_load (NULL))
      ok = FALSE;
    loaded = ok;
    GST_INFO ("%s: %s%s", GSTCUDA_LIBRARY, ok ? "loaded" : "not usable",
        ok && lib.alloc_wrapped ? ", wraps device memory" : "");
#else
    cudaipc_debug_init ();
    loaded = FALSE;
    GST_INFO ("built with -Dcuda-gst=disabled: no GstCudaMemory output");
#endif
    g_once_init_leave (&once, 1);
  }
  return loaded;
}

void
cudaipc_gstcuda_memory_sync (GstMemory * mem)
{
  if (cudaipc_gstcuda_load () && lib.memory_sync != NULL &&
      lib.is_cuda_memory (mem))
    lib.memory_sync (mem);
}

gboolean
cudaipc_gstcuda_can_wrap (void)
{
  return cudaipc_gstcuda_load () && lib.alloc_wrapped != NULL;
}

GType
cudaipc_gstcuda_pool_type (void)
{
  return cudaipc_gstcuda_can_wrap ()? lib.buffer_pool_get_type () : 0;
}

GstMemory *
cudaipc_gstcuda_wrap (GObject * ctx, const GstVideoInfo * info,
    guintptr dev_ptr, gpointer user_data, GDestroyNotify notify)
{
  if (!cudaipc_gstcuda_can_wrap ())
    return NULL;
  return lib.alloc_wrapped (NULL, ctx, NULL, info, (CUdeviceptr) dev_ptr,
      user_data, notify);
}

GstBufferPool *
cudaipc_gstcuda_pool_new (GObject * ctx, GstCaps * caps, guint size)
{
  GstBufferPool *pool;
  GstStructure *config;

  if (!cudaipc_gstcuda_load ())
    return NULL;
  pool = lib.buffer_pool_new (ctx);
  if (pool == NULL)
    return NULL;
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, 0, 0);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config) ||
      !gst_buffer_pool_set_active (pool, TRUE)) {
    gst_object_unref (pool);
    return NULL;
  }
  return pool;
}

GstMemory *
cudaipc_gstcuda_alloc (GObject * ctx, const GstVideoInfo * info)
{
  if (!cudaipc_gstcuda_load ())
    return NULL;
  return lib.alloc (NULL, ctx, NULL, info);
}

gboolean
cudaipc_gstcuda_ensure_context (GstElement * element, gint device_id,
    GObject ** ctx)
{
  if (!cudaipc_gstcuda_load ())
    return FALSE;
  return lib.ensure_element_context (element, device_id, ctx);
}

/* Asks the peers of @element's pads of @direction for a CUDA context and
 * sets the first answer on @element: TRUE where one answered. */
static gboolean
ask_peers (GstElement * element, GstPadDirection direction)
{
  GstIterator *it = direction == GST_PAD_SRC ?
      gst_element_iterate_src_pads (element) :
      gst_element_iterate_sink_pads (element);
  GstQuery *query = gst_query_new_context (CUDAIPC_GSTCUDA_CONTEXT_TYPE);
  GValue item = G_VALUE_INIT;
  gboolean answered = FALSE;

  while (!answered && gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    answered = gst_pad_peer_query (g_value_get_object (&item), query);
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  if (answered) {
    GstContext *context = NULL;

    gst_query_parse_context (query, &context);
    answered = context != NULL;
    if (answered)
      gst_element_set_context (element, context);
  }
  gst_query_unref (query);
  return answered;
}

static void
release_primary (gpointer data, GObject * gone)
{
  cudaipc_cuda ()->DevicePrimaryCtxRelease ((CUdevice) GPOINTER_TO_INT (data));
}

/* A GstCudaContext over device @device_id's primary context, which it
 * holds (retained) for as long as it lives: no CUDA context is made. */
static GObject *
context_over_primary (gint device_id)
{
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  CUdevice dev;
  CUcontext primary;
  GObject *ctx;

  if (lib.context_new_wrapped == NULL ||
      cu->DeviceGet (&dev, device_id) != CUDA_SUCCESS ||
      cu->DevicePrimaryCtxRetain (&primary, dev) != CUDA_SUCCESS)
    return NULL;
  ctx = lib.context_new_wrapped (primary, dev);
  if (ctx == NULL) {
    cu->DevicePrimaryCtxRelease (dev);
    return NULL;
  }
  g_object_weak_ref (ctx, release_primary, GINT_TO_POINTER ((gint) dev));
  return ctx;
}

/* One over the primary context of @device_id, set on @element and
 * announced to the pipeline (have-context): a new reference, or NULL
 * where libgstcuda cannot wrap a context or the device is not there. */
static GObject *
share_primary (GstElement * element, gint device_id, gint64 start)
{
  GstContext *context;
  GObject *ctx = context_over_primary (device_id);

  if (ctx == NULL)
    return NULL;
  context = lib.context_new_cuda_context (ctx);
  gst_element_set_context (element, context);
  gst_element_post_message (element,
      gst_message_new_have_context (GST_OBJECT (element), context));
  GST_INFO_OBJECT (element, "a GstCudaContext over device %d's primary "
      "context, shared with the pipeline, in %" G_GINT64_FORMAT " us",
      device_id, g_get_monotonic_time () - start);
  return ctx;
}

GObject *
cudaipc_gstcuda_find_or_make_context (GstElement * element, gint device_id,
    CudaIpcGstCudaGetContext get, gpointer data)
{
  static const GstPadDirection order[] = { GST_PAD_SRC, GST_PAD_SINK };
  gint64 start = g_get_monotonic_time ();
  GObject *ctx;

  if ((ctx = get (data)) != NULL || !cudaipc_gstcuda_load ())
    return ctx;
  /* downstream, upstream, then the bins and the application, as
   * GStreamer's CUDA elements ask: answers come through set_context */
  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    if (ask_peers (element, order[i]) && (ctx = get (data)) != NULL)
      return ctx;
  gst_element_post_message (element, gst_message_new_need_context
      (GST_OBJECT (element), CUDAIPC_GSTCUDA_CONTEXT_TYPE));
  if ((ctx = get (data)) != NULL)
    return ctx;

  ctx = share_primary (element, device_id, start);
  if (ctx == NULL) {
    /* a new CUDA context of its own, the slow way */
    if (!lib.ensure_element_context (element, device_id, &ctx))
      return NULL;
    GST_INFO_OBJECT (element, "made a GstCudaContext for device %d in %"
        G_GINT64_FORMAT " us", device_id, g_get_monotonic_time () - start);
  }
  return ctx;
}

gboolean
cudaipc_gstcuda_answer_context_query (GstElement * element, GstQuery * query,
    gint device_id, CudaIpcGstCudaGetContext get, gpointer data)
{
  const gchar *type = NULL;
  GObject *ctx;
  gboolean answered;

  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT)
    return FALSE;
  gst_query_parse_context_type (query, &type);
  if (g_strcmp0 (type, CUDAIPC_GSTCUDA_CONTEXT_TYPE) != 0 ||
      !cudaipc_gstcuda_load ())
    return FALSE;
  /* the asker goes on to the bin and the application where we have none,
   * and makes a CUDA context of its own last: ours costs less */
  ctx = get (data);
  if (ctx == NULL && device_id >= 0)
    ctx = share_primary (element, device_id, g_get_monotonic_time ());
  answered = ctx != NULL && lib.handle_context_query (element, query, ctx);
  g_clear_object (&ctx);
  return answered;
}

gboolean
cudaipc_gstcuda_handle_set_context (GstElement * element,
    GstContext * context, gint device_id, GObject ** ctx)
{
  if (!cudaipc_gstcuda_load ())
    return FALSE;
  return lib.handle_set_context (element, context, device_id, ctx);
}

gboolean
cudaipc_gstcuda_is_pool (GstBufferPool * pool)
{
  /* by name: a process whose library registered no such type has none,
   * and asking loads nothing */
  GType type = g_type_from_name ("GstCudaBufferPool");

  return pool != NULL && type != 0 && G_TYPE_CHECK_INSTANCE_TYPE (pool, type);
}

GObject *
cudaipc_gstcuda_memory_context (GstMemory * mem)
{
  GObject *ctx;

  if (mem == NULL || !gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME))
    return NULL;
  ctx = ((GstCudaMemoryHead *) mem)->context;
  return ctx != NULL && G_IS_OBJECT (ctx) ? ctx : NULL;
}

gint
cudaipc_gstcuda_context_device (GObject * ctx)
{
  gint device_id = -1;

  if (ctx && g_object_class_find_property (G_OBJECT_GET_CLASS (ctx),
          "cuda-device-id")) {
    guint id = 0;

    g_object_get (ctx, "cuda-device-id", &id, NULL);
    device_id = (gint) id;
  }
  return device_id;
}

struct _CudaIpcGstCudaOut
{
  GObject *ctx;
  CUcontext handle;
  GstVideoInfo info;            /* of the caps */
  GstBufferPool *pool;          /* copies; NULL: wrapping */
  CUstream stream;              /* copies, in @handle */
};

static CudaIpcGstCudaOut *out_new (GObject * ctx, GstCaps * caps,
    GstBufferPool * pool, guint min_buffers, gboolean copy, GError ** error);

CudaIpcGstCudaOut *
cudaipc_gstcuda_out_new (GObject * ctx, GstCaps * caps, GstBufferPool * pool,
    guint min_buffers, GError ** error)
{
  return out_new (ctx, caps, pool, min_buffers, FALSE, error);
}

CudaIpcGstCudaOut *
cudaipc_gstcuda_out_new_copier (GObject * ctx, GstCaps * caps,
    GError ** error)
{
  return out_new (ctx, caps, NULL, 0, TRUE, error);
}

static CudaIpcGstCudaOut *
out_new (GObject * ctx, GstCaps * caps, GstBufferPool * pool,
    guint min_buffers, gboolean copy, GError ** error)
{
  g_autoptr (CudaIpcGstCudaOut) out = NULL;
  const CudaIpcCudaFuncs *cu;
  GstStructure *config;
  CUresult res;

  g_return_val_if_fail (G_IS_OBJECT (ctx), NULL);
  if (!cudaipc_gstcuda_load ()) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "GStreamer's CUDA library (" GSTCUDA_LIBRARY ") is not usable here");
    return NULL;
  }
  cu = cudaipc_cuda ();

  /* downstream's pool allocates in its own context: copies run there */
  if (pool != NULL) {
    GObject *pool_ctx = ((GstCudaBufferPoolHead *) pool)->context;

    if (pool_ctx != NULL && G_IS_OBJECT (pool_ctx) &&
        cudaipc_gstcuda_context_device (pool_ctx) ==
        cudaipc_gstcuda_context_device (ctx)) {
      ctx = pool_ctx;
    } else {
      GST_INFO ("downstream's CUDA buffer pool is not on device %d: "
          "copying into a pool of our own",
          cudaipc_gstcuda_context_device (ctx));
      pool = NULL;
    }
  }

  out = g_new0 (CudaIpcGstCudaOut, 1);
  out->ctx = g_object_ref (ctx);
  out->handle = cudaipc_gstcuda_context_handle (ctx);
  if (out->handle == NULL || !gst_video_info_from_caps (&out->info, caps)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "no CUDA context handle, or caps that are not video");
    return NULL;
  }

  /* a pool given means: copy (the caller passes none where it wraps) */
  if (pool == NULL && lib.alloc_wrapped != NULL && !copy)
    return g_steal_pointer (&out);

  out->pool = pool ? gst_object_ref (pool) : lib.buffer_pool_new (ctx);
  if (!gst_buffer_pool_set_active (out->pool, FALSE)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "cannot reconfigure the CUDA buffer pool");
    return NULL;
  }
  config = gst_buffer_pool_get_config (out->pool);
  gst_buffer_pool_config_set_params (config, caps,
      (guint) GST_VIDEO_INFO_SIZE (&out->info), min_buffers, 0);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (out->pool, config) ||
      !gst_buffer_pool_set_active (out->pool, TRUE)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the CUDA buffer pool refused caps %" GST_PTR_FORMAT, caps);
    return NULL;
  }

  res = cu->CtxPushCurrent (out->handle);
  if (res == CUDA_SUCCESS) {
    CUcontext prev;

    res = cu->StreamCreate (&out->stream, CU_STREAM_NON_BLOCKING);
    cu->CtxPopCurrent (&prev);
  }
  if (res != CUDA_SUCCESS) {
    g_autofree gchar *why = cudaipc_cuda_error (res);

    out->stream = NULL;
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "cannot make a copy stream in the pool's CUDA context: %s", why);
    return NULL;
  }
  return g_steal_pointer (&out);
}

void
cudaipc_gstcuda_out_free (CudaIpcGstCudaOut * out)
{
  if (out == NULL)
    return;
  if (out->stream) {
    const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
    CUcontext prev;

    if (cu->CtxPushCurrent (out->handle) == CUDA_SUCCESS) {
      cu->StreamSynchronize (out->stream);
      cu->StreamDestroy (out->stream);
      cu->CtxPopCurrent (&prev);
    }
  }
  if (out->pool) {
    gst_buffer_pool_set_active (out->pool, FALSE);
    gst_object_unref (out->pool);
  }
  g_clear_object (&out->ctx);
  g_free (out);
}

gboolean
cudaipc_gstcuda_out_wraps (CudaIpcGstCudaOut * out)
{
  return out->pool == NULL;
}

/* Offsets and strides of @buf's planes: its GstVideoMeta, else @fallback. */
static void
plane_layout (GstBuffer * buf, const GstVideoInfo * fallback,
    gsize offsets[GST_VIDEO_MAX_PLANES], gint strides[GST_VIDEO_MAX_PLANES])
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);

  for (guint p = 0; p < GST_VIDEO_MAX_PLANES; p++) {
    offsets[p] = meta ? meta->offset[p] : GST_VIDEO_INFO_PLANE_OFFSET (fallback,
        p);
    strides[p] = meta ? meta->stride[p] : GST_VIDEO_INFO_PLANE_STRIDE (fallback,
        p);
  }
}

/* Flags, timestamps and the frame's metas but its layout (@dst has a
 * GstVideoMeta of its own). */
static void
copy_metadata (GstBuffer * dst, GstBuffer * src)
{
  gpointer state = NULL;
  GstMeta *meta;

  gst_buffer_copy_into (dst, src,
      GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  while ((meta = gst_buffer_iterate_meta (src, &state)) != NULL) {
    GstMetaTransformCopy copy = { FALSE, 0, (gsize) - 1 };

    if (meta->info->api == GST_VIDEO_META_API_TYPE ||
        meta->info->transform_func == NULL)
      continue;
    meta->info->transform_func (dst, meta, src, _gst_meta_transform_copy,
        &copy);
  }
}

/* What a wrapped frame holds: the frame (so its slot) and the context
 * downstream reads it in. */
typedef struct
{
  GstBuffer *frame;
  GObject *ctx;
  CUcontext handle;
} WrapHold;

/* The wrapper is freed: nvcodec's elements queue their kernels on streams
 * of their own and let their input go at once, so the slot may still be
 * read. Whatever is queued in the context ends first, then the slot goes
 * back to the producer, which may write it again at once. */
static void
wrap_release (gpointer data)
{
  WrapHold *hold = data;
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  CUresult res = cu->CtxPushCurrent (hold->handle);

  if (res == CUDA_SUCCESS) {
    CUcontext prev;

    res = cu->CtxSynchronize ();
    cu->CtxPopCurrent (&prev);
  }
  if (res != CUDA_SUCCESS) {
    g_autofree gchar *why = cudaipc_cuda_error (res);

    GST_WARNING ("cannot wait for the reads of a wrapped frame: %s", why);
  }
  gst_buffer_unref (hold->frame);
  g_object_unref (hold->ctx);
  g_free (hold);
}

static GstBuffer *
wrap_frame (CudaIpcGstCudaOut * out, GstBuffer * frame, guintptr dev_ptr,
    GError ** error)
{
  GstVideoInfo info = out->info;
  gsize offsets[GST_VIDEO_MAX_PLANES];
  gint strides[GST_VIDEO_MAX_PLANES];
  GstMemory *mem;
  GstBuffer *buf;
  WrapHold *hold;

  plane_layout (frame, &out->info, offsets, strides);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
    GST_VIDEO_INFO_PLANE_OFFSET (&info, p) = offsets[p];
    GST_VIDEO_INFO_PLANE_STRIDE (&info, p) = strides[p];
  }
  info.size = gst_buffer_get_size (frame);

  buf = gst_buffer_new ();
  copy_metadata (buf, frame);
  /* the wrapper holds the frame, and so its slot, until it is freed and
   * downstream's reads of it are done */
  hold = g_new0 (WrapHold, 1);
  hold->frame = frame;
  hold->ctx = g_object_ref (out->ctx);
  hold->handle = out->handle;
  mem = lib.alloc_wrapped (NULL, out->ctx, NULL, &info, dev_ptr, hold,
      wrap_release);
  if (mem == NULL) {
    g_object_unref (hold->ctx);
    g_free (hold);
    gst_buffer_unref (buf);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "gst_cuda_allocator_alloc_wrapped() failed");
    return NULL;
  }
  /* the slot is shared with other consumers */
  GST_MINI_OBJECT_FLAG_SET (mem, GST_MEMORY_FLAG_READONLY);
  gst_buffer_append_memory (buf, mem);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_INFO_WIDTH (&info),
      GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_N_PLANES (&info),
      offsets, strides);
  return buf;
}

static gboolean
copy_planes (CudaIpcGstCudaOut * out, GstBuffer * frame, guintptr src_ptr,
    GstBuffer * dst, GError ** error)
{
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  GstMemory *mem = gst_buffer_peek_memory (dst, 0);
  gsize src_off[GST_VIDEO_MAX_PLANES], dst_off[GST_VIDEO_MAX_PLANES];
  gint src_stride[GST_VIDEO_MAX_PLANES], dst_stride[GST_VIDEO_MAX_PLANES];
  const GstVideoFormatInfo *finfo = out->info.finfo;
  GstMapInfo map;
  CUresult res = CUDA_SUCCESS;
  CUcontext prev;

  if (gst_buffer_n_memory (dst) != 1 || !lib.is_cuda_memory (mem) ||
      !gst_memory_map (mem, &map, GST_MAP_WRITE | CUDAIPC_MAP_CUDA)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "the CUDA buffer pool gave a buffer that is not one mappable "
        "GstCudaMemory");
    return FALSE;
  }
  plane_layout (frame, &out->info, src_off, src_stride);
  plane_layout (dst, &((GstCudaMemoryHead *) mem)->info, dst_off, dst_stride);
  GST_LOG ("copy %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT " strides %d/%d at "
      "0x%" G_GINTPTR_MODIFIER "x into %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT
      " strides %d/%d at %p (%" G_GSIZE_FORMAT " bytes mapped)", src_off[0],
      src_off[1], src_stride[0], src_stride[1], src_ptr, dst_off[0],
      dst_off[1], dst_stride[0], dst_stride[1], map.data, map.size);

  res = cu->CtxPushCurrent (out->handle);
  for (guint p = 0; res == CUDA_SUCCESS &&
      p < GST_VIDEO_INFO_N_PLANES (&out->info); p++) {
    CUDA_MEMCPY2D c = { 0, };
    gint comp[GST_VIDEO_MAX_COMPONENTS];

    gst_video_format_info_component (finfo, p, comp);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src_ptr + src_off[p];
    c.srcPitch = src_stride[p];
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr) (guintptr) map.data + dst_off[p];
    c.dstPitch = dst_stride[p];
    c.WidthInBytes = GST_VIDEO_INFO_COMP_WIDTH (&out->info, comp[0]) *
        GST_VIDEO_INFO_COMP_PSTRIDE (&out->info, comp[0]);
    c.Height = GST_VIDEO_INFO_COMP_HEIGHT (&out->info, comp[0]);
    res = cu->Memcpy2DAsync (&c, out->stream);
  }
  /* the buffer is complete when it is pushed: 1.22's GstCudaMemory has no
   * stream of its own to order downstream's work after the copy */
  if (res == CUDA_SUCCESS)
    res = cu->StreamSynchronize (out->stream);
  cu->CtxPopCurrent (&prev);
  gst_memory_unmap (mem, &map);

  if (res != CUDA_SUCCESS) {
    g_autofree gchar *why = cudaipc_cuda_error (res);

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "copying a frame into GstCudaMemory failed: %s", why);
    return FALSE;
  }
  return TRUE;
}

GstBuffer *
cudaipc_gstcuda_out_convert (CudaIpcGstCudaOut * out, GstBuffer * frame,
    GError ** error)
{
  GstMemory *src = gst_buffer_peek_memory (frame, 0);
  GstBuffer *dst = NULL;
  guintptr src_ptr;

  /* our memory's device pointer stays valid for as long as the frame
   * lives (the slot's mapping is the connection's) */
  if (gst_buffer_n_memory (frame) != 1 || !cudaipc_is_memory (src) ||
      cudaipc_device_get_backend (cudaipc_memory_get_device (src)) !=
      CUDAIPC_BACKEND_CUDA) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "a frame that is not one imported slot in GPU memory");
    return NULL;
  }
  src_ptr = cudaipc_memory_get_device_ptr (src);

  if (out->pool == NULL)
    return wrap_frame (out, frame, src_ptr, error);

  if (gst_buffer_pool_acquire_buffer (out->pool, &dst, NULL) != GST_FLOW_OK) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "no buffer from the CUDA buffer pool");
    return NULL;
  }
  if (!copy_planes (out, frame, src_ptr, dst, error)) {
    gst_buffer_unref (dst);
    return NULL;
  }
  copy_metadata (dst, frame);
  /* the copy is done: the slot goes back to the producer now */
  gst_buffer_unref (frame);
  return dst;
}

void
cudaipc_gstcuda_clear_query_pools (GstQuery * query)
{
  while (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_remove_nth_allocation_pool (query, 0);
}

CudaIpcGstCudaOut *
cudaipc_gstcuda_out_for_query (GstQuery * query, gboolean need_pool,
    GObject * ctx, GError ** error)
{
  g_autoptr (GstBufferPool) cuda_pool = NULL;
  GstCaps *caps = NULL;
  guint min_buffers = 0;

  gst_query_parse_allocation (query, &caps, NULL);
  while (gst_query_get_n_allocation_pools (query) > 0) {
    GstBufferPool *pool = NULL;
    guint min = 0;

    gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, &min, NULL);
    if (cuda_pool == NULL && pool && cudaipc_gstcuda_is_pool (pool)) {
      cuda_pool = g_steal_pointer (&pool);
      min_buffers = min;
    }
    gst_clear_object (&pool);
    gst_query_remove_nth_allocation_pool (query, 0);
  }
  if (need_pool && cuda_pool == NULL)
    return NULL;

  if (ctx == NULL) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "no GstCudaContext for the consumer's device (is GStreamer's CUDA "
        "library, libgstcuda-1.0, installed?)");
    return NULL;
  }
  return cudaipc_gstcuda_out_new (ctx, caps, cudaipc_gstcuda_can_wrap ()?
      NULL : cuda_pool, MAX (min_buffers, 2), error);
}
