/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: cuipcsink and cuipcsrc on their own: registration,
 * properties and their defaults, pad templates, state changes with the
 * host backend, the periodic stats messages, and the errors a user sees
 * for a CUDA device that does not exist (on a machine with a driver or
 * without), a missing producer, a socket path taken by a live producer,
 * a ring that cannot be made for the caps, or caps downstream does not
 * take.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gmodule.h>
#include <glib/gstdio.h>
#include <gst/base/gstbasesink.h>
#include <gst/base/gstpushsrc.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

#include "device/cuda-loader.h"
#include "test-main.h"
#include "test-launch.h"
#include "test-util.h"
#include "test-writes.h"

static gchar *sock;

static void
setup (void)
{
  sock = cudaipc_test_socket_path ("props", "p.sock");
}

static void
teardown (void)
{
  cudaipc_test_socket_remove (&sock);
}

static void
check_props (const gchar * factory, const gchar * const *names)
{
  GstElement *e = gst_element_factory_make (factory, NULL);

  fail_unless (e != NULL, "no %s", factory);
  for (guint i = 0; names[i]; i++) {
    GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        names[i]);
    fail_unless (ps != NULL, "%s has no property %s", factory, names[i]);
    fail_unless (g_param_spec_get_blurb (ps) &&
        strlen (g_param_spec_get_blurb (ps)) > 8, "%s::%s is undocumented",
        factory, names[i]);
  }
  gst_object_unref (e);
}

GST_START_TEST (test_registered_with_own_types)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);

  fail_unless (sink && src);
  /* nvcodec (>= 1.24) registers GstCudaIpcSink/GstCudaIpcSrc: ours differ */
  fail_if (g_str_equal (G_OBJECT_TYPE_NAME (sink), "GstCudaIpcSink"));
  fail_if (g_str_equal (G_OBJECT_TYPE_NAME (src), "GstCudaIpcSrc"));
  fail_unless (GST_IS_BASE_SINK (sink));
  fail_unless (GST_IS_PUSH_SRC (src));
  gst_object_unref (sink);
  gst_object_unref (src);
}

GST_END_TEST;

GST_START_TEST (test_properties)
{
  const gchar *sink_props[] = { "socket-path", "socket-mode", "backend",
    "device-id", "ring-size", "on-full", "full-timeout",
    "wait-for-connection", "consumer-timeout", "allowed-users",
    "allowed-groups", "stats-interval", "num-clients", "stats", NULL
  };
  const gchar *src_props[] = { "socket-path", "device-id", "connect-timeout",
    "reconnect", "reconnect-timeout", "max-held", "is-live",
    "timestamp-mode", "client-name", "stats-interval", "output-memory",
    "peer-access", "stats", NULL
  };
  GstElement *sink, *src;
  guint ring_size = 0, mode = 0, clients = 1;
  gboolean reconnect = FALSE;
  guint reconnect_timeout = 1;
  GstStructure *stats = NULL;

  check_props ("cuipcsink", sink_props);
  check_props ("cuipcsrc", src_props);

  sink = gst_element_factory_make ("cuipcsink", NULL);
  g_object_get (sink, "ring-size", &ring_size, "socket-mode", &mode,
      "num-clients", &clients, "stats", &stats, NULL);
  fail_unless_equals_int (ring_size, 4);
  fail_unless_equals_int (clients, 0);
  fail_unless (mode == 0600 || mode == 0660, "mode 0%o", mode);
  fail_unless (stats != NULL);
  gst_structure_free (stats);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  gst_util_set_object_arg (G_OBJECT (sink), "on-full", "drop");
  gst_object_unref (sink);

  src = gst_element_factory_make ("cuipcsrc", NULL);
  g_object_get (src, "reconnect", &reconnect, "reconnect-timeout",
      &reconnect_timeout, NULL);
  fail_unless (reconnect);
  /* a lost producer is waited for 30 s (0: until the source stops) */
  fail_unless_equals_int (reconnect_timeout, 30000);
  fail_unless (gst_base_src_is_live (GST_BASE_SRC (src)));
  gst_object_unref (src);
}

