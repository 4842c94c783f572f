/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers of the producer and consumer roles: a time limit and a tie to
 * the orchestrator, elements (the IPC ones by GType), the one frame every
 * push shares, (c)'s frame meta, and the commands the orchestrator writes
 * to stdin.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <gst/app/gstappsink.h>

#include "bench.h"
#include "test-bus.h"
#ifdef HAVE_GST_CUDA
#include "bench-gstcuda.h"
#endif

/* GstCudaMemory's allocator type (gstcudamemory.h, nvcodec 1.20 and
 * libgstcuda 1.22+), for builds without gstreamer-cuda-1.0 */
#define CUDA_MEMORY_TYPE_NAME "gst.cuda.memory"

static volatile sig_atomic_t tearing_down;

static void
on_alarm (int sig)
{
  static const char msg[] = "cudaipc-bench: timed out, exiting\n";
  static const char msg_td[] = "cudaipc-bench: the pipeline did not stop "
      "within " G_STRINGIFY (BENCH_TEARDOWN_S) " s after the result, "
      "exiting\n";
  gboolean td = tearing_down;

  (void) sig;
  if (write (STDERR_FILENO, td ? msg_td : msg, td ? sizeof (msg_td) - 1 :
          sizeof (msg) - 1) < 0) {
    /* nothing left to try */
  }
  _exit (td ? BENCH_EXIT_TEARDOWN : BENCH_EXIT_TIMEOUT);
}

/* A role never outlives its orchestrator nor its time limit. */
gboolean
bench_role_guard (void)
{
  signal (SIGALRM, on_alarm);
  alarm ((guint) MAX (opts.timeout, 1) + 10);
  if (opts.parent > 0) {
    /* the parent may be a wrapper (valgrind, strace) of the orchestrator */
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (kill ((pid_t) opts.parent, 0) < 0 && errno == ESRCH) {
      g_printerr ("the orchestrator (pid %d) is gone\n", opts.parent);
      return FALSE;
    }
  }
  return TRUE;
}

/* Once the result is out: the pipeline's stop gets BENCH_TEARDOWN_S, so a
 * stop that waits on its peer (nvcodec's cudaipcsrc waits for its server's
 * answer) cannot hold the row until the row's deadline; the orchestrator
 * notes that exit status without failing the row. */
void
bench_arm_teardown (void)
{
  tearing_down = TRUE;
  alarm (BENCH_TEARDOWN_S);
}

void
bench_say (const gchar * line)
{
  g_print ("%s\n", line);
  fflush (stdout);
}

/* Returns FALSE after printing an error message found on the bus; sets
 * @eos when an EOS was popped. Waits up to @wait. */
gboolean
bench_bus_ok (GstElement * pipeline, GstClockTime wait, gboolean * eos)
{
  return cudaipc_test_bus_ok (pipeline, wait, eos);
}

GstElement *
bench_make (const gchar * factory, const gchar * name)
{
  GstElement *e = gst_element_factory_make (factory, name);

  if (e == NULL)
    g_printerr ("no element '%s' (is its plugin installed?)\n", factory);
  return e;
}

GstElement *
bench_make_capsfilter (const gchar * name, const gchar * caps_str)
{
  GstElement *e = bench_make ("capsfilter", name);
  GstCaps *caps = gst_caps_from_string (caps_str);

  g_object_set (e, "caps", caps, NULL);
  gst_caps_unref (caps);
  return e;
}

/* The IPC elements, by GType: ours (GstCuIpcSink/GstCuIpcSrc) from the
 * plugin file, nvcodec's (GstCudaIpcSink/GstCudaIpcSrc) from nvcodec.
 * Their feature names are the same, so a factory could be either. */
GstElement *
bench_make_ipc_element (Transport t, gboolean sink, const gchar * name)
{
  const gchar *type_name;
  GType type;

  if (t == TRANSPORT_CUDAIPC) {
    type_name = sink ? "GstCuIpcSink" : "GstCuIpcSrc";
    if (!g_type_from_name (type_name)) {
      GError *err = NULL;
      GstPlugin *plugin = gst_plugin_load_file (opts.plugin, &err);

      if (plugin == NULL) {
        g_printerr ("cannot load the plugin %s: %s\n", opts.plugin,
            err->message);
        g_clear_error (&err);
        return NULL;
      }
      gst_object_unref (plugin);
    }
  } else {
    type_name = sink ? "GstCudaIpcSink" : "GstCudaIpcSrc";
    if (!g_type_from_name (type_name)) {
      GstPlugin *plugin = gst_plugin_load_by_name ("nvcodec");

      if (plugin)
        gst_object_unref (plugin);
    }
  }

  type = g_type_from_name (type_name);
  if (type == 0 || !g_type_is_a (type, GST_TYPE_ELEMENT)) {
    g_printerr ("no element type %s%s%s\n", type_name,
        t == TRANSPORT_CUDAIPC ? " in " : " (nvcodec, GStreamer >= 1.24)",
        t == TRANSPORT_CUDAIPC ? opts.plugin : "");
    return NULL;
  }
  return g_object_new (type, "name", name, NULL);
}

