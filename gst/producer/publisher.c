/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The publisher's life cycle, settings, caps, events and counters; a
 * frame's way out is publisher-frame.c's (publisher-private.h has the
 * map, publisher.h the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "producer/publisher-private.h"
#include "common/error.h"
#include "wire/credentials.h"

#define GST_CAT_DEFAULT cudaipc_publisher_debug

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

void
cudaipc_publisher_config_copy (CudaIpcPublisherConfig * dest,
    const CudaIpcPublisherConfig * src)
{
  g_return_if_fail (dest != NULL && src != NULL);

  *dest = *src;
  dest->socket_name = g_strdup (src->socket_name);
  dest->name = g_strdup (src->name);
  dest->allowed_users = g_strdup (src->allowed_users);
  dest->allowed_groups = g_strdup (src->allowed_groups);
  dest->metas = g_strdup (src->metas);
}

void
cudaipc_publisher_config_clear (CudaIpcPublisherConfig * config)
{
  g_return_if_fail (config != NULL);

  g_clear_pointer ((gchar **) & config->socket_name, g_free);
  g_clear_pointer ((gchar **) & config->name, g_free);
  g_clear_pointer ((gchar **) & config->allowed_users, g_free);
  g_clear_pointer ((gchar **) & config->allowed_groups, g_free);
  g_clear_pointer ((gchar **) & config->metas, g_free);
}

/* The server's notices, from its I/O thread: the element's messages,
 * then the front door's callbacks. */

static void
post_client (CudaIpcPublisher * pub, const gchar * what, const gchar * name,
    gint pid, const gchar * reason)
{
  GstStructure *s;

  if (pub->element == NULL)
    return;
  s = gst_structure_new (what, "name", G_TYPE_STRING, name,
      "pid", G_TYPE_INT, pid, NULL);
  if (reason)
    gst_structure_set (s, "reason", G_TYPE_STRING, reason, NULL);
  gst_element_post_message (pub->element,
      gst_message_new_element (GST_OBJECT (pub->element), s));
  g_object_notify (G_OBJECT (pub->element), "num-clients");
}

static void
on_client_joined (const gchar * name, gint pid, gpointer user_data)
{
  CudaIpcPublisher *pub = user_data;

  post_client (pub, "cudaipcsink-client-joined", name, pid, NULL);
  if (pub->callbacks.server.client_joined)
    pub->callbacks.server.client_joined (name, pid, pub->user_data);
}

static void
on_client_left (const gchar * name, gint pid, const gchar * reason,
    gpointer user_data)
{
  CudaIpcPublisher *pub = user_data;

  post_client (pub, "cudaipcsink-client-left", name, pid, reason);
  if (pub->callbacks.server.client_left)
    pub->callbacks.server.client_left (name, pid, reason, pub->user_data);
}

static void
on_warning (const gchar * text, const gchar * debug, gpointer user_data)
{
  CudaIpcPublisher *pub = user_data;

  if (pub->callbacks.server.warning)
    pub->callbacks.server.warning (text, debug, pub->user_data);
}

static const CudaIpcServerCallbacks server_callbacks = {
  on_client_joined, on_client_left, on_warning,
};

/* The ticker's thread, every stats_interval_ms from new() to stop():
 * flat structures, readable as gst-launch-1.0 -m prints them, the totals
 * then one message per consumer. */
static void
post_stats (gpointer user_data)
{
  CudaIpcPublisher *pub = user_data;
  g_autoptr (GPtrArray) clients = g_ptr_array_new ();
  GstStructure *totals = cudaipc_publisher_stats_structure (pub, NULL,
      clients);

  gst_structure_set_name (totals, "cudaipcsink-stats");
  gst_element_post_message (pub->element,
      gst_message_new_element (GST_OBJECT (pub->element), totals));
  for (guint i = 0; i < clients->len; i++) {
    GstStructure *cs = g_ptr_array_index (clients, i);

    gst_structure_set_name (cs, "cudaipcsink-client-stats");
    gst_element_post_message (pub->element,
        gst_message_new_element (GST_OBJECT (pub->element), cs));
  }
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
  return cudaipc_server_new (pub->dev, &sc, &server_callbacks, pub, error);
}

/* The device the backend setting names; backend=auto decides here, as
 * the producer starts (backend-auto.c says why not earlier), and says
 * what it chose once, at INFO, and in the stats. */
static gboolean
open_device (CudaIpcPublisher * pub, const CudaIpcPublisherConfig * config,
    GError ** error)
{
  g_autofree gchar *missing = NULL;

  if (config->backend != CUDAIPC_BACKEND_AUTO) {
    pub->dev = cudaipc_device_new (config->backend, config->device_id,
        error);
    if (pub->dev)
      PUB_INFO (pub, "opened %s backend on %s",
          cudaipc_backend_name (config->backend),
          cudaipc_device_get_name (pub->dev));
    return pub->dev != NULL;
  }
  pub->dev = cudaipc_device_new_auto (config->device_id, &missing, error);
  if (pub->dev == NULL)
    return FALSE;
  if (missing)
    pub->backend_why = g_strdup_printf ("no usable GPU: %s", missing);
  else
    pub->backend_why = g_strdup_printf ("CUDA device %d (%s) is usable",
        config->device_id, cudaipc_device_get_name (pub->dev));
  PUB_INFO (pub, "backend=auto chose the %s backend: %s",
      cudaipc_backend_name (cudaipc_device_get_backend (pub->dev)),
      pub->backend_why);
  return TRUE;
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
  pub->ring_size = config->ring_size;
  pub->debug_category = config->debug_category ? config->debug_category :
      cudaipc_publisher_debug;
  pub->debug_object = config->debug_object;
  pub->element = config->element;
  pub->meta_blob = g_byte_array_new ();
  pub->wait_when_full = config->wait_when_full;
  pub->full_timeout_ms = config->full_timeout_ms;
  pub->wait_for_connection = config->wait_for_connection;
  g_mutex_init (&pub->lock);

  pub->meta_filter = cudaipc_meta_filter_new (config->metas, error);
  if (pub->meta_filter == NULL)
    FAIL (METAS);
  /* a name that lets nothing through would go unnoticed */
  if (config->element && cudaipc_meta_filter_get_doubts (pub->meta_filter))
    GST_ELEMENT_WARNING (config->element, RESOURCE, SETTINGS, ("%s",
            cudaipc_meta_filter_get_doubts (pub->meta_filter)),
        ("metas \"%s\"", config->metas));
  if (!cudaipc_credentials_parse_ids (config->allowed_users, FALSE, &uids,
          error) || !cudaipc_credentials_parse_ids (config->allowed_groups,
          TRUE, &gids, error))
    FAIL (PEERS);
  if (config->socket_name == NULL || config->socket_name[0] == '\0') {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "No socket name to listen on");
    FAIL (SOCKET_NAME);
  }
  if (!open_device (pub, config, error))
    FAIL (DEVICE);
  if (cudaipc_device_get_backend (pub->dev) == CUDAIPC_BACKEND_HOST &&
      config->element &&
      config->device_id != CUDAIPC_PUBLISHER_DEFAULT_DEVICE_ID)
    GST_ELEMENT_WARNING (config->element, RESOURCE, SETTINGS,
        ("device-id=%d is ignored with backend=host: the ring is in "
            "shared host memory", config->device_id),
        ("set backend=cuda for a GPU ring"));
  if (config->copier) {
    pub->copier = cudaipc_copier_new (pub->dev, config->ring_size, error);
    if (pub->copier == NULL)
      FAIL (COPIER);
  }
  pub->server = new_server (pub, config, uids, gids, error);
  if (pub->server == NULL)
    FAIL (SERVER);
  PUB_INFO (pub, "listening on %s", config->socket_name);
  if (pub->element && config->stats_interval_ms > 0)
    pub->ticker = cudaipc_ticker_new ("cudaipcsink-stats",
        config->stats_interval_ms, post_stats, pub);
  return g_steal_pointer (&pub);
}

