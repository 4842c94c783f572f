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
 * the frame is published without waiting for it: each consumer waits on
 * the slot's interprocess CUDA event before it reads the frame, and only
 * for a consumer that cannot does the sink wait for its copy first.
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

#include <grp.h>
#include <pwd.h>
#include <string.h>

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipc-enums.h"
#include "cuda-loader.h"
#include "device.h"
#include "error.h"
#include "gstcuda.h"
#include "server.h"
#include "ticker.h"

GST_DEBUG_CATEGORY_STATIC (gst_cu_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_sink_debug

/* GstCudaMemory's allocator type and map flag (gstcudamemory.h, the same in
 * nvcodec 1.20 and libgstcuda 1.22+); declared here so that building needs
 * neither. */
#define CUDA_MEMORY_TYPE_NAME "gst.cuda.memory"
#define MAP_CUDA (GST_MAP_FLAG_LAST << 1)

/* The GstBufferFlags a consumer may see: no mini-object flags, no
 * TAG_MEMORY (it describes our buffer's memories, not the frame). */
#define PUBLIC_BUFFER_FLAGS \
  ((GST_BUFFER_FLAG_LAST - 1) & ~(GST_MINI_OBJECT_FLAG_LAST - 1) & \
      ~GST_BUFFER_FLAG_TAG_MEMORY)

/* render(): no deadline computed yet (-1 and times are taken) */
#define NO_DEADLINE G_MININT64

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_SOCKET_MODE,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_RING_SIZE,
  PROP_ON_FULL,
  PROP_FULL_TIMEOUT,
  PROP_WAIT_FOR_CONNECTION,
  PROP_CONSUMER_TIMEOUT,
  PROP_ALLOWED_USERS,
  PROP_ALLOWED_GROUPS,
  PROP_STATS_INTERVAL,
  PROP_NUM_CLIENTS,
  PROP_STATS,
  N_PROPERTIES
};

#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_SOCKET_MODE 0660
#define DEFAULT_BACKEND CUDAIPC_BACKEND_CUDA
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_RING_SIZE 4
#define MIN_RING_SIZE 2
#define MAX_RING_SIZE CUDAIPC_MAX_SLOTS
#define DEFAULT_ON_FULL GST_CU_IPC_SINK_ON_FULL_WAIT
#define DEFAULT_FULL_TIMEOUT 1000
#define DEFAULT_WAIT_FOR_CONNECTION FALSE
#define DEFAULT_CONSUMER_TIMEOUT 500
#define DEFAULT_ALLOWED_USERS NULL
#define DEFAULT_ALLOWED_GROUPS NULL
#define DEFAULT_STATS_INTERVAL 0

static GParamSpec *properties[N_PROPERTIES];

struct _GstCuIpcSink
{
  GstBaseSink parent;

  /* properties, object lock */
  gchar *socket_path;
  guint socket_mode;
  CudaIpcBackend backend;
  gint device_id;
  guint ring_size;
  GstCuIpcSinkOnFull on_full;
  guint full_timeout;
  gboolean wait_for_connection;
  guint consumer_timeout;
  gchar *allowed_users;
  gchar *allowed_groups;
  guint stats_interval;

  /* object lock; set in start(), cleared in stop() */
  CudaIpcServer *server;
  GstStructure *last_stats;     /* the stopped server's counters */

  /* streaming thread, from start() to stop() */
  CudaIpcDevice *dev;
  GstVideoInfo info;
  gboolean have_info;

  /* cuda backend, streaming thread, from start() to stop() (design.md,
   * GPU ordering) */
  CUstream stream;              /* the copies', in the device's context */
  gboolean context_checked;     /* the first frame's memory was looked at */
  GObject *upstream_context;    /* GstCudaContext whose context we use */
  GQueue pending;               /* Pending*, oldest first: upstream buffers
                                 * whose copy may still be in flight */
  guint max_pending;            /* ring-size: more, and render() waits */
  guint64 slot_size;            /* bytes of the last slot acquired */
  const gchar *logged_why;      /* the last fallback reason logged */

  /* object lock: render()'s counters since start() */
  guint64 driver_calls;
  guint64 host_syncs;
  guint64 copies_from_gpu;      /* memories copied from GPU memory */
  guint64 copies_from_host;     /* and from host memory */

