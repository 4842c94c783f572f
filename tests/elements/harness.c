/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: cuipcsink and cuipcsrc driven through gst-check's
 * GstHarness, in one process, with the host backend: the sink's counters
 * for frames pushed into it, a sink and a source meeting on a socket in a
 * temporary folder (frames byte for byte, caps, custom events and EOS in
 * order), state changes of each element and the settings that apply only
 * when it starts, and the sink on the cuda backend: the error a user sees
 * where no CUDA driver or device is found, and frames on the GPU where one
 * is.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gmodule.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "device/device.h"
#include "common/error.h"
#include "test-main.h"
#include "test-pattern.h"
#include "test-util.h"

#define CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"
#define FRAME_DURATION (GST_SECOND / 30)
/* how long a test waits for the other side before it fails */
#define WAIT_US (5 * G_USEC_PER_SEC)

static gchar *sock;
static gchar *other_sock;

static void
setup (void)
{
  sock = cudaipc_test_socket_path ("harness", "h.sock");
  other_sock = cudaipc_test_path_beside (sock, "other.sock");
}

static void
teardown (void)
{
  g_unlink (other_sock);
  g_clear_pointer (&other_sock, g_free);
  cudaipc_test_socket_remove (&sock);
}

static void
frame_info (GstVideoInfo * info)
{
  GstCaps *caps = gst_caps_from_string (CAPS);

  fail_unless (gst_video_info_from_caps (info, caps));
  gst_caps_unref (caps);
}

/* A harness around a cuipcsink on @path with the host backend, playing,
 * with CAPS on its source pad (the harness turns sync and async off). */
static GstHarness *
sink_harness_new (const gchar * path, GstElement ** sink_out)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GstHarness *h;

  fail_unless (sink != NULL);
  g_object_set (sink, "socket-path", path, "wait-for-connection", FALSE,
      NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  h = gst_harness_new_with_element (sink, "sink", NULL);
  gst_harness_set_src_caps_str (h, CAPS);
  if (sink_out)
    *sink_out = sink;
  else
    gst_object_unref (sink);
  return h;
}

/* A harness around a cuipcsrc for @path, not started yet: a source
 * connects when it starts. The producer's timestamps are kept, so that
 * each frame can be recognised by its PTS. */
static GstHarness *
src_harness_new (const gchar * path, GstElement ** src_out)
{
  GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);
  GstHarness *h;

  fail_unless (src != NULL);
  g_object_set (src, "socket-path", path, "connect-timeout", 5000,
      "reconnect", FALSE, "client-name", "harness", NULL);
  gst_util_set_object_arg (G_OBJECT (src), "timestamp-mode", "passthrough");
  h = gst_harness_new_with_element (src, NULL, "src");
  if (src_out)
    *src_out = src;
  else
    gst_object_unref (src);
  return h;
}

/* Frame @i: the test pattern of (@i, 0), PTS, duration and offset from @i. */
static GstBuffer *
make_frame (GstHarness * h, const GstVideoInfo * info, guint i)
{
  GstBuffer *buf = gst_harness_create_buffer (h, GST_VIDEO_INFO_SIZE (info));
  GstMapInfo map;

  fail_unless (buf != NULL);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  fail_unless_equals_uint64 (map.size, GST_VIDEO_INFO_SIZE (info));
  cudaipc_test_fill_pattern (map.data, map.size, i, 0);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  GST_BUFFER_OFFSET (buf) = i;
  return buf;
}

/* Checks that @buf is frame @i, byte for byte, and takes it. */
static void
check_frame (GstBuffer * buf, const GstVideoInfo * info, guint i)
{
  GstMapInfo map;
  gssize bad;

  fail_unless (buf != NULL, "frame %u never came", i);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (buf), i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), i * FRAME_DURATION);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (buf), FRAME_DURATION);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, GST_VIDEO_INFO_SIZE (info));
  bad = cudaipc_test_check_pattern (map.data, map.size, i, 0);
  fail_unless (bad < 0, "frame %u differs at byte %" G_GSSIZE_FORMAT, i, bad);
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);
}

