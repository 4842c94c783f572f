/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cuipcsink
 * @title: cuipcsink
 * @see_also: cuipcsrc
 *
 * Also registered as `cudaipcsink`, a name that GStreamer >= 1.24's nvcodec
 * uses for its own element: `cuipcsink` is ours alone (docs/elements.md).
 *
 * Shares video frames with other processes. The sink keeps a ring of
 * buffers on one device (CUDA virtual memory, or shared host memory with
 * `backend=host`), exports each buffer once as file descriptors, and tells
 * every cuipcsrc connected to its Unix socket which buffer holds which
 * frame. A buffer is written again only once every consumer it was
 * published to has released it; `on-full` says what happens meanwhile.
 * With the cuda backend the copy runs on the sink's own CUDA stream and
 * the frame is published without waiting for it: the stream then writes
 * the frame's number into the slot's word of a fence page, a small memory
 * file sent to each consumer with the ring, and each consumer reads it on
 * the CPU before it hands out the frame; only for a consumer that cannot
 * (or with #GstCuIpcSink:ordering=host) does the sink wait for its copy
 * first. Nothing but the socket is shared, so consumers may run in
 * containers of their own.
 *
 * Caps, timestamps, buffer flags, plane offsets and strides, and the
 * SEGMENT, TAG, EOS and custom serialized events travel in band.
 *
 * The element posts element messages "cudaipcsink-client-joined" (name,
 * pid) when a consumer finished its handshake, "cudaipcsink-client-left"
 * (name, pid, reason) when it went away, and, with stats-interval set,
 * "cudaipcsink-stats" (the stats property's fields) periodically.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaupload ! \
 *     cuipcsink socket-path=/tmp/cam1.sock
 * gst-launch-1.0 cuipcsrc socket-path=/tmp/cam1.sock ! cudadownload ! \
 *     videoconvert ! autovideosink
 * ]|
 * Without a GPU:
 * |[
 * gst-launch-1.0 videotestsrc ! cuipcsink socket-path=@cam1 backend=host
 * gst-launch-1.0 cuipcsrc socket-path=@cam1 ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipcsink-props.h"
#include "cudaipc-enums.h"
#include "producer/copier.h"
#include "wire/credentials.h"
#include "device/device.h"
#include "common/error.h"
#include "buffers/gstcuda.h"
#include "media/media.h"
#include "metas/metas.h"
#include "producer/server.h"
#include "buffers/slot-pool.h"
#include "common/ticker.h"
#include "media/timing.h"

GST_DEBUG_CATEGORY_STATIC (gst_cu_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_sink_debug

/* render(): no deadline computed yet (-1 and times are taken) */
#define NO_DEADLINE G_MININT64


struct _GstCuIpcSink
{
  GstBaseSink parent;

  /* the properties' values, object lock (cudaipcsink-props.h) */
  GstCuIpcSinkProps props;

  /* object lock; set in start(), cleared in stop() */
  CudaIpcServer *server;
  CudaIpcCopier *copier;        /* the copies into the ring (copier.h) */
  GstBufferPool *pool;          /* the last in-place pool proposed */
  GObject *cuda_ctx;            /* the GstCudaContext upstream writes with
                                 * (cuda backend, GStreamer >= 1.24), for
                                 * the in-place pool; until stop() */
  gpointer renegotiated_for;    /* a stale pool upstream was told of */
  guint64 frames_in_place;      /* published as upstream wrote them */
  /* the stopped server's and copier's counters */
  CudaIpcServerStats last_stats;
  CudaIpcCopierCounts last_counts;

  /* streaming thread, from start() to stop() */
  CudaIpcDevice *dev;
  GstVideoInfo info;
  gboolean have_info;
  CudaIpcMetaFilter *meta_filter;       /* of metas, read at start() */
  GByteArray *meta_blob;        /* the frame's metas on the wire */
  gboolean warned_metas;        /* that some were left out */
  CudaIpcMetaCounts meta_counts;        /* object lock */

  /* posts the counters every stats-interval; start() to stop() */
  CudaIpcTicker *ticker;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(memory:CUDAMemory); video/x-raw"));

#define gst_cu_ipc_sink_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstCuIpcSink, gst_cu_ipc_sink, GST_TYPE_BASE_SINK,
    GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_sink_debug, "cudaipcsink", 0,
        "CUDA IPC sink"));
/* cuipcsink: a name of ours alone (docs/elements.md, Names) */
GST_ELEMENT_REGISTER_DEFINE (cudaipcsink, "cudaipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);
GST_ELEMENT_REGISTER_DEFINE (cuipcsink, "cuipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);

/* Server callbacks: from its I/O thread, without its lock */

static void
post_client_message (GstCuIpcSink * self, const gchar * what,
    const gchar * name, gint pid, const gchar * reason)
{
  GstStructure *s;

  s = gst_structure_new (what, "name", G_TYPE_STRING, name,
      "pid", G_TYPE_INT, pid, NULL);
  if (reason)
    gst_structure_set (s, "reason", G_TYPE_STRING, reason, NULL);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
  g_object_notify (G_OBJECT (self), "num-clients");
}

static void
on_client_joined (const gchar * name, gint pid, gpointer user_data)
{
  post_client_message (user_data, "cudaipcsink-client-joined", name, pid, NULL);
}

static void
on_client_left (const gchar * name, gint pid, const gchar * reason,
    gpointer user_data)
{
  post_client_message (user_data, "cudaipcsink-client-left", name, pid, reason);
}

static void
on_warning (const gchar * text, const gchar * debug, gpointer user_data)
{
  GstCuIpcSink *self = user_data;

  GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s", text), ("%s", debug));
}

static const CudaIpcServerCallbacks server_callbacks = {
  on_client_joined,
  on_client_left,
  on_warning,
};

/* The counters, with the object lock held: the server's and the
 * copier's totals, and one "cudaipcsink-client" structure per consumer
 * added to @clients. */
static GstStructure *
get_stats_locked (GstCuIpcSink * self, GPtrArray * clients)
{
  CudaIpcServerStats ss;
  CudaIpcCopierCounts cc = self->last_counts;
  GstStructure *st;

  if (self->server)
    cudaipc_server_get_stats (self->server, &ss);
  else
    ss = self->last_stats;
  if (self->copier)
    cudaipc_copier_get_counts (self->copier, &cc);

  for (guint i = 0; ss.clients && i < ss.clients->len; i++) {
    const CudaIpcServerClientStats *c =
        &g_array_index (ss.clients, CudaIpcServerClientStats, i);

    g_ptr_array_add (clients, gst_structure_new ("cudaipcsink-client",
            "name", G_TYPE_STRING, c->name, "pid", G_TYPE_INT, c->pid,
            "frames-sent", G_TYPE_UINT64, c->frames_sent,
            "frames-released", G_TYPE_UINT64, c->frames_released,
            "held", G_TYPE_UINT, c->held,
            "events", G_TYPE_BOOLEAN, c->events,
            "fence", G_TYPE_BOOLEAN, c->fence, NULL));
  }
  st = gst_structure_new ("application/x-cudaipcsink-stats",
      "frames-published", G_TYPE_UINT64, ss.frames_published,
      "frames-dropped", G_TYPE_UINT64, ss.frames_dropped,
      "clients", G_TYPE_UINT, ss.n_clients,
      "generation", G_TYPE_UINT, (guint) ss.generation,
      "rings-retired", G_TYPE_UINT64, ss.rings_retired,
      "driver-calls", G_TYPE_UINT64, cc.driver_calls,
      "host-syncs", G_TYPE_UINT64, cc.host_syncs,
      "copies-from-gpu", G_TYPE_UINT64, cc.copies_from_gpu,
      "copies-from-host", G_TYPE_UINT64, cc.copies_from_host,
      "frames-in-place", G_TYPE_UINT64, self->frames_in_place,
      "metas-sent", G_TYPE_UINT64, (guint64) self->meta_counts.carried,
      "metas-skipped", G_TYPE_UINT64, (guint64) self->meta_counts.skipped,
      "metas-dropped", G_TYPE_UINT64, (guint64) self->meta_counts.dropped,
      NULL);
  if (self->server)
    cudaipc_server_stats_clear (&ss);
  return st;
}

/* The stats property: the totals with "client-stats", an array of the
 * consumers' structures. */
static GstStructure *
get_stats_property_locked (GstCuIpcSink * self)
{
  g_autoptr (GPtrArray) clients = g_ptr_array_new ();
  GstStructure *st = get_stats_locked (self, clients);
  GValue array = G_VALUE_INIT;

  g_value_init (&array, GST_TYPE_ARRAY);
  for (guint i = 0; i < clients->len; i++) {
    GValue v = G_VALUE_INIT;

    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, g_ptr_array_index (clients, i));
    gst_value_array_append_and_take_value (&array, &v);
  }
  gst_structure_take_value (st, "client-stats", &array);
  return st;
}

/* The ticker's thread, every stats-interval from start() to stop(). */
static void
post_stats (gpointer user_data)
{
  GstCuIpcSink *self = user_data;
  g_autoptr (GPtrArray) clients = g_ptr_array_new ();
  GstStructure *st;

  GST_OBJECT_LOCK (self);
  st = get_stats_locked (self, clients);
  GST_OBJECT_UNLOCK (self);
  /* flat structures, readable as gst-launch-1.0 -m prints them: the
   * totals, then one message per consumer */
  gst_structure_set_name (st, "cudaipcsink-stats");
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), st));
  for (guint i = 0; i < clients->len; i++) {
    GstStructure *cs = g_ptr_array_index (clients, i);

    gst_structure_set_name (cs, "cudaipcsink-client-stats");
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self), cs));
  }
}