  /* posts the counters every stats-interval; start() to stop() */
  CudaIpcTicker *ticker;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(memory:CUDAMemory); video/x-raw"));

#define gst_cu_ipc_sink_parent_class parent_class
G_DEFINE_TYPE (GstCuIpcSink, gst_cu_ipc_sink, GST_TYPE_BASE_SINK);
/* cuipcsink: a name of ours alone (docs/elements.md, Names) */
GST_ELEMENT_REGISTER_DEFINE (cudaipcsink, "cudaipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);
GST_ELEMENT_REGISTER_DEFINE (cuipcsink, "cuipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);

GType
gst_cu_ipc_sink_on_full_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SINK_ON_FULL_WAIT,
        "Wait for a free slot, at most full-timeout", "wait"},
    {GST_CU_IPC_SINK_ON_FULL_DROP, "Drop the frame at once", "drop"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSinkOnFull", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NUM_CLIENTS]);
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

/* The counters (the stats property), with the object lock held. */
static GstStructure *
get_stats_locked (GstCuIpcSink * self)
{
  GstStructure *st;

  if (self->server)
    st = cudaipc_server_get_stats (self->server);
  else if (self->last_stats)
    st = gst_structure_copy (self->last_stats);
  else
    st = cudaipc_server_get_stats (NULL);
  gst_structure_set (st, "driver-calls", G_TYPE_UINT64,
      self->driver_calls, "host-syncs", G_TYPE_UINT64, self->host_syncs,
      "copies-from-gpu", G_TYPE_UINT64, self->copies_from_gpu,
      "copies-from-host", G_TYPE_UINT64, self->copies_from_host, NULL);
  return st;
}

/* The ticker's thread, every stats-interval from start() to stop(). */
static void
post_stats (gpointer user_data)
{
  GstCuIpcSink *self = user_data;
  GstStructure *st;

  GST_OBJECT_LOCK (self);
  st = get_stats_locked (self);
  GST_OBJECT_UNLOCK (self);
  gst_structure_set_name (st, "cudaipcsink-stats");
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), st));
}

/* GObject */

static void
gst_cu_ipc_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (self->socket_path);
      self->socket_path = g_value_dup_string (value);
      break;
    case PROP_SOCKET_MODE:
      self->socket_mode = g_value_get_uint (value);
      break;
    case PROP_BACKEND:
      self->backend = g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_RING_SIZE:
      self->ring_size = g_value_get_uint (value);
      break;
    case PROP_ON_FULL:
      self->on_full = g_value_get_enum (value);
      break;
    case PROP_FULL_TIMEOUT:
      self->full_timeout = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      self->wait_for_connection = g_value_get_boolean (value);
      break;
    case PROP_CONSUMER_TIMEOUT:
      self->consumer_timeout = g_value_get_uint (value);
      if (self->server)
        cudaipc_server_set_client_timeout (self->server,
            self->consumer_timeout);
      break;
    case PROP_ALLOWED_USERS:
      g_free (self->allowed_users);
      self->allowed_users = g_value_dup_string (value);
      break;
    case PROP_STATS_INTERVAL:
      self->stats_interval = g_value_get_uint (value);
      break;
    case PROP_ALLOWED_GROUPS:
      g_free (self->allowed_groups);
      self->allowed_groups = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  /* a render() waiting for a slot or a consumer re-reads the setting */
  if (self->server && (prop_id == PROP_WAIT_FOR_CONNECTION ||
          prop_id == PROP_ON_FULL || prop_id == PROP_FULL_TIMEOUT))
    cudaipc_server_wake (self->server);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, self->socket_path);
      break;
    case PROP_SOCKET_MODE:
      g_value_set_uint (value, self->socket_mode);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_RING_SIZE:
      g_value_set_uint (value, self->ring_size);
      break;
    case PROP_ON_FULL:
      g_value_set_enum (value, self->on_full);
      break;
    case PROP_FULL_TIMEOUT:
      g_value_set_uint (value, self->full_timeout);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      g_value_set_boolean (value, self->wait_for_connection);
      break;
    case PROP_CONSUMER_TIMEOUT:
      g_value_set_uint (value, self->consumer_timeout);
      break;
    case PROP_ALLOWED_USERS:
      g_value_set_string (value, self->allowed_users);
      break;
    case PROP_ALLOWED_GROUPS:
      g_value_set_string (value, self->allowed_groups);
      break;
    case PROP_NUM_CLIENTS:
      g_value_set_uint (value,
          self->server ? cudaipc_server_get_n_clients (self->server) : 0);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, self->stats_interval);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, get_stats_locked (self));
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

  g_free (self->allowed_users);
  g_free (self->allowed_groups);
  g_free (self->socket_path);
  if (self->last_stats)
    gst_structure_free (self->last_stats);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* Parses a list of user (or group) names and numeric ids separated by
 * commas or spaces into @out. The producer's own group is always in the
 * group list. */
