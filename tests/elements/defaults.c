/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: the defaults a user meets without setting anything.
 *  - cuipcsink's backend is auto: it decides as the sink starts, never
 *    before (a setting made or an element made initialises no CUDA), the
 *    host backend on a machine without a usable GPU, the cuda backend on
 *    one with; the choice is said once at INFO and in the stats, and the
 *    property still says auto.
 *  - cuipcsrc gives up on a lost producer after 30 s (faults.c ends a
 *    consumer whose producer was killed, with a short reconnect-timeout).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gmodule.h>
#include <gst/check/gstcheck.h>

#include "device/device.h"
#include "test-main.h"
#include "test-util.h"

static gchar *sock;

static void
setup (void)
{
  sock = cudaipc_test_socket_path ("defaults", "d.sock");
}

static void
teardown (void)
{
  cudaipc_test_socket_remove (&sock);
}

/* The nick of @element's enum property @name. */
static gchar *
enum_nick (GstElement * element, const gchar * name)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS
      (element), name);
  GValue v = G_VALUE_INIT;
  gchar *nick;

  fail_unless (ps != NULL && G_IS_PARAM_SPEC_ENUM (ps));
  g_value_init (&v, ps->value_type);
  g_object_get_property (G_OBJECT (element), name, &v);
  nick = g_strdup (g_enum_get_value (G_PARAM_SPEC_ENUM (ps)->enum_class,
          g_value_get_enum (&v))->value_nick);
  g_value_unset (&v);
  return nick;
}

typedef struct
{
  GMutex lock;
  GPtrArray *lines;
} Said;

/* INFO lines of the sink's category about what auto chose. */
static void
catch_choice (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  Said *said = user_data;
  const gchar *text = gst_debug_message_get (message);

  if (level != GST_LEVEL_INFO || text == NULL ||
      g_strcmp0 (gst_debug_category_get_name (category), "cudaipcsink") ||
      strstr (text, "backend=auto chose") == NULL)
    return;
  g_mutex_lock (&said->lock);
  g_ptr_array_add (said->lines, g_strdup (text));
  g_mutex_unlock (&said->lock);
}

GST_START_TEST (test_sink_backend_auto)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GModule *cuda = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY);
  g_autofree gchar *nick = enum_nick (sink, "backend");
  const gchar *want = "host";
  Said said = { {0,}, g_ptr_array_new_with_free_func (g_free) };
  GstStructure *stats = NULL;
  const gchar *reason;
  g_autofree gchar *after = NULL;
  g_autofree gchar *expected = NULL;

  fail_unless_equals_string (nick, "auto");
  if (cuda) {
    CudaIpcDevice *dev;

    g_module_close (cuda);
    /* what auto must find: whether the cuda backend opens on device 0 */
    dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, NULL);
    if (dev)
      want = "cuda";
    cudaipc_device_unref (dev);
    /* the driver keeps descriptors of its own once it initialised */
    cudaipc_test_fds_recount ();
  }

  /* before start, nothing is chosen and the stats name no backend */
  g_object_get (sink, "stats", &stats, NULL);
  fail_if (gst_structure_has_field (stats, "backend"));
  gst_structure_free (stats);

  g_mutex_init (&said.lock);
  gst_debug_set_threshold_for_name ("cudaipcsink", GST_LEVEL_INFO);
  gst_debug_add_log_function (catch_choice, &said, NULL);
  g_object_set (sink, "socket-path", sock, NULL);
  fail_if (gst_element_set_state (sink, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless_equals_string (gst_structure_get_string (stats, "backend"), want);
  reason = gst_structure_get_string (stats, "backend-reason");
  fail_unless (reason != NULL, "no backend-reason in %" GST_PTR_FORMAT, stats);
  if (g_str_equal (want, "host"))
    fail_unless (g_str_has_prefix (reason, "no usable GPU: "), "%s", reason);
  else
    fail_unless (strstr (reason, "is usable") != NULL, "%s", reason);
  gst_structure_free (stats);
  /* the setting stays what the user set */
  after = enum_nick (sink, "backend");
  fail_unless_equals_string (after, "auto");
  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_debug_remove_log_function (catch_choice);

  /* said once, at the start */
  expected = g_strdup_printf ("backend=auto chose the %s backend: ", want);
  fail_unless_equals_int (said.lines->len, 1);
  fail_unless (g_str_has_prefix (g_ptr_array_index (said.lines, 0),
          expected), "%s", (gchar *) g_ptr_array_index (said.lines, 0));

  /* a stopped sink keeps saying what its ring was in */
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless_equals_string (gst_structure_get_string (stats, "backend"), want);
  gst_structure_free (stats);
  g_ptr_array_unref (said.lines);
  g_mutex_clear (&said.lock);
  gst_object_unref (sink);
}

GST_END_TEST;

/* An explicit backend is not auto's: no reason in the stats. */
GST_START_TEST (test_sink_backend_host_explicit)
{
  GstElement *sink = gst_element_factory_make ("cuipcsink", NULL);
  GstStructure *stats = NULL;

  g_object_set (sink, "socket-path", sock, NULL);
  gst_util_set_object_arg (G_OBJECT (sink), "backend", "host");
  fail_if (gst_element_set_state (sink, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless_equals_string (gst_structure_get_string (stats, "backend"),
      "host");
  fail_if (gst_structure_has_field (stats, "backend-reason"));
  gst_structure_free (stats);
  gst_element_set_state (sink, GST_STATE_NULL);
  gst_object_unref (sink);
}

GST_END_TEST;

GST_START_TEST (test_src_reconnect_timeout)
{
  GstElement *src = gst_element_factory_make ("cuipcsrc", NULL);
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (src),
      "reconnect-timeout");
  gboolean reconnect = FALSE;

  g_object_get (src, "reconnect", &reconnect, NULL);
  fail_unless (reconnect);
  /* a producer that restarts is back well within it; 0 still waits for
   * ever, as it always did */
  fail_unless_equals_int (G_PARAM_SPEC_UINT (ps)->default_value, 30000);
  fail_unless_equals_int (G_PARAM_SPEC_UINT (ps)->minimum, 0);
  gst_object_unref (src);
}

GST_END_TEST;

static Suite *
defaults_suite (void)
{
  Suite *s = suite_create ("defaults");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_sink_backend_auto);
  tcase_add_test (tc, test_sink_backend_host_explicit);
  tcase_add_test (tc, test_src_reconnect_timeout);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "defaults",
  .suite = defaults_suite,
};
