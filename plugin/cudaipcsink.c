/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cuipcsink
 * @title: cuipcsink
 * @see_also: cuipcsrc
 *
 * Also registered as `cudaipcsink` on GStreamer < 1.24 (from 1.24 on, that
 * name is nvcodec's), and reached by `cuipc://` URIs such as
 * `cuipc://@cam1` (docs/elements.md, Names and URI).
 *
 * Shares video frames with other processes. The sink keeps a ring of
 * buffers on one device (CUDA virtual memory where a GPU is usable, else
 * shared host memory: #GstCuIpcSink:backend), exports each buffer once as
 * file descriptors, and tells
 * every cuipcsrc connected to its Unix socket which buffer holds which
 * frame. A buffer is written again only once every consumer it was
 * published to has released it; `on-full` says what happens meanwhile.
 * With the cuda backend the copy runs on the sink's own CUDA stream and
 * the frame goes out without waiting for it: a fence page tells consumers
 * when it has landed (#GstCuIpcSink:ordering). Nothing but the socket is
 * shared, so consumers may run in containers of their own.
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
 * Without a GPU (backend=auto chooses host memory):
 * |[
 * gst-launch-1.0 videotestsrc ! cuipcsink socket-path=@cam1
 * gst-launch-1.0 cuipcsrc socket-path=@cam1 ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipcsink-report.h"
#include "cudaipc-uri.h"
#include "cudaipc-enums.h"
#include "producer/slot-offer.h"
#include "device/device.h"
#include "media/timing.h"
#include "producer/publisher.h"

GST_DEBUG_CATEGORY (gst_cu_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_sink_debug

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_SOCKET_MODE,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_RING_SIZE,
  PROP_ON_FULL,
  PROP_ORDERING,
  PROP_FULL_TIMEOUT,
  PROP_WAIT_FOR_CONNECTION,
  PROP_CONSUMER_TIMEOUT,
  PROP_ALLOWED_USERS,
  PROP_ALLOWED_GROUPS,
  PROP_STATS_INTERVAL,
  PROP_METAS,
  PROP_IN_PLACE,
  PROP_ENABLE_LAST_SAMPLE,
  PROP_NUM_CLIENTS,
  PROP_STATS,
  N_PROPERTIES
};

/* the producer's defaults, shared with libcudaipc (publisher.h) */
#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_SOCKET_MODE CUDAIPC_PUBLISHER_DEFAULT_SOCKET_MODE
#define DEFAULT_BACKEND CUDAIPC_PUBLISHER_DEFAULT_BACKEND
#define DEFAULT_DEVICE_ID CUDAIPC_PUBLISHER_DEFAULT_DEVICE_ID
#define DEFAULT_RING_SIZE CUDAIPC_PUBLISHER_DEFAULT_RING_SIZE
#define MIN_RING_SIZE CUDAIPC_PUBLISHER_MIN_RING_SIZE
#define MAX_RING_SIZE CUDAIPC_PUBLISHER_MAX_RING_SIZE
#define DEFAULT_ON_FULL (CUDAIPC_PUBLISHER_DEFAULT_WAIT_WHEN_FULL ? \
    GST_CU_IPC_SINK_ON_FULL_WAIT : GST_CU_IPC_SINK_ON_FULL_DROP)
#define DEFAULT_ORDERING CUDAIPC_ORDERING_AUTO
#define DEFAULT_FULL_TIMEOUT CUDAIPC_PUBLISHER_DEFAULT_FULL_TIMEOUT_MS
#define DEFAULT_WAIT_FOR_CONNECTION \
    CUDAIPC_PUBLISHER_DEFAULT_WAIT_FOR_CONNECTION
#define DEFAULT_CONSUMER_TIMEOUT CUDAIPC_PUBLISHER_DEFAULT_CONSUMER_TIMEOUT_MS
#define DEFAULT_ALLOWED_USERS NULL
#define DEFAULT_ALLOWED_GROUPS NULL
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_METAS "all"
#define DEFAULT_IN_PLACE TRUE

static GParamSpec *properties[N_PROPERTIES];

/* the flags of a property one sets before start(), and of one that also
 * applies while the sink runs */
#define PARAM_READY \
    (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)
#define PARAM_PLAYING \
    (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)

struct _GstCuIpcSink
{
  GstBaseSink parent;

  /* the properties' values, strings owned (cudaipc_publisher_config_copy),
   * as start() gives them to the publisher: object lock */
  CudaIpcPublisherConfig config;
  gboolean in_place;

  /* object lock; set in start(), cleared in stop() */
  CudaIpcPublisher *publisher;  /* the producer's core (publisher.h) */
  CudaIpcPublisherStats last_stats;     /* the stopped publisher's */

  /* the in-place pool, its wait and context (slot-offer.h): init to
   * finalize */
  CudaIpcSlotOffer *offer;

  /* object lock: upstream is live (its LATENCY answer at the last caps) */
  gboolean live;

  /* streaming thread, from start() to stop() */
  GstFlowReturn flushed;        /* what waiting for preroll gave */
  gboolean warned_metas;        /* that some were left out */
  CudaIpcClockReading clocks;   /* the clock against CLOCK_MONOTONIC */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(memory:CUDAMemory); video/x-raw"));

#define gst_cu_ipc_sink_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstCuIpcSink, gst_cu_ipc_sink, GST_TYPE_BASE_SINK,
    GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_sink_debug, "cudaipcsink", 0,
        "CUDA IPC sink");
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        cudaipc_uri_sink_handler_init));
/* cuipcsink: a name of ours alone (docs/elements.md, Names) */
GST_ELEMENT_REGISTER_DEFINE (cudaipcsink, "cudaipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);
GST_ELEMENT_REGISTER_DEFINE (cuipcsink, "cuipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);

/* A server's warning: from its I/O thread, without its lock (the
 * client messages and stats are the publisher's to post) */
static void
on_warning (const gchar * text, const gchar * debug, gpointer user_data)
{
  GstCuIpcSink *self = user_data;

  GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s", text), ("%s", debug));
}

/* Publisher callbacks: the streaming thread, within render() */

/* The PTS as CLOCK_MONOTONIC, as far as the pipeline's clock says. */
static GstClockTime
capture_time (GstClockTime pts, gpointer user_data)
{
  GstCuIpcSink *self = user_data;
  GstSegment segment;

  GST_OBJECT_LOCK (self);
  segment = GST_BASE_SINK (self)->segment;
  GST_OBJECT_UNLOCK (self);
  return cudaipc_timing_to_monotonic (GST_ELEMENT (self), &self->clocks,
      &segment, pts);
}

/* Flushing while waiting for a consumer or a slot: waits for preroll
 * (paused meanwhile), and waits again where that lets the frame go on. */
static gboolean
on_flushing (gpointer user_data)
{
  GstCuIpcSink *self = user_data;

  self->flushed = gst_base_sink_wait_preroll (GST_BASE_SINK (self));
  return self->flushed == GST_FLOW_OK;
}

static const CudaIpcPublisherCallbacks publisher_callbacks = {
  {NULL, NULL, on_warning},
  capture_time,
  on_flushing,
};

/* GObject */

static void
set_string (const gchar ** field, const GValue * value)
{
  g_free ((gchar *) * field);
  *field = g_value_dup_string (value);
}

/* With the object lock: how long the in-place pool waits for a slot, as
 * render() would: full-timeout for a live stream, as long as it takes
 * for one that is not (the publisher does the same for render()). */
static void
apply_wait_locked (GstCuIpcSink * self)
{
  cudaipc_slot_offer_set_wait (self->offer, self->config.wait_when_full,
      self->live ? self->config.full_timeout_ms : 0);
}

static void
gst_cu_ipc_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);
  CudaIpcPublisherConfig *c = &self->config;

  /* GstBaseSink's, which takes the object lock itself */
  if (prop_id == PROP_ENABLE_LAST_SAMPLE) {
    gst_base_sink_set_last_sample_enabled (GST_BASE_SINK (self),
        g_value_get_boolean (value));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      set_string (&c->socket_name, value);
      break;
    case PROP_SOCKET_MODE:
      c->socket_mode = g_value_get_uint (value);
      break;
    case PROP_BACKEND:
      c->backend = g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      c->device_id = g_value_get_int (value);
      break;
    case PROP_RING_SIZE:
      c->ring_size = g_value_get_uint (value);
      break;
    case PROP_ORDERING:
      c->ordering = g_value_get_enum (value);
      break;
    case PROP_ON_FULL:
      c->wait_when_full =
          g_value_get_enum (value) == GST_CU_IPC_SINK_ON_FULL_WAIT;
      break;
    case PROP_FULL_TIMEOUT:
      c->full_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      c->wait_for_connection = g_value_get_boolean (value);
      break;
    case PROP_CONSUMER_TIMEOUT:
      c->consumer_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_ALLOWED_USERS:
      set_string (&c->allowed_users, value);
      break;
    case PROP_ALLOWED_GROUPS:
      set_string (&c->allowed_groups, value);
      break;
    case PROP_STATS_INTERVAL:
      c->stats_interval_ms = g_value_get_uint (value);
      break;
    case PROP_METAS:
      set_string (&c->metas, value);
      break;
    case PROP_IN_PLACE:
      self->in_place = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  /* the settings that apply while the sink runs: a render() waiting for a
   * slot reads them again, and the in-place pool waits as render() would */
  if (self->publisher)
    cudaipc_publisher_apply_settings (self->publisher, NULL, c);
  apply_wait_locked (self);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);
  const CudaIpcPublisherConfig *c = &self->config;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, c->socket_name);
      break;
    case PROP_SOCKET_MODE:
      g_value_set_uint (value, c->socket_mode);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, c->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, c->device_id);
      break;
    case PROP_RING_SIZE:
      g_value_set_uint (value, c->ring_size);
      break;
    case PROP_ORDERING:
      g_value_set_enum (value, c->ordering);
      break;
    case PROP_ON_FULL:
      g_value_set_enum (value, c->wait_when_full ?
          GST_CU_IPC_SINK_ON_FULL_WAIT : GST_CU_IPC_SINK_ON_FULL_DROP);
      break;
    case PROP_FULL_TIMEOUT:
      g_value_set_uint (value, c->full_timeout_ms);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      g_value_set_boolean (value, c->wait_for_connection);
      break;
    case PROP_CONSUMER_TIMEOUT:
      g_value_set_uint (value, c->consumer_timeout_ms);
      break;
    case PROP_ALLOWED_USERS:
      g_value_set_string (value, c->allowed_users);
      break;
    case PROP_ALLOWED_GROUPS:
      g_value_set_string (value, c->allowed_groups);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, c->stats_interval_ms);
      break;
    case PROP_METAS:
      g_value_set_string (value, c->metas);
      break;
    case PROP_IN_PLACE:
      g_value_set_boolean (value, self->in_place);
      break;
    case PROP_ENABLE_LAST_SAMPLE:
      g_value_set_boolean (value,
          gst_base_sink_is_last_sample_enabled (GST_BASE_SINK (self)));
      break;
    case PROP_NUM_CLIENTS:
      g_value_set_uint (value, self->publisher ?
          cudaipc_publisher_get_n_clients (self->publisher) : 0);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, cudaipc_publisher_stats_structure
          (self->publisher, &self->last_stats, NULL));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_finalize (GObject * object)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  cudaipc_publisher_config_clear (&self->config);
  cudaipc_publisher_stats_clear (&self->last_stats);
  cudaipc_slot_offer_free (self->offer);
  cudaipc_clock_reading_clear (&self->clocks);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* GstBaseSink */

