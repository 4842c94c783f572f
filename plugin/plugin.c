/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cudaipc plugin: registers cudaipcsink and cudaipcsrc.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "cudaipcsink.h"
#include "cudaipcsrc.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (cudaipcsink, plugin);
  ret |= GST_ELEMENT_REGISTER (cudaipcsrc, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaipc,
    "Zero-copy sharing of GPU video frames between processes",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
