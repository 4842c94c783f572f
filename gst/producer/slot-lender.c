/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lending of ring slots that both pools share (slot-lender.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "producer/slot-lender.h"
#include "ring/block.h"
#include "common/debug.h"

/* a wait for a slot looks at the settings and at flushing this often */
#define WAIT_SLICE_US (100 * G_TIME_SPAN_MILLISECOND)

/* the hold of a slot's memory, and the mark of plain memory handed out
 * after a wait */
static G_DEFINE_QUARK (cudaipc-slot-hold, hold);
static G_DEFINE_QUARK (cudaipc-slot-waited, waited);

/* Where the lender lies in an instance of each pool type: written in
 * the pools' class_init, which GLib runs one at a time, read by any
 * thread once an instance exists. */
typedef struct
{
  GType type;
  gsize offset;
} LenderKind;

static LenderKind kinds[2];
static gint n_kinds;            /* atomic */

CudaIpcSlotLender *
cudaipc_slot_lender_of (GstBufferPool * pool)
{
  guint n = g_atomic_int_get (&n_kinds);

  if (pool == NULL)
    return NULL;
  for (guint i = 0; i < n; i++) {
    if (G_TYPE_CHECK_INSTANCE_TYPE (pool, kinds[i].type))
      return G_STRUCT_MEMBER_P (pool, kinds[i].offset);
  }
  return NULL;
}

/* What a slot's memory holds, for as long as it lives: the ticket of its
 * current lending (NULL while the buffer is spare), and the ring, so that
 * its block stays that ring's while the memory may be lent again. */
typedef struct
{
  CudaIpcSlotTicket *ticket;
  CudaIpcRing *ring;            /* a reference */
  CudaIpcBlock *block;
} SlotHold;

static void
hold_free (SlotHold * hold)
{
  cudaipc_slot_ticket_free (hold->ticket);
  cudaipc_ring_unref (hold->ring);
  g_free (hold);
}

static SlotHold *
hold_of (GstBuffer * buf)
{
  GstMemory *mem;

  if (gst_buffer_n_memory (buf) != 1)
    return NULL;
  mem = gst_buffer_peek_memory (buf, 0);
  if (mem->offset != 0)
    return NULL;
  return gst_mini_object_get_qdata (GST_MINI_OBJECT (mem), hold_quark ());
}

/* The lender */

void
cudaipc_slot_lender_init (CudaIpcSlotLender * lender, CudaIpcServer * server,
    CudaIpcSlotWrapFunc wrap, CudaIpcSlotPlainFunc plain,
    CudaIpcSlotReusableFunc reusable)
{
  memset (lender, 0, sizeof (*lender));
  lender->server = cudaipc_server_ref (server);
  lender->wait = TRUE;
  lender->wrap = wrap;
  lender->plain = plain;
  lender->reusable = reusable;
  g_mutex_init (&lender->lock);
  lender->spare = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
}

/* Lets go of the spare buffers that are not of @ring (NULL: all). */
static void
drop_spare (CudaIpcSlotLender * lender, CudaIpcRing * ring)
{
  GPtrArray *gone = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);

  g_mutex_lock (&lender->lock);
  for (guint i = lender->spare->len; i > 0; i--) {
    GstBuffer *buf = g_ptr_array_index (lender->spare, i - 1);

    if (ring == NULL || hold_of (buf)->ring != ring)
      g_ptr_array_add (gone, g_ptr_array_steal_index_fast (lender->spare,
              i - 1));
  }
  g_mutex_unlock (&lender->lock);
  /* freed unlocked: a memory's free may take the server's lock */
  g_ptr_array_unref (gone);
}

void
cudaipc_slot_lender_clear (CudaIpcSlotLender * lender)
{
  if (lender->spare) {
    drop_spare (lender, NULL);
    g_clear_pointer (&lender->spare, g_ptr_array_unref);
    g_mutex_clear (&lender->lock);
  }
  g_clear_pointer (&lender->server, cudaipc_server_unref);
}

gboolean
cudaipc_slot_lender_configure (CudaIpcSlotLender * lender,
    GstBufferPool * pool, GstStructure * config)
{
  GstCaps *caps = NULL;
  guint size, min, max;
  GstVideoInfo info;

  if (!gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max) ||
      caps == NULL || !gst_video_info_from_caps (&info, caps)) {
    GST_WARNING_OBJECT (pool, "not a video format: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  /* buffers of other caps are not lent again */
  drop_spare (lender, NULL);
  lender->info = info;
  lender->size = MAX (size, (guint) info.size);
  lender->video_meta = gst_buffer_pool_config_has_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  /* nothing is allocated ahead: a buffer is a slot lent when asked for */
  gst_buffer_pool_config_set_params (config, caps, lender->size, 0, 0);
  return TRUE;
}

static GstBuffer *
wrap (CudaIpcSlotLender * lender, GstMemory * mem)
{
  GstBuffer *buf = gst_buffer_new ();

  gst_buffer_append_memory (buf, mem);
  /* the buffer is as the pool made it: its memory was not replaced */
  GST_BUFFER_FLAG_UNSET (buf, GST_BUFFER_FLAG_TAG_MEMORY);
  if (lender->video_meta) {
    GstVideoInfo *info = &lender->info;
    GstVideoMeta *meta;

    meta = gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
        info->offset, info->stride);
    /* kept when the buffer is lent again */
    GST_META_FLAG_SET (meta, GST_META_FLAG_POOLED);
  }
  return buf;
}

