/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsink's properties (cudaipcsink-props.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "cudaipcsink-props.h"

static GParamSpec *properties[N_PROPERTIES];

void
gst_cu_ipc_sink_props_init (GstCuIpcSinkProps * p)
{
  p->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  p->socket_mode = DEFAULT_SOCKET_MODE;
  p->backend = DEFAULT_BACKEND;
  p->device_id = DEFAULT_DEVICE_ID;
  p->ring_size = DEFAULT_RING_SIZE;
  p->ordering = DEFAULT_ORDERING;
  p->on_full = DEFAULT_ON_FULL;
  p->full_timeout = DEFAULT_FULL_TIMEOUT;
  p->consumer_timeout = DEFAULT_CONSUMER_TIMEOUT;
  p->wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
  p->stats_interval = DEFAULT_STATS_INTERVAL;
  p->metas = g_strdup (DEFAULT_METAS);
  p->in_place = DEFAULT_IN_PLACE;
}

void
gst_cu_ipc_sink_props_clear (GstCuIpcSinkProps * p)
{
  g_clear_pointer (&p->socket_path, g_free);
  g_clear_pointer (&p->allowed_users, g_free);
  g_clear_pointer (&p->allowed_groups, g_free);
  g_clear_pointer (&p->metas, g_free);
}

gboolean
gst_cu_ipc_sink_props_set (GstCuIpcSinkProps * p, guint prop_id,
    const GValue * value)
{
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (p->socket_path);
      p->socket_path = g_value_dup_string (value);
      break;
    case PROP_SOCKET_MODE:
      p->socket_mode = g_value_get_uint (value);
      break;
    case PROP_BACKEND:
      p->backend = g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      p->device_id = g_value_get_int (value);
      break;
    case PROP_RING_SIZE:
      p->ring_size = g_value_get_uint (value);
      break;
    case PROP_ORDERING:
      p->ordering = g_value_get_enum (value);
      break;
    case PROP_ON_FULL:
      p->on_full = g_value_get_enum (value);
      break;
    case PROP_FULL_TIMEOUT:
      p->full_timeout = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      p->wait_for_connection = g_value_get_boolean (value);
      break;
    case PROP_CONSUMER_TIMEOUT:
      p->consumer_timeout = g_value_get_uint (value);
      break;
    case PROP_ALLOWED_USERS:
      g_free (p->allowed_users);
      p->allowed_users = g_value_dup_string (value);
      break;
    case PROP_METAS:
      g_free (p->metas);
      p->metas = g_value_dup_string (value);
      break;
    case PROP_STATS_INTERVAL:
      p->stats_interval = g_value_get_uint (value);
      break;
    case PROP_ALLOWED_GROUPS:
      g_free (p->allowed_groups);
      p->allowed_groups = g_value_dup_string (value);
      break;
    case PROP_IN_PLACE:
      p->in_place = g_value_get_boolean (value);
      break;
    default:
      return FALSE;
  }
  return TRUE;
}

gboolean
gst_cu_ipc_sink_props_get (const GstCuIpcSinkProps * p, guint prop_id,
    GValue * value)
{
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, p->socket_path);
      break;
    case PROP_SOCKET_MODE:
      g_value_set_uint (value, p->socket_mode);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, p->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, p->device_id);
      break;
    case PROP_RING_SIZE:
      g_value_set_uint (value, p->ring_size);
      break;
    case PROP_ORDERING:
      g_value_set_enum (value, p->ordering);
      break;
    case PROP_ON_FULL:
      g_value_set_enum (value, p->on_full);
      break;
    case PROP_FULL_TIMEOUT:
      g_value_set_uint (value, p->full_timeout);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      g_value_set_boolean (value, p->wait_for_connection);
      break;
    case PROP_CONSUMER_TIMEOUT:
      g_value_set_uint (value, p->consumer_timeout);
      break;
    case PROP_ALLOWED_USERS:
      g_value_set_string (value, p->allowed_users);
      break;
    case PROP_ALLOWED_GROUPS:
      g_value_set_string (value, p->allowed_groups);
      break;
    case PROP_METAS:
      g_value_set_string (value, p->metas);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, p->stats_interval);
      break;
    case PROP_IN_PLACE:
      g_value_set_boolean (value, p->in_place);
      break;
    default:
      return FALSE;
  }
  return TRUE;
}