/* (c)'s frame meta, a custom meta holding a structure with "index"
 * (guint64) and "last" (boolean): nvcodec's sink serializes custom metas
 * into each frame's message and its source deserializes them where the
 * name is registered, so both roles register it before the first frame.
 * Custom metas are GStreamer 1.20 API; (c) runs on 1.24+ only. */
const GstMetaInfo *
bench_frame_meta_register (void)
{
  static const gchar *tags[] = { NULL };
  static const GstMetaInfo *info;

  if (info == NULL)
    info = gst_meta_register_custom (BENCH_META_NAME, tags, NULL, NULL, NULL);
  return info;
}

/* The one frame every push shares. @holder keeps its pipeline (and with
 * it the memory's pool and CUDA context) until the end. */
GstBuffer *
bench_make_frame (GstElement ** holder, GstCaps ** caps_out)
{
  GstElement *pipeline, *sink;
  GstSample *sample;
  GstBuffer *buf;
  GstMemory *mem;
  GError *err = NULL;
  gchar *desc;

  desc = g_strdup_printf ("videotestsrc num-buffers=1 pattern=smpte ! "
      "video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1 ! %s "
      "appsink name=sink sync=false", opts.width, opts.height,
      bench_use_cuda ()? "cudaupload ! " BENCH_CUDA_CAPS " ! " : "");
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  /* a missing element is an error with a pipeline all the same */
  if (err != NULL) {
    g_printerr ("cannot make the frame: %s\n", err->message);
    g_clear_error (&err);
    if (pipeline)
      gst_object_unref (pipeline);
    return NULL;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 30 * GST_SECOND);
  gst_object_unref (sink);
  if (sample == NULL) {
    bench_bus_ok (pipeline, 0, NULL);
    g_printerr ("no frame from videotestsrc%s\n",
        bench_use_cuda ()? " ! cudaupload" : "");
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
    return NULL;
  }

  buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  *caps_out = gst_caps_ref (gst_sample_get_caps (sample));
  gst_sample_unref (sample);
  *holder = pipeline;

  mem = gst_buffer_peek_memory (buf, 0);
  if (bench_use_cuda ()) {
    gint device = 0;
#ifdef HAVE_GST_CUDA
    gboolean is_cuda = bench_cuda_memory_device (mem, &device);
#else
    gboolean is_cuda = gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME);
#endif

    if (!is_cuda) {
      g_printerr ("cudaupload gave no CUDA memory (%s)\n",
          mem->allocator ? mem->allocator->mem_type : "?");
      gst_buffer_unref (buf);
      return NULL;
    }
    if (device != 0)
      g_printerr ("warning: the frame is on CUDA device %d, the ring and the "
          "consumers on 0\n", device);
  }
  return buf;
}

/* Reads one line from stdin by @deadline (monotonic ns): "go", "quit".
 * NULL on time-out, or on end of file or error (then *@closed is set). */
static gchar *
read_command (gint64 deadline, gboolean * closed)
{
  static GString *pending;
  gchar *nl;

  if (pending == NULL)
    pending = g_string_new (NULL);

  while ((nl = strchr (pending->str, '\n')) == NULL) {
    struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };
    gint64 left = deadline - bench_now_ns ();
    gchar buf[256];
    ssize_t n;

    if (left <= 0)
      return NULL;
    if (poll (&pfd, 1, (int) MIN (left / 1000000 + 1, 100)) <= 0)
      continue;
    n = read (STDIN_FILENO, buf, sizeof (buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *closed = TRUE;
      return NULL;
    }
    g_string_append_len (pending, buf, n);
  }

  {
    gchar *line = g_strndup (pending->str, nl - pending->str);

    g_string_erase (pending, 0, nl - pending->str + 1);
    return line;
  }
}

/* A command if one is there, without waiting; NULL else (*@closed set at
 * end of file). */
gchar *
bench_poll_command (gboolean * closed)
{
  return read_command (bench_now_ns () + GST_MSECOND, closed);
}

/* Waits for command @what; FALSE on anything else, or on a bus error. */
gboolean
bench_wait_command (GstElement * pipeline, const gchar * what, gint timeout_s)
{
  gint64 deadline = bench_now_ns () + (gint64) timeout_s * GST_SECOND;
  gboolean closed = FALSE;

  while (bench_now_ns () < deadline) {
    gint64 slice = MIN (deadline, bench_now_ns () + 100 * GST_MSECOND);
    gchar *line = read_command (slice, &closed);

    if (line != NULL) {
      gboolean ok = g_str_equal (line, what);

      if (!ok)
        g_printerr ("expected '%s', got '%s'\n", what, line);
      g_free (line);
      return ok;
    }
    if (closed) {
      g_printerr ("stdin closed while waiting for '%s'\n", what);
      return FALSE;
    }
    if (pipeline && !bench_bus_ok (pipeline, 0, NULL))
      return FALSE;
  }
  g_printerr ("no '%s' within %d s\n", what, timeout_s);
  return FALSE;
}
