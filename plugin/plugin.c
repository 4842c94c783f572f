/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cudaipc plugin: registers the sink and the source each under two
 * feature names. "cuipcsink" and "cuipcsrc" are ours alone and always
 * reach these elements; "cudaipcsink" and "cudaipcsrc" are the product's
 * names, which GStreamer >= 1.24's nvcodec registers too. This plugin
 * takes them only where they cannot be nvcodec's: never on GStreamer >=
 * 1.24 where an nvcodec plugin is installed in a folder GStreamer scans,
 * and never where another plugin already holds them when this one loads
 * (loading a plugin registers its features again, so the name would
 * change meaning in the middle of a process). The first rule does not
 * depend on the order plugins are scanned in, which the registry's history
 * decides (a plugin scanned into an existing registry registers last, and
 * in a scanner process that knows no other plugin): docs/elements.md,
 * Names.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>

#include <gst/gst.h>

#include "cudaipcsink.h"
#include "cudaipcsrc.h"
#include "common/debug.h"

/* @name is a feature of another plugin in the registry. */
static gboolean
held_by_another (GstPlugin * plugin, const gchar * name)
{
  GstPluginFeature *f = gst_registry_lookup_feature (gst_registry_get (),
      name);
  gboolean other = f != NULL && g_strcmp0 (gst_plugin_feature_get_plugin_name
      (f), gst_plugin_get_name (plugin)) != 0;

  gst_clear_object (&f);
  return other;
}

/* A file named like nvcodec's plugin in one of @dirs (a search path). */
static gboolean
nvcodec_in (const gchar * dirs)
{
  g_auto (GStrv) list = g_strsplit (dirs, G_SEARCHPATH_SEPARATOR_S, -1);

  for (guint i = 0; list[i] != NULL; i++) {
    g_autofree gchar *file = g_build_filename (list[i],
        "libgstnvcodec." G_MODULE_SUFFIX, NULL);

    if (list[i][0] != '\0' && g_file_test (file, G_FILE_TEST_EXISTS))
      return TRUE;
  }
  return FALSE;
}

/* GStreamer >= 1.24 with nvcodec installed where GStreamer looks for
 * plugins: GST_PLUGIN_PATH_1_0 (else GST_PLUGIN_PATH), then
 * GST_PLUGIN_SYSTEM_PATH_1_0 (else GST_PLUGIN_SYSTEM_PATH), or where
 * neither is set the user's plugin folder and the one beside
 * libgstreamer (LIBDIR/gstreamer-1.0, where distributions put it). */
static gboolean
nvcodec_owns_the_names (void)
{
  guint major, minor, micro, nano;
  const gchar *path, *sys;
  Dl_info info;

  gst_version (&major, &minor, &micro, &nano);
  if (major == 1 && minor < 24)
    return FALSE;
  path = g_getenv ("GST_PLUGIN_PATH_1_0");
  if (path == NULL)
    path = g_getenv ("GST_PLUGIN_PATH");
  if (path != NULL && nvcodec_in (path))
    return TRUE;
  sys = g_getenv ("GST_PLUGIN_SYSTEM_PATH_1_0");
  if (sys == NULL)
    sys = g_getenv ("GST_PLUGIN_SYSTEM_PATH");
  if (sys != NULL)
    return nvcodec_in (sys);
  {
    g_autofree gchar *user = g_build_filename (g_get_user_data_dir (),
        "gstreamer-1.0", "plugins", NULL);

    if (nvcodec_in (user))
      return TRUE;
  }
  if (dladdr ((void *) gst_init, &info) != 0 && info.dli_fname != NULL) {
    g_autofree gchar *libdir = g_path_get_dirname (info.dli_fname);
    g_autofree gchar *dir = g_build_filename (libdir, "gstreamer-1.0", NULL);

    return nvcodec_in (dir);
  }
  return FALSE;
}

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  /* every category now, so that --gst-debug-help lists them all */
  cudaipc_debug_init ();
  /* the unambiguous names last: the element class names its factory
   * after the feature registered last */
  if (nvcodec_owns_the_names ()) {
    GST_INFO ("GStreamer >= 1.24 with nvcodec installed: cudaipcsink and "
        "cudaipcsrc are left to nvcodec; ours are cuipcsink and cuipcsrc");
  } else {
    if (!held_by_another (plugin, "cudaipcsink"))
      ret |= GST_ELEMENT_REGISTER (cudaipcsink, plugin);
    if (!held_by_another (plugin, "cudaipcsrc"))
      ret |= GST_ELEMENT_REGISTER (cudaipcsrc, plugin);
  }
  ret |= GST_ELEMENT_REGISTER (cuipcsink, plugin);
  ret |= GST_ELEMENT_REGISTER (cuipcsrc, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaipc,
    "Zero-copy sharing of GPU video frames between processes",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
