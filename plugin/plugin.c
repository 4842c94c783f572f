/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cudaipc plugin: registers the sink and the source each under two
 * feature names. "cuipcsink" and "cuipcsrc" are ours alone and always
 * reach these elements; "cudaipcsink" and "cudaipcsrc" are the product's
 * names, which GStreamer >= 1.24's nvcodec registers too. Where another
 * plugin already holds such a name when this one loads, this one leaves it
 * alone: loading a plugin registers its features again, so otherwise the
 * name would change meaning in the middle of a process (docs/elements.md,
 * Names).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "cudaipcsink.h"
#include "cudaipcsrc.h"
#include "debug.h"

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

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  /* every category now, so that --gst-debug-help lists them all */
  cudaipc_debug_init ();
  /* the unambiguous names last: the element class names its factory
   * after the feature registered last */
  if (!held_by_another (plugin, "cudaipcsink"))
    ret |= GST_ELEMENT_REGISTER (cudaipcsink, plugin);
  if (!held_by_another (plugin, "cudaipcsrc"))
    ret |= GST_ELEMENT_REGISTER (cudaipcsrc, plugin);
  ret |= GST_ELEMENT_REGISTER (cuipcsink, plugin);
  ret |= GST_ELEMENT_REGISTER (cuipcsrc, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaipc,
    "Zero-copy sharing of GPU video frames between processes",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
