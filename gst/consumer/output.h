/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a consumer's frames go out: in the imported slot itself, or in
 * nvcodec's GstCudaMemory (buffers/gstcuda.h) where downstream works on
 * it. A CudaIpcOutput keeps the pipeline's GstCudaContext, chooses the
 * way out for the caps being negotiated (an allocation query), and
 * converts each frame; cuipcsrc calls it from its decide_allocation(),
 * create(), set_context() and query().
 *
 * Modes, as cuipcsrc's output-memory: IMPORTED, the slot always;
 * GST_CUDA, GstCudaMemory or an error; AUTO, GstCudaMemory where
 * downstream offers a CUDA buffer pool, and the slot where it does not,
 * or where GstCudaMemory fails (then for the rest of the caps).
 *
 * Threads: decide(), convert() and reset() belong to the streaming
 * thread (reset() also to stop(), once streaming stopped); the context
 * calls and get_name() may come from any thread (the output's lock).
 *
 * Ownership: the output holds a reference on the pipeline's context and
 * owns its CudaIpcGstCudaOut, made by decide() for the caps negotiated.
 * convert() takes the frame it converts.
 */
#pragma once

#include <gst/gst.h>

#include "device/device.h"

G_BEGIN_DECLS

typedef enum
{
  CUDAIPC_OUTPUT_AUTO = 0,
  CUDAIPC_OUTPUT_IMPORTED = 1,
  CUDAIPC_OUTPUT_GST_CUDA = 2,
} CudaIpcOutputMode;

/* What frames go out in (stats) */
#define CUDAIPC_OUTPUT_NAME_IMPORTED "imported"
#define CUDAIPC_OUTPUT_NAME_WRAPPED "gst-cuda-wrapped"
#define CUDAIPC_OUTPUT_NAME_COPIED "gst-cuda-copied"

typedef struct _CudaIpcOutput CudaIpcOutput;

CudaIpcOutput *cudaipc_output_new (void);
void cudaipc_output_free (CudaIpcOutput * output);
/* Forgets the way out and the context (stop()). */
void cudaipc_output_reset (CudaIpcOutput * output);
/* CUDAIPC_OUTPUT_NAME_*: what frames go out in now. */
const gchar *cudaipc_output_get_name (CudaIpcOutput * output);

/* Chooses the way out for the caps of @query, of a producer with
 * @backend: GstCudaMemory only for CUDA memory caps of the cuda backend
 * and a mode other than IMPORTED. FALSE (@error set) only in GST_CUDA
 * mode, where GstCudaMemory cannot be made. Where it may make
 * GstCudaMemory, the pipeline's GstCudaContext of @device_id is found or
 * made now: one a neighbour, a bin or the application gives, else one
 * over the device's primary context (no CUDA context of its own), shared
 * with the pipeline. ready_copies() does the same. */
gboolean cudaipc_output_decide (CudaIpcOutput * output, GstElement * element,
    GstQuery * query, CudaIpcBackend backend, CudaIpcOutputMode mode,
    gint device_id, GError ** error);
/* @buf as it goes out, taken. Where GstCudaMemory fails: in decide()'s
 * GST_CUDA mode NULL (@buf dropped), else @buf itself, from now on the
 * imported slot, with @error set for a warning. */
GstBuffer *cudaipc_output_convert (CudaIpcOutput * output, GstBuffer * buf,
    GError ** error);

/* Whether every frame goes out copied already (CUDAIPC_OUTPUT_NAME_COPIED),
 * its slot given back at once. */
gboolean cudaipc_output_copies (CudaIpcOutput * output);
/* @buf (a frame in its slot, taken) as a copy in memory of the consumer's
 * own, its slot given back: GstCudaMemory from a pool of its own for
 * caps of CUDA memory, system memory otherwise; with the same metadata.
 * Where no such copy can be made (CUDA memory without GStreamer's CUDA
 * library), or it fails, @buf itself, with *@copied FALSE (and a
 * GError where it failed). */
GstBuffer *cudaipc_output_copy (CudaIpcOutput * output, GstElement * element,
    GstBuffer * buf, gboolean * copied, GError ** error);
/* After decide(), where frames of CUDA memory caps go out in slots
 * (imported, or wrapped as GstCudaMemory) and copy() may be asked for
 * them: makes the pool that copy() copies into now, with the caps, not at
 * the first copy of a hoarded frame, which a live stream would wait for.
 * Its buffers are allocated at the first copy. Where the pool cannot be
 * made, copy() says why later. */
void cudaipc_output_ready_copies (CudaIpcOutput * output,
    GstElement * element);
/* An element's set_context() and context query: the pipeline's CUDA
 * context, for device @device_id. A CUDA element downstream asks as it
 * goes to READY, before this element has a context: it gets one over the
 * device's primary context, made then, the one the slots are imported
 * in, rather than making a CUDA context of its own
 * (cudaipc_gstcuda_answer_context_query()). The query: TRUE when
 * answered. */
void cudaipc_output_set_context (CudaIpcOutput * output,
    GstElement * element, GstContext * context, gint device_id);
gboolean cudaipc_output_handle_query (CudaIpcOutput * output,
    GstElement * element, GstQuery * query, gint device_id);

G_END_DECLS