static gboolean
parse_ids (const gchar * list, gboolean groups, GArray ** out,
    GError ** error)
{
  g_auto (GStrv) items = g_strsplit_set (list ? list : "", ", ", -1);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));

  if (groups) {
    guint own = getegid ();
    g_array_append_val (ids, own);
  }
  for (guint i = 0; items[i]; i++) {
    const gchar *item = items[i];
    guint64 v;
    guint id;

    if (item[0] == '\0')
      continue;
    if (g_ascii_string_to_unsigned (item, 10, 0, G_MAXUINT32 - 1, &v, NULL)) {
      id = (guint) v;
    } else if (groups) {
      struct group *gr = getgrnam (item);
      if (gr == NULL) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "allowed-groups: no group named \"%s\"", item);
        g_array_unref (ids);
        return FALSE;
      }
      id = gr->gr_gid;
    } else {
      struct passwd *pw = getpwnam (item);
      if (pw == NULL) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "allowed-users: no user named \"%s\"", item);
        g_array_unref (ids);
        return FALSE;
      }
      id = pw->pw_uid;
    }
    g_array_append_val (ids, id);
  }
  *out = ids;
  return TRUE;
}

/* The copy stream (cuda backend; design.md, GPU ordering) */

/* An upstream buffer kept until its copy into a slot is known complete:
 * @fence (the slot's, alive until the server stops) was recorded after it. */
typedef struct
{
  GstBuffer *buf;
  CudaIpcFence *fence;
} Pending;

/* What render() did on the GPU, for the counters. */
typedef struct
{
  GstCuIpcSink *self;
  guint calls;                  /* CUDA driver calls */
  guint syncs;                  /* fallback stream synchronisations */
  guint from_gpu;               /* memories copied device to device */
  guint from_host;              /* memories copied from host memory */
} RenderCounts;

static void
pending_free (gpointer data)
{
  Pending *p = data;

  gst_buffer_unref (p->buf);
  g_free (p);
}

static void
drop_pending (GstCuIpcSink * self)
{
  g_queue_clear_full (&self->pending, pending_free);
}

/* Adds one render()'s counts to the element's (the host backend's
 * have no driver calls, only copies). */
static void
count_driver_calls (GstCuIpcSink * self, const RenderCounts * rc)
{
  GST_OBJECT_LOCK (self);
  self->driver_calls += rc->calls;
  self->host_syncs += rc->syncs;
  self->copies_from_gpu += rc->from_gpu;
  self->copies_from_host += rc->from_host;
  GST_OBJECT_UNLOCK (self);
}

/* With the device's context current: waits until every copy queued is
 * done, then lets go of every pending buffer. */
static gboolean
sync_stream (GstCuIpcSink * self, guint * calls, GError ** error)
{
  CUresult res;

  (*calls)++;
  res = cudaipc_cuda ()->StreamSynchronize (self->stream);
  if (res != CUDA_SUCCESS) {
    gchar *text = cudaipc_cuda_error (res);

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "cuStreamSynchronize failed: %s", text);
    g_free (text);
    return FALSE;
  }
  drop_pending (self);
  return TRUE;
}

/* With the device's context current: drops the buffers whose copy is
 * done (the stream runs in order: the oldest first) and, while @limit or
 * more are pending, waits for the oldest. */