GST_END_TEST;

GST_START_TEST (test_pad_templates)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);
  GstCaps *caps;
  GstPad *pad;
  gchar *s;

  pad = gst_element_get_static_pad (sink, "sink");
  caps = gst_pad_get_pad_template_caps (pad);
  gst_object_unref (pad);
  s = gst_caps_to_string (caps);
  fail_unless (strstr (s, "memory:CUDAMemory") != NULL, "%s", s);
  fail_unless (strstr (s, "video/x-raw") != NULL, "%s", s);
  g_free (s);
  gst_caps_unref (caps);

  pad = gst_element_get_static_pad (src, "src");
  caps = gst_pad_get_pad_template_caps (pad);
  gst_object_unref (pad);
  s = gst_caps_to_string (caps);
  fail_unless (strstr (s, "memory:CUDAMemory") != NULL, "%s", s);
  g_free (s);
  gst_caps_unref (caps);
  gst_object_unref (sink);
  gst_object_unref (src);
}

GST_END_TEST;

GST_START_TEST (test_sink_state_changes_host)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);

  g_object_set (sink, "socket-path", sock, NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  for (guint i = 0; i < 3; i++) {
    fail_unless (gst_element_set_state (sink, GST_STATE_PAUSED) ==
        GST_STATE_CHANGE_ASYNC);
    fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS));
    fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
  }
  gst_object_unref (sink);
}

GST_END_TEST;

/* The error @element posts when it fails to reach @state. */
static GError *
state_gerror (GstElement * element, GstState state)
{
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  gst_element_set_bus (element, bus);
  fail_unless (gst_element_set_state (element, state) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error message posted");
  gst_message_parse_error (msg, &err, NULL);
  gst_message_unref (msg);
  gst_element_set_state (element, GST_STATE_NULL);
  gst_element_set_bus (element, NULL);
  gst_object_unref (bus);
  return err;
}

/* The text of that error. */
static gchar *
state_error (GstElement * element, GstState state)
{
  GError *err = state_gerror (element, state);
  gchar *text = g_strdup (err->message);

  g_error_free (err);
  return text;
}

/* A device-id no machine has: the sink does not start, on any machine,
 * and says why in this machine's terms: no driver where libcuda.so.1 does
 * not load, else how many devices this process sees (or why the driver
 * did not initialise). harness.c checks device 0 where there is a driver
 * and where there is none. */
GST_START_TEST (test_sink_device_that_cannot_exist)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GModule *cuda = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY);
  gboolean driver = cuda != NULL;
  GError *err;

  if (cuda) {
    g_module_close (cuda);
    /* the driver, once it initialised, keeps descriptors of its own: they
     * are not the sink's */
    cudaipc_cuda_load (NULL);
    cudaipc_test_fds_recount ();
  }
  g_object_set (sink, "socket-path", sock, "device-id", 4096, NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "cuda");
  err = state_gerror (sink, GST_STATE_PAUSED);
  GST_INFO ("device-id=4096: %s", err->message);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND), "%s", err->message);
  if (!driver) {
    fail_unless (strstr (err->message, "no CUDA driver") &&
        strstr (err->message, "libcuda.so.1"), "unclear error: %s",
        err->message);
  } else {
    fail_unless (strstr (err->message, "no CUDA device 4096: this process "
            "sees ") || strstr (err->message, "cuInit"), "unclear error: %s",
        err->message);
  }
  g_error_free (err);
  /* nothing for consumers to find */
  fail_if (g_file_test (sock, G_FILE_TEST_EXISTS));
  gst_object_unref (sink);
}

GST_END_TEST;