static gboolean
gst_cu_ipc_sink_start (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_auto (CudaIpcPublisherConfig) config = { 0, };
  CudaIpcPublisherFailed failed;
  CudaIpcPublisher *publisher;

  GST_OBJECT_LOCK (self);
  cudaipc_publisher_config_copy (&config, &self->config);
  config.name = g_strdup (GST_OBJECT_NAME (self));
  GST_OBJECT_UNLOCK (self);
  config.debug_category = GST_CAT_DEFAULT;
  config.debug_object = self;
  config.element = GST_ELEMENT (self);

  publisher = cudaipc_publisher_new (&config, &publisher_callbacks, self,
      &failed, &error);
  if (publisher == NULL) {
    gst_cu_ipc_sink_post_start_error (GST_ELEMENT (self), failed, error,
        &config);
    return FALSE;
  }

  self->warned_metas = FALSE;
  GST_OBJECT_LOCK (self);
  self->publisher = publisher;
  cudaipc_slot_offer_start (self->offer, cudaipc_publisher_get_server
      (publisher), cudaipc_publisher_get_device (publisher));
  /* settings changed since they were read */
  cudaipc_publisher_apply_settings (publisher, &config, &self->config);
  cudaipc_publisher_stats_clear (&self->last_stats);
  memset (&self->last_stats, 0, sizeof (self->last_stats));
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  CudaIpcPublisher *publisher;

  GST_OBJECT_LOCK (self);
  publisher = self->publisher;
  GST_OBJECT_UNLOCK (self);
  cudaipc_slot_offer_reset (self->offer);

  if (publisher) {
    CudaIpcPublisherStats stats;

    /* its callbacks may run meanwhile: no lock of ours is held */
    cudaipc_publisher_stop (publisher);
    cudaipc_publisher_get_stats (publisher, &stats);

    GST_OBJECT_LOCK (self);
    self->publisher = NULL;
    cudaipc_publisher_stats_clear (&self->last_stats);
    self->last_stats = stats;
    GST_OBJECT_UNLOCK (self);
    /* the device lets go of a context lent by upstream once it closes */
    cudaipc_publisher_free (publisher);
  }

  cudaipc_slot_offer_reset_context (self->offer);
  cudaipc_clock_reading_clear (&self->clocks);
  return TRUE;
}

