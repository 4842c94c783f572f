/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cudaipc plugin: registers the sink and the source as "cuipcsink"
 * and "cuipcsrc", names of ours alone, on every GStreamer version. On
 * GStreamer < 1.24 it registers them as "cudaipcsink" and "cudaipcsrc"
 * too: nvcodec has no elements of those names there. From 1.24 on,
 * nvcodec's elements take those names wherever it finds a GPU, so ours
 * never does, whether nvcodec is installed or not. The rule looks at the
 * GStreamer version this process runs and at nothing else: which names a
 * registry holds must not depend on which other plugins were installed
 * when it was scanned, nor on the order they were scanned in
 * (docs/elements.md, Names).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "cudaipcsink.h"
#include "cudaipcsrc.h"
#include "common/debug.h"

/* The GStreamer running, not the one built against: a plugin built on
 * 1.22 loads into 1.26, whose nvcodec has the names. */
static gboolean
nvcodec_version_has_the_names (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return major > 1 || (major == 1 && minor >= 24);
}

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  /* every category now, so that --gst-debug-help lists them all */
  cudaipc_debug_init ();
  /* the names of ours alone last: the element class names its factory
   * after the feature registered last */
  if (nvcodec_version_has_the_names ()) {
    GST_INFO ("GStreamer >= 1.24: cudaipcsink and cudaipcsrc are "
        "nvcodec's names; ours are cuipcsink and cuipcsrc");
  } else {
    ret |= GST_ELEMENT_REGISTER (cudaipcsink, plugin);
    ret |= GST_ELEMENT_REGISTER (cudaipcsrc, plugin);
  }
  ret |= GST_ELEMENT_REGISTER (cuipcsink, plugin);
  ret |= GST_ELEMENT_REGISTER (cuipcsrc, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaipc,
    "Zero-copy sharing of video frames in GPU or host memory between "
    "processes", plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME,
    GST_PACKAGE_ORIGIN)