GST_START_TEST (test_sink_path_of_live_producer)
{
  GstElement *a = gst_element_factory_make ("cuipcsink", NULL);
  GstElement *b = gst_element_factory_make ("cuipcsink", NULL);
  gchar *text;

  g_object_set (a, "socket-path", sock, NULL);
  g_object_set (b, "socket-path", sock, NULL);
  gst_util_set_object_arg (G_OBJECT (a), "backend", "host");
  gst_util_set_object_arg (G_OBJECT (b), "backend", "host");
  fail_unless (gst_element_set_state (a, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE);
  text = state_error (b, GST_STATE_PAUSED);
  fail_unless (strstr (text, sock) != NULL, "unclear error: %s", text);
  g_free (text);
  /* the live producer's socket is untouched */
  fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS));
  gst_element_set_state (a, GST_STATE_NULL);
  gst_object_unref (a);
  gst_object_unref (b);
}

GST_END_TEST;

/* A metas name that lets nothing through: a warning at start that names
 * the API type to write. */
GST_START_TEST (test_sink_metas_doubt)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  g_object_set (sink, "socket-path", sock, "metas", "GstVideoCropMetaApi",
      NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  gst_element_set_bus (sink, bus);
  fail_if (gst_element_set_state (sink, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning for metas=GstVideoCropMetaApi");
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "write GstVideoCropMetaAPI") != NULL,
      "unclear warning: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (sink, GST_STATE_NULL);
  gst_element_set_bus (sink, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
}

GST_END_TEST;

/* No producer: the state change returns at once (a live source waits in
 * its streaming thread), and after connect-timeout the error names the
 * socket and the setting to raise. */
GST_START_TEST (test_src_no_producer)
{
  GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gint64 t0 = g_get_monotonic_time ();
  GstMessage *msg;
  GError *err = NULL;

  g_object_set (src, "socket-path", sock, "connect-timeout", 300, NULL);
  gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
  fail_unless (gst_element_link (src, sink));
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_unless (g_get_monotonic_time () - t0 < 250 * 1000,
      "the state change waited for the producer");
  msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error posted");
  fail_unless (g_get_monotonic_time () - t0 >= 250 * 1000);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, sock) != NULL, "unclear error: %s",
      err->message);
  fail_unless (strstr (err->message, "connect-timeout") != NULL,
      "the error does not name connect-timeout: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* A ring that cannot be made (here: a kernel without the seal the host
 * backend's slots need): the ring is made when caps arrive, so the sink
 * refuses them there, saying why, in the words render() would use. */
GST_START_TEST (test_sink_ring_refused_at_caps)
{
  GstElement *pipe, *sink;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  GstBus *bus;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0 ||
      !cudaipc_test_without_future_write_seal ()) {
    g_print ("SKIP: no seccomp filter in a process of this test's own\n");
    return;
  }
  pipe = cudaipc_test_launch ("videotestsrc num-buffers=1 ! "
      "video/x-raw,format=NV12,width=64,height=48,framerate=30/1 ! "
      "cuipcsink name=sink socket-path=%s backend=host "
      "wait-for-connection=false", sock);
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  bus = gst_element_get_bus (pipe);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error posted");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (sink),
      "the first error is not the sink's");
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NO_SPACE_LEFT), "not a resource error: %s",
      err->message);
  /* at caps, not at a frame */
  fail_unless (debug && strstr (debug, "caps video/x-raw") != NULL,
      "not refused at caps: %s", debug);
  fail_unless (g_str_has_prefix (err->message, "Cannot allocate a ring of "
          "4 slots for frames of 4608 bytes: "), "unclear error: %s",
      err->message);
  fail_unless (strstr (err->message, "F_SEAL_FUTURE_WRITE") != NULL,
      "unclear error: %s", err->message);
  fail_unless_equals_int (cudaipc_test_stats_uint64 (sink,
          "frames-published"), 0);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_object_unref (sink);
  cudaipc_test_stop (pipe);
}

GST_END_TEST;

/* Downstream that takes other caps than the producer's: the consumer's
 * error names the producer's caps, what downstream takes and the element
 * to put in between, before basesrc's "Internal data stream error". */