/* The next buffer out of @h, or NULL after WAIT_US. */
static GstBuffer *
pull_frame (GstHarness * h)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  GstBuffer *buf;

  while ((buf = gst_harness_try_pull (h)) == NULL &&
      g_get_monotonic_time () < deadline)
    g_usleep (1000);
  return buf;
}

/* The next event out of @h other than stream-start, caps and segment, or
 * NULL after WAIT_US. */
static GstEvent *
pull_event (GstHarness * h)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;

  while (g_get_monotonic_time () < deadline) {
    GstEvent *event = gst_harness_try_pull_event (h);

    if (event == NULL) {
      g_usleep (1000);
      continue;
    }
    switch (GST_EVENT_TYPE (event)) {
      case GST_EVENT_STREAM_START:
      case GST_EVENT_CAPS:
      case GST_EVENT_SEGMENT:
        gst_event_unref (event);
        break;
      default:
        return event;
    }
  }
  return NULL;
}

/* Waits until @sink counts @n consumers; returns the last count. */
static guint
wait_clients (GstElement * sink, guint n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  guint now = G_MAXUINT;

  for (;;) {
    g_object_get (sink, "num-clients", &now, NULL);
    if (now == n || g_get_monotonic_time () >= deadline)
      return now;
    g_usleep (2000);
  }
}

/* The first ERROR on @bus, or NULL when none was posted. */
static GstMessage *
pop_error (GstBus * bus)
{
  return gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
}

/* After an element's own error, the generic one its base class posts as
 * it stops (@wait: how long to wait for it): for a failed start, a CORE
 * STATE_CHANGE error; for an error in the streaming thread, STREAM FAILED
 * ("Internal data stream error"). Nothing else may follow. */
static void
drop_follow_up_errors (GstBus * bus, GQuark domain, gint code,
    GstClockTime wait)
{
  GstMessage *msg;

  while ((msg = gst_bus_timed_pop_filtered (bus, wait,
              GST_MESSAGE_ERROR)) != NULL) {
    GError *err = NULL;

    gst_message_parse_error (msg, &err, NULL);
    fail_unless (g_error_matches (err, domain, code), "another error: %s",
        err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
  }
}

static void
drop_fallback_errors (GstBus * bus)
{
  drop_follow_up_errors (bus, GST_CORE_ERROR, GST_CORE_ERROR_STATE_CHANGE, 0);
}

static void
drop_flow_errors (GstBus * bus)
{
  drop_follow_up_errors (bus, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
      200 * GST_MSECOND);
}

static void
fail_on_error (GstBus * bus, const gchar * when)
{
  GstMessage *msg = pop_error (bus);
  GError *err = NULL;

  if (msg != NULL)
    gst_message_parse_error (msg, &err, NULL);
  fail_unless (msg == NULL, "an error %s: %s", when, err ? err->message : "");
}

/* 1. The sink alone: every frame pushed is written into a slot by the
 * harness (the sink's in-place pool) and published, to nobody. */
GST_START_TEST (test_sink_counts_frames)
{
  const guint n = 10;
  GstVideoInfo info;
  GstElement *sink;
  GstStructure *st = NULL;
  GstHarness *h;
  gchar *line;
  guint clients = G_MAXUINT, st_clients = G_MAXUINT;
  guint64 v = G_MAXUINT64;

  frame_info (&info);
  line = g_strdup_printf ("cuipcsink name=sink socket-path=%s "
      "backend=host wait-for-connection=false sync=false", sock);
  h = gst_harness_new_parse (line);
  g_free (line);
  fail_unless (h != NULL);
  sink = gst_bin_get_by_name (GST_BIN (h->element), "sink");
  fail_unless (sink != NULL);
  fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS),
      "the playing sink does not listen on %s", sock);
  gst_harness_set_src_caps_str (h, CAPS);

  for (guint i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (h, &info, i)),
        GST_FLOW_OK);

  g_object_get (sink, "stats", &st, "num-clients", &clients, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint64 (st, "frames-published", &v));
  fail_unless_equals_uint64 (v, n);
  fail_unless (gst_structure_get_uint64 (st, "frames-dropped", &v));
  fail_unless_equals_uint64 (v, 0);
  /* the harness writes into the sink's in-place pool, whose slots exist
   * from the caps on: no frame is copied, the first neither */
  fail_unless (gst_structure_get_uint64 (st, "copies-from-host", &v));
  fail_unless_equals_uint64 (v, 0);
  fail_unless (gst_structure_get_uint64 (st, "frames-in-place", &v));
  fail_unless_equals_uint64 (v, n);
  fail_unless (gst_structure_get_uint64 (st, "copies-from-gpu", &v));
  fail_unless_equals_uint64 (v, 0);
  /* no CUDA with the host backend */
  fail_unless (gst_structure_get_uint64 (st, "driver-calls", &v));
  fail_unless_equals_uint64 (v, 0);
  fail_unless (gst_structure_get_uint (st, "clients", &st_clients));
  fail_unless_equals_int (st_clients, 0);
  fail_unless_equals_int (clients, 0);
  gst_structure_free (st);

  gst_object_unref (sink);
  gst_harness_teardown (h);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS),
      "the stopped sink left %s behind", sock);
}