static void
reap_pending (GstCuIpcSink * self, guint limit, guint * calls)
{
  g_autoptr (GError) error = NULL;
  Pending *p;

  while ((p = g_queue_peek_head (&self->pending)) != NULL) {
    gboolean done = FALSE, ok;

    (*calls)++;
    ok = cudaipc_fence_query (p->fence, &done, &error);
    if (ok && !done) {
      if (g_queue_get_length (&self->pending) < limit)
        return;
      GST_LOG_OBJECT (self, "%u copies in flight: waiting for the oldest",
          g_queue_get_length (&self->pending));
      (*calls)++;
      ok = cudaipc_fence_wait (p->fence, &error);
    }
    if (!ok) {
      /* the fence tells nothing: wait for the whole stream instead */
      GST_WARNING_OBJECT (self, "%s", error->message);
      g_clear_error (&error);
      if (!sync_stream (self, calls, &error)) {
        GST_WARNING_OBJECT (self, "%s", error->message);
        drop_pending (self);
      }
      return;
    }
    pending_free (g_queue_pop_head (&self->pending));
  }
}

/* publish_fenced()'s fallback: the frame is complete before any FRAME
 * goes out. */
static gboolean
sync_before_publish (const gchar * why, gpointer user_data, GError ** error)
{
  RenderCounts *rc = user_data;
  GstCuIpcSink *self = rc->self;

  if (self->logged_why != why) {
    GST_INFO_OBJECT (self, "%s: synchronising the copy stream on the host "
        "before publishing", why);
    self->logged_why = why;
  }
  rc->syncs++;
  return sync_stream (self, &rc->calls, error);
}

/* cuda backend: a non-blocking stream in the device's context. */
static gboolean
open_stream (GstCuIpcSink * self, guint ring_size)
{
  g_autoptr (GError) error = NULL;
  CUresult res;

  self->max_pending = ring_size;
  self->slot_size = 0;
  self->logged_why = NULL;
  if (cudaipc_device_get_backend (self->dev) != CUDAIPC_BACKEND_CUDA)
    return TRUE;

  if (!cudaipc_device_push (self->dev, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("%s", error->message), ("making the device's context current"));
    return FALSE;
  }
  res = cudaipc_cuda ()->StreamCreate (&self->stream, CU_STREAM_NON_BLOCKING);
  cudaipc_device_pop (self->dev);
  if (res != CUDA_SUCCESS) {
    g_autofree gchar *text = cudaipc_cuda_error (res);

    self->stream = NULL;
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("Cannot create a CUDA stream for the copies: %s", text),
        ("cuStreamCreate (CU_STREAM_NON_BLOCKING) on %s",
            cudaipc_device_get_name (self->dev)));
    return FALSE;
  }
  return TRUE;
}

/* Waits for the copies in flight, lets go of their buffers and destroys
 * the stream; before the server (and its fences and slots) goes. */
static void
release_stream (GstCuIpcSink * self)
{
  g_autoptr (GError) error = NULL;
  guint calls = 0;

  if (self->stream == NULL) {
    drop_pending (self);
    return;
  }
  if (cudaipc_device_push (self->dev, &error)) {
    if (!sync_stream (self, &calls, &error))
      GST_WARNING_OBJECT (self, "%s", error->message);
    cudaipc_cuda ()->StreamDestroy (self->stream);
    cudaipc_device_pop (self->dev);
  } else {
    GST_WARNING_OBJECT (self, "cannot destroy the copy stream: %s",
        error->message);
  }
  self->stream = NULL;
  drop_pending (self);
}

/* With the first frame: when it is nvcodec's CUDA memory of our device,
 * make the copies run in the context it was allocated in (see
 * cudaipc_device_use_context()); only before the first ring exists. */
static void
adopt_upstream_context (GstCuIpcSink * self, GstBuffer * buf)
{
  GObject *uctx;
  CUcontext ctx;

  self->context_checked = TRUE;
  if (self->stream == NULL ||
      cudaipc_server_get_generation (self->server) != 0)
    return;
  uctx = cudaipc_gstcuda_memory_context (gst_buffer_peek_memory (buf, 0));
  if (uctx == NULL || cudaipc_gstcuda_context_device (uctx) !=
      cudaipc_device_get_ordinal (self->dev))
    return;
  /* nvcodec loaded libgstcuda into this process with the memory */
  ctx = cudaipc_gstcuda_context_handle (uctx);
  if (ctx == NULL)
    return;

  release_stream (self);
  self->upstream_context = g_object_ref (uctx);
  cudaipc_device_use_context (self->dev, ctx);
  if (open_stream (self, self->max_pending))
    GST_INFO_OBJECT (self, "copies run in the CUDA context of upstream's "
        "memory (%s)", GST_OBJECT_NAME (uctx));
}