/* Whether upstream is live: a camera or a network source goes on at its
 * own pace, a file or a decoder waits for us. Asked at each caps, in the
 * streaming thread; FALSE where nobody answers. */
static gboolean
upstream_is_live (GstCuIpcSink * self)
{
  GstQuery *query = gst_query_new_latency ();
  gboolean live = FALSE;

  if (gst_pad_peer_query (GST_BASE_SINK_PAD (self), query))
    gst_query_parse_latency (query, &live, NULL, NULL);
  gst_query_unref (query);
  GST_INFO_OBJECT (self, "upstream is %slive: consumers keep %s", live ? "" :
      "not ", live ? "the newest frames" : "every frame");
  return live;
}

static gboolean
gst_cu_ipc_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  GstVideoInfo info;
  gboolean live;

  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot share these caps: they are not a complete video format"),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);
  /* before the ring is built: it tells consumers what to keep */
  live = upstream_is_live (self);
  GST_OBJECT_LOCK (self);
  self->live = live;
  apply_wait_locked (self);
  GST_OBJECT_UNLOCK (self);
  cudaipc_publisher_set_live (self->publisher, live);
  /* the ring is made here: upstream's first buffer from the pool is a slot */
  if (!cudaipc_publisher_set_caps (self->publisher, caps, &info, &error)) {
    gst_cu_ipc_sink_post_caps_error (GST_ELEMENT (self), caps, error);
    return FALSE;
  }
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_propose_allocation (GstBaseSink * bsink, GstQuery * query)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  gboolean in_place;

  /* we copy each memory as it is and pass the plane layout on */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  /* upstream may write into the slots themselves */
  GST_OBJECT_LOCK (self);
  in_place = self->in_place;
  GST_OBJECT_UNLOCK (self);
  if (in_place)
    cudaipc_slot_offer_propose (self->offer, query);
  return TRUE;
}

