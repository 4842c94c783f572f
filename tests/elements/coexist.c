/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: our plugin beside one that registers the same feature
 * names with nvcodec's GTypes (GstCudaIpcSink, GstCudaIpcSrc), as
 * GStreamer >= 1.24's nvcodec does. Both load into one process; ours stays
 * reachable by its GType; the feature name goes to the plugin registered
 * last, so loading ours last (docs/elements.md) makes the names ours.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

static GstPlugin *
load (const gchar * env)
{
  const gchar *path = g_getenv (env);
  GError *err = NULL;
  GstPlugin *plugin;

  fail_unless (path != NULL, "%s is not set", env);
  plugin = gst_plugin_load_file (path, &err);
  fail_unless (plugin != NULL, "loading %s: %s", path,
      err ? err->message : "");
  return plugin;
}

static const gchar *
type_of_feature (const gchar * name)
{
  GstElement *e = gst_element_factory_make (name, NULL);
  const gchar *type;

  fail_unless (e != NULL, "no %s", name);
  type = G_OBJECT_TYPE_NAME (e);
  gst_object_unref (e);
  return type;
}

GST_START_TEST (test_both_plugins_load)
{
  GstPlugin *fake = load ("CUDAIPC_FAKE_NVCODEC");
  GstPlugin *ours = load ("CUDAIPC_OUR_PLUGIN");
  GType sink, src;
  GstElement *e;
  guint ring = 0;

  /* no GType clash: both sets of types exist side by side */
  sink = g_type_from_name ("GstCuIpcSink");
  src = g_type_from_name ("GstCuIpcSrc");
  fail_unless (sink != 0 && src != 0);
  fail_unless (g_type_from_name ("GstCudaIpcSink") != 0);
  fail_unless (g_type_from_name ("GstCudaIpcSrc") != 0);
  fail_unless (sink != g_type_from_name ("GstCudaIpcSink"));

  /* ours by type, whoever owns the name */
  e = g_object_new (sink, NULL);
  g_object_get (e, "ring-size", &ring, NULL);
  fail_unless_equals_int (ring, 4);
  gst_object_unref (gst_object_ref_sink (e));

  /* ours was registered last: the names are ours */
  fail_unless_equals_string (type_of_feature ("cudaipcsink"), "GstCuIpcSink");
  fail_unless_equals_string (type_of_feature ("cudaipcsrc"), "GstCuIpcSrc");

  gst_object_unref (fake);
  gst_object_unref (ours);
}

GST_END_TEST;

static Suite *
coexist_suite (void)
{
  Suite *s = suite_create ("coexist");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_both_plugins_load);
  return s;
}

GST_CHECK_MAIN (coexist);
