/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frame-pointer: an application reading frames from a cuipcsink in
 * another process with `cuipcsrc socket-path=SOCKET ! appsink`.
 *
 *   frame-pointer SOCKET [--frames N] [--device-id D]
 *
 * prints one line per frame (offset, PTS, device or host pointer, plane
 * pitches and offsets, a 64-bit FNV-1a hash of the visible bytes) and
 * exits 0 once N frames (default 10) were read, 1 on any error.
 *
 * What cuipcsrc hands an application:
 *  - Caps `video/x-raw(memory:CUDAMemory)` when the producer's ring is on
 *    the GPU (backend=cuda), `video/x-raw` with backend=host.
 *  - Device pointer: map the buffer with GST_MAP_READ | GST_MAP_CUDA;
 *    map.data is the CUdeviceptr of the frame's first byte on GPU
 *    `device-id`, for use in that device's primary context. A plain
 *    GST_MAP_READ gives host pixels (with backend=cuda: a copy, slow).
 *  - Planes: plane p starts offset[p] bytes after the first byte, rows
 *    stride[p] bytes apart, both from the buffer's GstVideoMeta: the
 *    producer's layout, not necessarily the caps' default one (that of
 *    the caps' GstVideoInfo is for a buffer without a meta).
 *  - Ready: cuipcsrc waits for the producer's copy into the slot (its
 *    fence) before it pushes a frame, so the frame is complete when the
 *    sample arrives; any stream may read it at once.
 *  - Copies: while this program holds copy-threshold frames (half the
 *    producer's ring by default: those appsink queues and the one being
 *    read), the next frames come as copies in a CUDA buffer pool of the
 *    source's own, with that pool's strides, and their slots go back to
 *    the producer at once.
 *  - Read-only: the slot is shared with every other consumer (write maps
 *    fail).
 *  - Release: the slot goes back to the producer when the buffer's last
 *    reference goes (gst_sample_unref here). Use the pointer only while
 *    you hold the sample; a consumer that holds every slot makes the
 *    producer wait or drop frames (its on-full property).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

/* nvcodec's flag (gst/cuda/gstcudamemory.h), for builds without its headers */
#ifndef GST_MAP_CUDA
#define GST_MAP_CUDA ((GstMapFlags) (GST_MAP_FLAG_LAST << 1))
#endif

/* The few CUDA driver calls used, loaded from libcuda.so.1 at run time:
 * building needs no CUDA toolkit. Types as in cuda.h. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

static struct
{
  CUresult (*Init) (unsigned int flags);
  CUresult (*DeviceGet) (CUdevice * dev, int ordinal);
  CUresult (*DevicePrimaryCtxRetain) (CUcontext * ctx, CUdevice dev);
  CUresult (*DevicePrimaryCtxRelease) (CUdevice dev);
  CUresult (*CtxPushCurrent) (CUcontext ctx);
  CUresult (*CtxPopCurrent) (CUcontext * ctx);
  CUresult (*MemcpyDtoH) (void *dst, CUdeviceptr src, size_t size);
  CUresult (*GetErrorName) (CUresult res, const char **name);
  CUdevice dev;
  CUcontext ctx;                /* the device's primary context, retained */
} cu;

static gboolean
cu_ok (CUresult res, const char *call)
{
  const char *name = "?";

  if (res == 0)
    return TRUE;
  cu.GetErrorName (res, &name);
  g_printerr ("%s failed: %s (%d)\n", call, name, res);
  return FALSE;
}

/* Loads the driver (once) and retains the primary context of @device_id. */
static gboolean
cuda_open (gint device_id)
{
  void *lib;

  if (cu.ctx)
    return TRUE;
  lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    g_printerr ("the frames are in GPU memory, but the CUDA driver does not "
        "load: %s\n", dlerror ());
    return FALSE;
  }
