/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's core below cuipcsink and cudaipc_producer; publisher.h
 * has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "producer/publisher.h"
#include "buffers/slot-pool.h"
#include "common/debug.h"
#include "common/error.h"
#include "media/media.h"
#include "wire/credentials.h"

#define GST_CAT_DEFAULT cudaipc_publisher_debug

/* A frame's logs: in the front door's category, of its object */
#define PUB_LOG(pub, ...) \
    GST_CAT_LOG_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)
#define PUB_DEBUG(pub, ...) \
    GST_CAT_DEBUG_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)
#define PUB_WARNING(pub, ...) \
    GST_CAT_WARNING_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)

/* acquire(): no deadline computed yet (-1 and times are taken) */
#define NO_DEADLINE G_MININT64

struct _CudaIpcPublisher
{
  /* set in new(), constant until free() */
  CudaIpcDevice *dev;           /* a reference */
  CudaIpcServer *server;
  CudaIpcPublisherCallbacks callbacks;
  gpointer user_data;
  gboolean buffers;             /* frames' bytes are GstBuffers' (a copier) */
  GstDebugCategory *debug_category;
  gpointer debug_object;

  /* the producer thread */
  CudaIpcMetaFilter *meta_filter;       /* of metas, read at new() */
  GByteArray *meta_blob;        /* the frame's metas: its FRAME borrows it */
  GstVideoInfo info;
  gboolean have_info;

  /* the settings: atomic, any thread */
  gint wait_when_full;
  guint full_timeout_ms;
  gint wait_for_connection;

  /* the counters, and the copier's going: under @lock */
  GMutex lock;
  CudaIpcCopier *copier;        /* until stop() */
  CudaIpcCopierCounts last_copies;      /* the stopped copier's */
  guint64 frames_in_place;
  CudaIpcMetaCounts metas;
};

/* Life cycle */

void
cudaipc_publisher_config_init (CudaIpcPublisherConfig * config)
{
  g_return_if_fail (config != NULL);

  memset (config, 0, sizeof (*config));
  config->backend = CUDAIPC_PUBLISHER_DEFAULT_BACKEND;
  config->device_id = CUDAIPC_PUBLISHER_DEFAULT_DEVICE_ID;
  config->socket_mode = CUDAIPC_PUBLISHER_DEFAULT_SOCKET_MODE;
  config->ring_size = CUDAIPC_PUBLISHER_DEFAULT_RING_SIZE;
  config->ordering = CUDAIPC_ORDERING_AUTO;
  config->copier = TRUE;
  config->wait_when_full = CUDAIPC_PUBLISHER_DEFAULT_WAIT_WHEN_FULL;
  config->full_timeout_ms = CUDAIPC_PUBLISHER_DEFAULT_FULL_TIMEOUT_MS;
  config->wait_for_connection = CUDAIPC_PUBLISHER_DEFAULT_WAIT_FOR_CONNECTION;
  config->consumer_timeout_ms = CUDAIPC_PUBLISHER_DEFAULT_CONSUMER_TIMEOUT_MS;
}

/* The server for @config on the publisher's device. */
static CudaIpcServer *
new_server (CudaIpcPublisher * pub, const CudaIpcPublisherConfig * config,
    GArray * uids, GArray * gids, GError ** error)
{
  CudaIpcServerConfig sc;

  cudaipc_server_config_init (&sc);
  sc.socket_name = config->socket_name;
  sc.mode = config->socket_mode;
  sc.n_slots = config->ring_size;
  sc.name = config->name;
  sc.uids = (const guint *) uids->data;
  sc.n_uids = uids->len;
  sc.gids = (const guint *) gids->data;
  sc.n_gids = gids->len;
  sc.client_timeout_ms = config->consumer_timeout_ms;
  sc.ordering = config->ordering;
  /* a ring is replaced only once every copy into it has landed */
  if (pub->copier) {
    sc.before_replace = cudaipc_copier_wait_all;
    sc.before_replace_data = pub->copier;
  }
  return cudaipc_server_new (pub->dev, &sc, &pub->callbacks.server,
      pub->user_data, error);
}