static GstBuffer *
plain_buffer (CudaIpcSlotLender * lender, GstBufferPool * pool,
    gboolean waited)
{
  GstMemory *mem = lender->plain (pool);

  if (mem == NULL)
    return NULL;
  if (waited)
    gst_mini_object_set_qdata (GST_MINI_OBJECT (mem), waited_quark (),
        GINT_TO_POINTER (1), NULL);
  return wrap (lender, mem);
}

/* The spare buffer of @ticket's slot, lent again with it; NULL where
 * there is none. Spare buffers of other rings go. */
static GstBuffer *
take_spare (CudaIpcSlotLender * lender, CudaIpcSlotTicket * ticket)
{
  CudaIpcRing *ring = cudaipc_slot_ticket_get_ring (ticket);
  CudaIpcBlock *block = cudaipc_slot_ticket_get_block (ticket);
  GstBuffer *buf = NULL;
  gboolean stale = FALSE;

  g_mutex_lock (&lender->lock);
  for (guint i = 0; i < lender->spare->len; i++) {
    GstBuffer *b = g_ptr_array_index (lender->spare, i);
    SlotHold *hold = hold_of (b);

    if (hold->ring != ring) {
      stale = TRUE;
    } else if (hold->block == block) {
      buf = g_ptr_array_steal_index_fast (lender->spare, i);
      hold->ticket = ticket;
      break;
    }
  }
  g_mutex_unlock (&lender->lock);
  if (stale)
    drop_spare (lender, ring);
  return buf;
}

static GstBuffer *
slot_buffer (CudaIpcSlotLender * lender, GstBufferPool * pool,
    CudaIpcSlotTicket * ticket)
{
  GstBuffer *buf = take_spare (lender, ticket);
  SlotHold *hold;
  GstMemory *mem;

  if (buf)
    return buf;
  hold = g_new0 (SlotHold, 1);
  hold->ticket = ticket;
  hold->ring = cudaipc_ring_ref (cudaipc_slot_ticket_get_ring (ticket));
  hold->block = cudaipc_slot_ticket_get_block (ticket);
  mem = lender->wrap (pool, hold->block, hold, (GDestroyNotify) hold_free);
  if (mem == NULL) {
    hold_free (hold);
    return NULL;
  }
  gst_mini_object_set_qdata (GST_MINI_OBJECT (mem), hold_quark (), hold,
      NULL);
  return wrap (lender, mem);
}

