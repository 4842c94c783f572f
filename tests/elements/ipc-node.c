/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ipc-node: one side of a hand-over, as a process of its own. The element
 * tests, the gpu suite and the main job spawn it (never fork: a process may
 * have initialised CUDA).
 *
 *   ipc-node producer SOCKET [--frames N] [--width W --height H]
 *       [--switch-at K --width2 W2 --height2 H2] [--clients C]
 *       [--sink "prop=value ..."] [--upload]
 *     appsrc ! [cudaupload !] cudaipcsink. Frame i is NV12 filled with the
 *     pattern of key (i, 0) and carries offset i. With --clients it waits
 *     for C ready clients before playing. Prints one line:
 *     "producer frames=N published=P dropped=D elapsed_us=T".
 *
 *   ipc-node consumer SOCKET [--hold H] [--src "prop=value ..."]
 *       [--download] [--max-frames M]
 *     cudaipcsrc ! [cudadownload !] appsink. Checks every frame against the
 *     pattern of its offset when it arrives, keeps the last H frames held
 *     and checks them again when it lets them go (a slot overwritten while
 *     held is caught). Prints one line:
 *     "consumer frames=N bad=B caps=C recheck_bad=R first=F last=L
 *      elapsed_us=T".
 *
 *   ipc-node probe
 *     exits 0 where a CUDA device opens, 77 elsewhere.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include "device.h"
#include "test-pattern.h"

static gint frames = 30, width = 320, height = 240;
static gint switch_at = -1, width2 = 0, height2 = 0;
static gint clients = 0, hold = 0, max_frames = 0;
static gchar *sink_props, *src_props;
static gboolean upload, download;

static GOptionEntry entries[] = {
  {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames to send", "N"},
  {"width", 0, 0, G_OPTION_ARG_INT, &width, "frame width", "W"},
  {"height", 0, 0, G_OPTION_ARG_INT, &height, "frame height", "H"},
  {"switch-at", 0, 0, G_OPTION_ARG_INT, &switch_at, "change caps at", "K"},
  {"width2", 0, 0, G_OPTION_ARG_INT, &width2, "width after K", "W"},
  {"height2", 0, 0, G_OPTION_ARG_INT, &height2, "height after K", "H"},
  {"clients", 0, 0, G_OPTION_ARG_INT, &clients, "clients to wait for", "C"},
  {"sink", 0, 0, G_OPTION_ARG_STRING, &sink_props, "sink properties", "P"},
  {"upload", 0, 0, G_OPTION_ARG_NONE, &upload, "cudaupload first", NULL},
  {"hold", 0, 0, G_OPTION_ARG_INT, &hold, "frames to hold", "H"},
  {"src", 0, 0, G_OPTION_ARG_STRING, &src_props, "src properties", "P"},
  {"download", 0, 0, G_OPTION_ARG_NONE, &download, "cudadownload", NULL},
  {"max-frames", 0, 0, G_OPTION_ARG_INT, &max_frames, "stop after", "M"},
  {NULL}
};

static void
set_props (GstElement * element, const gchar * props)
{
  gchar **kv = g_strsplit (props ? props : "", " ", -1);

  for (guint i = 0; kv[i]; i++) {
    gchar **pair;
    if (!kv[i][0])
      continue;
    pair = g_strsplit (kv[i], "=", 2);
    if (pair[1])
      gst_util_set_object_arg (G_OBJECT (element), pair[0], pair[1]);
    g_strfreev (pair);
  }
  g_strfreev (kv);
}

static GstCaps *
nv12_caps (gint w, gint h)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "NV12",
      "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

/* Returns FALSE on an error message (printed). */
static gboolean
bus_ok (GstElement * pipeline, GstClockTime timeout, gboolean * eos)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  gboolean ok = TRUE;

  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    g_printerr ("error from %s: %s (%s)\n", GST_OBJECT_NAME (msg->src),
        err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
    ok = FALSE;
  } else if (msg && eos) {
    *eos = TRUE;
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  return ok;
}

static int
run_producer (const gchar * socket_path)
{
  GstElement *pipeline, *src, *sink;
  GstStructure *stats = NULL;
  guint64 published = 0, dropped = 0;
  gint64 t0, t1;
  gboolean eos = FALSE;
  gchar *desc;

  desc = g_strdup_printf ("appsrc name=src format=time is-live=false "
      "block=true max-bytes=1 ! %s cudaipcsink name=sink sync=false "
      "socket-path=\"%s\"",
      upload ? "cudaupload !" : "", socket_path);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  if (!pipeline)
    return 1;
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  set_props (sink, sink_props);
  gst_app_src_set_caps (GST_APP_SRC (src), nv12_caps (width, height));

  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  for (gint waited = 0; clients > 0; waited += 10) {
    guint n = 0;
    g_object_get (sink, "num-clients", &n, NULL);
    if ((gint) n >= clients)
      break;
    if (waited > 30000 || !bus_ok (pipeline, 10 * GST_MSECOND, NULL)) {
      g_printerr ("producer: %u of %d clients came\n", n, clients);
      return 1;
    }
  }
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  t0 = g_get_monotonic_time ();
  for (gint i = 0; i < frames; i++) {
    GstVideoInfo info;
    GstCaps *caps;
    GstBuffer *buf;
    GstMapInfo map;

    if (i == switch_at)
      gst_app_src_set_caps (GST_APP_SRC (src), nv12_caps (width2, height2));
    caps = gst_app_src_get_caps (GST_APP_SRC (src));
    gst_video_info_from_caps (&info, caps);
    gst_caps_unref (caps);
    buf = gst_buffer_new_allocate (NULL, info.size, NULL);
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    cudaipc_test_fill_pattern (map.data, map.size, i, 0);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    GST_BUFFER_OFFSET (buf) = i;
    GST_BUFFER_OFFSET_END (buf) = i + 1;
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  if (!bus_ok (pipeline, 120 * GST_SECOND, &eos) || !eos) {
    g_printerr ("producer: no EOS\n");
    return 1;
  }
  t1 = g_get_monotonic_time ();

  g_object_get (sink, "stats", &stats, NULL);
  if (stats) {
    gst_structure_get_uint64 (stats, "frames-published", &published);
    gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
    gst_structure_free (stats);
  }
  g_print ("producer frames=%d published=%" G_GUINT64_FORMAT " dropped=%"
      G_GUINT64_FORMAT " elapsed_us=%" G_GINT64_FORMAT "\n", frames,
      published, dropped, t1 - t0);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return 0;
}

/* Checks a frame against the pattern of its offset; TRUE when intact. */
static gboolean
frame_ok (GstSample * sample)
{
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstVideoInfo info;
  GstMapInfo map;
  gboolean ok;

  if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample)))
    return FALSE;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return FALSE;
  ok = map.size >= info.size &&
      cudaipc_test_check_pattern (map.data, info.size,
      (guint) GST_BUFFER_OFFSET (buf), 0) < 0;
  gst_buffer_unmap (buf, &map);
  return ok;
}

