/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cuipcsrc
 * @title: cuipcsrc
 * @see_also: cuipcsink
 *
 * Also `cudaipcsrc` on GStreamer < 1.24, and `cuipc://@cam1` as a URI
 * (docs/elements.md, Names and URI). Receives video frames from a
 * cuipcsink in another process, without a copy. The source connects to
 * the sink's socket, imports each slot of the sink's ring once (GPU
 * memory with the cuda backend, shared host memory with the host backend)
 * and pushes every frame as a read-only memory over its slot, with a
 * #GstVideoMeta that carries the producer's plane offsets and strides.
 * When downstream drops the last reference to a frame, the slot goes back
 * to the producer.
 *
 * The backend is the producer's: the source opens it on its own
 * #GstCuIpcSrc:device-id and, for the cuda backend, checks that both are
 * the same GPU. With the cuda backend the source offers
 * `video/x-raw(memory:CUDAMemory)` to downstream elements that accept it
 * (a map with GST_MAP_CUDA gives the device pointer), and plain
 * `video/x-raw` otherwise (a plain map gives a host copy of the frame).
 *
 * A source started before its producer waits up to
 * #GstCuIpcSrc:connect-timeout for it. A producer that goes away without
 * EOS is reported with a warning and waited for again when
 * #GstCuIpcSrc:reconnect is set, for up to #GstCuIpcSrc:reconnect-timeout
 * (30 s; 0: for ever), then the source fails with an error.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cuipcsink socket-path=/tmp/cam1.sock
 * gst-launch-1.0 cuipcsrc socket-path=/tmp/cam1.sock ! videoconvert ! autovideosink
 * ]| Two processes: the first publishes test frames (on the GPU where one
 * is usable, else in shared host memory), the second shows them.
 * |[
 * gst-launch-1.0 cuipcsrc socket-path=@cam1 device-id=0 ! cudadownload ! videoconvert ! jpegenc ! multifilesink location=frame-%05d.jpg
 * ]| Frames from a producer on the abstract socket `@cam1`, on GPU 0.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "cudaipcsrc.h"
#include "cudaipcsrc-report.h"
#include "cudaipc-uri.h"
#include "common/error.h"
#include "media/media.h"

GST_DEBUG_CATEGORY (gst_cu_ipc_src_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_src_debug

#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"

/* output-memory is the output's mode */
G_STATIC_ASSERT (GST_CU_IPC_SRC_OUTPUT_AUTO == (gint) CUDAIPC_OUTPUT_AUTO &&
    GST_CU_IPC_SRC_OUTPUT_IMPORTED == (gint) CUDAIPC_OUTPUT_IMPORTED &&
    GST_CU_IPC_SRC_OUTPUT_GST_CUDA == (gint) CUDAIPC_OUTPUT_GST_CUDA);

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_DEVICE_ID,
  PROP_CONNECT_TIMEOUT,
  PROP_RECONNECT,
  PROP_RECONNECT_TIMEOUT,
  PROP_MAX_HELD,
  PROP_LEAKY_TYPE,
  PROP_COPY_THRESHOLD,
  PROP_IS_LIVE,
  PROP_TIMESTAMP_MODE,
  PROP_CLIENT_NAME,
  PROP_STATS_INTERVAL,
  PROP_OUTPUT_MEMORY,
  PROP_PEER_ACCESS,
  PROP_ANNOUNCE,
  PROP_SPIN_US,
  PROP_STATS,
  N_PROPS
};

/* those of the consumer's core are its own (reader.h) */
#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_DEVICE_ID CUDAIPC_READER_DEFAULT_DEVICE_ID
#define DEFAULT_CONNECT_TIMEOUT CUDAIPC_READER_DEFAULT_CONNECT_TIMEOUT
#define DEFAULT_RECONNECT CUDAIPC_READER_DEFAULT_RECONNECT
#define DEFAULT_RECONNECT_TIMEOUT CUDAIPC_READER_DEFAULT_RECONNECT_TIMEOUT
#define DEFAULT_MAX_HELD CUDAIPC_READER_DEFAULT_MAX_HELD
#define DEFAULT_LEAKY_TYPE CUDAIPC_READER_DEFAULT_LEAKY
#define DEFAULT_COPY_THRESHOLD CUDAIPC_READER_DEFAULT_COPY_THRESHOLD
#define DEFAULT_IS_LIVE TRUE
#define DEFAULT_TIMESTAMP_MODE GST_CU_IPC_SRC_TIMESTAMP_CLOCK
#define DEFAULT_CLIENT_NAME NULL
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_OUTPUT_MEMORY GST_CU_IPC_SRC_OUTPUT_AUTO
#define DEFAULT_PEER_ACCESS CUDAIPC_READER_DEFAULT_PEER_ACCESS
#define DEFAULT_ANNOUNCE CUDAIPC_ANNOUNCE_SOCKET
#define DEFAULT_SPIN_US 0

