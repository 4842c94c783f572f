/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GStreamer's own CUDA library (libgstcuda-1.0, GStreamer 1.22 and newer),
 * bound at run time, and the consumer's output into it: frames handed to
 * nvcodec's elements as real GstCudaMemory.
 *
 * Nothing here needs libgstcuda, its headers or the CUDA toolkit to build:
 * the library is opened with GModule the first time it is asked for, its
 * few functions are looked up, and every object of it is a GObject here.
 * Where it is missing (GStreamer 1.20, or no nvcodec installed) or cannot
 * load the driver, cudaipc_gstcuda_load() is FALSE and the consumer pushes
 * its own memory, as always.
 *
 * Two ways into GstCudaMemory, picked by what the library offers:
 *  - GStreamer >= 1.24 (gst_cuda_allocator_alloc_wrapped): the frame's
 *    device memory is wrapped, no copy; the wrapper holds the frame (and so
 *    its slot) until downstream lets go of it, and is read-only.
 *  - GStreamer 1.22: one device-to-device copy per plane into a buffer of a
 *    GstCudaBufferPool (downstream's, or one of ours), on a stream of the
 *    pool's CUDA context, finished before the buffer is pushed; the frame,
 *    and its slot, are released at once.
 *
 * Threads: load() and the context helpers from any thread; a
 * CudaIpcGstCudaOut belongs to the streaming thread that made it.
 *
 * Ownership: contexts are GstCudaContext objects, passed as GObject and
 * reffed as such; an out holds a reference on its context and its pool.
 * convert() takes the frame it is given when it succeeds.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* Opens libgstcuda-1.0 and its driver once per process; FALSE (and a
 * debug line saying why) where it cannot. */
gboolean cudaipc_gstcuda_load (void);
/* gst_cuda_allocator_alloc_wrapped() exists (GStreamer >= 1.24). */
gboolean cudaipc_gstcuda_can_wrap (void);
/* GstCudaBufferPool's GType where device memory can be wrapped (can_wrap()),
 * else 0: the parent of the cuda backend's slot pool (slot-pool.h). */
GType cudaipc_gstcuda_pool_type (void);
/* GstCudaMemory of @ctx over @dev_ptr, laid out as @info, on no stream of
 * its own; @notify (@user_data) when it is freed. NULL where that cannot
 * be (can_wrap() is FALSE, or the library failed). */
GstMemory *cudaipc_gstcuda_wrap (GObject * ctx, const GstVideoInfo * info,
    guintptr dev_ptr, gpointer user_data, GDestroyNotify notify);
/* New GstCudaMemory of @ctx for a frame of @info (gst_cuda_allocator_alloc,
 * the default allocator), or NULL. */
GstMemory *cudaipc_gstcuda_alloc (GObject * ctx, const GstVideoInfo * info);
/* An active GstCudaBufferPool of @ctx for frames of @caps, @size bytes
 * (the video meta option on), or NULL where the library is missing. */
GstBufferPool *cudaipc_gstcuda_pool_new (GObject * ctx, GstCaps * caps,
    guint size);

/* gst_cuda_context_get_handle(): the CUcontext of a GstCudaContext, or
 * NULL when @ctx is none or the library is missing. Needs no load(): for
 * a process where nvcodec already loaded the library. */
gpointer cudaipc_gstcuda_context_handle (GObject * ctx);

/* The GstCudaContext of nvcodec's GstCudaMemory @mem (its public head;
 * borrowed), or NULL when @mem is not one. Loads nothing. */
GObject *cudaipc_gstcuda_memory_context (GstMemory * mem);
/* Waits until the work queued on nvcodec's GstCudaMemory @mem by the
 * element that wrote it is done, where that memory says some is pending:
 * from GStreamer 1.24, decoders and filters write their output on a CUDA
 * stream of their own, flag it GST_CUDA_MEMORY_TRANSFER_NEED_SYNC and push
 * it at once, and a reader on another stream must wait first
 * (gst_cuda_memory_sync(): nothing where nothing is pending). Nothing for
 * other memory, or where the library has no such call (1.22, whose
 * memory has no stream). */
void cudaipc_gstcuda_memory_sync (GstMemory * mem);
/* The "cuda-device-id" of a GstCudaContext, -1 when it has none. */
gint cudaipc_gstcuda_context_device (GObject * ctx);

/* gst_cuda_ensure_element_context(): the GstCudaContext of device
 * @device_id shared with the pipeline (asked of neighbours, else made and
 * announced). *@ctx is kept when it is already set. */
gboolean cudaipc_gstcuda_ensure_context (GstElement * element,
    gint device_id, GObject ** ctx);
/* GST_CUDA_CONTEXT_TYPE (gstcudacontext.h): the context type of a
 * GstCudaContext in context queries, messages and set_context. */
#define CUDAIPC_GSTCUDA_CONTEXT_TYPE "gst.cuda.context"

/* @data's GstCudaContext: a new reference, or NULL where it has none. */
typedef GObject *(*CudaIpcGstCudaGetContext) (gpointer data);
/* The GstCudaContext of device @device_id for @element, which keeps what
 * its set_context is given where @get finds it: the one it has, else one
 * a neighbour, a bin or the application gives it (context query, then
 * need-context), else one over the device's primary context, the context
 * our slots are imported in, set on @element and announced to the
 * pipeline (have-context). That last takes no CUDA context of its own to
 * make, which a live stream would wait for. A new reference, or NULL. */
GObject *cudaipc_gstcuda_find_or_make_context (GstElement * element,
    gint device_id, CudaIpcGstCudaGetContext get, gpointer data);
/* An element's answer to a neighbour's context query for a CUDA context:
 * the one @get finds, else one over the primary context of @device_id
 * (-1: none), made now, set on @element and announced as
 * cudaipc_gstcuda_find_or_make_context() does. So a CUDA element beside
 * ours (a decoder upstream of a sink, cudaconvert downstream of a source)
 * shares the context our slots are imported in instead of making a CUDA
 * context of its own as it goes to READY. TRUE when answered. */
gboolean cudaipc_gstcuda_answer_context_query (GstElement * element,
    GstQuery * query, gint device_id, CudaIpcGstCudaGetContext get,
    gpointer data);
/* gst_cuda_handle_set_context(), for an element's set_context: TRUE when
 * handled. */
gboolean cudaipc_gstcuda_handle_set_context (GstElement * element,
    GstContext * context, gint device_id, GObject ** ctx);

/* @pool is a GstCudaBufferPool (loads nothing). */
gboolean cudaipc_gstcuda_is_pool (GstBufferPool * pool);

typedef struct _CudaIpcGstCudaOut CudaIpcGstCudaOut;

/* For frames of @caps (video/x-raw(memory:CUDAMemory)) on @ctx: wraps
 * where the library can (and @pool is NULL), else copies into @pool, or
 * into a pool of its own when @pool is NULL. @min_buffers: buffers the
 * pool keeps. NULL with a GError when the pool cannot be set up. */
CudaIpcGstCudaOut *cudaipc_gstcuda_out_new (GObject * ctx, GstCaps * caps,
    GstBufferPool * pool, guint min_buffers, GError ** error);
/* As new() with no pool, but always copying into a pool of its own,
 * which grows as its buffers are kept (a consumer's copies of frames
 * that downstream hoards). */
CudaIpcGstCudaOut *cudaipc_gstcuda_out_new_copier (GObject * ctx,
    GstCaps * caps, GError ** error);
void cudaipc_gstcuda_out_free (CudaIpcGstCudaOut * out);

/* A consumer's decide_allocation for caps of CUDA memory on @ctx, the
 * pipeline's GstCudaContext of the consumer's device (NULL: there is
 * none): takes every pool out of @query (frames are made by the consumer,
 * not from a pool of basesrc's), keeping downstream's GstCudaBufferPool if
 * it offered one, and makes the output: NULL without an error where
 * @need_pool and downstream offered no CUDA pool; NULL with a
 * CUDAIPC_ERROR where GstCudaMemory cannot be made (no libgstcuda, no
 * context, no pool). Downstream's pool is used only where frames cannot
 * be wrapped. */
CudaIpcGstCudaOut *cudaipc_gstcuda_out_for_query (GstQuery * query,
    gboolean need_pool, GObject * ctx, GError ** error);
/* Takes every pool out of @query. */
void cudaipc_gstcuda_clear_query_pools (GstQuery * query);
/* Whether frames are wrapped (no copy). */
gboolean cudaipc_gstcuda_out_wraps (CudaIpcGstCudaOut * out);

/* Returns a buffer of GstCudaMemory with the pixels, timestamps, offsets
 * and flags of @frame (one memory of ours over a slot of the cuda
 * backend, its planes per its GstVideoMeta), and takes @frame: released
 * after a copy, held by the wrapper otherwise. NULL with a GError when
 * that fails (CUDAIPC_ERROR_CUDA: the driver, _INVALID: not such a
 * frame); @frame is then still the caller's. */
GstBuffer *cudaipc_gstcuda_out_convert (CudaIpcGstCudaOut * out,
    GstBuffer * frame, GError ** error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcGstCudaOut, cudaipc_gstcuda_out_free);

G_END_DECLS