/* Upstream's GstCudaContext, announced to the pipeline, and asked for. */
static void
gst_cu_ipc_sink_set_context (GstElement * element, GstContext * context)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->config.device_id;
  GST_OBJECT_UNLOCK (self);
  cudaipc_slot_offer_set_context (self->offer, context, device_id);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cu_ipc_sink_query (GstBaseSink * bsink, GstQuery * query)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->config.backend == CUDAIPC_BACKEND_HOST ? -1 :
      self->config.device_id;
  GST_OBJECT_UNLOCK (self);
  if (cudaipc_slot_offer_context_query (self->offer, query, device_id))
    return TRUE;
  return GST_BASE_SINK_CLASS (parent_class)->query (bsink, query);
}

/* The publisher does the frame's work (publisher.h); render() says how it
 * went in GStreamer's words. */
static GstFlowReturn
gst_cu_ipc_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  CudaIpcPublisherFrame frame = { buf, };
  g_autoptr (GError) error = NULL;
  CudaIpcPublishResult res;
  CudaIpcPublished out;

  /* a pool of before a restart: upstream is asked, once, for a new one */
  cudaipc_slot_offer_check (self->offer, buf);

  res = cudaipc_publisher_publish (self->publisher, &frame, &out, &error);
  if (out.metas.dropped > 0 && !self->warned_metas) {
    self->warned_metas = TRUE;
    gst_cu_ipc_sink_warn_metas_dropped (GST_ELEMENT (self),
        out.metas.dropped);
  }
  switch (res) {
    case CUDAIPC_PUBLISH_OK:
    case CUDAIPC_PUBLISH_DROPPED:
      return GST_FLOW_OK;
    case CUDAIPC_PUBLISH_FLUSHING:
      return self->flushed;
    default:
      return gst_cu_ipc_sink_post_publish_error (GST_ELEMENT (self),
          self->publisher, res, &frame, &out, error);
  }
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
      if (self->publisher && !cudaipc_publisher_send_event (self->publisher,
              event, gst_element_get_current_running_time (GST_ELEMENT
                  (self)), &error)) {
        GST_WARNING_OBJECT (self, "not forwarding %s event: %s",
            GST_EVENT_TYPE_NAME (event), error->message);
      }
      break;
    case GST_EVENT_FLUSH_STOP:
      if (self->publisher)
        cudaipc_publisher_clear_eos (self->publisher);
      break;
    default:
      break;
  }

  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