static GParamSpec *properties[N_PROPS];

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(" CUDA_MEMORY_FEATURE "); video/x-raw"));

G_DEFINE_TYPE_WITH_CODE (GstCuIpcSrc, gst_cu_ipc_src, GST_TYPE_PUSH_SRC,
    GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_src_debug, "cudaipcsrc", 0,
        "CUDA IPC consumer");
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        cudaipc_uri_src_handler_init));
/* cuipcsrc: a name of ours alone (docs/elements.md, Names) */
GST_ELEMENT_REGISTER_DEFINE (cudaipcsrc, "cudaipcsrc", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SRC);
GST_ELEMENT_REGISTER_DEFINE (cuipcsrc, "cuipcsrc", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SRC);

static gboolean
is_passthrough (GstCuIpcSrc * self)
{
  gboolean passthrough;

  GST_OBJECT_LOCK (self);
  passthrough = self->timestamp_mode == GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH;
  GST_OBJECT_UNLOCK (self);
  return passthrough;
}

/* Caps */

/* Sets the output caps for the producer's @plain caps unless they are
 * already current: in CUDA memory with the cuda backend where downstream
 * accepts it, else @plain. get_caps() offers both from now on. */
static gboolean
apply_caps (GstCuIpcSrc * self, GstCaps * plain)
{
  GstCaps *offer = gst_caps_new_empty (), *cuda = NULL, *out, *current;
  gboolean ok = TRUE;

  if (self->backend == CUDAIPC_BACKEND_CUDA) {
    cuda = gst_caps_copy (plain);
    gst_caps_set_features (cuda, 0,
        gst_caps_features_new (CUDA_MEMORY_FEATURE, NULL));
    gst_caps_append (offer, gst_caps_copy (cuda));
  }
  gst_caps_append (offer, gst_caps_copy (plain));
  GST_OBJECT_LOCK (self);
  gst_caps_replace (&self->offer, offer);
  GST_OBJECT_UNLOCK (self);
  gst_caps_unref (offer);

  if (cuda && gst_pad_peer_query_accept_caps (GST_BASE_SRC_PAD (self), cuda))
    out = gst_caps_ref (cuda);
  else
    out = gst_caps_ref (plain);
  current = gst_pad_get_current_caps (GST_BASE_SRC_PAD (self));
  if (current == NULL || !gst_caps_is_equal (current, out)) {
    GST_DEBUG_OBJECT (self, "output caps %" GST_PTR_FORMAT, out);
    /* asked first: a caps event downstream refuses still "succeeds" here
     * (it stays sticky) and the first frame fails with not-negotiated,
     * which names neither the caps nor a way out */
    ok = gst_cu_ipc_src_downstream_accepts (self, out) &&
        gst_base_src_set_caps (GST_BASE_SRC (self), out);
  }
  /* cuda backend: the frames are in GPU memory whichever caps went out,
   * and the advice is for that memory (cudaconvert, cudadownload) */
  if (!ok)
    gst_cu_ipc_src_not_negotiated (self, cuda ? cuda : out);
  gst_clear_caps (&cuda);
  gst_clear_caps (&current);
  gst_caps_unref (out);
  return ok;
}

/* A new frame rate changes the latency: the bin asks again. */
static void
update_latency (GstCuIpcSrc * self, GstCaps * caps)
{
  GstClockTime duration = cudaipc_media_frame_duration (caps);

  if (duration == self->frame_duration)
    return;
  GST_OBJECT_LOCK (self);
  self->frame_duration = duration;
  GST_OBJECT_UNLOCK (self);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
}

/* A frame's caps are a new object whenever its caps id is new or was
 * redefined, so the pointer says whether to apply them. */