/* GObject */

/* The in-place pool waits for a slot as render() would. */
static void
set_pool_wait_locked (GstCuIpcSink * self)
{
  cudaipc_slot_pool_set_wait (self->pool,
      self->props.on_full == GST_CU_IPC_SINK_ON_FULL_WAIT,
      self->props.full_timeout);
}

static void
gst_cu_ipc_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  GST_OBJECT_LOCK (self);
  if (!gst_cu_ipc_sink_props_set (&self->props, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  if (self->server && prop_id == PROP_CONSUMER_TIMEOUT)
    cudaipc_server_set_client_timeout (self->server,
        self->props.consumer_timeout);
  /* a render() waiting for a slot or a consumer re-reads the setting */
  if (self->server && (prop_id == PROP_WAIT_FOR_CONNECTION ||
          prop_id == PROP_ON_FULL || prop_id == PROP_FULL_TIMEOUT))
    cudaipc_server_wake (self->server);
  if (self->pool && (prop_id == PROP_ON_FULL || prop_id == PROP_FULL_TIMEOUT))
    set_pool_wait_locked (self);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_NUM_CLIENTS:
      g_value_set_uint (value,
          self->server ? cudaipc_server_get_n_clients (self->server) : 0);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, get_stats_property_locked (self));
      break;
    default:
      if (!gst_cu_ipc_sink_props_get (&self->props, prop_id, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_finalize (GObject * object)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  gst_cu_ipc_sink_props_clear (&self->props);
  cudaipc_server_stats_clear (&self->last_stats);
  g_clear_object (&self->cuda_ctx);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* GstBaseSink */

/* Posts the error for a device that could not be opened. */
static void
post_device_error (GstCuIpcSink * self, const GError * error,
    CudaIpcBackend backend, gint device_id)
{
  if (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER) ||
      g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("%s", error->message),
        ("backend %s, device-id %d", cudaipc_backend_name (backend),
            device_id));
  } else {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("%s", error->message), ("backend %s, device-id %d",
            cudaipc_backend_name (backend), device_id));
  }
}

