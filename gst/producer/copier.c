/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's copy into ring slots; copier.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "producer/copier.h"
#include "device/cuda-loader.h"
#include "common/error.h"
#include "ring/fence.h"
#include "buffers/gstcuda.h"
#include "buffers/memory.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_copier_debug

/* GstCudaMemory's allocator type (gstcudamemory.h, the same in nvcodec
 * 1.20 and libgstcuda 1.22+); its GST_MAP_CUDA is CUDAIPC_MAP_CUDA. */
#define CUDA_MEMORY_TYPE_NAME "gst.cuda.memory"

/* An upstream buffer kept until its copy into a slot is known complete:
 * the fence page's word of @slot reached @seq (read on the CPU), or
 * @fence (the slot's event, alive until the server stops) was recorded
 * after it. */
typedef struct
{
  GstBuffer *buf;
  CudaIpcFencePage *page;
  guint slot;
  guint64 seq;
  CudaIpcFence *fence;
} Pending;

struct _CudaIpcCopier
{
  CudaIpcDevice *dev;
  CUstream stream;              /* cuda backend: the copies', in the
                                 * device's context; NULL for host */
  guint max_pending;
  GQueue pending;               /* Pending*, oldest first */
  GQueue done;                  /* Pending* whose copy landed: let go of
                                 * once the frame in hand went out */
  gboolean checked;             /* adopt_context() looked at a frame */
  const gchar *logged_why;      /* the last fallback reason logged */

  GMutex lock;                  /* counts, read from any thread */
  CudaIpcCopierCounts counts;
};

/* What one call did, added to the counts at its end. */
typedef struct
{
  guint calls;
  guint syncs;
  guint from_gpu;
  guint from_host;
} Tally;

static void
add_tally (CudaIpcCopier * c, const Tally * t)
{
  g_mutex_lock (&c->lock);
  c->counts.driver_calls += t->calls;
  c->counts.host_syncs += t->syncs;
  c->counts.copies_from_gpu += t->from_gpu;
  c->counts.copies_from_host += t->from_host;
  g_mutex_unlock (&c->lock);
}

static void
pending_free (gpointer data)
{
  Pending *p = data;

  gst_buffer_unref (p->buf);
  g_free (p);
}

/* The buffers whose copy landed: freeing one can take microseconds (50
 * regions of interest with their parameters, say), so it is done once
 * the frame in hand is published, not on its way out. */
static void
let_go (CudaIpcCopier * c)
{
  g_queue_clear_full (&c->done, pending_free);
}

static void
drop_pending (CudaIpcCopier * c)
{
  g_queue_clear_full (&c->pending, pending_free);
  let_go (c);
}

/* The stream: the device's context current */

static gboolean
push (CudaIpcCopier * c, Tally * t, GError ** error)
{
  t->calls++;
  return cudaipc_device_push (c->dev, error);
}

static void
pop (CudaIpcCopier * c, Tally * t)
{
  t->calls++;
  cudaipc_device_pop (c->dev);
}

/* Waits until every copy queued is done, then lets go of every pending
 * buffer (also when the wait failed: nothing can be learnt of them). */
static gboolean
sync_stream (CudaIpcCopier * c, Tally * t, GError ** error)
{
  CUresult res;

  t->calls++;
  res = cudaipc_cuda ()->StreamSynchronize (c->stream);
  drop_pending (c);
  return cudaipc_cuda_check (res, "cuStreamSynchronize", error);
}

/* Moves the buffers whose copy is done (the stream runs in order: the
 * oldest first) to those let go of after the next publish and, while
 * @limit or more are pending, waits for the oldest. */
static void
reap_pending (CudaIpcCopier * c, guint limit, Tally * t)
{
  g_autoptr (GError) error = NULL;
  Pending *p;

  while ((p = g_queue_peek_head (&c->pending)) != NULL) {
    gboolean done = FALSE, ok = TRUE;

    if (p->page) {
      /* the slot is not written again before it is published and
       * released: a word at or past the number means this copy landed */
      done = cudaipc_fence_page_peek (p->page, p->slot) >= p->seq;
    } else {
      t->calls++;
      ok = cudaipc_fence_query (p->fence, &done, &error);
    }
    if (ok && !done) {
      if (g_queue_get_length (&c->pending) < limit)
        return;
      GST_LOG ("%u copies in flight: waiting for the oldest",
          g_queue_get_length (&c->pending));
      if (p->page) {
        if (!sync_stream (c, t, &error))
          GST_WARNING ("%s", error->message);
        return;
      }
      t->calls++;
      ok = cudaipc_fence_wait (p->fence, &error);
    }
    if (!ok) {
      /* the fence tells nothing: wait for the whole stream instead */
      GST_WARNING ("%s", error->message);
      g_clear_error (&error);
      if (!sync_stream (c, t, &error))
        GST_WARNING ("%s", error->message);
      return;
    }
    g_queue_push_tail (&c->done, g_queue_pop_head (&c->pending));
  }
}