static GstFlowReturn
lender_acquire_buffer (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  CudaIpcSlotLender *lender = cudaipc_slot_lender_of (pool);
  gint64 start = g_get_monotonic_time ();

  for (;;) {
    g_autoptr (GError) error = NULL;
    CudaIpcSlotTicket *ticket = NULL;
    CudaIpcServerStatus status;
    gint64 deadline = 0, until, now;
    guint timeout_ms = g_atomic_int_get (&lender->timeout_ms);

    if (GST_BUFFER_POOL_IS_FLUSHING (pool))
      return GST_FLOW_FLUSHING;
    if (g_atomic_int_get (&lender->wait) && !(params &&
            (params->flags & GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT)))
      deadline = timeout_ms == 0 ? -1 :
          start + G_TIME_SPAN_MILLISECOND * (gint64) timeout_ms;
    now = g_get_monotonic_time ();
    until = deadline;
    if (deadline != 0 && (deadline < 0 || deadline > now + WAIT_SLICE_US))
      until = now + WAIT_SLICE_US;

    status = cudaipc_server_acquire_in_place (lender->server, lender->size,
        until, &pool->flushing, &ticket, &error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
        *buffer = slot_buffer (lender, pool, ticket);
        return *buffer ? GST_FLOW_OK : GST_FLOW_ERROR;
      case CUDAIPC_SERVER_TIMEOUT:
        if (until != deadline)
          continue;             /* a slice: look at the settings again */
        GST_LOG_OBJECT (pool, "every slot held: plain memory instead");
        *buffer = plain_buffer (lender, pool, TRUE);
        return *buffer ? GST_FLOW_OK : GST_FLOW_ERROR;
      case CUDAIPC_SERVER_NO_RING:
        GST_LOG_OBJECT (pool, "no ring for frames of %u bytes yet: plain "
            "memory instead", lender->size);
        *buffer = plain_buffer (lender, pool, FALSE);
        return *buffer ? GST_FLOW_OK : GST_FLOW_ERROR;
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

/* The vfuncs both pools share, over the lender of either */

/* GstBufferPool's own class: the cuda pool's parent, GstCudaBufferPool,
 * would make allocators and streams that the pool never uses */
static GstBufferPoolClass *
base_class (void)
{
  return GST_BUFFER_POOL_CLASS (g_type_class_peek (GST_TYPE_BUFFER_POOL));
}

static const gchar **
lender_get_options (GstBufferPool * pool)
{
  static const gchar *options[] = { GST_BUFFER_POOL_OPTION_VIDEO_META, NULL };

  return options;
}

static gboolean
lender_set_config (GstBufferPool * pool, GstStructure * config)
{
  CudaIpcSlotLender *lender = cudaipc_slot_lender_of (pool);

  if (!cudaipc_slot_lender_configure (lender, pool, config))
    return FALSE;
  return base_class ()->set_config (pool, config);
}

static gboolean
lender_start (GstBufferPool * pool)
{
  /* nothing to allocate ahead: a buffer is made when its slot is lent */
  return TRUE;
}

static gboolean
lender_stop (GstBufferPool * pool)
{
  drop_spare (cudaipc_slot_lender_of (pool), NULL);
  return TRUE;
}

/* Whether @buffer, of @hold, came back whole: its one memory, the pool's,
 * held by nobody else, of the pool's size, nothing pending in it. */
static gboolean
came_back_whole (CudaIpcSlotLender * lender, GstBufferPool * pool,
    GstBuffer * buffer, SlotHold * hold)
{
  GstMemory *mem;

  if (hold == NULL || hold->ticket == NULL ||
      GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_TAG_MEMORY) ||
      !gst_buffer_pool_is_active (pool))
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  return GST_MINI_OBJECT_REFCOUNT_VALUE (mem) == 1 &&
      mem->size == lender->size &&
      (lender->reusable == NULL || lender->reusable (mem));
}

/* A buffer of a slot that came back whole gives its slot back now and
 * waits for that slot's next lending; any other goes, and its slot when
 * the last holder of the memory lets go. */
static void
lender_release_buffer (GstBufferPool * pool, GstBuffer * buffer)
{
  CudaIpcSlotLender *lender = cudaipc_slot_lender_of (pool);
  SlotHold *hold = hold_of (buffer);
  CudaIpcSlotTicket *ticket;

  if (!came_back_whole (lender, pool, buffer, hold)) {
    base_class ()->free_buffer (pool, buffer);
    return;
  }
  ticket = hold->ticket;
  hold->ticket = NULL;
  cudaipc_slot_ticket_free (ticket);
  g_mutex_lock (&lender->lock);
  g_ptr_array_add (lender->spare, buffer);
  g_mutex_unlock (&lender->lock);
}

/* upstream flushes its pool (a basesrc does when it stops): a wait for a
 * slot ends now */
static void
lender_flush_start (GstBufferPool * pool)
{
  cudaipc_server_kick (cudaipc_slot_lender_of (pool)->server);
}

void
cudaipc_slot_lender_class_init (GstBufferPoolClass * klass,
    gsize lender_offset)
{
  gint n = g_atomic_int_get (&n_kinds);

  g_return_if_fail (n < (gint) G_N_ELEMENTS (kinds));

  klass->get_options = lender_get_options;
  klass->set_config = lender_set_config;
  klass->start = lender_start;
  klass->stop = lender_stop;
  klass->acquire_buffer = lender_acquire_buffer;
  klass->release_buffer = lender_release_buffer;
  klass->flush_start = lender_flush_start;

  kinds[n].type = G_TYPE_FROM_CLASS (klass);
  kinds[n].offset = lender_offset;
  g_atomic_int_set (&n_kinds, n + 1);
}

GstBufferPool *
cudaipc_slot_lender_offer (GstBufferPool * pool, GstQuery * query)
{
  GstStructure *config;
  GstCaps *caps = NULL;
  GstVideoInfo info;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps)) {
    gst_object_unref (pool);
    return NULL;
  }
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
cudaipc_slot_lender_set_wait (CudaIpcSlotLender * lender, gboolean wait,
    guint timeout_ms)
{
  g_atomic_int_set (&lender->timeout_ms, timeout_ms);
  g_atomic_int_set (&lender->wait, wait);
}

CudaIpcSlotTicket *
cudaipc_slot_lender_buffer_ticket (GstBuffer * buf)
{
  SlotHold *hold = hold_of (buf);

  return hold ? hold->ticket : NULL;
}

gboolean
cudaipc_slot_lender_buffer_waited (GstBuffer * buf)
{
  return gst_buffer_n_memory (buf) >= 1 &&
      gst_mini_object_get_qdata (GST_MINI_OBJECT (gst_buffer_peek_memory (buf,
              0)), waited_quark ()) != NULL;
}