static gboolean
gst_cu_ipc_sink_start (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *path = NULL, *name = NULL;
  g_autofree gchar *users = NULL, *groups = NULL, *metas = NULL;
  g_autoptr (CudaIpcMetaFilter) meta_filter = NULL;
  g_autoptr (GArray) uids = NULL;
  g_autoptr (GArray) gids = NULL;
  g_autoptr (CudaIpcCopier) copier = NULL;
  CudaIpcServerConfig config;
  CudaIpcServer *server;
  CudaIpcBackend backend;
  gint device_id;
  guint stats_interval;

  cudaipc_server_config_init (&config);
  GST_OBJECT_LOCK (self);
  path = g_strdup (self->props.socket_path);
  config.mode = self->props.socket_mode;
  backend = self->props.backend;
  device_id = self->props.device_id;
  config.n_slots = self->props.ring_size;
  config.client_timeout_ms = self->props.consumer_timeout;
  config.ordering = self->props.ordering;
  name = g_strdup (GST_OBJECT_NAME (self));
  users = g_strdup (self->props.allowed_users);
  groups = g_strdup (self->props.allowed_groups);
  stats_interval = self->props.stats_interval;
  metas = g_strdup (self->props.metas);
  GST_OBJECT_UNLOCK (self);

  meta_filter = cudaipc_meta_filter_new (metas, &error);
  if (meta_filter == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", error->message),
        ("metas \"%s\"", metas));
    return FALSE;
  }

  if (!cudaipc_credentials_parse_ids (users, FALSE, &uids, &error) ||
      !cudaipc_credentials_parse_ids (groups, TRUE, &gids, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", error->message),
        ("allowed-users \"%s\", allowed-groups \"%s\"", users ? users : "",
            groups ? groups : ""));
    return FALSE;
  }

  if (path == NULL || path[0] == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("No socket-path set"), ("cuipcsink needs socket-path to listen"));
    return FALSE;
  }

  self->dev = cudaipc_device_new (backend, device_id, &error);
  if (self->dev == NULL) {
    post_device_error (self, error, backend, device_id);
    return FALSE;
  }
  GST_INFO_OBJECT (self, "opened %s backend on %s",
      cudaipc_backend_name (backend), cudaipc_device_get_name (self->dev));
  if (backend == CUDAIPC_BACKEND_HOST && device_id != DEFAULT_DEVICE_ID)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("device-id=%d is ignored with backend=host: the ring is in shared "
            "host memory", device_id), ("set backend=cuda for a GPU ring"));

  copier = cudaipc_copier_new (self->dev, config.n_slots, &error);
  if (copier == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("Cannot set up the copies into the ring: %s", error->message),
        ("on %s", cudaipc_device_get_name (self->dev)));
    g_clear_pointer (&self->dev, cudaipc_device_unref);
    return FALSE;
  }

  config.socket_name = path;
  config.name = name;
  config.uids = (const guint *) uids->data;
  config.n_uids = uids->len;
  config.gids = (const guint *) gids->data;
  config.n_gids = gids->len;
  /* a ring is replaced only once every copy into it has landed */
  config.before_replace = cudaipc_copier_wait_all;
  config.before_replace_data = copier;
  server = cudaipc_server_new (self->dev, &config, &server_callbacks, self,
      &error);
  if (server == NULL) {
    if (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_BUSY)) {
      GST_ELEMENT_ERROR (self, RESOURCE, BUSY, ("%s", error->message),
          ("socket-path %s", path));
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
          ("%s", error->message), ("socket-path %s", path));
    }
    g_clear_pointer (&copier, cudaipc_copier_free);
    g_clear_pointer (&self->dev, cudaipc_device_unref);
    return FALSE;
  }

  self->meta_filter = g_steal_pointer (&meta_filter);
  self->meta_blob = g_byte_array_new ();
  self->warned_metas = FALSE;
  GST_OBJECT_LOCK (self);
  self->server = server;
  self->copier = g_steal_pointer (&copier);
  memset (&self->meta_counts, 0, sizeof (self->meta_counts));
  cudaipc_server_stats_clear (&self->last_stats);
  memset (&self->last_counts, 0, sizeof (self->last_counts));
  self->frames_in_place = 0;
  GST_OBJECT_UNLOCK (self);
  self->have_info = FALSE;

  if (stats_interval > 0)
    self->ticker = cudaipc_ticker_new ("cudaipcsink-stats", stats_interval,
        post_stats, self);

  GST_INFO_OBJECT (self, "listening on %s", path);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  CudaIpcServer *server;
  CudaIpcCopier *copier;

  /* joined here: no tick runs from now on */
  g_clear_pointer (&self->ticker, cudaipc_ticker_free);
  g_clear_pointer (&self->meta_filter, cudaipc_meta_filter_free);
  g_clear_pointer (&self->meta_blob, g_byte_array_unref);

  GST_OBJECT_LOCK (self);
  server = self->server;
  copier = self->copier;
  /* upstream may keep the pool and its buffers for longer: their slots
   * stay mapped, and a pool of a stopped server lends no more */
  g_clear_pointer (&self->pool, gst_object_unref);
  GST_OBJECT_UNLOCK (self);

  /* no copy may be in flight when the server frees the slots and fences */
  if (copier) {
    CudaIpcCopierCounts counts;

    cudaipc_copier_get_counts (copier, &counts);
    GST_OBJECT_LOCK (self);
    self->copier = NULL;
    self->last_counts = counts;
    GST_OBJECT_UNLOCK (self);
    cudaipc_copier_free (copier);
  }

  if (server) {
    CudaIpcServerStats stats;

    /* its callbacks may run meanwhile: no lock of ours is held */
    cudaipc_server_stop (server);
    cudaipc_server_get_stats (server, &stats);

    GST_OBJECT_LOCK (self);
    self->server = NULL;
    cudaipc_server_stats_clear (&self->last_stats);
    self->last_stats = stats;
    GST_OBJECT_UNLOCK (self);
    cudaipc_server_free (server);
  }

  /* the device lets go of a context lent by upstream once it closes */
  g_clear_pointer (&self->dev, cudaipc_device_unref);
  /* asked for again by the next allocation query */
  g_clear_object (&self->cuda_ctx);
  self->have_info = FALSE;
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *str = NULL;
  GstVideoInfo info;

  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot share these caps: they are not a complete video format"),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }

  str = gst_caps_to_string (caps);
  GST_DEBUG_OBJECT (self, "caps %s", str);

  if (!cudaipc_server_set_caps (self->server, str, info.size, &error)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", error->message),
        ("caps %s", str));
    return FALSE;
  }
  self->info = info;
  self->have_info = TRUE;
  return TRUE;
}