#define FAIL(part) G_STMT_START { \
    if (failed) \
      *failed = CUDAIPC_PUBLISHER_FAILED_ ## part; \
    return NULL; \
  } G_STMT_END

CudaIpcPublisher *
cudaipc_publisher_new (const CudaIpcPublisherConfig * config,
    const CudaIpcPublisherCallbacks * callbacks, gpointer user_data,
    CudaIpcPublisherFailed * failed, GError ** error)
{
  g_autoptr (CudaIpcPublisher) pub = NULL;
  g_autoptr (GArray) uids = NULL;
  g_autoptr (GArray) gids = NULL;

  g_return_val_if_fail (config != NULL, NULL);

  cudaipc_debug_init ();

  if (failed)
    *failed = CUDAIPC_PUBLISHER_FAILED_NONE;
  pub = g_new0 (CudaIpcPublisher, 1);
  if (callbacks)
    pub->callbacks = *callbacks;
  pub->user_data = user_data;
  pub->buffers = config->copier;
  pub->debug_category = config->debug_category ? config->debug_category :
      cudaipc_publisher_debug;
  pub->debug_object = config->debug_object;
  pub->meta_blob = g_byte_array_new ();
  pub->wait_when_full = config->wait_when_full;
  pub->full_timeout_ms = config->full_timeout_ms;
  pub->wait_for_connection = config->wait_for_connection;
  g_mutex_init (&pub->lock);

  pub->meta_filter = cudaipc_meta_filter_new (config->metas, error);
  if (pub->meta_filter == NULL)
    FAIL (METAS);
  if (!cudaipc_credentials_parse_ids (config->allowed_users, FALSE, &uids,
          error) || !cudaipc_credentials_parse_ids (config->allowed_groups,
          TRUE, &gids, error))
    FAIL (PEERS);
  if (config->socket_name == NULL || config->socket_name[0] == '\0') {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "No socket name to listen on");
    FAIL (SOCKET_NAME);
  }
  pub->dev = cudaipc_device_new (config->backend, config->device_id, error);
  if (pub->dev == NULL)
    FAIL (DEVICE);
  if (config->copier) {
    pub->copier = cudaipc_copier_new (pub->dev, config->ring_size, error);
    if (pub->copier == NULL)
      FAIL (COPIER);
  }
  pub->server = new_server (pub, config, uids, gids, error);
  if (pub->server == NULL)
    FAIL (SERVER);
  return g_steal_pointer (&pub);
}

#undef FAIL

void
cudaipc_publisher_stop (CudaIpcPublisher * pub)
{
  CudaIpcCopier *copier;

  g_return_if_fail (pub != NULL);

  /* no copy may be in flight when the server frees the slots and fences */
  g_mutex_lock (&pub->lock);
  copier = pub->copier;
  pub->copier = NULL;
  if (copier)
    cudaipc_copier_get_counts (copier, &pub->last_copies);
  g_mutex_unlock (&pub->lock);
  cudaipc_copier_free (copier);

  /* its callbacks may run meanwhile */
  if (pub->server)
    cudaipc_server_stop (pub->server);
}

void
cudaipc_publisher_free (CudaIpcPublisher * pub)
{
  if (pub == NULL)
    return;

  cudaipc_publisher_stop (pub);
  cudaipc_server_free (pub->server);
  g_clear_pointer (&pub->dev, cudaipc_device_unref);
  g_clear_pointer (&pub->meta_filter, cudaipc_meta_filter_free);
  g_byte_array_unref (pub->meta_blob);
  g_mutex_clear (&pub->lock);
  g_free (pub);
}

CudaIpcServer *
cudaipc_publisher_get_server (CudaIpcPublisher * pub)
{
  g_return_val_if_fail (pub != NULL, NULL);
  return pub->server;
}

CudaIpcDevice *
cudaipc_publisher_get_device (CudaIpcPublisher * pub)
{
  g_return_val_if_fail (pub != NULL, NULL);
  return pub->dev;
}

/* Settings, any thread */

void
cudaipc_publisher_set_on_full (CudaIpcPublisher * pub,
    gboolean wait_when_full, guint full_timeout_ms)
{
  g_return_if_fail (pub != NULL);

  g_atomic_int_set (&pub->wait_when_full, wait_when_full);
  g_atomic_int_set (&pub->full_timeout_ms, full_timeout_ms);
  /* a publish() waiting for a slot reads them again */
  cudaipc_server_wake (pub->server);
}

