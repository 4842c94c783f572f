/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsink's pool of ring slots for upstream (slot-pool.h).
 */
#include "slot-pool.h"
#include "block.h"
#include "debug.h"

/* a wait for a slot looks at the settings and at flushing this often */
#define WAIT_SLICE_US (100 * G_TIME_SPAN_MILLISECOND)

struct _CudaIpcSlotPool
{
  GstBufferPool parent;

  CudaIpcServer *server;
  GstVideoInfo info;
  guint size;
  gboolean video_meta;
  gint wait;                    /* atomic */
  guint timeout_ms;             /* atomic */
};

G_DEFINE_TYPE (CudaIpcSlotPool, cudaipc_slot_pool, GST_TYPE_BUFFER_POOL);

/* the ticket of a slot's memory, and the mark of plain memory handed out
 * after a wait */
static G_DEFINE_QUARK (cudaipc-slot-ticket, ticket);
static G_DEFINE_QUARK (cudaipc-slot-waited, waited);

static const gchar **
slot_pool_get_options (GstBufferPool * bpool)
{
  static const gchar *options[] = { GST_BUFFER_POOL_OPTION_VIDEO_META, NULL };

  return options;
}

static gboolean
slot_pool_set_config (GstBufferPool * bpool, GstStructure * config)
{
  CudaIpcSlotPool *pool = CUDAIPC_SLOT_POOL (bpool);
  GstCaps *caps = NULL;
  guint size, min, max;
  GstVideoInfo info;

  if (!gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max) ||
      caps == NULL || !gst_video_info_from_caps (&info, caps)) {
    GST_WARNING_OBJECT (pool, "not a video format: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  pool->info = info;
  pool->size = MAX (size, (guint) info.size);
  pool->video_meta = gst_buffer_pool_config_has_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  /* nothing is allocated ahead: a buffer is a slot lent when asked for */
  gst_buffer_pool_config_set_params (config, caps, pool->size, 0, 0);
  return GST_BUFFER_POOL_CLASS (cudaipc_slot_pool_parent_class)->set_config
      (bpool, config);
}

static gboolean
slot_pool_start (GstBufferPool * bpool)
{
  return TRUE;
}

static gboolean
slot_pool_stop (GstBufferPool * bpool)
{
  return TRUE;
}

static GstBuffer *
wrap (CudaIpcSlotPool * pool, GstMemory * mem)
{
  GstBuffer *buf = gst_buffer_new ();

  gst_buffer_append_memory (buf, mem);
  if (pool->video_meta) {
    GstVideoInfo *info = &pool->info;

    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
        info->offset, info->stride);
  }
  return buf;
}

static GstBuffer *
slot_buffer (CudaIpcSlotPool * pool, CudaIpcSlotTicket * ticket)
{
  CudaIpcBlock *block = cudaipc_slot_ticket_get_block (ticket);
  GstMemory *mem;

  mem = gst_memory_new_wrapped (0,
      GSIZE_TO_POINTER (cudaipc_block_get_ptr (block)),
      cudaipc_block_get_size (block), 0, pool->size, ticket,
      (GDestroyNotify) cudaipc_slot_ticket_free);
  gst_mini_object_set_qdata (GST_MINI_OBJECT (mem), ticket_quark (), ticket,
      NULL);
  return wrap (pool, mem);
}

static GstBuffer *
plain_buffer (CudaIpcSlotPool * pool, gboolean waited)
{
  GstMemory *mem = gst_allocator_alloc (NULL, pool->size, NULL);

  if (waited)
    gst_mini_object_set_qdata (GST_MINI_OBJECT (mem), waited_quark (),
        GINT_TO_POINTER (1), NULL);
  return wrap (pool, mem);
}

