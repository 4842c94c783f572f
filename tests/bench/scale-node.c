/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scale-node: one process of the scale run (tests/bench/scale-run.py,
 * docs/benchmarks.md, Many streams): a producer of several camera streams,
 * or an analytics process that reads many.
 *
 *   scale-node producer --dir D --first I --streams K [--fps 30]
 *       [--seconds S] [--width W --height H] [--backend cuda|host]
 *       [--clients C] [--source host|device]
 *     K streams in one pipeline, appsrc ! cuipcsink socket-path=D/cam-<n>
 *     .sock (n = I .. I+K-1, on-full=wait), each fed with copies of one
 *     NV12 frame at --fps (in system memory, as a camera's, which the sink
 *     uploads; or with --source device in CUDA memory, as a GPU decoder's,
 *     which the sink copies on the GPU), stamped on CLOCK_MONOTONIC
 *     (PTS) as it is pushed. Waits until every sink has C consumers, runs
 *     S seconds, ends each stream.
 *   scale-node consumer --dir D --streams N [--seconds S] [--max-held M]
 *     N branches cuipcsrc socket-path=D/cam-<n>.sock timestamp-mode=
 *     passthrough max-held=M (0) ! fakesink in one pipeline (one CUDA
 *     context for all of them), until each stream ended.
 *
 * Both print "ready" when they run, then one line "result k=v ..." at the
 * end: the process's CPU time (cpu_ns), its open file descriptors (fds),
 * its largest resident set (rss_kib); the producer the frames it pushed
 * and those its sinks dropped; the consumer, per stream n, received_<n>,
 * missing_<n> (gaps in the frame numbers), dropped_<n> (frames cuipcsrc
 * let go, downstream not taking them: its stats' frames-dropped),
 * disorder_<n> (frames behind one already seen), p50_<n>_us, p99_<n>_us
 * and max_<n>_us (from the PTS to the frame leaving cuipcsrc).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include "test-bus.h"

static gchar *dir, *backend, *source;
static gint first, streams = 1, fps = 30, seconds = 60, width = 1920,
    height = 1080, clients = 3, max_held = 0;

static GOptionEntry entries[] = {
  {"dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "folder of the sockets", "D"},
  {"first", 0, 0, G_OPTION_ARG_INT, &first, "producer: first stream", "I"},
  {"streams", 0, 0, G_OPTION_ARG_INT, &streams, "streams (1)", "N"},
  {"fps", 0, 0, G_OPTION_ARG_INT, &fps, "producer: frames/s (30)", "F"},
  {"seconds", 0, 0, G_OPTION_ARG_INT, &seconds, "how long (60)", "S"},
  {"width", 0, 0, G_OPTION_ARG_INT, &width, "producer: width (1920)", "W"},
  {"height", 0, 0, G_OPTION_ARG_INT, &height, "producer: height (1080)",
      "H"},
  {"source", 0, 0, G_OPTION_ARG_STRING, &source,
        "producer: where each stream's frame is, host (system memory, as "
        "from a camera: the sink uploads it) or device (CUDA memory, as "
        "from a GPU decoder: the sink copies it on the GPU) (host)", "S"},
  {"backend", 0, 0, G_OPTION_ARG_STRING, &backend,
      "producer: cuipcsink backend (cuda)", "B"},
  {"clients", 0, 0, G_OPTION_ARG_INT, &clients,
      "producer: consumers to wait for on every stream (3)", "C"},
  {"max-held", 0, 0, G_OPTION_ARG_INT, &max_held,
      "consumer: cuipcsrc max-held (0: every frame, a slow reader holds "
        "its producer back; -1: the ring less one, frames beyond dropped)",
      "M"},
  {NULL}
};

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gint64
cpu_ns (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ((gint64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
      ((gint64) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static glong
max_rss_kib (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static guint
count_fds (void)
{
  GDir *d = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  while (d && g_dir_read_name (d))
    n++;
  if (d)
    g_dir_close (d);
  /* the GDir's own */
  return n > 0 ? n - 1 : 0;
}

static gchar *
socket_of (gint n)
{
  gchar *name = g_strdup_printf ("cam-%d.sock", n);
  gchar *path = g_build_filename (dir, name, NULL);

  g_free (name);
  return path;
}

#define bus_ok cudaipc_test_bus_ok

/* One NV12 frame in CUDA memory (videotestsrc ! cudaupload), with its
 * caps; the pipeline that made it stays in @holder, playing, so that its
 * CUDA context does too. NULL where there is no cudaupload. */
static GstBuffer *
device_frame (GstElement ** holder, GstCaps ** caps)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=1 ! "
      "video/x-raw,format=NV12,width=%d,height=%d,framerate=%d/1 ! "
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! appsink name=out "
      "sync=false", width, height, fps);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err), *out;
  GstSample *sample;
  GstBuffer *buf = NULL;

  g_free (desc);
  /* a missing element is an error with a pipeline all the same */
  if (err != NULL) {
    g_printerr ("producer: %s\n", err->message);
    g_clear_error (&err);
    gst_clear_object (&p);
    return NULL;
  }
  out = gst_bin_get_by_name (GST_BIN (p), "out");
  gst_element_set_state (p, GST_STATE_PLAYING);
  sample = out ? gst_app_sink_try_pull_sample (GST_APP_SINK (out),
      30 * GST_SECOND) : NULL;
  if (sample) {
    buf = gst_buffer_ref (gst_sample_get_buffer (sample));
    *caps = gst_caps_ref (gst_sample_get_caps (sample));
    gst_sample_unref (sample);
  }
  gst_clear_object (&out);
  if (buf == NULL) {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
    return NULL;
  }
  *holder = p;
  return buf;
}

static int
run_producer (void)
{
  GstElement *pipeline = gst_pipeline_new ("producer");
  GstElement **src = g_new0 (GstElement *, streams);
  GstElement **sink = g_new0 (GstElement *, streams);
  GstVideoInfo info;
  GstCaps *caps;
  GstBuffer *frame;
  GstElement *holder = NULL;
  GstMapInfo map;
  guint64 pushed = 0, dropped = 0;
  gint64 start, deadline, cpu0;
  gboolean ok = TRUE, eos = FALSE;
  gchar *line;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, width, height);
  GST_VIDEO_INFO_FPS_N (&info) = fps;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  if (g_strcmp0 (source, "device") == 0) {
    frame = device_frame (&holder, &caps);
    if (frame == NULL) {
      g_printerr ("producer: no frame in CUDA memory (videotestsrc ! "
          "cudaupload)\n");
      return 1;
    }
  } else {
    caps = gst_video_info_to_caps (&info);
    frame = gst_buffer_new_allocate (NULL, info.size, NULL);
    gst_buffer_map (frame, &map, GST_MAP_WRITE);
    for (gsize i = 0; i < map.size; i++)
      map.data[i] = (guint8) (i * 13 + 5);
    gst_buffer_unmap (frame, &map);
  }

  for (gint s = 0; s < streams; s++) {
    gchar *path = socket_of (first + s);

    src[s] = gst_element_factory_make ("appsrc", NULL);
    sink[s] = gst_element_factory_make ("cuipcsink", NULL);
    if (src[s] == NULL || sink[s] == NULL) {
      g_printerr ("producer: no appsrc or cuipcsink\n");
      return 1;
    }
    g_object_set (src[s], "format", GST_FORMAT_TIME, "is-live", FALSE,
        "block", TRUE, "max-buffers", (guint64) 2, "caps", caps, NULL);
    g_object_set (sink[s], "socket-path", path, "sync", FALSE,
        "enable-last-sample", FALSE, NULL);
    gst_util_set_object_arg (G_OBJECT (sink[s]), "backend",
        backend ? backend : "cuda");
    gst_util_set_object_arg (G_OBJECT (sink[s]), "on-full", "wait");
    gst_bin_add_many (GST_BIN (pipeline), src[s], sink[s], NULL);
    gst_element_link (src[s], sink[s]);
    g_free (path);
  }
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    bus_ok (pipeline, 0, NULL);
    g_printerr ("producer: cannot start\n");
    return 1;
  }
  g_print ("ready\n");

  /* every stream's consumers, within a minute */
  deadline = now_ns () + 60 * GST_SECOND;
  for (gint s = 0; s < streams && ok; s++) {
    guint have = 0;

    while (ok && (g_object_get (sink[s], "num-clients", &have, NULL),
            have < (guint) clients)) {
      if (now_ns () > deadline) {
        g_printerr ("producer: stream %d has %u of %d consumers\n",
            first + s, have, clients);
        ok = FALSE;
      }
      ok = ok && bus_ok (pipeline, 10 * GST_MSECOND, NULL);
    }
  }

  start = now_ns ();
  cpu0 = cpu_ns ();
  for (guint64 i = 0; ok && now_ns () - start < (gint64) seconds * GST_SECOND;
      i++) {
    gint64 due = start + (gint64) (i * GST_SECOND / fps), t = now_ns ();

    if (due > t)
      g_usleep ((due - t) / 1000);
    for (gint s = 0; s < streams; s++) {
      GstBuffer *buf = gst_buffer_copy (frame);

      GST_BUFFER_OFFSET (buf) = i;
      GST_BUFFER_PTS (buf) = now_ns ();
      if (gst_app_src_push_buffer (GST_APP_SRC (src[s]), buf) != GST_FLOW_OK)
        ok = FALSE;
      pushed++;
    }
    ok = ok && bus_ok (pipeline, 0, NULL);
  }
  for (gint s = 0; s < streams; s++)
    gst_app_src_end_of_stream (GST_APP_SRC (src[s]));
  /* the pipeline posts EOS once every sink has it */
  if (ok && (!bus_ok (pipeline, 60 * GST_SECOND, &eos) || !eos)) {
    g_printerr ("producer: no EOS\n");
    ok = FALSE;
  }
  for (gint s = 0; s < streams; s++) {
    GstStructure *st = NULL;
    guint64 d = 0;

    g_object_get (sink[s], "stats", &st, NULL);
    if (st && gst_structure_get_uint64 (st, "frames-dropped", &d))
      dropped += d;
    if (st)
      gst_structure_free (st);
  }
  line = g_strdup_printf ("result role=producer streams=%d pushed=%"
      G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT " cpu_ns=%"
      G_GINT64_FORMAT " wall_ns=%" G_GINT64_FORMAT " fds=%u rss_kib=%ld",
      streams, pushed, dropped, cpu_ns () - cpu0, now_ns () - start,
      count_fds (), max_rss_kib ());
  g_print ("%s\n", line);
  g_free (line);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  gst_buffer_unref (frame);
  if (holder) {
    gst_element_set_state (holder, GST_STATE_NULL);
    gst_object_unref (holder);
  }
  gst_caps_unref (caps);
  g_free (src);
  g_free (sink);
  return ok ? 0 : 1;
}

typedef struct
{
  GstElement *src;
  GArray *lat;                  /* gint64 ns */
  guint64 received, missing, disorder;
  gint64 last;                  /* the last frame number, -1 */
} Stream;

static GstPadProbeReturn
on_frame (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Stream *s = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  gint64 t = now_ns (), pts = (gint64) GST_BUFFER_PTS (buf);
  gint64 n = (gint64) GST_BUFFER_OFFSET (buf);

  /* the streaming thread of this branch alone touches @s */
  s->received++;
  if (s->last >= 0 && n > s->last + 1)
    s->missing += n - s->last - 1;
  if (s->last >= 0 && n <= s->last)
    s->disorder++;
  s->last = MAX (s->last, n);
  if (GST_BUFFER_PTS_IS_VALID (buf) && pts <= t) {
    gint64 lat = t - pts;

    g_array_append_val (s->lat, lat);
  }
  return GST_PAD_PROBE_OK;
}

static gint
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static gdouble
pct_us (GArray * a, gdouble q)
{
  gsize rank;

  if (a->len == 0)
    return -1;
  rank = (gsize) ceil (q * a->len);
  return g_array_index (a, gint64, CLAMP (rank, 1, a->len) - 1) / 1e3;
}

static int
run_consumer (void)
{
  GstElement *pipeline = gst_pipeline_new ("consumer");
  Stream *st = g_new0 (Stream, streams);
  GString *line = g_string_new ("result role=consumer");
  gint64 start, cpu0;
  gboolean ok = TRUE, eos = FALSE;

  for (gint s = 0; s < streams; s++) {
    gchar *path = socket_of (s);
    GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);
    GstElement *fake = gst_element_factory_make ("fakesink", NULL);
    GstPad *pad;

    if (src == NULL || fake == NULL) {
      g_printerr ("consumer: no cuipcsrc or fakesink\n");
      return 1;
    }
    st[s].lat = g_array_new (FALSE, FALSE, sizeof (gint64));
    st[s].src = src;
    st[s].last = -1;
    g_object_set (src, "socket-path", path, "connect-timeout", 60000,
        "reconnect", FALSE, "max-held", max_held, NULL);
    gst_util_set_object_arg (G_OBJECT (src), "timestamp-mode", "passthrough");
    g_object_set (fake, "sync", FALSE, "enable-last-sample", FALSE, NULL);
    gst_bin_add_many (GST_BIN (pipeline), src, fake, NULL);
    gst_element_link (src, fake);
    pad = gst_element_get_static_pad (src, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_frame, &st[s],
        NULL);
    gst_object_unref (pad);
    g_free (path);
  }
  start = now_ns ();
  cpu0 = cpu_ns ();
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    bus_ok (pipeline, 0, NULL);
    g_printerr ("consumer: cannot start\n");
    return 1;
  }
  g_print ("ready\n");
  if (!bus_ok (pipeline, (GstClockTime) (seconds + 120) * GST_SECOND, &eos)
      || !eos) {
    g_printerr ("consumer: no EOS on every stream\n");
    ok = FALSE;
  }
  g_string_append_printf (line, " streams=%d cpu_ns=%" G_GINT64_FORMAT
      " wall_ns=%" G_GINT64_FORMAT " fds=%u rss_kib=%ld", streams,
      cpu_ns () - cpu0, now_ns () - start, count_fds (), max_rss_kib ());
  for (gint s = 0; s < streams; s++) {
    GstStructure *stats = NULL;
    guint64 dropped = 0;

    /* frames the source let go because downstream was not taking them */
    g_object_get (st[s].src, "stats", &stats, NULL);
    if (stats) {
      gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
      gst_structure_free (stats);
    }
    g_string_append_printf (line, " dropped_%d=%" G_GUINT64_FORMAT
        " disorder_%d=%" G_GUINT64_FORMAT, s, dropped, s, st[s].disorder);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  for (gint s = 0; s < streams; s++) {
    g_array_sort (st[s].lat, cmp_i64);
    g_string_append_printf (line, " received_%d=%" G_GUINT64_FORMAT
        " missing_%d=%" G_GUINT64_FORMAT " p50_%d_us=%.1f p99_%d_us=%.1f"
        " max_%d_us=%.1f", s, st[s].received, s, st[s].missing, s,
        pct_us (st[s].lat, 0.5), s, pct_us (st[s].lat, 0.99), s,
        pct_us (st[s].lat, 1.0));
    g_array_unref (st[s].lat);
  }
  g_print ("%s\n", line->str);
  g_string_free (line, TRUE);
  gst_object_unref (pipeline);
  g_free (st);
  return ok ? 0 : 1;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("producer|consumer - a "
      "process of the scale run");
  GError *err = NULL;
  int ret;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || argc < 2 ||
      dir == NULL || streams < 1 || fps < 1 || seconds < 1) {
    g_printerr ("%s\n", err ? err->message : "usage: scale-node "
        "producer|consumer --dir D [options]");
    return 2;
  }
  g_option_context_free (ctx);
  ret = g_str_equal (argv[1], "producer") ? run_producer () :
      g_str_equal (argv[1], "consumer") ? run_consumer () : 2;
  gst_deinit ();
  return ret;
}