void
cudaipc_publisher_set_wait_for_connection (CudaIpcPublisher * pub,
    gboolean wait)
{
  g_return_if_fail (pub != NULL);

  g_atomic_int_set (&pub->wait_for_connection, wait);
  cudaipc_server_wake (pub->server);
}

void
cudaipc_publisher_set_consumer_timeout (CudaIpcPublisher * pub,
    guint timeout_ms)
{
  g_return_if_fail (pub != NULL);
  cudaipc_server_set_client_timeout (pub->server, timeout_ms);
}

void
cudaipc_publisher_set_flushing (CudaIpcPublisher * pub, gboolean flushing)
{
  g_return_if_fail (pub != NULL);
  cudaipc_server_set_flushing (pub->server, flushing);
}

/* The producer thread */

gboolean
cudaipc_publisher_set_caps (CudaIpcPublisher * pub, GstCaps * caps,
    const GstVideoInfo * info, GError ** error)
{
  g_autofree gchar *str = NULL;

  g_return_val_if_fail (pub != NULL, FALSE);
  g_return_val_if_fail (GST_IS_CAPS (caps), FALSE);
  g_return_val_if_fail (info != NULL, FALSE);

  str = gst_caps_to_string (caps);
  if (!cudaipc_server_set_caps (pub->server, str, info->size, error))
    return FALSE;
  pub->info = *info;
  pub->have_info = TRUE;
  return TRUE;
}

/* With wait-for-connection, waits until a consumer is ready. */
static CudaIpcPublishResult
wait_for_consumer (CudaIpcPublisher * pub)
{
  for (;;) {
    if (!g_atomic_int_get (&pub->wait_for_connection) ||
        cudaipc_server_get_n_clients (pub->server) > 0)
      return CUDAIPC_PUBLISH_OK;

    PUB_LOG (pub, "waiting for a consumer");
    switch (cudaipc_server_wait_for_client (pub->server, -1)) {
      case CUDAIPC_SERVER_OK:
        return CUDAIPC_PUBLISH_OK;
      case CUDAIPC_SERVER_FLUSHING:
        if (pub->callbacks.flushing == NULL ||
            !pub->callbacks.flushing (pub->user_data))
          return CUDAIPC_PUBLISH_FLUSHING;
        break;
      default:
        /* woken: the setting may have changed */
        break;
    }
  }
}

/* Waits for a free slot for a frame of @size as on-full says. OK with
 * @slot and @block; DROPPED: every slot stayed held. */
static CudaIpcPublishResult
acquire (CudaIpcPublisher * pub, const CudaIpcPublisherFrame * frame,
    guint64 size, guint * slot, CudaIpcBlock ** block, GError ** error)
{
  /* the in-place pool waited as long as on-full allows already */
  gboolean waited = frame->data == 0 &&
      cudaipc_slot_pool_buffer_waited (frame->buffer);
  CudaIpcServerStatus status;
  gint64 deadline = NO_DEADLINE, until;

  do {
    guint full_timeout = frame->full_timeout_ms;

    if (full_timeout == 0)
      full_timeout = g_atomic_int_get (&pub->full_timeout_ms);
    if (!g_atomic_int_get (&pub->wait_when_full) || waited) {
      until = 0;
    } else {
      if (deadline == NO_DEADLINE)
        deadline = full_timeout == 0 ? -1 : g_get_monotonic_time () +
            G_TIME_SPAN_MILLISECOND * (gint64) full_timeout;
      until = deadline;
    }

    status = cudaipc_server_acquire (pub->server, size, until, slot, block,
        error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
      case CUDAIPC_SERVER_WOKEN:
        /* woken: a setting changed, read it again */
        break;
      case CUDAIPC_SERVER_TIMEOUT:
        PUB_DEBUG (pub, "every slot is held: dropped buffer %"
            GST_PTR_FORMAT, frame->buffer);
        return CUDAIPC_PUBLISH_DROPPED;
      case CUDAIPC_SERVER_FLUSHING:
        if (pub->callbacks.flushing == NULL ||
            !pub->callbacks.flushing (pub->user_data))
          return CUDAIPC_PUBLISH_FLUSHING;
        /* paused meanwhile: the time limit starts again */
        deadline = NO_DEADLINE;
        break;
      case CUDAIPC_SERVER_NO_RING:
      case CUDAIPC_SERVER_ERROR:
        return CUDAIPC_PUBLISH_NO_RING;
    }
  } while (status != CUDAIPC_SERVER_OK);
  return CUDAIPC_PUBLISH_OK;
}