/* GstBaseSink */

static gboolean
gst_cu_ipc_sink_start (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *path = NULL, *name = NULL;
  g_autofree gchar *users = NULL, *groups = NULL;
  g_autoptr (GArray) uids = NULL;
  g_autoptr (GArray) gids = NULL;
  CudaIpcServer *server;
  CudaIpcBackend backend;
  gint device_id;
  guint mode, ring_size, stats_interval;

  GST_OBJECT_LOCK (self);
  path = g_strdup (self->socket_path);
  mode = self->socket_mode;
  backend = self->backend;
  device_id = self->device_id;
  ring_size = self->ring_size;
  name = g_strdup (GST_OBJECT_NAME (self));
  users = g_strdup (self->allowed_users);
  groups = g_strdup (self->allowed_groups);
  GST_OBJECT_UNLOCK (self);

  if (!parse_ids (users, FALSE, &uids, &error) ||
      !parse_ids (groups, TRUE, &gids, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", error->message),
        ("allowed-users \"%s\", allowed-groups \"%s\"", users ? users : "",
            groups ? groups : ""));
    return FALSE;
  }

  if (path == NULL || path[0] == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("No socket-path set"), ("cudaipcsink needs socket-path to listen"));
    return FALSE;
  }

  self->dev = cudaipc_device_new (backend, device_id, &error);
  if (self->dev == NULL) {
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
    return FALSE;
  }
  GST_INFO_OBJECT (self, "opened %s backend on %s",
      cudaipc_backend_name (backend), cudaipc_device_get_name (self->dev));
  if (!open_stream (self, ring_size)) {
    g_clear_pointer (&self->dev, cudaipc_device_unref);
    return FALSE;
  }

  server = cudaipc_server_new (self->dev, path, mode, ring_size, name,
      &server_callbacks, self, &error);
  if (server == NULL) {
    if (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_BUSY)) {
      GST_ELEMENT_ERROR (self, RESOURCE, BUSY, ("%s", error->message),
          ("socket-path %s", path));
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
          ("%s", error->message), ("socket-path %s", path));
    }
    release_stream (self);
    g_clear_pointer (&self->dev, cudaipc_device_unref);
    return FALSE;
  }

  cudaipc_server_set_peers (server, (const guint *) uids->data, uids->len,
      (const guint *) gids->data, gids->len);
  GST_OBJECT_LOCK (self);
  cudaipc_server_set_client_timeout (server, self->consumer_timeout);
  GST_OBJECT_UNLOCK (self);

  GST_OBJECT_LOCK (self);
  self->server = server;
  g_clear_pointer (&self->last_stats, gst_structure_free);
  self->driver_calls = 0;
  self->host_syncs = 0;
  self->copies_from_gpu = 0;
  self->copies_from_host = 0;
  stats_interval = self->stats_interval;
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
  GstStructure *stats;

  /* joined here: no tick runs from now on */
  g_clear_pointer (&self->ticker, cudaipc_ticker_free);

  GST_OBJECT_LOCK (self);
  server = self->server;
  GST_OBJECT_UNLOCK (self);

  /* no copy may be in flight when the server frees the slots and fences */
  release_stream (self);
  self->context_checked = FALSE;

  if (server) {
    /* its callbacks may run meanwhile: no lock of ours is held */
    cudaipc_server_stop (server);
    stats = cudaipc_server_get_stats (server);

    GST_OBJECT_LOCK (self);
    self->server = NULL;
    if (self->last_stats)
      gst_structure_free (self->last_stats);
    self->last_stats = stats;
    GST_OBJECT_UNLOCK (self);
    cudaipc_server_free (server);
  }

  g_clear_pointer (&self->dev, cudaipc_device_unref);
  /* the device (and whatever used its context) is gone: let go of it */
  g_clear_object (&self->upstream_context);
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

