/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: every frame by default (docs/design.md, Every frame or
 * the newest), host backend, producers and consumers as pipelines of this
 * process, every property of cuipcsrc at its default.
 *
 *  - A producer that is not live (videotestsrc) and a consumer slowed by
 *    identity sleep-time: every frame arrives, bit-exact against the same
 *    frames read without IPC, nothing dropped, no warning.
 *  - A live producer and downstream that keeps frames: a queue that holds
 *    ten, an appsink that keeps its newest three and is never pulled, and
 *    x264enc (where installed) with its look-ahead: every frame goes
 *    through, copies are counted, the producer drops no consumer and the
 *    consumer says nothing.
 *  - A live producer and a slow consumer: the oldest frames go, with a QoS
 *    message and one warning that names leaky-type.
 *  - cuipcsink's last sample holds no slot.
 *
 * Built again with CUDAIPC_TEST_GPU for the gpu suite: the producers'
 * rings on the GPU (cudaupload in front of the sink, backend=cuda), the
 * consumers' copies in GstCudaMemory (appsink takes CUDA memory) or in
 * system memory (videoconvert ! x264enc), compared row by row.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "ipc-nodes.h"
#include "test-launch.h"
#include "test-main.h"

#define CAPS "video/x-raw,format=NV12,width=160,height=120,framerate=30/1"
#define FRAMES 60

#ifdef CUDAIPC_TEST_GPU
#define TO_SINK "cudaupload ! video/x-raw(memory:CUDAMemory) ! "
#define BACKEND "cuda"
#else
#define TO_SINK ""
#define BACKEND "host"
#endif

static gchar *sock;

static void
setup (void)
{
  static gint n;

  sock = g_strdup_printf ("@cudaipc-every-%d-%d", (int) getpid (), n++);
}

static void
teardown (void)
{
  g_clear_pointer (&sock, g_free);
}

#define launch(...) cudaipc_test_launch (__VA_ARGS__)
#define stop(pipe) cudaipc_test_stop (pipe)

/* The checksum of every frame @appsink gives until EOS, or @timeout_s in
 * all, or @gap_s without one. */
static GPtrArray *
checksums_gap (GstElement * pipe, guint timeout_s, guint gap_s)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "out");
  GPtrArray *sums = g_ptr_array_new_with_free_func (g_free);
  gint64 end = g_get_monotonic_time () + timeout_s * G_TIME_SPAN_SECOND;
  GstSample *sample;

  fail_unless (sink != NULL);
  while (g_get_monotonic_time () < end &&
      (sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              gap_s * GST_SECOND)) != NULL) {
    GstBuffer *buf = gst_sample_get_buffer (sample);
    GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA1);
    GstVideoFrame frame;
    GstVideoInfo info;

    /* the pixels row by row: strides differ in GPU memory */
    fail_unless (gst_video_info_from_caps (&info,
            gst_sample_get_caps (sample)));
    fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
      const guint8 *row = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
      gint comp[GST_VIDEO_MAX_COMPONENTS];
      gsize width;

      gst_video_format_info_component (info.finfo, p, comp);
      width = GST_VIDEO_FRAME_COMP_WIDTH (&frame, comp[0]) *
          GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, comp[0]);
      for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]);
          y++, row += GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p))
        g_checksum_update (sum, row, width);
    }
    gst_video_frame_unmap (&frame);
    g_ptr_array_add (sums, g_strdup (g_checksum_get_string (sum)));
    g_checksum_free (sum);
    gst_sample_unref (sample);
  }
  gst_object_unref (sink);
  return sums;
}

static GPtrArray *
checksums (GstElement * pipe, guint timeout_s)
{
  return checksums_gap (pipe, timeout_s, 1);
}

/* Messages of @type on @pipe's bus so far whose text has @text (NULL:
 * any). */
static guint
count_messages (GstElement * pipe, GstMessageType type, const gchar * text)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, type)) != NULL) {
    GError *err = NULL;

    if (type == GST_MESSAGE_WARNING || type == GST_MESSAGE_ERROR) {
      if (type == GST_MESSAGE_WARNING)
        gst_message_parse_warning (msg, &err, NULL);
      else
        gst_message_parse_error (msg, &err, NULL);
      g_print ("every-frame: %s: %s\n", GST_OBJECT_NAME (msg->src),
          err->message);
    }
    if (text == NULL || (err && strstr (err->message, text)))
      n++;
    else if (type == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (msg), text))
      n++;
    g_clear_error (&err);
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  return n;
}