GST_END_TEST;

/* 2. What the source receives: the order in which buffers and events reach
 * the source harness's pad, as words ("f<offset>", a custom event's name,
 * "caps", "segment", "eos"). */
typedef struct
{
  GMutex lock;
  GString *log;
} OrderLog;

static GstPadProbeReturn
log_order (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  OrderLog *o = user_data;
  gchar *word = NULL;

  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER) {
    word = g_strdup_printf ("f%" G_GUINT64_FORMAT,
        GST_BUFFER_OFFSET (GST_PAD_PROBE_INFO_BUFFER (info)));
  } else {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);

    if (GST_EVENT_TYPE (event) == GST_EVENT_EOS ||
        GST_EVENT_TYPE (event) == GST_EVENT_CAPS ||
        GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT)
      word = g_strdup (GST_EVENT_TYPE_NAME (event));
    else if (GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM ||
        GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM_STICKY ||
        GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_BOTH)
      word = g_strdup (gst_structure_get_name (gst_event_get_structure
              (event)));
  }
  if (word) {
    g_mutex_lock (&o->lock);
    g_string_append_printf (o->log, "%s%s", o->log->len ? " " : "", word);
    g_mutex_unlock (&o->lock);
    g_free (word);
  }
  return GST_PAD_PROBE_OK;
}

/* A text that must survive serialisation (spaces, commas, quotes). */
#define EVENT_TEXT "spaces, commas; and \"quotes\""

/* Pushes a custom event @name of @type with fields seq and text into @h. */
static void
push_custom (GstHarness * h, GstEventType type, const gchar * name, gint seq)
{
  fail_unless (gst_harness_push_event (h, gst_event_new_custom (type,
              gst_structure_new (name, "seq", G_TYPE_INT, seq, "text",
                  G_TYPE_STRING, EVENT_TEXT, NULL))));
}

static void
check_custom_event (GstEvent * event, GstEventType type, const gchar * name,
    gint seq)
{
  const GstStructure *s;
  gint got = -1;

  fail_unless (event != NULL, "no %s event came out", name);
  fail_unless_equals_string (GST_EVENT_TYPE_NAME (event),
      gst_event_type_get_name (type));
  s = gst_event_get_structure (event);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_name (s), name);
  fail_unless (gst_structure_get_int (s, "seq", &got));
  fail_unless_equals_int (got, seq);
  fail_unless_equals_string (gst_structure_get_string (s, "text"),
      EVENT_TEXT);
  gst_event_unref (event);
}