/* The cuda backend's in-place pool, for caps of CUDA memory, where
 * libgstcuda can wrap device memory: a GstCudaBufferPool of the
 * GstCudaContext upstream writes with (nvcodec's elements take no other). */
static GstBufferPool *
offer_cuda_pool (GstCuIpcSink * self, CudaIpcServer * server,
    gint device_id, GstQuery * query)
{
  GstCaps *caps = NULL;
  GstCapsFeatures *features;

  gst_query_parse_allocation (query, &caps, NULL);
  features = caps ? gst_caps_get_features (caps, 0) : NULL;
  if (features == NULL || !gst_caps_features_contains (features,
          "memory:CUDAMemory") || !cudaipc_gstcuda_can_wrap ())
    return NULL;
  /* the pipeline's context of our device: upstream's, asked of it */
  if (!cudaipc_gstcuda_ensure_context (GST_ELEMENT (self), device_id,
          &self->cuda_ctx) ||
      cudaipc_gstcuda_context_device (self->cuda_ctx) != device_id) {
    GST_DEBUG_OBJECT (self, "no GstCudaContext of device %d: every frame "
        "is copied", device_id);
    return NULL;
  }
  return cudaipc_slot_pool_offer_cuda (server, self->cuda_ctx, query);
}

static gboolean
gst_cu_ipc_sink_propose_allocation (GstBaseSink * bsink, GstQuery * query)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  CudaIpcServer *server = NULL;
  CudaIpcBackend backend = CUDAIPC_BACKEND_HOST;
  GstBufferPool *pool;
  gint device_id = 0;

  /* we copy each memory as it is and pass the plane layout on */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  /* upstream may write into the slots themselves */
  GST_OBJECT_LOCK (self);
  if (self->props.in_place && self->server && self->dev) {
    server = cudaipc_server_ref (self->server);
    backend = cudaipc_device_get_backend (self->dev);
    device_id = cudaipc_device_get_ordinal (self->dev);
  }
  GST_OBJECT_UNLOCK (self);
  if (server == NULL)
    return TRUE;
  if (backend == CUDAIPC_BACKEND_HOST)
    pool = cudaipc_slot_pool_offer (server, query);
  else
    pool = offer_cuda_pool (self, server, device_id, query);
  cudaipc_server_unref (server);
  if (pool == NULL)
    return TRUE;
  GST_DEBUG_OBJECT (self, "proposed the in-place pool (%s)",
      G_OBJECT_TYPE_NAME (pool));

  GST_OBJECT_LOCK (self);
  gst_object_replace ((GstObject **) & self->pool, GST_OBJECT (pool));
  set_pool_wait_locked (self);
  GST_OBJECT_UNLOCK (self);
  gst_object_unref (pool);
  return TRUE;
}

