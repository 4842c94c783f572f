/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsrc's properties (cudaipcsrc-props.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "cudaipcsrc-props.h"

static GParamSpec *properties[N_PROPS];

void
gst_cu_ipc_src_props_init (GstCuIpcSrcProps * p)
{
  p->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  p->device_id = DEFAULT_DEVICE_ID;
  p->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  p->reconnect = DEFAULT_RECONNECT;
  p->reconnect_timeout = DEFAULT_RECONNECT_TIMEOUT;
  p->max_held = DEFAULT_MAX_HELD;
  p->timestamp_mode = DEFAULT_TIMESTAMP_MODE;
  p->client_name = g_strdup (DEFAULT_CLIENT_NAME);
  p->stats_interval = DEFAULT_STATS_INTERVAL;
  p->output_memory = DEFAULT_OUTPUT_MEMORY;
  p->peer_access = DEFAULT_PEER_ACCESS;
}

void
gst_cu_ipc_src_props_clear (GstCuIpcSrcProps * p)
{
  g_clear_pointer (&p->socket_path, g_free);
  g_clear_pointer (&p->client_name, g_free);
}

gboolean
gst_cu_ipc_src_props_set (GstCuIpcSrcProps * p, guint prop_id,
    const GValue * value)
{
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (p->socket_path);
      p->socket_path = g_value_dup_string (value);
      break;
    case PROP_DEVICE_ID:
      p->device_id = g_value_get_int (value);
      break;
    case PROP_CONNECT_TIMEOUT:
      p->connect_timeout = g_value_get_uint (value);
      break;
    case PROP_RECONNECT:
      p->reconnect = g_value_get_boolean (value);
      break;
    case PROP_RECONNECT_TIMEOUT:
      p->reconnect_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_HELD:
      p->max_held = g_value_get_int (value);
      break;
    case PROP_TIMESTAMP_MODE:
      p->timestamp_mode = g_value_get_enum (value);
      break;
    case PROP_CLIENT_NAME:
      g_free (p->client_name);
      p->client_name = g_value_dup_string (value);
      break;
    case PROP_STATS_INTERVAL:
      p->stats_interval = g_value_get_uint (value);
      break;
    case PROP_OUTPUT_MEMORY:
      p->output_memory = g_value_get_enum (value);
      break;
    case PROP_PEER_ACCESS:
      p->peer_access = g_value_get_boolean (value);
      break;
    default:
      return FALSE;
  }
  return TRUE;
}

gboolean
gst_cu_ipc_src_props_get (const GstCuIpcSrcProps * p, guint prop_id,
    GValue * value)
{
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, p->socket_path);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, p->device_id);
      break;
    case PROP_CONNECT_TIMEOUT:
      g_value_set_uint (value, p->connect_timeout);
      break;
    case PROP_RECONNECT:
      g_value_set_boolean (value, p->reconnect);
      break;
    case PROP_RECONNECT_TIMEOUT:
      g_value_set_uint (value, p->reconnect_timeout);
      break;
    case PROP_MAX_HELD:
      g_value_set_int (value, p->max_held);
      break;
    case PROP_TIMESTAMP_MODE:
      g_value_set_enum (value, p->timestamp_mode);
      break;
    case PROP_CLIENT_NAME:
      g_value_set_string (value, p->client_name);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, p->stats_interval);
      break;
    case PROP_OUTPUT_MEMORY:
      g_value_set_enum (value, p->output_memory);
      break;
    case PROP_PEER_ACCESS:
      g_value_set_boolean (value, p->peer_access);
      break;
    default:
      return FALSE;
  }
  return TRUE;
}

void
gst_cu_ipc_src_props_install (GObjectClass * gobject_class)
{
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
   * (the default): the producer's ring less one, at least 1 (a syncing
   * sink holds the frame it showed last, the one it waits to show and the
   * next, read meanwhile). 0: no limit (a
   * consumer that must see every frame; with on-full=wait it holds the
   * producer back when it is slow).
   */
  properties[PROP_MAX_HELD] = g_param_spec_int ("max-held", "Max held",
      "Most frames held at once; more are dropped (-1 = the producer's "
      "ring less one, 0 = no limit)", -1, G_MAXINT, DEFAULT_MAX_HELD,
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
