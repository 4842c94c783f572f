/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin and libcudaipc in one process, host backend: a cuipcsrc
 * pipeline and the library's consumer read one ipc-node producer side by
 * side, and a cuipcsink pipeline and the library's producer each serve an
 * ipc-node consumer. Both front doors run over the one copy of the core
 * that libcudaipc-1.0 holds, so every type, debug category and binding of
 * it is registered once in the process, whichever door opens first.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/app/gstappsrc.h>

#include "api/cudaipc.h"
#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

#define W 320
#define H 240
#define SIZE (W * H * 3 / 2)
#define N_FRAMES 30
#define LOSSLESS "on-full=wait full-timeout=0 consumer-timeout=0"

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}

/* Waits for EOS or an error on @pipeline's bus; TRUE on EOS. */
static gboolean
wait_eos (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean eos = m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;

  if (m && !eos) {
    GError *err = NULL;

    gst_message_parse_error (m, &err, NULL);
    g_print ("pipeline error: %s\n", err->message);
    g_clear_error (&err);
  }
  gst_clear_message (&m);
  gst_object_unref (bus);
  return eos;
}

GST_START_TEST (test_src_beside_consumer)
{
  Node *p = spawn_node ("producer", "--frames", G_STRINGIFY (N_FRAMES),
      "--clients", "2", "--sink", "backend=host " LOSSLESS, NULL);
  gchar *desc = g_strdup_printf ("cuipcsrc name=src socket-path=%s "
      "max-held=0 connect-timeout=20000 ! fakesink name=sink sync=false",
      sock);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *fakesink;
  GstPad *pad;
  cudaipc_consumer_options o;
  cudaipc_consumer *c;
  cudaipc_frame *f;
  cudaipc_status st;
  gint pushed = 0;
  guint n = 0;

  fail_unless (pipeline != NULL);
  fakesink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (fakesink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &pushed,
      NULL);
  gst_object_unref (pad);
  gst_object_unref (fakesink);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  cudaipc_consumer_options_init (&o);
  o.connect_timeout_ms = 20000;
  o.reconnect = 0;
  o.keep_all = 1;
  c = cudaipc_consumer_new (sock, &o);
  fail_unless (c != NULL);
  while ((st = cudaipc_consumer_next (c, 20000, &f)) == CUDAIPC_STATUS_OK) {
    cudaipc_frame_info info = { sizeof (info), };

    fail_unless_equals_int (cudaipc_frame_get_info (f, &info),
        CUDAIPC_STATUS_OK);
    fail_unless_equals_uint64 (info.offset, n);
    fail_unless_equals_int (cudaipc_test_check_pattern ((const guint8 *)
            info.data, info.size, (guint) info.offset, 0), -1);
    cudaipc_frame_release (f);
    n++;
  }
  fail_unless (st == CUDAIPC_STATUS_EOS, "%d: %s", st,
      cudaipc_consumer_error (c));
  fail_unless_equals_int (n, N_FRAMES);

  fail_unless (wait_eos (pipeline, 60 * GST_SECOND));
  fail_unless_equals_int (g_atomic_int_get (&pushed), N_FRAMES);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  cudaipc_consumer_free (c);

  wait_node (p, 60);
  assert_exit_ok (p);
  fail_unless_equals_uint64 (field (p, "published"), N_FRAMES);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  node_free (p);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_sink_beside_producer)
{
  gchar *lib_sock = g_strdup_printf ("@cudaipc-one-process-%d", getpid ());
  gchar *desc = g_strdup_printf ("appsrc name=src format=time "
      "caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1 ! "
      "cuipcsink name=sink socket-path=%s backend=host "
      "wait-for-connection=true " LOSSLESS, W, H, sock);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *src;
  Node *from_sink = spawn_node ("consumer", NULL);
  gchar *lib_argv[] = { (gchar *) g_getenv ("CUDAIPC_IPC_NODE"),
    (gchar *) "consumer", lib_sock, NULL
  };
  Node *from_lib = spawn_argv (lib_argv);
  cudaipc_producer_options o;
  cudaipc_producer *prod;
  guint8 *frame = g_malloc (SIZE);
  uint64_t published = 0, dropped = 0;

  fail_unless (pipeline != NULL);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  cudaipc_producer_options_init (&o);
  o.backend = CUDAIPC_BACKEND_TYPE_HOST;
  prod = cudaipc_producer_new (lib_sock, "video/x-raw, format=NV12, "
      "width=320, height=240, framerate=30/1", &o);
  fail_unless (prod != NULL, "%s", cudaipc_producer_last_error ());
  for (gint i = 0; i < 2000 && cudaipc_producer_n_consumers (prod) == 0; i++)
    g_usleep (10000);
  fail_unless_equals_int (cudaipc_producer_n_consumers (prod), 1);

  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  for (guint i = 0; i < N_FRAMES; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, SIZE, NULL);
    GstMapInfo map;

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
    cudaipc_test_fill_pattern (map.data, SIZE, i, 0);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_OFFSET (buf) = i;
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
        GST_FLOW_OK);

    cudaipc_test_fill_pattern (frame, SIZE, i, 0);
    fail_unless (cudaipc_producer_publish (prod, (uintptr_t) frame, SIZE, 0,
            i * GST_SECOND / 30, 0) == CUDAIPC_STATUS_OK, "%s",
        cudaipc_producer_error (prod));
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  fail_unless_equals_int (cudaipc_producer_end (prod), CUDAIPC_STATUS_OK);
  fail_unless (wait_eos (pipeline, 60 * GST_SECOND));

  wait_node (from_sink, 60);
  wait_node (from_lib, 60);
  assert_exit_ok (from_sink);
  assert_exit_ok (from_lib);
  fail_unless_equals_uint64 (field (from_sink, "frames"), N_FRAMES);
  fail_unless_equals_uint64 (field (from_sink, "bad"), 0);
  fail_unless_equals_uint64 (field (from_lib, "frames"), N_FRAMES);
  fail_unless_equals_uint64 (field (from_lib, "bad"), 0);
  cudaipc_producer_counts (prod, &published, &dropped);
  fail_unless_equals_uint64 (published, N_FRAMES);
  fail_unless_equals_uint64 (dropped, 0);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  cudaipc_producer_free (prod);
  node_free (from_sink);
  node_free (from_lib);
  g_free (frame);
  g_free (desc);
  g_free (lib_sock);
}

GST_END_TEST;

static Suite *
api_one_process_suite (void)
{
  Suite *s = suite_create ("api-one-process");
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_src_beside_consumer);
  tcase_add_test (tc, test_sink_beside_producer);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "api-one-process",
  .suite = api_one_process_suite,
};