GST_START_TEST (test_src_not_negotiated)
{
  GstElement *prod = cudaipc_test_launch ("videotestsrc is-live=true ! "
      "video/x-raw,format=NV12,width=64,height=48,framerate=30/1 ! "
      "cuipcsink socket-path=%s backend=host", sock);
  GstElement *cons = cudaipc_test_launch ("cuipcsrc socket-path=%s "
      "connect-timeout=20000 ! video/x-raw,format=I420 ! fakesink", sock);
  GstBus *bus = gst_element_get_bus (cons);
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;

  fail_if (gst_element_set_state (prod, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_if (gst_element_set_state (cons, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error posted");
  gst_message_parse_error (msg, &err, &debug);
  GST_INFO ("%s (%s)", err->message, debug);
  fail_unless (g_error_matches (err, GST_CORE_ERROR,
          GST_CORE_ERROR_NEGOTIATION), "not a negotiation error: %s",
      err->message);
  fail_unless (strstr (err->message, "the producer's caps video/x-raw, "
          "format=NV12, width=64, height=48, framerate=30/1; it takes "
          "video/x-raw, format=I420: put videoconvert") != NULL,
      "unclear error: %s", err->message);
  fail_unless (strstr (debug, sock) != NULL, "%s", debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  gst_object_unref (bus);
  cudaipc_test_stop (cons);
  cudaipc_test_stop (prod);
}

GST_END_TEST;

/* Waits up to 2 s for an element message named @name on @bus. */
static GstStructure *
wait_element_message (GstBus * bus, const gchar * name)
{
  gint64 deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 50 * GST_MSECOND,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR);
    GstStructure *s;

    if (msg == NULL)
      continue;
    fail_if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
        "error while waiting for %s", name);
    if (gst_message_has_name (msg, name)) {
      s = gst_structure_copy (gst_message_get_structure (msg));
      gst_message_unref (msg);
      return s;
    }
    gst_message_unref (msg);
  }
  return NULL;
}

static guint64
get_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "%s has no %s",
      gst_structure_get_name (s), field);
  return v;
}

/* Waits up to 2 s for an element message @name on @bus whose @field
 * counts @want; fails the test if none comes. */
static GstStructure *
wait_count_message (GstBus * bus, const gchar * name, const gchar * field,
    guint64 want)
{
  gint64 deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  GstStructure *st;

  do {
    st = wait_element_message (bus, name);
    fail_unless (st != NULL, "no %s message", name);
    if (get_u64 (st, field) == want)
      return st;
    gst_structure_free (st);
  } while (g_get_monotonic_time () < deadline);
  fail ("the %s messages never counted %" G_GUINT64_FORMAT " for %s", name,
      want, field);
  return NULL;
}

static GstBuffer *
small_frame (guint i)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64 * 64 * 3 / 2, NULL);

  gst_buffer_memset (buf, 0, (guint8) i, 64 * 64 * 3 / 2);
  GST_BUFFER_PTS (buf) = i * GST_MSECOND;
  return buf;
}