GST_START_TEST (test_sink_to_src)
{
  GstHarness *hsink, *hsrc;
  GstElement *sink, *src;
  GstVideoInfo info;
  GstCaps *caps, *want;
  GstStructure *st = NULL;
  const GValue *clients;
  GstEvent *event;
  OrderLog order;
  gchar *log;
  guint64 v;

  frame_info (&info);
  g_mutex_init (&order.lock);
  order.log = g_string_new (NULL);

  hsink = sink_harness_new (sock, &sink);
  hsrc = src_harness_new (sock, &src);
  gst_pad_add_probe (hsrc->sinkpad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, log_order, &order, NULL);
  gst_harness_play (hsrc);
  /* a frame published before the handshake is done would go to nobody */
  fail_unless_equals_int (wait_clients (sink, 1), 1);

  /* one event before the first frame: the source holds it until that
   * frame, after the caps and the segment */
  push_custom (hsink, GST_EVENT_CUSTOM_DOWNSTREAM, "harness-pre", 0);
  /* and a sticky one, which the source cannot leave to basesrc's queue:
   * it must still come after the segment */
  push_custom (hsink, GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, "harness-sticky", 9);
  fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink, &info,
              0)), GST_FLOW_OK);
  check_frame (pull_frame (hsrc), &info, 0);

  /* two events between frames 0 and 1, one of each custom type the sink
   * forwards */
  push_custom (hsink, GST_EVENT_CUSTOM_DOWNSTREAM, "harness-a", 1);
  push_custom (hsink, GST_EVENT_CUSTOM_BOTH, "harness-b", 2);
  fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink, &info,
              1)), GST_FLOW_OK);
  check_frame (pull_frame (hsrc), &info, 1);
  fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink, &info,
              2)), GST_FLOW_OK);
  check_frame (pull_frame (hsrc), &info, 2);
  fail_unless (gst_harness_push_event (hsink, gst_event_new_eos ()));

  /* the caps the source negotiated: the producer's, in system memory */
  caps = gst_pad_get_current_caps (hsrc->sinkpad);
  fail_unless (caps != NULL, "the source set no caps");
  want = gst_caps_from_string (CAPS);
  fail_unless (gst_caps_is_fixed (caps));
  fail_unless (gst_caps_features_is_equal (gst_caps_get_features (caps, 0),
          GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY), "caps %" GST_PTR_FORMAT,
      caps);
  fail_unless (gst_caps_is_equal (caps, want), "caps %" GST_PTR_FORMAT
      ", expected %" GST_PTR_FORMAT, caps, want);
  gst_caps_unref (want);
  gst_caps_unref (caps);

  /* the events in order, then EOS */
  check_custom_event (pull_event (hsrc), GST_EVENT_CUSTOM_DOWNSTREAM,
      "harness-pre", 0);
  check_custom_event (pull_event (hsrc), GST_EVENT_CUSTOM_DOWNSTREAM_STICKY,
      "harness-sticky", 9);
  check_custom_event (pull_event (hsrc), GST_EVENT_CUSTOM_DOWNSTREAM,
      "harness-a", 1);
  check_custom_event (pull_event (hsrc), GST_EVENT_CUSTOM_BOTH, "harness-b",
      2);
  event = pull_event (hsrc);
  fail_unless (event != NULL, "no EOS came out of the source");
  fail_unless_equals_int (GST_EVENT_TYPE (event), GST_EVENT_EOS);
  gst_event_unref (event);
  fail_unless (gst_harness_try_pull (hsrc) == NULL, "a frame after EOS");

  /* and between the frames where they were pushed (the probe saw EOS
   * before the harness queued it); the sticky event made the source push
   * the segment ahead of the events, and basesrc pushes it again before
   * the frame */
  g_mutex_lock (&order.lock);
  log = g_strdup (order.log->str);
  g_mutex_unlock (&order.lock);
  fail_unless_equals_string (log,
      "caps segment harness-pre harness-sticky segment f0 harness-a "
      "harness-b f1 f2 eos");
  g_free (log);

  /* both sides counted three frames, none dropped */
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "frames-published"), 3);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "frames-dropped"), 0);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (src,
          "frames-received"), 3);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (src,
          "frames-pushed"), 3);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (src,
          "frames-dropped"), 0);
  g_object_get (sink, "stats", &st, NULL);
  clients = gst_structure_get_value (st, "client-stats");
  fail_unless (clients != NULL);
  fail_unless_equals_int (gst_value_array_get_size (clients), 1);
  {
    const GstStructure *c =
        gst_value_get_structure (gst_value_array_get_value (clients, 0));

    fail_unless_equals_string (gst_structure_get_string (c, "name"),
        "harness");
    fail_unless (gst_structure_get_uint64 (c, "frames-sent", &v));
    fail_unless_equals_uint64 (v, 3);
  }
  gst_structure_free (st);

  gst_harness_teardown (hsrc);
  fail_unless_equals_int (wait_clients (sink, 0), 0);
  gst_harness_teardown (hsink);
  gst_object_unref (src);
  gst_object_unref (sink);
  g_string_free (order.log, TRUE);
  g_mutex_clear (&order.lock);
}