static GstFlowReturn
ensure_caps (GstCuIpcSrc * self, GstCaps * caps)
{
  if (self->out_caps == caps)
    return GST_FLOW_OK;
  /* negotiate() applies them, then basesrc asks downstream about
   * allocation for them (decide_allocation) */
  gst_caps_replace (&self->out_caps, caps);
  if (!gst_base_src_negotiate (GST_BASE_SRC (self))) {
    gst_clear_caps (&self->out_caps);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  update_latency (self, caps);
  return GST_FLOW_OK;
}

/* Frames */

/* A buffer around the validated @frame (its memory taken), without its
 * metas (add_metas()). */
static GstFlowReturn
make_buffer (GstCuIpcSrc * self, CudaIpcClientFrame * frame,
    GstBuffer ** outbuf)
{
  const CudaIpcFrameMsg *f = &frame->msg;
  GstBuffer *buf;
  GstFlowReturn ret;

  /* from here, unreffing the buffer releases the slot */
  buf = cudaipc_reader_make_buffer (self->reader, frame);
  ret = ensure_caps (self, frame->caps);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (buf);
    return ret;
  }
  if (self->announce)
    gst_cu_ipc_src_announce_connection (self, frame->caps);
  gst_cu_ipc_src_warn_refusals (self, NULL);
  cudaipc_downstream_stamp (self->downstream, f, buf, is_passthrough (self));

  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT " in slot %u: %"
      GST_PTR_FORMAT, f->seq, f->slot, buf);
  *outbuf = buf;
  return GST_FLOW_OK;
}

/* @buf out as a copy in memory of our own where downstream holds
 * copy-threshold slots already (@copy), else as output-memory says. */
static GstBuffer *
hand_out (GstCuIpcSrc * self, GstBuffer * buf, gboolean copy,
    GError ** error)
{
  if (copy && !cudaipc_output_copies (self->output)) {
    g_autoptr (GError) copy_err = NULL;
    gboolean copied;

    buf = cudaipc_output_copy (self->output, GST_ELEMENT (self), buf,
        &copied, &copy_err);
    if (copied) {
      GST_LOG_OBJECT (self, "downstream holds slots: a copy goes out");
      cudaipc_reader_count_copy (self->reader);
      return buf;
    }
    gst_cu_ipc_src_warn_no_copy (self, copy_err);
  }
  return cudaipc_output_convert (self->output, buf, error);
}

/* @meta, the frame's metas, decoded onto @buf, the buffer that goes out:
 * decoded onto the slot's own before a copy or a GstCudaMemory wrapper
 * of it, they were copied over, which costs as much again (50 regions of
 * interest with their parameters: as much as decoding them) and was on
 * every frame's way downstream. */
static GstBuffer *
add_metas (GstCuIpcSrc * self, GstBuffer * buf, GBytes * meta)
{
  g_autoptr (GError) metas_err = NULL;

  buf = gst_buffer_make_writable (buf);
  cudaipc_reader_decode_metas (self->reader, meta, buf, &metas_err);
  if (metas_err != NULL)
    gst_cu_ipc_src_warn_refusals (self, metas_err);
  return buf;
}

/* Streaming */

static GstFlowReturn
gst_cu_ipc_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (psrc);
  g_autoptr (GError) out_err = NULL;
  g_autoptr (GBytes) meta = NULL;
  GstBuffer *buf = NULL;
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean copy = FALSE;
  guint64 dropped = 0;

  while (buf == NULL) {
    g_autoptr (GError) err = NULL;
    g_auto (CudaIpcReaderItem) item = { {0,}, };

    /* the first connection and every reconnection happen in next(), in
     * the streaming thread, so that no state change waits for a
     * producer */
    CudaIpcReaderStatus st = cudaipc_reader_next (self->reader, 0, &item,
        &err);

    switch (st) {
      case CUDAIPC_READER_FRAME:
        copy = cudaipc_reader_should_copy (self->reader, &item.item.frame);
        dropped = item.item.frame.dropped_before;
        meta = g_steal_pointer (&item.item.frame.meta);
        ret = make_buffer (self, &item.item.frame, &buf);
        break;
      case CUDAIPC_READER_EVENT:
        ret = cudaipc_downstream_event (self->downstream,
            g_steal_pointer (&item.item.event), is_passthrough (self));
        break;
      case CUDAIPC_READER_CONNECTED:
        /* announced with the connection's first frame */
        self->backend = item.backend;
        self->announce = TRUE;
        cudaipc_downstream_connected (self->downstream);
        break;
      case CUDAIPC_READER_LOST:
        ret = gst_cu_ipc_src_producer_lost (self, &item, err);
        break;
      case CUDAIPC_READER_TIMEOUT:
        /* no deadline */
        break;
      case CUDAIPC_READER_CANCELLED:
        ret = GST_FLOW_FLUSHING;
        break;
      case CUDAIPC_READER_CONNECT_FAILED:
      case CUDAIPC_READER_FAILED:
        ret = gst_cu_ipc_src_reader_failed (self, st, &item, err);
        break;
    }
    if (ret != GST_FLOW_OK)
      return ret;
  }

  if (G_UNLIKELY (dropped > 0))
    gst_cu_ipc_src_report_drops (self, buf, dropped);
  buf = hand_out (self, buf, copy, &out_err);
  if ((buf == NULL || out_err != NULL) &&
      !gst_cu_ipc_src_output_failed (self, out_err, buf != NULL))
    return GST_FLOW_ERROR;
  if (meta != NULL)
    buf = add_metas (self, buf, meta);

  cudaipc_downstream_buffer_out (self->downstream);
  GST_OBJECT_LOCK (self);
  self->pushed++;
  GST_OBJECT_UNLOCK (self);
  *outbuf = buf;
  return GST_FLOW_OK;
}