static GstFlowReturn
slot_pool_acquire_buffer (GstBufferPool * bpool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  CudaIpcSlotPool *pool = CUDAIPC_SLOT_POOL (bpool);
  gint64 start = g_get_monotonic_time ();

  for (;;) {
    g_autoptr (GError) error = NULL;
    CudaIpcSlotTicket *ticket = NULL;
    CudaIpcServerStatus status;
    gint64 deadline = 0, until, now;
    guint timeout_ms = g_atomic_int_get (&pool->timeout_ms);

    if (GST_BUFFER_POOL_IS_FLUSHING (bpool))
      return GST_FLOW_FLUSHING;
    if (g_atomic_int_get (&pool->wait) && !(params &&
            (params->flags & GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT)))
      deadline = timeout_ms == 0 ? -1 :
          start + G_TIME_SPAN_MILLISECOND * (gint64) timeout_ms;
    now = g_get_monotonic_time ();
    until = deadline;
    if (deadline != 0 && (deadline < 0 || deadline > now + WAIT_SLICE_US))
      until = now + WAIT_SLICE_US;

    status = cudaipc_server_acquire_in_place (pool->server, pool->size, until,
        &bpool->flushing, &ticket, &error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
        *buffer = slot_buffer (pool, ticket);
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_TIMEOUT:
        if (until != deadline)
          continue;             /* a slice: look at the settings again */
        GST_LOG_OBJECT (pool, "every slot held: plain memory instead");
        *buffer = plain_buffer (pool, TRUE);
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_NO_RING:
        GST_LOG_OBJECT (pool, "no ring for frames of %u bytes yet: plain "
            "memory instead", pool->size);
        *buffer = plain_buffer (pool, FALSE);
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_FLUSHING:
        return GST_FLOW_FLUSHING;
      case CUDAIPC_SERVER_WOKEN:
        continue;
      case CUDAIPC_SERVER_ERROR:
      default:
        GST_WARNING_OBJECT (pool, "no slot: %s", error ? error->message : "?");
        return GST_FLOW_ERROR;
    }
  }
}

/* upstream flushes its pool (a basesrc does when it stops): a wait for a
 * slot ends now */
static void
slot_pool_flush_start (GstBufferPool * bpool)
{
  cudaipc_server_kick (CUDAIPC_SLOT_POOL (bpool)->server);
}

static void
slot_pool_release_buffer (GstBufferPool * bpool, GstBuffer * buffer)
{
  /* not reused: its memory goes now, and the slot with it */
  GST_BUFFER_POOL_CLASS (cudaipc_slot_pool_parent_class)->free_buffer (bpool,
      buffer);
}

static void
slot_pool_finalize (GObject * object)
{
  CudaIpcSlotPool *pool = CUDAIPC_SLOT_POOL (object);

  cudaipc_server_unref (pool->server);
  G_OBJECT_CLASS (cudaipc_slot_pool_parent_class)->finalize (object);
}

static void
cudaipc_slot_pool_class_init (CudaIpcSlotPoolClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  gobject_class->finalize = slot_pool_finalize;
  pool_class->get_options = slot_pool_get_options;
  pool_class->set_config = slot_pool_set_config;
  pool_class->start = slot_pool_start;
  pool_class->stop = slot_pool_stop;
  pool_class->acquire_buffer = slot_pool_acquire_buffer;
  pool_class->release_buffer = slot_pool_release_buffer;
  pool_class->flush_start = slot_pool_flush_start;
}

static void
cudaipc_slot_pool_init (CudaIpcSlotPool * pool)
{
  pool->wait = TRUE;
}

GstBufferPool *
cudaipc_slot_pool_new (CudaIpcServer * server)
{
  CudaIpcSlotPool *pool;

  g_return_val_if_fail (server != NULL, NULL);

  pool = g_object_new (CUDAIPC_TYPE_SLOT_POOL, NULL);
  gst_object_ref_sink (pool);
  pool->server = cudaipc_server_ref (server);
  return GST_BUFFER_POOL (pool);
}

GstBufferPool *
cudaipc_slot_pool_offer (CudaIpcServer * server, GstQuery * query)
{
  GstBufferPool *pool;
  GstStructure *config;
  GstCaps *caps = NULL;
  GstVideoInfo info;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps))
    return NULL;

  pool = cudaipc_slot_pool_new (server);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_WARNING_OBJECT (pool, "refused %" GST_PTR_FORMAT, caps);
    gst_object_unref (pool);
    return NULL;
  }
  gst_query_add_allocation_pool (query, pool, info.size, 0, 0);
  return pool;
}

void
cudaipc_slot_pool_set_wait (CudaIpcSlotPool * pool, gboolean wait,
    guint timeout_ms)
{
  g_return_if_fail (CUDAIPC_IS_SLOT_POOL (pool));

  g_atomic_int_set (&pool->timeout_ms, timeout_ms);
  g_atomic_int_set (&pool->wait, wait);
}

CudaIpcSlotTicket *
cudaipc_slot_pool_buffer_ticket (GstBuffer * buf)
{
  GstMemory *mem;

  if (gst_buffer_n_memory (buf) != 1)
    return NULL;
  mem = gst_buffer_peek_memory (buf, 0);
  if (mem->offset != 0)
    return NULL;
  return gst_mini_object_get_qdata (GST_MINI_OBJECT (mem), ticket_quark ());
}

gboolean
cudaipc_slot_pool_buffer_waited (GstBuffer * buf)
{
  return gst_buffer_n_memory (buf) >= 1 &&
      gst_mini_object_get_qdata (GST_MINI_OBJECT (gst_buffer_peek_memory (buf,
              0)), waited_quark ()) != NULL;
}