GST_END_TEST;

/* 3. State changes. */

/* Sets @element to each state of @states in turn, checking what
 * gst_element_set_state() returns and that the state was reached. */
static void
walk_states (GstElement * element, const GstState * states, guint n)
{
  for (guint i = 0; i < n; i++) {
    GstStateChangeReturn ret = gst_element_set_state (element, states[i]);
    GstState state = GST_STATE_VOID_PENDING;

    fail_if (ret == GST_STATE_CHANGE_FAILURE, "%s to %s failed",
        GST_OBJECT_NAME (element), gst_element_state_get_name (states[i]));
    fail_if (ret == GST_STATE_CHANGE_ASYNC, "%s to %s was async",
        GST_OBJECT_NAME (element), gst_element_state_get_name (states[i]));
    fail_if (gst_element_get_state (element, &state, NULL, 0) ==
        GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int (state, states[i]);
  }
}

static const GstState up[] = { GST_STATE_READY, GST_STATE_PAUSED,
  GST_STATE_PLAYING
};
static const GstState to_null[] = { GST_STATE_NULL };

GST_START_TEST (test_sink_state_cycles)
{
  GstBus *bus = gst_bus_new ();
  GstVideoInfo info;
  GstElement *sink;
  GstHarness *h;

  frame_info (&info);
  h = sink_harness_new (sock, &sink);
  gst_element_set_bus (sink, bus);
  walk_states (sink, to_null, 1);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));

  for (guint cycle = 0; cycle < 3; cycle++) {
    walk_states (sink, up, 1);
    /* the sink listens from READY on */
    fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS), "cycle %u", cycle);
    walk_states (sink, up + 1, 2);

    /* a new stream into the restarted sink; its counters start again */
    fail_unless (gst_harness_push_event (h,
            gst_event_new_stream_start ("harness-cycle")));
    gst_harness_set_src_caps_str (h, CAPS);
    for (guint i = 0; i <= cycle; i++)
      fail_unless_equals_int (gst_harness_push (h, make_frame (h, &info, i)),
          GST_FLOW_OK);
    fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
            "frames-published"), cycle + 1);
    fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
            "copies-from-host") + cudaipc_test_stats_uint64 (sink,
            "frames-in-place"), cycle + 1);

    walk_states (sink, to_null, 1);
    fail_if (g_file_test (sock, G_FILE_TEST_EXISTS), "cycle %u", cycle);
    /* the stopped sink still shows the last run's counters */
    fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
            "frames-published"), cycle + 1);
    fail_on_error (bus, "while the sink changed state");
  }

  gst_element_set_bus (sink, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Counts the element messages named @name posted on @bus within @ms. */
static guint
count_messages (GstBus * bus, const gchar * name, guint ms)
{
  gint64 deadline = g_get_monotonic_time () + ms * G_TIME_SPAN_MILLISECOND;
  guint n = 0;
  gint64 now;

  while ((now = g_get_monotonic_time ()) < deadline) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus,
        (deadline - now) * GST_USECOND, GST_MESSAGE_ELEMENT);

    if (msg == NULL)
      break;
    if (gst_message_has_name (msg, name))
      n++;
    gst_message_unref (msg);
  }
  return n;
}

/* socket-path, backend, ring-size and the other GST_PARAM_MUTABLE_READY
 * settings, and stats-interval ("read when the sink starts",
 * docs/elements.md), apply when the sink starts: changed while it runs,
 * they do not touch the running sink. */