GST_START_TEST (test_stats_messages)
{
  GstElement *prod, *cons, *appsrc, *sink, *src;
  GstBus *pbus, *cbus;
  GstStructure *st;
  const GValue *clients;
  guint n = 0;
  gint64 deadline;

  prod = gst_parse_launch ("appsrc name=in format=time caps=video/x-raw,"
      "format=NV12,width=64,height=64,framerate=30/1 ! cuipcsink name=sink "
      "backend=host sync=false stats-interval=40", NULL);
  fail_unless (prod != NULL);
  sink = gst_bin_get_by_name (GST_BIN (prod), "sink");
  appsrc = gst_bin_get_by_name (GST_BIN (prod), "in");
  g_object_set (sink, "socket-path", sock, NULL);
  pbus = gst_element_get_bus (prod);
  fail_unless (gst_element_set_state (prod, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  /* ticks come while the sink runs, before any consumer or frame */
  st = wait_element_message (pbus, "cudaipcsink-stats");
  fail_unless (st != NULL, "no cudaipcsink-stats message");
  fail_unless_equals_int (get_u64 (st, "frames-published"), 0);
  gst_structure_free (st);

  cons = gst_parse_launch ("cuipcsrc name=src stats-interval=40 "
      "client-name=watcher ! fakesink sync=false", NULL);
  fail_unless (cons != NULL);
  src = gst_bin_get_by_name (GST_BIN (cons), "src");
  g_object_set (src, "socket-path", sock, "connect-timeout", 2000, NULL);
  cbus = gst_element_get_bus (cons);
  fail_unless (gst_element_set_state (cons, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  while (n == 0 && g_get_monotonic_time () < deadline) {
    g_object_get (sink, "num-clients", &n, NULL);
    g_usleep (10 * 1000);
  }
  fail_unless_equals_int (n, 1);
  for (guint i = 0; i < 5; i++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (appsrc),
            small_frame (i)), GST_FLOW_OK);

  /* the sink's totals, then one flat message per consumer, as
   * gst-launch-1.0 -m prints them readably (no nested structures) */
  st = wait_count_message (pbus, "cudaipcsink-stats", "frames-published", 5);
  fail_if (gst_structure_has_field (st, "client-stats"));
  for (gint i = 0; i < gst_structure_n_fields (st); i++)
    fail_if (G_VALUE_TYPE (gst_structure_get_value (st,
                gst_structure_nth_field_name (st, i))) == GST_TYPE_STRUCTURE ||
        G_VALUE_TYPE (gst_structure_get_value (st,
                gst_structure_nth_field_name (st, i))) == GST_TYPE_ARRAY);
  gst_structure_free (st);
  st = wait_count_message (pbus, "cudaipcsink-client-stats", "frames-sent", 5);
  fail_unless_equals_string (gst_structure_get_string (st, "name"),
      "watcher");
  {
    g_autofree gchar *text = gst_structure_to_string (st);

    /* nothing escaped: every field reads as it is */
    fail_if (strchr (text, '\\') != NULL, "escaped: %s", text);
  }
  gst_structure_free (st);
  /* the property still has the array, for programs */
  g_object_get (sink, "stats", &st, NULL);
  clients = gst_structure_get_value (st, "client-stats");
  fail_unless (clients != NULL);
  fail_unless_equals_int (gst_value_array_get_size (clients), 1);
  gst_structure_free (st);

  /* and the source's, its own */
  st = wait_count_message (cbus, "cudaipcsrc-stats", "frames-pushed", 5);
  fail_unless_equals_int (get_u64 (st, "frames-received"), 5);
  gst_structure_free (st);

  /* stopped: no tick after the state change returned */
  gst_element_set_state (cons, GST_STATE_NULL);
  gst_element_set_state (prod, GST_STATE_NULL);
  gst_bus_set_flushing (pbus, TRUE);
  gst_bus_set_flushing (cbus, TRUE);
  gst_bus_set_flushing (pbus, FALSE);
  gst_bus_set_flushing (cbus, FALSE);
  g_usleep (150 * 1000);
  fail_if (gst_bus_have_pending (pbus), "a message after the sink stopped");
  fail_if (gst_bus_have_pending (cbus), "a message after the source stopped");

  gst_object_unref (pbus);
  gst_object_unref (cbus);
  gst_object_unref (appsrc);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (prod);
  gst_object_unref (cons);
}

GST_END_TEST;

static Suite *
props_suite (void)
{
  Suite *s = suite_create ("props");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_registered_with_own_types);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_pad_templates);
  tcase_add_test (tc, test_sink_state_changes_host);
  tcase_add_test (tc, test_sink_device_that_cannot_exist);
  tcase_add_test (tc, test_sink_path_of_live_producer);
  tcase_add_test (tc, test_src_no_producer);
  tcase_add_test (tc, test_src_not_negotiated);
  tcase_add_test (tc, test_sink_ring_refused_at_caps);
  tcase_add_test (tc, test_sink_metas_doubt);
  tcase_add_test (tc, test_stats_messages);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "props",
  .suite = props_suite,
};