static guint64
stat_of (GstElement * pipe, const gchar * name, const gchar * field)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), name);
  GstStructure *st = NULL;
  guint64 v = 0;

  fail_unless (e != NULL);
  g_object_get (e, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "no %s", field);
  gst_structure_free (st);
  gst_object_unref (e);
  return v;
}

GST_START_TEST (test_not_live_slow_consumer_every_frame)
{
  GstElement *ref, *c, *p;
  GPtrArray *want, *got;

  /* the frames as they are without IPC */
  ref = launch ("videotestsrc pattern=ball animation-mode=frames "
      "num-buffers=%d ! " CAPS " ! appsink name=out sync=false", FRAMES);
  gst_element_set_state (ref, GST_STATE_PLAYING);
  want = checksums (ref, 30);
  stop (ref);
  fail_unless_equals_int (want->len, FRAMES);

  /* every property of the consumer at its default */
  c = launch ("cuipcsrc name=src socket-path=%s ! identity sleep-time=20000 "
      "! appsink name=out sync=false", sock);
  gst_element_set_state (c, GST_STATE_PLAYING);
  p = launch ("videotestsrc pattern=ball animation-mode=frames "
      "num-buffers=%d ! " CAPS " ! " TO_SINK "cuipcsink name=sink "
      "socket-path=%s backend=" BACKEND " wait-for-connection=true", FRAMES,
      sock);
  gst_element_set_state (p, GST_STATE_PLAYING);
  got = checksums (c, 60);
  g_print ("every-frame: not live, 20 ms a frame: %u of %u frames, %"
      G_GUINT64_FORMAT " dropped\n", got->len, FRAMES,
      stat_of (c, "src", "frames-dropped"));
  fail_unless_equals_int (got->len, FRAMES);
  for (guint i = 0; i < FRAMES; i++)
    fail_unless_equals_string (g_ptr_array_index (got, i),
        g_ptr_array_index (want, i));
  fail_unless_equals_uint64 (stat_of (c, "src", "frames-dropped"), 0);
  fail_unless_equals_uint64 (stat_of (p, "sink", "frames-dropped"), 0);
  fail_unless_equals_int (count_messages (c, GST_MESSAGE_WARNING, NULL), 0);
  fail_unless_equals_int (count_messages (p, GST_MESSAGE_WARNING, NULL), 0);
  g_ptr_array_unref (want);
  g_ptr_array_unref (got);
  stop (c);
  stop (p);
}

GST_END_TEST;

/* A live producer of @frames frames at 30/s, the consumer's pipeline
 * @downstream after cuipcsrc (whose last element is an appsink "out", or
 * a fakesink); TRUE where it ran. */
static void
hoarding_case (const gchar * downstream, guint frames, guint * out_frames,
    guint64 * copied)
{
  GstElement *c, *p;
  GPtrArray *got = NULL;
  GstElement *out;
  guint64 src_dropped, sink_dropped;
  guint lost, warned;
  gboolean eos = TRUE;

  c = launch ("cuipcsrc name=src socket-path=%s ! %s", sock, downstream);
  gst_element_set_state (c, GST_STATE_PLAYING);
  p = launch ("videotestsrc is-live=true pattern=ball num-buffers=%u ! "
      CAPS " ! " TO_SINK "cuipcsink name=sink socket-path=%s "
      "backend=" BACKEND " wait-for-connection=true", frames, sock);
  gst_element_set_state (p, GST_STATE_PLAYING);
  out = gst_bin_get_by_name (GST_BIN (c), "out");
  if (out && GST_IS_APP_SINK (out)) {
    /* an encoder says nothing until its look-ahead is full */
    got = checksums_gap (c, 60, 10);
    *out_frames = got->len;
    g_ptr_array_unref (got);
  } else {
    GstBus *bus = gst_element_get_bus (c);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

    eos = msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
    if (msg)
      gst_message_unref (msg);
    gst_object_unref (bus);
  }
  g_clear_object (&out);
  /* read, then both pipelines stopped, then checked: a failure leaves
   * nothing running for the tests after it (the gpu suite runs them in
   * one process) */
  *copied = stat_of (c, "src", "frames-copied");
  src_dropped = stat_of (c, "src", "frames-dropped");
  sink_dropped = stat_of (p, "sink", "frames-dropped");
  lost = count_messages (c, GST_MESSAGE_ELEMENT, "cudaipcsrc-producer-lost");
  warned = count_messages (c, GST_MESSAGE_WARNING, NULL) +
      count_messages (p, GST_MESSAGE_WARNING, NULL);
  stop (c);
  stop (p);
  fail_unless (eos, "no EOS");
  fail_unless_equals_uint64 (src_dropped, 0);
  fail_unless_equals_uint64 (sink_dropped, 0);
  fail_unless_equals_int (lost, 0);
  fail_unless_equals_int (warned, 0);
}