GST_START_TEST (test_sink_settings_apply_at_start)
{
  const gchar *ready_only[] = { "socket-path", "socket-mode", "backend",
    "device-id", "ring-size", "allowed-users", "allowed-groups",
    "stats-interval", NULL
  };
  const gchar *while_playing[] = { "on-full", "full-timeout",
    "wait-for-connection", "consumer-timeout", NULL
  };
  GstBus *bus = gst_bus_new ();
  GstHarness *hsink, *hsrc;
  GstElement *sink;
  GstVideoInfo info;

  frame_info (&info);
  hsink = sink_harness_new (sock, &sink);
  for (guint i = 0; ready_only[i]; i++) {
    GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (sink),
        ready_only[i]);

    fail_unless (ps != NULL);
    fail_unless (ps->flags & GST_PARAM_MUTABLE_READY, "%s", ready_only[i]);
  }
  for (guint i = 0; while_playing[i]; i++) {
    GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (sink),
        while_playing[i]);

    fail_unless (ps != NULL);
    fail_unless (ps->flags & GST_PARAM_MUTABLE_PLAYING, "%s",
        while_playing[i]);
  }

  gst_element_set_bus (sink, bus);
  g_object_set (sink, "socket-path", other_sock, "stats-interval", 20, NULL);
  /* the running sink still listens where it started, and posts no stats */
  fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS));
  fail_if (g_file_test (other_sock, G_FILE_TEST_EXISTS));
  fail_unless_equals_int (count_messages (bus, "cudaipcsink-stats", 150), 0);
  hsrc = src_harness_new (sock, NULL);
  gst_harness_play (hsrc);
  fail_unless_equals_int (wait_clients (sink, 1), 1);
  fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink, &info,
              0)), GST_FLOW_OK);
  check_frame (pull_frame (hsrc), &info, 0);
  gst_harness_teardown (hsrc);
  fail_unless_equals_int (wait_clients (sink, 0), 0);

  /* restarted, it takes both */
  walk_states (sink, to_null, 1);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
  gst_bus_set_flushing (bus, TRUE);
  gst_bus_set_flushing (bus, FALSE);
  walk_states (sink, up, 3);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
  fail_unless (g_file_test (other_sock, G_FILE_TEST_EXISTS));
  fail_unless (count_messages (bus, "cudaipcsink-stats", 500) > 0,
      "no cudaipcsink-stats after the restart");
  fail_on_error (bus, "in the sink");

  gst_element_set_bus (sink, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_harness_teardown (hsink);
  fail_if (g_file_test (other_sock, G_FILE_TEST_EXISTS));
}

GST_END_TEST;

/* The source through its states a few times with a producer present: a
 * live source, it connects in its streaming thread once it plays (never in
 * a state change), disconnects when it stops, and receives frames each
 * time it plays. socket-path changed while it runs applies at its next
 * start, when no producer there is an error posted from the streaming
 * thread after connect-timeout, the state change itself returning at
 * once. */