static gboolean
open_stream (CudaIpcCopier * c, GError ** error)
{
  Tally t = { 0, };
  CUresult res;
  gboolean ok;

  if (!push (c, &t, error))
    return FALSE;
  t.calls++;
  res = cudaipc_cuda ()->StreamCreate (&c->stream, CU_STREAM_NON_BLOCKING);
  pop (c, &t);
  add_tally (c, &t);
  ok = cudaipc_cuda_check (res,
      "cuStreamCreate (CU_STREAM_NON_BLOCKING)", error);
  if (!ok)
    c->stream = NULL;
  return ok;
}

/* Waits for the copies in flight, lets go of their buffers and destroys
 * the stream. */
static void
close_stream (CudaIpcCopier * c)
{
  g_autoptr (GError) error = NULL;
  Tally t = { 0, };

  if (c->stream == NULL) {
    drop_pending (c);
    return;
  }
  if (push (c, &t, &error)) {
    if (!sync_stream (c, &t, &error))
      GST_WARNING ("%s", error->message);
    t.calls++;
    cudaipc_cuda ()->StreamDestroy (c->stream);
    pop (c, &t);
  } else {
    GST_WARNING ("cannot destroy the copy stream: %s", error->message);
  }
  c->stream = NULL;
  drop_pending (c);
  add_tally (c, &t);
}

/* Life cycle */

CudaIpcCopier *
cudaipc_copier_new (CudaIpcDevice * dev, guint max_pending, GError ** error)
{
  CudaIpcCopier *c;

  g_return_val_if_fail (dev != NULL, NULL);

  cudaipc_debug_init ();

  c = g_new0 (CudaIpcCopier, 1);
  c->dev = cudaipc_device_ref (dev);
  c->max_pending = MAX (max_pending, 1);
  g_queue_init (&c->pending);
  g_queue_init (&c->done);
  g_mutex_init (&c->lock);
  if (cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_CUDA &&
      !open_stream (c, error)) {
    cudaipc_copier_free (c);
    return NULL;
  }
  return c;
}

void
cudaipc_copier_free (CudaIpcCopier * c)
{
  if (c == NULL)
    return;
  close_stream (c);
  cudaipc_device_unref (c->dev);
  g_mutex_clear (&c->lock);
  g_free (c);
}

gboolean
cudaipc_copier_adopt_context (CudaIpcCopier * c, GstBuffer * buf,
    GError ** error)
{
  GObject *uctx;
  CUcontext ctx;

  g_return_val_if_fail (c != NULL, FALSE);

  if (c->checked || c->stream == NULL)
    return TRUE;
  c->checked = TRUE;
  uctx = cudaipc_gstcuda_memory_context (gst_buffer_peek_memory (buf, 0));
  if (uctx == NULL || cudaipc_gstcuda_context_device (uctx) !=
      cudaipc_device_get_ordinal (c->dev))
    return TRUE;
  /* nvcodec loaded libgstcuda into this process with the memory */
  ctx = cudaipc_gstcuda_context_handle (uctx);
  if (ctx == NULL)
    return TRUE;

  /* no copy ran yet: the stream of the old context simply goes */
  close_stream (c);
  cudaipc_device_use_context (c->dev, ctx, g_object_ref (uctx), g_object_unref);
  if (!open_stream (c, error))
    return FALSE;
  GST_INFO ("copies run in the CUDA context of upstream's memory (%s)",
      GST_OBJECT_NAME (uctx));
  return TRUE;
}

/* Copying */

gboolean
cudaipc_copier_wait_all (const gchar * why, gpointer copier, GError ** error)
{
  CudaIpcCopier *c = copier;
  Tally t = { 0, };
  gboolean ok;

  g_return_val_if_fail (c != NULL, FALSE);

  if (c->stream == NULL || g_queue_is_empty (&c->pending))
    return TRUE;
  GST_DEBUG ("%s: waiting for %u copies in flight", why,
      g_queue_get_length (&c->pending));
  ok = push (c, &t, error);
  if (ok) {
    ok = sync_stream (c, &t, error);
    pop (c, &t);
  }
  add_tally (c, &t);
  return ok;
}