/* Upstream's GstCudaContext, announced to the pipeline, and asked for. */
static void
gst_cu_ipc_sink_set_context (GstElement * element, GstContext * context)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->props.device_id;
  GST_OBJECT_UNLOCK (self);
  /* libgstcuda is loaded for its own context only */
  if (g_strcmp0 (gst_context_get_context_type (context),
          "gst.cuda.context") == 0 && cudaipc_gstcuda_can_wrap ())
    cudaipc_gstcuda_handle_set_context (element, context, device_id,
        &self->cuda_ctx);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cu_ipc_sink_query (GstBaseSink * bsink, GstQuery * query)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      cudaipc_gstcuda_handle_context_query (GST_ELEMENT (self), query,
          self->cuda_ctx))
    return TRUE;
  return GST_BASE_SINK_CLASS (parent_class)->query (bsink, query);
}

/* With wait-for-connection, waits until a consumer is ready. */
static GstFlowReturn
wait_for_consumer (GstCuIpcSink * self)
{
  GstFlowReturn ret;

  for (;;) {
    gboolean wait_conn;

    GST_OBJECT_LOCK (self);
    wait_conn = self->props.wait_for_connection;
    GST_OBJECT_UNLOCK (self);
    if (!wait_conn || cudaipc_server_get_n_clients (self->server) > 0)
      return GST_FLOW_OK;

    GST_LOG_OBJECT (self, "waiting for a consumer");
    switch (cudaipc_server_wait_for_client (self->server, -1)) {
      case CUDAIPC_SERVER_OK:
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_FLUSHING:
        ret = gst_base_sink_wait_preroll (GST_BASE_SINK (self));
        if (ret != GST_FLOW_OK)
          return ret;
        break;
      default:
        /* woken: the setting may have changed */
        break;
    }
  }
}

