/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudaipcsink
 * @title: cudaipcsink
 * @see_also: cudaipcsrc
 *
 * Shares video frames with other processes. The sink keeps a ring of
 * buffers on one device (CUDA virtual memory, or shared host memory with
 * `backend=host`), exports each buffer once as file descriptors, and tells
 * every cudaipcsrc connected to its Unix socket which buffer holds which
 * frame. A buffer is written again only once every consumer it was
 * published to has released it; `on-full` says what happens meanwhile.
 *
 * Caps, timestamps, buffer flags, plane offsets and strides, and the
 * SEGMENT, TAG, EOS and custom serialized events travel in band.
 *
 * The element posts element messages "cudaipcsink-client-joined" (name,
 * pid) when a consumer finished its handshake and "cudaipcsink-client-left"
 * (name, pid, reason) when it went away.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaupload ! \
 *     cudaipcsink socket-path=/tmp/cam1.sock
 * gst-launch-1.0 cudaipcsrc socket-path=/tmp/cam1.sock ! cudadownload ! \
 *     videoconvert ! autovideosink
 * ]|
 * Without a GPU:
 * |[
 * gst-launch-1.0 videotestsrc ! cudaipcsink socket-path=@cam1 backend=host
 * gst-launch-1.0 cudaipcsrc socket-path=@cam1 ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipc-enums.h"
#include "cuda-loader.h"
#include "device.h"
#include "error.h"
#include "server.h"

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

  /* object lock; set in start(), cleared in stop() */
  CudaIpcServer *server;
  GstStructure *last_stats;     /* the stopped server's counters */

  /* streaming thread, from start() to stop() */
  CudaIpcDevice *dev;
  GstVideoInfo info;
  gboolean have_info;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(memory:CUDAMemory); video/x-raw"));

#define gst_cu_ipc_sink_parent_class parent_class
G_DEFINE_TYPE (GstCuIpcSink, gst_cu_ipc_sink, GST_TYPE_BASE_SINK);
GST_ELEMENT_REGISTER_DEFINE (cudaipcsink, "cudaipcsink", GST_RANK_NONE,
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
    case PROP_NUM_CLIENTS:
      g_value_set_uint (value,
          self->server ? cudaipc_server_get_n_clients (self->server) : 0);
      break;
    case PROP_STATS:
      if (self->server)
        g_value_take_boxed (value, cudaipc_server_get_stats (self->server));
      else if (self->last_stats)
        g_value_set_boxed (value, self->last_stats);
      else
        g_value_take_boxed (value, cudaipc_server_get_stats (NULL));
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

  g_free (self->socket_path);
  if (self->last_stats)
    gst_structure_free (self->last_stats);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* GstBaseSink */

static gboolean
gst_cu_ipc_sink_start (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *path = NULL, *name = NULL;
  CudaIpcServer *server;
  CudaIpcBackend backend;
  gint device_id;
  guint mode, ring_size;

  GST_OBJECT_LOCK (self);
  path = g_strdup (self->socket_path);
  mode = self->socket_mode;
  backend = self->backend;
  device_id = self->device_id;
  ring_size = self->ring_size;
  name = g_strdup (GST_OBJECT_NAME (self));
  GST_OBJECT_UNLOCK (self);

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
    g_clear_pointer (&self->dev, cudaipc_device_unref);
    return FALSE;
  }

  GST_OBJECT_LOCK (self);
  self->server = server;
  g_clear_pointer (&self->last_stats, gst_structure_free);
  GST_OBJECT_UNLOCK (self);
  self->have_info = FALSE;

  GST_INFO_OBJECT (self, "listening on %s", path);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  CudaIpcServer *server;
  GstStructure *stats;

  GST_OBJECT_LOCK (self);
  server = self->server;
  GST_OBJECT_UNLOCK (self);

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


/* Copies every memory of @buf, in order, contiguously to @dst. */
static gboolean
copy_buffer (GstCuIpcSink * self, GstBuffer * buf, guintptr dst,
    guint64 * copied, GError ** error)
{
  gboolean cuda = cudaipc_device_get_backend (self->dev) ==
      CUDAIPC_BACKEND_CUDA;
  const CudaIpcCudaFuncs *cu = cuda ? cudaipc_cuda () : NULL;
  guint n = gst_buffer_n_memory (buf);
  guint64 offset = 0;
  gboolean ok = TRUE;

  if (cuda && !cudaipc_device_push (self->dev, error))
    return FALSE;

  for (guint i = 0; i < n && ok; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    GstMapInfo map;
    CUresult res = CUDA_SUCCESS;

    if (cuda && gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME) &&
        gst_memory_map (mem, &map, GST_MAP_READ | MAP_CUDA)) {
      res = cu->MemcpyDtoD ((CUdeviceptr) (dst + offset),
          (CUdeviceptr) (guintptr) map.data, map.size);
    } else if (gst_memory_map (mem, &map, GST_MAP_READ)) {
      if (cuda)
        res = cu->MemcpyHtoD ((CUdeviceptr) (dst + offset), map.data, map.size);
      else
        memcpy ((guint8 *) dst + offset, map.data, map.size);
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

  if (cuda)
    cudaipc_device_pop (self->dev);
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
  GstFlowReturn ret;
  guint64 size = gst_buffer_get_size (buf), copied = 0;
  gint64 deadline = NO_DEADLINE, until;
  guint slot = 0, n_clients;
  guintptr dst;

  ret = wait_for_consumer (self);
  if (ret != GST_FLOW_OK)
    return ret;

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
  if (!copy_buffer (self, buf, dst, &copied, &error)) {
    cudaipc_server_abort (self->server, slot);
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Cannot copy the frame into the shared ring: %s", error->message),
        ("slot %u, %" G_GSIZE_FORMAT " bytes in %u memories", slot,
            gst_buffer_get_size (buf), gst_buffer_n_memory (buf)));
    return GST_FLOW_ERROR;
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

  n_clients = cudaipc_server_publish (self->server, slot, &f);
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
   * generation (guint: the ring's), and client-stats, an array of
   * "cudaipcsink-client" structures with name (string), pid (int),
   * frames-sent (guint64), frames-released (guint64) and held (guint:
   * slots of the current ring it holds now).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frames published and dropped, and per-consumer counters",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA IPC sink", "Sink/Video",
      "Shares video frames with cudaipcsrc in other processes through a "
      "ring of GPU (or shared host) buffers", "gst-cudaipc authors");

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
  self->wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
}