/* Copies every memory of @buf, in order, contiguously to @dst: memcpy for
 * the host backend, else queued on the stream (the context current). */
static gboolean
copy_memories (CudaIpcCopier * c, GstBuffer * buf, guintptr dst,
    guint64 * copied, Tally * t, GError ** error)
{
  const CudaIpcCudaFuncs *cu = c->stream ? cudaipc_cuda () : NULL;
  guint n = gst_buffer_n_memory (buf);
  guint64 offset = 0;

  for (guint i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    gboolean device = cu && gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME);
    CUresult res = CUDA_SUCCESS;
    GstMapInfo map;
    gsize size;

    /* mapped for the call only: the buffer, pending until the copy is
     * done, keeps the memory; whatever upstream still has queued on the
     * memory's own stream ends first (gstcuda.h) */
    if (device)
      cudaipc_gstcuda_memory_sync (mem);
    if (device && gst_memory_map (mem, &map, GST_MAP_READ | CUDAIPC_MAP_CUDA)) {
      t->calls++;
      t->from_gpu++;
      res = cu->MemcpyDtoDAsync ((CUdeviceptr) (dst + offset),
          (CUdeviceptr) (guintptr) map.data, map.size, c->stream);
    } else if (gst_memory_map (mem, &map, GST_MAP_READ)) {
      t->from_host++;
      if (cu) {
        t->calls++;
        res = cu->MemcpyHtoDAsync ((CUdeviceptr) (dst + offset), map.data,
            map.size, c->stream);
      } else {
        memcpy ((guint8 *) dst + offset, map.data, map.size);
      }
    } else {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "cannot map memory %u of the buffer for reading", i);
      return FALSE;
    }
    size = map.size;
    gst_memory_unmap (mem, &map);
    if (res != CUDA_SUCCESS) {
      g_autofree gchar *text = cudaipc_cuda_error (res);

      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
          "copying %" G_GSIZE_FORMAT " bytes into the slot failed: %s",
          size, text);
      return FALSE;
    }
    offset += size;
  }
  *copied = offset;
  return TRUE;
}

gboolean
cudaipc_copier_copy (CudaIpcCopier * c, GstBuffer * buf,
    CudaIpcServer * server, guint slot, CudaIpcBlock * block,
    guint64 * copied, GError ** error)
{
  guintptr dst = cudaipc_block_get_ptr (block);
  CudaIpcFencePage *page = cudaipc_server_get_fence_page (server);
  CudaIpcFence *fence = NULL;
  guint64 seq = 0;
  Tally t = { 0, };
  gboolean ok;

  g_return_val_if_fail (c != NULL, FALSE);

  /* the number the frame's FRAME will carry: its word is set to it once
   * the copy has landed */
  if (page)
    seq = cudaipc_server_get_next_seq (server);
  if (c->stream == NULL) {
    ok = copy_memories (c, buf, dst, copied, &t, error);
    if (ok && page)
      ok = cudaipc_fence_page_signal (page, slot, seq, NULL, &t.calls, error);
    add_tally (c, &t);
    return ok;
  }

  if (!push (c, &t, error)) {
    add_tally (c, &t);
    return FALSE;
  }
  /* buffers whose copy is done go after this frame is published (those
   * of a frame that was not are let go now); with max_pending of them in
   * flight, wait for the oldest */
  let_go (c);
  reap_pending (c, c->max_pending, &t);
  if (page == NULL)
    fence = cudaipc_server_get_fence (server, slot);
  ok = copy_memories (c, buf, dst, copied, &t, error);
  /* GPU ordering: the slot's fence word, or its event, once the copy has
   * landed */
  if (ok && page) {
    ok = cudaipc_fence_page_signal (page, slot, seq, c->stream, &t.calls,
        error);
  } else if (ok && fence) {
    t.calls++;
    ok = cudaipc_fence_record (fence, c->stream, error);
  }
  if (ok) {
    Pending *p = g_new0 (Pending, 1);

    /* the copy may still read it; where publish() synchronises instead,
     * it goes then */
    p->buf = gst_buffer_ref (buf);
    p->page = page;
    p->slot = slot;
    p->seq = seq;
    p->fence = fence;
    if (page || fence)
      g_queue_push_tail (&c->pending, p);
    else
      pending_free (p);
  } else {
    g_autoptr (GError) sync_error = NULL;

    /* nothing may still read @buf or write the slot once it is aborted */
    if (!sync_stream (c, &t, &sync_error))
      GST_WARNING ("%s", sync_error->message);
  }
  pop (c, &t);
  add_tally (c, &t);
  return ok;
}