void
gst_cu_ipc_sink_props_install (GObjectClass * gobject_class)
{
  /**
   * GstCuIpcSink:socket-path:
   *
   * Where to listen for consumers: a file system path, or "@name" for a
   * Linux abstract socket. Required. A socket file left by a producer that
   * died is replaced; a live producer on the same path is an error.
   */
  properties[PROP_SOCKET_PATH] = g_param_spec_string ("socket-path",
      "Socket path", "Unix socket to listen on; \"@name\" for an abstract "
      "socket (required)", DEFAULT_SOCKET_PATH,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:socket-mode:
   *
   * Permission bits of the socket file (default 0660: owner and group may
   * connect). Ignored for abstract sockets.
   */
  properties[PROP_SOCKET_MODE] = g_param_spec_uint ("socket-mode",
      "Socket mode", "Permission bits of the socket file (0660 = 432: owner "
      "and group may connect); ignored for abstract sockets", 0, 0777,
      DEFAULT_SOCKET_MODE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:backend:
   *
   * Where the ring lives: "cuda" (CUDA virtual memory on the GPU given by
   * device-id) or "host" (shared host memory, no GPU needed). Consumers
   * must use the same backend.
   */
  properties[PROP_BACKEND] = g_param_spec_enum ("backend", "Backend",
      "Memory the ring lives in: GPU (cuda) or shared host memory (host)",
      GST_TYPE_CU_IPC_BACKEND, DEFAULT_BACKEND,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:device-id:
   *
   * CUDA device ordinal the ring is allocated on (cuda backend only).
   */
  properties[PROP_DEVICE_ID] = g_param_spec_int ("device-id", "Device ID",
      "CUDA device ordinal the ring is allocated on (cuda backend)", 0,
      G_MAXINT, DEFAULT_DEVICE_ID,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:ring-size:
   *
   * Number of slots in the ring: how many frames consumers may hold, all
   * together, before on-full applies.
   */
  properties[PROP_RING_SIZE] = g_param_spec_uint ("ring-size", "Ring size",
      "Number of frame slots shared with the consumers", MIN_RING_SIZE,
      MAX_RING_SIZE, DEFAULT_RING_SIZE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

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
      GST_TYPE_CU_IPC_SINK_ON_FULL, DEFAULT_ON_FULL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:ordering:
   *
   * How consumers know that a frame's copy into its slot, queued on the
   * GPU and maybe still running when the frame is announced, has landed.
   * "auto": the fence page, a small memory file sent with the ring whose
   * word for the slot the producer's CUDA stream sets after the copy and
   * the consumer reads on the CPU; it needs nothing shared but the socket
   * (containers with their own PID, IPC and mount namespaces work), and
   * where the GPU cannot write it every frame is synchronised on the host
   * instead. "fence": the fence page or an error at start. "events":
   * legacy interprocess CUDA events, which open only in consumers that
   * share the producer's IPC and PID namespaces (one that cannot open
   * them reconnects without, losing a frame). "host": the producer
   * synchronises each copy on the host before publishing, as GStreamer's
   * own cudaipcsink does. The host backend needs none of this (its
   * memcpy is done before the frame goes out); "fence" makes it write the
   * fence page anyway.
   */
  properties[PROP_ORDERING] = g_param_spec_enum ("ordering", "Ordering",
      "How consumers know that a frame's copy has landed",
      GST_TYPE_CU_IPC_SINK_ORDERING, DEFAULT_ORDERING,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:full-timeout:
   *
   * With on-full=wait, how long in milliseconds to wait for a free slot
   * before the frame is dropped; 0 waits for as long as it takes.
   */
  properties[PROP_FULL_TIMEOUT] = g_param_spec_uint ("full-timeout",
      "Full timeout", "With on-full=wait, milliseconds to wait for a free "
      "slot before dropping the frame (0 = forever)", 0, G_MAXUINT,
      DEFAULT_FULL_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:wait-for-connection:
   *
   * Hold each frame until at least one consumer is connected and has
   * finished its handshake, instead of publishing it to nobody. Flushing
   * or stopping the pipeline ends the wait.
   */
  properties[PROP_WAIT_FOR_CONNECTION] =
      g_param_spec_boolean ("wait-for-connection", "Wait for connection",
      "Block rendering until at least one consumer is connected",
      DEFAULT_WAIT_FOR_CONNECTION,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:consumer-timeout:
   *
   * When render() finds no free slot, every consumer that holds two frames
   * or more, the oldest for this many milliseconds, is disconnected as stuck
   * (a warning says which) and its slots are free again: a stopped or hung
   * consumer does not stall the others. Holding only its newest frame is
   * never held against a consumer. Keep it below full-timeout so that with
   * on-full=wait no frame is lost to a stuck consumer. 0: never.
   */
  properties[PROP_CONSUMER_TIMEOUT] = g_param_spec_uint ("consumer-timeout",
      "Consumer timeout", "Disconnect consumers that hold older frames for "
      "this many ms while the producer waits for a slot (0 = never)",
      0, G_MAXUINT,
      DEFAULT_CONSUMER_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:allowed-users:
   *
   * Users, besides the producer's own user and root, whose consumers may
   * connect: names or numeric ids separated by commas. The peer's
   * credentials (SO_PEERCRED) are checked before it is sent anything of the
   * stream; a refused consumer gets a clear error and the producer posts a
   * warning. This is the only gate for abstract sockets, which have no file
   * permissions.
   */
  properties[PROP_ALLOWED_USERS] = g_param_spec_string ("allowed-users",
      "Allowed users", "Users whose consumers may connect besides the "
      "producer's own user and root: names or ids, comma separated",
      DEFAULT_ALLOWED_USERS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:allowed-groups:
   *
   * Groups whose consumers may connect: a consumer is allowed when its
   * primary group is listed. The producer's own group is always allowed, to
   * match the default socket-mode 0660.
   */
  properties[PROP_ALLOWED_GROUPS] = g_param_spec_string ("allowed-groups",
      "Allowed groups", "Primary groups whose consumers may connect, besides "
      "the producer's own group: names or ids, comma separated",
      DEFAULT_ALLOWED_GROUPS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:metas:
   *
   * Which GstMetas of each frame travel with it: "all" (the default), every
   * meta this plugin can carry (regions of interest, time codes, crops,
   * reference timestamps; with GStreamer >= 1.24 and gst-analytics, the
   * analytics relation meta with its object detections, classifications
   * and tracking; on >= 1.24 any meta GStreamer can serialize, custom metas
   * among them); "none"; or meta API type names separated by commas, such
   * as "GstVideoRegionOfInterestMetaAPI,GstReferenceTimestampMetaAPI". A
   * frame carries at most 32 KiB of metadata and 1024 metas; metas beyond
   * that are left out, with one warning, and counted in stats
   * (metas-dropped). Read when the sink starts.
   */
  properties[PROP_METAS] = g_param_spec_string ("metas", "Metas",
      "Which metas travel with the frames: all, none, or meta API names "
      "separated by commas", DEFAULT_METAS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:stats-interval:
   *
   * Every this many milliseconds while the sink runs (READY to PAUSED and
   * up), post an element message "cudaipcsink-stats" whose fields are those
   * of #GstCuIpcSink:stats, per-consumer counters included; 0 (the default)
   * posts none. Read when the sink starts.
   */
  properties[PROP_STATS_INTERVAL] = g_param_spec_uint ("stats-interval",
      "Stats interval", "Post a \"cudaipcsink-stats\" element message with "
      "the stats every this many ms (0 = never)", 0, G_MAXUINT,
      DEFAULT_STATS_INTERVAL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:in-place:
   *
   * Propose upstream a pool whose buffers are slots of the ring, so that
   * upstream writes each frame where consumers read it and render()
   * publishes it without a copy: with backend=host a pool of system
   * memory (videotestsrc, videoconvert, a software decoder take it); with
   * backend=cuda on GStreamer >= 1.24, for caps of CUDA memory, a
   * GstCudaBufferPool of GstCudaMemory over the slots in upstream's
   * GstCudaContext (cudaupload, cudaconvert, cudascale, the NVDEC
   * decoders take it). Upstream that does not take the pool, or a frame
   * that comes in other memory, is copied as before (always on GStreamer
   * 1.22 with the cuda backend). A buffer upstream keeps (a queue before
   * the sink) holds its slot meanwhile. Read at each allocation query.
   */
  properties[PROP_IN_PLACE] = g_param_spec_boolean ("in-place", "In place",
      "Offer upstream ring slots to write frames into (host backend; cuda "
      "backend with GStreamer >= 1.24)",
      DEFAULT_IN_PLACE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

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
   * frames-published (guint64), frames-dropped (guint64), clients (guint),
   * generation (guint: the ring's), rings-retired (guint64: rings replaced
   * because a consumer was dropped while it held slots), driver-calls
   * (guint64: CUDA driver calls made by render() since start), host-syncs
   * (guint64: copy-stream synchronisations on the host: every frame with
   * ordering=host or without a fence page, and those published while a
   * consumer that reads neither the fence page nor events is connected),
   * copies-from-gpu and copies-from-host (guint64: memories of upstream's
   * buffers copied into slots from GPU memory, device to device, and from
   * host memory, since start), frames-in-place (guint64: frames upstream
   * wrote into a slot of the in-place pool, published without a copy), and
   * client-stats, an array of "cudaipcsink-client" structures with name
   * (string), pid (int), frames-sent (guint64), frames-released (guint64),
   * held (guint: slots of the current ring it holds now), fence
   * (gboolean: it reads the fence page) and events (gboolean: it waits on
   * the slots' legacy interprocess events).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frames published and dropped, and per-consumer counters",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);
}