#undef FAIL

gchar *
cudaipc_publisher_failure_text (CudaIpcPublisherFailed failed,
    const GError * error, const CudaIpcPublisherConfig * config, gchar ** debug)
{
  const gchar *backend = cudaipc_backend_name (config->backend);

  switch (failed) {
    case CUDAIPC_PUBLISHER_FAILED_METAS:
      *debug = g_strdup_printf ("metas \"%s\"", config->metas);
      return g_strdup (error->message);
    case CUDAIPC_PUBLISHER_FAILED_PEERS:
      *debug = g_strdup_printf ("allowed-users \"%s\", allowed-groups \"%s\"",
          config->allowed_users ? config->allowed_users : "",
          config->allowed_groups ? config->allowed_groups : "");
      return g_strdup (error->message);
    case CUDAIPC_PUBLISHER_FAILED_SOCKET_NAME:
      *debug = g_strdup ("cuipcsink needs socket-path to listen");
      return g_strdup ("No socket-path set");
    case CUDAIPC_PUBLISHER_FAILED_DEVICE:
      *debug = g_strdup_printf ("backend %s, device-id %d", backend,
          config->device_id);
      return g_strdup (error->message);
    case CUDAIPC_PUBLISHER_FAILED_COPIER:
      *debug = g_strdup_printf ("backend %s, device-id %d", backend,
          config->device_id);
      return g_strdup_printf ("Cannot set up the copies into the ring: %s",
          error->message);
    default:
      *debug = g_strdup_printf ("socket-path %s", config->socket_name);
      return g_strdup (error->message);
  }
}