/* Publishing */

typedef struct
{
  CudaIpcCopier *copier;
  Tally tally;
} SyncData;

/* publish_fenced()'s fallback: the frame is complete before any FRAME
 * goes out. Called with the server's lock held. */
static gboolean
sync_before_publish (const gchar * why, gpointer user_data, GError ** error)
{
  SyncData *d = user_data;
  CudaIpcCopier *c = d->copier;
  gboolean ok;

  if (c->logged_why != why) {
    GST_INFO ("%s: synchronising the copy stream on the host before "
        "publishing", why);
    c->logged_why = why;
  }
  d->tally.syncs++;
  if (!push (c, &d->tally, error))
    return FALSE;
  ok = sync_stream (c, &d->tally, error);
  pop (c, &d->tally);
  return ok;
}

gboolean
cudaipc_copier_publish (CudaIpcCopier * c, CudaIpcServer * server,
    guint slot, CudaIpcFrameMsg * frame, guint * n_clients, GError ** error)
{
  SyncData d = { 0, };
  gboolean ok;

  g_return_val_if_fail (c != NULL, FALSE);

  d.copier = c;
  if (c->stream == NULL) {
    guint n = cudaipc_server_publish (server, slot, frame);

    if (n_clients)
      *n_clients = n;
    return TRUE;
  }
  /* published at once: each consumer waits on the slot's event; only
   * where that cannot order the frame does the server call
   * sync_before_publish() first */
  ok = cudaipc_server_publish_fenced (server, slot, frame,
      sync_before_publish, &d, n_clients, error);
  add_tally (c, &d.tally);
  /* the frame is out: now the buffers of frames before it */
  let_go (c);
  return ok;
}

gboolean
cudaipc_copier_prepare_in_place (CudaIpcCopier * c, GstBuffer * buf,
    GError ** error)
{
  Tally t = { 0, };

  g_return_val_if_fail (c != NULL, FALSE);

  /* upstream's writes: an element that wrote into memory of no stream
   * (ours) waited for them itself; one that flagged them pending is
   * waited for here */
  for (guint i = 0; i < gst_buffer_n_memory (buf); i++)
    cudaipc_gstcuda_memory_sync (gst_buffer_peek_memory (buf, i));
  /* a fence word this stream has still to write (a frame copied before,
   * which no consumer waited for) must not land after the CPU's */
  if (c->stream != NULL && !g_queue_is_empty (&c->pending)) {
    if (!push (c, &t, error)) {
      add_tally (c, &t);
      return FALSE;
    }
    reap_pending (c, 0, &t);
    pop (c, &t);
    let_go (c);
  }
  add_tally (c, &t);
  return TRUE;
}

void
cudaipc_copier_get_counts (CudaIpcCopier * c, CudaIpcCopierCounts * counts)
{
  g_return_if_fail (c != NULL);
  g_return_if_fail (counts != NULL);

  g_mutex_lock (&c->lock);
  *counts = c->counts;
  g_mutex_unlock (&c->lock);
}

gboolean
cudaipc_copier_write_now (CudaIpcDevice * dev, guintptr dst, guintptr src,
    gsize size, gboolean on_device, GError ** error)
{
  const CudaIpcCudaFuncs *cu;
  gboolean ok;

  g_return_val_if_fail (dev != NULL, FALSE);

  if (cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_HOST) {
    if (on_device) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "device memory given to a producer of the host backend");
      return FALSE;
    }
    memcpy ((void *) dst, (const void *) src, size);
    return TRUE;
  }
  if (!on_device)
    return cudaipc_device_write (dev, dst, (const void *) src, size, error);
  if (!cudaipc_device_push (dev, error))
    return FALSE;
  cu = cudaipc_cuda ();
  ok = cudaipc_cuda_check (cu->MemcpyDtoD ((CUdeviceptr) dst, (CUdeviceptr)
          src, size), "cuMemcpyDtoD", error) &&
      cudaipc_cuda_check (cu->StreamSynchronize (NULL),
      "cuStreamSynchronize", error);
  cudaipc_device_pop (dev);
  return ok;
}
