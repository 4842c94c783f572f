/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: the timestamps a consumer pushes (docs/design.md,
 * Timestamps), host backend, producer and consumer as pipelines of this
 * process, the consumer read through an appsink.
 *
 *  - clock mode: PTS strictly increase from the first frame, a millisecond
 *    apart at least, over several connections (the producer restarted,
 *    the consumer reconnecting), with frames of the first connection from
 *    before the consumer started.
 *  - passthrough: each frame's PTS and segment are the producer's, and
 *    its running time is the producer's moved by one offset for the
 *    connection, to the nanosecond, through a new segment before every
 *    frame.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "ipc-nodes.h"
#include "test-launch.h"
#include "test-main.h"

#define CAPS "video/x-raw,format=NV12,width=160,height=120,framerate=30/1"

/* What the consumer's appsink got: each frame's PTS, duration and running
 * time, and how many frames had come when each connection began. */
typedef struct
{
  GMutex lock;
  GArray *pts, *duration, *running, *connected;
  GArray *segments;             /* GstSegment of each frame */
} Got;

static Got got;

static void
setup (void)
{
  nodes_setup ();
  g_mutex_init (&got.lock);
  got.pts = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  got.duration = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  got.running = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  got.connected = g_array_new (FALSE, FALSE, sizeof (guint));
  got.segments = g_array_new (FALSE, FALSE, sizeof (GstSegment));
}

static void
teardown (void)
{
  g_array_unref (got.pts);
  g_array_unref (got.duration);
  g_array_unref (got.running);
  g_array_unref (got.connected);
  g_array_unref (got.segments);
  g_mutex_clear (&got.lock);
  nodes_teardown ();
}