static gboolean
gst_cu_ipc_sink_propose_allocation (GstBaseSink * bsink, GstQuery * query)
{
  /* we copy each memory as it is and pass the plane layout on */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}


/* Copies every memory of @buf, in order, contiguously to @dst: memcpy for
 * the host backend; for the cuda backend, queued on the copy stream (the
 * device's context current), where the copies may still be in flight when
 * it returns. Counts the driver calls and the copies by source in @rc. */
static gboolean
copy_buffer (GstCuIpcSink * self, GstBuffer * buf, guintptr dst,
    guint64 * copied, RenderCounts * rc, GError ** error)
{
  const CudaIpcCudaFuncs *cu = self->stream ? cudaipc_cuda () : NULL;
  guint n = gst_buffer_n_memory (buf);
  guint64 offset = 0;
  gboolean ok = TRUE;

  for (guint i = 0; i < n && ok; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    GstMapInfo map;
    CUresult res = CUDA_SUCCESS;

    /* mapped for the call only: the buffer, kept until the copy is done,
     * keeps the memory */
    if (cu && gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME) &&
        gst_memory_map (mem, &map, GST_MAP_READ | MAP_CUDA)) {
      rc->calls++;
      rc->from_gpu++;
      res = cu->MemcpyDtoDAsync ((CUdeviceptr) (dst + offset),
          (CUdeviceptr) (guintptr) map.data, map.size, self->stream);
    } else if (gst_memory_map (mem, &map, GST_MAP_READ)) {
      rc->from_host++;
      if (cu) {
        rc->calls++;
        res = cu->MemcpyHtoDAsync ((CUdeviceptr) (dst + offset), map.data,
            map.size, self->stream);
      } else {
        memcpy ((guint8 *) dst + offset, map.data, map.size);
      }
    } else {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "cannot map memory %u of the buffer for reading", i);
      ok = FALSE;
      break;
    }

    if (res != CUDA_SUCCESS) {
      gchar *text = cudaipc_cuda_error (res);

      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
          "copying %" G_GSIZE_FORMAT " bytes into the slot failed: %s",
          map.size, text);
      g_free (text);
      ok = FALSE;
    }
    offset += map.size;
    gst_memory_unmap (mem, &map);
  }

  if (ok)
    *copied = offset;
  return ok;
}

/* The PTS as a CLOCK_MONOTONIC time (docs/design.md, Timestamps). */
static guint64
frame_clock_time (GstCuIpcSink * self, GstBuffer * buf)
{
  GstBaseSink *bsink = GST_BASE_SINK (self);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstClockTime rt = GST_CLOCK_TIME_NONE, base, now;
  GstClock *clock;
  gint64 mono, result;

  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return GST_CLOCK_TIME_NONE;

  GST_OBJECT_LOCK (self);
  if (bsink->segment.format == GST_FORMAT_TIME)
    rt = gst_segment_to_running_time (&bsink->segment, GST_FORMAT_TIME, pts);
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  base = GST_ELEMENT_CAST (self)->base_time;
  GST_OBJECT_UNLOCK (self);

  if (clock == NULL)
    return GST_CLOCK_TIME_NONE;
  if (!GST_CLOCK_TIME_IS_VALID (rt)) {
    gst_object_unref (clock);
    return GST_CLOCK_TIME_NONE;
  }

  now = gst_clock_get_time (clock);
  mono = g_get_monotonic_time () * 1000;
  gst_object_unref (clock);

  result = (gint64) (rt + base) + (mono - (gint64) now);
  return result >= 0 ? (guint64) result : GST_CLOCK_TIME_NONE;
}

static void
fill_planes (GstCuIpcSink * self, GstBuffer * buf, CudaIpcFrameMsg * f)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);

  f->n_planes = 0;
  if (meta) {
    f->n_planes = MIN (meta->n_planes, CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = meta->offset[i];
      f->planes[i].stride = (guint32) meta->stride[i];
    }
  } else if (self->have_info) {
    f->n_planes = MIN (GST_VIDEO_INFO_N_PLANES (&self->info),
        CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = GST_VIDEO_INFO_PLANE_OFFSET (&self->info, i);
      f->planes[i].stride = GST_VIDEO_INFO_PLANE_STRIDE (&self->info, i);
    }
  }
}