GST_START_TEST (test_src_state_cycles)
{
  const GstState down[] = { GST_STATE_PAUSED, GST_STATE_READY,
    GST_STATE_NULL
  };
  GstBus *bus = gst_bus_new ();
  GstHarness *hsink, *hsrc;
  GstElement *sink, *src;
  GstVideoInfo info;
  GstMessage *msg;
  GError *err = NULL;
  gint64 t0;

  frame_info (&info);
  hsink = sink_harness_new (sock, &sink);
  hsrc = src_harness_new (sock, &src);
  gst_element_set_bus (src, bus);

  for (guint cycle = 0; cycle < 3; cycle++) {
    walk_states (src, up, 1);
    fail_unless_equals_int (wait_clients (sink, 0), 0);
    /* a live source: no preroll, and no connection until it plays */
    fail_unless_equals_int (gst_element_set_state (src, GST_STATE_PAUSED),
        GST_STATE_CHANGE_NO_PREROLL);
    g_usleep (100 * 1000);
    fail_unless_equals_int (wait_clients (sink, 0), 0);
    walk_states (src, up + 2, 1);
    fail_unless_equals_int (wait_clients (sink, 1), 1);

    fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink,
                &info, cycle)), GST_FLOW_OK);
    check_frame (pull_frame (hsrc), &info, cycle);

    /* every other cycle straight to NULL, else a state at a time */
    if (cycle % 2 == 0)
      walk_states (src, down, 3);
    else
      walk_states (src, down + 2, 1);
    fail_unless_equals_int (wait_clients (sink, 0), 0);
    fail_on_error (bus, "while the source changed state");
  }
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "frames-published"), 3);

  /* changed while playing: the source stays with its producer */
  walk_states (src, up, 3);
  fail_unless_equals_int (wait_clients (sink, 1), 1);
  g_object_set (src, "socket-path", other_sock, "connect-timeout", 300,
      NULL);
  fail_unless_equals_int (gst_harness_push (hsink, make_frame (hsink, &info,
              3)), GST_FLOW_OK);
  check_frame (pull_frame (hsrc), &info, 3);
  walk_states (src, down + 2, 1);

  /* and applies at the next start: nobody listens there */
  for (guint i = 0; i < 2; i++) {
    t0 = g_get_monotonic_time ();
    walk_states (src, up, 3);
    fail_unless (g_get_monotonic_time () - t0 < 250 * 1000,
        "a state change waited for the producer");
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no error posted");
    fail_unless (g_get_monotonic_time () - t0 >= 250 * 1000,
        "gave up before connect-timeout");
    gst_message_parse_error (msg, &err, NULL);
    fail_unless (err->domain == GST_RESOURCE_ERROR, "%s", err->message);
    fail_unless (strstr (err->message, other_sock) != NULL,
        "unclear error: %s", err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
    drop_flow_errors (bus);
    walk_states (src, down + 2, 1);
  }
  fail_unless_equals_int (wait_clients (sink, 0), 0);

  gst_element_set_bus (src, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hsrc);
  gst_harness_teardown (hsink);
  gst_object_unref (src);
  gst_object_unref (sink);
}

GST_END_TEST;

/* 4. The cuda backend on device 0, checked on every machine against what
 * the library finds here: where libcuda.so.1 does not load, the sink
 * cannot start and says there is no driver; where it loads but device 0
 * does not open, the sink fails with the device's own error, which is
 * never the no-driver one; where the device opens, the sink starts, and
 * copies frames from host memory into slots on the GPU and publishes
 * them.
 *
 * The source opens a device only once a producer's HELLO names the
 * backend (gst/consumer/client-connect.c): with device-id=0 and no producer it
 * fails on the connection, and with a host-backend producer it opens no
 * CUDA at all. Its driver error needs a cuda-backend producer, so it is
 * not tested here (the gpu suite runs that backend).
 *
 * Where CUDA initialises, it does so in the process gst-check forked for
 * this test alone, which forks nothing after (CUDA state does not survive
 * a fork). */

/* No driver: the sink fails to start, twice, with the error that says so,
 * and takes no frame. */
static void
check_sink_without_driver (GstHarness * h, GstElement * sink, GstBus * bus,
    const GstVideoInfo * info)
{
  GstMessage *msg;
  GError *err = NULL;

  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = pop_error (bus);
  fail_unless (msg != NULL, "no error posted");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (sink));
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND), "%s", err->message);
  fail_unless (strstr (err->message, "no CUDA driver") != NULL,
      "unclear error: %s", err->message);
  fail_unless (strstr (err->message, "libcuda.so.1") != NULL,
      "unclear error: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  /* no other error, and no socket for consumers to find */
  drop_fallback_errors (bus);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));

  /* a frame pushed into the sink that did not start goes nowhere */
  fail_if (gst_harness_push (h, make_frame (h, info, 0)) == GST_FLOW_OK);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "frames-published"), 0);

  /* and it fails the same way again */
  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = pop_error (bus);
  fail_unless (msg != NULL, "no error posted the second time");
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "no CUDA driver") != NULL,
      "unclear error: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  drop_fallback_errors (bus);
}

/* A driver, but device 0 does not open (@why: the library's error): the
 * sink fails to start with that error, as a resource it did not find where
 * the device is missing or the driver did not initialise. */