GST_START_TEST (test_live_queue_keeps_ten)
{
  guint n = 0;
  guint64 copied = 0;

  /* a queue that lets nothing through before it holds ten frames */
  hoarding_case ("queue min-threshold-buffers=10 ! appsink name=out "
      "sync=false", 90, &n, &copied);
  g_print ("every-frame: a queue holding 10: %u of 90 frames, %"
      G_GUINT64_FORMAT " copied\n", n, copied);
  fail_unless_equals_int (n, 90);
  fail_unless (copied > 0);
}

GST_END_TEST;

GST_START_TEST (test_live_appsink_keeps_newest)
{
  GstElement *c, *p, *out;
  guint64 copied;
  GstSample *sample;

  /* an application that keeps the newest three samples and looks at none
   * for two seconds: neither it nor the producer stalls, and it is never
   * dropped */
  c = launch ("cuipcsrc name=src socket-path=%s ! appsink name=out "
      "max-buffers=3 drop=true sync=false", sock);
  gst_element_set_state (c, GST_STATE_PLAYING);
  p = launch ("videotestsrc is-live=true num-buffers=90 ! " CAPS " ! "
      TO_SINK "cuipcsink name=sink socket-path=%s backend=" BACKEND " "
      "wait-for-connection=true", sock);
  gst_element_set_state (p, GST_STATE_PLAYING);
  g_usleep (2 * G_USEC_PER_SEC);
  out = gst_bin_get_by_name (GST_BIN (c), "out");
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (out), 5 * GST_SECOND);
  fail_unless (sample != NULL);
  gst_sample_unref (sample);
  gst_object_unref (out);
  copied = stat_of (c, "src", "frames-copied");
  g_print ("every-frame: an appsink keeping its newest 3: %" G_GUINT64_FORMAT
      " frames received, %" G_GUINT64_FORMAT " copied, producer published %"
      G_GUINT64_FORMAT "\n", stat_of (c, "src", "frames-received"), copied,
      stat_of (p, "sink", "frames-published"));
  fail_unless (copied > 0);
  fail_unless (stat_of (p, "sink", "frames-published") >= 45);
  fail_unless_equals_uint64 (stat_of (p, "sink", "frames-dropped"), 0);
  fail_unless_equals_int (count_messages (c, GST_MESSAGE_ELEMENT,
          "cudaipcsrc-producer-lost"), 0);
  fail_unless_equals_int (count_messages (p, GST_MESSAGE_WARNING, NULL), 0);
  stop (c);
  stop (p);
}

GST_END_TEST;

GST_START_TEST (test_live_x264enc_every_frame)
{
  GstElementFactory *x264 = gst_element_factory_find ("x264enc");
  guint n = 0;
  guint64 copied = 0;

  if (x264 == NULL || !gst_registry_check_feature_version
      (gst_registry_get (), "videoconvert", 1, 0, 0)) {
    g_print ("every-frame: skipped the x264enc case: no x264enc or "
        "videoconvert here\n");
    g_clear_object (&x264);
    return;
  }
  gst_object_unref (x264);
  /* x264enc keeps its look-ahead of input frames */
  hoarding_case ("videoconvert ! x264enc ! identity name=counted ! "
      "appsink name=out sync=false", 90, &n, &copied);
  g_print ("every-frame: x264enc at its defaults: %u of 90 frames "
      "encoded, %" G_GUINT64_FORMAT " copied\n", n, copied);
  fail_unless_equals_int (n, 90);
  fail_unless (copied > 0);
}

GST_END_TEST;