/* With wait-for-connection, waits until a consumer is ready. */
static GstFlowReturn
wait_for_consumer (GstCuIpcSink * self)
{
  GstFlowReturn ret;

  for (;;) {
    gboolean wait_conn;

    GST_OBJECT_LOCK (self);
    wait_conn = self->wait_for_connection;
    GST_OBJECT_UNLOCK (self);
    if (!wait_conn)
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

static GstFlowReturn
gst_cu_ipc_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  CudaIpcServerStatus status;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcBlock *block = NULL;
  CudaIpcFence *fence = NULL;
  RenderCounts rc = { self, 0, 0 };
  GstFlowReturn ret;
  guint64 size = gst_buffer_get_size (buf), copied = 0;
  gint64 deadline = NO_DEADLINE, until;
  guint slot = 0, n_clients = 0;
  gboolean ok = TRUE, pushed = FALSE;
  guintptr dst;

  ret = wait_for_consumer (self);
  if (ret != GST_FLOW_OK)
    return ret;

  if (!self->context_checked)
    adopt_upstream_context (self, buf);

  /* a frame that does not fit makes the server rebuild the ring and free
   * the old slots: no copy may still be in flight into them */
  if (self->stream && size > self->slot_size &&
      !g_queue_is_empty (&self->pending)) {
    ok = cudaipc_device_push (self->dev, &error);
    if (ok) {
      rc.calls++;
      ok = sync_stream (self, &rc.calls, &error);
      cudaipc_device_pop (self->dev);
      rc.calls++;
    }
    count_driver_calls (self, &rc);
    rc.calls = 0;
    if (!ok) {
      GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
          ("Cannot finish the copies into the shared ring: %s",
              error->message), ("before a ring for %" G_GUINT64_FORMAT
              "-byte frames", size));
      return GST_FLOW_ERROR;
    }
  }

  do {
    GstCuIpcSinkOnFull on_full;
    guint full_timeout;

    GST_OBJECT_LOCK (self);
    on_full = self->on_full;
    full_timeout = self->full_timeout;
    GST_OBJECT_UNLOCK (self);

    if (on_full == GST_CU_IPC_SINK_ON_FULL_DROP) {
      until = 0;
    } else {
      if (deadline == NO_DEADLINE)
        deadline = full_timeout == 0 ? -1 : g_get_monotonic_time () +
            G_TIME_SPAN_MILLISECOND * (gint64) full_timeout;
      until = deadline;
    }

    status = cudaipc_server_acquire (self->server, size, until, &slot, &block,
        &error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
      case CUDAIPC_SERVER_WOKEN:
        /* woken: a setting changed, read it again */
        break;
      case CUDAIPC_SERVER_TIMEOUT:
        GST_DEBUG_OBJECT (self, "every slot is held: dropped buffer %"
            GST_PTR_FORMAT, buf);
        return GST_FLOW_OK;
      case CUDAIPC_SERVER_FLUSHING:
        ret = gst_base_sink_wait_preroll (bsink);
        if (ret != GST_FLOW_OK)
          return ret;
        /* paused meanwhile: the time limit starts again */
        deadline = NO_DEADLINE;
        break;
      case CUDAIPC_SERVER_ERROR:{
        guint ring_size;

        GST_OBJECT_LOCK (self);
        ring_size = self->ring_size;
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

  /* the slot is ours until published: nobody else touches it, and only
   * this thread makes the server replace the ring */
  dst = cudaipc_block_get_ptr (block);
  self->slot_size = cudaipc_block_get_size (block);
  if (self->stream) {
    ok = pushed = cudaipc_device_push (self->dev, &error);
    if (ok) {
      rc.calls++;
      /* buffers whose copy is done go; with ring-size of them in flight,
       * wait for the oldest */
      reap_pending (self, self->max_pending, &rc.calls);
      fence = cudaipc_server_get_fence (self->server, slot);
    }
  }
  if (ok)
    ok = copy_buffer (self, buf, dst, &copied, &rc, &error);
  /* GPU ordering: the slot's event completes once the copy has landed */
  if (ok && fence) {
    rc.calls++;
    ok = cudaipc_fence_record (fence, self->stream, &error);
  }
  if (!ok) {
    if (pushed) {
      g_autoptr (GError) sync_error = NULL;

      /* nothing may still read @buf or write the slot once it is aborted */
      if (!sync_stream (self, &rc.calls, &sync_error))
        GST_WARNING_OBJECT (self, "%s", sync_error->message);
    }
    goto copy_failed;
  }

  f.flags = GST_BUFFER_FLAGS (buf) & PUBLIC_BUFFER_FLAGS;
  f.pts = GST_BUFFER_PTS (buf);
  f.dts = GST_BUFFER_DTS (buf);
  f.duration = GST_BUFFER_DURATION (buf);
  f.offset = GST_BUFFER_OFFSET (buf);
  f.offset_end = GST_BUFFER_OFFSET_END (buf);
  f.size = copied;
  f.clock_time = frame_clock_time (self, buf);
  fill_planes (self, buf, &f);

  if (self->stream) {
    /* published at once: each consumer waits on the slot's event; only
     * where that cannot order the frame does the server call
     * sync_before_publish() first */
    ok = cudaipc_server_publish_fenced (self->server, slot, &f,
        sync_before_publish, &rc, &n_clients, &error);
    if (ok && rc.syncs == 0) {
      Pending *p = g_new0 (Pending, 1);

      /* the copy may still read it */
      p->buf = gst_buffer_ref (buf);
      p->fence = fence;
      g_queue_push_tail (&self->pending, p);
    }
    cudaipc_device_pop (self->dev);
    rc.calls++;
    count_driver_calls (self, &rc);
    if (!ok) {
      GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
          ("Cannot finish the copy into the shared ring: %s",
              error->message), ("slot %u, %" G_GUINT64_FORMAT " bytes", slot,
              copied));
      return GST_FLOW_ERROR;
    }
  } else {
    n_clients = cudaipc_server_publish (self->server, slot, &f);
    count_driver_calls (self, &rc);
  }
  GST_LOG_OBJECT (self, "published frame %" G_GUINT64_FORMAT " in slot %u "
      "to %u client(s)", f.seq, slot, n_clients);
  return GST_FLOW_OK;

copy_failed:
  cudaipc_server_abort (self->server, slot);
  if (pushed) {
    cudaipc_device_pop (self->dev);
    rc.calls++;
  }
  count_driver_calls (self, &rc);
  GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
      ("Cannot copy the frame into the shared ring: %s", error->message),
      ("slot %u, %" G_GSIZE_FORMAT " bytes in %u memories", slot,
          gst_buffer_get_size (buf), gst_buffer_n_memory (buf)));
  return GST_FLOW_ERROR;
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
   * generation (guint: the ring's), driver-calls (guint64: CUDA driver
   * calls made by render() since start), host-syncs (guint64: copy-stream
   * synchronisations on the host, the fallback for a consumer that does
   * not wait on interprocess events or a slot without one),
   * copies-from-gpu and copies-from-host (guint64: memories of upstream's
   * buffers copied into slots from GPU memory, device to device, and from
   * host memory, since start), and
   * client-stats, an array of "cudaipcsink-client" structures with name
   * (string), pid (int), frames-sent (guint64), frames-released (guint64),
   * held (guint: slots of the current ring it holds now) and events
   * (gboolean: it waits on the slots' interprocess events).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frames published and dropped, and per-consumer counters",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

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
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_event);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock);
  basesink_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SINK_ON_FULL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_BACKEND, 0);

  GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_sink_debug, "cudaipcsink", 0,
      "CUDA IPC sink");
}

static void
gst_cu_ipc_sink_init (GstCuIpcSink * self)
{
  self->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  self->socket_mode = DEFAULT_SOCKET_MODE;
  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_DEVICE_ID;
  self->ring_size = DEFAULT_RING_SIZE;
  self->on_full = DEFAULT_ON_FULL;
  self->full_timeout = DEFAULT_FULL_TIMEOUT;
  self->consumer_timeout = DEFAULT_CONSUMER_TIMEOUT;
  self->wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
  self->stats_interval = DEFAULT_STATS_INTERVAL;
}