static int
run_consumer (const gchar * socket_path)
{
  GstElement *pipeline, *src, *sink;
  GQueue held = G_QUEUE_INIT;
  GstCaps *last_caps = NULL;
  guint n = 0, bad = 0, recheck_bad = 0, n_caps = 0;
  guint64 first = G_MAXUINT64, last = 0;
  gint64 t0 = 0, t1 = 0;
  gboolean ok = TRUE;
  gchar *desc;

  desc = g_strdup_printf ("cudaipcsrc name=src socket-path=\"%s\" ! %s "
      "appsink name=sink sync=false", socket_path,
      download ? "cudadownload !" : "");
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  if (!pipeline)
    return 1;
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  set_props (src, src_props);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    GstBuffer *buf;

    if (!sample) {
      if (!gst_app_sink_is_eos (GST_APP_SINK (sink)) || !bus_ok (pipeline, 0,
              NULL))
        ok = FALSE;
      break;
    }
    if (n == 0)
      t0 = g_get_monotonic_time ();
    t1 = g_get_monotonic_time ();
    buf = gst_sample_get_buffer (sample);
    n++;
    first = MIN (first, GST_BUFFER_OFFSET (buf));
    last = GST_BUFFER_OFFSET (buf);
    if (!last_caps || !gst_caps_is_equal (last_caps,
            gst_sample_get_caps (sample))) {
      n_caps++;
      gst_caps_replace (&last_caps, gst_sample_get_caps (sample));
    }
    if (!frame_ok (sample))
      bad++;
    g_queue_push_tail (&held, sample);
    while (g_queue_get_length (&held) > (guint) hold) {
      GstSample *old = g_queue_pop_head (&held);
      if (!frame_ok (old))
        recheck_bad++;
      gst_sample_unref (old);
    }
    if (max_frames > 0 && n >= (guint) max_frames)
      break;
  }
  while (!g_queue_is_empty (&held)) {
    GstSample *old = g_queue_pop_head (&held);
    if (!frame_ok (old))
      recheck_bad++;
    gst_sample_unref (old);
  }
  g_print ("consumer frames=%u bad=%u caps=%u recheck_bad=%u first=%"
      G_GUINT64_FORMAT " last=%" G_GUINT64_FORMAT " elapsed_us=%"
      G_GINT64_FORMAT "\n", n, bad, n_caps, recheck_bad,
      first == G_MAXUINT64 ? 0 : first, last, t1 - t0);

  gst_caps_replace (&last_caps, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return ok && bad == 0 && recheck_bad == 0 ? 0 : 1;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("producer|consumer|probe "
      "[SOCKET]");
  GError *err = NULL;
  int ret = 2;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);

  if (argc == 2 && g_str_equal (argv[1], "probe")) {
    CudaIpcDevice *dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
    if (!dev) {
      g_print ("no GPU: %s\n", err->message);
      return CUDAIPC_TEST_SKIP;
    }
    g_print ("GPU: %s\n", cudaipc_device_get_name (dev));
    cudaipc_device_unref (dev);
    return 0;
  }
  if (argc == 3 && g_str_equal (argv[1], "producer"))
    ret = run_producer (argv[2]);
  else if (argc == 3 && g_str_equal (argv[1], "consumer"))
    ret = run_consumer (argv[2]);
  else
    g_printerr ("usage: %s producer|consumer SOCKET [options] | probe\n",
        argv[0]);
  return ret;
}