static guint
frames_got (void)
{
  guint n;

  g_mutex_lock (&got.lock);
  n = got.pts->len;
  g_mutex_unlock (&got.lock);
  return n;
}

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user_data)
{
  GstSample *sample = gst_app_sink_pull_sample (sink);
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstSegment seg = *gst_sample_get_segment (sample);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstClockTime duration = GST_BUFFER_DURATION (buf);
  GstClockTime rt = gst_segment_to_running_time (&seg, GST_FORMAT_TIME, pts);

  g_mutex_lock (&got.lock);
  g_array_append_val (got.pts, pts);
  g_array_append_val (got.duration, duration);
  g_array_append_val (got.running, rt);
  g_array_append_val (got.segments, seg);
  g_mutex_unlock (&got.lock);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

/* The source's messages come, for each connection, with its first frame,
 * before that frame reaches the appsink. */
static void
on_element_message (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  if (gst_message_has_name (msg, "cudaipcsrc-connected") ||
      gst_message_has_name (msg, "cudaipcsrc-reconnected")) {
    g_mutex_lock (&got.lock);
    g_array_append_val (got.connected, got.pts->len);
    g_mutex_unlock (&got.lock);
  }
}

#define launch(desc) cudaipc_test_launch ("%s", (desc))
#define stop(pipe) cudaipc_test_stop (pipe)

/* A consumer of @sock into an appsink that records each frame in got. */
static GstElement *
consumer (const gchar * props)
{
  g_autofree gchar *desc = g_strdup_printf ("cuipcsrc name=src "
      "socket-path=%s %s ! appsink name=out sync=false", sock, props);
  GstElement *c = launch (desc), *out;
  GstAppSinkCallbacks cb = { 0 };
  GstBus *bus;

  cb.new_sample = on_sample;
  out = gst_bin_get_by_name (GST_BIN (c), "out");
  gst_app_sink_set_callbacks (GST_APP_SINK (out), &cb, NULL, NULL);
  gst_object_unref (out);
  bus = gst_element_get_bus (c);
  gst_bus_enable_sync_message_emission (bus);
  g_signal_connect (bus, "sync-message::element",
      G_CALLBACK (on_element_message), NULL);
  gst_object_unref (bus);
  fail_if (gst_element_set_state (c, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return c;
}

/* Frames a second later than they were captured. */
static GstPadProbeReturn
stamp_ahead (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));

  GST_BUFFER_PTS (buf) += GST_SECOND;
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

/* A live producer of 30 frames a second on @sock, the sink's @props set;
 * with @ahead, its frames stamped a second after they were captured. */
static GstElement *
live_producer (const gchar * props, gboolean ahead)
{
  g_autofree gchar *desc = g_strdup_printf ("videotestsrc is-live=true ! "
      CAPS " ! cuipcsink name=sink backend=host socket-path=%s %s", sock,
      props);
  GstElement *p = launch (desc);

  if (ahead) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
    GstPad *pad = gst_element_get_static_pad (sink, "sink");

    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_ahead, NULL, NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
  }
  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return p;
}

/* Waits until got holds @n frames, at most @timeout_ms. */
static void
wait_frames (guint n, gint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + timeout_ms * 1000;

  while (frames_got () < n && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  fail_unless (frames_got () >= n, "%u frames of %u within %d ms",
      frames_got (), n, timeout_ms);
}

#define FRAMES_EACH 15
/* the longest frame of CAPS (videotestsrc's alternate with a ns less) */
#define FRAME_DURATION 33333334

/* The producers of the successive connections: frames published 100 ms
 * after their PTS, so that the first ones the consumer gets are from
 * before it started; frames stamped a second ahead of the clock; two that
 * stamp as they capture, the first of them behind the frames before it. */
static const struct
{
  const gchar *props;
  gboolean ahead;
} producers[] = {
  {"ts-offset=100000000", FALSE},
  {"sync=false", TRUE},
  {"", FALSE},
  {"", FALSE},
};

#define CONNECTIONS G_N_ELEMENTS (producers)

GST_START_TEST (test_clock_pts_increase)
{
  GstElement *p, *c;
  guint bad = 0;

  p = live_producer (producers[0].props, producers[0].ahead);
  g_usleep (300 * 1000);
  c = consumer ("reconnect-timeout=0");
  for (guint i = 0; i < CONNECTIONS; i++) {
    wait_frames ((i + 1) * FRAMES_EACH, 5000);
    if (i + 1 < CONNECTIONS) {
      stop (p);
      p = live_producer (producers[i + 1].props, producers[i + 1].ahead);
    }
  }
  stop (c);
  stop (p);

  g_mutex_lock (&got.lock);
  fail_unless_equals_int (got.connected->len, CONNECTIONS);
  for (guint k = 0; k < got.connected->len; k++) {
    guint first = g_array_index (got.connected, guint, k);

    g_print ("timestamps: connection %u, frames from %u:", k, first);
    for (guint i = first; i < first + 3 && i < got.pts->len; i++)
      g_print (" %" GST_TIME_FORMAT,
          GST_TIME_ARGS (g_array_index (got.pts, GstClockTime, i)));
    g_print ("\n");
  }
  for (guint i = 0; i < got.pts->len; i++) {
    GstClockTime pts = g_array_index (got.pts, GstClockTime, i);
    GstClockTime duration = g_array_index (got.duration, GstClockTime, i);
    GstClockTime prev;

    fail_unless (GST_CLOCK_TIME_IS_VALID (pts), "frame %u has no PTS", i);
    /* a frame placed later than its time lasts less, a millisecond at
     * least */
    fail_unless (duration >= GST_MSECOND && duration <= FRAME_DURATION,
        "frame %u lasts %" G_GUINT64_FORMAT " ns", i, duration);
    if (i == 0)
      continue;
    /* a millisecond apart at least: what a Matroska file tells apart */
    prev = g_array_index (got.pts, GstClockTime, i - 1);
    if (pts < prev + GST_MSECOND) {
      g_print ("timestamps: frame %u at %" GST_TIME_FORMAT ", frame %u at %"
          GST_TIME_FORMAT "\n", i - 1, GST_TIME_ARGS (prev), i,
          GST_TIME_ARGS (pts));
      bad++;
    }
  }
  fail_unless_equals_int (bad, 0);
  g_mutex_unlock (&got.lock);
}

GST_END_TEST;

#define PT_FRAMES 10
#define PT_STEP (100 * GST_MSECOND)

/* The producer's segment before frame @i: a new one each time, its start
 * far from its running time. */
static void
producer_segment (guint i, GstSegment * seg)
{
  gst_segment_init (seg, GST_FORMAT_TIME);
  seg->start = (i + 1) * 10 * GST_SECOND + 7 * i;
  seg->time = seg->start + GST_SECOND;
  seg->position = seg->start;
  seg->base = i * PT_STEP + 13 * i;
}

GST_START_TEST (test_passthrough_running_time)
{
  GstElement *c, *sink;
  GstHarness *h;
  GstClock *clock;
  GstClockTime base_p, base_c, rt_p[PT_FRAMES], pts_p[PT_FRAMES];
  GstSegment seg_p[PT_FRAMES];
  gint64 moved;

  /* the consumer first, waiting for its producer */
  c = consumer ("timestamp-mode=passthrough max-held=0 connect-timeout=5000");

  sink = gst_element_factory_make ("cuipcsink", NULL);
  fail_unless (sink != NULL);
  g_object_set (sink, "socket-path", sock, "wait-for-connection", TRUE, NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  h = gst_harness_new_with_element (sink, "sink", NULL);
  gst_harness_set_src_caps_str (h, CAPS);
  /* the producer's pipeline: the system clock, started 200 ms from now */
  gst_harness_use_systemclock (h);
  clock = gst_system_clock_obtain ();
  base_p = gst_clock_get_time (clock) + 200 * GST_MSECOND;
  gst_object_unref (clock);
  gst_element_set_base_time (sink, base_p);

  for (guint i = 0; i < PT_FRAMES; i++) {
    GstBuffer *buf = gst_harness_create_buffer (h, 160 * 120 * 3 / 2);

    producer_segment (i, &seg_p[i]);
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg_p[i])));
    pts_p[i] = seg_p[i].start + GST_MSECOND * i;
    rt_p[i] = gst_segment_to_running_time (&seg_p[i], GST_FORMAT_TIME,
        pts_p[i]);
    GST_BUFFER_PTS (buf) = pts_p[i];
    GST_BUFFER_DURATION (buf) = 33 * GST_MSECOND;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  wait_frames (PT_FRAMES, 5000);
  base_c = gst_element_get_base_time (c);
  stop (c);
  gst_harness_teardown (h);
  gst_object_unref (sink);

  g_mutex_lock (&got.lock);
  fail_unless_equals_int (got.pts->len, PT_FRAMES);
  moved = (gint64) g_array_index (got.running, GstClockTime, 0) -
      (gint64) rt_p[0];
  g_print ("timestamps: the producer's running time is %" G_GINT64_FORMAT
      " ns later here; the two base times are %" G_GINT64_FORMAT
      " ns apart\n", moved, (gint64) base_p - (gint64) base_c);
  for (guint i = 0; i < PT_FRAMES; i++) {
    const GstSegment *seg = &g_array_index (got.segments, GstSegment, i);
    GstClockTime rt = g_array_index (got.running, GstClockTime, i);

    g_print ("timestamps: frame %u: PTS %" GST_TIME_FORMAT ", running time %"
        GST_TIME_FORMAT " (the producer's %" GST_TIME_FORMAT ", %"
        G_GINT64_FORMAT " ns off)\n", i,
        GST_TIME_ARGS (g_array_index (got.pts, GstClockTime, i)),
        GST_TIME_ARGS (rt), GST_TIME_ARGS (rt_p[i]),
        (gint64) rt - (gint64) rt_p[i] - moved);
    fail_unless_equals_uint64 (g_array_index (got.pts, GstClockTime, i),
        pts_p[i]);
    /* the producer's segment, its running time moved (base, offset) */
    fail_unless_equals_int (seg->format, GST_FORMAT_TIME);
    fail_unless_equals_uint64 (seg->start, seg_p[i].start);
    fail_unless_equals_uint64 (seg->stop, seg_p[i].stop);
    fail_unless_equals_uint64 (seg->time, seg_p[i].time);
    fail_unless (seg->rate == seg_p[i].rate);
    fail_unless (seg->applied_rate == seg_p[i].applied_rate);
    fail_unless_equals_int (seg->flags, seg_p[i].flags);
    fail_unless (GST_CLOCK_TIME_IS_VALID (rt));
    fail_unless_equals_int64 ((gint64) rt - (gint64) rt_p[i], moved);
  }
  /* moved by what the two base times differ, as far as two clock readings
   * of each process tell */
  fail_unless (ABS (moved - ((gint64) base_p - (gint64) base_c)) <
      5 * GST_MSECOND, "moved %" G_GINT64_FORMAT " ns", moved);
  g_mutex_unlock (&got.lock);
}

GST_END_TEST;

static Suite *
timestamps_suite (void)
{
  Suite *s = suite_create ("timestamps");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_clock_pts_increase);
  tcase_add_test (tc, test_passthrough_running_time);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "timestamps",
  .suite = timestamps_suite,
};