/* @buf's metas, as the filter lets them through, into the FRAME @f
 * (which borrows the blob until the next frame), with what went in and
 * what not in @counts. */
static void
encode_metas (CudaIpcPublisher * pub, GstBuffer * buf, CudaIpcFrameMsg * f,
    CudaIpcMetaCounts * counts)
{
  memset (counts, 0, sizeof (*counts));
  g_byte_array_set_size (pub->meta_blob, 0);
  cudaipc_metas_encode (buf, pub->meta_filter, pub->meta_blob, counts);
  f->meta = pub->meta_blob->data;
  f->meta_len = pub->meta_blob->len;
}

/* The FRAME for @buf but for its metas (encode_metas()) and its size in
 * the slot. */
static void
describe (CudaIpcPublisher * pub, GstBuffer * buf, CudaIpcFrameMsg * f)
{
  cudaipc_media_describe_buffer (buf, pub->have_info ? &pub->info : NULL, f);
  if (pub->callbacks.capture_time)
    f->clock_time = pub->callbacks.capture_time (f->pts, pub->user_data);
  else
    f->clock_time = g_get_monotonic_time () * 1000;
}

/* The metas of a frame that went out, into the counters and @out. */
static void
count_metas (CudaIpcPublisher * pub, const CudaIpcMetaCounts * counts,
    CudaIpcPublished * out)
{
  out->metas = *counts;
  /* most frames carry none: no lock for them */
  if (counts->carried == 0 && counts->skipped == 0 && counts->dropped == 0)
    return;
  g_mutex_lock (&pub->lock);
  pub->metas.carried += counts->carried;
  pub->metas.skipped += counts->skipped;
  pub->metas.dropped += counts->dropped;
  g_mutex_unlock (&pub->lock);
}

/* @buf is a slot upstream wrote into (the in-place pool): publishes it as
 * it is, with @f (described). FALSE, @f untouched but for its size, where
 * the server will not (its ring was replaced since, or the buffer went
 * out already): @buf is then copied as any other. */
static gboolean
publish_in_place (CudaIpcPublisher * pub, GstBuffer * buf,
    CudaIpcSlotTicket * ticket, CudaIpcFrameMsg * f, CudaIpcPublished * out)
{
  f->size = gst_buffer_get_size (buf);
  if (cudaipc_device_get_backend (pub->dev) == CUDAIPC_BACKEND_CUDA) {
    g_autoptr (GError) error = NULL;

    /* complete before its fence word is set on the CPU */
    if (!cudaipc_copier_prepare_in_place (pub->copier, buf, &error)) {
      PUB_WARNING (pub, "slot %u cannot go out as it is (%s): copied",
          cudaipc_slot_ticket_get_slot (ticket), error->message);
      return FALSE;
    }
  }
  if (!cudaipc_server_publish_in_place (pub->server, ticket, f,
          &out->n_clients)) {
    PUB_LOG (pub, "slot %u cannot go out as it is: copied",
        cudaipc_slot_ticket_get_slot (ticket));
    return FALSE;
  }
  g_mutex_lock (&pub->lock);
  pub->frames_in_place++;
  g_mutex_unlock (&pub->lock);
  out->in_place = TRUE;
  PUB_LOG (pub, "published frame %" G_GUINT64_FORMAT " in place in slot %u "
      "to %u client(s)", f->seq, f->slot, out->n_clients);
  return TRUE;
}

/* The frame's bytes into @slot, whose @block acquire() gave: the
 * copier's copy of the buffer, or the bytes at its pointer. */
