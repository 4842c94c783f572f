/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for GStreamer's nvcodec plugin as far as names go: on
 * GStreamer >= 1.24 it registers element features "cudaipcsink" and
 * "cudaipcsrc" with the GTypes nvcodec uses, GstCudaIpcSink and
 * GstCudaIpcSrc; before 1.24, as nvcodec there, no such names (the types
 * exist all the same). With CUDAIPC_FAKE_NVCODEC_GPU=0 it registers
 * nothing, as nvcodec on a machine without a GPU. The coexistence test
 * loads it beside ours, and installs it as libgstnvcodec.so in a system
 * plugin folder of its own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>
#include <gst/base/gstpushsrc.h>

typedef struct { GstBaseSink parent; } GstCudaIpcSink;
typedef struct { GstBaseSinkClass parent_class; } GstCudaIpcSinkClass;
typedef struct { GstPushSrc parent; } GstCudaIpcSrc;
typedef struct { GstPushSrcClass parent_class; } GstCudaIpcSrcClass;

GType gst_cuda_ipc_sink_get_type (void);
GType gst_cuda_ipc_src_get_type (void);
G_DEFINE_TYPE (GstCudaIpcSink, gst_cuda_ipc_sink, GST_TYPE_BASE_SINK);
G_DEFINE_TYPE (GstCudaIpcSrc, gst_cuda_ipc_src, GST_TYPE_PUSH_SRC);

static GstStaticPadTemplate sink_t = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_t = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
gst_cuda_ipc_sink_class_init (GstCudaIpcSinkClass * klass)
{
  gst_element_class_add_static_pad_template (GST_ELEMENT_CLASS (klass),
      &sink_t);
  gst_element_class_set_static_metadata (GST_ELEMENT_CLASS (klass),
      "Stand-in nvcodec CUDA IPC sink", "Sink/Video", "test", "test");
}

static void
gst_cuda_ipc_sink_init (GstCudaIpcSink * self)
{
}

static void
gst_cuda_ipc_src_class_init (GstCudaIpcSrcClass * klass)
{
  gst_element_class_add_static_pad_template (GST_ELEMENT_CLASS (klass),
      &src_t);
  gst_element_class_set_static_metadata (GST_ELEMENT_CLASS (klass),
      "Stand-in nvcodec CUDA IPC source", "Source/Video", "test", "test");
}

static void
gst_cuda_ipc_src_init (GstCudaIpcSrc * self)
{
}

static gboolean
plugin_init (GstPlugin * plugin)
{
  GType sink = gst_cuda_ipc_sink_get_type ();
  GType src = gst_cuda_ipc_src_get_type ();
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  if (g_strcmp0 (g_getenv ("CUDAIPC_FAKE_NVCODEC_GPU"), "0") == 0 ||
      (major == 1 && minor < 24))
    return TRUE;
  return gst_element_register (plugin, "cudaipcsink", GST_RANK_NONE, sink) &&
      gst_element_register (plugin, "cudaipcsrc", GST_RANK_NONE, src);
}

/* named nvcodec and built as libgstnvcodec.so, like the real one */
GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, nvcodec,
    "Stand-in for nvcodec's IPC element names", plugin_init, VERSION,
    "LGPL", "gst-cudaipc tests", "https://example.invalid/gst-cudaipc")