/* GstBaseSrc */

static gboolean
gst_cu_ipc_src_start (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  g_autoptr (GError) err = NULL;
  guint stats_interval;

  if (!cudaipc_reader_start (self->reader, &err)) {
    if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID))
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("%s", err->message),
          ("set socket-path to the cudaipcsink's"));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s", err->message),
          (NULL));
    return FALSE;
  }

  GST_OBJECT_LOCK (self);
  self->pushed = 0;
  self->frame_duration = GST_CLOCK_TIME_NONE;
  stats_interval = self->stats_interval;
  GST_OBJECT_UNLOCK (self);
  self->announce = FALSE;
  self->drops_warned_at = 0;
  self->drops_unwarned = 0;
  self->warned_copy = FALSE;
  cudaipc_downstream_reset (self->downstream);
  gst_clear_caps (&self->out_caps);

  if (stats_interval > 0)
    self->ticker = cudaipc_ticker_new ("cudaipcsrc-stats", stats_interval,
        gst_cu_ipc_src_post_stats, self);
  return TRUE;
}

static gboolean
gst_cu_ipc_src_stop (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  /* joined here: no tick runs from now on */
  g_clear_pointer (&self->ticker, cudaipc_ticker_free);
  cudaipc_output_reset (self->output);
  cudaipc_reader_stop (self->reader);
  gst_clear_caps (&self->out_caps);
  cudaipc_downstream_reset (self->downstream);
  GST_OBJECT_LOCK (self);
  gst_clear_caps (&self->offer);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cu_ipc_src_unlock (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  cudaipc_reader_cancel (self->reader);
  return TRUE;
}

static gboolean
gst_cu_ipc_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  cudaipc_reader_uncancel (self->reader);
  return TRUE;
}

static GstCaps *
gst_cu_ipc_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  GstCaps *caps = NULL;

  GST_OBJECT_LOCK (self);
  if (self->offer != NULL)
    caps = gst_caps_ref (self->offer);
  GST_OBJECT_UNLOCK (self);
  if (caps == NULL)
    caps = gst_pad_get_pad_template_caps (GST_BASE_SRC_PAD (bsrc));

  if (filter != NULL) {
    GstCaps *tmp = gst_caps_intersect_full (filter, caps,
        GST_CAPS_INTERSECT_FIRST);

    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

/* Until the producer's caps are known there is nothing to negotiate; the
 * default would fix caps from the template. */
static gboolean
gst_cu_ipc_src_negotiate (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  if (self->out_caps == NULL)
    return TRUE;
  return apply_caps (self, self->out_caps);
}

/* Chooses the memory frames of the caps being negotiated go out in:
 * with CUDA memory caps, nvcodec's GstCudaMemory when output-memory asks
 * for it or, with "auto", when downstream offers a CUDA buffer pool (it
 * works on GstCudaMemory); else the imported slot itself. basesrc's own
 * pool is never used: frames are made in create(). */
static gboolean
gst_cu_ipc_src_decide_allocation (GstBaseSrc * bsrc, GstQuery * query)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  g_autoptr (GError) err = NULL;

  CudaIpcOutputMode mode;

  GST_OBJECT_LOCK (self);
  mode = (CudaIpcOutputMode) self->output_memory;
  GST_OBJECT_UNLOCK (self);
  if (cudaipc_output_decide (self->output, GST_ELEMENT (self), query,
          self->backend, mode, cudaipc_reader_get_device_id (self->reader),
          &err)) {
    /* copy-threshold=0: nothing is ever copied */
    if (cudaipc_reader_get_copy_threshold (self->reader) != 0)
      cudaipc_output_ready_copies (self->output, GST_ELEMENT (self));
    return TRUE;
  }
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("output-memory=gst-cuda, but frames cannot be handed downstream "
          "as GstCudaMemory: %s", err->message), (NULL));
  return FALSE;
}

