/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api suite: libcudaipc (cudaipc.h) across processes, host backend: its
 * consumer reads an ipc-node producer (cuipcsink) frame by frame, intact,
 * with the slot itself as the frame's memory; the errors a user meets (no
 * producer, too many frames held, a time-out, the end of the stream); a
 * producer that starts late; its producer is read by an ipc-node consumer
 * (cuipcsrc).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "api/cudaipc.h"
#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

/* Whether @addr lies in a mapping of a memfd slot in this process. */
static gboolean
in_slot_mapping (uintptr_t addr)
{
  gchar *maps = NULL;
  gchar **lines;
  gboolean found = FALSE;

  fail_unless (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  lines = g_strsplit (maps, "\n", -1);
  for (guint i = 0; lines[i] && !found; i++) {
    guint64 lo = 0, hi = 0;

    if (sscanf (lines[i], "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x",
            &lo, &hi) == 2 && addr >= lo && addr < hi &&
        strstr (lines[i], "cudaipc-slot") != NULL)
      found = TRUE;
  }
  g_strfreev (lines);
  g_free (maps);
  return found;
}

static cudaipc_consumer *
consumer (guint max_held, guint connect_timeout_ms)
{
  cudaipc_consumer_options o;
  cudaipc_consumer *c;

  cudaipc_consumer_options_init (&o);
  o.max_held = max_held;
  o.connect_timeout_ms = connect_timeout_ms;
  o.reconnect = 0;
  /* every frame is checked: none may be dropped while a check runs (reading
   * /proc/self/maps takes long under a sanitizer) */
  o.keep_all = 1;
  c = cudaipc_consumer_new (sock, &o);
  fail_unless (c != NULL);
  return c;
}

GST_START_TEST (test_consumer_reads_frames)
{
  cudaipc_consumer *c = consumer (2, 20000);
  Node *p = spawn_node ("producer", "--frames", "30", "--clients", "1",
      "--sink", "backend=host on-full=wait full-timeout=0 consumer-timeout=0",
      NULL);
  cudaipc_frame *f;
  cudaipc_status st;
  guint n = 0;

  while ((st = cudaipc_consumer_next (c, 20000, &f)) == CUDAIPC_STATUS_OK) {
    cudaipc_frame_info info = { sizeof (info), };

    fail_unless_equals_int (cudaipc_frame_get_info (f, &info),
        CUDAIPC_STATUS_OK);
    fail_unless_equals_int (info.backend, CUDAIPC_BACKEND_TYPE_HOST);
    fail_unless_equals_string (info.format, "NV12");
    fail_unless_equals_int (info.width, 320);
    fail_unless_equals_int (info.height, 240);
    fail_unless_equals_int (info.n_planes, 2);
    fail_unless_equals_uint64 (info.offset, n);
    fail_unless_equals_uint64 (info.number, n + 1);
    fail_unless (strstr (info.caps, "NV12") != NULL);
    /* the slot itself: no copy was made */
    fail_unless (in_slot_mapping (info.data), "frame %u at %p is not in a "
        "slot's mapping", n, (void *) info.data);
    fail_unless_equals_int (cudaipc_test_check_pattern ((const guint8 *)
            info.data, info.size, (guint) info.offset, 0), -1);
    fail_unless_equals_int (cudaipc_consumer_held (c), 1);
    cudaipc_frame_release (f);
    fail_unless_equals_int (cudaipc_consumer_held (c), 0);
    n++;
  }
  fail_unless_equals_int (st, CUDAIPC_STATUS_EOS);
  fail_unless (strstr (cudaipc_consumer_error (c), "ended its stream"));
  fail_unless_equals_int (n, 30);
  wait_node (p, 60);
  assert_exit_ok (p);
  cudaipc_consumer_free (c);
  node_free (p);
}

GST_END_TEST;

GST_START_TEST (test_consumer_errors)
{
  cudaipc_consumer *c = consumer (2, 300);
  cudaipc_frame *f[3] = { NULL, };
  cudaipc_status st;
  Node *p;

  /* nobody there */
  st = cudaipc_consumer_next (c, 0, &f[0]);
  fail_unless_equals_int (st, CUDAIPC_STATUS_NO_PRODUCER);
  fail_unless (strstr (cudaipc_consumer_error (c), "No producer on") != NULL,
      "%s", cudaipc_consumer_error (c));
  /* the element's hint, naming the option field instead of the property */
  fail_unless (strstr (cudaipc_consumer_error (c), ": start the producer, "
          "check the socket path, or raise connect_timeout_ms (0 waits for "
          "as long as it takes)") != NULL, "%s", cudaipc_consumer_error (c));
  fail_if (strstr (cudaipc_consumer_error (c), "connect-timeout") != NULL,
      "%s", cudaipc_consumer_error (c));
  cudaipc_consumer_free (c);

  /* more frames held than max_held, and a time-out */
  c = consumer (2, 20000);
  p = spawn_node ("producer", "--frames", "3", "--clients", "1", "--fps",
      "30", "--sink", "backend=host ring-size=4", NULL);
  fail_unless_equals_int (cudaipc_consumer_next (c, 20000, &f[0]),
      CUDAIPC_STATUS_OK);
  fail_unless_equals_int (cudaipc_consumer_next (c, 20000, &f[1]),
      CUDAIPC_STATUS_OK);
  st = cudaipc_consumer_next (c, 20000, &f[2]);
  fail_unless_equals_int (st, CUDAIPC_STATUS_TOO_MANY_HELD);
  fail_unless (f[2] == NULL);
  fail_unless (strstr (cudaipc_consumer_error (c), "max_held is 2") != NULL);
  cudaipc_frame_release (f[0]);
  fail_unless_equals_int (cudaipc_consumer_next (c, 20000, &f[2]),
      CUDAIPC_STATUS_OK);
  cudaipc_frame_release (f[1]);
  cudaipc_frame_release (f[2]);
  st = cudaipc_consumer_next (c, 20000, &f[0]);
  fail_unless_equals_int (st, CUDAIPC_STATUS_EOS);
  wait_node (p, 60);
  assert_exit_ok (p);
  node_free (p);
  cudaipc_consumer_free (c);
}

GST_END_TEST;

/* The first next() waits connect_timeout_ms for a producer, whatever its
 * own time-out, which counts once connected. */
GST_START_TEST (test_consumer_waits_for_late_producer)
{
  cudaipc_consumer *c = consumer (2, 400);
  gchar *argv[] = { (gchar *) "/bin/sh", (gchar *) "-c",
    (gchar *) "sleep 2 && exec \"$@\"", (gchar *) "sh",
    (gchar *) g_getenv ("CUDAIPC_IPC_NODE"), (gchar *) "producer", sock,
    (gchar *) "--frames", (gchar *) "3", (gchar *) "--clients", (gchar *) "1",
    (gchar *) "--fps", (gchar *) "30", (gchar *) "--sink",
    (gchar *) "backend=host", NULL
  };
  cudaipc_frame *f = NULL;
  cudaipc_status st;
  gint64 start = g_get_monotonic_time (), waited;
  Node *p;

  /* nobody there: the connect time-out, not the frame's, ends the wait */
  fail_unless_equals_int (cudaipc_consumer_next (c, 50, &f),
      CUDAIPC_STATUS_NO_PRODUCER);
  waited = (g_get_monotonic_time () - start) / 1000;
  fail_unless (waited >= 350, "gave up after %" G_GINT64_FORMAT " ms",
      waited);
  cudaipc_consumer_free (c);

  /* a producer two seconds late, a frame within a second of it */
  c = consumer (2, 5000);
  start = g_get_monotonic_time ();
  fail_unless (argv[4] != NULL);
  p = spawn_argv (argv);
  st = cudaipc_consumer_next (c, 1000, &f);
  fail_unless (st == CUDAIPC_STATUS_OK, "status %d: %s", st,
      cudaipc_consumer_error (c));
  waited = (g_get_monotonic_time () - start) / 1000;
  fail_unless (waited >= 1500, "a frame after %" G_GINT64_FORMAT " ms",
      waited);
  cudaipc_frame_release (f);
  while (cudaipc_consumer_next (c, 20000, &f) == CUDAIPC_STATUS_OK)
    cudaipc_frame_release (f);
  fail_unless (strstr (cudaipc_consumer_error (c), "ended its stream"));
  wait_node (p, 60);
  assert_exit_ok (p);
  node_free (p);
  cudaipc_consumer_free (c);
}

GST_END_TEST;

/* The library's producer, read by cuipcsrc. */
GST_START_TEST (test_producer_read_by_src)
{
  cudaipc_producer_options o;
  cudaipc_producer *prod;
  Node *c = spawn_node ("consumer", NULL);
  gsize size = 320 * 240 * 3 / 2;
  guint8 *frame = g_malloc (size);
  guint64 published = 0, dropped = 0;

  cudaipc_producer_options_init (&o);
  o.backend = CUDAIPC_BACKEND_TYPE_HOST;
  prod = cudaipc_producer_new (sock, "video/x-raw, format=NV12, width=320, "
      "height=240, framerate=30/1", &o);
  fail_unless (prod != NULL, "%s", cudaipc_producer_last_error ());
  for (gint i = 0; i < 2000 && cudaipc_producer_n_consumers (prod) == 0; i++)
    g_usleep (10000);
  fail_unless_equals_int (cudaipc_producer_n_consumers (prod), 1);
  for (guint i = 0; i < 40; i++) {
    cudaipc_test_fill_pattern (frame, size, i, 0);
    fail_unless_equals_int (cudaipc_producer_publish (prod, (uintptr_t) frame,
            size, 0, i * GST_SECOND / 30, 0), CUDAIPC_STATUS_OK);
  }
  /* the wrong size is refused with a reason */
  fail_unless_equals_int (cudaipc_producer_publish (prod, (uintptr_t) frame,
          size - 1, 0, 0, 0), CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (prod), "bytes") != NULL);
  fail_unless_equals_int (cudaipc_producer_end (prod), CUDAIPC_STATUS_OK);
  wait_node (c, 60);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 40);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  cudaipc_producer_counts (prod, &published, &dropped);
  fail_unless_equals_uint64 (published, 40);
  fail_unless_equals_uint64 (dropped, 0);
  cudaipc_producer_free (prod);
  g_free (frame);
  node_free (c);

  /* caps that are not raw video */
  fail_unless (cudaipc_producer_new (sock, "audio/x-raw", &o) == NULL);
  fail_unless (strstr (cudaipc_producer_last_error (), "not fixed raw-video")
      != NULL);
  /* frames of no bytes, which no publish() could ever match */
  fail_unless (cudaipc_producer_new (sock, "video/x-raw, format=NV12, "
          "width=0, height=0, framerate=30/1", &o) == NULL);
  fail_unless (strstr (cudaipc_producer_last_error (), "no bytes") != NULL,
      "%s", cudaipc_producer_last_error ());
  fail_unless (cudaipc_producer_new (sock, "video/x-raw, format=NV12, "
          "width=320, height=0, framerate=30/1", &o) == NULL);
  fail_unless (strstr (cudaipc_producer_last_error (), "no bytes") != NULL,
      "%s", cudaipc_producer_last_error ());
}