static gboolean
write_slot (CudaIpcPublisher * pub, const CudaIpcPublisherFrame * frame,
    guint slot, CudaIpcBlock * block, guint64 * written, GError ** error)
{
  if (!pub->buffers) {
    if (!cudaipc_copier_write_now (pub->dev, cudaipc_block_get_ptr (block),
            frame->data, frame->size, frame->on_device, error))
      return FALSE;
    *written = frame->size;
    return TRUE;
  }
  return cudaipc_copier_copy (pub->copier, frame->buffer, pub->server, slot,
      block, written, error);
}

/* Publishes @slot, written by write_slot(): fenced after the copier's
 * copy, or as it is where it is complete already. */
static gboolean
publish_written (CudaIpcPublisher * pub, guint slot, CudaIpcFrameMsg * f,
    guint * n_clients, GError ** error)
{
  if (pub->buffers)
    return cudaipc_copier_publish (pub->copier, pub->server, slot, f,
        n_clients, error);
  *n_clients = cudaipc_server_publish (pub->server, slot, f);
  return TRUE;
}

CudaIpcPublishResult
cudaipc_publisher_publish (CudaIpcPublisher * pub,
    const CudaIpcPublisherFrame * frame, CudaIpcPublished * out,
    GError ** error)
{
  GstBuffer *buf = frame->buffer;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcSlotTicket *ticket = NULL;
  CudaIpcMetaCounts counts;
  CudaIpcPublishResult res;
  CudaIpcBlock *block = NULL;
  gboolean described = FALSE;
  guint64 size, written = 0;

  g_return_val_if_fail (pub != NULL, CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (frame != NULL && GST_IS_BUFFER (buf),
      CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (pub->buffers == (frame->data == 0),
      CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (out != NULL, CUDAIPC_PUBLISH_INVALID);

  memset (out, 0, sizeof (*out));
  size = pub->buffers ? gst_buffer_get_size (buf) : frame->size;
  encode_metas (pub, buf, &f, &counts);
  if (frame->all_metas && counts.dropped > 0) {
    out->metas = counts;
    return CUDAIPC_PUBLISH_INVALID;
  }

  res = wait_for_consumer (pub);
  if (res != CUDAIPC_PUBLISH_OK)
    return res;

  /* the first frame may move the copies into upstream's CUDA context */
  if (pub->buffers && cudaipc_server_get_generation (pub->server) == 0 &&
      !cudaipc_copier_adopt_context (pub->copier, buf, error))
    return CUDAIPC_PUBLISH_NO_CONTEXT;

  if (pub->buffers)
    ticket = cudaipc_slot_pool_buffer_ticket (buf);
  if (ticket) {
    /* described once: a slot that cannot go out as it is goes out copied
     * with the same FRAME */
    describe (pub, buf, &f);
    described = TRUE;
    if (publish_in_place (pub, buf, ticket, &f, out)) {
      count_metas (pub, &counts, out);
      out->slot = f.slot;
      out->seq = f.seq;
      out->size = f.size;
      return CUDAIPC_PUBLISH_OK;
    }
  }

  res = acquire (pub, frame, size, &out->slot, &block, error);
  if (res != CUDAIPC_PUBLISH_OK)
    return res;

  /* the slot is ours until published: nobody else touches it, and only
   * this thread makes the server replace the ring */
  if (!write_slot (pub, frame, out->slot, block, &written, error)) {
    cudaipc_server_abort (pub->server, out->slot);
    return CUDAIPC_PUBLISH_WRITE_FAILED;
  }

  if (!described)
    describe (pub, buf, &f);
  f.size = written;
  count_metas (pub, &counts, out);

  if (!publish_written (pub, out->slot, &f, &out->n_clients, error))
    return CUDAIPC_PUBLISH_SYNC_FAILED;
  out->seq = f.seq;
  out->size = written;
  PUB_LOG (pub, "published frame %" G_GUINT64_FORMAT " in slot %u to %u "
      "client(s)", f.seq, out->slot, out->n_clients);
  return CUDAIPC_PUBLISH_OK;
}

gboolean
cudaipc_publisher_send_event (CudaIpcPublisher * pub, GstEvent * event,
    GstClockTime running_time, GError ** error)
{
  g_return_val_if_fail (pub != NULL, FALSE);
  return cudaipc_server_send_event (pub->server, event, running_time, error);
}

void
cudaipc_publisher_clear_eos (CudaIpcPublisher * pub)
{
  g_return_if_fail (pub != NULL);
  cudaipc_server_clear_eos (pub->server);
}

/* Any thread */

guint
cudaipc_publisher_get_n_clients (CudaIpcPublisher * pub)
{
  g_return_val_if_fail (pub != NULL, 0);
  return cudaipc_server_get_n_clients (pub->server);
}

guint32
cudaipc_publisher_get_generation (CudaIpcPublisher * pub)
{
  g_return_val_if_fail (pub != NULL, 0);
  return cudaipc_server_get_generation (pub->server);
}

void
cudaipc_publisher_get_stats (CudaIpcPublisher * pub,
    CudaIpcPublisherStats * stats)
{
  g_return_if_fail (stats != NULL);

  memset (stats, 0, sizeof (*stats));
  if (pub == NULL)
    return;
  cudaipc_server_get_stats (pub->server, &stats->server);
  g_mutex_lock (&pub->lock);
  if (pub->copier)
    cudaipc_copier_get_counts (pub->copier, &stats->copies);
  else
    stats->copies = pub->last_copies;
  stats->frames_in_place = pub->frames_in_place;
  stats->metas = pub->metas;
  g_mutex_unlock (&pub->lock);
}

void
cudaipc_publisher_stats_clear (CudaIpcPublisherStats * stats)
{
  if (stats)
    cudaipc_server_stats_clear (&stats->server);
}

GstStructure *
cudaipc_publisher_stats_to_structure (const CudaIpcPublisherStats * stats,
    const gchar * name, GPtrArray * clients)
{
  const CudaIpcServerStats *ss = &stats->server;
  const CudaIpcCopierCounts *cc = &stats->copies;
  GValue array = G_VALUE_INIT;
  GstStructure *st;

  if (clients == NULL)
    g_value_init (&array, GST_TYPE_ARRAY);
  for (guint i = 0; ss->clients && i < ss->clients->len; i++) {
    const CudaIpcServerClientStats *c =
        &g_array_index (ss->clients, CudaIpcServerClientStats, i);
    GstStructure *cs = gst_structure_new ("cudaipcsink-client",
        "name", G_TYPE_STRING, c->name, "pid", G_TYPE_INT, c->pid,
        "frames-sent", G_TYPE_UINT64, c->frames_sent,
        "frames-released", G_TYPE_UINT64, c->frames_released,
        "held", G_TYPE_UINT, c->held,
        "events", G_TYPE_BOOLEAN, c->events,
        "fence", G_TYPE_BOOLEAN, c->fence, NULL);

    if (clients) {
      g_ptr_array_add (clients, cs);
    } else {
      GValue v = G_VALUE_INIT;

      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, cs);
      gst_value_array_append_and_take_value (&array, &v);
    }
  }
  st = gst_structure_new (name,
      "frames-published", G_TYPE_UINT64, ss->frames_published,
      "frames-dropped", G_TYPE_UINT64, ss->frames_dropped,
      "clients", G_TYPE_UINT, ss->n_clients,
      "generation", G_TYPE_UINT, (guint) ss->generation,
      "rings-retired", G_TYPE_UINT64, ss->rings_retired,
      "driver-calls", G_TYPE_UINT64, cc->driver_calls,
      "host-syncs", G_TYPE_UINT64, cc->host_syncs,
      "copies-from-gpu", G_TYPE_UINT64, cc->copies_from_gpu,
      "copies-from-host", G_TYPE_UINT64, cc->copies_from_host,
      "frames-in-place", G_TYPE_UINT64, stats->frames_in_place,
      "metas-sent", G_TYPE_UINT64, (guint64) stats->metas.carried,
      "metas-skipped", G_TYPE_UINT64, (guint64) stats->metas.skipped,
      "metas-dropped", G_TYPE_UINT64, (guint64) stats->metas.dropped, NULL);
  if (clients == NULL)
    gst_structure_take_value (st, "client-stats", &array);
  return st;
}