static void
gst_cu_ipc_src_set_context (GstElement * element, GstContext * context)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (element);

  cudaipc_output_set_context (self->output, element, context,
      cudaipc_reader_get_device_id (self->reader));
  GST_ELEMENT_CLASS (gst_cu_ipc_src_parent_class)->set_context (element,
      context);
}

/* Live: at least a frame's duration (a frame is published once it is
 * complete), and at most what the source may hold (max-held frames) before
 * it drops; unknown while the frame rate is. */
static gboolean
query_latency (GstCuIpcSrc * self, GstQuery * query)
{
  GstClockTime duration, min = 0, max = GST_CLOCK_TIME_NONE;
  guint held;

  if (!gst_base_src_is_live (GST_BASE_SRC (self)))
    return FALSE;

  GST_OBJECT_LOCK (self);
  duration = self->frame_duration;
  GST_OBJECT_UNLOCK (self);
  if (GST_CLOCK_TIME_IS_VALID (duration)) {
    held = cudaipc_reader_latency_frames (self->reader);
    min = duration;
    if (held > 0)
      max = duration * held;
  }
  GST_DEBUG_OBJECT (self, "latency: min %" GST_TIME_FORMAT " max %"
      GST_TIME_FORMAT, GST_TIME_ARGS (min), GST_TIME_ARGS (max));
  gst_query_set_latency (query, TRUE, min, max);
  return TRUE;
}

static gboolean
gst_cu_ipc_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY &&
      query_latency (self, query))
    return TRUE;

  if (cudaipc_output_handle_query (self->output, GST_ELEMENT (self), query,
          cudaipc_reader_get_device_id (self->reader)))
    return TRUE;
  return GST_BASE_SRC_CLASS (gst_cu_ipc_src_parent_class)->query (bsrc, query);
}

static GstStateChangeReturn
gst_cu_ipc_src_change_state (GstElement * element, GstStateChange transition)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (element);

  if (transition == GST_STATE_CHANGE_PLAYING_TO_PAUSED)
    g_atomic_int_set (&self->paused, 1);
  return GST_ELEMENT_CLASS (gst_cu_ipc_src_parent_class)->change_state
      (element, transition);
}

/* GObject */