GST_END_TEST;

/* What publish_annotated() refuses, before a slot is taken; the frames
 * themselves are read back in api-python. */
GST_START_TEST (test_producer_annotations_refused)
{
  cudaipc_producer_options o;
  cudaipc_producer *prod;
  gsize size = 320 * 240 * 3 / 2;
  guint8 *frame = g_malloc0 (size);
  cudaipc_region r = { "car", 1, 0, 2, 3, 4, 5, 0.5 };
  cudaipc_object ob = { "car", 1, 2, 3, 4, 0, 0.5f, 0, 0, -1 };
  uint64_t published = 0, dropped = 0;

  cudaipc_producer_options_init (&o);
  o.backend = CUDAIPC_BACKEND_TYPE_HOST;
  prod = cudaipc_producer_new (sock, "video/x-raw, format=NV12, width=320, "
      "height=240, framerate=30/1", &o);
  fail_unless (prod != NULL, "%s", cudaipc_producer_last_error ());

  /* regions alone are fine anywhere */
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, &r, 1, NULL, 0),
      CUDAIPC_STATUS_OK);
  /* a type without its NUL */
  memset (r.type, 'x', sizeof (r.type));
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, &r, 1, NULL, 0),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (prod), "region 0") != NULL,
      "%s", cudaipc_producer_error (prod));
  /* more regions than a frame carries */
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, &r, 5000, NULL, 0),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (prod), "at most") != NULL);
#ifdef HAVE_GST_ANALYTICS
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, NULL, 0, &ob, 1),
      CUDAIPC_STATUS_OK);
  ob.w = -1;
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, NULL, 0, &ob, 1),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (prod), "negative") != NULL,
      "%s", cudaipc_producer_error (prod));
#else
  fail_unless_equals_int (cudaipc_producer_publish_annotated (prod,
          (uintptr_t) frame, size, 0, 0, 0, NULL, 0, &ob, 1),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (prod),
          "without gstreamer-analytics") != NULL, "%s",
      cudaipc_producer_error (prod));
#endif
  /* the refused ones took no slot and published nothing */
  cudaipc_producer_counts (prod, &published, &dropped);
#ifdef HAVE_GST_ANALYTICS
  fail_unless_equals_uint64 (published, 2);
#else
  fail_unless_equals_uint64 (published, 1);
#endif
  fail_unless_equals_uint64 (dropped, 0);
  cudaipc_producer_free (prod);
  g_free (frame);
}

GST_END_TEST;

static Suite *
api_frames_suite (void)
{
  Suite *s = suite_create ("api-frames");
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_consumer_reads_frames);
  tcase_add_test (tc, test_consumer_errors);
  tcase_add_test (tc, test_consumer_waits_for_late_producer);
  tcase_add_test (tc, test_producer_read_by_src);
  tcase_add_test (tc, test_producer_annotations_refused);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "api-frames",
  .suite = api_frames_suite,
};