GST_START_TEST (test_live_slow_consumer_says_so)
{
  GstElement *c, *p;
  guint64 dropped;

  c = launch ("cuipcsrc name=src socket-path=%s ! identity "
      "sleep-time=100000 ! fakesink", sock);
  gst_element_set_state (c, GST_STATE_PLAYING);
  p = launch ("videotestsrc is-live=true num-buffers=60 ! " CAPS " ! "
      TO_SINK "cuipcsink name=sink socket-path=%s backend=" BACKEND " "
      "wait-for-connection=true", sock);
  gst_element_set_state (p, GST_STATE_PLAYING);
  g_usleep (3 * G_USEC_PER_SEC);
  dropped = stat_of (c, "src", "frames-dropped");
  g_print ("every-frame: a live stream read at 10 frames/s: %"
      G_GUINT64_FORMAT " dropped\n", dropped);
  fail_unless (dropped > 0);
  {
    GstBus *bus = gst_element_get_bus (c);
    GstMessage *msg;
    guint qos = 0, warned = 0;

    while ((msg = gst_bus_pop (bus)) != NULL) {
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_QOS) {
        GstFormat format;
        guint64 processed, lost;

        gst_message_parse_qos_stats (msg, &format, &processed, &lost);
        fail_unless_equals_int (format, GST_FORMAT_BUFFERS);
        fail_unless (lost > 0 && lost <= dropped);
        qos++;
      } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
        GError *err = NULL;
        gchar *debug = NULL;

        gst_message_parse_warning (msg, &err, &debug);
        g_print ("every-frame: warning: %s (%s)\n", err->message, debug);
        fail_unless (strstr (err->message, "of the live stream") != NULL);
        fail_unless (strstr (debug, "leaky-type=none") != NULL);
        warned++;
        g_clear_error (&err);
        g_free (debug);
      }
      gst_message_unref (msg);
    }
    gst_object_unref (bus);
    fail_unless (qos >= 1);
    /* at most one every 10 s */
    fail_unless_equals_int (warned, 1);
  }
  stop (c);
  stop (p);
}

GST_END_TEST;

/* A producer that writes in place behind a queue (which keeps slots lent
 * to it, from the first frame on: the ring is made at caps), and a
 * consumer that keeps its last eight frames: nobody waits on anybody for
 * good, every frame arrives. */
GST_START_TEST (test_in_place_behind_queue_consumer_keeps_eight)
{
  GstElement *c, *p, *out;
  GQueue kept = G_QUEUE_INIT;
  GstSample *sample;
  guint n = 0;

  c = launch ("cuipcsrc name=src socket-path=%s ! appsink name=out "
      "sync=false", sock);
  gst_element_set_state (c, GST_STATE_PLAYING);
  p = launch ("videotestsrc num-buffers=%d ! " CAPS " ! queue ! " TO_SINK
      "cuipcsink name=sink socket-path=%s backend=" BACKEND " "
      "wait-for-connection=true", 2 * FRAMES, sock);
  gst_element_set_state (p, GST_STATE_PLAYING);
  out = gst_bin_get_by_name (GST_BIN (c), "out");
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              5 * GST_SECOND)) != NULL) {
    n++;
    g_queue_push_tail (&kept, sample);
    while (g_queue_get_length (&kept) > 8)
      gst_sample_unref (g_queue_pop_head (&kept));
  }
  g_queue_clear_full (&kept, (GDestroyNotify) gst_sample_unref);
  gst_object_unref (out);
  g_print ("every-frame: in place behind a queue, the consumer keeping 8: "
      "%u of %d frames, %" G_GUINT64_FORMAT " copied\n", n, 2 * FRAMES,
      stat_of (c, "src", "frames-copied"));
  fail_unless_equals_int (n, 2 * FRAMES);
  fail_unless_equals_int (count_messages (c, GST_MESSAGE_ELEMENT,
          "cudaipcsrc-producer-lost"), 0);
  stop (c);
  stop (p);
}

GST_END_TEST;

GST_START_TEST (test_sink_last_sample_holds_no_slot)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  gboolean enabled = TRUE;

  fail_unless (sink != NULL);
  g_object_get (sink, "enable-last-sample", &enabled, NULL);
  fail_if (enabled);
  fail_if (gst_base_sink_is_last_sample_enabled (GST_BASE_SINK (sink)));
  g_object_set (sink, "enable-last-sample", TRUE, NULL);
  fail_unless (gst_base_sink_is_last_sample_enabled (GST_BASE_SINK (sink)));
  gst_object_unref (sink);
}

GST_END_TEST;

static Suite *
every_frame_suite (void)
{
  Suite *s = suite_create ("every-frame-" BACKEND);
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_not_live_slow_consumer_every_frame);
  tcase_add_test (tc, test_live_queue_keeps_ten);
  tcase_add_test (tc, test_live_appsink_keeps_newest);
  tcase_add_test (tc, test_live_x264enc_every_frame);
  tcase_add_test (tc, test_live_slow_consumer_says_so);
  tcase_add_test (tc, test_in_place_behind_queue_consumer_keeps_eight);
  tcase_add_test (tc, test_sink_last_sample_holds_no_slot);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "every-frame-" BACKEND,
  .suite = every_frame_suite,
#ifdef CUDAIPC_TEST_GPU
  .prepare = cudaipc_test_need_gpu,
#endif
};