#define LOAD(field, name) \
  if (!(*(void **) &cu.field = dlsym (lib, name))) { \
    g_printerr ("libcuda.so.1 has no %s: the driver is too old\n", name); \
    return FALSE; \
  }
  LOAD (Init, "cuInit");
  LOAD (DeviceGet, "cuDeviceGet");
  LOAD (DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD (DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  LOAD (CtxPushCurrent, "cuCtxPushCurrent_v2");
  LOAD (CtxPopCurrent, "cuCtxPopCurrent_v2");
  LOAD (MemcpyDtoH, "cuMemcpyDtoH_v2");
  LOAD (GetErrorName, "cuGetErrorName");
#undef LOAD
  return cu_ok (cu.Init (0), "cuInit") &&
      cu_ok (cu.DeviceGet (&cu.dev, device_id), "cuDeviceGet") &&
      cu_ok (cu.DevicePrimaryCtxRetain (&cu.ctx, cu.dev),
      "cuDevicePrimaryCtxRetain");
}

/* Copies @size bytes at @src to @dst, in the device's primary context. */
static gboolean
cuda_read (guint8 * dst, CUdeviceptr src, gsize size)
{
  CUcontext popped;
  gboolean ok;

  if (!cu_ok (cu.CtxPushCurrent (cu.ctx), "cuCtxPushCurrent"))
    return FALSE;
  ok = cu_ok (cu.MemcpyDtoH (dst, src, size), "cuMemcpyDtoH");
  cu.CtxPopCurrent (&popped);
  return ok;
}

static guint64
fnv1a (guint64 hash, const guint8 * data, gsize len)
{
  for (gsize i = 0; i < len; i++)
    hash = (hash ^ data[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  return hash;
}

/* Prints the line of one frame; FALSE (said why) when it cannot be read. */
static gboolean
handle_sample (GstSample * sample, gint device_id)
{
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstCaps *caps = gst_sample_get_caps (sample);
  g_autoptr (GString) pitches = g_string_new (NULL);
  g_autoptr (GString) offsets = g_string_new (NULL);
  guint64 hash = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  GstVideoInfo info;
  GstVideoMeta *meta;
  GstMapInfo map;
  gboolean on_gpu, ok = TRUE;
  guint n_planes;

  if (!buf || !caps || !gst_video_info_from_caps (&info, caps)) {
    g_printerr ("a sample without a buffer or video caps\n");
    return FALSE;
  }
  on_gpu = gst_caps_features_contains (gst_caps_get_features (caps, 0),
      "memory:CUDAMemory");
  if (on_gpu && !cuda_open (device_id))
    return FALSE;
  /* a cuipcsrc buffer has one memory: this maps the slot, copying nothing */
  if (!gst_buffer_map (buf, &map, on_gpu ? GST_MAP_READ | GST_MAP_CUDA :
          GST_MAP_READ)) {
    g_printerr ("cannot map frame %" G_GUINT64_FORMAT "\n",
        GST_BUFFER_OFFSET (buf));
    return FALSE;
  }

  meta = gst_buffer_get_video_meta (buf);
  n_planes = meta ? meta->n_planes : GST_VIDEO_INFO_N_PLANES (&info);
  for (guint p = 0; p < n_planes && ok; p++) {
    gsize offset = meta ? meta->offset[p] : info.offset[p];
    gint pitch = meta ? meta->stride[p] : info.stride[p];
    const guint8 *rows_at = map.data + offset;
    g_autofree guint8 *copy = NULL;
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gsize rows, row_bytes, span;

    g_string_append_printf (pitches, "%s%d", p ? "," : "", pitch);
    g_string_append_printf (offsets, "%s%" G_GSIZE_FORMAT, p ? "," : "",
        offset);
    /* visible bytes of a row: width times pixel stride of the plane's first
     * component (NV12's UV plane: width / 2 pairs of 2 bytes) */
    gst_video_format_info_component (info.finfo, p, comp);
    rows = comp[0] < 0 ? 0 : GST_VIDEO_INFO_COMP_HEIGHT (&info, comp[0]);
    row_bytes = comp[0] < 0 ? 0 : GST_VIDEO_INFO_COMP_WIDTH (&info, comp[0]) *
        GST_VIDEO_INFO_COMP_PSTRIDE (&info, comp[0]);
    span = rows ? (rows - 1) * pitch + row_bytes : 0;
    if (rows == 0 || pitch < (gint) row_bytes || offset + span > map.size) {
      g_printerr ("plane %u does not fit in frame %" G_GUINT64_FORMAT "\n",
          p, GST_BUFFER_OFFSET (buf));
      ok = FALSE;
      break;
    }
    if (on_gpu) {
      /* the plane's rows, padding included, to host memory */
      copy = g_malloc (span);
      ok = cuda_read (copy, (CUdeviceptr) (guintptr) map.data + offset, span);
      rows_at = copy;
    }
    for (gsize r = 0; ok && r < rows; r++)
      hash = fnv1a (hash, rows_at + r * pitch, row_bytes);
  }

  if (ok)
    g_print ("frame %" G_GUINT64_FORMAT " pts=%" GST_TIME_FORMAT
        " %s=%p planes=%u pitch=%s offsets=%s fnv1a=%016" G_GINT64_MODIFIER
        "x\n", GST_BUFFER_OFFSET (buf), GST_TIME_ARGS (GST_BUFFER_PTS (buf)),
        on_gpu ? "device_ptr" : "host_ptr", map.data, n_planes, pitches->str,
        offsets->str, hash);
  gst_buffer_unmap (buf, &map);
  return ok;
}

/* TRUE (said why) when the pipeline posted an error. */
static gboolean
pipeline_failed (GstElement * pipeline)
{
  g_autoptr (GstBus) bus = gst_element_get_bus (pipeline);
  g_autoptr (GstMessage) msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  g_autoptr (GError) err = NULL;
  g_autofree gchar *debug = NULL;

  if (!msg)
    return FALSE;
  gst_message_parse_error (msg, &err, &debug);
  g_printerr ("error from %s: %s\n%s\n", GST_OBJECT_NAME (msg->src),
      err->message, debug ? debug : "");
  return TRUE;
}

int
main (int argc, char **argv)
{
  gint frames = 10, device_id = 0, n = 0;
  GOptionEntry entries[] = {
    {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames to read (10)", "N"},
    {"device-id", 0, 0, G_OPTION_ARG_INT, &device_id,
        "the producer's CUDA device (0)", "D"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SOCKET");
  g_autoptr (GError) err = NULL;
  GstElement *pipeline, *src, *sink;
  int ret = 1;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || argc != 2 ||
      frames < 1) {
    g_printerr ("%s%susage: %s SOCKET [--frames N] [--device-id D]\n",
        err ? err->message : "", err ? "\n" : "", argv[0]);
    return 1;
  }

  src = gst_element_factory_make ("cuipcsrc", NULL);
  sink = gst_element_factory_make ("appsink", NULL);
  if (!src || !sink) {
    g_printerr ("no %s element (is GST_PLUGIN_PATH set?)\n",
        src ? "appsink" : "cuipcsrc");
    return 1;
  }
  /* GStreamer's nvcodec (>= 1.24) has an element of the same name */
  if (!g_object_class_find_property (G_OBJECT_GET_CLASS (src), "socket-path")) {
    g_printerr ("cuipcsrc is %s here, not gst-cudaipc's: load "
        "libgstcudaipc.so first (docs/elements.md)\n",
        G_OBJECT_TYPE_NAME (src));
    return 1;
  }
  /* max-held=0: this program checks every frame, so the source keeps all
   * that appsink queues (by default it holds at most the producer's ring
   * less one and drops the rest, so that a slow reader never holds the
   * producer back) */
  g_object_set (src, "socket-path", argv[1], "device-id", device_id,
      "max-held", 0, NULL);
  /* each sample waiting in appsink holds a slot of the producer's ring */
  g_object_set (sink, "sync", FALSE, "max-buffers", 2, NULL);
  pipeline = gst_pipeline_new (NULL);
  gst_bin_add_many (GST_BIN (pipeline), src, sink, NULL);
  gst_element_link (src, sink);

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    if (!pipeline_failed (pipeline))
      g_printerr ("the pipeline does not start\n");
    goto done;
  }
  while (n < frames) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        100 * GST_MSECOND);
    gboolean ok;

    if (!sample) {
      if (pipeline_failed (pipeline))
        goto done;
      if (gst_app_sink_is_eos (GST_APP_SINK (sink))) {
        g_printerr ("the stream ended after %d of %d frames\n", n, frames);
        goto done;
      }
      continue;
    }
    ok = handle_sample (sample, device_id);
    /* the frame's last reference: this releases its slot to the producer */
    gst_sample_unref (sample);
    if (!ok)
      goto done;
    n++;
  }
  ret = 0;

done:
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  if (cu.ctx)
    cu.DevicePrimaryCtxRelease (cu.dev);
  return ret;
}