/* Every wait of render() ends, or may go on again */
static gboolean
set_flushing (GstBaseSink * bsink, gboolean flushing)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  GST_OBJECT_LOCK (self);
  if (self->publisher)
    cudaipc_publisher_set_flushing (self->publisher, flushing);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_unlock (GstBaseSink * bsink)
{
  return set_flushing (bsink, TRUE);
}

static gboolean
gst_cu_ipc_sink_unlock_stop (GstBaseSink * bsink)
{
  return set_flushing (bsink, FALSE);
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

  /**
   * GstCuIpcSink:socket-path:
   *
   * Where to listen for consumers: a file system path, or "@name" for a
   * Linux abstract socket. Required. A stale socket file is replaced; a
   * live producer on the path is an error. Read when the sink starts.
   */
  properties[PROP_SOCKET_PATH] = g_param_spec_string ("socket-path",
      "Socket path", "Unix socket to listen on; \"@name\" for an abstract "
      "socket (required)", DEFAULT_SOCKET_PATH, PARAM_READY);

  /**
   * GstCuIpcSink:socket-mode:
   *
   * Permission bits of the socket file (default 0660: owner and group may
   * connect). Ignored for abstract sockets. Read when the sink starts.
   */
  properties[PROP_SOCKET_MODE] = g_param_spec_uint ("socket-mode",
      "Socket mode", "Permission bits of the socket file (0660 = 432: owner "
      "and group may connect); ignored for abstract sockets", 0, 0777,
      DEFAULT_SOCKET_MODE, PARAM_READY);

  /**
   * GstCuIpcSink:backend:
   *
   * Where the ring lives: "cuda" (CUDA virtual memory on the GPU given by
   * device-id), "host" (shared host memory, no GPU needed) or "auto" (the
   * default): cuda where that GPU is usable (the driver loads, the device
   * exists, it has VMM with POSIX fd handles), else host, whatever the
   * caps (docs/design.md, Backend auto). Decided when the sink starts,
   * said at INFO and in #GstCuIpcSink:stats. Consumers learn the backend
   * from the producer. Read when the sink starts.
   */
  properties[PROP_BACKEND] = g_param_spec_enum ("backend", "Backend",
      "Memory the ring lives in: GPU (cuda), shared host memory (host), or "
      "cuda where a GPU is usable, else host (auto)",
      GST_TYPE_CU_IPC_BACKEND, DEFAULT_BACKEND, PARAM_READY);

  /**
   * GstCuIpcSink:device-id:
   *
   * CUDA device ordinal the ring is allocated on (cuda backend only).
   */
  properties[PROP_DEVICE_ID] = g_param_spec_int ("device-id", "Device ID",
      "CUDA device ordinal the ring is allocated on (cuda backend)", 0,
      G_MAXINT, DEFAULT_DEVICE_ID, PARAM_READY);

  /**
   * GstCuIpcSink:ring-size:
   *
   * Number of slots in the ring: how many frames consumers may hold, all
   * together, before on-full applies.
   */
  properties[PROP_RING_SIZE] = g_param_spec_uint ("ring-size", "Ring size",
      "Number of frame slots shared with the consumers", MIN_RING_SIZE,
      MAX_RING_SIZE, DEFAULT_RING_SIZE, PARAM_READY);

  /**
   * GstCuIpcSink:on-full:
   *
   * What to do with a frame when every slot is still held by a consumer:
   * "wait" until one is released (at most full-timeout, then the frame is
   * dropped), or "drop" the frame at once. Dropped frames are counted in
   * #GstCuIpcSink:stats.
   */
  properties[PROP_ON_FULL] = g_param_spec_enum ("on-full", "On full",
      "What to do when every slot is held by a consumer",
      GST_TYPE_CU_IPC_SINK_ON_FULL, DEFAULT_ON_FULL, PARAM_PLAYING);

  /**
   * GstCuIpcSink:ordering:
   *
   * How consumers know that a frame's copy into its slot, maybe still
   * running on the GPU when the frame is announced, has landed: "auto"
   * (the fence page, a memory file whose word for the slot the GPU sets
   * and the consumer reads; else a host sync per frame), "fence" (the
   * fence page or an error at start), "events" (legacy interprocess
   * events: consumers in the producer's IPC and PID namespaces only) or
   * "host" (each copy synchronised before publishing). Read when the sink
   * starts; docs/elements.md has the details.
   */
  properties[PROP_ORDERING] = g_param_spec_enum ("ordering", "Ordering",
      "How consumers know that a frame's copy has landed",
      GST_TYPE_CU_IPC_SINK_ORDERING, DEFAULT_ORDERING, PARAM_READY);

  /**
   * GstCuIpcSink:full-timeout:
   *
   * With on-full=wait, how long in milliseconds to wait for a free slot
   * before the frame is dropped; 0 waits for as long as it takes.
   */
  properties[PROP_FULL_TIMEOUT] = g_param_spec_uint ("full-timeout",
      "Full timeout", "With on-full=wait, milliseconds to wait for a free "
      "slot before dropping the frame (0 = forever)", 0, G_MAXUINT,
      DEFAULT_FULL_TIMEOUT, PARAM_PLAYING);

  /**
   * GstCuIpcSink:wait-for-connection:
   *
   * Hold each frame until at least one consumer is connected and past
   * its handshake; flushing or stopping ends the wait.
   */
  properties[PROP_WAIT_FOR_CONNECTION] =
      g_param_spec_boolean ("wait-for-connection", "Wait for connection",
      "Block rendering until at least one consumer is connected",
      DEFAULT_WAIT_FOR_CONNECTION, PARAM_PLAYING);

  /**
   * GstCuIpcSink:consumer-timeout:
   *
   * When no slot is free, a consumer that holds two frames or more, the
   * oldest for this many milliseconds, is disconnected as stuck (with a
   * warning), freeing its slots; holding only its newest frame is fine.
   * Keep it below full-timeout. 0: never (docs/elements.md).
   */
  properties[PROP_CONSUMER_TIMEOUT] = g_param_spec_uint ("consumer-timeout",
      "Consumer timeout", "Disconnect consumers that hold older frames for "
      "this many ms while the producer waits for a slot (0 = never)",
      0, G_MAXUINT,
      DEFAULT_CONSUMER_TIMEOUT, PARAM_PLAYING);

  /**
   * GstCuIpcSink:allowed-users:
   *
   * Users, besides the producer's own user and root, whose consumers may
   * connect: names or ids separated by commas, checked with SO_PEERCRED
   * (the only gate for abstract sockets; docs/elements.md). Read when the
   * sink starts.
   */
  properties[PROP_ALLOWED_USERS] = g_param_spec_string ("allowed-users",
      "Allowed users", "Users whose consumers may connect besides the "
      "producer's own user and root: names or ids, comma separated",
      DEFAULT_ALLOWED_USERS, PARAM_READY);

  /**
   * GstCuIpcSink:allowed-groups:
   *
   * Primary groups whose consumers may connect, besides the producer's
   * own group (as socket-mode 0660 allows). Read when the sink starts.
   */
  properties[PROP_ALLOWED_GROUPS] = g_param_spec_string ("allowed-groups",
      "Allowed groups", "Primary groups whose consumers may connect, besides "
      "the producer's own group: names or ids, comma separated",
      DEFAULT_ALLOWED_GROUPS, PARAM_READY);

  /**
   * GstCuIpcSink:metas:
   *
   * Which GstMetas of each frame travel with it: "all" (every meta this
   * plugin carries: docs/elements.md, Frame metadata), "none", or meta API
   * names separated by commas ("GstReferenceTimestampMetaAPI,..."). At
   * most 32 KiB and 1024 metas a frame; the rest are left out, warned of
   * once and counted (metas-dropped). Read when the sink starts.
   */
  properties[PROP_METAS] = g_param_spec_string ("metas", "Metas",
      "Which metas travel with the frames: all, none, or meta API names "
      "separated by commas", DEFAULT_METAS, PARAM_READY);

  /**
   * GstCuIpcSink:stats-interval:
   *
   * Every this many milliseconds while the sink runs, post a
   * "cudaipcsink-stats" element message with the totals of
   * #GstCuIpcSink:stats, then one "cudaipcsink-client-stats" per consumer;
   * 0 (the default): none. Read when the sink starts.
   */
  properties[PROP_STATS_INTERVAL] = g_param_spec_uint ("stats-interval",
      "Stats interval", "Post a \"cudaipcsink-stats\" element message with "
      "the stats every this many ms (0 = never)", 0, G_MAXUINT,
      DEFAULT_STATS_INTERVAL, PARAM_READY);

  /**
   * GstCuIpcSink:in-place:
   *
   * Propose upstream a pool whose buffers are slots of the ring, so that
   * upstream writes each frame where consumers read it and render()
   * publishes it without a copy (backend=host: system memory; backend=cuda
   * on GStreamer >= 1.24: GstCudaMemory); other frames are copied. A
   * buffer upstream keeps holds its slot meanwhile. Read at each
   * allocation query; docs/elements.md has the details.
   */
  properties[PROP_IN_PLACE] = g_param_spec_boolean ("in-place", "In place",
      "Offer upstream ring slots to write frames into (host backend; cuda "
      "backend with GStreamer >= 1.24)",
      DEFAULT_IN_PLACE, PARAM_PLAYING);

  /**
   * GstCuIpcSink:enable-last-sample:
   *
   * GstBaseSink's, false here by default: the last sample of a frame
   * written in place is a ring slot, which it would keep from the
   * consumers.
   */
  properties[PROP_ENABLE_LAST_SAMPLE] =
      g_param_spec_boolean ("enable-last-sample", "Enable Last Buffer",
      "Keep the last frame as last-sample (false by default: a frame "
      "written in place would keep its ring slot)", FALSE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  /**
   * GstCuIpcSink:num-clients:
   *
   * Number of consumers connected that finished their handshake.
   */
  properties[PROP_NUM_CLIENTS] = g_param_spec_uint ("num-clients",
      "Number of clients", "Consumers connected and past their handshake",
      0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstCuIpcSink:stats:
   *
   * Counters, as an "application/x-cudaipcsink-stats" structure:
   * frames-published, frames-dropped, clients, generation, rings-retired,
   * driver-calls, host-syncs, copies-from-gpu, copies-from-host,
   * frames-in-place, metas-sent, metas-skipped, metas-dropped, and
   * client-stats, an array of "cudaipcsink-client" structures (name, pid,
   * frames-sent, frames-released, held, fence, events). docs/elements.md
   * says what each counts.
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frames published and dropped, and per-consumer counters",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "cuipc video sink (gst-cudaipc)", "Sink/Video",
      "Shares video frames with cuipcsrc in other processes through a ring "
      "in GPU or shared host memory (gst-cudaipc, not nvcodec)",
      CUDAIPC_AUTHOR);

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
  /* the publisher's defaults are the properties' (publisher.h) */
  cudaipc_publisher_config_init (&self->config);
  self->config.metas = g_strdup (DEFAULT_METAS);
  self->in_place = DEFAULT_IN_PLACE;
  self->offer = cudaipc_slot_offer_new (GST_ELEMENT (self),
      GST_BASE_SINK_PAD (self), GST_CAT_DEFAULT);
  apply_wait_locked (self);
  /* a last sample of a frame written in place would keep a ring slot */
  gst_base_sink_set_last_sample_enabled (GST_BASE_SINK (self), FALSE);
}
