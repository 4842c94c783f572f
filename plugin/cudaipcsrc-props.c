/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsrc's properties: their specs and documentation, their defaults,
 * set and get (cudaipcsrc.c has the element's behaviour).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cudaipcsrc-private.h"

static GParamSpec *properties[N_PROPS];

static void
gst_cu_ipc_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  switch (prop_id) {
    case PROP_IS_LIVE:
      gst_base_src_set_live (GST_BASE_SRC (self), g_value_get_boolean (value));
      return;
    default:
      break;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (self->socket_path);
      self->socket_path = g_value_dup_string (value);
      break;
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_CONNECT_TIMEOUT:
      self->connect_timeout = g_value_get_uint (value);
      break;
    case PROP_RECONNECT:
      self->reconnect = g_value_get_boolean (value);
      break;
    case PROP_RECONNECT_TIMEOUT:
      self->reconnect_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_HELD:
      self->max_held = g_value_get_int (value);
      if (self->client != NULL)
        cudaipc_client_set_max_held (self->client, self->max_held);
      break;
    case PROP_TIMESTAMP_MODE:
      self->timestamp_mode = g_value_get_enum (value);
      break;
    case PROP_CLIENT_NAME:
      g_free (self->client_name);
      self->client_name = g_value_dup_string (value);
      break;
    case PROP_STATS_INTERVAL:
      self->stats_interval = g_value_get_uint (value);
      break;
    case PROP_OUTPUT_MEMORY:
      self->output_memory = g_value_get_enum (value);
      break;
    case PROP_PEER_ACCESS:
      self->peer_access = g_value_get_boolean (value);
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
    case PROP_SOCKET_PATH:
      g_value_set_string (value, self->socket_path);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_CONNECT_TIMEOUT:
      g_value_set_uint (value, self->connect_timeout);
      break;
    case PROP_RECONNECT:
      g_value_set_boolean (value, self->reconnect);
      break;
    case PROP_RECONNECT_TIMEOUT:
      g_value_set_uint (value, self->reconnect_timeout);
      break;
    case PROP_MAX_HELD:
      g_value_set_int (value, self->max_held);
      break;
    case PROP_TIMESTAMP_MODE:
      g_value_set_enum (value, self->timestamp_mode);
      break;
    case PROP_CLIENT_NAME:
      g_value_set_string (value, self->client_name);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, self->stats_interval);
      break;
    case PROP_OUTPUT_MEMORY:
      g_value_set_enum (value, self->output_memory);
      break;
    case PROP_PEER_ACCESS:
      g_value_set_boolean (value, self->peer_access);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}


void
gst_cu_ipc_src_init_properties (GstCuIpcSrc * self)
{
  self->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  self->device_id = DEFAULT_DEVICE_ID;
  self->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  self->reconnect = DEFAULT_RECONNECT;
  self->reconnect_timeout = DEFAULT_RECONNECT_TIMEOUT;
  self->max_held = DEFAULT_MAX_HELD;
  self->timestamp_mode = DEFAULT_TIMESTAMP_MODE;
  self->client_name = g_strdup (DEFAULT_CLIENT_NAME);
  self->stats_interval = DEFAULT_STATS_INTERVAL;
  self->output_memory = DEFAULT_OUTPUT_MEMORY;
  self->peer_access = DEFAULT_PEER_ACCESS;
}

void
gst_cu_ipc_src_install_properties (GObjectClass * gobject_class)
{
  gobject_class->set_property = gst_cu_ipc_src_set_property;
  gobject_class->get_property = gst_cu_ipc_src_get_property;

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
   * With #GstCuIpcSrc:reconnect, how long to keep trying to reach a
   * producer after losing one, in milliseconds, before failing with an
   * error; also the wait for the new producer's HELLO. 0 (the default)
   * keeps trying until the element stops.
   */
  properties[PROP_RECONNECT_TIMEOUT] = g_param_spec_uint ("reconnect-timeout",
      "Reconnect timeout",
      "How long to keep trying to reconnect after losing the producer, in "
      "ms (0 = until stopped)", 0, G_MAXUINT, DEFAULT_RECONNECT_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:max-held:
   *
   * The most frames this consumer holds at once: pushed and not yet freed
   * downstream, or read and waiting to be pushed. The source keeps reading
   * while downstream is busy, and a frame beyond the limit goes back to
   * the producer at once, counted in frames-dropped (the oldest one read
   * and not pushed yet, else the one that arrives): a slow consumer loses
   * frames instead of stalling the producer or being dropped by it. -1
   * (the default): half the producer's ring, at least 1. 0: no limit (a
   * consumer that must see every frame; with on-full=wait it holds the
   * producer back when it is slow).
   */
  properties[PROP_MAX_HELD] = g_param_spec_int ("max-held", "Max held",
      "Most frames held at once; more are dropped (-1 = half the "
      "producer's ring, 0 = no limit)", -1, G_MAXINT, DEFAULT_MAX_HELD,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

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
   * the two pipelines' running times line up; frames from before this
   * pipeline started get 0. passthrough: push the producer's PTS, DTS and
   * segments unchanged.
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
}