/* Waits for a free slot for a frame of @size as on-full says. OK with
 * @slot and @block; GST_FLOW_OK with *@block NULL: the frame is dropped;
 * else what to return (an error was posted). */
static GstFlowReturn
acquire_slot (GstCuIpcSink * self, GstBuffer * buf, guint64 size,
    guint * slot, CudaIpcBlock ** block)
{
  /* the in-place pool waited as long as on-full allows already */
  gboolean waited = cudaipc_slot_pool_buffer_waited (buf);

  g_autoptr (GError) error = NULL;
  CudaIpcServerStatus status;
  gint64 deadline = NO_DEADLINE, until;
  GstFlowReturn ret;

  *block = NULL;
  do {
    GstCuIpcSinkOnFull on_full;
    guint full_timeout;

    GST_OBJECT_LOCK (self);
    on_full = self->props.on_full;
    full_timeout = self->props.full_timeout;
    GST_OBJECT_UNLOCK (self);

    if (on_full == GST_CU_IPC_SINK_ON_FULL_DROP || waited) {
      until = 0;
    } else {
      if (deadline == NO_DEADLINE)
        deadline = full_timeout == 0 ? -1 : g_get_monotonic_time () +
            G_TIME_SPAN_MILLISECOND * (gint64) full_timeout;
      until = deadline;
    }

    status = cudaipc_server_acquire (self->server, size, until, slot, block,
        &error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
      case CUDAIPC_SERVER_WOKEN:
        /* woken: a setting changed, read it again */
        break;
      case CUDAIPC_SERVER_TIMEOUT:
        GST_DEBUG_OBJECT (self, "every slot is held: dropped buffer %"
            GST_PTR_FORMAT, buf);
        *block = NULL;
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_FLUSHING:
        ret = gst_base_sink_wait_preroll (GST_BASE_SINK (self));
        if (ret != GST_FLOW_OK)
          return ret;
        /* paused meanwhile: the time limit starts again */
        deadline = NO_DEADLINE;
        break;
      case CUDAIPC_SERVER_NO_RING:
      case CUDAIPC_SERVER_ERROR:{
        guint ring_size;

        GST_OBJECT_LOCK (self);
        ring_size = self->props.ring_size;
        GST_OBJECT_UNLOCK (self);
        GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
            ("Cannot allocate a ring of %u slots for frames of %"
                G_GUINT64_FORMAT " bytes: %s", ring_size, size,
                error->message), ("backend %s, generation %u",
                cudaipc_backend_name (cudaipc_device_get_backend (self->dev)),
                cudaipc_server_get_generation (self->server) + 1));
        return GST_FLOW_ERROR;
      }
    }
  } while (status != CUDAIPC_SERVER_OK);
  return GST_FLOW_OK;
}

/* @buf's metas, as the metas property lets them through, into the FRAME
 * @f (which borrows the sink's blob until the next frame), with what went
 * in and what not in @counts. */
static void
add_metas (GstCuIpcSink * self, GstBuffer * buf, CudaIpcFrameMsg * f,
    CudaIpcMetaCounts * counts)
{
  memset (counts, 0, sizeof (*counts));
  g_byte_array_set_size (self->meta_blob, 0);
  cudaipc_metas_encode (buf, self->meta_filter, self->meta_blob, counts);
  f->meta = self->meta_blob->data;
  f->meta_len = self->meta_blob->len;
}