static void
check_sink_without_device (GstElement * sink, GstBus * bus, const GError * why)
{
  gboolean missing = g_error_matches (why, CUDAIPC_ERROR,
      CUDAIPC_ERROR_NO_DRIVER) || g_error_matches (why, CUDAIPC_ERROR,
      CUDAIPC_ERROR_NO_DEVICE);
  GstMessage *msg;
  GError *err = NULL;

  g_print ("libcuda.so.1 loads here, device 0 does not open: %s\n",
      why->message);
  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = pop_error (bus);
  fail_unless (msg != NULL, "no error posted");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (sink));
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR, missing ?
          GST_RESOURCE_ERROR_NOT_FOUND : GST_RESOURCE_ERROR_OPEN_READ_WRITE),
      "%s", err->message);
  fail_unless_equals_string (err->message, why->message);
  /* what a machine without a driver would say instead */
  fail_if (strstr (err->message, "no CUDA driver") != NULL,
      "a driver loads here, yet: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  drop_fallback_errors (bus);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
}

/* A driver and a device: the stopped @sink starts, listens, copies frame
 * @i from host memory into a slot on the GPU (with driver calls, which the
 * host backend never makes) and publishes it, and stops. */
static void
run_sink_on_gpu (GstHarness * h, GstElement * sink, GstBus * bus,
    const GstVideoInfo * info, guint i)
{
  walk_states (sink, up, 3);
  fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS),
      "the sink on the cuda backend does not listen on %s", sock);
  fail_unless (gst_harness_push_event (h,
          gst_event_new_stream_start ("harness-cuda")));
  gst_harness_set_src_caps_str (h, CAPS);
  fail_unless_equals_int (gst_harness_push (h, make_frame (h, info, i)),
      GST_FLOW_OK);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "frames-published"), 1);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "copies-from-host"), 1);
  fail_unless_equals_uint64 (cudaipc_test_stats_uint64 (sink,
          "copies-from-gpu"), 0);
  fail_unless (cudaipc_test_stats_uint64 (sink, "driver-calls") > 0,
      "no driver calls: the frame did not go to the GPU");
  walk_states (sink, to_null, 1);
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
  fail_on_error (bus, "in the sink on the cuda backend");
}

GST_START_TEST (test_sink_cuda_backend)
{
  GModule *cuda = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY);
  gboolean driver = cuda != NULL;
  CudaIpcDevice *dev = NULL;
  GError *why = NULL;
  GstBus *bus;
  GstVideoInfo info;
  GstElement *sink;
  GstHarness *h;

  if (driver) {
    g_module_close (cuda);
    /* what the sink must do here: what the library does with device 0 */
    dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &why);
    /* the driver keeps descriptors of its own once it initialised */
    cudaipc_test_fds_recount ();
  }

  frame_info (&info);
  /* the harness plays what it is given: start with the host backend, then
   * switch the stopped sink to cuda */
  h = sink_harness_new (sock, &sink);
  walk_states (sink, to_null, 1);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "cuda");
  bus = gst_bus_new ();
  gst_element_set_bus (sink, bus);

  if (!driver) {
    check_sink_without_driver (h, sink, bus, &info);
  } else if (dev == NULL) {
    check_sink_without_device (sink, bus, why);
  } else {
    guint at_start = cudaipc_test_count_fds (), warm;

    g_print ("on %s\n", cudaipc_device_get_name (dev));
    run_sink_on_gpu (h, sink, bus, &info, 0);
    /* the first run made the driver open what it then keeps open: not the
     * sink's, and a second run must add none */
    warm = cudaipc_test_count_fds ();
    cudaipc_test_fds_keep (warm - at_start);
    run_sink_on_gpu (h, sink, bus, &info, 1);
    fail_unless_equals_int (cudaipc_test_count_fds (), warm);
  }

  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus (sink, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_harness_teardown (h);
  g_clear_error (&why);
  /* while the device is open, whose driver may close its own with it */
  cudaipc_test_fds_check ();
  g_clear_pointer (&dev, cudaipc_device_unref);
}

GST_END_TEST;

static Suite *
harness_suite (void)
{
  Suite *s = suite_create ("harness");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_sink_counts_frames);
  tcase_add_test (tc, test_sink_to_src);
  tcase_add_test (tc, test_sink_state_cycles);
  tcase_add_test (tc, test_sink_settings_apply_at_start);
  tcase_add_test (tc, test_src_state_cycles);
  tcase_add_test (tc, test_sink_cuda_backend);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "harness",
  .suite = harness_suite,
};