static void
gst_cu_ipc_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  /* the consumer's settings are the reader's */
  if (cudaipc_reader_set_setting (self->reader, pspec->name, value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_IS_LIVE:
      GST_OBJECT_UNLOCK (self);
      gst_base_src_set_live (GST_BASE_SRC (self), g_value_get_boolean (value));
      return;
    case PROP_TIMESTAMP_MODE:
      self->timestamp_mode = g_value_get_enum (value);
      break;
    case PROP_STATS_INTERVAL:
      self->stats_interval = g_value_get_uint (value);
      break;
    case PROP_OUTPUT_MEMORY:
      self->output_memory = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  if (cudaipc_reader_get_setting (self->reader, pspec->name, value))
    return;
  switch (prop_id) {
    case PROP_IS_LIVE:
      g_value_set_boolean (value, gst_base_src_is_live (GST_BASE_SRC (self)));
      return;
    case PROP_STATS:
      g_value_take_boxed (value, gst_cu_ipc_src_get_stats (self));
      return;
    default:
      break;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TIMESTAMP_MODE:
      g_value_set_enum (value, self->timestamp_mode);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, self->stats_interval);
      break;
    case PROP_OUTPUT_MEMORY:
      g_value_set_enum (value, self->output_memory);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_src_finalize (GObject * object)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  /* stop() ran: nothing is connected or imported any more; frames still
   * downstream keep the client's session alive */
  cudaipc_reader_free (self->reader);
  cudaipc_output_free (self->output);
  cudaipc_downstream_free (self->downstream);
  gst_clear_caps (&self->out_caps);
  gst_clear_caps (&self->offer);

  G_OBJECT_CLASS (gst_cu_ipc_src_parent_class)->finalize (object);
}

static void
gst_cu_ipc_src_init (GstCuIpcSrc * self)
{
  GstBaseSrc *bsrc = GST_BASE_SRC (self);

  /* the defaults of its settings are those of the properties */
  self->reader = cudaipc_reader_new ();
  self->timestamp_mode = DEFAULT_TIMESTAMP_MODE;
  self->stats_interval = DEFAULT_STATS_INTERVAL;
  self->output_memory = DEFAULT_OUTPUT_MEMORY;
  self->output = cudaipc_output_new ();
  self->downstream = cudaipc_downstream_new (bsrc);

  gst_base_src_set_format (bsrc, GST_FORMAT_TIME);
  gst_base_src_set_live (bsrc, DEFAULT_IS_LIVE);
}

static void
gst_cu_ipc_src_class_init (GstCuIpcSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  gobject_class->set_property = gst_cu_ipc_src_set_property;
  gobject_class->get_property = gst_cu_ipc_src_get_property;
  gobject_class->finalize = gst_cu_ipc_src_finalize;

  /**
   * GstCuIpcSrc:socket-path:
   *
   * The cudaipcsink's socket: a file path, or "@name" for a Linux abstract
   * socket.
   */
  properties[PROP_SOCKET_PATH] = g_param_spec_string ("socket-path",
      "Socket path",
      "The producer's socket: a path, or @name for an abstract socket",
      DEFAULT_SOCKET_PATH, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:device-id:
   *
   * The CUDA device this consumer uses (ignored by the host backend). The
   * backend is the producer's, learned from its HELLO; with the cuda
   * backend the producer's GPU must be this one.
   */
  properties[PROP_DEVICE_ID] = g_param_spec_int ("device-id", "Device ID",
      "CUDA device ordinal of this consumer (the producer's GPU)", 0,
      G_MAXINT, DEFAULT_DEVICE_ID, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:connect-timeout:
   *
   * How long to wait for a producer, in milliseconds, when none listens on
   * #GstCuIpcSrc:socket-path yet at start, and for its HELLO once
   * connected. 0 waits forever. (After losing a producer,
   * #GstCuIpcSrc:reconnect-timeout applies instead.)
   */
  properties[PROP_CONNECT_TIMEOUT] = g_param_spec_uint ("connect-timeout",
      "Connect timeout",
      "How long to wait for the producer, in ms (0 = forever)", 0,
      G_MAXUINT, DEFAULT_CONNECT_TIMEOUT, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:reconnect:
   *
   * When the producer goes away without EOS, post a warning and keep
   * trying to connect again (see #GstCuIpcSrc:reconnect-timeout) instead
   * of failing. Frames of the old connection still downstream stay valid.
   */
  properties[PROP_RECONNECT] = g_param_spec_boolean ("reconnect", "Reconnect",
      "Reconnect when the producer goes away without EOS", DEFAULT_RECONNECT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:reconnect-timeout:
   *
   * With #GstCuIpcSrc:reconnect, how long to try to reach a producer
   * after losing one, in ms, and to wait for its HELLO, before an error
   * (then EOS). 30 s outlasts a restart; 0 tries until the element stops.
   */
  properties[PROP_RECONNECT_TIMEOUT] = g_param_spec_uint ("reconnect-timeout",
      "Reconnect timeout",
      "How long to keep trying to reconnect after losing the producer, in "
      "ms (0 = until stopped)", 0, G_MAXUINT, DEFAULT_RECONNECT_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:max-held:
   *
   * The most frames this consumer holds at once in the producer's slots:
   * pushed and not yet freed downstream, or read and waiting to be pushed.
   * Where leaky-type drops (a live stream, by default), the source keeps
   * reading while downstream is busy, and a frame beyond the limit goes
   * back to the producer at once, counted in frames-dropped (the oldest
   * one read and not pushed yet, else the one that arrives): a slow
   * consumer of a live stream loses frames instead of stalling the
   * producer or being dropped by it. -1 (the default): the producer's ring
   * less one, at least 1 (a syncing sink holds the frame it showed last,
   * the one it waits to show and the next, read meanwhile). 0: no limit,
   * as leaky-type=none.
   */
  properties[PROP_MAX_HELD] = g_param_spec_int ("max-held", "Max held",
      "Most frames held at once; more are dropped (-1 = the producer's "
      "ring less one, 0 = no limit)", -1, G_MAXINT, DEFAULT_MAX_HELD,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:leaky-type:
   *
   * Whether frames beyond max-held are dropped. auto (the default)
   * follows the producer's stream: a stream that is not live (a file, a
   * decoder) loses no frame, the producer waiting for this consumer; a
   * live one (a camera) keeps the newest frames, dropping the oldest
   * waiting ones, with a QoS message, a warning at most every 10 s and
   * the count in stats. none: never drop; downstream: always drop the
   * oldest.
   */
  properties[PROP_LEAKY_TYPE] = g_param_spec_enum ("leaky-type",
      "Leaky type", "Whether frames beyond max-held are dropped (auto: "
      "none for a stream that is not live, downstream for a live one)",
      GST_TYPE_CU_IPC_SRC_LEAKY_TYPE, DEFAULT_LEAKY_TYPE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:copy-threshold:
   *
   * How many of the producer's slots downstream may hold before the next
   * frames go out as copies in memory of this consumer's own (GstCudaMemory
   * for CUDA memory caps, else system memory), their slots given back at
   * once: downstream that keeps frames (an encoder's look-ahead, a queue,
   * an appsink) then neither stalls the producer nor gets this consumer
   * dropped, and loses no frame. Zero copy resumes once downstream lets
   * go. -1 (the default): half the producer's ring, at least 1; 0: never
   * copy.
   */
  properties[PROP_COPY_THRESHOLD] = g_param_spec_int ("copy-threshold",
      "Copy threshold", "Slots downstream may hold before frames go out "
      "as copies (-1 = half the producer's ring, 0 = never copy)", -1,
      G_MAXINT, DEFAULT_COPY_THRESHOLD, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:is-live:
   *
   * Act as a live source.
   */
  properties[PROP_IS_LIVE] = g_param_spec_boolean ("is-live", "Is live",
      "Act as a live source", DEFAULT_IS_LIVE, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:timestamp-mode:
   *
   * clock: stamp each frame with this pipeline's running time of the
   * moment the producer's PTS stands for (both share CLOCK_MONOTONIC), so
   * the two pipelines' running times line up; each PTS comes after the
   * last one pushed, a millisecond at least (half a frame where frames
   * are shorter), across reconnections. passthrough: push the producer's
   * PTS, DTS and segments unchanged, their running time moved by one
   * offset per connection.
   */
  properties[PROP_TIMESTAMP_MODE] = g_param_spec_enum ("timestamp-mode",
      "Timestamp mode", "How frames are timestamped",
      GST_TYPE_CU_IPC_SRC_TIMESTAMP_MODE, DEFAULT_TIMESTAMP_MODE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:client-name:
   *
   * The name this consumer gives the producer in its HELLO, for the
   * producer's messages and statistics, at most 255 bytes. NULL:
   * "cudaipcsrc-<pid>".
   */
  properties[PROP_CLIENT_NAME] = g_param_spec_string ("client-name",
      "Client name",
      "Name given to the producer (NULL = cudaipcsrc-<pid>)",
      DEFAULT_CLIENT_NAME, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:stats-interval:
   *
   * Every this many milliseconds while the source runs, post an element
   * message "cudaipcsrc-stats" whose fields are those of
   * #GstCuIpcSrc:stats; 0 (the default) posts none. Read when the source
   * starts.
   */
  properties[PROP_STATS_INTERVAL] = g_param_spec_uint ("stats-interval",
      "Stats interval", "Post a \"cudaipcsrc-stats\" element message with "
      "the stats every this many ms (0 = never)", 0, G_MAXUINT,
      DEFAULT_STATS_INTERVAL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:output-memory:
   *
   * The memory frames go downstream in when the caps are
   * video/x-raw(memory:CUDAMemory). "imported": the imported slot itself,
   * no copy (GST_MAP_CUDA gives its device pointer). "gst-cuda": nvcodec's
   * GstCudaMemory, as nvcodec's own elements expect, from GStreamer's CUDA
   * library (libgstcuda-1.0): with GStreamer >= 1.24 the slot is wrapped,
   * no copy; with 1.22 each frame is copied on the GPU into a CUDA buffer
   * pool (downstream's when it offers one) and the slot is released at
   * once. "auto" (the default): GstCudaMemory where downstream offers a
   * CUDA buffer pool in the allocation query (nvcodec's elements do),
   * the imported slot otherwise (appsink, fakesink, other elements).
   */
  properties[PROP_OUTPUT_MEMORY] = g_param_spec_enum ("output-memory",
      "Output memory", "The memory frames in CUDA memory caps go out in",
      GST_TYPE_CU_IPC_SRC_OUTPUT_MEMORY, DEFAULT_OUTPUT_MEMORY,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:peer-access:
   *
   * When the producer's ring is on another GPU than #GstCuIpcSrc:device-id
   * and this device can access that GPU as a peer (NVLink or PCIe peer to
   * peer), map the slots for this device and read them in place, across
   * the interconnect. Off, or without peer access between the two, such a
   * producer is refused with an error that names the device to use.
   */
  properties[PROP_PEER_ACCESS] = g_param_spec_boolean ("peer-access",
      "Peer access", "Read a producer on another GPU in place through peer "
      "access where the two GPUs allow it", DEFAULT_PEER_ACCESS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:announce:
   *
   * How the producer tells this consumer of each frame. socket (the
   * default): a message on the socket. shared-memory: through a page of
   * shared memory the producer makes for this consumer and sends over the
   * socket, with an eventfd to wake it: no socket message a frame either
   * way, less CPU on both sides (docs/benchmarks.md, The announce
   * channel). The socket still carries the set-up, the slots' fds and the
   * producer's end. A producer that does not offer it keeps to the
   * socket. Read at each connection.
   */
  properties[PROP_ANNOUNCE] = g_param_spec_enum ("announce", "Announce",
      "How the producer tells of each frame: a socket message, or through "
      "shared memory", GST_TYPE_CU_IPC_SRC_ANNOUNCE, DEFAULT_ANNOUNCE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:spin-us:
   *
   * With announce=shared-memory: how long a wait for the next frame reads
   * the shared page busily before it sleeps, in microseconds (0, the
   * default: at once). A frame that comes meanwhile is taken without
   * being woken, for lower latency at the cost of a core busy for up to
   * that long at each wait.
   */
  properties[PROP_SPIN_US] = g_param_spec_uint ("spin-us", "Spin us",
      "With announce=shared-memory, microseconds a wait reads busily "
      "before it sleeps (0 = none)", 0, CUDAIPC_MAX_SPIN_US, DEFAULT_SPIN_US,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:stats:
   *
   * Counters, as an "application/x-cudaipcsrc-stats" structure:
   * frames-received (FRAMEs received), frames-pushed, frames-dropped
   * (released at once because of #GstCuIpcSrc:max-held, or discarded),
   * frames-discarded (of those, frames that arrived before the producer's
   * BYE and were to go out more than 100 ms after they were published:
   * released unpushed, for the producer had dropped this consumer and
   * may reuse their slots), frames-released
   * (RELEASEs sent), all guint64 since start; held (frames of the current
   * connection not yet released), generation (the producer's ring) and
   * imports (slots imported on the current connection), all guint; and
   * driver-calls (guint64 since start): CUDA driver calls made on the
   * per-frame path, with the cuda backend a context push, the interprocess
   * event's wait and the pop per frame; and output
   * (string): what frames go out in, "imported" (the slot itself),
   * "gst-cuda-wrapped" or "gst-cuda-copied" (see
   * #GstCuIpcSrc:output-memory); and peer (boolean): the producer's ring
   * is on another GPU, read through peer access (#GstCuIpcSrc:peer-access).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frame counters", GST_TYPE_STRUCTURE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPS, properties);

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "cuipc video source (gst-cudaipc)", "Source/Video",
      "Receives video frames in GPU or shared host memory from a cuipcsink "
      "in another process, without a copy (gst-cudaipc, not nvcodec)",
      CUDAIPC_AUTHOR);

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_unlock_stop);
  basesrc_class->get_caps = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_get_caps);
  basesrc_class->negotiate = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_negotiate);
  basesrc_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cu_ipc_src_decide_allocation);
  basesrc_class->query = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_query);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_set_context);
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_cu_ipc_src_change_state);
  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_create);

  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SRC_TIMESTAMP_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SRC_OUTPUT_MEMORY, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SRC_LEAKY_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SRC_ANNOUNCE, 0);
}