/* The metas of a frame that went out, into the stats. */
static void
count_metas (GstCuIpcSink * self, const CudaIpcMetaCounts * counts)
{
  GST_OBJECT_LOCK (self);
  self->meta_counts.carried += counts->carried;
  self->meta_counts.skipped += counts->skipped;
  self->meta_counts.dropped += counts->dropped;
  GST_OBJECT_UNLOCK (self);
  if (counts->dropped > 0 && !self->warned_metas) {
    self->warned_metas = TRUE;
    GST_ELEMENT_WARNING (self, STREAM, ENCODE,
        ("%u metas of a frame were left out: beyond what a frame carries "
            "(%d bytes, %d metas, %d items in one)", counts->dropped,
            CUDAIPC_MAX_META_BYTES, CUDAIPC_MAX_METAS,
            CUDAIPC_MAX_META_ITEMS),
        ("counted in stats metas-dropped; warned once"));
  }
}

/* Upstream still uses an in-place pool of before a restart of the sink,
 * which lends no slot any more (every frame is copied): asks it, once, to
 * query the allocation again. */
static void
check_pool (GstCuIpcSink * self, GstBufferPool * pool)
{
  gboolean stale;

  GST_OBJECT_LOCK (self);
  stale = pool != self->pool && pool != self->renegotiated_for;
  if (stale)
    self->renegotiated_for = pool;
  GST_OBJECT_UNLOCK (self);
  if (stale) {
    GST_DEBUG_OBJECT (self, "upstream writes into a stale in-place pool: "
        "asking it to renegotiate");
    gst_pad_push_event (GST_BASE_SINK_PAD (self), gst_event_new_reconfigure ());
  }
}

/* The FRAME for @buf, but for its size in the slot; @counts: its metas,
 * for count_metas() once it went out. */
static void
describe_frame (GstCuIpcSink * self, GstBuffer * buf, CudaIpcFrameMsg * f,
    CudaIpcMetaCounts * counts)
{
  GstSegment segment;

  cudaipc_media_describe_buffer (buf, self->have_info ? &self->info : NULL, f);
  add_metas (self, buf, f, counts);
  GST_OBJECT_LOCK (self);
  segment = GST_BASE_SINK (self)->segment;
  GST_OBJECT_UNLOCK (self);
  f->clock_time = cudaipc_timing_to_monotonic (GST_ELEMENT (self), &segment,
      f->pts);
}

/* @buf is a slot upstream wrote into (the in-place pool): publishes it as
 * it is, with @f (describe_frame()). FALSE, @f untouched, where the server
 * will not (its ring was replaced since, or the buffer went out already):
 * @buf is then copied as any other. */
static gboolean
publish_in_place (GstCuIpcSink * self, GstBuffer * buf,
    CudaIpcSlotTicket * ticket, CudaIpcFrameMsg * f)
{
  guint n_clients = 0;

  f->size = gst_buffer_get_size (buf);
  if (cudaipc_device_get_backend (self->dev) == CUDAIPC_BACKEND_CUDA) {
    g_autoptr (GError) error = NULL;

    /* complete before its fence word is set on the CPU */
    if (!cudaipc_copier_prepare_in_place (self->copier, buf, &error)) {
      GST_WARNING_OBJECT (self, "slot %u cannot go out as it is (%s): "
          "copied", cudaipc_slot_ticket_get_slot (ticket), error->message);
      return FALSE;
    }
  }
  if (!cudaipc_server_publish_in_place (self->server, ticket, f, &n_clients)) {
    GST_LOG_OBJECT (self, "slot %u cannot go out as it is: copied",
        cudaipc_slot_ticket_get_slot (ticket));
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  self->frames_in_place++;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "published frame %" G_GUINT64_FORMAT " in place in "
      "slot %u to %u client(s)", f->seq, f->slot, n_clients);
  return TRUE;
}