void
cudaipc_publisher_stop (CudaIpcPublisher * pub)
{
  CudaIpcCopier *copier;

  g_return_if_fail (pub != NULL);

  /* joined here: no tick runs from now on */
  g_clear_pointer (&pub->ticker, cudaipc_ticker_free);

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
  g_free (pub->backend_why);
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
cudaipc_publisher_set_live (CudaIpcPublisher * pub, gboolean live)
{
  g_return_if_fail (pub != NULL);

  g_atomic_int_set (&pub->live, ! !live);
  cudaipc_server_set_live (pub->server, live);
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
cudaipc_publisher_apply_settings (CudaIpcPublisher * pub,
    const CudaIpcPublisherConfig * was, const CudaIpcPublisherConfig * now)
{
  g_return_if_fail (pub != NULL);

  if (was == NULL || was->wait_when_full != now->wait_when_full
      || was->full_timeout_ms != now->full_timeout_ms)
    cudaipc_publisher_set_on_full (pub, now->wait_when_full,
        now->full_timeout_ms);
  if (was == NULL || was->wait_for_connection != now->wait_for_connection)
    cudaipc_publisher_set_wait_for_connection (pub, now->wait_for_connection);
  if (was == NULL || was->consumer_timeout_ms != now->consumer_timeout_ms)
    cudaipc_publisher_set_consumer_timeout (pub, now->consumer_timeout_ms);
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

gchar *
cudaipc_publisher_result_text (CudaIpcPublisher * pub,
    CudaIpcPublishResult res, const CudaIpcPublisherFrame * frame,
    const CudaIpcPublished * out, const GError * error, gchar ** debug)
{
  const gchar *msg = error ? error->message : "?";
  gsize size = pub->buffers ? gst_buffer_get_size (frame->buffer) : frame->size;
  gchar *dbg = NULL, *text;

  switch (res) {
    case CUDAIPC_PUBLISH_NO_CONTEXT:
      text = g_strdup_printf ("Cannot copy in the CUDA context of "
          "upstream's memory: %s", msg);
      break;
    case CUDAIPC_PUBLISH_NO_RING:
      text = g_strdup_printf ("Cannot allocate a ring of %u slots for "
          "frames of %" G_GSIZE_FORMAT " bytes: %s", pub->ring_size, size, msg);
      dbg = g_strdup_printf ("backend %s, generation %u",
          cudaipc_backend_name (cudaipc_device_get_backend (pub->dev)),
          cudaipc_server_get_generation (pub->server) + 1);
      break;
    case CUDAIPC_PUBLISH_WRITE_FAILED:
      text = g_strdup_printf ("Cannot copy the frame into the shared ring: "
          "%s", msg);
      dbg = g_strdup_printf ("slot %u, %" G_GSIZE_FORMAT " bytes in %u "
          "memories", out->slot, size, gst_buffer_n_memory (frame->buffer));
      break;
    default:
      text = g_strdup_printf ("Cannot finish the copy into the shared ring: "
          "%s", msg);
      dbg = g_strdup_printf ("slot %u, %" G_GSIZE_FORMAT " bytes", out->slot,
          size);
      break;
  }
  if (debug)
    *debug = dbg;
  else
    g_free (dbg);
  return text;
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
  stats->live = g_atomic_int_get (&pub->live) != 0;
  g_mutex_unlock (&pub->lock);
  stats->backend = cudaipc_backend_name (cudaipc_device_get_backend
      (pub->dev));
  stats->backend_why = g_strdup (pub->backend_why);
}

void
cudaipc_publisher_stats_clear (CudaIpcPublisherStats * stats)
{
  if (stats == NULL)
    return;
  cudaipc_server_stats_clear (&stats->server);
  g_clear_pointer (&stats->backend_why, g_free);
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
      "metas-dropped", G_TYPE_UINT64, (guint64) stats->metas.dropped,
      "live", G_TYPE_BOOLEAN, stats->live, NULL);
  /* a sink that never started has no ring, nor a backend */
  if (stats->backend)
    gst_structure_set (st, "backend", G_TYPE_STRING, stats->backend, NULL);
  if (stats->backend_why)
    gst_structure_set (st, "backend-reason", G_TYPE_STRING, stats->backend_why,
        NULL);
  if (clients == NULL)
    gst_structure_take_value (st, "client-stats", &array);
  return st;
}

GstStructure *
cudaipc_publisher_stats_structure (CudaIpcPublisher * pub,
    const CudaIpcPublisherStats * last, GPtrArray * clients)
{
  CudaIpcPublisherStats stats;
  GstStructure *st;

  if (pub == NULL)
    return cudaipc_publisher_stats_to_structure (last,
        "application/x-cudaipcsink-stats", clients);
  cudaipc_publisher_get_stats (pub, &stats);
  st = cudaipc_publisher_stats_to_structure (&stats,
      "application/x-cudaipcsink-stats", clients);
  cudaipc_publisher_stats_clear (&stats);
  return st;
}