static GstFlowReturn
gst_cu_ipc_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcSlotTicket *ticket;
  CudaIpcMetaCounts counts;
  CudaIpcBlock *block;
  GstFlowReturn ret;
  guint64 size = gst_buffer_get_size (buf), copied = 0;
  guint slot = 0, n_clients = 0;

  ret = wait_for_consumer (self);
  if (ret != GST_FLOW_OK)
    return ret;

  /* the first frame may move the copies into upstream's CUDA context */
  if (cudaipc_server_get_generation (self->server) == 0 &&
      !cudaipc_copier_adopt_context (self->copier, buf, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("Cannot copy in the CUDA context of upstream's memory: %s",
            error->message), (NULL));
    return GST_FLOW_ERROR;
  }

  if (G_UNLIKELY (buf->pool && cudaipc_slot_pool_is_ours (buf->pool)))
    check_pool (self, buf->pool);
  ticket = cudaipc_slot_pool_buffer_ticket (buf);
  if (ticket) {
    /* described once: a slot that cannot go out as it is goes out copied
     * with the same FRAME */
    describe_frame (self, buf, &f, &counts);
    if (publish_in_place (self, buf, ticket, &f)) {
      count_metas (self, &counts);
      return GST_FLOW_OK;
    }
  }

  ret = acquire_slot (self, buf, size, &slot, &block);
  if (ret != GST_FLOW_OK || block == NULL)
    return ret;

  /* the slot is ours until published: nobody else touches it, and only
   * this thread makes the server replace the ring */
  if (!cudaipc_copier_copy (self->copier, buf, self->server, slot, block,
          &copied, &error)) {
    cudaipc_server_abort (self->server, slot);
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Cannot copy the frame into the shared ring: %s", error->message),
        ("slot %u, %" G_GSIZE_FORMAT " bytes in %u memories", slot,
            gst_buffer_get_size (buf), gst_buffer_n_memory (buf)));
    return GST_FLOW_ERROR;
  }

  if (ticket == NULL)
    describe_frame (self, buf, &f, &counts);
  f.size = copied;
  count_metas (self, &counts);

  if (!cudaipc_copier_publish (self->copier, self->server, slot, &f,
          &n_clients, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Cannot finish the copy into the shared ring: %s", error->message),
        ("slot %u, %" G_GUINT64_FORMAT " bytes", slot, copied));
    return GST_FLOW_ERROR;
  }
  GST_LOG_OBJECT (self, "published frame %" G_GUINT64_FORMAT " in slot %u "
      "to %u client(s)", f.seq, slot, n_clients);
  return GST_FLOW_OK;
}

static gboolean
gst_cu_ipc_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
    case GST_EVENT_SEGMENT:
    case GST_EVENT_TAG:
    case GST_EVENT_CUSTOM_DOWNSTREAM:
    case GST_EVENT_CUSTOM_DOWNSTREAM_STICKY:
    case GST_EVENT_CUSTOM_BOTH:
      if (self->server && !cudaipc_server_send_event (self->server, event,
              gst_element_get_current_running_time (GST_ELEMENT (self)),
              &error)) {
        GST_WARNING_OBJECT (self, "not forwarding %s event: %s",
            GST_EVENT_TYPE_NAME (event), error->message);
      }
      break;
    case GST_EVENT_FLUSH_STOP:
      if (self->server)
        cudaipc_server_clear_eos (self->server);
      break;
    default:
      break;
  }

  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

static gboolean
gst_cu_ipc_sink_unlock (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  GST_OBJECT_LOCK (self);
  if (self->server)
    cudaipc_server_set_flushing (self->server, TRUE);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_unlock_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  GST_OBJECT_LOCK (self);
  if (self->server)
    cudaipc_server_set_flushing (self->server, FALSE);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static void
gst_cu_ipc_sink_class_init (GstCuIpcSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);

  gobject_class->set_property = gst_cu_ipc_sink_set_property;
  gobject_class->get_property = gst_cu_ipc_sink_get_property;
  gobject_class->finalize = gst_cu_ipc_sink_finalize;

  gst_cu_ipc_sink_props_install (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA IPC sink", "Sink/Video",
      "Shares video frames with cuipcsrc in other processes through a "
      "ring of GPU (or shared host) buffers", CUDAIPC_AUTHOR);

  basesink_class->start = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_stop);
  basesink_class->set_caps = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_set_caps);
  basesink_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_propose_allocation);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_render);
  basesink_class->query = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_query);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_set_context);
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_event);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock);
  basesink_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SINK_ON_FULL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SINK_ORDERING, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_BACKEND, 0);
}

static void
gst_cu_ipc_sink_init (GstCuIpcSink * self)
{
  gst_cu_ipc_sink_props_init (&self->props);
}
